/* SPDX-License-Identifier: MIT */
/*
 * What a sim case costs (ci/bench times these under --backend=sim, in pairs,
 * and prints ratios):
 *   - cost.empty: an empty region; its time is the fixed cost of a case,
 *     set against valgrind --tool=none /bin/true;
 *   - cost.instructions and cost.misses: one compute-bound body (the
 *     kernels' loop, branches and checksum), counting instructions only,
 *     and instructions with cache and branch misses.  The first needs
 *     neither simulation, the second both.
 * Each also checks what it counts, so a broken backend cannot pass as fast.
 */
#include <pmcheck/harness.h>


#include "cost_body.h"

static int inputs(struct pmc_test *t, void **d)
{
	(void)t;
	(void)d;
	cost_inputs();
	return 0;
}

static const struct pmc_fixture inputs_fixture = { .name = "inputs", .setup = inputs };

PMC_TEST(cost, empty, .events = "instructions:u", .backends = PMC_BACKEND_SIM)
{
	PMC_REGION(t, "nothing") {
	}
	/* Nothing but what overhead subtraction leaves: at most a few. */
	PMC_EXPECT_LE(t, "nothing", "instructions:u", 16);
}

/* The body in region "body", and the instructions it must have counted. */
static void measure_body(struct pmc_test *t)
{
	uint64_t sink = 0;

	PMC_REGION(t, "body") {
		sink += body();
	}
	PMC_DO_NOT_OPTIMIZE(sink);
	PMC_EXPECT_GE(t, "body", "instructions:u", 4 * 100000);
}

PMC_TEST(cost, instructions, .events = "instructions:u", .backends = PMC_BACKEND_SIM,
	 .fixture = &inputs_fixture, .reps = 3)
{
	measure_body(t);
}

PMC_TEST(cost, branches, .events = "instructions:u,branches", .backends = PMC_BACKEND_SIM,
	 .fixture = &inputs_fixture, .reps = 3)
{
	measure_body(t);
	PMC_EXPECT_GE(t, "body", "branches", 4 * 30000);
}

PMC_TEST(cost, misses, .events = "instructions:u,L1-dcache-load-misses,branch-misses",
	 .backends = PMC_BACKEND_SIM, .fixture = &inputs_fixture, .reps = 3)
{
	measure_body(t);
	/* kernel_branches on random bits: about half its branches miss. */
	PMC_EXPECT_GE(t, "body", "branch-misses", 4 * 30000 / 4);
}
