/* SPDX-License-Identifier: MIT */
/*
 * The hardware path on a real PMU: user-space reads against read(2), group
 * reads, multiplexing, greedy group splitting, and the user page's seqlock
 * and width on live pages.  On a machine without a CPU PMU every case skips
 * with the core's reason; the emulated arm64 lane (ci/qemu-lane) runs them
 * on QEMU's PMUv3, where -icount makes instruction counts exact.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "../../suites/common/kernels.h"
#include "t.h"

#define N 100000u

/* Open `events` or skip with the core's reason when this machine cannot. */
static struct pmc_counters *open_or_skip(const char *events, unsigned flags)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set;
	struct pmc_error err;
	size_t n;
	int rc;

	rc = pmc_event_parse_list(events, specs, PMC_MAX_EVENTS, &n, &err);
	if (rc == 0)
		rc = pmc_counters_open(&set, specs, n, flags, &err);
	if (rc == PMC_E_NO_HW_PMU || rc == PMC_E_UNSUPPORTED || rc == PMC_E_UNKNOWN_EVENT ||
	    rc == PMC_E_NO_PMU || rc == -ENOENT)
		T_SKIP("%s", err.message);
	if (rc == 0 && (rc = pmc_counters_enable(set)) != 0)
		snprintf(err.message, sizeof(err.message), "enable: %s", pmc_strerror(rc));
	if (rc) {
		printf("FAIL %s: open %s: %s\n", t_current, events, err.message);
		exit(1);
	}
	return set;
}

static struct pmc_measurement measure_loop(struct pmc_counters *set, uint64_t n)
{
	struct pmc_measurement m;
	struct pmc_region r;
	uint64_t acc;

	pmc_region_init(&r, set);
	pmc_region_begin(&r);
	acc = kernel_loop(n);
	PMC_DO_NOT_OPTIMIZE(acc);
	pmc_region_end(&r, &m);
	return m;
}

/*
 * A known loop through the user-space path (rdpmc / mrs): the same count on
 * every run, KERNEL_LOOP_INSNS per iteration plus a small fixed cost for the
 * asm block and the end of the begin reading.  Exact with QEMU's -icount.
 */
T_CASE(loop_exact_user_path)
{
	struct pmc_counters *set = open_or_skip("instructions:u", 0);
	struct pmc_measurement overhead;
	uint64_t first = 0;

	if (pmc_counters_path(set) != PMC_PATH_USER)
		T_SKIP("the kernel offers no user-space reads for instructions:u here (cap_user_rdpmc 0 or perf_user_access 0)");
	T_CHECK(pmc_counters_overhead(set, 16, &overhead) == 0, "overhead");
	for (int rep = 0; rep < 6; rep++) {
		struct pmc_measurement m = measure_loop(set, N);

		pmc_measurement_subtract(&m, &overhead);
		T_CHECK(m.d[0].flags == 0, "rep %d: flags %#x", rep, m.d[0].flags);
		T_CHECK(m.d[0].value >= KERNEL_LOOP_INSNS * N &&
				m.d[0].value <= KERNEL_LOOP_INSNS * N + 16,
			"rep %d: %" PRIu64 " instructions, want 3 x %u + (0..16)", rep, m.d[0].value,
			N);
		if (rep == 0)
			first = m.d[0].value;
		else
			T_CHECK(m.d[0].value == first, "rep %d: %" PRIu64 " != rep 0 %" PRIu64, rep,
				m.d[0].value, first);
	}
	printf("loop of %u: %" PRIu64 " instructions:u (user path, overhead %" PRIu64 " subtracted)\n",
	       N, first, overhead.d[0].value);
	pmc_counters_close(set);
}

/*
 * The same loop read through read(2): the raw region differs from the user
 * path's by the user-space instructions of the read() wrapper (the system
 * call itself is in the kernel, excluded by :u), a constant; once each
 * path's empty-region cost is subtracted the two agree exactly.
 */
T_CASE(user_path_equals_read_path)
{
	struct pmc_counters *user = open_or_skip("instructions:u", 0);
	struct pmc_counters *sys = open_or_skip("instructions:u", PMC_OPEN_NO_USER_READ);
	struct pmc_measurement ou, os, mu, ms;

	if (pmc_counters_path(user) != PMC_PATH_USER)
		T_SKIP("no user-space reads here: nothing to compare the read(2) path with");
	T_CHECK(pmc_counters_path(sys) == PMC_PATH_READ, "NO_USER_READ uses read(2)");
	T_CHECK(pmc_counters_overhead(user, 16, &ou) == 0 && pmc_counters_overhead(sys, 16, &os) == 0,
		"overheads");
	for (int rep = 0; rep < 4; rep++) {
		mu = measure_loop(user, N);
		ms = measure_loop(sys, N);
		T_CHECK(ms.d[0].value - mu.d[0].value == os.d[0].value - ou.d[0].value,
			"raw difference %" PRIu64 " - %" PRIu64 " must equal the overhead difference %" PRIu64 " - %" PRIu64,
			ms.d[0].value, mu.d[0].value, os.d[0].value, ou.d[0].value);
		pmc_measurement_subtract(&mu, &ou);
		pmc_measurement_subtract(&ms, &os);
		T_CHECK(mu.d[0].value == ms.d[0].value,
			"rep %d: user path %" PRIu64 " != read path %" PRIu64, rep, mu.d[0].value,
			ms.d[0].value);
	}
	printf("empty region: user path %" PRIu64 ", read(2) path %" PRIu64 " instructions:u\n",
	       ou.d[0].value, os.d[0].value);
	pmc_counters_close(user);
	pmc_counters_close(sys);
}

/*
 * instructions and cycles in one group: one read(2) returns both with one
 * pair of times, so they were counted over exactly the same interval.
 */
T_CASE(group_read_atomic)
{
	struct pmc_counters *set = open_or_skip("instructions:u,cycles:u", PMC_OPEN_NO_USER_READ);
	struct pmc_measurement m;

	T_CHECK(pmc_counters_groups(set) == 1 && pmc_counters_group_of(set, 1) == 0,
		"one group for instructions+cycles (%zu groups)", pmc_counters_groups(set));
	m = measure_loop(set, N);
	T_CHECK(m.d[0].enabled_ns == m.d[1].enabled_ns && m.d[0].running_ns == m.d[1].running_ns,
		"one time pair per group: %" PRIu64 "/%" PRIu64 " vs %" PRIu64 "/%" PRIu64,
		m.d[0].enabled_ns, m.d[0].running_ns, m.d[1].enabled_ns, m.d[1].running_ns);
	T_CHECK(m.d[0].flags == 0 && m.d[1].flags == 0, "not multiplexed");
	T_CHECK(m.d[0].value >= KERNEL_LOOP_INSNS * N && m.d[1].value > 0,
		"instructions %" PRIu64 ", cycles %" PRIu64, m.d[0].value, m.d[1].value);
	printf("group: instructions:u %" PRIu64 ", cycles:u %" PRIu64 "\n", m.d[0].value, m.d[1].value);
	pmc_counters_close(set);
}

#define MANY 10
#define MANY_EVENTS                                                                     \
	"instructions:u,instructions:u,instructions:u,instructions:u,instructions:u,"   \
	"instructions:u,instructions:u,instructions:u,instructions:u,instructions:u"

/* How many instruction events run together, counted without the core: a
 * fresh group of n raw events per try, run, and asked whether it ran (the
 * core's own split once trusted totals that earlier runs had inflated). */
static size_t counters_by_growing(void)
{
	size_t n;

	for (n = 1; n <= MANY; n++) {
		struct perf_event_attr a;
		uint64_t buf[3 + MANY];
		int fd[MANY], ok = 0;
		size_t k;

		for (k = 0; k < n; k++) {
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = PERF_TYPE_HARDWARE;
			a.config = PERF_COUNT_HW_INSTRUCTIONS;
			a.exclude_kernel = 1;
			a.exclude_hv = 1;
			a.disabled = k == 0;
			a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
					PERF_FORMAT_TOTAL_TIME_RUNNING;
			fd[k] = (int)syscall(SYS_perf_event_open, &a, 0, -1, k ? fd[0] : -1, 0);
			if (fd[k] < 0)
				break;
		}
		if (k == n) {
			ioctl(fd[0], PERF_EVENT_IOC_ENABLE, 0);
			kernel_loop(100000);
			ioctl(fd[0], PERF_EVENT_IOC_DISABLE, 0);
			ok = read(fd[0], buf, sizeof(buf)) > 0 && buf[2] > 0;
		}
		while (k-- > 0)
			close(fd[k]);
		if (!ok)
			break;
	}
	return n - 1;
}

/*
 * More instruction events than counters: the set is split greedily into
 * groups that each fit (the first as large as the PMU allows), and all of
 * them are read.
 */
T_CASE(greedy_split)
{
	/* Counted before the set below occupies the PMU. */
	size_t fit = counters_by_growing(), first = 0;
	struct pmc_counters *set = open_or_skip(MANY_EVENTS, 0);
	char desc[512];

	pmc_counters_describe(set, desc, sizeof(desc));
	for (size_t i = 0; i < MANY; i++)
		first += pmc_counters_group_of(set, i) == 0;
	T_CHECK(fit >= 1 && fit < MANY, "a group holds %zu instruction events (%s)", fit, desc);
	T_CHECK(first == fit, "first group takes as many as fit: %zu, want %zu (%s)", first, fit, desc);
	T_CHECK(pmc_counters_groups(set) == (MANY + fit - 1) / fit, "%zu groups for %d events of %zu per group: %s",
		pmc_counters_groups(set), MANY, fit, desc);
	printf("%d x instructions:u -> %s (%zu per group)\n", MANY, desc, fit);
	pmc_counters_close(set);
}

/*
 * Several groups on one PMU take turns (the kernel rotates them every
 * perf_event_mux_interval_ms): the readings say so with running < enabled,
 * and the values are the raw partial counts, never scaled.
 */
T_CASE(multiplexing_detected)
{
	struct pmc_counters *set = open_or_skip(MANY_EVENTS, 0);
	struct pmc_measurement m;
	size_t mux = 0;
	/* ~30 M instructions: several mux intervals even at 1 instruction/ns. */
	uint64_t n = 10000000;

	if (pmc_counters_groups(set) < 2)
		T_SKIP("all %d events fit one group on this PMU: nothing to multiplex", MANY);
	m = measure_loop(set, n);
	for (size_t i = 0; i < MANY; i++) {
		T_CHECK(m.d[i].running_ns <= m.d[i].enabled_ns, "event %zu: running > enabled", i);
		/* Every group fits the PMU on its own, so the rotation gives each
		 * some time: an event never counted means a group that cannot run
		 * (a bad split), not multiplexing. */
		T_CHECK(!(m.d[i].flags & PMC_DELTA_NOT_COUNTED), "event %zu never counted: %s", i,
			"a group larger than the PMU");
		if (m.d[i].flags & PMC_DELTA_MULTIPLEXED) {
			mux++;
			T_CHECK(m.d[i].value < KERNEL_LOOP_INSNS * n,
				"event %zu multiplexed yet reports %" PRIu64 " >= the whole loop: scaled?",
				i, m.d[i].value);
		}
	}
	T_CHECK(mux > 0, "no event was multiplexed over %" PRIu64 " iterations", n);
	printf("%zu of %d events multiplexed:", mux, MANY);
	for (size_t i = 0; i < MANY; i++)
		printf(" [%zu] %" PRIu64 "/%" PRIu64 " ns%s", i, m.d[i].running_ns, m.d[i].enabled_ns,
		       m.d[i].flags & PMC_DELTA_NOT_COUNTED ? " never counted" : "");
	printf("\n");
	pmc_counters_close(set);
}

/*
 * The live user page: cap_user_rdpmc, pmc_width and index as the manual
 * page describes them; user-path readings interleaved with read(2) and with
 * context switches (which move the counter and bump the seqlock) stay
 * monotonic and consistent.
 */
T_CASE(user_page_live)
{
	struct pmc_counters *set = open_or_skip("instructions:u", 0);
	struct perf_event_mmap_page *pg;
	long psize = sysconf(_SC_PAGESIZE);
	uint64_t prev = 0;
	uint32_t seq0;

	if (pmc_counters_path(set) != PMC_PATH_USER)
		T_SKIP("no user-space reads here");
	pg = mmap(NULL, (size_t)psize, PROT_READ, MAP_SHARED, pmc_counters_fd(set, 0), 0);
	T_CHECK(pg != MAP_FAILED, "map the page");
	if (pg == MAP_FAILED)
		return;
	T_CHECK(pg->cap_user_rdpmc == 1, "cap_user_rdpmc %u", (unsigned)pg->cap_user_rdpmc);
	T_CHECK(pg->pmc_width == 64 || (pg->pmc_width >= 32 && pg->pmc_width <= 64),
		"pmc_width %u", (unsigned)pg->pmc_width);
	T_CHECK(pg->index != 0, "index 0 while counting");
	seq0 = pg->lock;
	for (int i = 0; i < 2000; i++) {
		struct pmc_reading a, b;
		uint64_t buf[8];
		ssize_t got;

		pmc_counters_read(set, &a);
		got = read(pmc_counters_fd(set, 0), buf, sizeof(buf));
		pmc_counters_read(set, &b);
		T_CHECK(got > 0, "read(2)");
		/* GROUP read format: nr, enabled, running, {value, id} */
		T_CHECK(a.c[0].value <= buf[3] && buf[3] <= b.c[0].value && prev <= a.c[0].value,
			"iteration %d: %" PRIu64 " <= %" PRIu64 " <= %" PRIu64 " (previous %" PRIu64 ")",
			i, a.c[0].value, buf[3], b.c[0].value, prev);
		prev = b.c[0].value;
		if (i % 100 == 0) {
			struct timespec ts = { 0, 200000 };

			sched_yield();
			nanosleep(&ts, NULL); /* off the CPU and back: a new seqlock round */
		}
		if (t_failed)
			break;
	}
	T_CHECK(pg->lock != seq0, "the seqlock moved over the context switches (%u -> %u)", seq0,
		(unsigned)pg->lock);
	printf("pmc_width %u, index %u, lock %u -> %u\n", (unsigned)pg->pmc_width,
	       (unsigned)pg->index, seq0, (unsigned)pg->lock);
	munmap(pg, (size_t)psize);
	pmc_counters_close(set);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
