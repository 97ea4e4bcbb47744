/* SPDX-License-Identifier: MIT */
/*
 * The same work counted two ways, for `pmcheck stat` (test_stat.py): run
 * with --work MALLOCS PAGES it does only that work, as a command to count;
 * run as a suite it measures that work in a PMC_REGION.  The work: MALLOCS
 * calls of malloc, each followed by a call of stat_work_step, and PAGES
 * fresh pages touched once (no huge pages, so one fault each).
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/harness.h>

__attribute__((noinline, used)) void stat_work_step(void *p)
{
	PMC_DO_NOT_OPTIMIZE(p);
}

static void do_work(unsigned mallocs, unsigned pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (unsigned i = 0; i < mallocs; i++) {
		void *p = malloc(64);

		stat_work_step(p);
		free(p);
	}
	if (pages) {
		char *m = mmap(NULL, pages * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED)
			abort();
		madvise(m, pages * page, MADV_NOHUGEPAGE);
		for (unsigned i = 0; i < pages; i++)
			m[i * page] = 1;
		munmap(m, pages * page);
	}
}

PMC_TEST(stat, same_work, .events = "page-faults,calls:malloc,calls:stat_work_step", .reps = 3)
{
	PMC_REGION(t, "work") {
		do_work(500, 64);
	}
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--work")) {
		do_work((unsigned)atoi(argv[2]), (unsigned)atoi(argv[3]));
		return 0;
	}
	return pmc_main(argc, argv);
}
