// SPDX-License-Identifier: MIT
//
// C++ exceptions under the sim gate: a function that throws, called from
// a few frames down, each frame holding an object whose destructor the
// unwinder must run, and a catch at the top.  The calls are fixed by the
// code (one throw per call, one destructor per frame per throw), so calls:
// is exact; the unwinder's instructions, loads, stores and branches are
// libgcc's and libstdc++'s business and are budgets recorded by
// --calibrate.
#include <pmcheck/harness.h>

#include <stdexcept>

namespace realcode {

constexpr unsigned throws = 64;
constexpr unsigned depth = 4;

volatile unsigned destroyed;

// A frame's object: the unwinder runs its destructor on the way out.
struct guard {
	unsigned level;
	__attribute__((noinline)) ~guard();
};

guard::~guard()
{
	destroyed = destroyed + level;
}

__attribute__((noinline)) void thrower(unsigned i);
__attribute__((noinline)) void thrower(unsigned i)
{
	if (i < throws)
		throw std::runtime_error(i % 2 ? "odd" : "even");
}

__attribute__((noinline)) void nest(unsigned level, unsigned i);
__attribute__((noinline)) void nest(unsigned level, unsigned i)
{
	guard g{ level };

	if (level == 0)
		thrower(i);
	else
		nest(level - 1, i);
	destroyed = destroyed + 1000; // reached only if thrower returned
}

} // namespace realcode

// By mangled name: g++ splits thrower into the function and a .cold part
// that holds the throw, and calls: refuses a C++ name that matches both;
// the destructor is named by its complete-object symbol (D1), which g++
// and clang++ make an alias of the base-object one (D2).
#define THROWER "_ZN8realcode7throwerEj"
#define GUARD_DTOR "_ZN8realcode5guardD1Ev"

PMC_TEST(realcode_cxx, throw_catch,
	 pmc::options()
		 .events("instructions:u,L1-dcache-loads,L1-dcache-stores,branches,"
			 "calls:" THROWER ",calls:" GUARD_DTOR ",calls:__cxa_throw")
		 .reps(3)
		 .backends(PMC_BACKEND_SIM))
{
	unsigned caught = 0, odd = 0;

	realcode::destroyed = 0;
	PMC_REGION(t, "throw") {
		for (unsigned i = 0; i < realcode::throws; i++) {
			try {
				realcode::nest(realcode::depth, i);
			} catch (const std::runtime_error &e) {
				caught++;
				odd += e.what()[0] == 'o';
			}
		}
	}
	PMC_CHECK_EQ(t, caught, realcode::throws);
	PMC_CHECK_EQ(t, odd, realcode::throws / 2);
	// Levels 0..depth each destroyed once per throw.
	PMC_CHECK_EQ(t, realcode::destroyed,
		     realcode::throws * (realcode::depth * (realcode::depth + 1) / 2));
	PMC_EXPECT_EQ(t, "throw", "calls:" THROWER, realcode::throws);
	PMC_EXPECT_EQ(t, "throw", "calls:" GUARD_DTOR, realcode::throws * (realcode::depth + 1));
	PMC_EXPECT_EQ(t, "throw", "calls:__cxa_throw", realcode::throws);
	PMC_EXPECT_BUDGET(t, "throw", "instructions:u");
	PMC_EXPECT_BUDGET(t, "throw", "L1-dcache-loads");
	PMC_EXPECT_BUDGET(t, "throw", "L1-dcache-stores");
	PMC_EXPECT_BUDGET(t, "throw", "branches");
}
