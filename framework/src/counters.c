/* SPDX-License-Identifier: MIT */
/*
 * Counter sets on the perf backend: grouping, opening, user-page mapping and
 * the read paths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <time.h>

#include <valgrind/valgrind.h>

#include <pmcheck/counters.h>
#include <pmcheck/sim.h>

#include "pmcheck_int.h"
#include "userpage_int.h"

#define PMC__READ_FORMAT                                                       \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

struct pmc__event {
	struct pmc_event_spec spec;
	int fd;
	int group;
	struct perf_event_mmap_page *page;
};

struct pmc__group {
	int leader_fd;
	size_t nmembers;
	size_t member[PMC_MAX_EVENTS]; /* event indices, in kernel group order */
	int user_read;                 /* every member readable from its page */
	int hw;                        /* holds PMU counter events */
};

struct pmc_counters {
	size_t n, ngroups;
	enum pmc_read_path path;
	/* sim backend: callgrind column mask per event, open time */
	unsigned sim_mask[PMC_MAX_EVENTS];
	uint64_t sim_t0;
	size_t page_size;
	struct pmc__event ev[PMC_MAX_EVENTS];
	struct pmc__group g[PMC_MAX_EVENTS];
	/* read(2) buffer: nr, time_enabled, time_running, {value, id}[] */
	uint64_t rbuf[3 + 2 * PMC_MAX_EVENTS];
};

int pmc__under_valgrind(void)
{
	return RUNNING_ON_VALGRIND ? 1 : 0;
}

/* ---- machine reads for the user-page path -------------------------------- */

#if defined(__x86_64__) || defined(__i386__)
static PMC__ALWAYS_INLINE uint64_t hw_counter(uint32_t counter, void *ctx)
{
	uint32_t lo, hi;

	(void)ctx;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static PMC__ALWAYS_INLINE uint64_t hw_timestamp(void *ctx)
{
	uint32_t lo, hi;

	(void)ctx;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#define PMC__HAVE_USER_READ 1
#elif defined(__aarch64__)
/* PMEVCNTR<n>_EL0 takes n as part of the instruction encoding, so every
 * register needs its own mrs; counter 31 is the cycle counter PMCCNTR_EL0
 * (the kernel publishes it as index 32). */
#define PMC__EVCNTR(n)                                                 \
	case n:                                                        \
		__asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break
static PMC__ALWAYS_INLINE uint64_t hw_counter(uint32_t counter, void *ctx)
{
	uint64_t v = 0;

	(void)ctx;
	switch (counter) {
		PMC__EVCNTR(0); PMC__EVCNTR(1); PMC__EVCNTR(2); PMC__EVCNTR(3);
		PMC__EVCNTR(4); PMC__EVCNTR(5); PMC__EVCNTR(6); PMC__EVCNTR(7);
		PMC__EVCNTR(8); PMC__EVCNTR(9); PMC__EVCNTR(10); PMC__EVCNTR(11);
		PMC__EVCNTR(12); PMC__EVCNTR(13); PMC__EVCNTR(14); PMC__EVCNTR(15);
		PMC__EVCNTR(16); PMC__EVCNTR(17); PMC__EVCNTR(18); PMC__EVCNTR(19);
		PMC__EVCNTR(20); PMC__EVCNTR(21); PMC__EVCNTR(22); PMC__EVCNTR(23);
		PMC__EVCNTR(24); PMC__EVCNTR(25); PMC__EVCNTR(26); PMC__EVCNTR(27);
		PMC__EVCNTR(28); PMC__EVCNTR(29); PMC__EVCNTR(30);
	case 31:
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}

static PMC__ALWAYS_INLINE uint64_t hw_timestamp(void *ctx)
{
	uint64_t v;

	(void)ctx;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#define PMC__HAVE_USER_READ 1
#else
#define PMC__HAVE_USER_READ 0
#endif

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

		/* Level 3 (a Debian and Android patch) refuses every unprivileged
		 * event, user-only ones too: then ":u" is no remedy. */
		if (paranoid >= 3)
			return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
					 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d forbids all unprivileged perf_event use on this kernel); run as root, grant CAP_PERFMON, or lower perf_event_paranoid to 2 or less",
					 s->name, paranoid);
		return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
				 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d); run as root, grant CAP_PERFMON, lower perf_event_paranoid%s",
				 s->name, paranoid,
				 s->kind == PMC_KIND_UPROBE || s->kind == PMC_KIND_BREAKPOINT ||
						 s->exclude_kernel
					 ? "" : ", or count user space only with :u");
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

int pmc_counters_open(struct pmc_counters **out, const struct pmc_event_spec *specs,
		      size_t n, unsigned flags, struct pmc_error *err)
{
	struct pmc_counters *set;
	int rc = 0;

	pmc_error_clear(err);
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
	for (size_t i = 0; i < n; i++) {
		set->ev[i].fd = -1;
		set->ev[i].spec = specs[i];
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

			map_page(set, e);
			if (!e->page || !e->page->cap_user_rdpmc || !e->spec.uses_hw_counter)
				user = 0;
		}
		g->user_read = user;
		if (user)
			set->path = PMC_PATH_USER;
	}
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

int pmc_counters_read(struct pmc_counters *set, struct pmc_reading *r)
{
	if (set->path == PMC_PATH_SIM)
		return pmc__sim_read(set->sim_mask, set->n, set->sim_t0, r, NULL);
	r->n = set->n;
	for (size_t gi = 0; gi < set->ngroups; gi++) {
		const struct pmc__group *g = &set->g[gi];
		int rc;

#if PMC__HAVE_USER_READ
		if (g->user_read) {
			size_t k;

			for (k = 0; k < g->nmembers; k++) {
				struct pmc__upage_value v;
				struct pmc_count *c = &r->c[g->member[k]];

				if (pmc__upage_read(set->ev[g->member[k]].page, hw_counter,
						    hw_timestamp, NULL, &v) != PMC__UPAGE_OK)
					break;
				c->value = v.value;
				c->enabled_ns = v.enabled_ns;
				c->running_ns = v.running_ns;
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

/* ---- introspection -------------------------------------------------------- */

size_t pmc_counters_count(const struct pmc_counters *set)
{
	return set ? set->n : 0;
}

size_t pmc_counters_groups(const struct pmc_counters *set)
{
	return set ? set->ngroups : 0;
}

int pmc_counters_group_of(const struct pmc_counters *set, size_t i)
{
	return set && i < set->n ? set->ev[i].group : -1;
}

const struct pmc_event_spec *pmc_counters_spec(const struct pmc_counters *set, size_t i)
{
	return set && i < set->n ? &set->ev[i].spec : NULL;
}

int pmc_counters_fd(const struct pmc_counters *set, size_t i)
{
	return set && i < set->n ? set->ev[i].fd : -1;
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

void pmc_measurement_from(struct pmc_measurement *m, const struct pmc_reading *start,
			  const struct pmc_reading *end)
{
	size_t n = start->n < end->n ? start->n : end->n;

	m->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct pmc_count *a = &start->c[i], *b = &end->c[i];
		struct pmc_delta *d = &m->d[i];

		d->flags = 0;
		if (b->value >= a->value) {
			d->value = b->value - a->value;
		} else {
			d->value = 0;
			d->flags |= PMC_DELTA_NEGATIVE;
		}
		d->enabled_ns = b->enabled_ns - a->enabled_ns;
		d->running_ns = b->running_ns - a->running_ns;
		if (d->running_ns == 0 && d->enabled_ns > 0)
			d->flags |= PMC_DELTA_NOT_COUNTED;
		else if (d->running_ns < d->enabled_ns)
			d->flags |= PMC_DELTA_MULTIPLEXED;
	}
}

int pmc_counters_overhead(struct pmc_counters *set, unsigned reps,
			  struct pmc_measurement *overhead)
{
	struct pmc_reading a, b;
	struct pmc_measurement m;

	if (!set || !overhead || reps == 0)
		return -EINVAL;
	for (unsigned rep = 0; rep < reps; rep++) {
		int rc;

		__asm__ __volatile__("" ::: "memory");
		rc = pmc_counters_read(set, &a);
		__asm__ __volatile__("" ::: "memory");
		if (!rc)
			rc = pmc_counters_read(set, &b);
		__asm__ __volatile__("" ::: "memory");
		if (rc)
			return rc;
		pmc_measurement_from(&m, &a, &b);
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
}
