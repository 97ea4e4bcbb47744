/* SPDX-License-Identifier: MIT */
/* Builds against an installed pmcheck and counts a software event. */
#include <pmcheck/pmcheck.h>
#include <stdio.h>

int main(void)
{
	struct pmc_event_spec s;
	struct pmc_counters *set;
	struct pmc_error err;
	struct pmc_region r;
	struct pmc_measurement m;

	if (pmc_event_parse("task-clock", &s, &err) || pmc_counters_open(&set, &s, 1, 0, &err)) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	pmc_counters_enable(set);
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	pmc_region_end(&r, &m);
	pmc_counters_close(set);
	printf("consumer: %s counted %llu ns\n", s.name, (unsigned long long)m.d[0].value);
	return m.n == 1 ? 0 : 1;
}
