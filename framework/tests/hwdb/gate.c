/* SPDX-License-Identifier: MIT */
/*
 * A gate suite for test_gate.py: the measured code changes with the
 * environment (GATE_EXTRA adds calls), as a code change would.
 */
#include <stdlib.h>

#include <pmcheck/harness.h>

/* Unsigned: the value wraps by design and must not be UB under UBSan. */
__attribute__((noinline, used)) unsigned gate_step(unsigned x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x * 3 + 1;
}

static int steps(void)
{
	const char *extra = getenv("GATE_EXTRA");

	return 20 + (extra ? atoi(extra) : 0);
}

static void work(int n)
{
	unsigned acc = 0;

	for (int i = 0; i < n; i++)
		acc = gate_step(acc);
	PMC_DO_NOT_OPTIMIZE(acc);
}

/* Budgeted: an exact count and a noisy one. */
PMC_TEST(gate, budgeted, .events = "calls:gate_step,task-clock")
{
	int n = steps();

	PMC_REGION(t, "work") {
		work(n);
	}
	PMC_EXPECT_BUDGET(t, "work", "calls:gate_step");
	PMC_EXPECT_BUDGET(t, "work", "task-clock");
}

/* No expectations: only a baseline comparison can judge it. */
PMC_TEST(gate, baseline_only, .events = "calls:gate_step")
{
	int n = steps();

	PMC_REGION(t, "work") {
		work(n);
	}
}
