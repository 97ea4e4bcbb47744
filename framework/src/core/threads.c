/* SPDX-License-Identifier: MIT */
/*
 * Counts per thread (PMC_OPEN_PER_THREAD): the dummy event whose ring
 * receives each exiting thread's PERF_RECORD_READ, and the rows read
 * from it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <time.h>

#include <valgrind/valgrind.h>

#include <pmcheck/counters.h>
#include <pmcheck/sampling.h>
#include <pmcheck/sim.h>

#include <pmcheck/machine.h>
#include <pmcheck/region.h>
#include <pmcheck/userpage.h>

#include "core_int.h"
#include "counters_int.h"
#include "hybrid_int.h"
#include "sim/sim_api.h"

static int open_dummy(int inherit)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.exclude_kernel = 1;
	attr.inherit = inherit ? 1 : 0;
	attr.inherit_stat = inherit ? 1 : 0;
	attr.read_format = PMC__READ_FORMAT;
	return (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void *noop_thread(void *arg)
{
	return arg;
}

/* Threads of this process (/proc/self/task entries). */
static int task_count(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

int pmc_threads_wait(int n)
{
	struct timespec tick = { 0, 100000 };
	int now = task_count();

	/* pthread_join returns when the thread clears its tid, before the
	 * kernel runs the thread's perf exit; the thread leaves /proc after. */
	for (int i = 0; i < 2000 && now > n; i++) {
		nanosleep(&tick, NULL);
		now = task_count();
	}
	return now;
}

/*
 * Does this kernel write an inherited thread's counts at its exit?  From
 * Linux 5.13 (ef54c1a476ae, "perf: Rework perf_event_exit_event()") until
 * c418d8b4d7a4 ("perf/core: Fix missing read event generation on task exit",
 * December 2025) the context was marked dead before the records were due,
 * and none was written.  Asked once per process with a thread that does
 * nothing: 1 yes, 0 no, negative errno when the probe itself failed.
 */
static int thread_records_state = 2;
static pthread_once_t thread_records_once = PTHREAD_ONCE_INIT;

static void probe_thread_records(void)
{
	struct pmc_ring *ring = NULL;
	uint64_t rec[64];
	int holder = open_dummy(0), ev = open_dummy(1), before = task_count(), rc;
	size_t len;
	pthread_t th;

	thread_records_state = -errno;
	if (holder < 0 || ev < 0 || pmc_ring_map(&ring, holder, 1, NULL) != 0 ||
	    ioctl(ev, PERF_EVENT_IOC_SET_OUTPUT, holder) < 0 ||
	    ioctl(ev, PERF_EVENT_IOC_ENABLE, 0) < 0)
		goto out;
	if ((rc = pthread_create(&th, NULL, noop_thread, NULL)) != 0) {
		thread_records_state = -rc;
		goto out;
	}
	pthread_join(th, NULL);
	pmc_threads_wait(before);
	thread_records_state = 0;
	while (pmc_ring_next(ring, rec, sizeof(rec), &len) == 1) {
		struct perf_event_header h;

		memcpy(&h, rec, sizeof(h));
		if (h.type == PERF_RECORD_READ)
			thread_records_state = 1;
	}
out:
	pmc_ring_unmap(ring);
	if (ev >= 0)
		close(ev);
	if (holder >= 0)
		close(holder);
}

/*
 * PMC_OPEN_PER_THREAD: a dummy software event of this thread owns a ring,
 * and every event's output goes there (PERF_EVENT_IOC_SET_OUTPUT: same task,
 * both cpu -1).  The ids tell which event a record's values belong to; an
 * inherited copy reports its parent's id.
 */
int pmc__open_thread_ring(struct pmc_counters *set, struct pmc_error *err)
{
	struct utsname u;
	int rc;

	pthread_once(&thread_records_once, probe_thread_records);
	if (thread_records_state == 0)
		return pmc__fail(err, PMC_E_UNSUPPORTED, "", -1,
				 "a per-thread breakdown needs a kernel that writes each inherited thread's counts when it exits, and this one (Linux %s) writes none: broken from Linux 5.13 (commit ef54c1a476ae) until commit c418d8b4d7a4 (December 2025, Linux 6.19 and the stable series that took it); the summed count (PMC_OPEN_INHERIT, .inherit) still works",
				 uname(&u) == 0 ? u.release : "?");
	if (thread_records_state < 0)
		return pmc__fail(err, thread_records_state, "", -1,
				 "per-thread breakdown: cannot test whether this kernel reports thread counts: %s",
				 strerror(-thread_records_state));
	set->thread_fd = open_dummy(0);
	if (set->thread_fd < 0)
		return pmc__fail(err, -errno, "", -1,
				 "per-thread breakdown: cannot open the dummy event that carries the threads' counts: %s",
				 strerror(errno));
	rc = pmc_ring_map(&set->thread_ring, set->thread_fd, PMC__THREAD_RING_PAGES, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < set->n; i++) {
		struct pmc__event *e = &set->ev[i];

		if (ioctl(e->fd, PERF_EVENT_IOC_SET_OUTPUT, set->thread_fd) < 0 ||
		    ioctl(e->fd, PERF_EVENT_IOC_ID, &e->id) < 0)
			return pmc__fail(err, -errno, e->spec.name, -1,
					 "per-thread breakdown: cannot route \"%s\"'s thread records to the ring: %s",
					 e->spec.name, strerror(errno));
	}
	return 0;
}

static struct pmc_thread_count *thread_row(struct pmc_counters *set,
					   struct pmc_thread_count *out, size_t *n,
					   size_t max, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < *n; i++)
		if (out[i].tid == tid && out[i].pid == pid)
			return &out[i];
	if (*n == max)
		return NULL;
	memset(&out[*n], 0, sizeof(out[*n]));
	out[*n].pid = pid;
	out[*n].tid = tid;
	out[*n].n = set->n;
	return &out[(*n)++];
}

int pmc_counters_threads(struct pmc_counters *set, struct pmc_thread_count *out,
			 size_t max, size_t *n, uint64_t *lost)
{
	/* header, pid, tid, nr, enabled, running, {value, id}[], trailer */
	uint64_t rec[8 + 2 * PMC_MAX_EVENTS];
	size_t len;
	int rc, result = 0;

	if (n)
		*n = 0;
	if (lost)
		*lost = 0;
	if (!set || !set->thread_ring || !n || !lost || (!out && max))
		return -EINVAL;
	while ((rc = pmc_ring_next(set->thread_ring, rec, sizeof(rec), &len)) == 1) {
		const struct perf_event_header *h = (const void *)rec;
		const uint32_t *ids = (const uint32_t *)(h + 1);
		const uint64_t *v = (const uint64_t *)(ids + 2);
		struct pmc_thread_count *row;
		uint64_t nr;

		if (h->type == PERF_RECORD_LOST) {
			*lost += len >= 24 ? rec[2] : 1;
			continue;
		}
		if (h->type != PERF_RECORD_READ)
			continue;
		if (len < sizeof(*h) + 8 + 24 || (nr = v[0]) > PMC_MAX_EVENTS ||
		    len < sizeof(*h) + 8 + 24 + 16 * nr)
			return PMC_E_RING;
		row = thread_row(set, out, n, max, (int32_t)ids[0], (int32_t)ids[1]);
		if (!row) {
			*lost += 1;
			result = PMC_E_TOO_MANY;
			continue;
		}
		for (uint64_t k = 0; k < nr; k++) {
			for (size_t i = 0; i < set->n; i++) {
				if (set->ev[i].id != v[4 + 2 * k])
					continue;
				row->value[i] = v[3 + 2 * k];
				if (set->ev[i].group == 0) {
					row->enabled_ns = v[1];
					row->running_ns = v[2];
				}
			}
		}
	}
	return rc < 0 ? rc : result;
}
