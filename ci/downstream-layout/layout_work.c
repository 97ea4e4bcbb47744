/* SPDX-License-Identifier: MIT */
/*
 * A region whose exact count depends on where static data lies: it copies
 * a table at odd offsets (memcpy's head and tail follow the buffers'
 * alignment), sorts it and reads scattered elements.  Built three ways:
 *   - as is: calibrated;
 *   - LAYOUT_PAD: an unrelated global and a function that never runs in a
 *     region are added (the tables move; nothing the region does changes);
 *   - LAYOUT_MORE: a real change, LAYOUT_MORE rounds of a loop more (180:
 *     +0.05% of the region; 1: a few instructions).
 * The region also calls a shared library (layout_dep.c).  The project is
 * ci/downstream-layout (outside the tree); framework/tests/test_layout.py
 * calibrates the first and gates the others.
 */
#include <stdlib.h>
#include <string.h>

#include <pmcheck/harness.h>

/* liblayoutdep.so.1 (layout_dep.c) */
unsigned layout_dep_mix(unsigned x, unsigned rounds);

#ifndef LAYOUT_PAD
#define LAYOUT_PAD 0
#endif
#ifndef LAYOUT_MORE
#define LAYOUT_MORE 0
#endif

#define N 4000


static int table[N + 64] = { 1 };
static int work[N + 64] = { 2 };
static char bytes_in[N * 4 + 64] = { 3 };
static char bytes_out[N * 4 + 64] = { 4 };

#if LAYOUT_PAD
/* Unrelated: moves the tables above by LAYOUT_PAD bytes. */
__attribute__((used)) static char layout_unrelated[LAYOUT_PAD] = { 1 };

__attribute__((noinline, used)) int layout_unrelated_fn(int x)
{
	static const char *const said[] = { "an unrelated message, never printed in a region",
					    LAYOUT_PAD % 2 ? "odd" : "even and longer" };

	for (int i = 0; i < LAYOUT_PAD % 97; i++)
		x = x * 31 + layout_unrelated[i] + said[i % 2][0];
	return x;
}
#endif

/* A keyword table: string literals packed byte by byte in .rodata, where
 * anything added before them moves them. */
static const char *const keywords[] = {
	"alignas", "alignof", "auto", "bool", "break", "case", "char", "const", "constexpr",
	"continue", "default", "do", "double", "else", "enum", "extern", "false", "float", "for",
	"goto", "if", "inline", "int", "long", "nullptr", "register", "restrict", "return",
	"short", "signed", "sizeof", "static", "static_assert", "struct", "switch", "thread_local",
	"true", "typedef", "typeof", "union", "unsigned", "void", "volatile", "while",
};
#define NKEYWORDS (sizeof(keywords) / sizeof(keywords[0]))

__attribute__((noinline)) static int keyword_of(const char *word)
{
	for (size_t i = 0; i < NKEYWORDS; i++)
		if (strlen(keywords[i]) == strlen(word) && !strcmp(keywords[i], word))
			return (int)i;
	return -1;
}

static int by_value(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

static int fill(struct pmc_test *t, void **data)
{
	unsigned s = 12345;

	(void)t;
	(void)data;
	for (int i = 0; i < N + 64; i++) {
		s = s * 1103515245u + 12345u;
		table[i] = (int)(s >> 8);
	}
	for (int i = 0; i < N * 4 + 64; i++)
		bytes_in[i] = (char)(i * 7);
	return 0;
}

static const struct pmc_fixture table_fixture = { .name = "table", .setup = fill };

PMC_TEST(layout, sort_and_copy, .events = "instructions:u,L1-dcache-load-misses,branch-misses",
	 .reps = 3, .backends = PMC_BACKEND_SIM, .fixture = &table_fixture)
{
	long sum = 0;

	PMC_REGION(t, "work") {
		/* Odd offsets: what memcpy executes follows the buffers' alignment. */
		for (int k = 0; k < 24; k++)
			memcpy(bytes_out + 3 + k, bytes_in + 5 + 2 * k, 700 + 13 * (size_t)k);
		for (size_t k = 0; k < NKEYWORDS; k++)
			sum += keyword_of(keywords[NKEYWORDS - 1 - k]);
		for (unsigned i = 0; i < 64; i++)
			sum += layout_dep_mix(i + 1, 20);
		for (int i = 0; i < LAYOUT_MORE; i++) {
			sum += i * 3 + 1;
			PMC_DO_NOT_OPTIMIZE(sum);
		}
		memcpy(work, table, sizeof(int) * N);
		qsort(work, N, sizeof(int), by_value);
		for (int i = 0; i < N; i += 37)
			sum += work[(i * 97) % N] + bytes_out[(i * 13) % (N * 4)];
	}
	PMC_DO_NOT_OPTIMIZE(sum);
	PMC_EXPECT_BUDGET(t, "work", "instructions:u");
	PMC_EXPECT_BUDGET(t, "work", "L1-dcache-load-misses");
	PMC_EXPECT_BUDGET(t, "work", "branch-misses");
}
