/* SPDX-License-Identifier: MIT */
/*
 * Attribution on the perf backend: regions whose work is spread over three
 * functions, built twice; the second build (SAMPLE_SLOWER) gives
 * sample_middle more work.  Calibrated on the first build and run on the
 * second, a case fails its budget, and the runner runs it once more with
 * the failing event sampled inside the region: the report names the
 * functions the samples fell in.
 *
 *   faults: page faults sampled at every fault (a software event, exact:
 *           each sample is one first touch, at the storing instruction).
 *   instructions: a few hundred million instructions, for a hardware PMU
 *           (the emulated lane), where samples are statistical.
 */
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/harness.h>

#ifndef SAMPLE_SLOWER
#define SAMPLE_SLOWER 0
#endif

/* ---- page faults ---- */

__attribute__((noinline, used, no_sanitize_address)) void sample_touch_first(volatile char *p, size_t pages, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 1;
}

__attribute__((noinline, used, no_sanitize_address)) void sample_touch_middle(volatile char *p, size_t pages, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 2;
}

__attribute__((noinline, used, no_sanitize_address)) void sample_touch_last(volatile char *p, size_t pages, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		p[i * page] = 3;
}

#define MIDDLE_PAGES (SAMPLE_SLOWER ? 120 : 80)

PMC_TEST(sample, faults, .events = "page-faults:u", .reps = 3, .backends = PMC_BACKEND_PERF)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = 40 + MIDDLE_PAGES + 20;
	char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		pmc_test_error(t, "mmap of %zu pages failed", pages);
	madvise(p, pages * page, MADV_NOHUGEPAGE); /* a fault per page */
	PMC_REGION(t, "touch") {
		sample_touch_first(p, 40, page);
		sample_touch_middle(p + 40 * page, MIDDLE_PAGES, page);
		sample_touch_last(p + (40 + MIDDLE_PAGES) * page, 20, page);
	}
	munmap(p, pages * page);
	PMC_EXPECT_BUDGET(t, "touch", "page-faults:u");
}

/* ---- instructions ---- */

__attribute__((noinline, used)) unsigned sample_spin_first(unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

__attribute__((noinline, used)) unsigned sample_spin_middle(unsigned n)
{
	unsigned s = 1;

	for (unsigned i = 0; i < n; i++) {
		s += i * 7 + (s >> 2);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

__attribute__((noinline, used)) unsigned sample_spin_last(unsigned n)
{
	unsigned s = 2;

	for (unsigned i = 0; i < n; i++) {
		s ^= i + (s << 1);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

/* sample_spin_middle does half the work, and 3% of the region more in the
 * second build. */
PMC_TEST(sample, instructions, .events = "instructions:u", .reps = 3,
	 .backends = PMC_BACKEND_PERF, .timeout = 120)
{
	unsigned s = 0, n = 4000000;

	PMC_REGION(t, "spin") {
		s += sample_spin_first(n);
		s += sample_spin_middle(2 * n + (SAMPLE_SLOWER ? n / 8 : 0));
		s += sample_spin_last(n);
	}
	PMC_DO_NOT_OPTIMIZE(s);
	PMC_EXPECT_BUDGET(t, "spin", "instructions:u");
}
