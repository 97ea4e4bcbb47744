// SPDX-License-Identifier: MIT
// pmc::counters and pmc::count in GoogleTest tests: exact counts of software
// events and uprobes (every machine with a kernel has them), errors as
// exceptions that name the input, and a scope left by an exception.
#include <pmcheck/pmcheck.hpp>

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <stdexcept>
#include <string>

extern "C" __attribute__((noinline, used)) int pmc_gtest_work(int x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}

namespace gtest_work {
__attribute__((noinline, used)) int twice(int x)
{
	__asm__ __volatile__("" : "+r"(x));
	return 2 * x;
}
} // namespace gtest_work

namespace {

constexpr int pages = 16;

#if defined(__SANITIZE_ADDRESS__)
#define SKIP_IF_SHADOW_FAULTS()                                                 \
	GTEST_SKIP() << "AddressSanitizer's shadow memory faults pages of its own inside the scope " \
			"(measured: 19 faults for 16 pages); the plain builds check the count"
#else
#define SKIP_IF_SHADOW_FAULTS() (void)0
#endif

char *fresh_pages()
{
	void *p = mmap(nullptr, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		throw std::runtime_error("mmap");
	return static_cast<char *>(p);
}

void touch(char *p)
{
	for (int i = 0; i < pages; i++) {
		p[i * 4096] = 1;
		__asm__ __volatile__("" ::: "memory");
	}
}

} // namespace

TEST(Count, FirstTouchOfEachPageFaultsOnce)
{
	SKIP_IF_SHADOW_FAULTS();
	pmc::counters c("page-faults,minor-faults");
	pmc::counts n;
	char *p = fresh_pages();

	{
		pmc::count scope(c, n);
		touch(p);
	}
	munmap(p, pages * 4096);
	EXPECT_EQ(n["page-faults"], static_cast<uint64_t>(pages));
	EXPECT_EQ(n["minor-faults"], static_cast<uint64_t>(pages));
}

TEST(Count, CallsOfACFunctionAndOfACxxFunction)
{
	try {
		pmc::counters c("calls:pmc_gtest_work,calls:gtest_work::twice");
		pmc::counts n;
		int s = 0;

		{
			pmc::count scope(c, n);
			for (int i = 0; i < 25; i++)
				s += pmc_gtest_work(i);
			for (int i = 0; i < 7; i++)
				s += gtest_work::twice(i);
		}
		EXPECT_EQ(s, 25 * 26 / 2 + 2 * (6 * 7 / 2));
		EXPECT_EQ(n["calls:pmc_gtest_work"], 25u);
		EXPECT_EQ(n["calls:gtest_work::twice"], 7u);
	} catch (const pmc::error &e) {
		if (pmc_error_is_capability(e.code()))
			GTEST_SKIP() << e.what();
		throw;
	}
}

TEST(Count, AScopeLeftByAnExceptionStillCounts)
{
	SKIP_IF_SHADOW_FAULTS();
	pmc::counters c("page-faults");
	pmc::counts n;
	char *p = fresh_pages();

	// Unwinding is counted too: its first run faults in the unwind tables
	// (4 pages, measured), so throw once before the counted scope.
	try {
		throw std::runtime_error("warm");
	} catch (const std::runtime_error &) {
	}
	try {
		pmc::count scope(c, n);
		touch(p);
		throw std::runtime_error("leaving");
	} catch (const std::runtime_error &) {
	}
	munmap(p, pages * 4096);
	EXPECT_EQ(n["page-faults"], static_cast<uint64_t>(pages));
}

TEST(Errors, AnUnknownEventThrowsAndNamesIt)
{
	try {
		pmc::counters c("page-faults,no-such-event");
		FAIL() << "no exception";
	} catch (const pmc::error &e) {
		EXPECT_EQ(e.code(), PMC_E_UNKNOWN_EVENT);
		EXPECT_NE(std::string(e.what()).find("no-such-event"), std::string::npos) << e.what();
	}
}

TEST(Errors, ReadingAnEventTheSetLacksThrowsAndListsWhatItHas)
{
	pmc::counters c("page-faults");
	pmc::counts n;

	EXPECT_THROW(n["page-faults"], pmc::error); // nothing counted yet
	{
		pmc::count scope(c, n);
	}
	EXPECT_EQ(n["page-faults"], 0u);
	try {
		(void)n["cycles"];
		FAIL() << "no exception";
	} catch (const pmc::error &e) {
		EXPECT_EQ(e.code(), PMC_E_UNKNOWN_EVENT);
		EXPECT_NE(std::string(e.what()).find("they count page-faults"), std::string::npos) << e.what();
	}
}

namespace gtest_work {
__attribute__((noinline, used)) int over(int x) { return x; }
__attribute__((noinline, used)) int over(double x) { return static_cast<int>(x); }
} // namespace gtest_work

TEST(Errors, AnOverloadedCxxNameIsRefusedWithItsCandidates)
{
	try {
		pmc::counters c("calls:gtest_work::over");
		FAIL() << "no exception";
	} catch (const pmc::error &e) {
		const std::string w = e.what();

		if (pmc_error_is_capability(e.code()))
			GTEST_SKIP() << w;
		EXPECT_EQ(e.code(), PMC_E_NO_SYMBOL);
		EXPECT_NE(w.find("gtest_work::over(int)"), std::string::npos) << w;
		EXPECT_NE(w.find("gtest_work::over(double)"), std::string::npos) << w;
		EXPECT_NE(w.find("calls:_ZN10gtest_work4over"), std::string::npos) << w;
	}
}
