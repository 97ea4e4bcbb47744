/* SPDX-License-Identifier: MIT */
/*
 * The runner: command line, case selection, one child process per case with
 * a deadline, console/TAP/JSON/JUnit output, exit status.
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

#include "harness_int.h"
#include "util/child.h"

#define OUTPUT_KEEP (64 * 1024) /* bytes of a case's output kept in results */

static const char usage_text[] =
	"usage: %s [options]\n"
	"\n"
	"Runs this suite's cases, each in its own process with a timeout.\n"
	"\n"
	"selection:\n"
	"  --list[=tsv]        list the cases (tsv: name, labels, resource lock, timeout,\n"
	"                      backends)\n"
	"  --filter=GLOBS      run cases whose suite.name matches a comma-separated glob;\n"
	"                      a glob starting with '-' excludes (e.g. 'bp.*,-bp.slow')\n"
	"running:\n"
	"  --repeat=N          measured repetitions of every case (overrides .reps)\n"
	"  --timeout=S         seconds per case (overrides .timeout; default 30)\n"
	"  --backend=perf|sim  where counts come from (default perf); under sim each\n"
	"                      case runs in its own valgrind and sees only PATH and the\n"
	"                      variables PMCHECK_SIM_ENV=NAME:NAME names\n"
	"  --strict            an unbudgeted expectation fails (without it, one fails\n"
	"                      only where its suite has budgets under other keys)\n"
	"budgets and baselines:\n"
	"  --hwdb=DIR          a hwdb directory searched before the built-in one\n"
	"                      (repeatable; also PMCHECK_HWDB=DIR:DIR)\n"
	"  --calibrate[=N]     run each selected case N times (default 5) and write\n"
	"                      budgets for this machine into the first hwdb directory\n"
	"  --calibrate-tolerance=PCT  record deterministic counts as N +-PCT%% instead\n"
	"                      of exact (default 0: exact)\n"
	"  --calibrate-margin=PCT  margin over the observed maximum for noisy events\n"
	"                      (default 10)\n"
	"  --calibrate-key=signature|model|vendor|arch|any  where budgets are filed\n"
	"                      (default: the model, or the signature if none matches;\n"
	"                      calls, breakpoint hits and page faults go under \"any\")\n"
	"  --save-baseline=FILE  write the results as a baseline (same as --json)\n"
	"  --baseline=FILE     compare with a saved baseline; exit 3 on a regression\n"
	"  --tolerance=PCT     --baseline tolerance for every event, deterministic ones\n"
	"                      too (default: exact for deterministic, 2%% for noisy)\n"
	"  --tolerance=EVENT=PCT  the tolerance for one event (repeatable)\n"
	"  --allow-missing     a baseline case this run did not measure is not a failure\n"
	"                      (cases outside --filter are never compared)\n"
	"  --report-md=FILE    the comparison as Markdown (CI job summary)\n"
	"  --no-fork           run cases in this process (debugging; a crash ends the\n"
	"                      run and timeouts kill it)\n"
	"output:\n"
	"  --verbose, -v       statistics and captured output of every case\n"
	"  --tap               TAP 13 on stdout instead of the console format\n"
	"  --json=FILE         results as JSON (schema: results.schema.json), atomically\n"
	"  --junit=FILE        JUnit XML, atomically\n"
	"  --results-dir=DIR   also write DIR/<case or program>.json (env\n"
	"                      PMCHECK_RESULTS_DIR; `pmcheck results` merges them)\n"
	"  --ctest             print <CTestMeasurement> lines for CDash\n"
	"  --color=auto|always|never\n"
	"  --help              this text\n"
	"\n"
	"exit status: 0 all passed, 1 a case failed, 2 a case could not run (error),\n"
	"3 regression, 4 inconclusive (partial counts), 64 usage, 77 all skipped.\n";

struct runner {
	const char *prog;
	const char *filter;
	const char *list;      /* NULL, "", or "tsv" */
	unsigned repeat;
	double timeout;
	enum pmc_backend backend;
	bool strict, no_fork, verbose, tap, ctest, color;
	const char *json_path, *junit_path, *results_dir;
	const char *hwdb[PMC_HWDB_MAX_DIRS];
	size_t nhwdb;
	unsigned calibrate;
	double margin, cal_tolerance;
	struct pmc__tolerance tolerance;
	bool allow_missing;
	const char *calibrate_key, *baseline, *save_baseline, *report_md;
	char *hwdb_env;
	/* Set in the process the sim backend starts for one case (see
	 * exec_sim_case): run that case here and write its result to fd. */
	const char *inner_case;
	int request_fd, result_fd;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_args(struct runner *r, int argc, char **argv)
{
	enum { O_LIST = 256, O_FILTER, O_REPEAT, O_TIMEOUT, O_BACKEND, O_STRICT, O_NOFORK,
	       O_TAP, O_JSON, O_JUNIT, O_RESDIR, O_CTEST, O_COLOR, O_HELP, O_HWDB, O_CALIBRATE,
	       O_MARGIN, O_CALKEY, O_SAVEBASE, O_BASELINE, O_TOLERANCE, O_REPORTMD, O_CASE,
	       O_RESFD, O_CALTOL, O_ALLOWMISSING };
	static const struct option opts[] = {
		{ "list", optional_argument, NULL, O_LIST },
		{ "filter", required_argument, NULL, O_FILTER },
		{ "repeat", required_argument, NULL, O_REPEAT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "no-fork", no_argument, NULL, O_NOFORK },
		{ "verbose", no_argument, NULL, 'v' },
		{ "tap", no_argument, NULL, O_TAP },
		{ "json", required_argument, NULL, O_JSON },
		{ "junit", required_argument, NULL, O_JUNIT },
		{ "results-dir", required_argument, NULL, O_RESDIR },
		{ "ctest", no_argument, NULL, O_CTEST },
		{ "color", required_argument, NULL, O_COLOR },
		{ "help", no_argument, NULL, O_HELP },
		{ "hwdb", required_argument, NULL, O_HWDB },
		{ "calibrate", optional_argument, NULL, O_CALIBRATE },
		{ "calibrate-margin", required_argument, NULL, O_MARGIN },
		{ "calibrate-key", required_argument, NULL, O_CALKEY },
		{ "calibrate-tolerance", required_argument, NULL, O_CALTOL },
		{ "save-baseline", required_argument, NULL, O_SAVEBASE },
		{ "baseline", required_argument, NULL, O_BASELINE },
		{ "tolerance", required_argument, NULL, O_TOLERANCE },
		{ "allow-missing", no_argument, NULL, O_ALLOWMISSING },
		{ "report-md", required_argument, NULL, O_REPORTMD },
		/* Internal: how the runner starts one case under the simulator. */
		{ "pmc-request-fd", required_argument, NULL, O_CASE },
		{ "pmc-result-fd", required_argument, NULL, O_RESFD },
		{ NULL, 0, NULL, 0 },
	};
	const char *color = "auto";
	int c;

	r->backend = PMC_BACKEND_PERF;
	r->margin = 10;
	r->results_dir = getenv("PMCHECK_RESULTS_DIR");
	if (r->results_dir && !*r->results_dir)
		r->results_dir = NULL;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "v", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case O_LIST:
			r->list = optarg ? optarg : "";
			if (*r->list && strcmp(r->list, "tsv")) {
				fprintf(stderr, "%s: --list=%s: unknown format (use --list or --list=tsv)\n", r->prog, r->list);
				return -1;
			}
			break;
		case O_FILTER:
			r->filter = optarg;
			break;
		case O_REPEAT: {
			unsigned long v = strtoul(optarg, &end, 10);

			if (*end || v == 0 || v > 1000000) {
				fprintf(stderr, "%s: --repeat=%s: expected a count from 1 to 1000000\n", r->prog, optarg);
				return -1;
			}
			r->repeat = (unsigned)v;
			break;
		}
		case O_TIMEOUT:
			r->timeout = strtod(optarg, &end);
			if (*end || !(r->timeout > 0) || r->timeout > 86400) {
				fprintf(stderr, "%s: --timeout=%s: expected seconds, more than 0\n", r->prog, optarg);
				return -1;
			}
			break;
		case O_BACKEND:
			if (!strcmp(optarg, "perf")) {
				r->backend = PMC_BACKEND_PERF;
			} else if (!strcmp(optarg, "sim")) {
				r->backend = PMC_BACKEND_SIM;
			} else {
				fprintf(stderr, "%s: --backend=%s: unknown backend (perf or sim)\n", r->prog, optarg);
				return -1;
			}
			break;
		case O_STRICT:
			r->strict = true;
			break;
		case O_NOFORK:
			r->no_fork = true;
			break;
		case 'v':
			r->verbose = true;
			break;
		case O_TAP:
			r->tap = true;
			break;
		case O_JSON:
			r->json_path = optarg;
			break;
		case O_JUNIT:
			r->junit_path = optarg;
			break;
		case O_RESDIR:
			r->results_dir = optarg;
			break;
		case O_CTEST:
			r->ctest = true;
			break;
		case O_COLOR:
			color = optarg;
			if (strcmp(color, "auto") && strcmp(color, "always") && strcmp(color, "never")) {
				fprintf(stderr, "%s: --color=%s: expected auto, always or never\n", r->prog, optarg);
				return -1;
			}
			break;
		case O_HELP:
			printf(usage_text, r->prog);
			return 1;
		case O_HWDB:
			if (r->nhwdb >= PMC_HWDB_MAX_DIRS) {
				fprintf(stderr, "%s: more than %d --hwdb directories\n", r->prog, PMC_HWDB_MAX_DIRS);
				return -1;
			}
			r->hwdb[r->nhwdb++] = optarg;
			break;
		case O_CALIBRATE: {
			unsigned long v = optarg ? strtoul(optarg, &end, 10) : 5;

			if ((optarg && *end) || v < 1 || v > 1000) {
				fprintf(stderr, "%s: --calibrate=%s: expected a number of runs from 1 to 1000\n", r->prog, optarg);
				return -1;
			}
			r->calibrate = (unsigned)v;
			break;
		}
		case O_TOLERANCE: {
			char why[256];

			if (pmc__tolerance_add(&r->tolerance, optarg, why, sizeof(why))) {
				fprintf(stderr, "%s: %s\n", r->prog, why);
				return -1;
			}
			break;
		}
		case O_ALLOWMISSING:
			r->allow_missing = true;
			break;
		case O_MARGIN:
		case O_CALTOL: {
			double v = strtod(optarg, &end);

			if (*end == '%')
				end++;
			if (*end || !(v >= 0) || v > 1000) {
				fprintf(stderr, "%s: %s: expected a percentage (e.g. 10 or 10%%)\n", r->prog, argv[optind - 1]);
				return -1;
			}
			if (c == O_MARGIN)
				r->margin = v;
			else
				r->cal_tolerance = v;
			break;
		}
		case O_CALKEY:
			r->calibrate_key = optarg;
			break;
		case O_SAVEBASE:
			r->save_baseline = optarg;
			break;
		case O_BASELINE:
			r->baseline = optarg;
			break;
		case O_REPORTMD:
			r->report_md = optarg;
			break;
		case O_CASE:
			r->request_fd = (int)strtol(optarg, &end, 10);
			if (*end || r->request_fd < 3) {
				fprintf(stderr, "%s: --pmc-request-fd=%s: expected a descriptor\n", r->prog, optarg);
				return -1;
			}
			break;
		case O_RESFD:
			r->result_fd = (int)strtol(optarg, &end, 10);
			if (*end || r->result_fd < 3) {
				fprintf(stderr, "%s: --pmc-result-fd=%s: expected a descriptor\n", r->prog, optarg);
				return -1;
			}
			break;
		default:
			fprintf(stderr, "%s: unknown option '%s' (see --help)\n", r->prog, argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (select cases with --filter)\n", r->prog, argv[optind]);
		return -1;
	}
	/* PMCHECK_HWDB directories come after the command line's (a case
	 * started by the runner gets every directory on its command line). */
	if (!r->request_fd && getenv("PMCHECK_HWDB") && *getenv("PMCHECK_HWDB")) {
		char *save = NULL, *dir;

		r->hwdb_env = strdup(getenv("PMCHECK_HWDB"));
		for (dir = r->hwdb_env ? strtok_r(r->hwdb_env, ":", &save) : NULL; dir;
		     dir = strtok_r(NULL, ":", &save)) {
			if (r->nhwdb >= PMC_HWDB_MAX_DIRS)
				break;
			r->hwdb[r->nhwdb++] = dir;
		}
	}
	if (r->calibrate && r->nhwdb == 0) {
		fprintf(stderr, "%s: --calibrate: say where budgets go with --hwdb=DIR (or PMCHECK_HWDB)\n", r->prog);
		return -1;
	}
	r->color = !strcmp(color, "always") ||
		   (!strcmp(color, "auto") && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
	return 0;
}

/* ---- listing --------------------------------------------------------------------- */

static int list_cases(struct runner *r)
{
	size_t i, shown = 0;

	for (i = 0; i < pmc__ncases(); i++) {
		const struct pmc_test_def *d = pmc__case(i);
		struct pmc_test_options o;
		char name[256];

		pmc__full_name(d, name, sizeof(name));
		if (!pmc__filter_match(r->filter, name))
			continue;
		shown++;
		if (!*r->list) {
			puts(name);
			continue;
		}
		pmc__effective_options(d, r->repeat, r->timeout, &o);
		{
			bool hw = pmc__case_is_hardware(d);
			unsigned b = o.backends ? o.backends : PMC_BACKEND_PERF | PMC_BACKEND_SIM;

			/* Offer a sim variant only where every event has a simulated
			 * equivalent; the rest would only ever skip there. */
			if (!pmc__case_runs_on_sim(d))
				b &= ~(unsigned)PMC_BACKEND_SIM;

			char labels[256];
			size_t k;

			/* name, labels (','-separated), resource lock, timeout, backends */
			snprintf(labels, sizeof(labels), "%s%s%s%s", d->suite, hw ? ",hardware" : "",
				 o.labels && *o.labels ? "," : "", o.labels ? o.labels : "");
			for (k = 0; labels[k]; k++)
				if (labels[k] == ';')
					labels[k] = ',';
			printf("%s\t%s\t%s\t%g\t%s%s%s\n", name, labels, hw ? "pmcheck_pmu" : "-",
			       o.timeout, b & PMC_BACKEND_PERF ? "perf" : "",
			       (b & PMC_BACKEND_PERF) && (b & PMC_BACKEND_SIM) ? "," : "",
			       b & PMC_BACKEND_SIM ? "sim" : "");
		}
	}
	if (shown == 0 && r->filter) {
		fprintf(stderr, "%s: no case matches --filter=%s\n", r->prog, r->filter);
		return PMC_EXIT_USAGE;
	}
	return 0;
}

/* ---- running one case in a child ---------------------------------------------------- */

void pmc__log_stderr(int level, const char *message, void *ctx)
{
	(void)level;
	(void)ctx;
	fprintf(stderr, "%s\n", message);
}

static pid_t current_child;

static void forward_signal(int sig)
{
	if (current_child > 0)
		kill(-current_child, SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig);
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
static size_t sim_layout_shift;
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
	target = (room / SIM_PAD_UNIT + 1) * SIM_PAD_UNIT + sim_layout_shift;
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
static int exec_sim_case(struct runner *r, const struct pmc_test_def *d, int resfd)
{
	char exe[PATH_MAX], name[256], *args[4];
	struct pmc_error err;
	size_t n = 0, i;
	int req, high[2], rc;
	ssize_t len;

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
	rc = pmc_sim_exec(args, r->verbose, &err);
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
	double t0 = now_s();
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
	*seconds = now_s() - t0;
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

static void run_one(struct runner *r, const struct pmc_test_def *d, double *seconds,
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
		double t0 = now_s();

		alarm((unsigned)ceil(o.timeout));
		if (pmc__run_case(d, &o, r->backend, r->strict, res))
			error_result(d, "out of memory building the result", res);
		alarm(0);
		*seconds = now_s() - t0;
	} else {
		run_forked(r, d, &o, seconds, res);
	}
	res->has_duration = true;
	res->duration_s = *seconds;
	res->timeout_s = o.timeout;
}

/* ---- main ------------------------------------------------------------------------------ */

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');

	return s ? s + 1 : p;
}

static int write_results_dir(struct runner *r, json_t *doc, const struct pmc__results *rs)
{
	char path[PATH_MAX];
	const char *stem = r->prog;

	if (mkdir(r->results_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: --results-dir=%s: %s\n", r->prog, r->results_dir, strerror(errno));
		return -1;
	}
	if (rs->n == 1)
		stem = rs->cases[0].name;
	/* The sim variant of a case is a test of its own. */
	if (snprintf(path, sizeof(path), "%s/%s%s.json", r->results_dir, stem,
		     r->backend == PMC_BACKEND_SIM ? ".sim" : "") >= (int)sizeof(path))
		return -1;
	int rc = pmc__write_json(path, doc);

	if (rc != 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", r->prog, path, strerror(-rc));
		return -1;
	}
	return 0;
}

/* --calibrate: N runs per selected case, then budgets into the first hwdb dir. */
static int calibrate(struct runner *r, size_t total)
{
	char key[PMC_HWDB_KEY_MAX], why[512];
	const char *backend = r->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	size_t i, idx = 0, written = 0;
	int status = PMC_EXIT_PASS;

	if (r->backend == PMC_BACKEND_SIM) {
		/* The sim profile is the key (valgrind, geometry, compiler build);
		 * every case of one executable shares its build. */
		if (r->calibrate_key && *r->calibrate_key) {
			fprintf(stderr, "%s: --calibrate-key: the sim backend records under its profile key only\n",
				r->prog);
			return PMC_EXIT_USAGE;
		}
		pmc__sim_profile_key(pmc__case(0), key, sizeof(key));
	} else if (pmc__calibration_key(backend, r->calibrate_key, key, sizeof(key), why,
					sizeof(why))) {
		fprintf(stderr, "%s: --calibrate: %s\n", r->prog, why);
		return PMC_EXIT_USAGE;
	}
	printf("calibrating %zu case(s), %u runs each, into %s/budgets/%s/ (deterministic counts: %s; noisy ones: margin %.3g%% over the largest)\n",
	       total, r->calibrate, r->hwdb[0], key, r->cal_tolerance > 0 ? "within the tolerance" : "exact",
	       r->margin);
	if (r->cal_tolerance > 0)
		printf("tolerance for deterministic counts: %g%%\n", r->cal_tolerance);
	for (i = 0; i < pmc__ncases(); i++) {
		const struct pmc_test_def *d = pmc__case(i);
		struct pmc__result *runs;
		char name[256];
		unsigned k;
		int n;

		pmc__full_name(d, name, sizeof(name));
		if (!pmc__filter_match(r->filter, name))
			continue;
		printf("[%zu/%zu] %s\n", ++idx, total, name);
		fflush(stdout);
		runs = calloc(r->calibrate, sizeof(*runs));
		if (!runs)
			return PMC_EXIT_ERROR;
		for (k = 0; k < r->calibrate; k++) {
			double secs;

			/* 0, 448, 896, ...: distinct cache-set offsets for 64 runs. */
			sim_layout_shift = (k * 448) % 4096;
			run_one(r, d, &secs, &runs[k]);
			/* A case that cannot run here will not in the next runs. */
			if (k == 0 && (runs[k].verdict == PMC_SKIP || runs[k].verdict == PMC_ERROR))
				break;
		}
		sim_layout_shift = 0;
		n = pmc__calibrate_case(runs, k < r->calibrate ? 1 : r->calibrate,
					&(struct pmc__calibration){ r->hwdb[0], key,
								    r->calibrate_key && *r->calibrate_key,
								    r->margin, r->cal_tolerance,
								    r->backend == PMC_BACKEND_SIM },
					stdout);
		if (n < 0)
			status = PMC_EXIT_ERROR;
		else
			written += (size_t)n;
		for (k = 0; k < r->calibrate; k++)
			pmc__result_release(&runs[k]); /* empty past an early stop */
		free(runs);
	}
	printf("\n%zu budget(s) written; review them with git diff before committing\n", written);
	return status;
}

/* --baseline: compare, print, Markdown; keeps the comparison with the
 * run's results (--json carries it); returns an exit status. */
static int compare_baseline(struct runner *r, struct pmc__results *run)
{
	struct pmc__results old, kept = { 0 };
	size_t i, outside = 0;
	char why[1024];
	json_t *rep;
	int status;

	if (pmc__results_load(r->baseline, &old, why, sizeof(why))) {
		fprintf(stderr, "%s: --baseline: %s\n", r->prog, why);
		return PMC_EXIT_ERROR;
	}
	/* Cases outside --filter were not selected: not compared, not gone. */
	kept.environment = json_incref(old.environment);
	for (i = 0; i < old.n; i++) {
		if (pmc__filter_match(r->filter, old.cases[i].name))
			pmc__results_add(&kept, &old.cases[i]);
		else
			outside++;
	}
	rep = pmc__compare(&kept, run, &r->tolerance, false);
	printf("\ncompared with baseline %s", r->baseline);
	if (outside)
		printf(" (%zu of its cases are outside --filter=%s and were not compared)", outside,
		       r->filter);
	printf(":\n");
	pmc__print_compare(stdout, rep);
	status = pmc__compare_status(rep, r->allow_missing, stdout);
	if (r->report_md) {
		char *md = pmc__compare_markdown(rep);

		if (!md || pmc_write_file_atomic(r->report_md, md, strlen(md)) != 0) {
			fprintf(stderr, "%s: cannot write --report-md=%s\n", r->prog, r->report_md);
			status = PMC_EXIT_ERROR;
		}
		free(md);
	}
	json_decref(run->comparison);
	run->comparison = rep;
	pmc__results_release(&kept);
	pmc__results_release(&old);
	return status;
}

/* --backend=sim from outside the simulator: can cases be started under it? */
static int sim_unavailable(struct runner *r)
{
#if defined(__SANITIZE_ADDRESS__)
	printf("%s: SKIP: --backend=sim cannot run an AddressSanitizer build (valgrind and ASan both manage the address space); use a build without sanitizers\n",
	       r->prog);
	return PMC_EXIT_SKIP;
#else
	if (!*pmc_sim_valgrind_version()) {
		fprintf(stderr, "%s: --backend=sim needs valgrind (callgrind), which is not on PATH: install it (apt-get install valgrind) or run with --backend=perf\n",
			r->prog);
		return PMC_EXIT_ERROR;
	}
	return 0;
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
		else if (!strncmp(line, "hwdb ", 5) && r->nhwdb < PMC_HWDB_MAX_DIRS)
			r->hwdb[r->nhwdb++] = line + 5;
	}
	return r->inner_case ? 0 : -1;
}

/* The process exec_sim_case started: run the one case, hand its result over. */
static int run_inner_case(struct runner *r)
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

int pmc_main(int argc, char **argv)
{
	struct runner r = { .prog = base_name(argc > 0 ? argv[0] : "pmcheck-suite") };
	size_t counts[PMC_ERROR + 1] = { 0 };
	size_t i, total = 0, idx = 0;
	struct pmc__results run = { 0 };
	json_t *doc, *summary;
	double t0 = now_s();
	int rc, status = PMC_EXIT_PASS;

	rc = parse_args(&r, argc, argv);
	if (rc) {
		free(r.hwdb_env);
		return rc > 0 ? 0 : PMC_EXIT_USAGE;
	}
	if (r.list) {
		free(r.hwdb_env);
		return list_cases(&r);
	}
	if (r.request_fd)
		return run_inner_case(&r);
	for (i = 0; i < pmc__ncases(); i++) {
		char name[256];

		pmc__full_name(pmc__case(i), name, sizeof(name));
		total += pmc__filter_match(r.filter, name);
	}
	if (r.backend == PMC_BACKEND_SIM && !pmc_sim_active() && total > 0 &&
	    (rc = sim_unavailable(&r)) != 0) {
		free(r.hwdb_env);
		return rc;
	}
	if (total == 0) {
		fprintf(stderr, "%s: no case matches%s%s (see --list)\n", r.prog,
			r.filter ? " --filter=" : "", r.filter ? r.filter : "");
		free(r.hwdb_env);
		return PMC_EXIT_USAGE;
	}
	/* --calibrate writes into the first hwdb directory: a new project's
	 * first calibration creates it. */
	if (r.calibrate && mkdir(r.hwdb[0], 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "%s: --calibrate: cannot create %s: %s\n", r.prog, r.hwdb[0], strerror(errno));
		free(r.hwdb_env);
		return PMC_EXIT_ERROR;
	}
	{
		struct pmc_error err;

		pmc__program = r.prog;
		if (pmc__hwdb_setup(r.hwdb, r.nhwdb, false, &err) != 0) {
			fprintf(stderr, "%s: hwdb: %s\n", r.prog, err.message);
			free(r.hwdb_env);
			return PMC_EXIT_ERROR;
		}
	}
	signal(SIGINT, forward_signal);
	signal(SIGTERM, forward_signal);
	if (r.calibrate) {
		status = calibrate(&r, total);
		pmc__hwdb_teardown();
		free(r.hwdb_env);
		return status;
	}
	if (r.tap)
		printf("TAP version 13\n1..%zu\n", total);
	for (i = 0; i < pmc__ncases(); i++) {
		const struct pmc_test_def *d = pmc__case(i);
		struct pmc__result res;
		char name[256];
		double secs;

		pmc__full_name(d, name, sizeof(name));
		if (!pmc__filter_match(r.filter, name))
			continue;
		idx++;
		if (!r.tap && !r.verbose && isatty(STDOUT_FILENO)) {
			printf("[%zu/%zu] %s ...\r", idx, total, name);
			fflush(stdout);
		}
		run_one(&r, d, &secs, &res);
		counts[res.verdict]++;
		if (r.tap) {
			pmc__print_tap(stdout, &res, idx);
		} else {
			if (isatty(STDOUT_FILENO) && !r.verbose)
				printf("\033[K");
			pmc__print_case_line(stdout, &res, idx, total, r.color);
			pmc__print_case_details(stdout, &res, r.verbose);
		}
		if (r.ctest)
			pmc__print_ctest_measurements(stdout, &res);
		fflush(stdout);
		if (pmc__results_add(&run, &res)) {
			pmc__result_release(&res);
			fprintf(stderr, "%s: out of memory keeping the results\n", r.prog);
			status = PMC_EXIT_ERROR;
		}
	}
	if (status == PMC_EXIT_PASS)
		status = pmc__exit_status(counts);
	/* A whole-suite run also answers for the budgets: every budgeted case
	 * must have run (a filtered run selects cases on purpose). */
	if (!r.filter && pmc__budgets_not_run(&run, r.backend == PMC_BACKEND_SIM ? "sim" : "perf",
					      stdout) > 0 &&
	    (status == PMC_EXIT_PASS || status == PMC_EXIT_SKIP))
		status = PMC_EXIT_FAIL;
	run.environment = pmc__environment(r.backend == PMC_BACKEND_SIM ? "sim" : "perf");
	summary = pmc__summary(&run);
	if (!r.tap)
		pmc__print_summary(stdout, summary, now_s() - t0);
	else
		printf("# %s\n", json_string_value(json_object_get(summary, "line")));
	json_decref(summary);
	if (r.baseline) {
		int cs = compare_baseline(&r, &run);

		if (cs == PMC_EXIT_ERROR || (cs == PMC_EXIT_REGRESSION && status == PMC_EXIT_PASS))
			status = cs;
	}
	{
		struct pmc__run_info info = { r.prog, r.backend == PMC_BACKEND_SIM ? "sim" : "perf",
					      argc, argv, now_s() - t0 };

		doc = pmc__results_doc(&run, &info);
	}
	if (r.json_path && (rc = pmc__write_json(r.json_path, doc)) != 0) {
		fprintf(stderr, "%s: cannot write --json=%s: %s\n", r.prog, r.json_path, strerror(-rc));
		status = PMC_EXIT_ERROR;
	}
	if (r.junit_path) {
		char *xml = pmc__junit(&run, r.prog, now_s() - t0);
		int wrc = xml ? pmc_write_file_atomic(r.junit_path, xml, strlen(xml)) : -ENOMEM;

		if (wrc) {
			fprintf(stderr, "%s: cannot write --junit=%s: %s\n", r.prog, r.junit_path, strerror(-wrc));
			status = PMC_EXIT_ERROR;
		}
		free(xml);
	}
	if (r.results_dir && write_results_dir(&r, doc, &run) != 0)
		status = PMC_EXIT_ERROR;
	if (r.save_baseline && (rc = pmc__write_json(r.save_baseline, doc)) != 0) {
		fprintf(stderr, "%s: cannot write --save-baseline=%s: %s\n", r.prog, r.save_baseline, strerror(-rc));
		status = PMC_EXIT_ERROR;
	}
	pmc__hwdb_teardown();
	free(r.hwdb_env);
	pmc__results_release(&run);
	json_decref(doc);
	return status;
}
