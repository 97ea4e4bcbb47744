/* SPDX-License-Identifier: MIT */
/* A downstream project's counter gates: its parser calls the tokenizer once
 * per token and never allocates; a hardware budget where a PMU exists. */
#include <ctype.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include <pmcheck/harness.h>

__attribute__((noinline, used)) const char *next_token(const char *p)
{
	while (*p && isspace((unsigned char)*p))
		p++;
	while (*p && !isspace((unsigned char)*p))
		p++;
	return p;
}

static int count_tokens(const char *s)
{
	int n = 0;

	for (const char *p = s; *(p = next_token(p)) || p[-1] != ' ';) {
		n++;
		if (!*p)
			break;
	}
	return n;
}

static const char input[] = "alpha beta gamma delta epsilon zeta eta theta";

PMC_TEST(parser, one_call_per_token, .events = "calls:next_token,calls:malloc")
{
	int n = 0;

	PMC_REGION(t, "tokenize") {
		n = count_tokens(input);
		PMC_DO_NOT_OPTIMIZE(n);
	}
	PMC_CHECK_EQ(t, n, 8);
	PMC_EXPECT_EQ(t, "tokenize", "calls:next_token", 8);
	PMC_EXPECT_EQ(t, "tokenize", "calls:malloc", 0);
}

PMC_TEST(parser, watched_result, .events = "mem:watched/4:w")
{
	PMC_REGION(t, "store") {
		extern volatile int watched;

		for (int i = 0; i < 3; i++)
			watched = i;
	}
	PMC_EXPECT_EQ(t, "store", "mem:watched/4:w", 3);
}

volatile int watched;

/* The parser's input buffer is mapped fresh: its first pass faults each
 * page once, an exact count on every machine (page faults are checked on
 * known work like breakpoints; they count wherever Linux runs). */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize("address")))
#endif
static void first_pass(volatile char *buf, size_t pages, size_t page)
{
	for (size_t i = 0; i < pages; i++)
		buf[i * page] = 1;
}

PMC_TEST(parser, buffer_first_touch, .events = "page-faults:u")
{
	const size_t pages = 32, page = (size_t)sysconf(_SC_PAGESIZE);
	char *buf = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);

	PMC_CHECK(t, buf != MAP_FAILED);
	madvise(buf, pages * page, MADV_NOHUGEPAGE);
	PMC_REGION(t, "first_pass") {
		first_pass(buf, pages, page);
	}
	munmap(buf, pages * page);
	PMC_EXPECT_EQ(t, "first_pass", "page-faults:u", 32);
}

PMC_TEST(parser, instructions_budget, .events = "instructions:u")
{
	int n = 0;

	PMC_REGION(t, "tokenize") {
		n = count_tokens(input);
		PMC_DO_NOT_OPTIMIZE(n);
	}
	PMC_EXPECT_LE(t, "tokenize", "instructions:u", 5000);
}

/* A case that checks behaviour and counts nothing (as a conformance case
 * does): `ctest -L behaviour` selects it alone, and the guard, which ctest
 * adds to the selection, has no measuring case to guard and passes. */
PMC_TEST(parser, token_count, .labels = "behaviour")
{
	PMC_CHECK_EQ(t, count_tokens(input), 8);
}
