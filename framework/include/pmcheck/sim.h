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
#include <pmcheck/export.h>
#include <pmcheck/spec.h>

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
 * Which engine the sim backend's runs (pmc_sim_exec*, pmc_sim_run_events) use:
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
 * function's self costs too, so that a region's functions are kept
 * under either engine (callgrind always has them; the harness keeps them
 * for a failure's attribution).  It costs the tool one more addition
 * wherever it adds to a counter.  A build of the tool too old for it
 * counts without, and the harness says why. */
#define PMC_SIM_FUNCTIONS (1u << 28)

/*
 * pmc_sim_exec, counting events over the whole run: values[i] is event
 * i's count in every process of the run (the program and the children it
 * forks), each counted from its start to its exit (its columns summed;
 * for calls:FUNC, the calls callgrind counted to the function;
 * `pmcheck stat --backend=sim`).  Returns the exit status as pmc_sim_exec
 * does, or a negative code (no valgrind, or no totals: the program was
 * killed or exec'd).  Events pmc_sim_columns refuses count 0 here: check
 * first.
 */
PMC_API int pmc_sim_run_events(char *const argv[], int verbose,
			       const struct pmc_event_spec *specs, size_t n, uint64_t *values,
			       struct pmc_error *err);

#ifdef __cplusplus
}
#endif

#endif
