/* SPDX-License-Identifier: MIT */
/*
 * What a counter set reads and how it is opened: the most events a set
 * holds, the flags of pmc_counters_open() (counters.h) and a reading.
 * Types and constants only, so that the sim backend, beneath the counting
 * core, fills readings without it; <pmcheck/counters.h> includes it.
 */
#ifndef PMCHECK_READING_H
#define PMCHECK_READING_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most events one set holds; more is PMC_E_TOO_MANY. */
#define PMC_MAX_EVENTS 32

/* Flags for pmc_counters_open(). */
enum pmc_open_flags {
	/* Never use the user-space read path, even where it works. */
	PMC_OPEN_NO_USER_READ = 1u << 0,
	/* Open every event in its own group (no atomic group reads). */
	PMC_OPEN_NO_GROUP = 1u << 1,
	/* Count with the sim backend (callgrind) instead of the kernel: the
	 * program must run under pmc_sim_exec() (see sim.h). */
	PMC_OPEN_SIM = 1u << 2,
	/* Count the calling thread and every thread and child process it
	 * creates after the open (attr.inherit).  Threads and processes that
	 * already exist are not counted.  Such a set is always read with
	 * read(2): a user-space read (rdpmc/mrs) sees only the calling
	 * thread's counter, while the kernel sums the children into the group
	 * read.  Under the sim backend every set counts the whole process. */
	PMC_OPEN_INHERIT = 1u << 3,
	/* PMC_OPEN_INHERIT, and keep each thread's own counts: when an
	 * inherited thread or child process exits, the kernel writes its
	 * counts (attr.inherit_stat, PERF_RECORD_READ) to a ring buffer the
	 * set owns; pmc_counters_threads() takes them out.  Costs one more
	 * descriptor and 1 + 16 pages of locked memory per set.  Perf backend
	 * only: callgrind does not count per thread for pmcheck. */
	PMC_OPEN_PER_THREAD = 1u << 4,
	/* The set enables itself when the counted task calls exec(2)
	 * (attr.enable_on_exec): with pmc_counters_open_task on a forked
	 * child that is about to exec a command, the counts start at the
	 * command's first instruction. */
	PMC_OPEN_ENABLE_ON_EXEC = 1u << 5,
};

/* One event's counter at one instant.  Times are nanoseconds. */
struct pmc_count {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
};

/* All events of a set at one instant, in the order the specs were given.
 * On a hybrid CPU (several core PMUs, see pmc_machine_core_pmus) a generic
 * hardware or cache event is opened once per core PMU: c[i] is then the sum
 * and part[0..nparts) holds every kernel event of the set, part_of[k] being
 * the event part k belongs to.  Elsewhere nparts is 0. */
struct pmc_reading {
	size_t n;
	struct pmc_count c[PMC_MAX_EVENTS];
	size_t nparts;
	unsigned char part_of[PMC_MAX_EVENTS];
	struct pmc_count part[PMC_MAX_EVENTS];
};

#ifdef __cplusplus
}
#endif

#endif
