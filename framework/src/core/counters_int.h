/* SPDX-License-Identifier: MIT */
/* The counter set's layout, shared by the files of the counting core. */
#ifndef PMCHECK_COUNTERS_INT_H
#define PMCHECK_COUNTERS_INT_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <sys/types.h>

#include <pmcheck/counters.h>
#include <pmcheck/machine.h>
#include <pmcheck/sampling.h>
#include <pmcheck/userpage.h>

#define PMC__READ_FORMAT                                                       \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

/* kinds.c: refuse a set with an event whose kind opens but failed its check
 * on known work (PMC_E_NOT_COUNTING, the check's words in *err). */
int pmc__kinds_vouch(const struct pmc_event_spec *specs, size_t n, struct pmc_error *err);

struct pmc__event {
	struct pmc_event_spec spec;
	int fd;
	int group;
	struct perf_event_mmap_page *page;
	unsigned shift; /* 64 - the page's pmc_width, for the user-space read */
	uint64_t id; /* PERF_EVENT_IOC_ID, for PMC_OPEN_PER_THREAD records */
};

/* Data pages of the per-thread ring: a thread's exit writes one record per
 * event of its groups, 40 + 16 x (events of the group) bytes, so 64 KiB
 * holds a few hundred threads between two drains. */
#define PMC__THREAD_RING_PAGES 16

struct pmc__group {
	int leader_fd;
	size_t nmembers;
	size_t member[PMC_MAX_EVENTS]; /* event indices, in kernel group order */
	int user_read;                 /* every member readable from its page */
	int hw;                        /* holds PMU counter events */
};

/* Most core PMUs a hybrid CPU has that pmcheck spreads over. */
#define PMC__MAX_CORE_PMUS 8

struct pmc_counters {
	pid_t pid;       /* the counted task: 0 the calling thread (pmc_counters_open_task) */
	size_t n, ngroups; /* kernel events (parts), groups */
	/* Events as the caller gave them: nuser of them; owner[k] is the one
	 * kernel event k counts for.  Without spreading n == nuser and the
	 * mapping is the identity. */
	size_t nuser;
	unsigned char owner[PMC_MAX_EVENTS];
	unsigned char first[PMC_MAX_EVENTS]; /* first kernel event of each */
	int spread;                          /* some event has several parts */
	size_t ncore;                        /* core PMUs, read once at open */
	struct pmc_core_pmu core[PMC__MAX_CORE_PMUS];
	struct pmc_event_spec *uspec;        /* the caller's specs, when spread */
	struct pmc_reading raw;              /* kernel events, when spread */
	enum pmc_read_path path;
	/* sim backend: callgrind column mask per event, open time */
	unsigned sim_mask[PMC_MAX_EVENTS];
	uint64_t sim_t0;
	unsigned sim_flags; /* PMC_OPEN_INHERIT: threads that ended count too */
	size_t page_size;
	struct pmc__event ev[PMC_MAX_EVENTS];
	struct pmc__group g[PMC_MAX_EVENTS];
	/* One group, every member read from user space: region.h's inline
	 * read (pmc_counters_fast); fast.n is 0 otherwise. */
	struct pmc_fast fast;
	/* read(2) buffer: nr, time_enabled, time_running, {value, id}[] */
	uint64_t rbuf[3 + 2 * PMC_MAX_EVENTS];
	/* PMC_OPEN_PER_THREAD: a dummy event whose ring receives the exiting
	 * threads' PERF_RECORD_READ (an inherited per-task event cannot be
	 * mapped itself: EINVAL, so its output is redirected here). */
	int thread_fd;
	struct pmc_ring *thread_ring;
};

/* counters.c: open a set as asked, without the checks of the public open
 * (open.c); the kinds' checks open their own sets with it. */
int pmc__counters_open_set(struct pmc_counters **out, const struct pmc_event_spec *specs,
			   size_t n, unsigned flags, pid_t pid, struct pmc_error *err);

/* counters_read.c: one group with read(2) into *r. */
int pmc__read_group(struct pmc_counters *set, const struct pmc__group *g, struct pmc_reading *r);

/* counters.c: the attr of spec s, counting (group leader or member). */
void pmc__fill_attr(struct perf_event_attr *attr, const struct pmc_event_spec *s, int leader,
		    unsigned flags);

/* open_error.c: the message for perf_event_open's error rc on spec s (set:
 * the events opened before it, or NULL). */
int pmc__open_error(int rc, const struct pmc_counters *set, const struct pmc_event_spec *s,
		    struct pmc_error *err);

/* threads.c */
int pmc__open_thread_ring(struct pmc_counters *set, struct pmc_error *err);

#endif
