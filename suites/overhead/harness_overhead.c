/* SPDX-License-Identifier: MIT */
/*
 * Cost of the harness's PMC_REGION against the core's pmc_region_begin/end
 * on the case's own counter set (one set, so two sets never compete for
 * hardware counters), alternating over trials, the minimum of each kept,
 * reported as a ratio (ns per begin+end; instructions under QEMU's
 * -icount).  PMC_REGION adds, outside the counted window, the check that
 * it may take its inline path and one row of stores.
 *
 * PMCHECK_OVERHEAD_MAX_RATIO=R makes the ratio a check (the emulated lane
 * sets 1.1, where the figures are exact); elsewhere it is only reported.
 * The software cases run here, the instructions:u ones where the PMU offers
 * user-space reads (the lane).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <pmcheck/harness.h>

#include "loadavg.h"

#define ITERATIONS 20000
#define TRIALS 5

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void compare(struct pmc_test *t, const char *label)
{
	struct pmc_counters *set = pmc_test_counters(t);
	const char *limit = getenv("PMCHECK_OVERHEAD_MAX_RATIO");
	struct pmc_measurement m;
	struct pmc_region r;
	double t0, harness = 1e30, core = 1e30, x, ratio;

	pmc_region_init(&r, set);
	for (int trial = 0; trial < TRIALS; trial++) {
		t0 = now_ns();
		for (int i = 0; i < ITERATIONS / TRIALS; i++) {
			PMC_REGION(t, "empty") {
			}
		}
		x = (now_ns() - t0) / (ITERATIONS / TRIALS);
		harness = x < harness ? x : harness;
		t0 = now_ns();
		for (int i = 0; i < ITERATIONS / TRIALS; i++) {
			pmc_region_begin(&r);
			pmc_region_end(&r, &m);
			/* The whole measurement is used, as PMC_REGION's is. */
			PMC_DO_NOT_OPTIMIZE(m);
		}
		x = (now_ns() - t0) / (ITERATIONS / TRIALS);
		core = x < core ? x : core;
	}
	if (pmc_test_rep(t) < 0)
		return; /* the warm-up sizes the sample storage */
	ratio = harness / core;
	pmc_test_note(t, "%s, %zu events (%s): PMC_REGION %.1f ns, core region %.1f ns, ratio %.3f; %zu of %d samples by the general path; load average %.2f",
		      label, pmc_counters_count(set),
		      pmc_counters_path(set) == PMC_PATH_USER ? "user-space reads" : "read(2)",
		      harness, core, ratio, pmc_test_general_samples(t), ITERATIONS, bench_loadavg());
	printf("harness-region %s events=%zu path=%s harness_ns=%.1f core_ns=%.1f ratio=%.3f general=%zu\n",
	       label, pmc_counters_count(set),
	       pmc_counters_path(set) == PMC_PATH_USER ? "user" : "read", harness, core, ratio,
	       pmc_test_general_samples(t));
	if (limit && *limit)
		pmc_test_expect_figure(t, "PMC_REGION / core region", label, ratio, 0,
				       strtod(limit, NULL), "PMCHECK_OVERHEAD_MAX_RATIO");
}

#define EV1 "context-switches"
#define EV4 EV1 ",cpu-migrations,page-faults,major-faults"
#define EV7 EV4 ",minor-faults,alignment-faults,emulation-faults"

/* The empty region's figure, once the measured overhead is subtracted, is
 * what the inline path adds beyond what was subtracted: zero here. */
PMC_TEST(overhead, harness_region_1, .events = EV1, .reps = 1)
{
	compare(t, "software");
	PMC_EXPECT_EQ(t, "empty", "context-switches", 0);
}

PMC_TEST(overhead, harness_region_4, .events = EV4, .reps = 1)
{
	compare(t, "software");
	PMC_EXPECT_EQ(t, "empty", "context-switches", 0);
}

PMC_TEST(overhead, harness_region_7, .events = EV7, .reps = 1)
{
	compare(t, "software");
	PMC_EXPECT_EQ(t, "empty", "context-switches", 0);
}

/* On a PMU with user-space reads (the lane: QEMU's instructions and cycles,
 * as pmcheck_overhead uses them). */
#define HW1 "instructions:u"
#define HW4 HW1 ",cycles:u,instructions:u,instructions:u"
#define HW7 HW4 ",instructions:u,instructions:u,instructions:u"

PMC_TEST(overhead, harness_user_1, .events = HW1, .reps = 1, .requires = PMC_REQ_USER_READ)
{
	compare(t, "user");
}

PMC_TEST(overhead, harness_user_4, .events = HW4, .reps = 1, .requires = PMC_REQ_USER_READ)
{
	compare(t, "user");
}

PMC_TEST(overhead, harness_user_7, .events = HW7, .reps = 1, .requires = PMC_REQ_USER_READ)
{
	compare(t, "user");
}
