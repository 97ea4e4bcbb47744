/* SPDX-License-Identifier: MIT */
/*
 * A C++ function g++ -O2 splits into its entry and a .cold part (the
 * throw), for test_discover.py: calls: counts the entry, by its demangled
 * name, exactly, and a name of the cold part is refused with the function
 * to count instead.  Not registered case by case (two cases fail by design).
 */
#include <stdexcept>
#include <string>

#include <pmcheck/harness.h>
#include <pmcheck/pmcheck.h>

namespace cold_ns {

__attribute__((noinline)) int parse(const char *s)
{
	int v = 0;

	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			throw std::invalid_argument(std::string("not a digit: ") + s);
		v = v * 10 + (*s - '0');
	}
	return v;
}

} // namespace cold_ns

/* 7 calls that return, 3 that throw (through the cold part). */
static int mixed_calls()
{
	static const char *const inputs[] = { "1", "x", "23", "456", "7y", "8", "99", "z", "10", "11" };
	int sum = 0;

	for (const char *in : inputs) {
		try {
			sum += cold_ns::parse(in);
		} catch (const std::invalid_argument &) {
			sum--;
		}
	}
	return sum;
}

PMC_TEST(cold, entries, pmc::options().events("calls:cold_ns::parse").reps(3))
{
	int sum = 0;

	PMC_REGION(t, "ten") {
		sum = mixed_calls();
	}
	PMC_DO_NOT_OPTIMIZE(sum);
	PMC_EXPECT_EQ(t, "ten", "calls:cold_ns::parse", 10);
}

PMC_TEST(cold, refused_demangled, pmc::options().events("calls:cold_ns::parse.cold"))
{
	PMC_REGION(t, "none") {
	}
}

PMC_TEST(cold, refused_mangled, pmc::options().events("calls:_ZN7cold_ns5parseEPKc.cold"))
{
	PMC_REGION(t, "none") {
	}
}
