/* SPDX-License-Identifier: MIT */
/*
 * Google Benchmark programs as suites (pmcheck_add_gbench): each benchmark
 * instance a case, whose one region "loop" is what the library times --
 * from the end of StartKeepRunning to the start of FinishKeepRunning, less
 * every PauseTiming..ResumeTiming span -- per iteration over a fixed count.
 * The adapter compiled into the program (cmake/gbench_adapter.cpp) calls
 * in here from its wrappers of the library's functions.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmcheck/gbench.h>

#include "harness_int.h"

#define REGION "loop"

/* One instance: its case, and the library's name for it. */
struct instance {
	struct pmc_test_def def;
	char *gb_name;
};

static struct {
	const struct pmc__gbench_ops *ops;
	const struct pmc__gbench_config *cfg;
	struct instance *inst;
	size_t n;
	/* The case running now, and what the library did in it. */
	struct pmc_test *t;
	const void *state;     /* the State whose loop is counted */
	int runs;              /* loops begun on thread 0 */
	int by_flag;           /* the count was only asked for (ops->run) */
	uint64_t chosen;       /* iterations of a loop that were not asked for */
	int threads;           /* most threads seen in one run */
	bool error;
	char why[512];
} gb;

int pmc__gbench_mode(void)
{
	static int mode = -1;
	char buf[8192];
	ssize_t len;
	int fd;

	if (mode >= 0)
		return mode;
	mode = 0;
	fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return mode;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return mode;
	buf[len] = '\0';
	for (char *p = buf, *end = buf + len; p < end; p += strlen(p) + 1) {
		if (p == buf)
			continue;
		if (!strcmp(p, "--pmcheck") || !strncmp(p, "--pmc-request-fd=", 17))
			mode = 1;
	}
	return mode;
}

/*
 * A case name for the library's instance name: a budget line's name may not
 * hold ':', blanks or "=;#[]" (hwdb), nor a --filter ',', '*' or '?', so
 * each becomes '_' ("BM_sort/1024/threads:4" is the case
 * BM_sort/1024/threads_4).  Two instances that come out the same are
 * refused when listed.
 */
static char *case_name_of(const char *gb_name)
{
	char *s = strdup(gb_name);

	for (char *p = s; s && *p; p++)
		if (strchr(":=;#[] \t,*?", *p) || (unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '_';
	return s;
}

/*
 * The library's filter that selects exactly the instance a case name came
 * from: each '_' may have been any of the characters case_name_of
 * replaced, the rest is literal, and the "/iterations:N" the adapter's
 * fixed count N adds to a name may follow any part of it (that N only:
 * a registration that fixes its own count is listed with it).
 */
static char *filter_of(const char *case_name, uint64_t iterations)
{
	char any_iterations[48];
	size_t len = strlen(case_name), size;
	char *f, *o;

	snprintf(any_iterations, sizeof(any_iterations), "(/iterations:%" PRIu64 ")?", iterations);
	size = 2 + len * (strlen(any_iterations) + 16) + 8;
	f = o = malloc(size);
	if (!f)
		return NULL;
	*o++ = '^';
	for (const char *p = case_name; *p; p++) {
		if (*p == '/') {
			o = stpcpy(o, any_iterations);
			*o++ = '/';
		} else if (*p == '_') {
			o = stpcpy(o, "[]_:=;# \t,*?[]");
		} else if (strchr(".[]{}()\\*+?^$|", *p)) {
			*o++ = '\\';
			*o++ = *p;
		} else {
			*o++ = *p;
		}
	}
	o = stpcpy(o, any_iterations);
	*o++ = '$';
	*o = '\0';
	return f;
}

static void body(struct pmc_test *t)
{
	const struct pmc_test_def *d = t->def;
	char *filter = filter_of(d->name, gb.cfg->iterations);
	size_t ran;

	if (!filter)
		pmc_test_error(t, "out of memory");
	pmc__region_prepare(t, REGION);
	gb.t = t;
	gb.state = NULL;
	gb.runs = gb.threads = 0;
	gb.error = false;
	gb.why[0] = '\0';
	gb.by_flag = 0;
	gb.chosen = 0;
	ran = gb.ops->run(filter, gb.cfg->iterations, &gb.by_flag);
	free(filter);
	gb.t = NULL;
	if (t->hot.open)
		pmc_test_error(t, "benchmark %s: its timed loop began and never ended (the library's FinishKeepRunning was not reached)",
			       d->name);
	if (ran == 0)
		pmc_test_error(t, "benchmark %s: the program has no such benchmark now (its filter selected none): build again so that CTest lists what the program has (pmcheck_add_gbench discovers the benchmarks after each build)",
			       d->name);
	if (ran > 1)
		pmc_test_error(t, "benchmark %s: its filter selected %zu benchmarks: their names differ only where pmcheck's case name has '_' (for ':', blanks or \"=;#[],*?\"), or only by the /iterations:%llu pmcheck gives a registration that fixes no count of its own (two registrations of one function, one of them ->Iterations(%llu)); rename one (->Name())",
			       d->name, ran, (unsigned long long)gb.cfg->iterations,
			       (unsigned long long)gb.cfg->iterations);
	if (gb.error)
		pmc_test_error(t, "benchmark %s stopped itself with state.SkipWithError(\"%s\"): fix what it reports",
			       d->name, gb.why);
	if (gb.chosen)
		pmc_test_error(t, "benchmark %s ran %llu iterations, not the %llu pmcheck asked for: this Google Benchmark neither lets pmcheck fix each registration's count nor takes --benchmark_min_time=%llux, so its clock chose; pmcheck_add_gbench supports 1.7 to 1.9 (docs/gbench.md), or fix the count in the source with ->Iterations(n)",
			       d->name, (unsigned long long)gb.chosen,
			       (unsigned long long)gb.cfg->iterations,
			       (unsigned long long)gb.cfg->iterations);
	if (gb.threads > 1)
		pmc__test_end_now(t, PMC_INCONCLUSIVE,
			      "benchmark %s runs its loop on %d threads, and pmcheck counts one thread's loop: a count of one thread's share is never judged; gate a single-threaded instance (->Threads(1)) of the same work",
			      d->name, gb.threads);
	if (gb.why[0])
		pmc_test_skip(t, "benchmark %s skipped itself: %s", d->name, gb.why);
	if (gb.runs == 0)
		pmc_test_error(t, "benchmark %s: its timed loop never ran (no `for (auto _ : state)` loop, or KeepRunning() never called): there is nothing to count",
			       d->name);
	for (size_t i = 0; i < t->nev; i++)
		pmc__expect_at(t, PMC_EXPECT_KIND_BUDGET, REGION, t->label[i], NULL, 0, 0, 0, 0,
			       d->file, (int)i + 1);
}

void pmc__gbench_start(const void *state, uint64_t iterations, int threads, int thread_index)
{
	struct pmc_test *t = gb.t;

	if (!t)
		return;
	if (threads > gb.threads)
		gb.threads = threads;
	if (thread_index != 0 || threads > 1)
		return;
	gb.runs++;
	if (gb.by_flag && iterations != gb.cfg->iterations) {
		gb.chosen = iterations;
		return;
	}
	gb.state = state;
	pmc_test_region_begin_n(t, REGION, iterations);
}

void pmc__gbench_finish(const void *state)
{
	if (!gb.t || !state || state != gb.state)
		return;
	gb.state = NULL;
	pmc_test_region_end(gb.t);
}

void pmc__gbench_pause(const void *state)
{
	if (gb.t && state && state == gb.state)
		pmc__test_region_pause(gb.t);
}

void pmc__gbench_resume(const void *state)
{
	if (gb.t && state && state == gb.state)
		pmc__test_region_resume(gb.t);
}

void pmc__gbench_skipped(const void *state, const char *why, int error)
{
	(void)state;
	if (!gb.t)
		return;
	gb.error |= error != 0;
	snprintf(gb.why, sizeof(gb.why), "%s", why && *why ? why : "(no reason given)");
}

/* Register one instance as a case; -1 after saying why. */
static int add_instance(const char *prog, const char *gb_name)
{
	struct instance *inst;
	char *name = case_name_of(gb_name);

	if (!name)
		return -1;
	for (size_t i = 0; i < gb.n; i++)
		if (!strcmp(gb.inst[i].def.name, name)) {
			fprintf(stderr, "%s: benchmarks \"%s\" and \"%s\" would be the same case, %s: pmcheck's case names replace ':', blanks and \"=;#[],*?\" with '_'; rename one\n",
				prog, gb.inst[i].gb_name, gb_name, name);
			free(name);
			return -1;
		}
	if (strlen(name) >= 200) {
		fprintf(stderr, "%s: benchmark \"%s\": its name is 200 bytes or longer, too long for a case's budgets; shorten it\n",
			prog, gb_name);
		free(name);
		return -1;
	}
	inst = realloc(gb.inst, (gb.n + 1) * sizeof(*inst));
	if (!inst) {
		free(name);
		return -1;
	}
	gb.inst = inst;
	inst = &gb.inst[gb.n];
	memset(inst, 0, sizeof(*inst));
	inst->gb_name = strdup(gb_name);
	inst->def.suite = gb.cfg->suite;
	inst->def.name = name;
	inst->def.file = prog;
	inst->def.line = 0;
	inst->def.body = body;
	inst->def.opt.events = gb.cfg->events;
	inst->def.opt.reps = 1;
	inst->def.opt.no_warmup = 1;
	inst->def.opt.timeout = gb.cfg->timeout;
	inst->def.opt.labels = "gbench";
	inst->def.build = gb.cfg->build;
	gb.n++;
	return 0;
}

/*
 * The instances, as the library lists them (--benchmark_list_tests), in a
 * child process: listing runs the library's own registration and
 * argument expansion, and leaves nothing behind in this one.
 */
static int list_instances(const char *prog)
{
	char *text = NULL, *line, *save = NULL;
	size_t len = 0, cap = 0;
	int pfd[2], status, rc = 0;
	pid_t pid;

	if (pipe2(pfd, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);

		dup2(pfd[1], STDOUT_FILENO);
		if (devnull >= 0)
			dup2(devnull, STDIN_FILENO);
		gb.ops->list();
		_exit(0);
	}
	close(pfd[1]);
	for (;;) {
		ssize_t got;

		if (len + 4096 + 1 > cap) {
			char *p = realloc(text, cap = (cap + 4096) * 2);

			if (!p) {
				rc = -1;
				break;
			}
			text = p;
		}
		got = read(pfd[0], text + len, cap - len - 1);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		len += (size_t)got;
	}
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
		fprintf(stderr, "%s: listing the program's benchmarks (--benchmark_list_tests) failed (%s %d): is it a Google Benchmark program whose main calls benchmark::RunSpecifiedBenchmarks()?\n",
			prog, WIFEXITED(status) ? "exit" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		rc = -1;
	}
	if (rc == 0 && text) {
		text[len] = '\0';
		for (line = strtok_r(text, "\n", &save); line && rc == 0; line = strtok_r(NULL, "\n", &save))
			if (*line)
				rc = add_instance(prog, line);
	}
	free(text);
	return rc;
}

/*
 * --filter as a Google Benchmark user writes it: a pattern that does not
 * begin with the suite ("BM_sort/..." or "-BM_map") is taken as the
 * benchmark's name and given the suite ("bench.BM_sort/..."); "*" alone and
 * the runner's own form are left as they are.
 */
static char *suite_filter(const char *patterns)
{
	size_t slen = strlen(gb.cfg->suite), n = strlen(patterns);
	char *out = malloc(n * (slen + 2) + 2), *o = out;
	const char *p = patterns;

	if (!out)
		return NULL;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool neg = *p == '-';
		const char *pat = p + neg;
		size_t plen = len - neg;

		if (neg)
			*o++ = '-';
		if (plen && !(plen == 1 && *pat == '*') &&
		    !(plen > slen && !strncmp(pat, gb.cfg->suite, slen) && pat[slen] == '.')) {
			memcpy(o, gb.cfg->suite, slen);
			o += slen;
			*o++ = '.';
		}
		memcpy(o, pat, plen);
		o += plen;
		p += len;
		if (*p == ',')
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/* A case the runner started: the request names it (harness/runner/sim_case.c:
 * "case SUITE.NAME" first), so the program need not list its benchmarks
 * again under valgrind. */
static int requested_instance(const char *prog, int fd)
{
	char buf[512], *nl, *name;
	ssize_t got = pread(fd, buf, sizeof(buf) - 1, 0);
	size_t slen = strlen(gb.cfg->suite);

	if (got <= 0)
		return 1;
	buf[got] = '\0';
	if ((nl = strchr(buf, '\n')))
		*nl = '\0';
	if (strncmp(buf, "case ", 5) || strncmp(buf + 5, gb.cfg->suite, slen) || buf[5 + slen] != '.')
		return 1;
	name = buf + 5 + slen + 1;
	return add_instance(prog, name);
}

int pmc__gbench_main(const struct pmc__gbench_ops *ops, const struct pmc__gbench_config *cfg,
		     int argc, char **argv)
{
	const char *prog = argc > 0 ? argv[0] : "benchmark";
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int nargs = 0, request_fd = -1, rc;

	if (!args)
		return PMC_EXIT_ERROR;
	gb.ops = ops;
	gb.cfg = cfg;
	for (int i = 0; i < argc; i++) {
		if (i > 0 && !strcmp(argv[i], "--pmcheck"))
			continue;
		if (i > 0 && !strncmp(argv[i], "--filter=", 9)) {
			char *f = suite_filter(argv[i] + 9);

			if (f && asprintf(&args[nargs], "--filter=%s", f) > 0) {
				nargs++;
				free(f);
				continue;
			}
			free(f);
		}
		/* The runner's messages and the commands it suggests name the
		 * program as it is run: "bench --pmcheck --calibrate ...". */
		if (i == 0 && asprintf(&args[nargs], "%s --pmcheck", argv[0]) > 0) {
			nargs++;
			continue;
		}
		if (!strncmp(argv[i], "--pmc-request-fd=", 17))
			request_fd = atoi(argv[i] + 17);
		args[nargs++] = argv[i];
	}
	rc = request_fd >= 3 ? requested_instance(prog, request_fd) : 1;
	if (rc > 0)
		rc = list_instances(prog);
	if (rc < 0)
		return PMC_EXIT_ERROR;
	for (size_t i = 0; i < gb.n; i++)
		pmc_test_register(&gb.inst[i].def);
	return pmc_main(nargs, args);
}
