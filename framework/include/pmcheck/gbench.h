/* SPDX-License-Identifier: MIT */
/*
 * The Google Benchmark adapter's side in the harness.  pmcheck_add_gbench()
 * compiles the adapter (gbench_adapter.cpp, installed beside the CMake
 * files) into an existing Google Benchmark program and links it with
 * --wrap for benchmark::State's timing functions; run with --pmcheck
 * first, the program is then a pmcheck suite whose cases are its
 * benchmark instances (docs/gbench.md).  Not for tests to call: the names
 * are pmc__, and this interface changes with the adapter, which is
 * compiled against the same installed version.
 */
#ifndef PMCHECK_GBENCH_H
#define PMCHECK_GBENCH_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/harness.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What the harness asks of the Google Benchmark library, through the
 * adapter compiled against the program's own benchmark.h. */
struct pmc__gbench_ops {
	/* Print every benchmark instance's name, one a line, to standard
	 * output (the library's --benchmark_list_tests), in a child process
	 * the harness forked; it exits after. */
	void (*list)(void);
	/* Run the instances whose names match `regex` (the library's filter
	 * syntax), each for `iterations` iterations unless its registration
	 * fixes its own count; the number of instances run.  *by_flag: the
	 * count was asked for by --benchmark_min_time=Nx, the registrations
	 * being out of the adapter's reach (the library may not take it). */
	size_t (*run)(const char *regex, uint64_t iterations, int *by_flag);
};

/* What the adapter was built with (pmcheck_add_gbench's options). */
struct pmc__gbench_config {
	const char *suite;      /* the cases' suite: the target's name by default */
	const char *events;     /* the cases' events */
	uint64_t iterations;    /* per instance, unless its registration fixes them */
	double timeout;         /* seconds per case; 0: the harness's default */
	const char *build;      /* compiler and build type (PMC__BUILD), for the sim key */
	const char *library;    /* "Google Benchmark" and how it is linked, for notes */
};

/* Is this process a pmcheck run (argv[1] "--pmcheck", or a case the runner
 * started)?  Read from /proc/self/cmdline, so static constructors may ask. */
PMC_API int pmc__gbench_mode(void);

/* The program's main in pmcheck mode: registers the instances as cases and
 * runs the harness with argv ("--pmcheck" left out); the exit status. */
PMC_API int pmc__gbench_main(const struct pmc__gbench_ops *ops,
			     const struct pmc__gbench_config *cfg, int argc, char **argv);

/* The timed loop of `state` began (after the library's StartKeepRunning):
 * the counted region opens, per iteration over `iterations`. */
PMC_API void pmc__gbench_start(const void *state, uint64_t iterations, int threads,
			       int thread_index);
/* It ended (before the library's FinishKeepRunning). */
PMC_API void pmc__gbench_finish(const void *state);
/* PauseTiming (before the library's) and ResumeTiming (after it). */
PMC_API void pmc__gbench_pause(const void *state);
PMC_API void pmc__gbench_resume(const void *state);
/* SkipWithError / SkipWithMessage: the benchmark's own reason. */
PMC_API void pmc__gbench_skipped(const void *state, const char *why, int error);

#ifdef __cplusplus
}
#endif

#endif
