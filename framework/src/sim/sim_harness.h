/* SPDX-License-Identifier: MIT */
/*
 * What libpmcheck's sim layer exports for its own harness
 * (libpmcheck_harness, a library of its own, so these carry PMC_API): a
 * region's dumps kept and read back per function, the calls to a watched
 * function, why the engine fell back or failed a reading, the children it
 * added, pausing, the valgrind version of a budget's key.  Not installed and
 * not the C API (docs/versions.md): nothing outside framework/src calls
 * them.  They keep their exported names and signatures, which 0.2.0's ABI
 * (framework/abi/) holds, until the soname next moves; a program linked
 * against them keeps working, a new one cannot declare them from the public
 * headers.  Those the harness does not call (pmc_sim_claim_dump,
 * pmc_sim_run, pmc_sim_dump_calls) are here for that ABI alone.
 */
#ifndef PMCHECK_SIM_HARNESS_H
#define PMCHECK_SIM_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>
#include <pmcheck/export.h>
#include <pmcheck/sim.h>
#include <pmcheck/spec.h>

/* One function's own costs (not its callees') in a dump, per column, and
 * how many times it was called in the dump's interval (callgrind counts
 * every call exactly; a function entered before the interval began and
 * still running has calls 0). */
struct pmc_sim_fn_cost {
	char *name;   /* the symbol, as callgrind names it */
	char *object; /* the object file ("" when the dump names none) */
	uint64_t cost[PMC_SIM_NCOLUMNS];
	uint64_t calls;
};

/*
 * Every function of a callgrind dump with its own costs (calls' inclusive
 * costs are the callees'), in the dump's order; *out is freed with
 * pmc_sim_functions_free().  0, or PMC_E_SYNTAX naming file:line.
 */
PMC_API int pmc_sim_dump_functions(const char *file, const char *text, size_t len,
				   struct pmc_sim_fn_cost **out, size_t *count,
				   struct pmc_error *err);
PMC_API void pmc_sim_functions_free(struct pmc_sim_fn_cost *f, size_t n);

/*
 * The callers, in a dump, of the function a calls:FUNC spec names: one row
 * per function of the dump that called it, with calls the number of its
 * calls to it (a jump to its first instruction counts, as callgrind counts
 * one) and cost all zero, in the dump's order; *out is freed with
 * pmc_sim_functions_free().  Under pmcheck's valgrind tool, its functions
 * file holds the calls to the functions the run watched (calls: events),
 * from protocol 4.  0, or PMC_E_SYNTAX naming file:line, or the spec's
 * error when its function cannot be found.
 */
PMC_API int pmc_sim_dump_callers(const char *file, const char *text, size_t len,
				 const struct pmc_event_spec *s, struct pmc_sim_fn_cost **out,
				 size_t *count, struct pmc_error *err);

/*
 * The dump file of this process's last sim reading: the costs, per
 * function, of the interval that reading closed (a region, when it was the
 * region's end).  The file becomes the caller's to parse and delete;
 * unclaimed, the next reading deletes it.  0, or -ENOENT when there is none.
 */
PMC_API int pmc_sim_claim_dump(char *path, size_t size);

/*
 * pmc_sim_claim_dump into paths[*kept] (rows of size bytes), counting it
 * in *kept, while *kept < max; under pmcheck's valgrind tool, a file of
 * the same format with the functions' self costs of that interval, which
 * the tool writes when its run counts them (PMC_SIM_FUNCTIONS), and
 * nothing when it does not.  The work is done on the host CPU, unseen by
 * either engine's caches and branch predictor, so that a program keeping
 * dumps between its regions executes the same instructions under both.
 */
PMC_API void pmc_sim_keep_dump(char *paths, size_t size, size_t *kept, size_t max);

/*
 * Whether pmc_sim_keep_dump will be called for the interval the next sim
 * reading begins (a region's first few executions): pmcheck's valgrind
 * tool gathers a region's functions only then, so that other readings cost
 * nothing for them.  Stays set until changed; set it outside the counted
 * window, before the reading that begins a region and after the one that
 * ends it.  callgrind dumps every interval and ignores it.
 */
PMC_API void pmc_sim_keep_next(int keep);

/*
 * Why callgrind counts this process where pmcheck's valgrind tool would
 * have (the tool not built, built for another valgrind, or a build too old
 * for the misses asked for), as a sentence; NULL when it was chosen, when
 * the tool counts, or outside the simulator.  The string is static.
 */
PMC_API const char *pmc_sim_fallback(void);

/*
 * Why this process's engine keeps no functions for pmc_sim_keep_dump
 * though its run asked for them (PMC_SIM_FUNCTIONS): pmcheck's valgrind
 * tool of a protocol before per-function costs; NULL when it keeps them,
 * when they were not asked for, or outside the simulator.  The string is
 * static.
 */
PMC_API const char *pmc_sim_functions_missing(void);

/*
 * Why this process's last sim reading failed, as a sentence (for example,
 * callgrind refusing a region a signal handler ran in), or NULL when none
 * has.  The string is static, overwritten by the next failure.
 */
PMC_API const char *pmc_sim_read_error(void);

/*
 * Child processes of this process (and theirs) that have ended, under the
 * sim backend: in *ended, those whose work inherited readings
 * (PMC_OPEN_INHERIT) include, as perf's inherited counters do; in *execed,
 * those that exec'd a program, which valgrind does not follow, so that its
 * work is counted nowhere.  0, or -ENOTSUP when this process's engine adds
 * no child (callgrind) or it is not under the sim backend.
 */
PMC_API int pmc_sim_children(uint64_t *ended, uint64_t *execed);

/*
 * The valgrind version of the sim backend ("valgrind-3.19.0"): under the
 * simulator, the one pmc_sim_exec() recorded; outside it, what the valgrind
 * on PATH says (asked once); "" when there is no valgrind.
 */
PMC_API const char *pmc_sim_valgrind_version(void);

/*
 * In a program pmc_sim_exec_for started: nothing more will be read, so
 * callgrind stops instrumenting (what runs after -- judging, reports --
 * runs at valgrind's plain speed).  A sim set opened later starts it
 * again.  Does nothing elsewhere.
 */
PMC_API void pmc_sim_pause(void);

/*
 * pmc_sim_exec, keeping the whole run's totals: the callgrind columns of
 * every process of the run (the program and the children it forks), each
 * counted from its start to its exit (`pmcheck stat --backend=sim`).
 * Returns the exit status as pmc_sim_exec does, or a negative code (no
 * valgrind, or no totals: the program was killed or exec'd).
 */
PMC_API int pmc_sim_run(char *const argv[], int verbose, uint64_t totals[PMC_SIM_NCOLUMNS],
			struct pmc_error *err);

/*
 * The calls callgrind counted, in one dump's text, to the function a
 * calls:FUNC spec names (by its object and every symbol at its address).
 * 0 with *calls, or a negative code with *err.
 */
PMC_API int pmc_sim_dump_calls(const char *file, const char *text, size_t len,
			       const struct pmc_event_spec *spec, uint64_t *calls,
			       struct pmc_error *err);

#endif
