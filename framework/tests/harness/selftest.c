/* SPDX-License-Identifier: MIT */
/*
 * Cases that produce every verdict on purpose, for test_harness.py.  This
 * executable is not registered case by case (half of it fails by design);
 * the driver runs it with filters and checks exit codes, console text,
 * JSON, JUnit and TAP.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <pmcheck/harness.h>

__attribute__((noinline, used)) int selftest_fn(int x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}

static void call_n(int n)
{
	int acc = 0;

	for (int i = 0; i < n; i++)
		acc = selftest_fn(acc);
	PMC_DO_NOT_OPTIMIZE(acc);
}

/* Append a word to $SELFTEST_LOG (fixture ordering). */
static void log_word(const char *w)
{
	const char *path = getenv("SELFTEST_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (f) {
		fprintf(f, "%s\n", w);
		fclose(f);
	}
}

/* ---- PASS ------------------------------------------------------------------------ */

PMC_TEST(pass, exact_calls, .events = "calls:selftest_fn")
{
	PMC_REGION(t, "ten") {
		call_n(10);
	}
	PMC_EXPECT_EQ(t, "ten", "calls:selftest_fn", 10);
	PMC_EXPECT_LE(t, "ten", "calls:selftest_fn", 10);
	PMC_EXPECT_GE(t, "ten", "calls:selftest_fn", 10);
	PMC_EXPECT_RANGE(t, "ten", "calls:selftest_fn", 9, 11);
}

PMC_TEST(pass, plain)
{
	PMC_CHECK(t, 1 + 1 == 2);
}

PMC_TEST(pass, two_regions, .events = "calls:selftest_fn,context-switches", .reps = 3)
{
	PMC_REGION(t, "one") {
		call_n(1);
	}
	PMC_REGION_N(t, "hundred", 100) {
		call_n(100);
	}
	PMC_EXPECT_EQ(t, "one", "calls:selftest_fn", 1);
	PMC_EXPECT_EQ(t, "hundred", "calls:selftest_fn", 100);
}

/* ---- FAIL ------------------------------------------------------------------------ */

PMC_TEST(fail, over_budget, .events = "calls:selftest_fn")
{
	PMC_REGION(t, "ten") {
		call_n(10);
	}
	PMC_EXPECT_LE(t, "ten", "calls:selftest_fn", 8);
}

PMC_TEST(fail, check_eq)
{
	printf("hello from the case\n");
	PMC_CHECK_EQ(t, 2 + 2, 5);
}

/* ---- SKIP ------------------------------------------------------------------------ */

PMC_TEST(skip, explicit)
{
	pmc_test_skip(t, "needs a unicorn");
}

PMC_TEST(skip, hardware_event, .events = "instructions:u")
{
	PMC_REGION(t, "nothing") {
	}
	PMC_EXPECT_GE(t, "nothing", "instructions:u", 0);
}

/* Counts events (a measuring case) but never runs on perf. */
PMC_TEST(skip, sim_only, .events = "sim:Ir", .backends = PMC_BACKEND_SIM)
{
	pmc_test_fail(t, "must not run on perf");
}

/* ---- ERROR ------------------------------------------------------------------------ */

PMC_TEST(error, crash)
{
	raise(SIGSEGV);
}

PMC_TEST(error, timeout, .timeout = 0.5)
{
	sleep(30);
}

PMC_TEST(error, bad_event, .events = "no-such-event")
{
}

PMC_TEST(error, region_left_open, .events = "calls:selftest_fn")
{
	for (int i = 0; i < 2; i++) {
		PMC_REGION(t, "r") {
			if (i == 0)
				break;
		}
	}
}

PMC_TEST(error, unknown_region, .events = "calls:selftest_fn")
{
	PMC_REGION(t, "real") {
		call_n(1);
	}
	PMC_EXPECT_EQ(t, "typo", "calls:selftest_fn", 1);
}

PMC_TEST(error, exits)
{
	exit(3);
}

static int failing_setup(struct pmc_test *t, void **data)
{
	(void)t;
	(void)data;
	return -1;
}

static const struct pmc_fixture failing_fixture = { "failing", failing_setup, NULL };

PMC_TEST(error, setup_fails, .fixture = &failing_fixture)
{
	pmc_test_fail(t, "body must not run");
}

/* ---- KNOWN-ISSUE ------------------------------------------------------------------- */

PMC_TEST(known, reproduces, .events = "calls:selftest_fn")
{
	pmc_test_known_issue(t, "selftest bug #1: counts one call too many (fixed in never)");
	PMC_REGION(t, "ten") {
		call_n(10);
	}
	PMC_EXPECT_EQ(t, "ten", "calls:selftest_fn", 11);
}

PMC_TEST(known, does_not_reproduce)
{
	pmc_test_known_issue(t, "selftest bug #2");
}

/* ---- fixtures, budgets, repetitions -------------------------------------------------- */

static int logging_setup(struct pmc_test *t, void **data)
{
	static int value = 42;

	log_word("setup");
	*data = &value;
	pmc_test_add_event(t, "fn", "calls:selftest_fn");
	return 0;
}

static void logging_teardown(struct pmc_test *t, void *data)
{
	(void)t;
	log_word(*(int *)data == 42 ? "teardown" : "teardown-bad-data");
}

static const struct pmc_fixture logging_fixture = { "logging", logging_setup, logging_teardown };

PMC_TEST(fixture, order, .fixture = &logging_fixture, .reps = 2, .warmup = 1)
{
	log_word(pmc_test_rep(t) < 0 ? "warmup" : "body");
	PMC_REGION(t, "r") {
		call_n(3);
	}
	PMC_EXPECT_EQ(t, "r", "fn", 3);
}

PMC_TEST(fixture, teardown_after_failure, .fixture = &logging_fixture)
{
	log_word("body");
	PMC_CHECK(t, 0);
}

PMC_TEST(selfbudget, unbudgeted, .events = "calls:selftest_fn")
{
	PMC_REGION(t, "ten") {
		call_n(10);
	}
	PMC_EXPECT_BUDGET(t, "ten", "calls:selftest_fn");
}

/* A budget on the sim backend (the missing-budget message names the build). */
PMC_TEST(selfsim, budgeted, .events = "instructions:u", .backends = PMC_BACKEND_SIM, .reps = 1)
{
	PMC_REGION(t, "r") {
		call_n(10);
	}
	PMC_EXPECT_BUDGET(t, "r", "instructions:u");
}

PMC_TEST(repeat, samples, .events = "calls:selftest_fn", .reps = 4, .no_warmup = 1)
{
	PMC_REGION(t, "r") {
		call_n(2);
	}
	PMC_EXPECT_EQ(t, "r", "calls:selftest_fn", 2);
}
