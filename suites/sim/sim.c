/* SPDX-License-Identifier: MIT */
/*
 * Counter tests of known code, written once for every backend: on the sim
 * backend (callgrind) and in the emulated arm64 lane they are exact; on a
 * real PMU they run with the tolerances each comment states; where an event
 * does not exist (no PMU here, no cache events in QEMU) they SKIP with the
 * core's reason.
 *
 * The kernels are inline assembly (suites/common/kernels.h): their counts
 * per iteration are read off the code, not measured.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/harness.h>

#include "../common/kernels.h"

#define N1 10000u
#define N2 30000u

/*
 * Counts that differ by at most this much between two runs of the same
 * code: 0 where counting is exact (the simulator; QEMU with -icount), a
 * few on real hardware, where each interrupt or page fault in the region
 * can add one retired instruction (hwdb lists it as an erratum per model).
 */
static uint64_t slack(struct pmc_test *t)
{
	return pmc_test_backend(t) == PMC_BACKEND_SIM ? 0 : 4;
}

static void check_difference(struct pmc_test *t, const char *event, uint64_t per_iter)
{
	uint64_t a, b, want = per_iter * (N2 - N1), got;

	if (pmc_test_rep(t) < 0)
		return;
	a = pmc_test_last(t, "n1", event);
	b = pmc_test_last(t, "n2", event);
	got = b - a;
	if (b < a || got > want + slack(t) || got + slack(t) < want)
		pmc_test_fail(t,
			      "%s: region n2 - region n1 = %llu - %llu = %llu, expected %llu x (%u - %u) = %llu (slack %llu)",
			      event, (unsigned long long)b, (unsigned long long)a,
			      (unsigned long long)got, (unsigned long long)per_iter, N2, N1,
			      (unsigned long long)want, (unsigned long long)slack(t));
}

/* Instructions are linear in the trip count with exactly KERNEL_LOOP_INSNS
 * per iteration: the regions' fixed costs cancel in the difference. */
PMC_TEST(kernels, loop_linear, .events = "instructions:u", .reps = 3)
{
	uint64_t a = 0, b = 0;

	PMC_REGION(t, "n1") {
		a = kernel_loop(N1);
		PMC_DO_NOT_OPTIMIZE(a);
	}
	PMC_REGION(t, "n2") {
		b = kernel_loop(N2);
		PMC_DO_NOT_OPTIMIZE(b);
	}
	PMC_CHECK_EQ(t, a, N1);
	PMC_CHECK_EQ(t, b, N2);
	check_difference(t, "instructions:u", KERNEL_LOOP_INSNS);
	/* The body alone is 3 x N1; the asm block's operand moves and the part
	 * of the region machinery the empty-region subtraction does not see
	 * add a handful (measured: 2 on sim x86_64). */
	PMC_EXPECT_RANGE(t, "n1", "instructions:u", KERNEL_LOOP_INSNS * N1,
			 KERNEL_LOOP_INSNS * N1 + 16);
}

static void *loop_thread(void *arg)
{
	uint64_t *n = arg;

	*n = kernel_loop(*n);
	return NULL;
}

/* The loop run by a second thread and by the calling thread inside one
 * region. */
static void two_threads(struct pmc_test *t, const char *region, uint64_t n)
{
	uint64_t mine = 0, theirs = n;
	pthread_t th;

	PMC_REGION(t, region) {
		PMC_CHECK(t, pthread_create(&th, NULL, loop_thread, &theirs) == 0);
		mine = kernel_loop(n);
		pthread_join(th, NULL);
		PMC_DO_NOT_OPTIMIZE(mine);
	}
	PMC_CHECK_EQ(t, mine, n);
	PMC_CHECK_EQ(t, theirs, n);
}

/*
 * A region whose work is split over two threads counts both with .inherit
 * (threads created in the region inherit the counters).  On the sim backend
 * callgrind counts every thread of the process whatever .inherit says, so
 * the same source means the same thing on both backends only with
 * .inherit = 1.  Each region holds both loops, 2 x 3 x n, plus creating and
 * joining the thread: about 1600 instructions under valgrind, a few more or
 * less with the threads' timing (measured: the two lengths' fixed costs
 * differ by 5), so that part gets a stated allowance of 4000.
 */
PMC_TEST(kernels, threads_sum, .events = "instructions:u", .inherit = 1, .reps = 3,
	 .backends = PMC_BACKEND_SIM)
{
	two_threads(t, "n1", N1);
	two_threads(t, "n2", N2);
	PMC_EXPECT_RANGE(t, "n1", "instructions:u", 2 * KERNEL_LOOP_INSNS * N1,
			 2 * KERNEL_LOOP_INSNS * N1 + 4000);
	PMC_EXPECT_RANGE(t, "n2", "instructions:u", 2 * KERNEL_LOOP_INSNS * N2,
			 2 * KERNEL_LOOP_INSNS * N2 + 4000);
}

static uint8_t *bytes_of(size_t n, int random)
{
	uint8_t *bits = malloc(n);
	uint64_t seed = 0x9e3779b97f4a7c15u;

	if (!bits)
		return NULL;
	for (size_t i = 0; i < n; i++)
		bits[i] = random ? (uint8_t)(kernel_xorshift(&seed) >> 63) : 1;
	return bits;
}

/* Two conditional branches per iteration, exactly, however they go. */
PMC_TEST(kernels, branches_exact, .events = "branches", .reps = 3)
{
	uint8_t *bits = bytes_of(N2, 1);
	uint64_t a = 0, b = 0;

	PMC_CHECK(t, bits != NULL);
	PMC_REGION(t, "n1") {
		a = kernel_branches(bits, N1);
		PMC_DO_NOT_OPTIMIZE(a);
	}
	PMC_REGION(t, "n2") {
		b = kernel_branches(bits, N2);
		PMC_DO_NOT_OPTIMIZE(b);
	}
	free(bits);
	check_difference(t, "branches", KERNEL_BRANCHES_PER_ITER);
}

/*
 * A branch on fixed pseudo-random bits is mispredicted about half the time
 * by any predictor (callgrind's is a table of 2-bit counters); the loop's
 * own branch is learned.  The same kernel on all-ones data is predicted.
 * Bounds: 0.40..0.60 misses per iteration for random data (measured 0.50
 * on sim), at most 1% for constant data.
 */
PMC_TEST(kernels, branch_unpredictable, .events = "branch-misses,branches", .reps = 3)
{
	uint8_t *rnd = bytes_of(N2, 1), *ones = bytes_of(N2, 0);
	uint64_t taken = 0, same = 0;

	PMC_CHECK(t, rnd && ones);
	PMC_REGION_N(t, "random", N2) {
		taken = kernel_branches(rnd, N2);
		PMC_DO_NOT_OPTIMIZE(taken);
	}
	PMC_REGION_N(t, "constant", N2) {
		same = kernel_branches(ones, N2);
		PMC_DO_NOT_OPTIMIZE(same);
	}
	free(rnd);
	free(ones);
	PMC_CHECK(t, taken > N2 / 3 && taken < 2 * (uint64_t)N2 / 3);
	PMC_EXPECT_RANGE(t, "random", "branch-misses", N2 * 40 / 100, N2 * 60 / 100);
	PMC_EXPECT_LE(t, "constant", "branch-misses", N2 / 100);
	PMC_EXPECT_RATIO_RANGE(t, "random", "branch-misses", "branches", 0.20, 0.30);
}

/*
 * A pointer chase over a buffer 64 times the L1 data cache (2 MiB against
 * 32 KiB) but a quarter of the last level (8 MiB on sim): each load lands on
 * a line L1 holds with probability 1/64, so about one L1 miss per load, while
 * after the warm-up run the whole buffer sits in the last level (at most 1%
 * misses there).  Bounds on L1 misses: 0.95 N .. N + 16, where N is the
 * number of loads.  The chase evicts everything else from L1, including the
 * harness's own state, so the end reading itself adds a few misses beyond
 * the kernel's (measured: 5 on sim); 16 lines is what that reading touches
 * at most.
 */
#define CHASE_EVICTED_HARNESS_LINES 16
#define CHASE_LINE 64u
#define CHASE_L1_LINES (2u << 20) / CHASE_LINE

PMC_TEST(kernels, chase_l1, .events = "L1-dcache-load-misses,L1-dcache-loads,LLC-load-misses",
	 .reps = 3)
{
	static void *buf;
	void *p = NULL;

	if (!buf) {
		buf = aligned_alloc(CHASE_LINE, (size_t)CHASE_L1_LINES * CHASE_LINE);
		PMC_CHECK(t, buf && kernel_chase_build(buf, CHASE_L1_LINES, CHASE_LINE, 42));
	}
	PMC_REGION_N(t, "chase", CHASE_L1_LINES) {
		p = kernel_chase(buf, CHASE_L1_LINES);
		PMC_DO_NOT_OPTIMIZE(p);
	}
	PMC_CHECK(t, p == buf); /* a full cycle ends where it started */
	PMC_EXPECT_RANGE(t, "chase", "L1-dcache-load-misses", CHASE_L1_LINES * 95 / 100,
			 CHASE_L1_LINES + CHASE_EVICTED_HARNESS_LINES);
	/* One load per step, plus the few the region's end reading makes. */
	PMC_EXPECT_RANGE(t, "chase", "L1-dcache-loads", CHASE_L1_LINES,
			 CHASE_L1_LINES + CHASE_EVICTED_HARNESS_LINES);
	PMC_EXPECT_LE(t, "chase", "LLC-load-misses", CHASE_L1_LINES / 100);
}

/*
 * The same chase over 64 MiB, eight times the last level: a line is still
 * there with probability at most 1/8, so 0.80 N .. N + 16 last-level misses
 * (the end reading's own misses again on top).
 */
#define CHASE_LL_LINES (64u << 20) / CHASE_LINE

PMC_TEST(kernels, chase_llc, .events = "LLC-load-misses,L1-dcache-loads", .reps = 2,
	 .timeout = 60)
{
	static void *buf;
	void *p = NULL;

	if (!buf) {
		buf = aligned_alloc(CHASE_LINE, (size_t)CHASE_LL_LINES * CHASE_LINE);
		PMC_CHECK(t, buf && kernel_chase_build(buf, CHASE_LL_LINES, CHASE_LINE, 7));
	}
	PMC_REGION_N(t, "chase", CHASE_LL_LINES) {
		p = kernel_chase(buf, CHASE_LL_LINES);
		PMC_DO_NOT_OPTIMIZE(p);
	}
	PMC_CHECK(t, p == buf);
	PMC_EXPECT_RANGE(t, "chase", "LLC-load-misses", CHASE_LL_LINES * 80 / 100,
			 CHASE_LL_LINES + CHASE_EVICTED_HARNESS_LINES);
}

/* ---- gates: counts checked against recorded budgets -------------------------------- */

/*
 * The instruction cost of a fixed loop against the budget recorded for this
 * machine: hwdb/budgets/qemu-max/ (recorded in the emulated lane) and the
 * sim profile's directory.  Exact on both.
 */
PMC_TEST(gate, loop, .events = "instructions:u", .reps = 3)
{
	uint64_t acc = 0;

	PMC_REGION(t, "loop") {
		acc = kernel_loop(N1);
		PMC_DO_NOT_OPTIMIZE(acc);
	}
	PMC_CHECK_EQ(t, acc, N1);
	PMC_EXPECT_BUDGET(t, "loop", "instructions:u");
}


/*
 * The budgets for this case live in hwdb/budgets/<sim profile>/gate.ini,
 * recorded with --backend=sim --calibrate.  PMCHECK_GATE_SLOWER=1 makes the
 * code do an extra pass over its input, the kind of change the gate exists to
 * catch (framework/tests/sim/test_sim.py checks that it does).
 */

PMC_TEST(gate, checksum, .events = "instructions:u,L1-dcache-load-misses,branch-misses", .reps = 3)
{
	static uint8_t data[16384];
	const char *slower = getenv("PMCHECK_GATE_SLOWER");
	uint32_t sum = 0;

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	PMC_REGION(t, "checksum") {
		sum = kernel_checksum(data, sizeof(data));
		if (slower && *slower == '1')
			sum ^= kernel_checksum(data, sizeof(data));
		PMC_DO_NOT_OPTIMIZE(sum);
	}
	PMC_EXPECT_BUDGET(t, "checksum", "instructions:u");
	PMC_EXPECT_BUDGET(t, "checksum", "L1-dcache-load-misses");
	PMC_EXPECT_BUDGET(t, "checksum", "branch-misses");
}
