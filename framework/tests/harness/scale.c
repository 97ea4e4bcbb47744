/* SPDX-License-Identifier: MIT */
/*
 * A region executed a million times and more, the pattern PMC_REGION in a
 * loop is for.  test_scale.py runs it and checks what the record keeps:
 * exact count, minimum and maximum over every execution, the first samples
 * only, a results file that stays small, and one flagged sample among a
 * million that still makes an upper bound INCONCLUSIVE.
 *
 * SCALE_EXECUTIONS (default 200000) is the executions per repetition; the
 * case runs 5 repetitions.  Execution i calls scale_callee i % 3 times, so
 * calls:scale_callee takes 0, 1 and 2: min 0, max 2, known mean and median.
 */
#include <pthread.h>
#include <stdlib.h>

#include <pmcheck/harness.h>

PMC__NOIPA int scale_callee(int x)
{
	return x + 1;
}

static void *spin(void *arg)
{
	volatile unsigned long n = 0;

	while (n < 2000000)
		n++;
	return arg;
}

static unsigned long executions(void)
{
	const char *s = getenv("SCALE_EXECUTIONS");

	return s ? strtoul(s, NULL, 10) : 200000;
}

static void run(struct pmc_test *t, int flag_one)
{
	unsigned long n = executions();
	int s = 0;

	for (unsigned long i = 0; i < n; i++) {
		PMC_REGION(t, "tick") {
			for (unsigned long k = 0; k < i % 3; k++)
				s += scale_callee((int)k);
			/* One execution of the middle repetition runs another
			 * thread: that sample misses its counts (the case
			 * counts its own thread), and is flagged. */
			if (flag_one && pmc_test_rep(t) == 2 && i == n / 2) {
				pthread_t th;

				if (pthread_create(&th, NULL, spin, NULL) == 0)
					pthread_join(th, NULL);
			}
		}
	}
	PMC_DO_NOT_OPTIMIZE(s);
}

/* A uprobe hit is a breakpoint trap: 1.2 million of them took 27.6 s on an
 * AMD Turin-like Firecracker guest (23 us a hit through the hypervisor),
 * close to the default 30 s; 120 s leaves room for a shared machine. */
PMC_TEST(scale, million, .events = "calls:scale_callee", .requires = PMC_REQ_UPROBE, .reps = 5,
	 .timeout = 120)
{
	run(t, 0);
	PMC_EXPECT_RANGE(t, "tick", "calls:scale_callee", 0, 2);
}

PMC_TEST(scale, one_flagged, .events = "calls:scale_callee", .requires = PMC_REQ_UPROBE, .reps = 5,
	 .timeout = 120)
{
	run(t, 1);
	PMC_EXPECT_LE(t, "tick", "calls:scale_callee", 2);
}

/* The harness's own cost per execution: an empty region on a software
 * event (read with read(2): this machine's kind has no user-space reads
 * for it), for scale.py.  An empty region faults in no page. */
PMC_TEST(scale, empty, .events = "page-faults", .reps = 5)
{
	unsigned long n = executions();

	for (unsigned long i = 0; i < n; i++) {
		PMC_REGION(t, "empty") {
		}
	}
	PMC_EXPECT_EQ(t, "empty", "page-faults", 0);
}
