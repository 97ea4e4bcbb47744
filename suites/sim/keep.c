/* SPDX-License-Identifier: MIT */
/*
 * PMC_DO_NOT_OPTIMIZE keeps the work that computes a value, whether the
 * value is a variable (an lvalue) or any other expression (an rvalue).
 * Compiled twice: as C (this file; the rvalue goes through
 * PMC_DO_NOT_OPTIMIZE_VALUE, since C cannot tell the two apart) and as C++
 * (keep.cpp; PMC_DO_NOT_OPTIMIZE takes the rvalue itself).  On the sim
 * backend the instruction counts are exact, so "kept" is checked to the
 * instruction:
 *   - the loop that passes mix(i) itself executes exactly as many
 *     instructions as the loop that first stores it in a variable, in all
 *     and per iteration;
 *   - both execute the arithmetic: at least 4 instructions an iteration;
 *   - the same loop with the value unused is deleted by the compiler
 *     (under 1 instruction an iteration), which is what the macro prevents
 *     and what would make the first two checks fail if it did not.
 */
#include <math.h>
#include <stdint.h>

#include <pmcheck/harness.h>

#ifdef __cplusplus
#define KEEP_SUITE keep_cxx
#define KEEP_RVALUE(e) PMC_DO_NOT_OPTIMIZE(e)
#define KEEP_OPTIONS pmc::options().events("instructions:u").backends(PMC_BACKEND_SIM)
#else
#define KEEP_SUITE keep_c
#define KEEP_RVALUE(e) PMC_DO_NOT_OPTIMIZE_VALUE(e)
#define KEEP_OPTIONS .events = "instructions:u", .backends = PMC_BACKEND_SIM
#endif

#define KEEP_N 1000

static inline uint64_t mix(uint64_t x)
{
	x ^= x >> 7;
	x *= 0x9E3779B97F4A7C15ull;
	return x ^ (x >> 29);
}

/* Each form's loop is one function, called for n and for 2n iterations (n
 * hidden from the compiler): the difference of the two calls is the cost of
 * n iterations, free of the loop's entry and exit code and of the call
 * sites (laid out differently around each region: up to 1 instruction,
 * measured under clang). */
static __attribute__((noinline)) void lvalue_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = mix(i);

		PMC_DO_NOT_OPTIMIZE(v);
	}
}

static __attribute__((noinline)) void rvalue_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		KEEP_RVALUE(mix(i));
}

static __attribute__((noinline)) void unused_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = mix(i);

		(void)v;
	}
}

static double per_iteration(struct pmc_test *t, const char *once, const char *twice, uint64_t n)
{
	return ((double)pmc_test_last(t, twice, "instructions:u") -
		(double)pmc_test_last(t, once, "instructions:u")) / (double)n;
}

PMC_TEST(KEEP_SUITE, rvalue_as_lvalue, KEEP_OPTIONS)
{
	uint64_t n = KEEP_N, n2 = 2 * KEEP_N;
	double lvalue, rvalue, unused;

	PMC_DO_NOT_OPTIMIZE(n);
	PMC_DO_NOT_OPTIMIZE(n2);
	PMC_REGION(t, "lvalue n") lvalue_loop(n);
	PMC_REGION(t, "lvalue 2n") lvalue_loop(n2);
	PMC_REGION(t, "rvalue n") rvalue_loop(n);
	PMC_REGION(t, "rvalue 2n") rvalue_loop(n2);
	PMC_REGION(t, "unused n") unused_loop(n);
	PMC_REGION(t, "unused 2n") unused_loop(n2);
	if (pmc_test_rep(t) < 0)
		return;
	lvalue = per_iteration(t, "lvalue n", "lvalue 2n", KEEP_N);
	rvalue = per_iteration(t, "rvalue n", "rvalue 2n", KEEP_N);
	unused = per_iteration(t, "unused n", "unused 2n", KEEP_N);
	pmc_test_expect_figure(t, "per iteration, rvalue - lvalue", "instructions:u", rvalue - lvalue,
			       0, 0, "the rvalue form keeps exactly the lvalue form's code");
	pmc_test_expect_figure(t, "n iterations, rvalue - lvalue", "instructions:u",
			       (double)pmc_test_last(t, "rvalue n", "instructions:u") -
				       (double)pmc_test_last(t, "lvalue n", "instructions:u"),
			       0, 0, "each form's whole loop, entry and exit included");
	pmc_test_expect_figure(t, "per iteration, rvalue", "instructions:u", rvalue, 4, NAN,
			       "mix() is at least 4 instructions");
	pmc_test_expect_figure(t, "per iteration, value unused", "instructions:u", unused, NAN, 0.5,
			       "without the macro the compiler deletes the work");
}
