/* SPDX-License-Identifier: MIT */
/*
 * Hardware validation: does this CPU model (or the simulator, or QEMU's
 * PMU) count what hwdb says it counts?
 *
 * Every case runs an inline-assembly kernel (suites/common/kernels.h) whose
 * counts per iteration are read off its code, at 1x and 2x length, and
 * judges the difference divided by the length -- the nanoBench method: the
 * cost of reading the counters, and anything else the two runs share,
 * cancels.  The expectation comes from the code; how exact it must be comes
 * from hwdb: an event the model lists as deterministic must match exactly,
 * others get the tolerance the case states, and a model hwdb does not list
 * is held to the architectural expectation and reported as "unlisted".
 * Interrupts and page faults during the 2x run are noted beside the figure:
 * on real hardware each may add one retired instruction.
 *
 * `pmcheck validate` runs this program and prints the per-event table.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <pmcheck/harness.h>
#include <pmcheck/machine.h>

#include "../common/kernels.h"

#define LEN 100000u

/* ---- what hwdb says about this machine ---------------------------------------------- */

struct model_view {
	int listed;
	struct pmc_hwdb_model model;
	char id[64];
};

/* The model being validated: "callgrind" on the sim backend, else the one
 * the CPU signature maps to (PMCHECK_HWDB directories first). */
static void model_of(struct pmc_test *t, struct model_view *v)
{
	const char *dirs[8];
	size_t n = 0;
	char *env = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL;
	struct pmc_hwdb *db = NULL;
	struct pmc_error err;

	memset(v, 0, sizeof(*v));
	for (char *save = NULL, *d = env ? strtok_r(env, ":", &save) : NULL; d && n < 8;
	     d = strtok_r(NULL, ":", &save))
		dirs[n++] = d;
	if (pmc_hwdb_open(&db, dirs, n, &err) == 0) {
		if (pmc_test_backend(t) == PMC_BACKEND_SIM) {
			v->listed = pmc_hwdb_model(db, "callgrind", &v->model) == 0;
		} else {
			struct pmc_cpu_id cpu;
			struct pmc_hwdb_match m;

			pmc_cpu_identify(&cpu);
			v->listed = pmc_hwdb_match(db, cpu.signature, &m, &v->model) == 0 &&
				    v->model.id[0];
		}
		pmc_hwdb_free(db);
	}
	free(env);
	snprintf(v->id, sizeof(v->id), "%s", v->listed ? v->model.id : "unlisted");
}

/* ---- judging a per-iteration figure ------------------------------------------------- */

struct noise {
	unsigned long long interrupts, faults;
};

static unsigned long long interrupts_now(void)
{
	/* Sum of the first line of counts, every CPU: the "intr" line of /proc/stat. */
	unsigned long long total = 0;
	char line[256];
	FILE *f = fopen("/proc/stat", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "intr ", 5)) {
			total = strtoull(line + 5, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return total;
}

static unsigned long long faults_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (unsigned long long)(ru.ru_minflt + ru.ru_majflt);
}

/*
 * The figure: (2x - 1x) / LEN for `event`, the smallest over the measured
 * repetitions (interference only adds).  expected is what the code does per
 * iteration; tolerance (a fraction) applies unless the model lists the event
 * as deterministic; why says where the expectation comes from.
 */
static void judge(struct pmc_test *t, const struct model_view *v, const char *event,
		  double expected, double tolerance, const struct noise *nz, const char *why)
{
	static double best[8];
	static const char *names[8];
	double per_iter;
	size_t slot = 0;
	int exact;

	if (pmc_test_rep(t) < 0)
		return;
	per_iter = ((double)pmc_test_last(t, "2x", event) - (double)pmc_test_last(t, "1x", event)) /
		   LEN;
	while (slot < 7 && names[slot] && strcmp(names[slot], event))
		slot++;
	if (!names[slot] || pmc_test_rep(t) == 0) {
		names[slot] = event;
		best[slot] = per_iter;
	}
	if (per_iter < best[slot])
		best[slot] = per_iter;
	exact = v->listed && pmc_hwdb_model_deterministic(&v->model, event) == 1;
	if (exact)
		pmc_test_expect_figure(t, "per iteration, 2x - 1x", event, best[slot], expected,
				       expected, "%s; exact: model %s lists %s as deterministic", why,
				       v->id, event);
	else
		pmc_test_expect_figure(t, "per iteration, 2x - 1x", event, best[slot],
				       expected * (1 - tolerance), expected * (1 + tolerance),
				       "%s; +-%g%%: %s", why, tolerance * 100,
				       v->listed ? "not listed as deterministic for this model"
						 : "model not in hwdb (unlisted): architectural expectation");
	if (nz && pmc_test_backend(t) == PMC_BACKEND_PERF)
		pmc_test_note(t, "%s: %llu interrupts (all CPUs) and %llu page faults during the 2x run",
			      event, nz->interrupts, nz->faults);
}

/*
 * Run fn at n and 2n iterations as regions "1x" and "2x" from one loop, so
 * both regions are the same machine code and their fixed costs (operand
 * set-up, the reading machinery) are identical and cancel in the difference.
 */
typedef void (*kernel_fn)(void *arg, uint64_t n);

static void twice(struct pmc_test *t, kernel_fn fn, void *arg, uint64_t n, struct noise *nz)
{
	static const char *const names[2] = { "1x", "2x" };

	for (uint64_t k = 1; k <= 2; k++) {
		unsigned long long i0 = interrupts_now(), f0 = faults_now();

		PMC_REGION(t, names[k - 1]) {
			fn(arg, k * n);
		}
		nz->interrupts = interrupts_now() - i0;
		nz->faults = faults_now() - f0;
	}
}

static __attribute__((noinline)) void run_loop(void *arg, uint64_t n)
{
	uint64_t a = kernel_loop(n);

	PMC_DO_NOT_OPTIMIZE(a);
	(void)arg;
}

static __attribute__((noinline)) void run_not_taken(void *arg, uint64_t n)
{
	(void)arg;
	kernel_not_taken(n);
}

static __attribute__((noinline)) void run_unconditional(void *arg, uint64_t n)
{
	(void)arg;
	kernel_unconditional(n);
}

static __attribute__((noinline)) void run_branches(void *arg, uint64_t n)
{
	uint64_t a = kernel_branches(arg, n);

	PMC_DO_NOT_OPTIMIZE(a);
}

static __attribute__((noinline)) void run_loads(void *arg, uint64_t n)
{
	kernel_loads(arg, n);
}

static __attribute__((noinline)) void run_stores(void *arg, uint64_t n)
{
	kernel_stores(arg, n);
}

static __attribute__((noinline)) void run_chase(void *arg, uint64_t n)
{
	void *p = kernel_chase(arg, n);

	PMC_DO_NOT_OPTIMIZE(p);
}

#if defined(__x86_64__)
static __attribute__((noinline)) void run_rep_movsb(void *arg, uint64_t n)
{
	kernel_rep_movsb(arg, (char *)arg + 8192, n);
}
#endif

static void note_model(struct pmc_test *t, const struct model_view *v)
{
	if (pmc_test_rep(t) == 0)
		pmc_test_note(t, "model %s%s%s", v->id, v->listed ? " (hwdb " : "",
			      v->listed ? v->model.where : "");
}

/* The common case: run fn at 1x and 2x and judge `event` per iteration. */
static void validate_kernel(struct pmc_test *t, kernel_fn fn, void *arg, const char *event,
			    double expected, double tolerance, const char *why)
{
	struct model_view v;
	struct noise nz;

	model_of(t, &v);
	note_model(t, &v);
	twice(t, fn, arg, LEN, &nz);
	judge(t, &v, event, expected, tolerance, &nz, why);
}

/* ---- cases ---------------------------------------------------------------------------- */

/* Retired instructions: 3 per iteration of add / decrement / branch. */
PMC_TEST(validate, instructions_loop, .events = "instructions:u", .reps = 3)
{
	/* 0.1%: one interrupt or fault per 1000 iterations on a noisy machine. */
	validate_kernel(t, run_loop, NULL, "instructions:u", KERNEL_LOOP_INSNS, 0.001,
			"3 instructions per iteration (add, dec/subs, jnz/b.ne)");
}

/*
 * Cycles: with QEMU's -icount one instruction is one cycle, so the loop
 * takes exactly 3 (hwdb lists cycles:u as deterministic for qemu-max).
 * Elsewhere cycles only have architectural bounds: this 3-instruction
 * dependent loop needs at least 1 cycle per iteration and, loop-carried
 * through one register, no more than 30 on any core.
 */
PMC_TEST(validate, cycles_loop, .events = "cycles:u", .reps = 3)
{
	struct model_view v;
	struct noise nz;
	model_of(t, &v);
	note_model(t, &v);
	twice(t, run_loop, NULL, LEN, &nz);
	if (v.listed && pmc_hwdb_model_deterministic(&v.model, "cycles:u") == 1)
		judge(t, &v, "cycles:u", KERNEL_LOOP_INSNS, 0, &nz,
		      "one cycle per instruction under -icount");
	else if (pmc_test_rep(t) >= 0)
		pmc_test_expect_figure(
			t, "per iteration, 2x - 1x", "cycles:u",
			((double)pmc_test_last(t, "2x", "cycles:u") -
			 (double)pmc_test_last(t, "1x", "cycles:u")) / LEN,
			1, 30,
			"architectural bounds of a 3-instruction dependent loop: 1..30 cycles (not deterministic on %s)",
			v.id);
}

/* Branches, taken: the loop's conditional branch, taken every iteration but
 * the last -- 1 branch per iteration, on hardware and simulator alike. */
PMC_TEST(validate, branches_taken, .events = "branches", .reps = 3)
{
	validate_kernel(t, run_loop, NULL, "branches", 1, 0.001,
			"1 conditional branch per iteration, taken");
}

/*
 * Branches, not taken: each iteration retires two conditional branches, one
 * of which is never taken.  Counted the same by hardware and simulator.
 */
PMC_TEST(validate, branches_not_taken, .events = "branches", .reps = 3)
{
	validate_kernel(t, run_not_taken, NULL, "branches", 2, 0.001,
			"2 conditional branches per iteration (one never taken)");
}

/*
 * Branches with an unconditional direct jump: hardware retires 2 branches
 * per iteration; callgrind counts conditional (Bc) and indirect (Bi)
 * branches only, so the simulator sees 1 (hwdb: erratum of model callgrind).
 */
PMC_TEST(validate, branches_unconditional, .events = "branches", .reps = 3)
{
	int sim = pmc_test_backend(t) == PMC_BACKEND_SIM;

	validate_kernel(t, run_unconditional, NULL, "branches", sim ? 1 : 2, 0.001,
			sim ? "1 per iteration on callgrind: the direct jmp is neither Bc nor Bi"
			    : "2 branches per iteration: an unconditional jump and the loop branch");
}

/*
 * A branch on fixed pseudo-random bits: mispredicted about half the time by
 * any predictor; the loop branch is learned.  0.5 +-20%.
 */
PMC_TEST(validate, branch_misses_random, .events = "branch-misses", .reps = 3)
{
	static uint8_t *bits;

	if (!bits) {
		uint64_t seed = 0x9e3779b97f4a7c15u;

		bits = malloc(2 * LEN);
		PMC_CHECK(t, bits != NULL);
		for (size_t i = 0; i < 2 * LEN; i++)
			bits[i] = (uint8_t)(kernel_xorshift(&seed) >> 63);
	}
	validate_kernel(t, run_branches, bits, "branch-misses", 0.5, 0.2,
			"random direction: half the data-dependent branches mispredicted");
}

/* One load per iteration, always the same line. */
PMC_TEST(validate, loads, .events = "L1-dcache-loads", .reps = 3)
{
	static uint64_t cell;

	validate_kernel(t, run_loads, &cell, "L1-dcache-loads", 1, 0.01, "1 load per iteration");
}

/* One store per iteration, always the same line. */
PMC_TEST(validate, stores, .events = "L1-dcache-stores", .reps = 3)
{
	static uint64_t cell;

	validate_kernel(t, run_stores, &cell, "L1-dcache-stores", 1, 0.01, "1 store per iteration");
}

/* Cache sizes: the simulator's fixed geometry, or sysfs on real hardware
 * (level 1: the L1 data cache; otherwise the largest data or unified cache
 * of level 2 and up, i.e. the last level). */
static size_t cache_bytes(struct pmc_test *t, int level)
{
	unsigned long best = 0;

	if (pmc_test_backend(t) == PMC_BACKEND_SIM)
		return level == 1 ? 32768 : 8u << 20;
	for (int idx = 0; idx < 16; idx++) {
		char path[128], type[32] = "";
		unsigned lvl = 0;
		unsigned long kib = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
		if (!(f = fopen(path, "r")))
			break;
		if (fscanf(f, "%u", &lvl) != 1)
			lvl = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/type", idx);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%31s", type) != 1)
				type[0] = '\0';
			fclose(f);
		}
		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%luK", &kib) != 1)
				kib = 0;
			fclose(f);
		}
		if (!strcmp(type, "Instruction") || (level == 1) != (lvl == 1))
			continue;
		if (kib > best)
			best = kib;
	}
	if (!best)
		pmc_test_skip(t, "cache geometry unknown here (no /sys/devices/system/cpu/cpu0/cache): cannot size the buffer");
	return best * 1024;
}

/* A dependent random chase over 8x the cache: a line is still cached with
 * probability at most 1/8, so 0.875..1.0 misses per load; bounds 0.8..1.02. */
static void chase_case(struct pmc_test *t, int level, const char *event)
{
	static void *buf;
	static size_t lines;
	struct model_view v;
	struct noise nz;
	size_t steps;

	model_of(t, &v);
	note_model(t, &v);
	if (!buf) {
		lines = 8 * cache_bytes(t, level) / 64;
		buf = aligned_alloc(64, lines * 64);
		PMC_CHECK(t, buf && kernel_chase_build(buf, lines, 64, 1234));
	}
	steps = lines / 2; /* 1x: half a cycle, 2x: the whole cycle */
	twice(t, run_chase, buf, steps, &nz);
	if (pmc_test_rep(t) >= 0)
		pmc_test_expect_figure(t, "per load, 2x - 1x", event,
				       ((double)pmc_test_last(t, "2x", event) -
					(double)pmc_test_last(t, "1x", event)) / (double)steps,
				       0.8, 1.02,
				       "random chase over 8x the level-%d cache (%zu KiB): at most 1 in 8 loads hits",
				       level, lines * 64 / 8 / 1024);
}

PMC_TEST(validate, chase_l1d, .events = "L1-dcache-load-misses", .reps = 2)
{
	chase_case(t, 1, "L1-dcache-load-misses");
}

PMC_TEST(validate, chase_llc, .events = "LLC-load-misses", .reps = 2, .timeout = 120)
{
	chase_case(t, 2, "LLC-load-misses");
}

#if defined(__x86_64__)
/*
 * rep movsb: one instruction to the hardware however many bytes it moves
 * (hwdb erratum [WTM]), one per byte to valgrind (callgrind counts each
 * repetition).  The figure is instructions per byte: 0 on hardware, 1 on sim.
 */
PMC_TEST(validate, rep_movsb, .events = "instructions:u", .reps = 3)
{
	static char buf[2 * 8192]; /* destination, then source */
	struct model_view v;
	struct noise nz;
	int sim = pmc_test_backend(t) == PMC_BACKEND_SIM;

	model_of(t, &v);
	note_model(t, &v);
	twice(t, run_rep_movsb, buf, 4096, &nz);
	if (pmc_test_rep(t) >= 0)
		pmc_test_expect_figure(t, "per byte, 2x - 1x", "instructions:u",
				       ((double)pmc_test_last(t, "2x", "instructions:u") -
					(double)pmc_test_last(t, "1x", "instructions:u")) / 4096,
				       sim ? 1 : 0, sim ? 1 : 0,
				       sim ? "callgrind counts every repetition of a rep-prefixed instruction"
					   : "the hardware retires rep movsb once, however long");
}
#endif
