/* SPDX-License-Identifier: MIT */
/*
 * Cases whose calls: events cannot be resolved when the suite lists them,
 * for test_discover.py: every one must still be listed and registered.
 * One counts a library it dlopen()s itself, after its counters opened; one
 * names a function that exists nowhere and must end in ERROR with the
 * reason.  Not registered case by case (one case fails by design).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/harness.h>
#include <pmcheck/pmcheck.h>

#define LIB "libpmcheck_vanish_lib.so"

/*
 * The library's path beside this program: by its bare name dlopen would
 * search the RUNPATH of its caller, and under AddressSanitizer the caller
 * is libasan's interceptor, whose RUNPATH is not this program's.
 */
static const char *beside_me(const char *name)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n <= 0)
		return name;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash || (size_t)(slash - path) + 1 + strlen(name) >= sizeof(path))
		return name;
	strcpy(slash + 1, name);
	return path;
}

PMC_TEST(vanish, dlopen_later, .events = "calls:pmc_vanish_lib_fn@" LIB, .reps = 3)
{
	static int first = 1;
	int (*fn)(int);
	void *h;
	int acc = 0;

	/* The counters are open by now; the library is not loaded yet. */
	if (first) {
		PMC_CHECK(t, dlopen(LIB, RTLD_LAZY | RTLD_NOLOAD) == NULL);
		first = 0;
	}
	h = dlopen(beside_me(LIB), RTLD_NOW);
	PMC_CHECK(t, h != NULL);
	*(void **)&fn = dlsym(h, "pmc_vanish_lib_fn");
	PMC_CHECK(t, fn != NULL);
	PMC_REGION(t, "ten") {
		for (int i = 0; i < 10; i++)
			acc = fn(acc);
	}
	PMC_DO_NOT_OPTIMIZE(acc);
	PMC_EXPECT_EQ(t, "ten", "calls:pmc_vanish_lib_fn@" LIB, 10);
}

PMC_TEST(vanish, no_such_function, .events = "calls:pmc_vanish_no_such_fn@" LIB)
{
	PMC_REGION(t, "none") {
	}
}
