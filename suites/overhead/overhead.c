/* SPDX-License-Identifier: MIT */
/*
 * What does one region begin+end cost?
 *
 * For 1, 4 and 7 events on each read path this machine has (7 fills a PMU
 * of 6 event counters and a cycle counter, such as the emulated lane's),
 * time a loop of pmc_region_begin()+pmc_region_end() and, in the same run
 * and alternating with it, a hand-written reader of the same group:
 *   read(2) path: two read(2)s of the leader and the per-event differences;
 *   user path:    per reading the seqlock loop over every counter's page
 *                 with all the checks a correct reader needs, the group's
 *                 times brought up to now once; then the differences.
 * Reported: the minimum over trials of nanoseconds per begin+end, the ratio
 * pmcheck / hand, and the load average.  On a shared machine these are
 * figures, not a verdict; under QEMU's -icount a nanosecond is one
 * instruction, the figures are exact, and --max-ratio turns the user-path
 * ratio into a check (the emulated lane runs it with 1.1).
 *
 *   pmcheck_overhead [--iterations=N] [--trials=N] [--max-ratio=R]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "loadavg.h"

#define MAX_TRIALS 31

static const char *const sw_events[8] = {
	"context-switches", "page-faults",   "minor-faults",     "major-faults",
	"cpu-migrations",   "alignment-faults", "emulation-faults", "task-clock",
};
static const char *const hw_events[8] = {
	"instructions:u", "cycles:u", "branches:u", "branch-misses:u",
	"cache-references:u", "cache-misses:u", "bus-cycles:u", "ref-cycles:u",
};
/* For PMUs with only instructions and cycles (QEMU's): the same number of
 * counters, all of the two events they have. */
static const char *const hw_events_few[8] = {
	"instructions:u", "cycles:u", "instructions:u", "instructions:u",
	"instructions:u", "instructions:u", "instructions:u", "instructions:u",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- the hand-written reference ------------------------------------------ */

struct hand {
	int fd[8];
	struct perf_event_mmap_page *page[8];
	size_t n;
	uint64_t buf[3 + 16];
};

static void hand_close(struct hand *h)
{
	for (size_t i = 0; i < h->n; i++) {
		if (h->page[i])
			munmap(h->page[i], (size_t)sysconf(_SC_PAGESIZE));
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	}
	h->n = 0;
}

/* Open the same events as `set`, as one group, the way a user would by hand. */
static int hand_open(struct hand *h, struct pmc_counters *set, int user)
{
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; i < pmc_counters_count(set); i++) {
		const struct pmc_event_spec *s = pmc_counters_spec(set, i);
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.size = sizeof(a);
		a.type = s->type;
		a.config = s->config;
		a.exclude_kernel = s->exclude_kernel;
		a.exclude_hv = s->exclude_hv;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = i == 0;
		/* arm64 user access (config1 bit 1), with a 64-bit counter
		 * (bit 0) where the PMU has one, as pmcheck opens them; x86
		 * ignores the bits.  Then without. */
		h->fd[i] = -1;
		for (int try = user && s->uses_hw_counter ? 0 : 2; try < 3 && h->fd[i] < 0; try++) {
			static const uint64_t bits[] = { 0x3, 0x2, 0 };

			a.config1 = s->config1 | bits[try];
			h->fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, i ? h->fd[0] : -1, 0);
		}
		h->n = i + 1;
		if (h->fd[i] < 0)
			return -errno;
		if (user) {
			void *p = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ, MAP_SHARED,
				       h->fd[i], 0);

			if (p == MAP_FAILED)
				return -errno;
			h->page[i] = p;
		}
	}
	ioctl(h->fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
	return 0;
}

#if defined(__x86_64__)
static inline uint64_t hand_rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(c));
	return (uint64_t)hi << 32 | lo;
}

static inline uint64_t hand_timestamp(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#define HAVE_HAND_USER 1
#elif defined(__aarch64__)
/* Any of the 31 event counters or the cycle counter (31): the register is
 * part of the instruction, so a reader that may be handed any counter needs
 * one mrs per register. */
#define HAND_CNTR(n)                                                   \
	case n:                                                        \
		__asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break
static inline uint64_t hand_rdpmc(uint32_t c)
{
	uint64_t v = 0;

	switch (c) {
		HAND_CNTR(0); HAND_CNTR(1); HAND_CNTR(2); HAND_CNTR(3); HAND_CNTR(4);
		HAND_CNTR(5); HAND_CNTR(6); HAND_CNTR(7); HAND_CNTR(8); HAND_CNTR(9);
		HAND_CNTR(10); HAND_CNTR(11); HAND_CNTR(12); HAND_CNTR(13); HAND_CNTR(14);
		HAND_CNTR(15); HAND_CNTR(16); HAND_CNTR(17); HAND_CNTR(18); HAND_CNTR(19);
		HAND_CNTR(20); HAND_CNTR(21); HAND_CNTR(22); HAND_CNTR(23); HAND_CNTR(24);
		HAND_CNTR(25); HAND_CNTR(26); HAND_CNTR(27); HAND_CNTR(28); HAND_CNTR(29);
		HAND_CNTR(30);
	case 31:
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}

static inline uint64_t hand_timestamp(void)
{
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#define HAVE_HAND_USER 1
#else
#define HAVE_HAND_USER 0
#endif

/*
 * The reference: a correct reader of one group, written by hand from the
 * manual page.  Per counter the documented seqlock loop with every check a
 * correct reader needs (cap_user_rdpmc, which the x86 sysfs switch can
 * clear at run time; index; the width, read from the page; a torn read
 * repeated); the leader's pass also brings time_enabled/time_running up to
 * now from the timestamp, honouring cap_user_time_short, which is how a
 * reader tells a multiplexed group apart.  A group is scheduled as a whole,
 * so one pair of times serves every member (as read(2) gives it).  Returns
 * 0, or -1 when a counter is not readable now (the caller would use read(2);
 * the benchmark counts it as a failure).
 */
static int hand_user_read(struct hand *h, uint64_t *v, uint64_t *en, uint64_t *ru)
{
#if HAVE_HAND_USER
	for (size_t i = 0; i < h->n; i++) {
		volatile struct perf_event_mmap_page *pc = h->page[i];
		uint64_t count, enabled = 0, running = 0, cyc, quot, rem, delta;
		uint32_t seq, idx;

		do {
			seq = pc->lock;
			__asm__ __volatile__("" ::: "memory");
			idx = pc->index;
			if (!pc->cap_user_rdpmc || !idx)
				return -1;
			if (i == 0) {
				enabled = pc->time_enabled;
				running = pc->time_running;
			}
			count = pc->offset;
			{
				unsigned shift = 64 - pc->pmc_width;

				count += (uint64_t)((int64_t)(hand_rdpmc(idx - 1) << shift) >> shift);
			}
			if (i == 0 && pc->cap_user_time) {
				cyc = hand_timestamp();
				if (pc->cap_user_time_short)
					cyc = pc->time_cycles +
					      ((cyc - pc->time_cycles) & pc->time_mask);
				quot = cyc >> pc->time_shift;
				rem = cyc & (((uint64_t)1 << pc->time_shift) - 1);
				delta = pc->time_offset + quot * pc->time_mult +
					((rem * pc->time_mult) >> pc->time_shift);
				enabled += delta;
				running += delta;
			}
			__asm__ __volatile__("" ::: "memory");
		} while (pc->lock != seq);
		v[i] = count;
		if (i == 0) {
			*en = enabled;
			*ru = running;
		}
	}
	return 0;
#else
	(void)h;
	(void)v;
	(void)en;
	(void)ru;
	return -1;
#endif
}

/* Per iteration two readings and what a measurement needs: each event's
 * difference, and whether the group ran the whole time. */
static double run_hand(struct hand *h, int user, unsigned iters)
{
	uint64_t a[8], b[8], d[8] = { 0 }, ea = 0, eb = 0, ra = 0, rb = 0, short_run = 0, t0, t1;
	size_t want = (3 + 2 * h->n) * sizeof(uint64_t);

	t0 = now_ns();
	for (unsigned it = 0; it < iters; it++) {
		if (user) {
			if (hand_user_read(h, a, &ea, &ra) || hand_user_read(h, b, &eb, &rb))
				return -1;
		} else {
			if (read(h->fd[0], h->buf, want) != (ssize_t)want)
				return -1;
			ea = h->buf[1];
			ra = h->buf[2];
			for (size_t i = 0; i < h->n; i++)
				a[i] = h->buf[3 + 2 * i];
			if (read(h->fd[0], h->buf, want) != (ssize_t)want)
				return -1;
			eb = h->buf[1];
			rb = h->buf[2];
			for (size_t i = 0; i < h->n; i++)
				b[i] = h->buf[3 + 2 * i];
		}
		short_run += (eb - ea) != (rb - ra);
		for (size_t i = 0; i < h->n; i++)
			d[i] += b[i] - a[i];
		__asm__ __volatile__("" : : "r"(d), "r"(short_run) : "memory");
	}
	t1 = now_ns();
	return (double)(t1 - t0) / iters;
}

static double run_framework(struct pmc_counters *set, unsigned iters)
{
	struct pmc_region r;
	struct pmc_measurement m;
	uint64_t t0, t1;

	pmc_region_init(&r, set);
	t0 = now_ns();
	for (unsigned it = 0; it < iters; it++) {
		pmc_region_begin(&r);
		pmc_region_end(&r, &m);
		/* Every event's delta is used, as the reference's are. */
		PMC_DO_NOT_OPTIMIZE(m);
	}
	t1 = now_ns();
	return (double)(t1 - t0) / iters;
}

/* ---- driver ----------------------------------------------------------------- */

static double min_of(const double *x, unsigned n)
{
	double m = x[0];

	for (unsigned i = 1; i < n; i++)
		m = x[i] < m ? x[i] : m;
	return m;
}

static double max_ratio = 0; /* --max-ratio: the user path's limit, 0 = none */
static int over_limit;

static int bench(const char *label, const char *const *names, size_t n, unsigned iters,
		 unsigned trials)
{
	struct pmc_event_spec specs[8] = { 0 };
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	struct hand h;
	double fw[MAX_TRIALS], hw[MAX_TRIALS], ratio;
	int user;

	for (size_t i = 0; i < n; i++)
		if (pmc_event_parse(names[i], &specs[i], &err)) {
			printf("%-8s %6zu  unavailable: %s\n", label, n, err.message);
			return 0;
		}
	if (pmc_counters_open(&set, specs, n, 0, &err) && names == hw_events) {
		/* A PMU with fewer event kinds: the same count of its two. */
		for (size_t i = 0; i < n; i++)
			pmc_event_parse(hw_events_few[i], &specs[i], &err);
		if (pmc_counters_open(&set, specs, n, 0, &err) == 0)
			names = hw_events_few;
	}
	if (!set) {
		printf("%-8s %6zu  unavailable: %s\n", label, n, err.message);
		return 0;
	}
	user = pmc_counters_path(set) == PMC_PATH_USER;
	if (strcmp(label, "user") == 0 && !user) {
		printf("%-8s %6zu  unavailable: the kernel offers no user-space reads for these events\n",
		       label, n);
		pmc_counters_close(set);
		return 0;
	}
	if (user && pmc_counters_groups(set) > 1) {
		/* The reference reads one group; one this PMU cannot hold never
		 * runs, and reading it would time a stale offset. */
		printf("%-8s %6zu  not comparable: this PMU schedules these events as %zu groups that take turns\n",
		       label, n, pmc_counters_groups(set));
		pmc_counters_close(set);
		return 0;
	}
	if (hand_open(&h, set, user)) {
		printf("%-8s %6zu  hand-written reference could not open: %s\n", label, n,
		       strerror(errno));
		hand_close(&h);
		pmc_counters_close(set);
		return 1;
	}
	/*
	 * Warm up both, then alternate trials so drift hits both alike.  Only
	 * the side being timed is enabled: two sets of hardware events would
	 * otherwise compete for the counters and take turns (multiplexing),
	 * and neither would be read the way it is when alone.  The minimum
	 * over trials is the figure: interrupts and timer ticks only add.
	 */
	ioctl(h.fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
	for (unsigned t = 0; t <= trials; t++) {
		/* Round 0 is the warm-up; its figures are overwritten. */
		unsigned it = t == 0 ? iters / 10 + 1 : iters, slot = t == 0 ? 0 : t - 1;

		pmc_counters_enable(set);
		fw[slot] = run_framework(set, it);
		pmc_counters_disable(set);
		ioctl(h.fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		hw[slot] = run_hand(&h, user, it);
		ioctl(h.fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
		if (fw[slot] < 0 || hw[slot] < 0) {
			printf("%-8s %6zu  %s reading failed (a counter left its register while enabled alone)\n",
			       label, n, fw[slot] < 0 ? "pmcheck's" : "the reference's");
			hand_close(&h);
			pmc_counters_close(set);
			return 1;
		}
	}
	ratio = min_of(fw, trials) / min_of(hw, trials);
	printf("%-8s %6zu  %10.1f  %10.1f  %6.3f   groups %zu%s\n", label, n, min_of(fw, trials),
	       min_of(hw, trials), ratio, pmc_counters_groups(set),
	       names == hw_events_few ? " (instructions/cycles only)" : "");
	if (user && max_ratio > 0 && ratio > max_ratio) {
		printf("%-8s %6zu  over the limit: ratio %.3f > %.3f\n", label, n, ratio, max_ratio);
		over_limit = 1;
	}
	hand_close(&h);
	pmc_counters_close(set);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned iters = 20000, trials = 9;
	static const size_t sizes[] = { 1, 4, 7 };
	double load0 = bench_loadavg();
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--iterations=", 13))
			iters = (unsigned)strtoul(argv[i] + 13, NULL, 10);
		else if (!strncmp(argv[i], "--trials=", 9))
			trials = (unsigned)strtoul(argv[i] + 9, NULL, 10);
		else if (!strncmp(argv[i], "--max-ratio=", 12))
			max_ratio = strtod(argv[i] + 12, NULL);
		else {
			bool help = !strcmp(argv[i], "--help");

			fprintf(help ? stdout : stderr,
				"usage: %s [--iterations=N] [--trials=N (<= %d)] [--max-ratio=R]\n"
				"the cost of one region begin+end against a hand-written reader, measured in one run;\n"
				"--max-ratio: exit 1 when a user-path ratio exceeds R (for machines whose\n"
				"figures are exact, such as QEMU with -icount, where a ns is an instruction)\n",
				argv[0], MAX_TRIALS);
			return help ? 0 : 2;
		}
	}
	if (iters == 0 || trials == 0 || trials > MAX_TRIALS || max_ratio < 0) {
		fprintf(stderr, "pmcheck_overhead: iterations must be > 0, trials 1..%d, max-ratio >= 0\n",
			MAX_TRIALS);
		return 2;
	}
	printf("region begin+end cost: minimum of %u trials x %u iterations (ns per begin+end)\n",
	       trials, iters);
	printf("reference: a hand-written reader of one group (read(2); or the user page's seqlock\n"
	       "loop with cap_user_rdpmc, index, width and the group's times, as the manual gives it)\n");
	printf("%-8s %6s  %10s  %10s  %6s\n", "path", "events", "pmcheck", "hand", "ratio");
	for (size_t k = 0; k < 3; k++)
		rc |= bench("read(2)", sw_events, sizes[k], iters, trials);
	for (size_t k = 0; k < 3; k++)
		rc |= bench("user", hw_events, sizes[k], iters, trials);
	printf("load average (1 min): %.2f before, %.2f after\n", load0, bench_loadavg());
	return rc ? rc : over_limit;
}
