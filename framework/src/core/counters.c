/* SPDX-License-Identifier: MIT */
/*
 * Counter sets: grouping, opening (the perf backend's descriptors and user
 * pages, or the sim backend's columns) and closing.  What the public open
 * checks first is open.c; enable, disable and the read paths are
 * counters_read.c; open errors are explained in open_error.c, per-thread
 * counts live in threads.c, measurements and introspection in measure.c.
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

/* ---- open ---------------------------------------------------------------- */

static long sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int group_fd)
{
	return syscall(SYS_perf_event_open, attr, pid /* 0: this thread */, -1 /* any CPU */,
		       group_fd, PERF_FLAG_FD_CLOEXEC);
}

void pmc__fill_attr(struct perf_event_attr *attr, const struct pmc_event_spec *s, int leader,
		    unsigned flags)
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
	/* A task about to exec (pmcheck stat's child) is counted from the
	 * new program's first instruction: the leader enables itself then. */
	attr->enable_on_exec = leader && (flags & PMC_OPEN_ENABLE_ON_EXEC) ? 1 : 0;
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
static int open_event(const struct pmc_event_spec *s, pid_t pid, int group_fd, unsigned flags)
{
	struct perf_event_attr attr;
	long fd;

	pmc__fill_attr(&attr, s, group_fd < 0, flags);
#if defined(__aarch64__)
	if (s->uses_hw_counter && !(flags & (PMC_OPEN_NO_USER_READ | PMC_OPEN_INHERIT)) &&
	    !pmc__under_valgrind() && arm64_user_access()) {
		static const uint64_t bits[] = { 0x3, 0x2 };

		for (size_t i = 0; i < 2; i++) {
			attr.config1 = s->config1 | bits[i];
			fd = sys_perf_event_open(&attr, pid, group_fd);
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
	fd = sys_perf_event_open(&attr, pid, group_fd);
	return fd < 0 ? -errno : (int)fd;
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

	/* Another task's events run only while it does: nothing to try. */
	if (set->pid)
		return 1;
	rc = pmc__read_group(set, g, &before);
	if (rc)
		return rc;
	if (ioctl(g->leader_fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
		return -errno;
	for (unsigned i = 0; i < 20000; i++)
		sink += i;
	ioctl(g->leader_fd, PERF_EVENT_IOC_DISABLE, 0);
	rc = pmc__read_group(set, g, &after);
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
	int fd = open_event(&e->spec, set->pid, g->leader_fd, flags);

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

int pmc__counters_open_set(struct pmc_counters **out, const struct pmc_event_spec *specs,
			   size_t n, unsigned flags, pid_t pid, struct pmc_error *err)
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
	for (size_t i = 0; i < n; i++)
		if (specs[i].kind == PMC_KIND_UPROBE && !specs[i].path[0])
			return pmc__fail(err, -EINVAL, specs[i].name, -1,
					 "cannot open \"%s\": its function was not looked up (parsed with PMC_PARSE_DEFER_SYMBOLS); call pmc_event_resolve() on it first",
					 specs[i].name);
	set = calloc(1, sizeof(*set));
	if (!set)
		return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
	set->page_size = (size_t)sysconf(_SC_PAGESIZE);
	set->thread_fd = -1;
	set->pid = pid;
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
		/* Under the simulator, and does this run simulate each event? */
		rc = pmc__sim_check(0, NULL, err);
		for (size_t i = 0; rc == 0 && i < n; i++) {
			unsigned slot;

			rc = pmc__sim_check(set->sim_mask[i], specs[i].name, err);
			/* calls: a function whose calls each dump adds up */
			if (rc == 0 && (set->sim_mask[i] & PMC_SIM_CALLS_MASK) &&
			    (rc = pmc__sim_calls_watch(&specs[i], &slot, err)) == 0)
				set->sim_mask[i] = PMC_SIM_CALLS_MASK | slot;
		}
		if (rc)
			goto fail;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		set->sim_t0 = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		set->sim_flags = flags & PMC_OPEN_INHERIT;
		pmc__sim_start();
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
			int fd = open_event(&e->spec, set->pid, -1, flags);

			if (fd < 0) {
				rc = pmc__open_error(fd, set, &e->spec, err);
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

			/* A set read with read(2) only needs no page (and an
			 * inherited event cannot be mapped: EINVAL). */
			if (user)
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
	if ((flags & PMC_OPEN_PER_THREAD) && (rc = pmc__open_thread_ring(set, err)) != 0)
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
