/* SPDX-License-Identifier: MIT */
/*
 * The sim layer's interface to the layers above it: what the counting core
 * and the event parser call (sim.c), and the environment the supervisor
 * (exec.c) hands to the program it runs under valgrind.  Not installed:
 * libpmcheck's own; the engines' interface beneath it is engine.h.
 */
#ifndef PMCHECK_SIM_API_H
#define PMCHECK_SIM_API_H

#include <stddef.h>
#include <stdint.h>

#include "util/util_int.h"

#define SIM_ENV_DIR "PMCHECK_SIM_DIR"
#define SIM_ENV_VERSION "PMCHECK_SIM_VALGRIND"
/* pmc_sim_exec_for's run, in this file of the dump directory:
 * "columns HEX" (the columns simulated) and "instrument deferred" (the
 * program starts instrumentation at its first sim set). */
#define SIM_RUN_FILE "run"

struct pmc_reading;

/* The run pmc_sim_exec_for started, as its run file says: the columns
 * simulated (all when not narrowed), whether instrumentation (callgrind)
 * or the models (pmcheck's tool) wait for the first sim set, and why
 * callgrind counts where the tool would have ("" when it would not).
 * Read once per process, without the heap. */
struct pmc__sim_run {
	unsigned columns;
	int deferred;
	char fallback[768];
	/* Why the tool counts no function costs though they were asked for
	 * (PMC_SIM_FUNCTIONS), or "". */
	char nofunctions[512];
};
const struct pmc__sim_run *pmc__sim_run(void);

/* Column index of a callgrind event name, or -1. */
int pmc__sim_column_of(const char *name, size_t len);
/* Can this process count with the sim backend the columns of `name`
 * (mask)?  0, PMC_E_NO_SIM, or PMC_E_UNSUPPORTED when this run does not
 * simulate them (pmc_sim_exec_for). */
int pmc__sim_check(unsigned mask, const char *name, struct pmc_error *err);
/* The set just opened: the engine starts what the run defers (callgrind's
 * instrumentation, the tool's models), so that both start at the same
 * point of the program. */
void pmc__sim_start(void);
/* One reading of n events whose column masks are masks[]; t0 is the set's
 * open time (CLOCK_MONOTONIC ns); flags: PMC_OPEN_INHERIT when the threads
 * that ended count too. */
int pmc__sim_read(const unsigned *masks, size_t n, uint64_t t0, unsigned flags,
		  struct pmc_reading *r, struct pmc_error *err);
/* The columns an events: line names, from q to e, into map (-1 for a
 * column pmcheck does not know): their number, or -1 past max. */
int pmc__sim_events_line(const char *q, const char *e, int *map, int max);
/* Count calls to the function of a calls: spec from now on, with this
 * process's engine (*slot names it in pmc__sim_read's masks). */
struct pmc_event_spec;
int pmc__sim_calls_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err);
/* calls.c, for the callgrind engine: the same in this process's dumps;
 * a watched function's total so far; add a dump's calls to every watched
 * function's total. */
int pmc__cg_calls_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err);
uint64_t pmc__cg_calls_total(unsigned slot);
int pmc__cg_calls_count(const char *file, const char *text, size_t len, struct pmc_error *err);
/* calls.c: the function of a calls: spec, as a dump's callees are matched
 * to it (its object and every symbol at its address); freed with free(). */
struct pmc__cg_target;
int pmc__cg_target_new(const struct pmc_event_spec *s, struct pmc__cg_target **t,
		       struct pmc_error *err);
/* Is the callee a dump names (name, object) that function? */
int pmc__cg_target_is(const struct pmc__cg_target *t, const char *name, const char *object);
/* Functions that ran in a dump's interval without being called (signal
 * handlers entered by delivery): how many, the first one's name; the
 * process's first dump names the stack instrumentation began on instead. */
int pmc__cg_uncalled(const char *text, size_t len, int first_dump, char *name, size_t size);

/* The columns of the models' misses: the cache's and the branch
 * predictor's (pmcheck's tool has them from protocol 3). */
#define PMC__SIM_CACHE_MISSES                                                           \
	((1u << PMC_SIM_I1MR) | (1u << PMC_SIM_D1MR) | (1u << PMC_SIM_D1MW) |            \
	 (1u << PMC_SIM_ILMR) | (1u << PMC_SIM_DLMR) | (1u << PMC_SIM_DLMW))
#define PMC__SIM_BRANCH_MISSES ((1u << PMC_SIM_BCM) | (1u << PMC_SIM_BIM))

/* choose.c: the directory of pmcheck's valgrind tool (NULL: not built),
 * and the tool option a fault injection asks for (NULL: none), both found
 * once, before a runner clears the environment. */
const char *pmc__sim_tool_dir(void);
const char *pmc__sim_tool_fault(void);
/* choose.c: the i-th name PMCHECK_FAULT_CHECKS takes for the tool
 * ("sim-tool", ...), NULL past the last. */
const char *pmc__sim_fault_name(size_t i);
/* What the environment asks of the tool beyond counting:
 * PMCHECK_SIM_CHECK_IR=1, that VEX check each superblock's IR (pmcheck's
 * own tests); PMCHECK_SIM_LINE_INFO=1, that valgrind read DWARF line
 * tables, so that a stack trace it prints names files and lines.
 * pmc_main.c says why both are off otherwise. */
#define PMC__SIM_ASK_CHECK_IR 1u
#define PMC__SIM_ASK_LINE_INFO 2u
unsigned pmc__sim_tool_asks(void);
/* The protocol of the tool built in dir (its protocol file), as a fault
 * injection may lower it. */
unsigned pmc__sim_tool_protocol_in(const char *dir);

/* Nonzero when running under valgrind (rdpmc would raise SIGILL there). */
int pmc__under_valgrind(void);

#endif
