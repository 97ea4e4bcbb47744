/* SPDX-License-Identifier: MIT */
/*
 * Conformance, continued: software events, uprobes, tracepoints, the
 * hardware cases (a PMU; the emulated lane runs them), and limits with
 * known kernel bugs.  The ring buffer is conf_ring.c.
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
 * Documented kernel bugs, by the mainline releases that broke and fixed
 * them.  A case whose kernel is in between declares the bug before
 * checking; if the check then fails the verdict is KNOWN-ISSUE (with the
 * fix to look for), and if it passes the kernel carries a backport (PASS,
 * with a note).
 */
static const struct known_issue {
	const char *id;
	int broken, fixed; /* major * 1000 + minor: from `broken` until `fixed` */
	const char *what;
} known_issues[] = {
	{ "validate_size", 0, 6007,
	  "perf_event_validate_size() did not bound the read size of a growing group "
	  "(CVE-2023-6931), fixed by 382c27f4ed28 \"perf: Fix perf_event_validate_size()\" in "
	  "Linux 6.7, with stable backports" },
	{ "exit_read", 5013, 6019,
	  "an inherited event's PERF_RECORD_READ at thread exit (inherit_stat) was not written "
	  "from Linux 5.13 (ef54c1a476ae) until c418d8b4d7a4 \"perf/core: Fix missing read event "
	  "generation on task exit\" (December 2025, Linux 6.19, with stable backports)" },
};

void conf_known_issue(struct pmc_test *t, const char *id)
{
	int v = conf_kernel_version();

	for (size_t i = 0; i < sizeof(known_issues) / sizeof(known_issues[0]); i++)
		if (!strcmp(known_issues[i].id, id) && v >= known_issues[i].broken &&
		    v < known_issues[i].fixed)
			pmc_test_known_issue(t, "%s", known_issues[i].what);
}

/* ---- software events ---------------------------------------------------------------------- */

/* PERF_COUNT_SW_TASK_CLOCK: "a clock count specific to the task that is
 * running", in ns: it agrees with the thread's CPU clock over a busy loop
 * (within 10%: the two clocks are read at slightly different instants).
 * Under a hypervisor the task clock also runs while the host steals the
 * CPU, and the thread's CPU clock does not: one busy spell of the host
 * took it past 10% once in a CI run on a 2-core guest.  So up to three
 * tries, each judged alone, and the first that agrees passes; a clock that
 * disagrees every time fails, with each try's figures. */
CONF_TEST(sw, task_clock_tracks_cpu_time)
{
	struct perf_event_attr a;
	uint64_t c0, c1, v, seen[3][2];
	int fd, tries = 0, agreed = 0;

	sw_attr(&a, PERF_COUNT_SW_TASK_CLOCK);
	fd = OPEN(t, &a, 0, -1, -1, 0);
	while (!agreed && tries < 3) {
		ioc(t, fd, PERF_EVENT_IOC_RESET, 0);
		c0 = conf_thread_cpu_ns();
		ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
		conf_spin(20000000);
		ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
		c1 = conf_thread_cpu_ns();
		v = read_u64(t, fd);
		seen[tries][0] = v;
		seen[tries][1] = c1 - c0;
		agreed = v > (c1 - c0) * 9 / 10 && v <= (c1 - c0) * 11 / 10;
		tries++;
	}
	if (!agreed)
		for (int i = 0; i < tries; i++)
			pmc_test_note(t, "try %d: task-clock %" PRIu64 " ns, thread CPU clock %" PRIu64 " ns", i + 1,
				      seen[i][0], seen[i][1]);
	PMC_CHECK(t, agreed);
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

/*
 * PERF_EVENT_IOC_SET_FILTER: "add an ftrace filter to this event": on the
 * lseek entry tracepoint, "whence == 2" counts the SEEK_END calls only (5
 * of 12), and a filter nothing matches counts 0.  A filter naming a field
 * the event does not have is refused (EINVAL), and so is any second filter
 * on an event that has one (EEXIST, ftrace_profile_set_filter; the manual
 * does not say).
 */
CONF_TEST(tp, set_filter_selects_exactly, .fixture = &with_tracefs)
{
	int fd = tracepoint_fd(t, "syscalls/sys_enter_lseek", 0, 0), none;

	ioc(t, fd, PERF_EVENT_IOC_SET_FILTER, (unsigned long)"whence == 2");
	ioc(t, fd, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 12; i++)
		lseek(STDIN_FILENO, 0, i < 5 ? SEEK_END : SEEK_SET);
	ioc(t, fd, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, read_u64(t, fd), 5);
	none = tracepoint_fd(t, "syscalls/sys_enter_lseek", 0, 0);
	ioc(t, none, PERF_EVENT_IOC_SET_FILTER, (unsigned long)"whence == 99");
	ioc(t, none, PERF_EVENT_IOC_ENABLE, 0);
	for (int i = 0; i < 12; i++)
		lseek(STDIN_FILENO, 0, SEEK_END);
	ioc(t, none, PERF_EVENT_IOC_DISABLE, 0);
	PMC_CHECK_EQ(t, read_u64(t, none), 0);
	EXPECT_ERRNO(t, ioctl(none, PERF_EVENT_IOC_SET_FILTER, (unsigned long)"whence == 1"), EEXIST);
	close(none);
	none = tracepoint_fd(t, "syscalls/sys_enter_lseek", 0, 0);
	EXPECT_ERRNO(t, ioctl(none, PERF_EVENT_IOC_SET_FILTER, (unsigned long)"no_such_field == 1"),
		     EINVAL);
	close(none);
	close(fd);
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
#if defined(__aarch64__)
	/* arm64 user-space counter access (the perf_user_access sysctl and
	 * config1 bit 1) arrived in Linux 5.17. */
	conf_require_kernel(t, 5, 17, "arm64 user-space counter access");
#endif
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

	conf_known_issue(t, "validate_size");
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
