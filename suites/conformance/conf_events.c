/* SPDX-License-Identifier: MIT */
/*
 * Conformance, continued: software events, uprobes, tracepoints, the mmap
 * ring buffer and its records, the hardware cases (a PMU; the emulated lane
 * runs them), and limits with known kernel bugs.
 */
#include "conf.h"

#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <pmcheck/event.h>

/* ---- known kernel bugs ------------------------------------------------------------------ */

/*
 * Documented kernel bugs, by the mainline release that fixed them.  A case
 * whose kernel is older declares the bug before checking; if the check then
 * fails the verdict is KNOWN-ISSUE (with the fix to look for), and if it
 * passes the kernel carries a backport (PASS, with a note).
 */
static const struct known_issue {
	const char *id;
	int fixed_major, fixed_minor;
	const char *what;
} known_issues[] = {
	{ "validate_size", 6, 7,
	  "perf_event_validate_size() did not bound the read size of a growing group "
	  "(CVE-2023-6931), fixed by 382c27f4ed28 \"perf: Fix perf_event_validate_size()\" in "
	  "Linux 6.7, with stable backports" },
};

static void declare_known_issue(struct pmc_test *t, const char *id)
{
	for (size_t i = 0; i < sizeof(known_issues) / sizeof(known_issues[0]); i++)
		if (!strcmp(known_issues[i].id, id) &&
		    conf_kernel_version() < known_issues[i].fixed_major * 1000 + known_issues[i].fixed_minor)
			pmc_test_known_issue(t, "%s", known_issues[i].what);
}

/* ---- software events ---------------------------------------------------------------------- */

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* PERF_COUNT_SW_TASK_CLOCK: "a clock count specific to the task that is
 * running", in ns: it agrees with the thread's CPU clock over a busy loop
 * (within 10%: the two clocks are read at slightly different instants). */
CONF_TEST(sw, task_clock_tracks_cpu_time)
{
	struct perf_event_attr a;
	uint64_t c0, c1, v;
	int fd;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	fd = OPEN(t, &a, 0, -1, -1, 0);
	c0 = thread_cpu_ns();
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_spin(20000000);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	c1 = thread_cpu_ns();
	v = read_u64(t, fd);
	PMC_CHECK(t, v > (c1 - c0) * 9 / 10 && v <= (c1 - c0) * 11 / 10);
}

static CONF_NO_ASAN void touch_pages(char *mem, long psize, int n, char v)
{
	for (int i = 0; i < n; i++)
		((volatile char *)mem)[(size_t)i * (size_t)psize] = v;
}

/* PERF_COUNT_SW_PAGE_FAULTS: first touches of 64 fresh anonymous pages are
 * 64 faults, exactly; touching them again is none. */
CONF_TEST(sw, page_faults_exact)
{
	struct perf_event_attr a;
	long psize = sysconf(_SC_PAGESIZE);
	char *mem = mmap(NULL, 64 * (size_t)psize, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd;

	PMC_CHECK(t, mem != MAP_FAILED);
	madvise(mem, 64 * (size_t)psize, MADV_NOHUGEPAGE);
	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.exclude_kernel = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	touch_pages(mem, psize, 64, 1);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, read_u64(t, fd), 64);
	ioc(t, fd, PERF_EVENT_IOC_RESET, 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	touch_pages(mem, psize, 64, 2);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, read_u64(t, fd), 0);
}

/* PERF_COUNT_SW_CONTEXT_SWITCHES: each sleep gives up the CPU at least once. */
CONF_TEST(sw, context_switches_counted)
{
	struct perf_event_attr a;
	int fd;

	sw_attr(&a, PERF_COUNT_SW_CONTEXT_SWITCHES);
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++)
		usleep(1000);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK(t, read_u64(t, fd) >= 10);
}

/* PERF_COUNT_SW_CPU_MIGRATIONS: "the number of times the process has migrated
 * to a new CPU": forced moves between two CPUs are counted. */
CONF_TEST(sw, cpu_migrations_counted)
{
	struct perf_event_attr a;
	cpu_set_t all, set;
	int fd, cpus[2], n = 0;

	sched_getaffinity(0, sizeof(all), &all);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &all))
			cpus[n++] = c;
	if (n < 2)
		pmc_test_skip(t, "needs two CPUs to migrate between (this process may use %d)", n);
	sw_attr(&a, PERF_COUNT_SW_CPU_MIGRATIONS);
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 10; i++) {
		CPU_ZERO(&set);
		CPU_SET(cpus[i % 2], &set);
		sched_setaffinity(0, sizeof(set), &set);
		conf_spin(1000);
	}
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	sched_setaffinity(0, sizeof(all), &all);
	PMC_CHECK(t, read_u64(t, fd) >= 9);
}

/* PERF_COUNT_SW_DUMMY: "a placeholder event that counts nothing". */
CONF_TEST(sw, dummy_counts_nothing)
{
	struct perf_event_attr a;
	int fd;

	sw_attr(&a, PERF_COUNT_SW_DUMMY);
	a.disabled = 0;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	conf_spin(1000000);
	PMC_CHECK_EQ(t, read_u64(t, fd), 0);
}

/* ---- uprobes ------------------------------------------------------------------------------ */

__attribute__((noinline, used)) unsigned conf_uprobe_target(unsigned x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x * 2 + 1;
}

/* A dynamic PMU from sysfs ("type" under /sys/bus/event_source/devices/PMU/);
 * the uprobe PMU takes uprobe_path and probe_offset (Linux 4.17). */
static int uprobe_fd(struct pmc_test *t, int retprobe)
{
	struct perf_event_attr a;
	char path[1024];
	uint64_t off, addr;
	struct pmc_error err;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = conf_pmu_type(t, "uprobe");
	if (pmc_symbol_resolve("conf_uprobe_target", NULL, path, sizeof(path), &off, &addr, &err))
		pmc_test_error(t, "%s", err.message);
	a.uprobe_path = (uintptr_t)path;
	a.probe_offset = off;
	if (retprobe) {
		/* format/retprobe says which config bit: "config:0" on every kernel so far. */
		FILE *f = fopen("/sys/bus/event_source/devices/uprobe/format/retprobe", "r");
		int bit = -1;

		if (!f || fscanf(f, "config:%d", &bit) != 1)
			pmc_test_skip(t, "the uprobe PMU has no retprobe format field");
		fclose(f);
		a.config = 1ull << bit;
	}
	return OPEN(t, &a, 0, -1, -1, 0);
}

/* Entry probe: one count per call, exactly. */
CONF_TEST(uprobe, entry_count_exact)
{
	int fd = uprobe_fd(t, 0);
	unsigned acc = 0;

	for (int i = 0; i < 777; i++)
		acc = conf_uprobe_target(acc);
	PMC_CHECK_EQ(t, read_u64(t, fd), 777);
}

/* Return probe (format/retprobe): one count per return, exactly. */
CONF_TEST(uprobe, return_count_exact)
{
	int fd = uprobe_fd(t, 1);
	unsigned acc = 0;

	for (int i = 0; i < 555; i++)
		acc = conf_uprobe_target(acc);
	PMC_CHECK_EQ(t, read_u64(t, fd), 555);
}

/* ---- tracepoints ---------------------------------------------------------------------------- */

static int tracefs_mounted_by_us;

static const char *tracefs(void)
{
	struct stat st;

	if (stat("/sys/kernel/tracing/events", &st) == 0)
		return "/sys/kernel/tracing";
	if (stat("/sys/kernel/debug/tracing/events", &st) == 0)
		return "/sys/kernel/debug/tracing";
	return NULL;
}

/* Mount tracefs if nobody has (root only), and remember to unmount it. */
static int tracefs_setup(struct pmc_test *t, void **data)
{
	(void)data;
	if (tracefs())
		return 0;
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) != 0)
		pmc_test_skip(t, "needs tracefs: not mounted, and mounting it failed (%s); mount -t tracefs nodev /sys/kernel/tracing",
			      strerror(errno));
	tracefs_mounted_by_us = 1;
	return 0;
}

static void tracefs_teardown(struct pmc_test *t, void *data)
{
	(void)t;
	(void)data;
	if (tracefs_mounted_by_us)
		umount("/sys/kernel/tracing");
}

static const struct pmc_fixture with_tracefs = { "tracefs", tracefs_setup, tracefs_teardown };

static int tracepoint_fd(struct pmc_test *t, const char *name, uint64_t period, uint64_t sample_type)
{
	struct perf_event_attr a;
	char path[256];
	unsigned id;
	FILE *f;

	snprintf(path, sizeof(path), "%s/events/%s/id", tracefs(), name);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%u", &id) != 1)
		pmc_test_skip(t, "no tracepoint %s (%s)", name, path);
	fclose(f);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = id;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.disabled = 1;
	return OPEN(t, &a, 0, -1, -1, 0);
}

/* PERF_TYPE_TRACEPOINT with config from tracefs' events/.../id: the
 * syscall-entry tracepoint counts each call exactly. */
CONF_TEST(tp, syscall_entry_exact, .fixture = &with_tracefs)
{
	int fd = tracepoint_fd(t, "syscalls/sys_enter_getppid", 0, 0);

	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 100; i++)
		(void)syscall(SYS_getppid);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, read_u64(t, fd), 100);
}

/* PERF_SAMPLE_RAW on a tracepoint: "raw record data", which begins with the
 * event's common_type (its id); one sample per hit with period 1. */
CONF_TEST(tp, sample_raw_data, .fixture = &with_tracefs)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW };
	int fd = tracepoint_fd(t, "syscalls/sys_enter_getppid", 1, lay.sample_type);
	unsigned char buf[4096];
	struct pmc_ring *ring;
	struct pmc_error err;
	struct pmc_sample s;
	int samples = 0;
	size_t len;

	if (pmc_ring_map(&ring, fd, 8, &err))
		pmc_test_fail(t, "%s", err.message);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 5; i++)
		(void)syscall(SYS_getppid);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK(t, s.raw_size >= 8 && s.pid == (uint32_t)getpid());
		samples++;
	}
	PMC_CHECK_EQ(t, samples, 5);
	pmc_ring_unmap(ring);
}

/* ---- the mmap ring buffer ------------------------------------------------------------------- */

static volatile long ring_target;

static void ring_writes(long n)
{
	for (long i = 0; i < n; i++)
		ring_target = i;
}

/* A write-breakpoint sampling event: one sample per write, exactly. */
static int sampling_bp(struct pmc_test *t, uint64_t sample_type, int extra_flags)
{
	struct perf_event_attr a;

	bp_attr(&a, (const void *)&ring_target, sizeof(ring_target), HW_BREAKPOINT_W);
	a.sample_period = 1;
	a.sample_type = sample_type;
	a.sample_id_all = !!(extra_flags & 1);
	a.comm = !!(extra_flags & 2);
	a.mmap = !!(extra_flags & 4);
	a.wakeup_events = 1;
	return OPEN(t, &a, 0, -1, -1, 0);
}

static struct pmc_ring *map_ring(struct pmc_test *t, int fd, size_t pages)
{
	struct pmc_ring *ring;
	struct pmc_error err;

	if (pmc_ring_map(&ring, fd, pages, &err))
		pmc_test_fail(t, "%s", err.message);
	return ring;
}

/* The mmap layout: "data_offset ... data_size" (Linux 4.1) locate the data
 * area right after the control page, 2^n pages long; nothing written yet. */
CONF_TEST(ring, mmap_layout)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 0);
	struct pmc_ring *ring = map_ring(t, fd, 8);
	struct perf_event_mmap_page *pg = pmc_ring_page(ring);
	long psize = sysconf(_SC_PAGESIZE);

	PMC_CHECK_EQ(t, pg->data_offset, psize);
	PMC_CHECK_EQ(t, pg->data_size, 8 * psize);
	PMC_CHECK_EQ(t, pg->data_head, 0);
	/* A data area of 3 pages is not a power of two: EINVAL from mmap. */
	PMC_CHECK(t, mmap(NULL, 4 * (size_t)psize, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) ==
			     MAP_FAILED);
	pmc_ring_unmap(ring);
}

/*
 * PERF_RECORD_SAMPLE: the fields sample_type selects, "in the following
 * order": IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD --
 * each record is exactly their size, and every field reads back right.
 */
CONF_TEST(ring, sample_fields_in_order)
{
	struct pmc_sample_layout lay = {
		.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			       PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
			       PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD,
	};
	int fd = sampling_bp(t, lay.sample_type, 0);
	struct pmc_ring *ring = map_ring(t, fd, 8);
	unsigned char buf[512];
	uint64_t id = 0, last_time = 0;
	struct pmc_error err;
	struct pmc_sample s;
	int n = 0;
	size_t len;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(20);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		PMC_CHECK_EQ(t, len, sizeof(struct perf_event_header) + 9 * 8);
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.identifier, id);
		PMC_CHECK_EQ(t, s.id, id);
		PMC_CHECK_EQ(t, s.pid, getpid());
		PMC_CHECK_EQ(t, s.tid, gettid());
		PMC_CHECK_EQ(t, s.addr, (uintptr_t)&ring_target);
		PMC_CHECK_EQ(t, s.period, 1);
		PMC_CHECK(t, s.ip != 0 && s.time >= last_time);
		last_time = s.time;
		n++;
	}
	PMC_CHECK_EQ(t, n, 20);
	pmc_ring_unmap(ring);
}

/* PERF_SAMPLE_READ with PERF_FORMAT_GROUP: each sample carries the whole
 * group's values, "nr" of them, leader first. */
CONF_TEST(ring, sample_read_group)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_READ,
					 .read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID };
	struct perf_event_attr a;
	unsigned char buf[512];
	struct pmc_error err;
	struct pmc_sample s;
	struct pmc_ring *ring;
	int leader, n = 0;
	size_t len;

	bp_attr(&a, (const void *)&ring_target, sizeof(ring_target), HW_BREAKPOINT_W);
	a.sample_period = 1;
	a.sample_type = lay.sample_type;
	a.read_format = lay.read_format;
	leader = OPEN(t, &a, 0, -1, -1, 0);
	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.disabled = 0;
	a.read_format = lay.read_format;
	OPEN(t, &a, 0, -1, leader, 0);
	ring = map_ring(t, leader, 8);
	ioc(t, leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	ring_writes(4);
	ioc(t, leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		n++;
		PMC_CHECK_EQ(t, s.read_nr, 2);
		PMC_CHECK_EQ(t, s.read_value[0], (uint64_t)n); /* the leader: writes so far */
	}
	PMC_CHECK_EQ(t, n, 4);
	pmc_ring_unmap(ring);
}

/* sample_id_all: "TID, TIME, ID, STREAM_ID, CPU and IDENTIFIER ... in
 * non-PERF_RECORD_SAMPLE records" -- a COMM record (comm=1, prctl
 * PR_SET_NAME) ends with them. */
CONF_TEST(ring, sample_id_all_trailer)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_ID |
							PERF_SAMPLE_IDENTIFIER,
					 .sample_id_all = 1 };
	int fd = sampling_bp(t, lay.sample_type, 1 | 2);
	struct pmc_ring *ring = map_ring(t, fd, 8);
	unsigned char buf[512];
	uint64_t id = 0;
	struct pmc_error err;
	struct pmc_sample s;
	int comms = 0;
	size_t len;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	prctl(PR_SET_NAME, "pmc-conform", 0, 0, 0);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;

		if (h->type != PERF_RECORD_COMM)
			continue;
		PMC_CHECK(t, strstr((const char *)buf + 16, "pmc-conform") != NULL);
		if (pmc_sample_id_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.tid, gettid());
		PMC_CHECK_EQ(t, s.id, id);
		PMC_CHECK_EQ(t, s.identifier, id);
		comms++;
	}
	PMC_CHECK_EQ(t, comms, 1);
	pmc_ring_unmap(ring);
}

/* mmap=1: "PERF_RECORD_MMAP ... for every mmap() call that has PROT_EXEC",
 * naming the file. */
CONF_TEST(ring, mmap_records)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 4);
	struct pmc_ring *ring = map_ring(t, fd, 8);
	unsigned char buf[4096];
	int file = open("/proc/self/exe", O_RDONLY), found = 0;
	size_t len;
	void *m;

	PMC_CHECK(t, file >= 0);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, file, 0);
	PMC_CHECK(t, m != MAP_FAILED);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;
		uint64_t addr;

		if (h->type != PERF_RECORD_MMAP)
			continue;
		memcpy(&addr, buf + 16, 8); /* pid, tid, then addr */
		if (addr == (uintptr_t)m)
			found++;
	}
	PMC_CHECK_EQ(t, found, 1);
	munmap(m, 4096);
	pmc_ring_unmap(ring);
}

/*
 * A full buffer is not overwritten: the writer respects data_tail and
 * accounts what it dropped in PERF_RECORD_LOST ("id, lost"), written as soon
 * as a record fits again; the records it kept are the oldest ones, in order.
 */
static void drain(struct pmc_test *t, struct pmc_ring *ring, const struct pmc_sample_layout *lay,
		  uint64_t id, uint64_t *kept, uint64_t *lost, uint64_t *last_time)
{
	unsigned char buf[512];
	struct pmc_error err;
	struct pmc_sample s;
	size_t len;

	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		struct perf_event_header *h = (void *)buf;
		uint64_t w[2];

		if (h->type == PERF_RECORD_LOST) {
			memcpy(w, buf + 8, 16);
			PMC_CHECK_EQ(t, w[0], id);
			*lost += w[1];
		} else if (h->type == PERF_RECORD_SAMPLE) {
			if (pmc_sample_parse(buf, len, lay, &s, &err))
				pmc_test_fail(t, "%s", err.message);
			PMC_CHECK(t, s.time >= *last_time);
			*last_time = s.time;
			(*kept)++;
		}
	}
}

CONF_TEST(ring, lost_records_when_full)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TIME |
							PERF_SAMPLE_ID };
	int fd = sampling_bp(t, lay.sample_type, 0);
	struct pmc_ring *ring = map_ring(t, fd, 1);
	uint64_t id = 0, lost = 0, kept = 0, last = 0;

	ioc(t, fd, PERF_EVENT_IOC_ID, (unsigned long)&id);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(2000); /* 2000 x 32-byte samples into one page */
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(t, ring, &lay, id, &kept, &lost, &last);
	PMC_CHECK(t, kept > 0 && kept < 2000);
	PMC_CHECK_EQ(t, lost, 0); /* not yet: the LOST record waits for room */
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(1);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	drain(t, ring, &lay, id, &kept, &lost, &last);
	PMC_CHECK(t, lost > 0);
	PMC_CHECK_EQ(t, kept + lost, 2001);
	pmc_test_note(t, "%" PRIu64 " samples kept, %" PRIu64 " lost", kept, lost);
	pmc_ring_unmap(ring);
}

/* wakeup_events: "wake up after this many samples": not readable after 4,
 * readable after 5. */
CONF_TEST(ring, wakeup_events)
{
	struct perf_event_attr a;
	struct pollfd p;
	struct pmc_ring *ring;
	int fd;

	bp_attr(&a, (const void *)&ring_target, sizeof(ring_target), HW_BREAKPOINT_W);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP;
	a.wakeup_events = 5;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = map_ring(t, fd, 8);
	p = (struct pollfd){ fd, POLLIN, 0 };
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(4);
	PMC_CHECK_EQ(t, poll(&p, 1, 0), 0);
	ring_writes(1);
	PMC_CHECK_EQ(t, poll(&p, 1, 1000), 1);
	pmc_ring_unmap(ring);
}

/* watermark + wakeup_watermark: wake up once that many bytes are waiting. */
CONF_TEST(ring, wakeup_watermark)
{
	struct perf_event_attr a;
	struct pollfd p;
	struct pmc_ring *ring;
	int fd;

	bp_attr(&a, (const void *)&ring_target, sizeof(ring_target), HW_BREAKPOINT_W);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_IP; /* 16-byte records */
	a.watermark = 1;
	a.wakeup_watermark = 16 * 20;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = map_ring(t, fd, 8);
	p = (struct pollfd){ fd, POLLIN, 0 };
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(10);
	PMC_CHECK_EQ(t, poll(&p, 1, 0), 0);
	ring_writes(15);
	PMC_CHECK_EQ(t, poll(&p, 1, 1000), 1);
	PMC_CHECK(t, pmc_ring_unread(ring) >= 16 * 20);
	pmc_ring_unmap(ring);
}

/* PAUSE_OUTPUT (Linux 4.7): "pause ... writing to the ring buffer"; records
 * made while paused are dropped, output resumes on 0. */
CONF_TEST(ring, pause_output)
{
	int fd = sampling_bp(t, PERF_SAMPLE_IP, 0);
	struct pmc_ring *ring = map_ring(t, fd, 8);
	unsigned char buf[256];
	int samples = 0;
	size_t len;

	conf_require_kernel(t, 4, 7, "PERF_EVENT_IOC_PAUSE_OUTPUT");
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(3);
	ioc(t, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 1);
	ring_writes(50);
	ioc(t, fd, PERF_EVENT_IOC_PAUSE_OUTPUT, 0);
	ring_writes(2);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1)
		samples += ((struct perf_event_header *)buf)->type == PERF_RECORD_SAMPLE;
	PMC_CHECK_EQ(t, samples, 5);
	pmc_ring_unmap(ring);
}

/* SET_OUTPUT: "report event notifications to the specified file descriptor
 * rather than the default one": B's samples land in A's ring. */
CONF_TEST(ring, set_output)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_ID };
	int a_fd = sampling_bp(t, lay.sample_type, 0), b_fd;
	struct perf_event_attr a;
	struct pmc_ring *ring = map_ring(t, a_fd, 8);
	unsigned char buf[256];
	uint64_t id_a = 0, id_b = 0, from_a = 0, from_b = 0;
	struct pmc_error err;
	struct pmc_sample s;
	size_t len;

	sw_attr(&a, PERF_COUNT_SW_PAGE_FAULTS);
	a.exclude_kernel = 0;
	a.sample_period = 1;
	a.sample_type = lay.sample_type;
	b_fd = OPEN(t, &a, 0, -1, -1, 0);
	ioc(t, b_fd, PERF_EVENT_IOC_SET_OUTPUT, (unsigned long)a_fd);
	ioc(t, a_fd, PERF_EVENT_IOC_ID, (unsigned long)&id_a);
	ioc(t, b_fd, PERF_EVENT_IOC_ID, (unsigned long)&id_b);
	ioc(t, a_fd, PERF_EVENT_IOC_ENABLE, 0);
	ioc(t, b_fd, PERF_EVENT_IOC_ENABLE, 0);
	ring_writes(3);
	{
		char *m = mmap(NULL, 4096 * 4, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (int i = 0; i < 4; i++)
			m[i * 4096] = 1;
		munmap(m, 4096 * 4);
	}
	ioc(t, b_fd, PERF_EVENT_IOC_DISABLE, 0);
	ioc(t, a_fd, PERF_EVENT_IOC_DISABLE, 0);
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		from_a += s.id == id_a;
		from_b += s.id == id_b;
	}
	PMC_CHECK_EQ(t, from_a, 3);
	PMC_CHECK(t, from_b >= 4);
	pmc_ring_unmap(ring);
}

static uint64_t thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Frequency sampling (freq=1, sample_freq): "the kernel will adjust the
 * sampling period to try and achieve the desired rate".  task-clock is a
 * timer, so the kernel sets the period to 1e9 / sample_freq ns up front:
 * every PERIOD reads that, and the samples come at that rate (within 30%:
 * the first and last periods are partial, and timer expiry is coarse). */
CONF_TEST(ring, frequency_sampling_rate)
{
	struct pmc_sample_layout lay = { .sample_type = PERF_SAMPLE_PERIOD };
	struct perf_event_attr a;
	unsigned char buf[256];
	struct pmc_error err;
	struct pmc_sample s;
	struct pmc_ring *ring;
	uint64_t t0, cpu_ns, expected;
	int n = 0, fd;
	size_t len;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	a.freq = 1;
	a.sample_freq = 1000;
	a.sample_type = lay.sample_type;
	fd = OPEN(t, &a, 0, -1, -1, 0);
	ring = map_ring(t, fd, 16);
	t0 = thread_ns();
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	while (thread_ns() - t0 < 100000000)
		conf_spin(10000);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	cpu_ns = thread_ns() - t0;
	while (pmc_ring_next(ring, buf, sizeof(buf), &len) == 1) {
		if (((struct perf_event_header *)buf)->type != PERF_RECORD_SAMPLE)
			continue;
		if (pmc_sample_parse(buf, len, &lay, &s, &err))
			pmc_test_fail(t, "%s", err.message);
		PMC_CHECK_EQ(t, s.period, 1000000);
		n++;
	}
	expected = cpu_ns / 1000000;
	PMC_CHECK(t, n >= (int)(expected * 7 / 10) && n <= (int)(expected * 13 / 10));
	pmc_test_note(t, "%d samples over %.1f ms of CPU at 1000 Hz", n, cpu_ns / 1e6);
	pmc_ring_unmap(ring);
}

/* ---- hardware (needs a PMU: the emulated lane) ---------------------------------------------- */

static int hw_fd(struct pmc_test *t, uint64_t config, int group)
{
	struct perf_event_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = group < 0;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
#if defined(__aarch64__)
	a.config1 = 0x3; /* user access, 64-bit counter (arm64 perf_user_access) */
#endif
	fd = peo(&a, 0, -1, group, 0);
#if defined(__aarch64__)
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EINVAL)) {
		a.config1 = 0;
		fd = peo(&a, 0, -1, group, 0);
	}
#endif
	if (fd < 0 && (errno == ENOENT || errno == EOPNOTSUPP || errno == ENODEV))
		pmc_test_skip(t, "needs a hardware PMU with this generic event (%s): run in the emulated lane (ci/qemu-lane) or on hardware",
			      strerror(errno));
	if (fd < 0)
		pmc_test_fail(t, "perf_event_open(hardware %llu): %s", (unsigned long long)config,
			      strerror(errno));
	return (int)fd;
}

/* cap_user_rdpmc and index: "if cap_user_rdpmc ... the user can read the
 * counter with rdpmc (x86) ... index - 1"; index is non-zero while counting
 * (arm64: only with perf_user_access = 1). */
CONF_TEST(hw, user_page_capabilities)
{
	int fd = hw_fd(t, PERF_COUNT_HW_INSTRUCTIONS, -1);
	struct perf_event_mmap_page *pg =
		mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED, fd, 0);

	PMC_CHECK(t, pg != MAP_FAILED);
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	conf_spin(1000);
	if (!pg->cap_user_rdpmc)
		pmc_test_skip(t, "cap_user_rdpmc is 0 (arm64: perf_user_access is 0)");
	PMC_CHECK(t, pg->index != 0);
	/* pmc_width: "the bit width of the value read with rdpmc". */
	PMC_CHECK(t, pg->pmc_width >= 32 && pg->pmc_width <= 64);
	pmc_test_note(t, "pmc_width %u, index %u", (unsigned)pg->pmc_width, (unsigned)pg->index);
}

/* A group is scheduled as a unit: one read returns every member with one
 * time pair, and enabled == running when nothing competes. */
CONF_TEST(hw, group_counts_together)
{
	int leader = hw_fd(t, PERF_COUNT_HW_INSTRUCTIONS, -1);
	uint64_t buf[8];

	hw_fd(t, PERF_COUNT_HW_CPU_CYCLES, leader);
	ioc(t, leader, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	conf_spin(100000);
	ioc(t, leader, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	PMC_CHECK_EQ(t, read(leader, buf, sizeof(buf)), 8 * 5);
	PMC_CHECK_EQ(t, buf[0], 2);
	PMC_CHECK(t, buf[1] > 0 && buf[1] == buf[2]);
	PMC_CHECK(t, buf[3] >= 100000 && buf[4] > 0);
}

/* Multiplexing: "time_enabled ... time_running ... can be used to scale an
 * estimated value": with more groups than counters, running < enabled. */
CONF_TEST(hw, multiplexing_times)
{
	enum { GROUPS = 12 };
	int fd[GROUPS], mux = 0;

	for (int i = 0; i < GROUPS; i++)
		fd[i] = hw_fd(t, PERF_COUNT_HW_INSTRUCTIONS, -1);
	for (int i = 0; i < GROUPS; i++)
		ioc(t, fd[i], PERF_EVENT_IOC_ENABLE, 0);
	conf_spin(20000000);
	for (int i = 0; i < GROUPS; i++) {
		uint64_t buf[4];

		ioc(t, fd[i], PERF_EVENT_IOC_DISABLE, 0);
		PMC_CHECK_EQ(t, read(fd[i], buf, sizeof(buf)), 8 * 4);
		PMC_CHECK(t, buf[2] <= buf[1]);
		mux += buf[2] < buf[1];
	}
	PMC_CHECK(t, mux > 0);
	pmc_test_note(t, "%d of %d events multiplexed", mux, GROUPS);
}

/* ---- limits and known bugs ---------------------------------------------------------------------- */

/*
 * A group may only grow while every record it would write still fits: with
 * PERF_SAMPLE_READ and a group read format each sibling adds 16 bytes to the
 * sample, and the kernel refuses siblings (E2BIG, from
 * perf_event_validate_size) before the values pass 16 KiB, well inside what
 * a 16-bit record size can describe.  The events are never enabled, so a
 * kernel with the bug is not harmed by the check.
 */
CONF_TEST(limits, group_read_size_bounded, .timeout = 60)
{
	struct perf_event_attr a;
	struct rlimit rl = { 8192, 8192 };
	int leader, n;

	declare_known_issue(t, "validate_size");
	setrlimit(RLIMIT_NOFILE, &rl);
	sw_attr(&a, PERF_COUNT_SW_DUMMY);
	a.sample_period = 1;
	a.sample_type = PERF_SAMPLE_READ;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	leader = OPEN(t, &a, 0, -1, -1, 0);
	for (n = 0; n < 6000; n++)
		if (peo(&a, 0, -1, leader, 0) < 0)
			break;
	if (n == 6000)
		pmc_test_fail(t, "6000 siblings accepted: a sample would hold %d bytes of values, more than a 16-bit record size", 6000 * 16);
	if (errno == EMFILE)
		pmc_test_skip(t, "ran out of descriptors (%d siblings) before the kernel's limit", n);
	PMC_CHECK_EQ(t, errno, E2BIG);
	PMC_CHECK(t, (n + 1) * 16 <= 16 * 1024);
	pmc_test_note(t, "refused with E2BIG after %d siblings", n);
}
