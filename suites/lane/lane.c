/* SPDX-License-Identifier: MIT */
/*
 * Cases whose correct verdict is not PASS, run by the emulated-PMU lane
 * (ci/lane/commands states the expected exit code).  Not registered with
 * CTest: on a machine with a PMU their "failure" is the point.
 */
#include <stdio.h>

#include <pmcheck/harness.h>

#include "../common/kernels.h"

#define MANY 10

static int many_counters(struct pmc_test *t, void **data)
{
	char label[8];

	(void)data;
	for (int i = 0; i < MANY; i++) {
		snprintf(label, sizeof(label), "i%d", i);
		pmc_test_add_event(t, label, "instructions:u");
	}
	return 0;
}

static const struct pmc_fixture many = { "ten instruction counters", many_counters, NULL };

/*
 * Ten instruction events where the PMU has six general counters: the core
 * splits them into groups the kernel rotates, every sample of some event is
 * a partial count, and a bound that the full count would meet must come out
 * INCONCLUSIVE, not PASS (exit status 4).
 */
PMC_TEST(mux, budget_on_partial_counts, .fixture = &many, .reps = 2,
	 .requires = PMC_REQ_HW_PMU, .backends = PMC_BACKEND_PERF)
{
	uint64_t acc = 0;

	PMC_REGION(t, "loop") {
		acc = kernel_loop(10000000);
		PMC_DO_NOT_OPTIMIZE(acc);
	}
	for (int i = 0; i < MANY; i++) {
		static const char *const labels[MANY] = { "i0", "i1", "i2", "i3", "i4",
							  "i5", "i6", "i7", "i8", "i9" };

		PMC_EXPECT_GE(t, "loop", labels[i], KERNEL_LOOP_INSNS * 10000000ull);
	}
}
