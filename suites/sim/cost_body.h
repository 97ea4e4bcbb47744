/* SPDX-License-Identifier: MIT */
/*
 * The body suites/sim/cost.c measures, shared with cost_plain.c, which runs
 * the same work as a plain program (ci/bench's reference: the same work
 * under valgrind --tool=none).
 */
#ifndef PMCHECK_COST_BODY_H
#define PMCHECK_COST_BODY_H

#include <stdlib.h>
#include <string.h>

#include "../common/kernels.h"

static uint8_t bits[30000], data[16384];
static int table[20000], work[20000];
static uint8_t text[1 << 18];
static uint32_t head[1 << 15], prev[1 << 18];

static void cost_inputs(void)
{
	uint64_t seed = 1;

	for (size_t i = 0; i < sizeof(bits); i++)
		bits[i] = (uint8_t)(kernel_xorshift(&seed) >> 63);
	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < 20000; i++)
		table[i] = (int)(kernel_xorshift(&seed) >> 40);
	for (size_t i = 0; i < sizeof(text); i++)
		text[i] = (uint8_t)("abcdefgh"[kernel_xorshift(&seed) >> 61]);
}

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

#endif
