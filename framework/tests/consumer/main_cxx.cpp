// SPDX-License-Identifier: MIT
// The public headers, inline region code included, compile as C++ with
// -Wall -Wextra -Werror (the consumer's CMakeLists sets them).
#include <pmcheck/harness.h>
#include <pmcheck/pmcheck.h>

#include <cstdio>

int main()
{
	struct pmc_event_spec s;
	struct pmc_counters *set;
	struct pmc_error err;
	struct pmc_region r;
	struct pmc_measurement m;
	int x = 0;

	if (pmc_event_parse("task-clock", &s, &err) || pmc_counters_open(&set, &s, 1, 0, &err)) {
		std::fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	pmc_counters_enable(set);
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	x++;
	PMC_DO_NOT_OPTIMIZE(x);
	pmc_region_end(&r, &m);
	pmc_counters_close(set);
	std::printf("consumer (C++): %s counted %llu ns\n", s.name, (unsigned long long)m.d[0].value);
	return m.n == 1 ? 0 : 1;
}
