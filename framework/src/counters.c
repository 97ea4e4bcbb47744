/* SPDX-License-Identifier: MIT */
/*
 * Counter sets on the perf backend: grouping, opening, user-page mapping and
 * the read paths.
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

#include "hybrid_int.h"
#include "pmcheck_int.h"

#define PMC__READ_FORMAT                                                       \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

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

int pmc__under_valgrind(void)
{
	return RUNNING_ON_VALGRIND ? 1 : 0;
}

/* ---- open ---------------------------------------------------------------- */

static long sys_perf_event_open(struct perf_event_attr *attr, int group_fd)
{
	return syscall(SYS_perf_event_open, attr, 0 /* this thread */, -1 /* any CPU */,
		       group_fd, PERF_FLAG_FD_CLOEXEC);
}

static void fill_attr(struct perf_event_attr *attr, const struct pmc_event_spec *s,
		      int leader, unsigned flags)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = s->type;
	attr->config = s->config;
	attr->config1 = s->config1;
	attr->config2 = s->config2;
	attr->read_format = PMC__READ_FORMAT;
	/* The leader holds the group off until pmc_counters_enable(); the
	 * members are enabled so they follow the leader. */
	attr->disabled = leader ? 1 : 0;
	attr->exclude_user = s->exclude_user;
	attr->exclude_kernel = s->exclude_kernel;
	attr->exclude_hv = s->exclude_hv;
	attr->precise_ip = s->precise_ip;
	/* Threads and processes created after the open inherit the counter;
	 * read(2) of the leader sums them in (perf_read_group). */
	attr->inherit = (flags & PMC_OPEN_INHERIT) ? 1 : 0;
	/* On each inherited copy's exit the kernel writes the copy's counts
	 * as PERF_RECORD_READ to the parent's ring (perf_event_exit_task). */
	attr->inherit_stat = (flags & PMC_OPEN_PER_THREAD) ? 1 : 0;
	if (s->kind == PMC_KIND_BREAKPOINT) {
		attr->bp_type = s->bp_type;
		attr->bp_addr = s->bp_addr;
		attr->bp_len = s->bp_len;
	} else if (s->kind == PMC_KIND_UPROBE) {
		/* uprobe_path and probe_offset share config1/config2. */
		attr->uprobe_path = (uint64_t)(uintptr_t)s->path;
		attr->probe_offset = s->probe_offset;
	}
}

#if defined(__aarch64__)
/* arm64: user-space counter access needs the sysctl and config1 bit 1 (bit 0
 * asks for a 64-bit counter, refused where the PMU has none). */
static int arm64_user_access(void)
{
	uint64_t v = 0;

	return pmc__read_u64("/proc/sys/kernel/perf_user_access", &v) == 0 && v == 1;
}
#endif

/* Open one event; on arm64 with user access, try 64-bit then 32-bit user
 * counters before a plain one.  Returns fd or -errno. */
static int open_event(const struct pmc_event_spec *s, int group_fd, unsigned flags)
{
	struct perf_event_attr attr;
	long fd;

	fill_attr(&attr, s, group_fd < 0, flags);
#if defined(__aarch64__)
	if (s->uses_hw_counter && !(flags & (PMC_OPEN_NO_USER_READ | PMC_OPEN_INHERIT)) &&
	    !pmc__under_valgrind() && arm64_user_access()) {
		static const uint64_t bits[] = { 0x3, 0x2 };

		for (size_t i = 0; i < 2; i++) {
			attr.config1 = s->config1 | bits[i];
			fd = sys_perf_event_open(&attr, group_fd);
			if (fd >= 0)
				return (int)fd;
			if (errno != EOPNOTSUPP && errno != EINVAL)
				return -errno;
		}
		attr.config1 = s->config1;
	}
#else
	(void)flags;
#endif
	fd = sys_perf_event_open(&attr, group_fd);
	return fd < 0 ? -errno : (int)fd;
}

static int read_paranoid(void)
{
	uint64_t v;

	return pmc__read_u64("/proc/sys/kernel/perf_event_paranoid", &v) == 0 ? (int)v : -99;
}

/* What turns the canonical name into its user-space-only form: a modifier
 * group gets a 'u', a name without one gets ":u" (mem:X/4:w has its access
 * segment, then the modifiers; sub:event likewise). */
static const char *user_suffix(const struct pmc_event_spec *s)
{
	size_t colons = 0;

	for (const char *p = s->name; *p; p++)
		colons += *p == ':';
	if (s->kind == PMC_KIND_PMU)
		return "u";
	if (s->kind == PMC_KIND_BREAKPOINT)
		return colons >= 3 ? "u" : ":u";
	if (s->kind == PMC_KIND_TRACEPOINT)
		return colons >= 2 ? "u" : ":u";
	return colons ? "u" : ":u";
}

static int translate_open_error(int rc, const struct pmc_counters *set,
				const struct pmc_event_spec *s, struct pmc_error *err)
{
	size_t bps = 0;

	/* Breakpoints opened before this one (s is the last event tried). */
	for (size_t i = 0; i < set->n; i++)
		bps += set->ev[i].spec.kind == PMC_KIND_BREAKPOINT && &set->ev[i].spec != s;
	switch (rc) {
	case -ENOENT:
	case -ENODEV:
		if ((s->kind == PMC_KIND_HARDWARE || s->kind == PMC_KIND_CACHE) &&
		    (s->config >> PERF_PMU_TYPE_SHIFT) != 0)
			return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
					 "cannot open \"%s\": this CPU has several core PMUs, so a generic event is opened on each with the PMU's type (%u) in config bits 32-63, and this kernel's %s PMU refuses that (%s; x86 takes it from Linux 5.13, arm64 from Linux 6.6); name one core PMU's own event (%s/event=.../) and pin the task to its CPUs",
					 s->name, (unsigned)(s->config >> PERF_PMU_TYPE_SHIFT), s->pmu,
					 strerror(-rc), s->pmu);
		if (s->uses_hw_counter && !s->pmu[0] && !pmc__has_hw_pmu()) {
			char pmus[256];

			pmc__list_pmus(pmus, sizeof(pmus));
			return pmc__fail(err, PMC_E_NO_HW_PMU, s->name, -1,
					 "cannot open \"%s\": no hardware PMU on this machine (%s; PMUs here: %s); run with --backend=sim or skip",
					 s->name, strerror(-rc), pmus);
		}
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot open \"%s\": this machine's %s PMU does not provide it (%s); check the event name for this CPU model",
				 s->name, s->pmu[0] ? s->pmu : "CPU", strerror(-rc));
	case -EACCES:
	case -EPERM: {
		int paranoid = read_paranoid();
		char user_only[PMC_EVENT_NAME_MAX + 64] = "";

		/* Level 3 (a Debian and Android patch) refuses every unprivileged
		 * event, user-only ones too: then ":u" is no remedy. */
		if (paranoid >= 3)
			return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
					 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d forbids all unprivileged perf_event use on this kernel); run as root, grant CAP_PERFMON, or lower perf_event_paranoid to 2 or less",
					 s->name, paranoid);
		/* The uprobe PMU takes root or CAP_PERFMON whatever the sysctl. */
		if (s->kind == PMC_KIND_UPROBE)
			return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
					 "cannot open \"%s\": the uprobe PMU needs root or CAP_PERFMON (perf_event_paranoid does not change that); run as root, or grant CAP_PERFMON, or count the function with an execute breakpoint (mem:SYMBOL:x:u)",
					 s->name);
		/* Uncore-style PMUs (msr, power, cstate) count machine state and
		 * refuse :u; everything else can leave the kernel out. */
		if (!s->exclude_kernel && !s->exclude_user &&
		    (s->kind != PMC_KIND_PMU || s->uses_hw_counter))
			snprintf(user_only, sizeof(user_only), ", or count user space only with :u (%s%s)",
				 s->name, user_suffix(s));
		return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
				 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d%s); run as root, grant CAP_PERFMON, lower perf_event_paranoid%s",
				 s->name, paranoid,
				 paranoid >= 2 ? ": unprivileged users may not count the kernel" : "",
				 user_only);
	}
	case -ENOSPC:
		if (s->kind == PMC_KIND_BREAKPOINT)
			return pmc__fail(err, PMC_E_NO_SLOTS, s->name, -1,
					 "cannot open \"%s\": no free breakpoint slot (this set already holds %zu breakpoint%s; the CPU's debug registers are shared with debuggers and other sets of this thread); use fewer breakpoints per set",
					 s->name, bps, bps == 1 ? "" : "s");
		return pmc__fail(err, PMC_E_UNSCHEDULABLE, s->name, -1,
				 "cannot open \"%s\": the PMU has no free counter for it (%s); close other counter users or split the set",
				 s->name, strerror(-rc));
	case -EMFILE:
	case -ENFILE:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": out of file descriptors (%s); raise the limit (ulimit -n) or open fewer events",
				 s->name, strerror(-rc));
	case -EOPNOTSUPP:
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot open \"%s\": the PMU cannot apply these attributes (%s); drop :u/:k/:h or :p modifiers it cannot honour",
				 s->name, strerror(-rc));
	case -EINVAL:
#if defined(__x86_64__) || defined(__i386__)
		if (s->kind == PMC_KIND_BREAKPOINT && s->bp_type == HW_BREAKPOINT_R)
			return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
					 "cannot open \"%s\": x86 debug registers cannot watch reads alone; use :rw, which counts reads and writes",
					 s->name);
#endif
		return pmc__fail(err, -EINVAL, s->name, -1,
				 "cannot open \"%s\": the kernel rejected the attributes (type %u, config 0x%" PRIx64
				 ", config1 0x%" PRIx64 "): invalid for this PMU; check the event's fields against its sysfs format/",
				 s->name, s->type, s->config, s->config1);
	case -E2BIG:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": this kernel uses a different perf_event_attr size (E2BIG); rebuild pmcheck against this kernel's headers",
				 s->name);
	case -EBUSY:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": the PMU is held exclusively by another user (EBUSY)",
				 s->name);
	default:
		return pmc__fail(err, rc, s->name, -1, "cannot open \"%s\": %s", s->name,
				 strerror(-rc));
	}
}

static void close_event(struct pmc_counters *set, struct pmc__event *e)
{
	if (e->page) {
		munmap(e->page, set->page_size);
		e->page = NULL;
	}
	if (e->fd >= 0) {
		close(e->fd);
		e->fd = -1;
	}
}

/* Read one group with read(2) into *r.  The hot path for software events. */
static int read_group(struct pmc_counters *set, const struct pmc__group *g,
		      struct pmc_reading *r)
{
	size_t want = (3 + 2 * g->nmembers) * sizeof(uint64_t);
	ssize_t got = read(g->leader_fd, set->rbuf, want);

	if (got != (ssize_t)want)
		return got < 0 ? -errno : -EIO;
	for (size_t k = 0; k < g->nmembers; k++) {
		struct pmc_count *c = &r->c[g->member[k]];

		c->value = set->rbuf[3 + 2 * k];
		c->enabled_ns = set->rbuf[1];
		c->running_ns = set->rbuf[2];
	}
	return 0;
}

/*
 * Run the group alone for a moment: does the PMU ever put it on counters?
 * Judged on this run's share of time (before/after differences): the
 * group's times accumulate over every earlier check as it grew, so totals
 * would call a group that stopped fitting with its newest member "running".
 * A group is scheduled as a whole, so one pair of times says it for all.
 */
static int group_runs(struct pmc_counters *set, struct pmc__group *g)
{
	struct pmc_reading before, after;
	volatile unsigned sink = 0;
	uint64_t enabled, running;
	int rc;

	rc = read_group(set, g, &before);
	if (rc)
		return rc;
	if (ioctl(g->leader_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	for (unsigned i = 0; i < 20000; i++)
		sink += i;
	ioctl(g->leader_fd, PERF_EVENT_IOC_DISABLE, 0);
	rc = read_group(set, g, &after);
	ioctl(g->leader_fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP);
	if (rc)
		return rc;
	(void)sink;
	enabled = after.c[g->member[0]].enabled_ns - before.c[g->member[0]].enabled_ns;
	running = after.c[g->member[0]].running_ns - before.c[g->member[0]].running_ns;
	return !(enabled > 0 && running == 0);
}

/* Try to add event i to group g.  1 added, 0 refused. */
static int try_join(struct pmc_counters *set, size_t i, struct pmc__group *g,
		    unsigned flags)
{
	struct pmc__event *e = &set->ev[i];
	int fd = open_event(&e->spec, g->leader_fd, flags);

	if (fd < 0)
		return 0;
	e->fd = fd;
	g->member[g->nmembers++] = i;
	if (e->spec.uses_hw_counter && group_runs(set, g) != 1) {
		pmc__log(1, "pmcheck: \"%s\" does not fit the group of \"%s\"; new group",
			 e->spec.name, set->ev[g->member[0]].spec.name);
		g->nmembers--;
		close(fd);
		e->fd = -1;
		return 0;
	}
	g->hw |= e->spec.uses_hw_counter;
	return 1;
}

static int map_page(struct pmc_counters *set, struct pmc__event *e)
{
	void *p = mmap(NULL, set->page_size, PROT_READ, MAP_SHARED, e->fd, 0);

	if (p == MAP_FAILED) {
		pmc__log(1, "pmcheck: no user page for \"%s\" (%s); read(2) only",
			 e->spec.name, strerror(errno));
		return 0;
	}
	e->page = p;
	/* Pre-touch so the first region does not take the page fault. */
	(void)*(volatile uint32_t *)&e->page->lock;
	return 0;
}

/* Build the kernel event list: each caller's spec, spread over the core
 * PMUs where it is a generic hardware or cache event on a hybrid CPU. */
static int spread_specs(struct pmc_counters *set, const struct pmc_event_spec *specs,
			size_t n, unsigned flags, struct pmc_error *err)
{
	struct pmc_core_pmu *core = set->core;
	struct pmc_event_spec parts[PMC__MAX_CORE_PMUS];
	size_t ncore = 0, total = 0;

	if (!(flags & PMC_OPEN_SIM)) {
		ncore = pmc_machine_core_pmus(core, PMC__MAX_CORE_PMUS);
		ncore = ncore < PMC__MAX_CORE_PMUS ? ncore : PMC__MAX_CORE_PMUS;
	}
	set->ncore = ncore;
	for (size_t i = 0; i < n; i++) {
		size_t k = pmc__spread(&specs[i], core, ncore, parts);

		if (total + k > PMC_MAX_EVENTS)
			return pmc__fail(err, PMC_E_TOO_MANY, specs[i].name, -1,
					 "this CPU has %zu core PMUs and every generic hardware or cache event is opened on each: the %zu events need more than %d kernel events; split the list, or name one core PMU (%s/%s/)",
					 ncore, n, PMC_MAX_EVENTS, core[0].name, specs[i].name);
		set->first[i] = (unsigned char)total;
		set->spread |= k > 1;
		for (size_t j = 0; j < k; j++, total++) {
			set->ev[total].fd = -1;
			set->ev[total].spec = parts[j];
			set->owner[total] = (unsigned char)i;
		}
	}
	if (set->spread) {
		set->uspec = malloc(n * sizeof(*set->uspec));
		if (!set->uspec)
			return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
		memcpy(set->uspec, specs, n * sizeof(*set->uspec));
	}
	set->n = total;
	return 0;
}

/* On a hybrid CPU a user-space read is right only while the task stays on
 * the CPUs of the event's core PMU (arm64 enables it only then, and only
 * for an event opened with that PMU's type): is this thread's affinity
 * inside the cpus list of core PMU `pmu`? */
static int affinity_within(const struct pmc_counters *set, const char *pmu)
{
	cpu_set_t mine, theirs;

	if (set->ncore < 2)
		return 1;
	if (sched_getaffinity(0, sizeof(mine), &mine) != 0)
		return 0;
	for (size_t k = 0; k < set->ncore; k++) {
		if (strcmp(set->core[k].name, pmu) != 0)
			continue;
		if (pmc__parse_cpulist(set->core[k].cpus, &theirs) != 0)
			return 0;
		CPU_AND(&theirs, &theirs, &mine);
		return CPU_EQUAL(&theirs, &mine);
	}
	return 0;
}

/* A dummy event of this thread, pid 0, any CPU. */
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
static int open_thread_ring(struct pmc_counters *set, struct pmc_error *err)
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

int pmc_counters_open(struct pmc_counters **out, const struct pmc_event_spec *specs,
		      size_t n, unsigned flags, struct pmc_error *err)
{
	struct pmc_counters *set;
	int rc = 0;

	pmc_error_clear(err);
	if (flags & PMC_OPEN_PER_THREAD)
		flags |= PMC_OPEN_INHERIT;
	if (!out || (!specs && n))
		return pmc__fail(err, -EINVAL, "", -1, "pmc_counters_open: NULL argument");
	*out = NULL;
	if (n == 0)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_counters_open: empty event list");
	if (n > PMC_MAX_EVENTS)
		return pmc__fail(err, PMC_E_TOO_MANY, "", -1,
				 "%zu events requested; a set holds at most %d (split the list)",
				 n, PMC_MAX_EVENTS);
	set = calloc(1, sizeof(*set));
	if (!set)
		return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
	set->page_size = (size_t)sysconf(_SC_PAGESIZE);
	set->thread_fd = -1;
	set->nuser = n;
	rc = spread_specs(set, specs, n, flags, err);
	if (rc)
		goto fail;
	n = set->n;
	set->n = 0; /* grows as events open, so a failure closes what opened */
	if ((flags & PMC_OPEN_SIM) && (flags & PMC_OPEN_PER_THREAD)) {
		rc = pmc__fail(err, PMC_E_UNSUPPORTED, "", -1,
			       "a per-thread breakdown is not available on the sim backend: callgrind counts every thread of the process into one total; use the perf backend, or .inherit without the breakdown");
		goto fail;
	}
	if (flags & PMC_OPEN_SIM) {
		struct timespec ts;

		/* No descriptors: one group, read from the simulator. */
		for (size_t i = 0; i < n; i++) {
			rc = pmc_sim_columns(&specs[i], &set->sim_mask[i], err);
			if (rc)
				goto fail;
			set->ev[i].group = 0;
			set->g[0].member[i] = i;
		}
		rc = pmc__sim_check(err);
		if (rc)
			goto fail;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		set->sim_t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		set->n = n;
		set->ngroups = 1;
		set->g[0].leader_fd = -1;
		set->g[0].nmembers = n;
		set->path = PMC_PATH_SIM;
		*out = set;
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		struct pmc__event *e = &set->ev[i];
		int joined = 0;

		if (e->spec.kind == PMC_KIND_UPROBE && (flags & PMC_OPEN_INHERIT)) {
			const char *sym = strchr(e->spec.name, ':') ? strchr(e->spec.name, ':') + 1 : e->spec.name;

			rc = pmc__fail(err, PMC_E_UNSUPPORTED, e->spec.name, -1,
				       "cannot count \"%s\" with inherit: a uprobe counter loses counts once an inherited thread or process exits (measured on Linux 6.18: 4 threads x 50 calls plus 10 read 210, then 150, then 100; a child process's calls read 0); count the function with an execute breakpoint, which is inherited exactly: mem:%.*s:x",
				       e->spec.name, (int)strcspn(sym, "@"), sym);
			goto fail;
		}
		if (e->spec.kind == PMC_KIND_SIM) {
			rc = pmc__fail(err, PMC_E_UNSUPPORTED, e->spec.name, -1,
				       "cannot count \"%s\" on the perf backend: sim: events are callgrind's and exist only on the sim backend (--backend=sim)",
				       e->spec.name);
			goto fail;
		}
		set->n = i + 1;
		/* First fit: the earliest group that takes it. */
		for (size_t gi = 0; !(flags & PMC_OPEN_NO_GROUP) && gi < set->ngroups; gi++) {
			if (try_join(set, i, &set->g[gi], flags)) {
				e->group = (int)gi;
				joined = 1;
				break;
			}
		}
		if (!joined) {
			struct pmc__group *g = &set->g[set->ngroups];
			int fd = open_event(&e->spec, -1, flags);

			if (fd < 0) {
				rc = translate_open_error(fd, set, &e->spec, err);
				goto fail;
			}
			e->fd = fd;
			g->leader_fd = fd;
			g->nmembers = 1;
			g->member[0] = i;
			g->hw = e->spec.uses_hw_counter;
			e->group = (int)set->ngroups++;
			if (g->hw && (rc = group_runs(set, g)) != 1) {
				if (rc == 0)
					rc = pmc__fail(err, PMC_E_UNSCHEDULABLE, e->spec.name, -1,
						       "cannot count \"%s\": the PMU accepted it but never scheduled it, even alone (counters held by the NMI watchdog or another tool?)",
						       e->spec.name);
				else
					rc = pmc__fail(err, rc, e->spec.name, -1,
						       "cannot count \"%s\": test run failed: %s",
						       e->spec.name, strerror(-rc));
				goto fail;
			}
		}
	}
	/* Pages, and the read path: user reads only where every member of a
	 * group advertises them, never under valgrind (rdpmc traps there). */
	set->path = PMC_PATH_READ;
	for (size_t gi = 0; gi < set->ngroups; gi++) {
		struct pmc__group *g = &set->g[gi];
		/* A user-space read sees the calling thread's counter only:
		 * an inherited set is read with read(2), which sums the
		 * children. */
		int user = PMC__HAVE_USER_READ &&
			   !(flags & (PMC_OPEN_NO_USER_READ | PMC_OPEN_INHERIT)) &&
			   !pmc__under_valgrind();

		for (size_t k = 0; k < g->nmembers; k++) {
			struct pmc__event *e = &set->ev[g->member[k]];
			int shift;

			map_page(set, e);
			/* The width cannot change while the event lives. */
			shift = e->page ? pmc__upage_shift(e->page->pmc_width) : -1;
			if (!e->page || !e->page->cap_user_rdpmc || !e->spec.uses_hw_counter ||
			    shift < 0)
				user = 0;
			else
				e->shift = (unsigned)shift;
		}
		if (user && (set->spread || !affinity_within(set, set->ev[g->member[0]].spec.pmu))) {
			pmc__log(1, "pmcheck: \"%s\": read(2), not a user-space read: this CPU has several core PMUs and %s",
				 set->ev[g->member[0]].spec.name,
				 set->spread ? "the set sums events across them"
					     : "this thread may run on CPUs the event's PMU does not count on (pin it to that PMU's cpus)");
			user = 0;
		}
		g->user_read = user;
		if (user)
			set->path = PMC_PATH_USER;
	}
	if (set->ngroups == 1 && set->g[0].user_read) {
		/* One group opened in spec order: member k is event k. */
		set->fast.n = (unsigned)set->n;
		for (size_t i = 0; i < set->n; i++) {
			set->fast.page[i] = set->ev[i].page;
			set->fast.shift[i] = (unsigned char)set->ev[i].shift;
		}
	}
	if ((flags & PMC_OPEN_PER_THREAD) && (rc = open_thread_ring(set, err)) != 0)
		goto fail;
	*out = set;
	return 0;
fail:
	pmc_counters_close(set);
	return rc;
}

void pmc_counters_close(struct pmc_counters *set)
{
	if (!set)
		return;
	/* Members before leaders: closing a leader first would promote its
	 * members to singleton groups for no reason. */
	for (size_t i = set->n; i-- > 0;)
		close_event(set, &set->ev[i]);
	pmc_ring_unmap(set->thread_ring);
	if (set->thread_fd >= 0)
		close(set->thread_fd);
	free(set->uspec);
	free(set);
}

static int ioctl_groups(struct pmc_counters *set, unsigned long req)
{
	if (set->path == PMC_PATH_SIM)
		return 0; /* the simulator always counts; readings are differences */
	for (size_t gi = 0; gi < set->ngroups; gi++)
		if (ioctl(set->g[gi].leader_fd, req, PERF_IOC_FLAG_GROUP) < 0)
			return -errno;
	return 0;
}

int pmc_counters_enable(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_ENABLE) : -EINVAL;
}

int pmc_counters_disable(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_DISABLE) : -EINVAL;
}

int pmc_counters_reset(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_RESET) : -EINVAL;
}

/* ---- read: the hot path --------------------------------------------------- */

static PMC__ALWAYS_INLINE int read_groups(struct pmc_counters *set, struct pmc_reading *r)
{
	r->n = set->n;
	for (size_t gi = 0; gi < set->ngroups; gi++) {
		const struct pmc__group *g = &set->g[gi];
		int rc;

#if PMC__HAVE_USER_READ
		if (g->user_read) {
			struct pmc__upage_value v;
			size_t k;

			/* The leader's page gives the group's times; members
			 * read their values only (one timestamp per group). */
			const struct pmc__event *l = &set->ev[g->member[0]];

			if (pmc__upage_read(l->page, l->shift, pmc__hw_counter, pmc__hw_timestamp,
					    NULL, &v) == PMC__UPAGE_OK) {
				struct pmc_count *c = &r->c[g->member[0]];

				c->value = v.value;
				c->enabled_ns = v.enabled_ns;
				c->running_ns = v.running_ns;
				for (k = 1; k < g->nmembers; k++) {
					struct pmc_count *m = &r->c[g->member[k]];

					const struct pmc__event *e = &set->ev[g->member[k]];

					if (pmc__upage_read_value(e->page, e->shift, pmc__hw_counter,
								  NULL, &m->value) != PMC__UPAGE_OK)
						break;
					m->enabled_ns = v.enabled_ns;
					m->running_ns = v.running_ns;
				}
			} else {
				k = 0;
			}
			if (k == g->nmembers)
				continue;
			/* Not on a counter right now (multiplexed out or
			 * never scheduled): the kernel has the value. */
		}
#endif
		rc = read_group(set, g, r);
		if (rc)
			return rc;
	}
	return 0;
}

/* The caller's events from the kernel events: sums of the parts (times:
 * the longest enabled, the summed running), with the parts kept. */
static void fold_reading(const struct pmc_counters *set, struct pmc_reading *r)
{
	r->n = set->nuser;
	memset(r->c, 0, set->nuser * sizeof(r->c[0]));
	for (size_t k = 0; k < set->n; k++) {
		const struct pmc_count *p = &set->raw.c[k];
		struct pmc_count *c = &r->c[set->owner[k]];

		c->value += p->value;
		c->running_ns += p->running_ns;
		c->enabled_ns = p->enabled_ns > c->enabled_ns ? p->enabled_ns : c->enabled_ns;
		r->part[k] = *p;
		r->part_of[k] = set->owner[k];
	}
	r->nparts = set->n;
}

int pmc_counters_read(struct pmc_counters *set, struct pmc_reading *r)
{
	int rc;

	r->nparts = 0;
	if (set->path == PMC_PATH_SIM)
		return pmc__sim_read(set->sim_mask, set->n, set->sim_t0, r, NULL);
	if (!set->spread)
		return read_groups(set, r);
	rc = read_groups(set, &set->raw);
	if (rc == 0)
		fold_reading(set, r);
	return rc;
}

/* ---- introspection -------------------------------------------------------- */

size_t pmc_counters_count(const struct pmc_counters *set)
{
	return set ? set->nuser : 0;
}

size_t pmc_counters_groups(const struct pmc_counters *set)
{
	return set ? set->ngroups : 0;
}

int pmc_counters_group_of(const struct pmc_counters *set, size_t i)
{
	return set && i < set->nuser ? set->ev[set->first[i]].group : -1;
}

const struct pmc_event_spec *pmc_counters_spec(const struct pmc_counters *set, size_t i)
{
	if (!set || i >= set->nuser)
		return NULL;
	return set->uspec ? &set->uspec[i] : &set->ev[i].spec;
}

int pmc_counters_fd(const struct pmc_counters *set, size_t i)
{
	return set && i < set->nuser ? set->ev[set->first[i]].fd : -1;
}

const char *pmc_counters_part_pmu(const struct pmc_counters *set, size_t part)
{
	return set && set->spread && part < set->n ? set->ev[part].spec.pmu : NULL;
}

__attribute__((noinline)) int pmc__fast_read_call(const struct pmc_fast *f, struct pmc_reading *r)
{
#if PMC__HAVE_USER_READ
	return pmc__fast_read(f, r);
#else
	(void)f;
	(void)r;
	return 1;
#endif
}

const struct pmc_fast *pmc_counters_fast(const struct pmc_counters *set)
{
	return set && set->fast.n ? &set->fast : NULL;
}

enum pmc_read_path pmc_counters_path(const struct pmc_counters *set)
{
	return set ? set->path : PMC_PATH_READ;
}

int pmc_counters_describe(const struct pmc_counters *set, char *buf, size_t size)
{
	size_t used = 0;
	int total = 0;

	if (size)
		buf[0] = '\0';
	for (size_t gi = 0; set && gi < set->ngroups; gi++) {
		for (size_t k = 0; k < set->g[gi].nmembers; k++) {
			int w = snprintf(buf ? buf + used : NULL, used < size ? size - used : 0,
					 "%s%s%s%s", k == 0 && gi ? " " : "", k == 0 ? "{" : ",",
					 set->ev[set->g[gi].member[k]].spec.name,
					 k + 1 == set->g[gi].nmembers ? "}" : "");

			if (w < 0)
				return w;
			total += w;
			used = (size_t)total < size ? (size_t)total : size;
		}
	}
	return total;
}

/* ---- measurements ----------------------------------------------------------- */

static void delta_of(struct pmc_delta *d, const struct pmc_count *a, const struct pmc_count *b)
{
	d->flags = 0;
	if (b->value >= a->value) {
		d->value = b->value - a->value;
	} else {
		d->value = 0;
		d->flags |= PMC_DELTA_NEGATIVE;
	}
	d->enabled_ns = b->enabled_ns - a->enabled_ns;
	d->running_ns = b->running_ns - a->running_ns;
}

/* Hybrid: each part's delta, and each spread event's delta from its parts. */
static void measure_parts(struct pmc_measurement *m, const struct pmc_reading *start,
			  const struct pmc_reading *end)
{
	struct pmc_delta mine[PMC_MAX_EVENTS];

	m->nparts = start->nparts;
	for (size_t k = 0; k < start->nparts; k++) {
		delta_of(&m->part[k], &start->part[k], &end->part[k]);
		m->part_of[k] = start->part_of[k];
	}
	for (size_t i = 0; i < m->n; i++) {
		size_t n = 0;

		for (size_t k = 0; k < m->nparts; k++)
			if (m->part_of[k] == i)
				mine[n++] = m->part[k];
		if (n > 1)
			pmc__fold(&m->d[i], mine, n);
	}
}

void pmc_measurement_from(struct pmc_measurement *m, const struct pmc_reading *start,
			  const struct pmc_reading *end)
{
	size_t n = start->n < end->n ? start->n : end->n;

	m->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct pmc_count *a = &start->c[i], *b = &end->c[i];
		struct pmc_delta *d = &m->d[i];

		delta_of(d, a, b);
		if (d->running_ns == 0 && d->enabled_ns > 0)
			d->flags |= PMC_DELTA_NOT_COUNTED;
		else if (d->running_ns < d->enabled_ns)
			d->flags |= PMC_DELTA_MULTIPLEXED;
	}
	m->nparts = 0;
	if (start->nparts && start->nparts == end->nparts)
		measure_parts(m, start, end);
}

/* Through pmc_region_begin/end themselves: the code inside the counted
 * window must be the regions' own (the inline user-space read on a fast
 * set), or the subtraction would take too much or too little. */
int pmc_counters_overhead(struct pmc_counters *set, unsigned reps,
			  struct pmc_measurement *overhead)
{
	struct pmc_region r;
	struct pmc_measurement m;

	if (!set || !overhead || reps == 0)
		return -EINVAL;
	pmc_region_init(&r, set);
	for (unsigned rep = 0; rep < reps; rep++) {
		int rc = pmc_region_begin(&r);

		if (!rc)
			rc = pmc_region_end(&r, &m);
		if (rc)
			return rc;
		if (rep == 0) {
			*overhead = m;
			continue;
		}
		for (size_t i = 0; i < m.n; i++)
			if (m.d[i].value < overhead->d[i].value)
				overhead->d[i] = m.d[i];
	}
	return 0;
}

void pmc_measurement_subtract(struct pmc_measurement *m,
			      const struct pmc_measurement *overhead)
{
	size_t n = m->n < overhead->n ? m->n : overhead->n;

	for (size_t i = 0; i < n; i++)
		m->d[i].value = m->d[i].value > overhead->d[i].value
					? m->d[i].value - overhead->d[i].value : 0;
	for (size_t k = 0; m->nparts == overhead->nparts && k < m->nparts; k++)
		m->part[k].value = m->part[k].value > overhead->part[k].value
					   ? m->part[k].value - overhead->part[k].value : 0;
}
