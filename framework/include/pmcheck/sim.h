/* SPDX-License-Identifier: MIT */
/*
 * The sim backend: counts from valgrind's callgrind instead of the PMU.
 *
 * A program (a suite runner, or any program given to `pmcheck sim --`) is
 * re-executed under `valgrind --tool=callgrind` with a fixed cache geometry,
 * branch simulation, ASLR off and glibc's CPU-dependent choices pinned, so
 * the same binary gives the same instruction and branch counts on every
 * x86_64 host.  A counter set opened with PMC_OPEN_SIM reads the simulator:
 * each reading asks callgrind to dump its totals (a client request), parses
 * the dump, and zeroes the simulator's counters; the work between the dump
 * and the zeroing (the parse itself) is counted by nobody.
 *
 * Generic events map onto callgrind's events (the table is in
 * docs/backends.md, "The sim backend"); `sim:NAME[+NAME...]` names callgrind events directly
 * (sim:Bc, sim:Bcm+Bim).  An event without a simulated equivalent (cycles,
 * software, breakpoint and uprobe events, kernel-only counts) is refused
 * with PMC_E_UNSUPPORTED, never counted as zero.
 */
#ifndef PMCHECK_SIM_H
#define PMCHECK_SIM_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>
#include <pmcheck/event.h>
#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* callgrind's events with --cache-sim=yes --branch-sim=yes, in its order. */
enum pmc_sim_column {
	PMC_SIM_IR = 0, /* instructions executed */
	PMC_SIM_DR,     /* data reads */
	PMC_SIM_DW,     /* data writes */
	PMC_SIM_I1MR,   /* L1 instruction read misses */
	PMC_SIM_D1MR,   /* L1 data read misses */
	PMC_SIM_D1MW,   /* L1 data write misses */
	PMC_SIM_ILMR,   /* last-level instruction read misses */
	PMC_SIM_DLMR,   /* last-level data read misses */
	PMC_SIM_DLMW,   /* last-level data write misses */
	PMC_SIM_BC,     /* conditional branches executed */
	PMC_SIM_BCM,    /* conditional branches mispredicted */
	PMC_SIM_BI,     /* indirect branches executed */
	PMC_SIM_BIM,    /* indirect branches mispredicted */
	PMC_SIM_NCOLUMNS
};

/* callgrind's name of a column ("Ir", "Bcm", ...); NULL when out of range. */
PMC_API const char *pmc_sim_column_name(unsigned column);

/*
 * The simulated machine, fixed so that counts compare across hosts.  Cache
 * sizes in bytes, associativity, line size: --I1, --D1, --LL.
 */
#define PMC_SIM_I1 "32768,8,64"
#define PMC_SIM_D1 "32768,8,64"
#define PMC_SIM_LL "8388608,16,64"
/* The same, as it appears in profile keys and results. */
#define PMC_SIM_GEOMETRY "I1-32k-8w-D1-32k-8w-LL-8M-16w-64B"

/*
 * Which callgrind columns (a bit mask, 1u << enum pmc_sim_column) sum to the
 * event `spec` on the sim backend.  Returns 0, or PMC_E_UNSUPPORTED with
 * *err saying why the event has no simulated equivalent.
 */
PMC_API int pmc_sim_columns(const struct pmc_event_spec *spec, unsigned *mask,
			    struct pmc_error *err);

/* One callgrind dump file, as pmc_sim_dump_parse() reads it. */
struct pmc_sim_dump {
	/* Totals per known column; columns the file omits (callgrind drops
	 * trailing zero columns) are 0. */
	uint64_t totals[PMC_SIM_NCOLUMNS];
	/* Which known columns the "events:" line named. */
	unsigned present;
	/* The dump's trigger ("Client Request: NAME", "Program termination"). */
	char trigger[128];
	/* The file's "desc: I1 cache: ..." lines joined, for the record. */
	char caches[256];
};

/*
 * Parse the text of a callgrind dump (len bytes, need not be terminated).
 * Columns are found by name from the "events:" line; the figures come from
 * the "summary:" line, callgrind's running total for the interval (the
 * "totals:" line, the sum of the cost lines printed, misses some of the
 * interval's cost in some regions), or "totals:" in a dump without one.
 * Returns 0, or PMC_E_SYNTAX with *err naming `name` and the line.
 */
PMC_API int pmc_sim_dump_parse(const char *name, const char *text, size_t len,
			       struct pmc_sim_dump *out, struct pmc_error *err);

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
 * Non-zero when this process runs under the sim backend's valgrind as set
 * up by pmc_sim_exec() (so PMC_OPEN_SIM sets can read it).
 */
PMC_API int pmc_sim_active(void);

/*
 * The engine counting this process under the sim backend: "pmcheck"
 * (pmcheck's own valgrind tool: instructions, data reads and writes,
 * branches and calls:, counted inline, and cache and branch misses with
 * callgrind's models) or "callgrind" (the same counts, and the functions
 * for attribution).  NULL outside the simulator.  The string is static.
 */
PMC_API const char *pmc_sim_engine(void);

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
 * Which engine the sim backend's runs (pmc_sim_exec*, pmc_sim_run*) use:
 * "auto" (pmcheck's valgrind tool when it is built, matches the valgrind
 * on PATH and can count every event the run needs -- a build of protocol
 * 2 has no cache or branch models; callgrind otherwise),
 * "pmcheck" (the tool, or an error saying why it cannot be used) or
 * "callgrind".  NULL or never called: $PMCHECK_SIM_ENGINE, else "auto".
 * 0, or -EINVAL (err names the value and the choices).
 */
PMC_API int pmc_sim_engine_prefer(const char *name, struct pmc_error *err);

/*
 * The engine a run counting `columns` (pmc_sim_exec_for's mask; ~0u: the
 * whole run) would use: "pmcheck" or "callgrind", with why in `why` (the
 * tool's absence, a version mismatch, a tool too old for the misses asked).
 * NULL, with why, when the preference cannot be met.
 */
PMC_API const char *pmc_sim_engine_for(unsigned columns, char *why, size_t size);

/*
 * The valgrind version of the sim backend ("valgrind-3.19.0"): under the
 * simulator, the one pmc_sim_exec() recorded; outside it, what the valgrind
 * on PATH says (asked once); "" when there is no valgrind.
 */
PMC_API const char *pmc_sim_valgrind_version(void);

/*
 * The environment the sim backend pins, one NAME=VALUE per entry of a
 * NULL-terminated static array (GLIBC_TUNABLES, LD_BIND_NOW, ...).
 */
PMC_API const char *const *pmc_sim_pinned_env(void);

/* valgrind's options for every sim run (NULL-terminated), apart from the
 * dump and log files pmc_sim_exec() adds: with pmc_sim_pinned_env(), what
 * a bare callgrind run needs to simulate exactly what the sim backend does
 * (`pmcheck sim --print-command`). */
PMC_API const char *const *pmc_sim_valgrind_options(void);

/*
 * Run argv[0] (a path, or a name looked up on PATH) with argv under
 * valgrind --tool=callgrind with pmcheck's fixed flags (see src/sim/exec.c for each
 * flag's reason), wait for it and return its exit status (128 + signal if
 * killed).  The dump directory is private and removed afterwards.  Nothing
 * is printed: valgrind's own messages (other than its notes on the host's
 * caches) go to the log callback (pmc_log_set) at level 2, and, when
 * `verbose` is set, the valgrind command line at level 1.
 * Returns a negative code with *err filled when valgrind is not installed
 * (PMC_E_NO_SIM) or cannot be started.
 */
PMC_API int pmc_sim_exec(char *const argv[], int verbose, struct pmc_error *err);

/* pmc_sim_columns' mask for a calls:FUNC event: not a column, the calls
 * callgrind counted to the function (exact, as a uprobe counts entries). */
#define PMC_SIM_CALLS_MASK (1u << 31)

/* Columns that need callgrind's cache simulation (--cache-sim: loads,
 * stores and every miss) and branch simulation (--branch-sim). */
#define PMC_SIM_CACHE_COLUMNS                                                        \
	((1u << PMC_SIM_DR) | (1u << PMC_SIM_DW) | (1u << PMC_SIM_I1MR) | (1u << PMC_SIM_D1MR) | \
	 (1u << PMC_SIM_D1MW) | (1u << PMC_SIM_ILMR) | (1u << PMC_SIM_DLMR) | (1u << PMC_SIM_DLMW))
#define PMC_SIM_BRANCH_COLUMNS                                                       \
	((1u << PMC_SIM_BC) | (1u << PMC_SIM_BCM) | (1u << PMC_SIM_BI) | (1u << PMC_SIM_BIM))

/*
 * pmc_sim_exec for a program that counts only through PMC_OPEN_SIM sets
 * and only the columns in `columns` (a mask as pmc_sim_columns gives; call
 * counts need none): the cache and branch simulations run only when those
 * columns need them, and instrumentation starts when the program opens its
 * first sim set (code before it runs at valgrind's uninstrumented speed).
 * A set that asks a column this run does not simulate fails to open,
 * saying so.  Instructions, loads, stores, branches and calls count the
 * same whatever the mask (the simulations only add columns).
 */
PMC_API int pmc_sim_exec_for(char *const argv[], int verbose, unsigned columns,
			     struct pmc_error *err);
/* In pmc_sim_exec_for's columns: instrument from the start (a program
 * that measures from its first instruction, not from its first set). */
#define PMC_SIM_FROM_START (1u << 30)
/* In pmc_sim_exec_for's columns: valgrind's other thread scheduler
 * (--fair-sched=yes), so that threads interleave otherwise.  Calibration
 * alternates it between runs to find counts that depend on the schedule;
 * a single-threaded program counts the same under both. */
#define PMC_SIM_OTHER_SCHEDULE (1u << 29)
/* In pmc_sim_exec_for's columns: pmcheck's valgrind tool counts each
 * function's self costs too, so that pmc_sim_keep_dump keeps a region's
 * functions under either engine (callgrind always has them).  It costs
 * the tool one more addition wherever it adds to a counter.  A build of
 * the tool too old for it counts without, and pmc_sim_functions_missing
 * says why. */
#define PMC_SIM_FUNCTIONS (1u << 28)

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
 * pmc_sim_run for events: values[i] is event i's count over the whole run
 * (its columns summed; for calls:FUNC, the calls callgrind counted to the
 * function).  Events pmc_sim_columns refuses count 0 here: check first.
 */
PMC_API int pmc_sim_run_events(char *const argv[], int verbose,
			       const struct pmc_event_spec *specs, size_t n, uint64_t *values,
			       struct pmc_error *err);

/*
 * The calls callgrind counted, in one dump's text, to the function a
 * calls:FUNC spec names (by its object and every symbol at its address).
 * 0 with *calls, or a negative code with *err.
 */
PMC_API int pmc_sim_dump_calls(const char *file, const char *text, size_t len,
			       const struct pmc_event_spec *spec, uint64_t *calls,
			       struct pmc_error *err);

#ifdef __cplusplus
}
#endif

#endif
