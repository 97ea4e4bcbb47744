/* SPDX-License-Identifier: MIT */
/*
 * pmcheck demo: count what a few code regions do, with whatever this machine
 * offers.  Each part says what it counted and, if it could not, why.
 *
 *   1. a write breakpoint on a variable: exactly one count per store;
 *   2. calls:SYMBOL: how often a function ran (here, malloc in libc);
 *   3. software events for a region that touches fresh memory;
 *   4. hardware instructions and cycles, or the reason they are unavailable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

static volatile long counter_var;

static int measure(const char *title, const char *events, void (*work)(void))
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	struct pmc_region r;
	struct pmc_measurement m, ovh;
	char groups[256];
	size_t n;

	printf("\n== %s\n", title);
	if (pmc_event_parse_list(events, specs, PMC_MAX_EVENTS, &n, &err) ||
	    pmc_counters_open(&set, specs, n, 0, &err)) {
		printf("   not measured: %s\n", err.message);
		return pmc_error_is_capability(err.code) ? 0 : 1;
	}
	pmc_counters_describe(set, groups, sizeof(groups));
	printf("   groups: %s  (read path: %s)\n", groups,
	       pmc_counters_path(set) == PMC_PATH_USER ? "user page" : "read(2)");
	pmc_counters_enable(set);
	pmc_counters_overhead(set, 64, &ovh);
	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	work();
	pmc_region_end(&r, &m);
	pmc_measurement_subtract(&m, &ovh);
	for (size_t i = 0; i < m.n; i++)
		printf("   %-28s %12" PRIu64 "%s%s   (empty-region overhead %" PRIu64 ")\n",
		       pmc_counters_spec(set, i)->name, m.d[i].value,
		       m.d[i].flags & PMC_DELTA_MULTIPLEXED ? "  [multiplexed]" : "",
		       m.d[i].flags & PMC_DELTA_NOT_COUNTED ? "  [not counted]" : "",
		       ovh.d[i].value);
	pmc_counters_close(set);
	return 0;
}

static void thousand_writes(void)
{
	for (int i = 0; i < 1000; i++)
		counter_var = i;
}

static void hundred_mallocs(void)
{
	for (int i = 0; i < 100; i++) {
		void *volatile p = malloc(64);

		free(p);
	}
}

static void touch_pages(void)
{
	size_t ps = (size_t)sysconf(_SC_PAGESIZE), n = 32;
	volatile char *p = mmap(NULL, n * ps, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	for (size_t i = 0; i < n; i++)
		p[i * ps] = 1;
	munmap((void *)p, n * ps);
}

static void busy_loop(void)
{
	unsigned long x = 0;

	for (unsigned i = 0; i < 100000; i++) {
		x += i;
		PMC_DO_NOT_OPTIMIZE(x);
	}
}

int main(void)
{
	int fails = 0;

	printf("pmcheck demo (library %d.%d.%d)\n", PMCHECK_VERSION_MAJOR,
	       PMCHECK_VERSION_MINOR, PMCHECK_VERSION_PATCH);
	fails += measure("1000 stores to a watched variable (expect 1000)",
			 "mem:counter_var/8:w", thousand_writes);
	fails += measure("100 malloc/free pairs (expect 100 calls)",
			 "calls:malloc,calls:free", hundred_mallocs);
	fails += measure("first touch of 32 pages (expect >= 32 faults)",
			 "task-clock,page-faults,minor-faults,context-switches", touch_pages);
	fails += measure("100000-iteration loop on the CPU's PMU",
			 "instructions:u,cycles:u,branches:u", busy_loop);
	return fails ? 1 : 0;
}
