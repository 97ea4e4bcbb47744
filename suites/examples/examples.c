/* SPDX-License-Identifier: MIT */
/*
 * Example suite: the whole path from PMC_TEST to CTest with events this
 * project's machines really have (breakpoints, uprobes, software events),
 * all with exact expectations, plus one hardware case that runs wherever a
 * CPU PMU exists (the emulated arm64 lane) and skips elsewhere.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/harness.h>

/* ---- breakpoints: exact access counts ------------------------------------------- */

/* Global, so `mem:example_counter` finds it in the symbol table. */
volatile uint64_t example_counter;

/* A write breakpoint on a global counts every store to it. */
PMC_TEST(breakpoints, global_writes, .events = "mem:example_counter/8:w")
{
	PMC_REGION(t, "loop") {
		for (int i = 0; i < 1000; i++)
			example_counter = example_counter + 1;
	}
	PMC_EXPECT_EQ(t, "loop", "mem:example_counter/8:w", 1000);
}

/* Heap memory has no symbol: the fixture allocates it and adds a watch. */
struct buffer {
	volatile uint32_t *words;
	size_t n;
};

static int buffer_setup(struct pmc_test *t, void **data)
{
	struct buffer *b = calloc(1, sizeof(*b));

	if (!b)
		return -1;
	b->n = 64;
	b->words = calloc(b->n, sizeof(*b->words));
	if (!b->words) {
		free(b);
		return -1;
	}
	*data = b;
	/* x86 has no read-only data breakpoints: watch reads and writes. */
	pmc_test_watch(t, "word7", (const void *)&b->words[7], sizeof(b->words[7]), PMC_BP_RW);
	return 0;
}

static void buffer_teardown(struct pmc_test *t, void *data)
{
	struct buffer *b = data;

	(void)t;
	free((void *)b->words);
	free(b);
}

static const struct pmc_fixture buffer_fixture = { "buffer", buffer_setup, buffer_teardown };

/* Sum the buffer 10 times: word 7 is read exactly 10 times; the other
 * words are not watched. */
PMC_TEST(breakpoints, heap_word_reads, .fixture = &buffer_fixture, .reps = 3)
{
	struct buffer *b = pmc_test_data(t);
	uint64_t sum = 0;

	b->words[7] = 5; /* outside the region: not counted */
	PMC_REGION(t, "sum") {
		for (int pass = 0; pass < 10; pass++)
			for (size_t i = 0; i < b->n; i++)
				sum += b->words[i];
		PMC_DO_NOT_OPTIMIZE(sum);
	}
	PMC_CHECK_EQ(t, sum, 50);
	PMC_EXPECT_EQ(t, "sum", "word7", 10);
}

/* ---- uprobes: exact call counts -------------------------------------------------- */

/* noinline + used: the call must happen and the symbol must exist. */
__attribute__((noinline, used)) uint64_t example_hash(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	__asm__ __volatile__("" : "+r"(x));
	return x;
}

static uint64_t hash_all(const uint64_t *v, size_t n)
{
	uint64_t h = 0;

	for (size_t i = 0; i < n; i++)
		h += example_hash(v[i]);
	return h;
}

/* "This hot path calls the hash once per key and never allocates." */
PMC_TEST(calls, hash_once_per_key, .events = "calls:example_hash,calls:malloc")
{
	uint64_t keys[100], h;

	for (size_t i = 0; i < 100; i++)
		keys[i] = i * 7919;
	PMC_REGION(t, "hash_all") {
		h = hash_all(keys, 100);
		PMC_DO_NOT_OPTIMIZE(h);
	}
	PMC_EXPECT_EQ(t, "hash_all", "calls:example_hash", 100);
	PMC_EXPECT_EQ(t, "hash_all", "calls:malloc", 0);
	/* Two events of one region: one hash per key, exactly. */
	PMC_EXPECT_RATIO_RANGE(t, "hash_all", "calls:example_hash", "calls:example_hash", 1.0, 1.0);
}

/* Counting allocations: three mallocs, three calls. */
PMC_TEST(calls, three_allocations, .events = "calls:malloc")
{
	void *p[3];

	PMC_REGION(t, "alloc") {
		for (int i = 0; i < 3; i++) {
			p[i] = malloc(32 + (size_t)i);
			PMC_DO_NOT_OPTIMIZE(p[i]);
		}
	}
	for (int i = 0; i < 3; i++)
		free(p[i]);
	PMC_EXPECT_EQ(t, "alloc", "calls:malloc", 3);
}

/* ---- software events: page faults ----------------------------------------------------- */

__attribute__((noinline, used)) void example_touch(volatile char *page)
{
	page[0] = 1;
}

/*
 * Writing to a fresh anonymous page faults once; writing again does not.
 * Transparent huge pages are turned off for the mapping so that one fault
 * maps one 4 KiB page.  Two regions in one case, and a ratio of two events.
 */
PMC_TEST(software, page_faults_first_touch, .events = "page-faults,calls:example_touch")
{
	const size_t pages = 64, page = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	PMC_CHECK(t, m != MAP_FAILED);
	madvise(m, pages * page, MADV_NOHUGEPAGE);
	PMC_REGION_N(t, "first_touch", pages) {
		for (size_t i = 0; i < pages; i++)
			example_touch(m + i * page);
	}
	PMC_REGION_N(t, "second_touch", pages) {
		for (size_t i = 0; i < pages; i++)
			example_touch(m + i * page);
	}
	munmap(m, pages * page);
	PMC_EXPECT_EQ(t, "first_touch", "page-faults", 64);
	PMC_EXPECT_EQ(t, "second_touch", "page-faults", 0);
	PMC_EXPECT_RATIO_RANGE(t, "first_touch", "page-faults", "calls:example_touch", 1.0, 1.0);
}

/* ---- hardware: runs where a CPU PMU exists ------------------------------------------------- */

/*
 * A counted loop in assembly: exactly 2 instructions per trip (decrement,
 * conditional branch), so the compiler cannot change the count.  With the
 * empty-region overhead subtracted, the region retires 2N instructions plus
 * the few that set up the loop counter; the bound allows 8 for those.
 */
static void counted_loop(uint64_t n)
{
#if defined(__x86_64__)
	__asm__ __volatile__("1: dec %0\n\tjnz 1b" : "+r"(n) : : "cc");
#elif defined(__aarch64__)
	__asm__ __volatile__("1: subs %0, %0, #1\n\tb.ne 1b" : "+r"(n) : : "cc");
#else
	for (volatile uint64_t i = 0; i < n; i++)
		;
#endif
}

PMC_TEST(hardware, counted_loop_instructions, .events = "instructions:u")
{
	PMC_REGION_N(t, "loop", 10000) {
		counted_loop(10000);
	}
	PMC_EXPECT_RANGE(t, "loop", "instructions:u", 20000, 20008);
}

/* ---- budgets from hwdb ------------------------------------------------------------------ */

/*
 * The same counts gated by recorded budgets instead of literals: the
 * numbers live in hwdb/budgets/<key>/budget.ini, the file named after the
 * case's suite, section [hash_and_touch] (calls are the same on
 * every machine, so they are filed under "any"; a hardware event would be
 * filed per model).  Re-record with:
 *   pmcheck_examples --filter=budget.* --calibrate --calibrate-key=any --hwdb=hwdb
 */
PMC_TEST(budget, hash_and_touch, .events = "calls:example_hash,calls:example_touch,page-faults")
{
	const size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *m = mmap(NULL, 16 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t keys[50], h;

	PMC_CHECK(t, m != MAP_FAILED);
	madvise(m, 16 * page, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < 50; i++)
		keys[i] = i;
	PMC_REGION(t, "hash") {
		h = hash_all(keys, 50);
		PMC_DO_NOT_OPTIMIZE(h);
	}
	PMC_REGION_N(t, "touch", 16) {
		for (size_t i = 0; i < 16; i++)
			example_touch(m + i * page);
	}
	munmap(m, 16 * page);
	PMC_EXPECT_BUDGET(t, "hash", "calls:example_hash");
	PMC_EXPECT_BUDGET(t, "touch", "calls:example_touch");
	PMC_EXPECT_BUDGET(t, "touch", "page-faults");
}
