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
#include <sys/types.h>

#include <pmcheck/error.h>
#include <pmcheck/event.h>
#include <pmcheck/export.h>
#include <pmcheck/reading.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmc_counters; /* opaque */

/* How a set's values reach user space. */
enum pmc_read_path {
	PMC_PATH_READ = 1,  /* read(2) of each group leader */
	PMC_PATH_USER = 2,  /* user page + rdpmc / mrs, read() when not scheduled */
	PMC_PATH_SIM = 3,   /* callgrind dumps (PMC_OPEN_SIM) */
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

/* A measured region: per-event deltas, in spec order, and on a hybrid CPU
 * the per-core-PMU parts (as in struct pmc_reading; pmc_counters_part_pmu()
 * names each part's PMU).  An event spread over core PMUs has the sum of
 * its parts as value; it is MULTIPLEXED when the parts' running times do
 * not cover its enabled time (beyond the few microseconds the parts' reads
 * lie apart), since each part runs only while the task is on its core type. */
struct pmc_measurement {
	size_t n;
	struct pmc_delta d[PMC_MAX_EVENTS];
	size_t nparts;
	unsigned char part_of[PMC_MAX_EVENTS];
	struct pmc_delta part[PMC_MAX_EVENTS];
};

/*
 * Open `n` specs as counters of the calling thread (pid 0, any CPU).  On a
 * hybrid CPU a generic hardware or cache event (no PMU named) is opened on
 * every core PMU with the PMU's type in config bits 32-63 (x86 from Linux
 * 5.13; arm64 from Linux 6.6, commit 5c816728651a; an older kernel refuses
 * it and the open says so) and read with read(2); name a PMU
 * ("cpu_core/instructions/") to count one core type only.  Events
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

/*
 * pmc_counters_open for another task: pid is a process (or thread) id of
 * the caller's own, such as a forked child (perf_event_paranoid permitting
 * others).  With PMC_OPEN_INHERIT its later threads and children count too.
 * Always read with read(2) (a user-space read sees the caller's counters);
 * no sim backend, no PMC_OPEN_PER_THREAD.  The counts of a task that has
 * exited stay readable until the set is closed.
 */
PMC_API int pmc_counters_open_task(struct pmc_counters **out, const struct pmc_event_spec *specs,
				   size_t n, unsigned flags, pid_t pid, struct pmc_error *err);

/* The counts of one inherited thread or child process, over its life. */
struct pmc_thread_count {
	int32_t pid, tid;
	size_t n;                        /* events of the set */
	uint64_t value[PMC_MAX_EVENTS];  /* in spec order */
	uint64_t enabled_ns, running_ns; /* of the first group */
};

/*
 * Take out the counts of the threads and child processes that exited since
 * the last call (or the open), for a set opened with PMC_OPEN_PER_THREAD:
 * one row per thread id, in exit order, into out[0..max).  Each row is the
 * thread's whole life, so a row is the thread's share of a region exactly
 * when the thread was created and ended inside it.  Threads still running
 * have no row yet; the calling thread never has one (its share is the
 * set's reading minus the rows).  *n is the number of rows; *lost counts
 * records the kernel dropped because the ring was full (then the rows are
 * incomplete; drain more often).  Returns 0, PMC_E_TOO_MANY when more than
 * `max` threads exited (the first `max` rows are stored, the rest are
 * dropped and counted in *lost), PMC_E_RING for a corrupt record, or
 * -EINVAL for a set opened without PMC_OPEN_PER_THREAD.
 */
PMC_API int pmc_counters_threads(struct pmc_counters *set, struct pmc_thread_count *out,
				 size_t max, size_t *n, uint64_t *lost);

/*
 * Wait, up to 200 ms, until this process has at most `n` threads, and
 * return how many it has.  pthread_join() returns when the thread has
 * cleared its id, before the kernel runs the thread's perf exit, which adds
 * its counts to the set and writes its row; a thread leaves /proc/self/task
 * after that.  Call it with the thread count from before the threads were
 * created, then pmc_counters_threads().  (waitpid() needs no such wait.)
 */
PMC_API int pmc_threads_wait(int n);

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

/* Name of the core PMU kernel event `part` of the set counts on ("cpu_atom"),
 * for sets whose readings have parts; NULL when out of range. */
PMC_API const char *pmc_counters_part_pmu(const struct pmc_counters *set, size_t part);

/* Group index (0-based) of event i, or -1 when i is out of range. */
PMC_API int pmc_counters_group_of(const struct pmc_counters *set, size_t i);

/* The spec event i was opened from (NULL when out of range). */
PMC_API const struct pmc_event_spec *
pmc_counters_spec(const struct pmc_counters *set, size_t i);

/* Kernel descriptor of event i (for ioctls the library does not wrap), -1 if
 * out of range.  The set keeps ownership. */
PMC_API int pmc_counters_fd(const struct pmc_counters *set, size_t i);

/* The user-space read region.h calls (see userpage.h), for a set that
 * is one group whose every event is readable from user space; NULL for any
 * other set, which region.h reads with pmc_counters_read(). */
struct pmc_fast;
PMC_API const struct pmc_fast *pmc_counters_fast(const struct pmc_counters *set);

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
