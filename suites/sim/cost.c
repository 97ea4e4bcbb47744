/* SPDX-License-Identifier: MIT */
/*
 * What a sim case costs (ci/main times these under --backend=sim, in pairs,
 * and prints ratios):
 *   - cost.empty: an empty region; its time is the fixed cost of a case,
 *     set against valgrind --tool=none /bin/true;
 *   - cost.instructions and cost.misses: one compute-bound body (the
 *     kernels' loop, branches and checksum), counting instructions only,
 *     and instructions with cache and branch misses.  The first needs
 *     neither simulation, the second both.
 * Each also checks what it counts, so a broken backend cannot pass as fast.
 */
#include <stdlib.h>
#include <string.h>

#include <pmcheck/harness.h>

#include "../common/kernels.h"

static uint8_t bits[30000], data[16384];
static int table[20000], work[20000];
static uint8_t text[1 << 18];
static uint32_t head[1 << 15], prev[1 << 18];

static int inputs(struct pmc_test *t, void **d)
{
	uint64_t seed = 1;

	(void)t;
	(void)d;
	for (size_t i = 0; i < sizeof(bits); i++)
		bits[i] = (uint8_t)(kernel_xorshift(&seed) >> 63);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < 20000; i++)
		table[i] = (int)(kernel_xorshift(&seed) >> 40);
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)("abcdefgh"[kernel_xorshift(&seed) >> 61]);
	return 0;
}

static const struct pmc_fixture inputs_fixture = { .name = "inputs", .setup = inputs };

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* A compressor's match finder: hash three bytes, chain the position into
 * a table (loads and stores all over 1.1 MiB, as deflate's are). */
static uint64_t chain(void)
{
	uint64_t sink = 0;

	for (uint32_t i = 0; i + 3 < sizeof(text); i++) {
		uint32_t h = ((uint32_t)text[i] << 10 ^ (uint32_t)text[i + 1] << 5 ^ text[i + 2]) &
			     ((1u << 15) - 1);

		prev[i] = head[h];
		head[h] = i;
		sink += prev[i] > i - 32768 && text[prev[i]] == text[i];
	}
	return sink;
}

/* Ordinary code: a match finder, a sort (calls, loads, stores,
 * data-dependent branches), a checksum and the kernels' branches. */
static uint64_t body(void)
{
	uint64_t sink = chain();

	memcpy(work, table, sizeof(work));
	qsort(work, 20000, sizeof(int), by_value);
	for (int rep = 0; rep < 4; rep++) {
		sink += kernel_loop(100000);
		sink += kernel_branches(bits, sizeof(bits));
		sink += kernel_checksum(data, sizeof(data));
	}
	return sink + (uint64_t)work[19999];
}

PMC_TEST(cost, empty, .events = "instructions:u", .backends = PMC_BACKEND_SIM)
{
	PMC_REGION(t, "nothing") {
	}
	/* Nothing but what overhead subtraction leaves: at most a few. */
	PMC_EXPECT_LE(t, "nothing", "instructions:u", 16);
}

PMC_TEST(cost, instructions, .events = "instructions:u", .backends = PMC_BACKEND_SIM,
	 .fixture = &inputs_fixture, .reps = 3)
{
	uint64_t sink = 0;

	PMC_REGION(t, "body") {
		sink += body();
	}
	PMC_DO_NOT_OPTIMIZE(sink);
	PMC_EXPECT_GE(t, "body", "instructions:u", 4 * 100000);
}

PMC_TEST(cost, misses, .events = "instructions:u,L1-dcache-load-misses,branch-misses",
	 .backends = PMC_BACKEND_SIM, .fixture = &inputs_fixture, .reps = 3)
{
	uint64_t sink = 0;

	PMC_REGION(t, "body") {
		sink += body();
	}
	PMC_DO_NOT_OPTIMIZE(sink);
	PMC_EXPECT_GE(t, "body", "instructions:u", 4 * 100000);
	/* kernel_branches on random bits: about half its branches miss. */
	PMC_EXPECT_GE(t, "body", "branch-misses", 4 * 30000 / 4);
}
