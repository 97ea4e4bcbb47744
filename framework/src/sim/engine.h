/* SPDX-License-Identifier: MIT */
/*
 * The sim engines' interface: what sim.c (and through it the counting core)
 * asks of whichever engine counts this process.  Two engines sit beneath
 * it: pmcheck's own valgrind tool (engine_tool.c: inline counters read by
 * client request) and callgrind (engine_callgrind.c: dumps).  Neither calls
 * back up into sim.c.
 */
#ifndef PMCHECK_SIM_ENGINE_H
#define PMCHECK_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "util/util_int.h"

struct pmc_event_spec;
struct pmc_reading;

struct pmc__sim_engine {
	const char *name; /* "pmcheck" or "callgrind", as results name it */
	/* Can this run count mask's columns (0: the first set's start)?
	 * 0, PMC_E_UNSUPPORTED naming the event, or PMC_E_SIM. */
	int (*check)(unsigned mask, const char *name, struct pmc_error *err);
	/* Count calls to s's function from now on; *slot names it in
	 * read's masks (PMC_SIM_CALLS_MASK | slot). */
	int (*watch)(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err);
	/* The running totals of n events (column masks, or calls slots);
	 * t0 is the set's open time for the enabled and running times;
	 * flags: PMC_OPEN_INHERIT when the threads that ended count too
	 * (callgrind always counts every thread). */
	int (*read)(const unsigned *masks, size_t n, uint64_t t0, unsigned flags,
		    struct pmc_reading *r, struct pmc_error *err);
	/* Nothing more will be read in this process. */
	void (*pause)(void);
	/* Child processes that ended: those inherited readings add (*ended),
	 * and those that exec'd a program no one counts (*execed).  NULL, or
	 * -ENOTSUP: this engine adds no child. */
	int (*children)(uint64_t *ended, uint64_t *execed);
};

extern const struct pmc__sim_engine pmc__sim_callgrind;
extern const struct pmc__sim_engine pmc__sim_tool;

/* Nonzero when this process runs under pmcheck's valgrind tool. */
int pmc__sim_tool_present(void);

static inline uint64_t pmc__sim_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
