/* SPDX-License-Identifier: MIT */
/*
 * What a `calls:` event costs to set up and take down, split between
 * pmcheck and the kernel.  Each round: pmcheck parses the event (the symbol
 * lookup in the loaded objects), opens and closes a one-event set; then the
 * same uprobe is opened and closed with a bare perf_event_open(2), which is
 * the kernel's share (registration, and unregistration, which waits for
 * grace periods), the two in alternating order.  pmcheck's own work in an
 * open and close is measured on a software event, whose kernel side takes
 * microseconds, less a bare open of it: the difference of two uprobe opens is
 * lost in their spread.  Medians and 99th percentiles in milliseconds.
 *
 * usage: pmcheck_calls_cost [--rounds=N] [EVENT]    (default calls:malloc, 51)
 * Exit 77 when this machine cannot open a uprobe (the reason is printed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* "median M (p99 P)" of n values (sorted in place). */
static void summary(const char *what, double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp);
	printf("  %-40s median %8.3f ms   p99 %8.3f ms\n", what, v[n / 2],
	       v[(size_t)((double)(n - 1) * 0.99)]);
}

static int raw_open(const struct pmc_event_spec *s)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = s->type;
	a.config = s->config;
	a.uprobe_path = (uint64_t)(uintptr_t)s->path;
	a.probe_offset = s->probe_offset;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED |
			PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.disabled = 1;
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

int main(int argc, char **argv)
{
	const char *event = "calls:malloc";
	size_t rounds = 51;
	double *parse, *open_p, *close_p, *open_k, *close_k, *own;
	static double *block;

	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "--rounds=", 9) && atoi(argv[i] + 9) > 0)
			rounds = (size_t)atoi(argv[i] + 9);
		else if (argv[i][0] != '-')
			event = argv[i];
		else {
			fprintf(stderr, "usage: pmcheck_calls_cost [--rounds=N] [EVENT]\n");
			return 2;
		}
	}
	/* One block, six columns (static: still reachable on a SKIP exit). */
	block = calloc(6 * rounds, sizeof(double));
	if (!block)
		return 2;
	parse = block;
	open_p = block + rounds;
	close_p = block + 2 * rounds;
	open_k = block + 3 * rounds;
	close_k = block + 4 * rounds;
	own = block + 5 * rounds;
	for (size_t r = 0; r < rounds; r++) {
		struct pmc_event_spec spec;
		struct pmc_counters *set;
		struct pmc_error err;
		double t0, t1, t2, t3;
		int fd;

		t0 = now_ms();
		if (pmc_event_parse(event, &spec, &err) != 0) {
			printf("SKIP %s: %s\n", event, err.message);
			return 77;
		}
		parse[r] = now_ms() - t0;
		/* Alternate which goes first: a close's unregistration delays the
		 * next registration, and the order must not favour either. */
		for (int which = 0; which < 2; which++) {
			if ((which == 0) == (r % 2 == 0)) {
				t1 = now_ms();
				if (pmc_counters_open(&set, &spec, 1, 0, &err) != 0) {
					printf("SKIP %s: %s\n", event, err.message);
					return 77;
				}
				t2 = now_ms();
				pmc_counters_close(set);
				t3 = now_ms();
				open_p[r] = t2 - t1;
				close_p[r] = t3 - t2;
			} else {
				t1 = now_ms();
				fd = raw_open(&spec);
				t2 = now_ms();
				if (fd < 0) {
					printf("SKIP %s: bare perf_event_open: %s\n", event, strerror(errno));
					return 77;
				}
				close(fd);
				t3 = now_ms();
				open_k[r] = t2 - t1;
				close_k[r] = t3 - t2;
			}
		}
		/* pmcheck's own work in an open, apart from the kernel's: the
		 * same open of a software event, whose kernel side is cheap,
		 * less a bare open of it. */
		{
			struct pmc_event_spec sw;
			struct pmc_counters *s2;
			struct perf_event_attr a;
			double u0, u1, u2;
			int f2;

			pmc_event_parse("page-faults:u", &sw, &err);
			memset(&a, 0, sizeof(a));
			a.size = sizeof(a);
			a.type = sw.type;
			a.config = sw.config;
			a.exclude_kernel = a.exclude_hv = 1;
			a.disabled = 1;
			a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
					PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
			u0 = now_ms();
			if (pmc_counters_open(&s2, &sw, 1, 0, &err) == 0)
				pmc_counters_close(s2);
			u1 = now_ms();
			f2 = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
			if (f2 >= 0)
				close(f2);
			u2 = now_ms();
			own[r] = (u1 - u0) - (u2 - u1);
		}
	}
	printf("setting up and taking down %s, %zu rounds\n", event, rounds);
	summary("pmcheck: parse (symbol lookup)", parse, rounds);
	summary("pmcheck: open", open_p, rounds);
	summary("kernel: bare perf_event_open", open_k, rounds);
	summary("pmcheck's own work in an open and close", own, rounds);
	summary("pmcheck: close", close_p, rounds);
	summary("kernel: bare close", close_k, rounds);
	free(block);
	printf("  (pmcheck's own work: its open and close of a software event, whose kernel side\n"
	       "   takes microseconds, less a bare open and close of it; a uprobe's open and close\n"
	       "   add that work to the kernel's. Parse and own work together are pmcheck's share.)\n");
	return 0;
}
