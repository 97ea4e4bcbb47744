/* SPDX-License-Identifier: MIT */
/*
 * Counter sets: a list of event specs opened as one or more kernel groups for
 * the calling thread, read together, cheaply, from user space when possible.
 *
 * Lifecycle: pmc_counters_open() -> pmc_counters_enable() -> any number of
 * pmc_counters_read() (or regions, see region.h) -> pmc_counters_close().
 */
#ifndef PMCHECK_COUNTERS_H
#define PMCHECK_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>
#include <pmcheck/event.h>
#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most events one set holds; more is PMC_E_TOO_MANY. */
#define PMC_MAX_EVENTS 32

struct pmc_counters; /* opaque */

/* How a set's values reach user space. */
enum pmc_read_path {
	PMC_PATH_READ = 1,  /* read(2) of each group leader */
	PMC_PATH_USER = 2,  /* user page + rdpmc / mrs, read() when not scheduled */
	PMC_PATH_SIM = 3,   /* callgrind dumps (PMC_OPEN_SIM) */
};

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
};

/* One event's counter at one instant.  Times are nanoseconds. */
struct pmc_count {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
};

/* All events of a set at one instant, in the order the specs were given. */
struct pmc_reading {
	size_t n;
	struct pmc_count c[PMC_MAX_EVENTS];
};

/* Quality of one event's delta between two readings. */
enum pmc_delta_flags {
	/* running < enabled: the kernel time-shared the counter; the value is
	 * a partial count.  Never scaled silently. */
	PMC_DELTA_MULTIPLEXED = 1u << 0,
	/* running == 0 while enabled > 0: the event was never on a counter. */
	PMC_DELTA_NOT_COUNTED = 1u << 1,
	/* value went backwards (should not happen; reported, not hidden). */
	PMC_DELTA_NEGATIVE = 1u << 2,
	/* Other threads of the process ran during the region while the set
	 * counted the calling thread only: their share is missing.  Set by the
	 * harness (see harness.h, .inherit), never by pmc_measurement_from(). */
	PMC_DELTA_OTHER_THREADS = 1u << 3,
};

/* Difference of two readings for one event. */
struct pmc_delta {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
	unsigned flags; /* enum pmc_delta_flags */
};

/* A measured region: per-event deltas, in spec order. */
struct pmc_measurement {
	size_t n;
	struct pmc_delta d[PMC_MAX_EVENTS];
};

/*
 * Open `n` specs as counters of the calling thread (pid 0, any CPU).  Events
 * are packed greedily into as few groups as the PMU schedules: each group has
 * a disabled leader and enabled members, read format GROUP | ID |
 * TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING.  An event that the kernel refuses
 * as a group member, or that a group cannot run even when alone on the PMU
 * (checked here, not at first read), starts a new group.  Each event's user
 * page is mapped and pre-touched.  The set starts disabled.
 *
 * On success *out owns every descriptor and mapping; free with
 * pmc_counters_close().  On failure nothing is left open and *err names the
 * event and the cause (PMC_E_NO_HW_PMU, PMC_E_PRIVILEGE, PMC_E_NO_SLOTS,
 * PMC_E_UNSUPPORTED, PMC_E_UNSCHEDULABLE, -EMFILE, ...).
 */
PMC_API int pmc_counters_open(struct pmc_counters **out,
			      const struct pmc_event_spec *specs, size_t n,
			      unsigned flags, struct pmc_error *err);

/* Close all descriptors and unmap all pages.  NULL is a no-op. */
PMC_API void pmc_counters_close(struct pmc_counters *set);

/* Start, stop or zero all groups (leaders, with PERF_IOC_FLAG_GROUP). */
PMC_API int pmc_counters_enable(struct pmc_counters *set);
PMC_API int pmc_counters_disable(struct pmc_counters *set);
PMC_API int pmc_counters_reset(struct pmc_counters *set);

/*
 * Read every event into *r (r->n is set to the number of events).  Uses the
 * user-space path where the set has one, read(2) otherwise; a group any of
 * whose events is not on a counter at this instant is read with read(2).
 * Values are raw counts, never scaled.  Safe to call from the measured thread
 * only (self-monitoring).
 */
PMC_API int pmc_counters_read(struct pmc_counters *set, struct pmc_reading *r);

/* Number of events and of kernel groups in the set. */
PMC_API size_t pmc_counters_count(const struct pmc_counters *set);
PMC_API size_t pmc_counters_groups(const struct pmc_counters *set);

/* Group index (0-based) of event i, or -1 when i is out of range. */
PMC_API int pmc_counters_group_of(const struct pmc_counters *set, size_t i);

/* The spec event i was opened from (NULL when out of range). */
PMC_API const struct pmc_event_spec *
pmc_counters_spec(const struct pmc_counters *set, size_t i);

/* Kernel descriptor of event i (for ioctls the library does not wrap), -1 if
 * out of range.  The set keeps ownership. */
PMC_API int pmc_counters_fd(const struct pmc_counters *set, size_t i);

/* The read path in use for the set. */
PMC_API enum pmc_read_path pmc_counters_path(const struct pmc_counters *set);

/*
 * Write a one-line description of the grouping, e.g.
 * "{instructions,cycles} {msr/tsc/}", into buf (always terminated).
 * Returns the length the full text needs, like snprintf.
 */
PMC_API int pmc_counters_describe(const struct pmc_counters *set, char *buf,
				  size_t size);

/*
 * Difference end - start into *m and flag multiplexed / never-counted events.
 * Both readings must come from the same set.
 */
PMC_API void pmc_measurement_from(struct pmc_measurement *m,
				  const struct pmc_reading *start,
				  const struct pmc_reading *end);

/*
 * Measure `reps` empty regions (begin immediately followed by end) and store
 * in *overhead, per event, the smallest delta seen: the counts the
 * measurement machinery itself adds.  The set must be enabled.  reps >= 1.
 */
PMC_API int pmc_counters_overhead(struct pmc_counters *set, unsigned reps,
				  struct pmc_measurement *overhead);

/*
 * Subtract an overhead measurement from *m, per event, clamping at zero
 * (a count below the overhead means the region did nothing measurable).
 */
PMC_API void pmc_measurement_subtract(struct pmc_measurement *m,
				      const struct pmc_measurement *overhead);

#ifdef __cplusplus
}
#endif

#endif
