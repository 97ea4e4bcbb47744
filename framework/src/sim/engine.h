/* SPDX-License-Identifier: MIT */
/*
 * The sim engines' interface: what the program's side of the sim backend
 * (lockstep.c) asks of whichever engine counts this process.  Two engines
 * sit beneath it: pmcheck's own valgrind tool (engine_tool.c: inline
 * counters) and callgrind (engine_callgrind.c: dumps).  Neither calls back
 * up into sim.c or lockstep.c.
 *
 * Once the first sim set is open the program makes the same requests
 * under either engine (lockstep.c), so that what the engine does of its
 * own runs either inside valgrind's handling of a request or natively
 * (collect): the caches and branch predictors both simulate then see the
 * same program, and count the same misses.
 */
#ifndef PMCHECK_SIM_ENGINE_H
#define PMCHECK_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "tool/pmcheck_tool.h"
#include "util/util_int.h"

struct pmc_event_spec;
struct pmc_reading;

/* The counters a reading gathers: the tool's fixed counters in
 * pmcheck_tool.h's order, then one per calls: watch. */
#define PMC__SIM_NCOUNTERS (PMC_TOOL_NFIXED + PMC_TOOL_MAX_WATCH)

/* The reading's counter of each callgrind column (enum pmc_sim_column). */
extern const int pmc__sim_counter[];

/* One reading, in the program's memory: the tool fills dump at callgrind's
 * DUMP_STATS_AT request; collect runs after it. */
struct pmc__sim_exchange {
	struct pmc_tool_dump dump;
	struct pmc_error *err; /* collect's words when it fails */
	int status;            /* collect's: 0, or a negative code */
};

struct pmc__sim_engine {
	const char *name; /* "pmcheck" or "callgrind", as results name it */
	/* This process's first sim set, before anything is simulated: the
	 * columns this run counts (*columns, a mask of enum pmc_sim_column),
	 * after the engine's own checks.  0, or an error. */
	int (*init)(unsigned *columns, struct pmc_error *err);
	/* The error for a set asking columns outside init's (missing). */
	int (*refuse)(unsigned missing, const char *name, struct pmc_error *err);
	/* Count calls to s's function from now on; *slot: its counter (at or
	 * after the fixed ones). */
	int (*watch)(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err);
	/* After the DUMP_STATS_AT request, on the host CPU (nothing here is
	 * simulated or counted; the heap must not be touched; glibc works
	 * for callgrind's, not for the tool's): the running totals into
	 * x->dump.counters.  0, or a negative code with x->err filled (-EIO
	 * without: the engine did not answer). */
	int (*collect)(struct pmc__sim_exchange *x);
	/* Child processes that ended: those inherited readings add (*ended),
	 * and those that exec'd a program no one counts (*execed).  NULL, or
	 * -ENOTSUP: this engine adds no child. */
	int (*children)(uint64_t *ended, uint64_t *execed);
};

extern const struct pmc__sim_engine pmc__sim_callgrind;
extern const struct pmc__sim_engine pmc__sim_tool;

/* This process's engine (lockstep.c): the tool when it answers, else
 * callgrind. */
const struct pmc__sim_engine *pmc__sim_engine_here(void);
/* callgrind's name for the next dump, which its collect sets. */
extern char pmc__sim_dump_tag[64];

/* The protocol of pmcheck's valgrind tool counting this process (2 or
 * 3), or 0 when this process runs under another tool. */
unsigned pmc__sim_tool_protocol(void);
/* A reading with the tool's own request (a build of protocol 2). */
int pmc__sim_tool_read(uint64_t *c, unsigned n, int ended_too, uint64_t *now);

static inline uint64_t pmc__sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
