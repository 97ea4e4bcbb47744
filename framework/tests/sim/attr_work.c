/* SPDX-License-Identifier: MIT */
/*
 * A region that spends its instructions in three functions; built twice,
 * the second time (ATTR_SLOWER) with attr_middle doing 90 more iterations
 * of 3000 in all (+3% of the region's work).  test_attribution.py compares
 * the two on the sim backend and asks the report which function got worse.
 */
#include <stdlib.h>

#include <pmcheck/harness.h>

#ifndef ATTR_SLOWER
#define ATTR_SLOWER 0
#endif

__attribute__((noinline, used)) unsigned attr_first(unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

__attribute__((noinline, used)) unsigned attr_middle(unsigned n)
{
	unsigned s = 1;

	for (unsigned i = 0; i < n + (ATTR_SLOWER ? 90 : 0); i++) {
		s += i * 7 + (s >> 2);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

__attribute__((noinline, used)) unsigned attr_last(unsigned n)
{
	unsigned s = 2;

	for (unsigned i = 0; i < n; i++) {
		s ^= i + (s << 1);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

PMC_TEST(attr, three_functions, .events = "instructions:u,branches", .reps = 3,
	 .backends = PMC_BACKEND_SIM)
{
	unsigned s = 0;

	PMC_REGION(t, "work") {
		s += attr_first(1000);
		s += attr_middle(1000);
		s += attr_last(1000);
	}
	PMC_DO_NOT_OPTIMIZE(s);
	PMC_EXPECT_BUDGET(t, "work", "instructions:u");
	/* A bound in the code, no budget: a case that is no gate's (ATTR_AT_MOST
	 * in test_attribution.py). */
	if (getenv("ATTR_AT_MOST"))
		PMC_EXPECT_LE(t, "work", "instructions:u", strtod(getenv("ATTR_AT_MOST"), NULL));
}

/* Two callers of attr_first: attr_steady calls it once, attr_growing once
 * or, with ATTR_TWICE in the case's environment (through
 * PMCHECK_SIM_ENV on sim), twice.  A failed calls: budget names the
 * caller whose calls moved, attr_growing, and not attr_steady: on sim
 * from the tool's (or callgrind's) calls per caller, on perf from the
 * uprobe sampled at every call. */
__attribute__((noinline, used)) unsigned attr_steady(unsigned n)
{
	unsigned s = attr_first(n);

	PMC_DO_NOT_OPTIMIZE(s);
	return s + 1;
}

__attribute__((noinline, used)) unsigned attr_growing(unsigned n, unsigned times)
{
	unsigned s = 0;

	for (unsigned i = 0; i < times; i++) {
		s += attr_first(n);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s + 1;
}

PMC_TEST(attr, calls_only, .events = "calls:attr_first", .reps = 3,
	 .backends = PMC_BACKEND_SIM | PMC_BACKEND_PERF)
{
	unsigned s = 0, n = getenv("ATTR_TWICE") ? 2 : 1;

	PMC_REGION(t, "calls") {
		s += attr_steady(10);
		s += attr_growing(10, n);
	}
	PMC_DO_NOT_OPTIMIZE(s);
	PMC_EXPECT_BUDGET(t, "calls", "calls:attr_first");
}
