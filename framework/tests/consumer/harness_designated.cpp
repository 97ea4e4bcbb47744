// SPDX-License-Identifier: MIT
// PMC_TEST's C form, designated initializers, from C++20 on (in declaration
// order; `requires` is spelled `require` in C++).
#include <pmcheck/harness.h>

PMC_TEST(cxx20, designated, .events = "page-faults", .reps = 3, .warmup = 1, .require = 0,
	 .stat = PMC_STAT_MIN, .labels = "cxx20")
{
	static char page[4096] __attribute__((aligned(4096)));

	PMC_REGION(t, "touch") {
		page[0] = 1;
	}
	PMC_DO_NOT_OPTIMIZE(page);
	PMC_EXPECT_LE(t, "touch", "page-faults", 1);
}
