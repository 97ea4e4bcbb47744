/* SPDX-License-Identifier: MIT */
/*
 * What does one region begin+end cost?
 *
 * For 1, 4 and 8 events on each read path this machine has, time a loop of
 * pmc_region_begin()+pmc_region_end() and, in the same run and interleaved
 * with it, a minimal hand-written equivalent on the same path:
 *   read(2) path: perf_event_open(2) of the same group, then per iteration
 *                 two read(2)s of the leader and the per-event differences;
 *   user path:    mmap'd pages, per iteration two passes of the seqlock loop
 *                 with rdpmc / mrs, and the differences.
 * Reported: median nanoseconds per begin+end over several trials, and the
 * ratio framework / hand-written, against two references: values only, and the
 * manual's complete loop with time_enabled/time_running.  Figures, not a
 * pass/fail test: timing on a shared machine is not a test verdict.
 *
 *   pmcheck_overhead [--iterations=N] [--trials=N]
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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
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
		a.config1 = s->config1 | (user && s->uses_hw_counter && a.type != PERF_TYPE_SOFTWARE
					  ? 0x2 : 0); /* arm64 user access; ignored on x86 */
		a.exclude_kernel = s->exclude_kernel;
		a.exclude_hv = s->exclude_hv;
		a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
				PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		a.disabled = i == 0;
		h->fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, i ? h->fd[0] : -1, 0);
		h->n = i + 1;
		if (h->fd[i] < 0 && user) {
			a.config1 = s->config1;
			h->fd[i] = (int)syscall(SYS_perf_event_open, &a, 0, -1, i ? h->fd[0] : -1, 0);
		}
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
#define HAVE_HAND_USER 1
#elif defined(__aarch64__)
/* The reference reads only the first two counters' registers the QEMU lane
 * hands out; other indices fall back to read(2) in the loop below. */
static inline uint64_t hand_rdpmc(uint32_t c)
{
	uint64_t v = 0;

	if (c == 31)
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
	else if (c == 0)
		__asm__ __volatile__("mrs %0, pmevcntr0_el0" : "=r"(v));
	else if (c == 1)
		__asm__ __volatile__("mrs %0, pmevcntr1_el0" : "=r"(v));
	else if (c == 2)
		__asm__ __volatile__("mrs %0, pmevcntr2_el0" : "=r"(v));
	else if (c == 3)
		__asm__ __volatile__("mrs %0, pmevcntr3_el0" : "=r"(v));
	else if (c == 4)
		__asm__ __volatile__("mrs %0, pmevcntr4_el0" : "=r"(v));
	else if (c == 5)
		__asm__ __volatile__("mrs %0, pmevcntr5_el0" : "=r"(v));
	return v;
}
#define HAVE_HAND_USER 1
#else
#define HAVE_HAND_USER 0
#endif

/* One user-page read per event: the documented seqlock loop, nothing more. */
static void hand_user_read(struct hand *h, uint64_t *v)
{
#if HAVE_HAND_USER
	for (size_t i = 0; i < h->n; i++) {
		volatile struct perf_event_mmap_page *pc = h->page[i];
		uint32_t seq, idx;
		uint64_t count;

		do {
			seq = pc->lock;
			__asm__ __volatile__("" ::: "memory");
			idx = pc->index;
			count = pc->offset;
			if (idx) {
				unsigned shift = 64 - pc->pmc_width;

				count += (uint64_t)((int64_t)(hand_rdpmc(idx - 1) << shift) >> shift);
			}
			__asm__ __volatile__("" ::: "memory");
		} while (pc->lock != seq);
		v[i] = count;
	}
#else
	(void)h;
	(void)v;
#endif
}

#if HAVE_HAND_USER
#if defined(__x86_64__)
static inline uint64_t hand_timestamp(void)
{
	uint32_t lo, hi;

	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#else
static inline uint64_t hand_timestamp(void)
{
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#endif
#endif

/* The manual's complete loop: the value, and time_enabled / time_running
 * brought up to now from the timestamp (time_offset, time_mult, time_shift),
 * which is what a reader needs to tell multiplexed counts apart. */
static void hand_user_read_times(struct hand *h, uint64_t *v, uint64_t *en, uint64_t *ru)
{
#if HAVE_HAND_USER
	for (size_t i = 0; i < h->n; i++) {
		volatile struct perf_event_mmap_page *pc = h->page[i];
		uint64_t count, enabled, running, cyc, quot, rem, delta;
		uint32_t seq, idx;

		do {
			seq = pc->lock;
			__asm__ __volatile__("" ::: "memory");
			enabled = pc->time_enabled;
			running = pc->time_running;
			idx = pc->index;
			count = pc->offset;
			if (idx) {
				unsigned shift = 64 - pc->pmc_width;

				count += (uint64_t)((int64_t)(hand_rdpmc(idx - 1) << shift) >> shift);
			}
			if (pc->cap_user_time) {
				cyc = hand_timestamp();
				quot = cyc >> pc->time_shift;
				rem = cyc & (((uint64_t)1 << pc->time_shift) - 1);
				delta = pc->time_offset + quot * pc->time_mult +
					((rem * pc->time_mult) >> pc->time_shift);
				enabled += delta;
				if (idx)
					running += delta;
			}
			__asm__ __volatile__("" ::: "memory");
		} while (pc->lock != seq);
		v[i] = count;
		en[i] = enabled;
		ru[i] = running;
	}
#else
	(void)h;
	(void)v;
	(void)en;
	(void)ru;
#endif
}

static double run_hand_times(struct hand *h, unsigned iters)
{
	uint64_t a[8], b[8], ea[8], eb[8], ra[8], rb[8], d[8] = { 0 }, t0, t1;

	t0 = now_ns();
	for (unsigned it = 0; it < iters; it++) {
		hand_user_read_times(h, a, ea, ra);
		hand_user_read_times(h, b, eb, rb);
		for (size_t i = 0; i < h->n; i++)
			d[i] += (b[i] - a[i]) + ((eb[i] - ea[i]) != (rb[i] - ra[i]));
		__asm__ __volatile__("" : : "r"(d) : "memory");
	}
	t1 = now_ns();
	return (double)(t1 - t0) / iters;
}

static double run_hand(struct hand *h, int user, unsigned iters)
{
	uint64_t a[8], b[8], d[8] = { 0 }, t0, t1;
	size_t want = (3 + 2 * h->n) * sizeof(uint64_t);

	t0 = now_ns();
	for (unsigned it = 0; it < iters; it++) {
		if (user) {
			hand_user_read(h, a);
			hand_user_read(h, b);
		} else {
			if (read(h->fd[0], h->buf, want) != (ssize_t)want)
				return -1;
			for (size_t i = 0; i < h->n; i++)
				a[i] = h->buf[3 + 2 * i];
			if (read(h->fd[0], h->buf, want) != (ssize_t)want)
				return -1;
			for (size_t i = 0; i < h->n; i++)
				b[i] = h->buf[3 + 2 * i];
		}
		for (size_t i = 0; i < h->n; i++)
			d[i] += b[i] - a[i];
		__asm__ __volatile__("" : : "r"(d) : "memory");
	}
	t1 = now_ns();
	return (double)(t1 - t0) / iters;
}

static double run_framework(struct pmc_counters *set, unsigned iters)
{
	struct pmc_region r;
	struct pmc_measurement m;
	uint64_t t0, t1, sink = 0;

	pmc_region_init(&r, set);
	t0 = now_ns();
	for (unsigned it = 0; it < iters; it++) {
		pmc_region_begin(&r);
		pmc_region_end(&r, &m);
		sink += m.d[0].value;
	}
	t1 = now_ns();
	PMC_DO_NOT_OPTIMIZE(sink);
	return (double)(t1 - t0) / iters;
}

/* ---- driver ----------------------------------------------------------------- */

static int bench(const char *label, const char *const *names, size_t n, unsigned iters,
		 unsigned trials)
{
	struct pmc_event_spec specs[8] = { 0 };
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	struct hand h;
	double fw[MAX_TRIALS], hw[MAX_TRIALS], ht[MAX_TRIALS];
	int user;

	for (size_t i = 0; i < n; i++)
		if (pmc_event_parse(names[i], &specs[i], &err)) {
			printf("%-10s %6zu  unavailable: %s\n", label, n, err.message);
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
		printf("%-10s %6zu  unavailable: %s\n", label, n, err.message);
		return 0;
	}
	pmc_counters_enable(set);
	user = pmc_counters_path(set) == PMC_PATH_USER;
	if (strcmp(label, "user") == 0 && !user) {
		printf("%-10s %6zu  unavailable: the kernel offers no user-space reads for these events\n",
		       label, n);
		pmc_counters_close(set);
		return 0;
	}
	if (user && pmc_counters_groups(set) > 1) {
		/* The reference reads one group; one this PMU cannot hold never
		 * runs, and reading it would time a stale offset. */
		printf("%-10s %6zu  not comparable: this PMU schedules these events as %zu groups that take turns\n",
		       label, n, pmc_counters_groups(set));
		pmc_counters_close(set);
		return 0;
	}
	if (hand_open(&h, set, user)) {
		printf("%-10s %6zu  hand-written reference could not open: %s\n", label, n,
		       strerror(errno));
		hand_close(&h);
		pmc_counters_close(set);
		return 1;
	}
	/*
	 * Warm up both, then interleave trials so drift hits both alike.  Only
	 * the side being timed is enabled: two sets of hardware events would
	 * otherwise compete for the counters and take turns (multiplexing),
	 * and neither would be read the way it is when alone.
	 */
	for (unsigned t = 0; t <= trials; t++) {
		/* Round 0 is the warm-up; its figures are overwritten. */
		unsigned it = t == 0 ? iters / 10 + 1 : iters, slot = t == 0 ? 0 : t - 1;

		ioctl(h.fd[0], PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP);
		pmc_counters_enable(set);
		fw[slot] = run_framework(set, it);
		pmc_counters_disable(set);
		ioctl(h.fd[0], PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
		hw[slot] = run_hand(&h, user, it);
		/* read(2) always returns the times: there the two references agree. */
		ht[slot] = user ? run_hand_times(&h, it) : hw[slot];
	}
	qsort(fw, trials, sizeof(double), cmp_double);
	qsort(hw, trials, sizeof(double), cmp_double);
	qsort(ht, trials, sizeof(double), cmp_double);
	printf("%-10s %6zu  %10.1f  %10.1f %6.3f  %10.1f %6.3f   groups %zu%s\n", label, n,
	       fw[trials / 2], hw[trials / 2], fw[trials / 2] / hw[trials / 2], ht[trials / 2],
	       fw[trials / 2] / ht[trials / 2], pmc_counters_groups(set),
	       names == hw_events_few ? " (instructions/cycles only)" : "");
	hand_close(&h);
	pmc_counters_close(set);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned iters = 20000, trials = 9;
	static const size_t sizes[] = { 1, 4, 8 };
	int rc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--iterations=", 13))
			iters = (unsigned)strtoul(argv[i] + 13, NULL, 10);
		else if (!strncmp(argv[i], "--trials=", 9))
			trials = (unsigned)strtoul(argv[i] + 9, NULL, 10);
		else {
			bool help = !strcmp(argv[i], "--help");

			fprintf(help ? stdout : stderr,
				"usage: %s [--iterations=N] [--trials=N (<= %d)]\n"
				"the cost of one region begin+end against hand-written loops, measured in one run\n",
				argv[0], MAX_TRIALS);
			return help ? 0 : 2;
		}
	}
	if (iters == 0 || trials == 0 || trials > MAX_TRIALS) {
		fprintf(stderr, "pmcheck_overhead: iterations must be > 0 and trials 1..%d\n",
			MAX_TRIALS);
		return 2;
	}
	printf("region begin+end cost: median of %u trials x %u iterations (ns per begin+end)\n",
	       trials, iters);
	printf("%-10s %6s  %10s  %10s %6s  %10s %6s\n", "path", "events", "pmcheck", "hand:value",
	       "ratio", "hand:+times", "ratio");
	for (size_t k = 0; k < 3; k++)
		rc |= bench("read(2)", sw_events, sizes[k], iters, trials);
	for (size_t k = 0; k < 3; k++)
		rc |= bench("user", hw_events, sizes[k], iters, trials);
	return rc;
}
