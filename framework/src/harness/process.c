/* SPDX-License-Identifier: MIT */
/*
 * One case in a child process: its own process group, its output and its
 * result through memory files, a deadline, a crash or a timeout turned into
 * an ERROR record.  Under the sim backend the child re-executes the suite
 * under valgrind for that one case (exec_sim_case), and that process runs
 * it (pmc__run_inner_case).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_int.h"
#include "util/child.h"

#define OUTPUT_KEEP (64 * 1024) /* bytes of a case's output kept in results */

/* ---- running one case in a child ---------------------------------------------------- */

void pmc__log_stderr(int level, const char *message, void *ctx)
{
	const int *min_level = ctx;

	if (!min_level || level >= *min_level)
		fprintf(stderr, "%s\n", message);
}

static pid_t current_child;

/* SIGINT/SIGTERM to the runner: the running case and its children die
 * with it. */
static void forward_signal(int sig)
{
	if (current_child > 0)
		kill(-current_child, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
}

void pmc__runner_forward_signals(void)
{
	signal(SIGINT, forward_signal);
	signal(SIGTERM, forward_signal);
}

static int make_memfd(const char *name)
{
	int fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);

	if (fd < 0) {
		char tmpl[] = "/tmp/pmcheck-XXXXXX";

		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd >= 0)
			unlink(tmpl);
	}
	return fd;
}

static char *slurp_fd(int fd, size_t keep, size_t *total)
{
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from;
	char *buf;
	ssize_t n;

	*total = size > 0 ? (size_t)size : 0;
	if (size <= 0)
		return NULL;
	from = (size_t)size > keep ? size - (off_t)keep : 0;
	buf = malloc((size_t)(size - from) + 1);
	if (!buf)
		return NULL;
	n = pread(fd, buf, (size_t)(size - from), from);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* Wait for the case up to `timeout` seconds: 1 exited (c->status set), 2
 * reported its result on the pipe and is still taking its counters down,
 * 0 timed out. */
static int wait_case(struct pmc__child *c, double timeout)
{
	double deadline = pmc__child_now() + timeout;

	for (;;) {
		char byte;
		int w = pmc__child_wait(c, deadline);

		if (w == PMC__CHILD_EXITED)
			return 1;
		if (w == 0)
			return 0;
		if (read(c->fd, &byte, 1) == 1)
			return 2;
		pmc__child_close(c); /* closed unwritten: wait for the exit */
	}
}

/* Cases that reported their result and were left taking their counters
 * down: reaped without waiting before the next fork, and at the end. */
static struct pmc__child pending[64];
static size_t npending;

static void reap_pending(bool block)
{
	for (size_t i = 0; i < npending;) {
		if (!pmc__child_reap(&pending[i], block)) {
			i++;
			continue;
		}
		pending[i] = pending[--npending];
	}
}

static void add_pending(const struct pmc__child *c)
{
	if (npending == sizeof(pending) / sizeof(pending[0]))
		reap_pending(true);
	pending[npending++] = *c;
}

/* The record of a case that ended without reporting one. */
static void error_result(const struct pmc_test_def *d, const char *reason, struct pmc__result *r)
{
	char name[256];

	pmc__full_name(d, name, sizeof(name));
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->suite = strdup(d->suite);
	r->test = strdup(d->name);
	r->file = strdup(d->file);
	r->line = d->line;
	r->verdict = PMC_ERROR;
	r->reason = strdup(reason);
	r->measuring = true;
}

/* Write a case's result for the runner; returns 0 when all of it went out. */
static int write_result(int fd, const struct pmc__result *res)
{
	json_t *o = pmc__result_to_json(res);
	char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	size_t len = text ? strlen(text) : 0, off = 0;

	json_decref(o);
	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(text);
	return text && off == len ? 0 : -1;
}

/*
 * The program's stack starts below its argument and environment strings,
 * and where it starts changes the work of alignment-dependent code (glibc's
 * string functions): measured, 12 more instructions in one expat region for
 * an 11-byte environment variable.  So the strings and their pointers are
 * padded to the next multiple of 64 KiB with PMCHECK_SIM_PAD, and a case
 * counts the same whatever the caller's environment or hwdb path holds.
 */
/*
 * Code under test may read its environment (libexpat calls getenv(3) when
 * it creates a parser, and getenv walks every variable: 12 instructions
 * each), so the caller's environment -- a shell, CTest, CI -- would change
 * the counts.  A case under the sim backend sees PATH and the variables
 * PMCHECK_SIM_ENV names (NAME:NAME), nothing else; the simulator's own
 * variables are added by pmc_sim_exec().
 */
static void canonical_environment(void)
{
	const char *keep = getenv("PMCHECK_SIM_ENV"), *path = getenv("PATH");
	char *names = keep ? strdup(keep) : NULL, *save = NULL, *name;
	char **kept = calloc(64, sizeof(*kept));
	size_t n = 0, i;

	if (!kept)
		return;
	if (path && asprintf(&kept[n], "PATH=%s", path) >= 0)
		n++;
	for (name = names ? strtok_r(names, ":", &save) : NULL; name && n < 63;
	     name = strtok_r(NULL, ":", &save)) {
		const char *v = getenv(name);

		if (v && strcmp(name, "PATH") && asprintf(&kept[n], "%s=%s", name, v) >= 0)
			n++;
	}
	clearenv();
	for (i = 0; i < n; i++)
		putenv(kept[i]); /* the child execs soon; the strings live until then */
	free(names);
}

#define SIM_PAD_VAR "PMCHECK_SIM_PAD="
/*
 * Extra padding, in bytes: moves the measured process's stack.  Executed
 * work does not change with it (measured: instructions of the checksum gate
 * equal over 11 shifts of 64-byte multiples), cache misses do (L1 misses
 * 66..83 over the same shifts), so --calibrate gives every run its own shift
 * and a noisy budget covers what other layouts do.  Gate runs use 0.
 */
size_t pmc__sim_layout_shift;
/* --calibrate's runs alternate valgrind's thread schedulers, so that a
 * count that depends on how threads interleave varies between them. */
bool pmc__sim_other_schedule;
#define SIM_PAD_UNIT 65536

static void pad_environment(char *const *args)
{

	size_t room = sizeof(SIM_PAD_VAR) + sizeof(char *), target;
	char **e, *pad;

	unsetenv("PMCHECK_SIM_PAD");
	for (e = environ; *e; e++)
		room += strlen(*e) + 1 + sizeof(char *);
	for (; *args; args++)
		room += strlen(*args) + 1 + sizeof(char *);
	target = (room / SIM_PAD_UNIT + 1) * SIM_PAD_UNIT + pmc__sim_layout_shift;
	pad = malloc(sizeof(SIM_PAD_VAR) + (target - room));
	if (!pad)
		return;
	memcpy(pad, SIM_PAD_VAR, sizeof(SIM_PAD_VAR) - 1);
	memset(pad + sizeof(SIM_PAD_VAR) - 1, 'x', target - room);
	pad[sizeof(SIM_PAD_VAR) - 1 + (target - room)] = '\0';
	putenv(pad); /* the child execs soon; pad lives until then */
}

/*
 * The sim backend measures every case in a process of its own, started the
 * same way every time: valgrind runs this program with the case's name, the
 * result descriptor and only the options that change what the case does.
 * Counts of code that allocates depend on the heap the measured process
 * starts from (measured on libexpat: one region 31122857 instructions in a
 * fresh process, 31250999 when forked from a runner that had run two other
 * cases), so a case run alone by CTest, in the whole suite, in a rerun or
 * by --calibrate must start from the same state.  Runs in the forked child;
 * returns the exit status for it.
 */
/*
 * What the case's valgrind must simulate: the columns its .events need
 * (0 when none needs more than instructions and calls).  -1 and *why when
 * an event has no simulated equivalent: the case is skipped here, without
 * starting valgrind, in the words the case would say under it.  Events
 * that do not parse here are left to the case to report (all columns).
 */
static long sim_columns_of(const struct pmc_test_def *d, char *why, size_t size)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_error err;
	unsigned need = 0, m;
	size_t n = 0;

	if (!d->opt.events || !*d->opt.events)
		return 0;
	if (pmc_event_parse_list_flags(d->opt.events, PMC_PARSE_DEFER_SYMBOLS, specs,
				       PMC_MAX_EVENTS, &n, &err))
		return (long)~0u;
	for (size_t i = 0; i < n; i++) {
		if (pmc_sim_columns(&specs[i], &m, &err)) {
			snprintf(why, size, "%s", err.message);
			return -1;
		}
		need |= m;
	}
	return need;
}

/* The case's run with the tool's function costs (recount_with_functions). */
static bool functions_forced;

/*
 * Does the tool count function costs in a case's run?  They cost the tool
 * one more addition wherever it adds to a counter (a few percent of
 * instruction-only work), so only a run that keeps what it measured pays:
 * one that writes results or a report, compares with a baseline,
 * calibrates, or runs under CTest (CI's gates).  A failure elsewhere is
 * run once more, with them.  callgrind always has them.
 */
static bool functions_wanted(const struct runner *r)
{
	if (pmc__functions_rerun)
		return false;
	return functions_forced || r->json_path || r->junit_path || r->results_dir || r->report_md ||
	       r->baseline || r->save_baseline || r->calibrate || r->ctest;
}

static int exec_sim_case(struct runner *r, const struct pmc_test_def *d, int resfd)
{
	char exe[PATH_MAX], name[256], *args[4], why[PMC_ERROR_MSG_MAX];
	long columns;
	struct pmc_error err;
	size_t n = 0, i;
	int req, high[2], rc;
	ssize_t len;

	columns = sim_columns_of(d, why, sizeof(why));
	if (columns < 0) {
		struct pmc__result res;

		error_result(d, why, &res);
		res.verdict = PMC_SKIP;
		res.backend = "sim";
		rc = write_result(resfd, &res);
		pmc__result_release(&res);
		return rc ? PMC_EXIT_ERROR : 0;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		fprintf(stderr, "%s: --backend=sim: cannot find this program (/proc/self/exe): %s\n",
			r->prog, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	exe[len] = '\0';
	/*
	 * The request (case, options, hwdb directories) goes through a
	 * descriptor, not the command line: the measured process's argument
	 * strings, and with them its memory layout, are then the same whoever
	 * started it and with whatever hwdb path.  Descriptors 3 (request) and
	 * 4 (result) in the case, whatever numbers they have here.
	 */
	req = make_memfd("pmcheck-request");
	pmc__full_name(d, name, sizeof(name));
	if (req < 0 || dprintf(req, "case %s\n", name) < 0)
		return PMC_EXIT_ERROR;
	if (r->repeat)
		dprintf(req, "repeat %u\n", r->repeat);
	if (r->strict)
		dprintf(req, "strict\n");
	if (pmc__layout_per_call == 0)
		dprintf(req, "exact-layout\n");
	if (pmc__functions_rerun)
		dprintf(req, "functions-rerun\n");
	for (i = 0; i < r->nhwdb; i++)
		dprintf(req, "hwdb %s\n", r->hwdb[i]);
	lseek(req, 0, SEEK_SET);
	high[0] = fcntl(req, F_DUPFD_CLOEXEC, 64);
	high[1] = fcntl(resfd, F_DUPFD_CLOEXEC, 64);
	if (high[0] < 0 || high[1] < 0 || dup2(high[0], 3) < 0 || dup2(high[1], 4) < 0) {
		fprintf(stderr, "%s: --backend=sim: cannot pass the case its descriptors: %s\n",
			r->prog, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	close(high[0]);
	close(high[1]);
	args[n++] = exe;
	args[n++] = (char *)"--pmc-request-fd=3";
	args[n++] = (char *)"--pmc-result-fd=4";
	args[n] = NULL;
	canonical_environment();
	pad_environment(args);
	pmc_log_set(pmc__log_stderr, NULL);
	rc = r->sim_full ? pmc_sim_exec(args, r->verbose, &err)
			 : pmc_sim_exec_for(args, r->verbose,
					    (unsigned)columns |
						    (pmc__sim_other_schedule ? PMC_SIM_OTHER_SCHEDULE : 0) |
						    (functions_wanted(r) ? PMC_SIM_FUNCTIONS : 0),
					    &err);
	if (rc < 0) {
		fprintf(stderr, "%s: --backend=sim: %s\n", r->prog, err.message);
		return PMC_EXIT_ERROR;
	}
	if (rc > 128) {
		/* The case died of a signal: die of it too, so the runner
		 * reports a crash. */
		signal(rc - 128, SIG_DFL);
		kill(getpid(), rc - 128);
	}
	return rc;
}

static void run_forked(struct runner *r, const struct pmc_test_def *d,
		       const struct pmc_test_options *o, double *seconds, struct pmc__result *res)
{
	int outfd = make_memfd("pmcheck-output"), resfd = make_memfd("pmcheck-result");
	int done = -1;
	struct pmc__child c;
	double t0 = pmc__child_now();
	char reason[1024], *out = NULL;
	size_t out_total = 0;
	int status = 0, wait_rc;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	if (outfd < 0 || resfd < 0) {
		snprintf(reason, sizeof(reason), "cannot create the result buffer: %s", strerror(errno));
		error_result(d, reason, res);
		goto out;
	}
	/* The case writes a byte down the pipe once its result is written,
	 * before it takes its counters down (exec, under the sim backend,
	 * closes it).  Its own process group: a timeout kills the case and
	 * its children (valgrind too, under the sim backend). */
	reap_pending(false);
	pid = pmc__child_fork(&c, PMC__CHILD_GROUP | PMC__CHILD_PIPE, &done);
	/* No descriptor to spare for the pipe: the case still runs (and
	 * reports the shortage itself), and the runner waits for its exit. */
	if (pid == -EMFILE || pid == -ENFILE)
		pid = pmc__child_fork(&c, PMC__CHILD_GROUP, NULL);
	if (pid < 0) {
		snprintf(reason, sizeof(reason), "fork: %s", strerror((int)-pid));
		error_result(d, reason, res);
		goto out;
	}
	if (pid == 0) {
		struct pmc__result cr;
		int rc;

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		dup2(outfd, STDOUT_FILENO);
		dup2(outfd, STDERR_FILENO);
		setvbuf(stdout, NULL, _IOLBF, 0);
		if (r->backend == PMC_BACKEND_SIM && !pmc_sim_active()) {
			rc = exec_sim_case(r, d, resfd);
			fflush(NULL);
			_exit(rc);
		}
		pmc__defer_close();
		rc = pmc__run_case(d, o, r->backend, r->strict, &cr) || write_result(resfd, &cr) ? 1 : 0;
		pmc__result_release(&cr);
		fflush(NULL);
		/* Reported: the runner goes on while the kernel unregisters
		 * this case's uprobes (it waits for grace periods). */
		if (rc == 0 && done >= 0 && write(done, "", 1) == 1)
			close(done);
		pmc__close_deferred();
		exit(rc);
	}
	current_child = pid;
	wait_rc = wait_case(&c, o->timeout);
	pmc__child_close(&c);
	if (wait_rc == 0) {
		pmc__child_kill(&c);
		current_child = 0;
		snprintf(reason, sizeof(reason), "timed out after %g s (set .timeout or --timeout)", o->timeout);
		error_result(d, reason, res);
		res->timeout = true;
		goto out;
	}
	kill(-pid, SIGKILL); /* leftovers of the case */
	current_child = 0;
	status = c.status;
	if (wait_rc == 2)
		add_pending(&c); /* reaped later: its exit waits for the kernel */
	{
		size_t len;
		char *text = slurp_fd(resfd, SIZE_MAX / 2, &len);

		if (text && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			json_error_t jerr;
			json_t *o2 = json_loads(text, 0, &jerr);
			char why[768];

			if (!o2) {
				snprintf(reason, sizeof(reason), "unreadable result from the case: %s", jerr.text);
				error_result(d, reason, res);
			} else if (pmc__result_from_json(o2, res, "the case's result", why, sizeof(why))) {
				snprintf(reason, sizeof(reason), "unreadable result: %s", why);
				error_result(d, reason, res);
			}
			json_decref(o2);
		} else if (WIFSIGNALED(status)) {
			snprintf(reason, sizeof(reason), "crashed: killed by signal %d (%s)", WTERMSIG(status),
				 strsignal(WTERMSIG(status)));
			error_result(d, reason, res);
		} else {
			snprintf(reason, sizeof(reason),
				 "the case exited with status %d before reporting a result (exit() in the test, or a sanitizer report; see output)",
				 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
			error_result(d, reason, res);
		}
		free(text);
	}
out:
	*seconds = pmc__child_now() - t0;
	if (outfd >= 0)
		out = slurp_fd(outfd, OUTPUT_KEEP, &out_total);
	if (out && *out) {
		res->output = out;
		out = NULL;
		if (out_total > OUTPUT_KEEP)
			res->output_truncated = out_total - OUTPUT_KEEP;
	}
	free(out);
	if (outfd >= 0)
		close(outfd);
	if (resfd >= 0)
		close(resfd);
}

/* One more run of d under callgrind, for the functions behind what the
 * tool counted: a cross-check, whose budgets counted by the tool are
 * judged as its own (record.c). */
static void run_for_functions(struct runner *r, const struct pmc_test_def *d,
			      const struct pmc_test_options *o, double *seconds,
			      struct pmc__result *cg)
{
	struct pmc_error err;

	pmc_sim_engine_prefer("callgrind", &err);
	pmc__functions_rerun = true;
	run_forked(r, d, o, seconds, cg);
	pmc__functions_rerun = false;
	pmc_sim_engine_prefer(r->sim_engine_settled, &err);
}

void pmc__functions_from_callgrind(struct runner *r, const struct pmc_test_def *d,
				   double *seconds, struct pmc__result *cg)
{
	struct pmc_test_options o;

	pmc__effective_options(d, r->repeat, r->timeout, &o);
	if (!(r->timeout > 0))
		o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
	run_for_functions(r, d, &o, seconds, cg);
}

/*
 * A case that failed on the perf backend: run it once more with its
 * failing events sampled inside its regions (sampled.c), and explain the
 * failed checks with the functions the samples fell in.  The first run's
 * counts and verdict stand; the re-run only adds rows and words.
 */
static void sample_again(struct runner *r, const struct pmc_test_def *d,
			 const struct pmc_test_options *o, const struct pmc__sample_request *req,
			 struct pmc__result *res)
{
	struct pmc__result sampled;
	double seconds;

	pmc__sampling = *req;
	run_forked(r, d, o, &seconds, &sampled);
	memset(&pmc__sampling, 0, sizeof(pmc__sampling));
	pmc__sampling_adopt(res, &sampled, seconds);
	pmc__result_release(&sampled);
}

static void attribute_by_sampling(struct runner *r, const struct pmc_test_def *d,
				  const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__sample_request req;

	if (!r->no_sampling && !r->calibrate && pmc__sampling_request(res, &req))
		sample_again(r, d, o, &req, res);
}

static void add_note(struct pmc__result *res, char *note)
{
	char **notes;

	if (!note)
		return;
	notes = realloc(res->notes, (res->nnotes + 2) * sizeof(*notes));
	if (!notes) {
		free(note);
		return;
	}
	res->notes = notes;
	res->notes[res->nnotes++] = note;
	res->notes[res->nnotes] = NULL;
}

/* The first event of a region whose counts differ between two runs of a
 * case, as words; 0 when every event counted the same.  Where only the
 * spread differs (the smallest sample, which budgets judge, is the same),
 * the words say the program's own work varied. */
static int first_difference(const struct pmc__result *a, const struct pmc__result *b, char *out,
			    size_t size)
{
	for (size_t i = 0; i < a->nregions; i++) {
		const struct pmc__region_rec *ga = &a->regions[i];
		const struct pmc__region_rec *gb = pmc__result_region(b, ga->name);

		for (size_t k = 0; k < ga->nev; k++) {
			const struct pmc__stat_rec *ea = &ga->ev[k];
			const struct pmc__stat_rec *eb = gb ? pmc__region_event(gb, ea->label) : NULL;

			if (eb && ea->min == eb->min && ea->max == eb->max && ea->n == eb->n)
				continue;
			if (eb && ea->min == eb->min)
				snprintf(out, size,
					 "the same smallest sample, %" PRIu64 " in region \"%s\", %s, and another spread (%" PRIu64 "..%" PRIu64 " and %" PRIu64 "..%" PRIu64 "): this program's work varies from one execution to the next",
					 ea->min, ga->name, ea->label, ea->min, ea->max, eb->min, eb->max);
			else
				snprintf(out, size,
					 "region \"%s\", %s: pmcheck's valgrind tool counted %" PRIu64 "..%" PRIu64 ", callgrind %s%" PRIu64 "..%" PRIu64,
					 ga->name, ea->label, ea->min, ea->max, eb ? "" : "nothing, ",
					 eb ? eb->min : 0, eb ? eb->max : 0);
			return 1;
		}
	}
	return 0;
}

/* A failed check that judged samples: one that failed before any sample
 * (in a warm-up run, or because the region never ran) has no figure for a
 * re-run to explain. */
static bool failed_on_samples(const struct pmc__result *res)
{
	for (size_t i = 0; i < res->nchecks; i++)
		if (res->checks[i].status == PMC__CHECK_FAIL && res->checks[i].samples > 0)
			return true;
	return false;
}

/* Did the case's own run record functions (pmcheck's valgrind tool counts
 * them): then no region needs one more run under callgrind for them. */
bool pmc__result_has_functions(const struct pmc__result *res)
{
	for (size_t j = 0; j < res->nregions; j++)
		if (res->regions[j].nfns)
			return true;
	return false;
}

/* Move the callgrind run's functions into the gate's regions (those that
 * have none). */
static void adopt_functions(struct pmc__result *res, struct pmc__result *cg)
{
	for (size_t j = 0; j < res->nregions; j++) {
		struct pmc__region_rec *g = &res->regions[j];
		struct pmc__region_rec *h = (struct pmc__region_rec *)pmc__result_region(cg, g->name);

		if (!h || g->nfns || !h->nfns || h->nev != g->nev)
			continue;
		g->fns = h->fns;
		g->nfns = h->nfns;
		h->fns = NULL;
		h->nfns = 0;
	}
}

/* The callgrind run judged the very figures the gate measured: its
 * judgement, which could name the functions (and excuse layout), replaces
 * the tool's; the figures, the engine and the objects stay the gate's. */
static void adopt_judgement(struct pmc__result *res, struct pmc__result *cg)
{
	struct pmc__check_rec *checks = res->checks;
	size_t nchecks = res->nchecks;
	char *reason = res->reason;

	res->checks = cg->checks;
	res->nchecks = cg->nchecks;
	res->reason = cg->reason;
	res->verdict = cg->verdict;
	cg->checks = checks;
	cg->nchecks = nchecks;
	cg->reason = reason;
	adopt_functions(res, cg);
	/* Notes that came of judging (layout, whose change it was). */
	for (size_t i = 0; i < cg->nnotes; i++) {
		bool seen = false;

		for (size_t k = 0; k < res->nnotes && !seen; k++)
			seen = !strcmp(res->notes[k], cg->notes[i]);
		if (!seen && strncmp(cg->notes[i], "sim:", 4)) {
			add_note(res, cg->notes[i]);
			cg->notes[i] = NULL;
		}
	}
}

/*
 * A case that failed on sim, counted by pmcheck's valgrind tool without
 * function costs (functions_wanted): run it once more with them.  The
 * same engine counts the same, so the re-run's judgement, which names the
 * functions, is taken.  False when the re-run has none (a tool too old
 * for them) or counted otherwise: callgrind is asked then.
 */
static bool recount_with_functions(struct runner *r, const struct pmc_test_def *d,
				   const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__result again;
	char diff[512] = "", *note = NULL;
	double seconds;
	bool adopted = false;

	if (functions_wanted(r))
		return false;
	functions_forced = true;
	run_forked(r, d, o, &seconds, &again);
	functions_forced = false;
	if (!first_difference(res, &again, diff, sizeof(diff)))
		first_difference(&again, res, diff, sizeof(diff));
	if (!diff[0] && pmc__result_has_functions(&again) &&
	    (again.verdict == PMC_FAIL || again.verdict == PMC_PASS)) {
		adopt_judgement(res, &again);
		if (asprintf(&note, "sim: run once more with pmcheck's valgrind tool counting function costs, for the functions behind the failure (%.3g s); it counted the same",
			     seconds) >= 0)
			add_note(res, note);
		adopted = true;
	}
	pmc__result_release(&again);
	return adopted;
}

/*
 * A case that failed on sim as counted by pmcheck's valgrind tool, with no
 * function costs of its own: run it once more under callgrind, whose dumps
 * name the functions behind the failure.  The report stays the gate's: the tool's figures, measurements
 * and engine.  When callgrind counted the same, its judgement of those
 * figures (with the functions, and layout told apart) is taken; when it
 * counted otherwise, the tool's verdict stands and a note gives the
 * re-run's figures beside the gate's.  A case that failed before any
 * sample is not re-run: there is nothing to explain.
 */
static void recount_with_callgrind(struct runner *r, const struct pmc_test_def *d,
				   const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__result cg;
	char diff[512] = "";
	double seconds;
	char *note = NULL;
	int rc;

	if (r->calibrate || res->verdict != PMC_FAIL || !res->sim_engine ||
	    strcmp(res->sim_engine, "pmcheck") || !failed_on_samples(res) ||
	    pmc__result_has_functions(res) || recount_with_functions(r, d, o, res))
		return;
	run_for_functions(r, d, o, &seconds, &cg);
	if (!first_difference(res, &cg, diff, sizeof(diff)))
		first_difference(&cg, res, diff, sizeof(diff));
	if (!diff[0] && (cg.verdict == PMC_FAIL || cg.verdict == PMC_PASS)) {
		const char *was = cg.verdict == PMC_PASS ? "passed it" : "failed it too";

		adopt_judgement(res, &cg);
		rc = asprintf(&note, "sim: counted by pmcheck's valgrind tool; run once more under callgrind for the functions behind the failure (%.3g s), which counted the same and %s: the judgement is of the tool's figures, with callgrind's functions",
			      seconds, was);
	} else {
		rc = asprintf(&note, "sim: the figures are pmcheck's valgrind tool's; a re-run under callgrind for the functions behind the failure (%.3g s) %s%s%s%s",
			      seconds,
			      cg.verdict == PMC_PASS ? "passed" : cg.verdict == PMC_FAIL ? "failed" : cg.verdict == PMC_ERROR ? "ended in error: " : "did not fail: ",
			      cg.verdict == PMC_PASS || cg.verdict == PMC_FAIL ? "" : cg.reason ? cg.reason : "",
			      diff[0] ? "; re-run figures beside the gate's (the engines disagree, which is a bug: report it with both results): " : ", with no functions",
			      diff);
	}
	if (rc >= 0)
		add_note(res, note);
	pmc__result_release(&cg);
}

/*
 * Cases counted by pmcheck's valgrind tool that regressed or improved
 * against a baseline: run each once more under callgrind and keep its
 * functions in the case's regions, so that the comparison can say which
 * functions moved.  Returns how many cases got functions (the caller
 * compares again).
 */
size_t pmc__sim_functions_for_changes(struct runner *r, json_t *rep, struct pmc__results *run)
{
	size_t adopted = 0;

	for (size_t i = 0; i < run->n && r->backend == PMC_BACKEND_SIM; i++) {
		struct pmc__result *res = &run->cases[i], cg;
		struct pmc_test_options o;
		bool changed = false;
		size_t k;
		json_t *row;
		double seconds;
		char diff[512] = "", *note = NULL;

		if (!res->sim_engine || strcmp(res->sim_engine, "pmcheck") ||
		    pmc__result_has_functions(res))
			continue;
		json_array_foreach(json_object_get(rep, "rows"), k, row) {
			const char *v = pmc__jstr(row, "verdict");

			if (!strcmp(pmc__jstr(row, "case"), res->name) &&
			    (!strcmp(v, "regression") || !strcmp(v, "improvement")))
				changed = true;
		}
		for (k = 0; changed && k < pmc__ncases(); k++) {
			char name[256];

			pmc__full_name(pmc__case(k), name, sizeof(name));
			if (!strcmp(name, res->name))
				break;
		}
		if (!changed || k == pmc__ncases())
			continue;
		pmc__effective_options(pmc__case(k), r->repeat, r->timeout, &o);
		if (!(r->timeout > 0))
			o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
		printf("%s moved: running it once more under callgrind for the functions behind it\n",
		       res->name);
		run_for_functions(r, pmc__case(k), &o, &seconds, &cg);
		if (!first_difference(res, &cg, diff, sizeof(diff)))
			first_difference(&cg, res, diff, sizeof(diff));
		adopt_functions(res, &cg);
		if (asprintf(&note, "sim: counted by pmcheck's valgrind tool; the functions are from one more run under callgrind (%.3g s), %s%s",
			     seconds, diff[0] ? "which counted otherwise: " : "which counted the same", diff) >= 0)
			add_note(res, note);
		pmc__result_release(&cg);
		adopted++;
	}
	return adopted;
}

void pmc__sample_regressions(struct runner *r, json_t *rep, struct pmc__results *run)
{
	for (size_t i = 0; i < run->n && !r->no_sampling && r->backend == PMC_BACKEND_PERF; i++) {
		struct pmc__result *res = &run->cases[i];
		struct pmc__sample_request req;
		struct pmc_test_options o;
		json_t *row;
		size_t k;

		if (!pmc__sampling_request_regressions(rep, res, &req))
			continue;
		for (k = 0; k < pmc__ncases(); k++) {
			char name[256];

			pmc__full_name(pmc__case(k), name, sizeof(name));
			if (!strcmp(name, res->name))
				break;
		}
		if (k == pmc__ncases())
			continue;
		pmc__effective_options(pmc__case(k), r->repeat, r->timeout, &o);
		printf("%s regressed: running it once more with %s sampled, for attribution\n",
		       res->name, req.label[0]);
		sample_again(r, pmc__case(k), &o, &req, res);
		json_array_foreach(json_object_get(rep, "rows"), k, row) {
			const char *v = pmc__jstr(row, "verdict");
			json_t *rows;

			if (strcmp(pmc__jstr(row, "case"), res->name) || strcmp(v, "regression"))
				continue;
			rows = pmc__sampled_rows_json(pmc__result_region(res, pmc__jstr(row, "region")),
						      pmc__jstr(row, "event"), 5);
			if (json_array_size(rows))
				json_object_set_new(row, "samples", rows);
			else
				json_decref(rows);
		}
	}
}

void pmc__run_one(struct runner *r, const struct pmc_test_def *d, double *seconds,
		    struct pmc__result *res)
{
	struct pmc_test_options o;

	pmc__effective_options(d, r->repeat, r->timeout, &o);
	if (r->backend == PMC_BACKEND_SIM && !(r->timeout > 0))
		o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
	/* A case that does not run on this backend skips before it does
	 * anything: no process (and no valgrind) for it.  Under the sim
	 * backend every other case is a fresh process anyway. */
	if ((d->opt.backends && !(d->opt.backends & r->backend)) ||
	    (r->no_fork && r->backend != PMC_BACKEND_SIM)) {
		double t0 = pmc__child_now();

		alarm((unsigned)ceil(o.timeout));
		if (pmc__run_case(d, &o, r->backend, r->strict, res))
			error_result(d, "out of memory building the result", res);
		alarm(0);
		*seconds = pmc__child_now() - t0;
	} else {
		run_forked(r, d, &o, seconds, res);
		if (r->backend == PMC_BACKEND_SIM)
			recount_with_callgrind(r, d, &o, res);
		else
			attribute_by_sampling(r, d, &o, res);
	}
	res->has_duration = true;
	res->duration_s = *seconds;
	res->timeout_s = o.timeout;
}

/*
 * PMCHECK_SIM_ENV, checked before any case: a name that is not a variable
 * name is a usage error; a variable that is not set is said, since the
 * cases then run without it and count as if it had not been named (a
 * calibration where it was set would not match).
 */
static int sim_env_check(struct runner *r)
{
	const char *keep = getenv("PMCHECK_SIM_ENV");
	const char *p = keep;

	while (p && *p) {
		size_t n = strcspn(p, ":");
		size_t ok = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
		char name[256];

		if (n && (ok < n || (*p >= '0' && *p <= '9'))) {
			fprintf(stderr, "%s: PMCHECK_SIM_ENV=\"%s\": \"%.*s\" is not a variable name: give names separated by ':' (PMCHECK_SIM_ENV=HOME:LANG)\n",
				r->prog, keep, (int)(n > 64 ? 64 : n), p);
			return PMC_EXIT_USAGE;
		}
		if (n && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (!getenv(name))
				fprintf(stderr, "%s: PMCHECK_SIM_ENV names %s, which is not set: the cases under --backend=sim run without it\n",
					r->prog, name);
		}
		p += n + (p[n] == ':');
	}
	return 0;
}

/* --backend=sim from outside the simulator: can cases be started under it? */
int pmc__sim_unavailable(struct runner *r)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)sim_env_check;
	printf("%s: SKIP: --backend=sim cannot run an AddressSanitizer build (valgrind and ASan both manage the address space); use a build without sanitizers\n",
	       r->prog);
	return PMC_EXIT_SKIP;
#else
	/* Asked for explicitly, the sim backend's absence is an error, not a
	 * skip: a gate that meant to count on sim must not pass without it. */
	if (!*pmc_sim_valgrind_version()) {
		fprintf(stderr, "%s: --backend=sim needs valgrind, which is not on PATH: install it (Debian: apt-get install valgrind) or run with --backend=perf\n",
			r->prog);
		return PMC_EXIT_ERROR;
	}
	return sim_env_check(r);
#endif
}

/*
 * Read exec_sim_case's request ("case NAME", "repeat N", "strict", "hwdb
 * DIR" lines) into static storage: nothing on the heap before the case.
 */
static int read_request(struct runner *r)
{
	static char text[16384];
	size_t used = 0;
	char *line, *save = NULL;

	for (;;) {
		ssize_t n = read(r->request_fd, text + used, sizeof(text) - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	text[used] = '\0';
	close(r->request_fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "case ", 5))
			r->inner_case = line + 5;
		else if (!strncmp(line, "repeat ", 7))
			r->repeat = (unsigned)strtoul(line + 7, NULL, 10);
		else if (!strcmp(line, "strict"))
			r->strict = true;
		else if (!strcmp(line, "exact-layout"))
			pmc__layout_per_call = 0;
		else if (!strcmp(line, "functions-rerun"))
			pmc__functions_rerun = true;
		else if (!strncmp(line, "hwdb ", 5) && r->nhwdb < PMC_HWDB_MAX_DIRS)
			r->hwdb[r->nhwdb++] = line + 5;
	}
	return r->inner_case ? 0 : -1;
}

/* The process exec_sim_case started: run the one case, hand its result over. */
int pmc__run_inner_case(struct runner *r)
{
	const struct pmc_test_def *d = NULL;
	struct pmc_test_options o;
	struct pmc_error err;
	struct pmc__result res;
	size_t i;
	int rc;

	if (!pmc_sim_active() || r->result_fd < 3 || read_request(r)) {
		fprintf(stderr, "%s: --pmc-request-fd is internal to the sim backend (run a case with --backend=sim --filter=NAME)\n",
			r->prog);
		return PMC_EXIT_USAGE;
	}
	for (i = 0; i < pmc__ncases() && !d; i++) {
		char name[256];

		pmc__full_name(pmc__case(i), name, sizeof(name));
		if (!strcmp(name, r->inner_case))
			d = pmc__case(i);
	}
	if (!d) {
		fprintf(stderr, "%s: the sim backend asked for case %s, which this program does not have\n",
			r->prog, r->inner_case);
		return PMC_EXIT_USAGE;
	}
	pmc__program = r->prog;
	pmc__hwdb_setup(r->hwdb, r->nhwdb, true, &err);
	pmc__effective_options(d, r->repeat, r->timeout, &o);
	rc = pmc__run_case(d, &o, PMC_BACKEND_SIM, r->strict, &res) || write_result(r->result_fd, &res);
	pmc__result_release(&res);
	pmc__hwdb_teardown();
	return rc ? PMC_EXIT_ERROR : 0;
}
