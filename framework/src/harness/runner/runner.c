/* SPDX-License-Identifier: MIT */
/*
 * The runner: command line, case selection, one child process per case with
 * a deadline, console/TAP/JSON/JUnit output, exit status.
 *
 * Over 600 lines because the suite's command line is one parse (parse_args,
 * about 330 lines: each option's value checked, the option named in its
 * error) beside pmc_main, which orders a run; the rest of the runner is
 * already rerun.c, process.c, run_gates.c and sim_case.c.
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
#include <strings.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_int.h"
#include "util/child.h"


static const char usage_text[] =
	"usage: %s [options]\n"
	"\n"
	"Runs this suite's cases, each in its own process with a timeout.\n"
	"\n"
	"selection:\n"
	"  --list[=tsv]        list the cases (tsv: name, labels, resource lock, timeout,\n"
	"                      backends, timeout under sim)\n"
	"  --filter=GLOBS      run cases whose suite.name matches a comma-separated glob;\n"
	"                      a glob starting with '-' excludes (e.g. 'bp.*,-bp.slow')\n"
	"running:\n"
	"  --repeat=N          measured repetitions of every case (overrides .reps)\n"
	"  --timeout=S         seconds per case on any backend (overrides .timeout);\n"
	"                      default: the case's .timeout, else 30, on perf, and\n"
	"                      20 times that under sim (600 s), which runs the case\n"
	"                      in valgrind; a case past it is an ERROR, its\n"
	"                      processes and temporary files gone\n"
	"  --backend=perf|sim  where counts come from (default perf); under sim each\n"
	"                      case runs in its own valgrind and sees only PATH and the\n"
	"                      variables PMCHECK_SIM_ENV=NAME:NAME names\n"
	"  --strict            an expectation without a budget fails, with the command\n"
	"                      that records one (also when CI is set, not to 0 or\n"
	"                      false); otherwise its case is UNBUDGETED, never PASS\n"
	"                      (exit 5; with --ctest 77, a CTest skip), and fails\n"
	"                      only where its suite has budgets under other keys\n"
	"  --sim-full          sim: simulate caches and branches and instrument from\n"
	"                      the start whatever the case asks (by default a case's\n"
	"                      valgrind simulates only what its .events need)\n"
	"  --sim-engine=auto|pmcheck|callgrind  sim: who counts (also PMCHECK_SIM_ENGINE);\n"
	"                      auto: pmcheck's valgrind tool (misses included, with\n"
	"                      callgrind's models); callgrind for --save-baseline\n"
	"                      and where the tool is not usable; PMCHECK_SIM_LINE_INFO=1\n"
	"                      has it read line tables, for files and lines in a\n"
	"                      crashing case's stack trace\n"
	"  --exact-layout      sim: an exact budget missed only in string and memory\n"
	"                      functions called as often as at calibration fails too\n"
	"                      (by default it passes, said as layout)\n"
	"budgets and baselines:\n"
	"  --hwdb=DIR          a hwdb directory searched before the built-in one\n"
	"                      (repeatable; also PMCHECK_HWDB=DIR:DIR)\n"
	"  --calibrate[=N]     run each selected case N times (default 5) and write\n"
	"                      budgets for this machine into the first hwdb directory\n"
	"  --calibrate-tolerance=PCT  record deterministic counts as N +-PCT%% instead\n"
	"                      of exact (default 0: exact)\n"
	"  --calibrate-margin=PCT  margin over the observed maximum for noisy events\n"
	"                      (default 10)\n"
	"  --calibrate-key=signature|model|vendor|arch|os|any  where budgets are filed\n"
	"                      (default: the model, or the signature if none matches;\n"
	"                      calls, breakpoint hits and page faults go under \"any\",\n"
	"                      or this release's os-ID-VERSION key where the suite has\n"
	"                      its file)\n"
	"  --save-baseline=FILE  write the results as a baseline (same as --json)\n"
	"  --baseline=FILE     compare with a saved baseline; exit 3 on a regression\n"
	"  --tolerance=PCT     --baseline tolerance for every event, deterministic ones\n"
	"                      too (default: exact for deterministic, 2%% for noisy)\n"
	"  --tolerance=EVENT=PCT  the tolerance for one event (repeatable)\n"
	"  --allow-missing     a baseline case this run did not measure is not a failure\n"
	"                      (cases outside --filter are never compared)\n"
	"  --report-md=FILE    the comparison as Markdown (CI job summary)\n"
	"  --no-sampling       perf: do not run a failed case again with its failing\n"
	"                      events sampled (the functions behind the failure)\n"
	"  --no-fork           run cases in this process (debugging; a crash ends the\n"
	"                      run and timeouts kill it)\n"
	"output:\n"
	"  --verbose, -v       statistics and captured output of every case\n"
	"  --tap               TAP 13 on stdout instead of the console format\n"
	"  --json=FILE         results as JSON (schema: results.schema.json), atomically\n"
	"  --junit=FILE        JUnit XML, atomically\n"
	"  --results-dir=DIR   also write DIR/<case or program>.json (env\n"
	"                      PMCHECK_RESULTS_DIR; `pmcheck results` merges them)\n"
	"  --ctest             print <CTestMeasurement> lines for CDash; a run whose\n"
	"                      worst case is UNBUDGETED exits 77 (CTest's skip)\n"
	"  --color=auto|always|never\n"
	"  --help              this text\n"
	"\n"
	"exit status: 0 all passed, 1 a case failed, 2 a case could not run (error),\n"
	"3 regression, 4 inconclusive (partial counts), 64 usage, 77 all skipped.\n";

/* An argument as a message quotes it: control characters escaped.  Four
 * buffers in turn, for a message that quotes more than one. */
static const char *quoted(const char *arg)
{
	static char buf[4][512];
	static unsigned next;

	return pmc__escape_ctl(buf[next++ % 4], sizeof(buf[0]), arg ? arg : "");
}

/* CI set to a non-empty value other than "0" or "false", as CI services
 * set it and as snapshot-testing tools read it. */
static bool ci_set(void)
{
	const char *ci = getenv("CI");

	return ci && *ci && strcmp(ci, "0") && strcasecmp(ci, "false");
}

/*
 * The results directory, before any case runs, as each output file is
 * (pmc__output_check): a directory a file can be made in, or a name one
 * can be made at.  A file, /proc/self or an empty name there was an error
 * after the run.
 */
static int results_dir_check(const char *dir, char *why, size_t size)
{
	char probe[PATH_MAX], shown[512];
	struct stat st;

	pmc__escape_ctl(shown, sizeof(shown), dir);
	if (!*dir) {
		snprintf(why, size, "an empty name; name a directory, or leave the option out");
		return -EINVAL;
	}
	if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
		snprintf(why, size, "\"%s\" is not a directory; name a directory (made if missing) for the results files",
			 shown);
		return -ENOTDIR;
	}
	/* Missing: made at the end (mkdir, one level), so its parent must
	 * take a new name; there: it must take the results file. */
	if (snprintf(probe, sizeof(probe), "%s%s", dir, stat(dir, &st) == 0 ? "/results.json" : "") >=
	    (int)sizeof(probe)) {
		snprintf(why, size, "\"%s\": the name is too long", shown);
		return -ENAMETOOLONG;
	}
	{
		int rc = pmc__output_check(probe, why, size);

		if (rc)
			snprintf(why, size, "\"%s\": no results file could be written there (%s); name a directory pmcheck can write, or a new one in such a directory",
				 shown, strerror(-rc));
		return rc;
	}
}

static int parse_args(struct runner *r, int argc, char **argv)
{
	bool margin_set = false, cal_tolerance_set = false, exact_layout = false;
	enum { O_LIST = 256, O_FILTER, O_REPEAT, O_TIMEOUT, O_BACKEND, O_STRICT, O_EXACT_LAYOUT, O_SIM_FULL, O_SIM_ENGINE, O_NOFORK,
	       O_TAP, O_JSON, O_JUNIT, O_RESDIR, O_CTEST, O_COLOR, O_HELP, O_HWDB, O_CALIBRATE,
	       O_MARGIN, O_CALKEY, O_SAVEBASE, O_BASELINE, O_TOLERANCE, O_REPORTMD, O_CASE,
	       O_RESFD, O_CALTOL, O_ALLOWMISSING, O_NOSAMPLING };
	static const struct option opts[] = {
		{ "list", optional_argument, NULL, O_LIST },
		{ "filter", required_argument, NULL, O_FILTER },
		{ "repeat", required_argument, NULL, O_REPEAT },
		{ "timeout", required_argument, NULL, O_TIMEOUT },
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "exact-layout", no_argument, NULL, O_EXACT_LAYOUT },
		{ "sim-full", no_argument, NULL, O_SIM_FULL },
		{ "sim-engine", required_argument, NULL, O_SIM_ENGINE },
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
		{ "no-sampling", no_argument, NULL, O_NOSAMPLING },
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
				fprintf(stderr, "%s: --repeat=%s: expected a count from 1 to 1000000\n", r->prog, quoted(optarg));
				return -1;
			}
			r->repeat = (unsigned)v;
			break;
		}
		case O_TIMEOUT:
			if (pmc__parse_decimal(optarg, &end, &r->timeout) || *end || !(r->timeout > 0) ||
			    r->timeout > 86400) {
				fprintf(stderr, "%s: --timeout=%s: expected seconds, more than 0 and at most 86400 (a day), in decimal digits, e.g. 30 or 0.5\n",
					r->prog, quoted(optarg));
				return -1;
			}
			break;
		case O_BACKEND:
			if (!strcmp(optarg, "perf")) {
				r->backend = PMC_BACKEND_PERF;
			} else if (!strcmp(optarg, "sim")) {
				r->backend = PMC_BACKEND_SIM;
			} else {
				fprintf(stderr, "%s: --backend=%s: unknown backend (perf or sim)\n", r->prog, quoted(optarg));
				return -1;
			}
			break;
		case O_STRICT:
			r->strict = true;
			break;
		case O_EXACT_LAYOUT:
			pmc__layout_per_call = 0;
			exact_layout = true;
			break;
		case O_SIM_FULL:
			r->sim_full = true;
			break;
		case O_SIM_ENGINE:
			r->sim_engine = optarg;
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
				fprintf(stderr, "%s: --color=%s: expected auto, always or never\n", r->prog, quoted(optarg));
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
				fprintf(stderr, "%s: --calibrate=%s: expected a number of runs from 1 to 1000\n", r->prog, quoted(optarg));
				return -1;
			}
			r->calibrate = (unsigned)v;
			break;
		}
		case O_TOLERANCE: {
			char why[1024];

			if (pmc__tolerance_add(&r->tolerance, optarg, why, sizeof(why))) {
				fprintf(stderr, "%s: %s\n", r->prog, quoted(why));
				return -1;
			}
			break;
		}
		case O_ALLOWMISSING:
			r->allow_missing = true;
			break;
		case O_NOSAMPLING:
			r->no_sampling = true;
			break;
		case O_MARGIN:
		case O_CALTOL: {
			double v = 0;

			if (pmc__parse_decimal(optarg, &end, &v))
				end = optarg;
			else if (*end == '%')
				end++;
			if (end == optarg || *end || !(v >= 0) || v > 1000) {
				fprintf(stderr, "%s: %s: expected a percentage from 0 to 1000 in decimal digits (e.g. 10 or 10%%)\n", r->prog, quoted(argv[optind - 1]));
				return -1;
			}
			/* A budget's tolerance above 100% is refused on reading
			 * (its range would reach below zero): never written. */
			if (c == O_CALTOL && v > 100) {
				fprintf(stderr, "%s: %s: expected a percentage from 0 to 100 (a budget's tolerance above 100%% would reach below zero; use --calibrate-margin for noisy counts)\n",
					r->prog, quoted(argv[optind - 1]));
				return -1;
			}
			if (c == O_MARGIN)
				r->margin = v, margin_set = r->margin_set = true;
			else
				r->cal_tolerance = v, cal_tolerance_set = true;
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
				fprintf(stderr, "%s: --pmc-request-fd=%s: expected a descriptor\n", r->prog, quoted(optarg));
				return -1;
			}
			break;
		case O_RESFD:
			r->result_fd = (int)strtol(optarg, &end, 10);
			if (*end || r->result_fd < 3) {
				fprintf(stderr, "%s: --pmc-result-fd=%s: expected a descriptor\n", r->prog, quoted(optarg));
				return -1;
			}
			break;
		default:
			fprintf(stderr, "%s: unknown option '%s' (see --help)\n", r->prog, quoted(argv[optind - 1]));
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (select cases with --filter)\n", r->prog, quoted(argv[optind]));
		return -1;
	}
	/* In CI, as snapshot-testing tools do (insta, jest --ci), nothing
	 * passes unjudged: an expectation without a budget fails.  A case
	 * the sim backend starts is told by its request (it sees no CI). */
	if (!r->strict && !r->request_fd && ci_set())
		r->strict = r->strict_from_ci = true;
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
	/* A flag that cannot take effect is a usage error, not ignored: the
	 * user meant something that would not happen. */
	if (!r->request_fd) {
		const char *alone = NULL, *needs = NULL;

		if (!r->baseline && (r->report_md || r->tolerance.n || r->tolerance.all_set ||
				     r->allow_missing)) {
			alone = r->report_md ? "--report-md" : r->allow_missing ? "--allow-missing" : "--tolerance";
			needs = "--baseline=FILE, whose comparison it reports or tunes";
		} else if (!r->calibrate && (margin_set || cal_tolerance_set || r->calibrate_key)) {
			alone = margin_set ? "--calibrate-margin" : cal_tolerance_set ? "--calibrate-tolerance" : "--calibrate-key";
			needs = "--calibrate, whose budgets it shapes";
		} else if (r->backend != PMC_BACKEND_SIM && (r->sim_full || r->sim_engine || exact_layout)) {
			alone = r->sim_full ? "--sim-full" : r->sim_engine ? "--sim-engine" : "--exact-layout";
			needs = "--backend=sim, the backend it tunes";
		}
		if (alone) {
			fprintf(stderr, "%s: %s does nothing without %s: add it, or drop %s\n", r->prog,
				alone, needs, alone);
			return -1;
		}
		/* Every file the run will write, and the fault switch, before
		 * any case runs: a run is not spent on what it cannot write. */
		{
			const struct {
				const char *option, *path;
			} outputs[] = { { "--json", r->json_path },
					{ "--junit", r->junit_path },
					{ "--save-baseline", r->save_baseline },
					{ "--report-md", r->report_md } };
			char why[1024];

			for (size_t k = 0; k < sizeof(outputs) / sizeof(outputs[0]); k++)
				if (outputs[k].path && pmc__output_check(outputs[k].path, why, sizeof(why))) {
					fprintf(stderr, "%s: %s: %s\n", r->prog, outputs[k].option, why);
					return -1;
				}
			for (size_t k = 0; k < sizeof(outputs) / sizeof(outputs[0]); k++)
				for (size_t m = k + 1; m < sizeof(outputs) / sizeof(outputs[0]); m++)
					if (pmc__output_same(outputs[k].path, outputs[m].path)) {
						char shown[512];

						fprintf(stderr,
							"%s: %s and %s both name \"%s\", and the second would overwrite the first: give each its own file\n",
							r->prog, outputs[k].option, outputs[m].option,
							pmc__escape_ctl(shown, sizeof(shown), outputs[m].path));
						return -1;
					}
			if (r->results_dir && results_dir_check(r->results_dir, why, sizeof(why))) {
				fprintf(stderr, "%s: --results-dir (or PMCHECK_RESULTS_DIR): %s\n", r->prog, why);
				return -1;
			}
			if (pmc__fault_switch_check(why, sizeof(why))) {
				fprintf(stderr, "%s: %s\n", r->prog, why);
				return -1;
			}
		}
	}
	if (r->calibrate && r->nhwdb == 0) {
		fprintf(stderr, "%s: --calibrate: say where budgets go with --hwdb=DIR (or PMCHECK_HWDB)\n", r->prog);
		return -1;
	}
	/* The sim engine, settled here: each case's valgrind is started
	 * from a canonical environment without PMCHECK_SIM_ENGINE.  A
	 * baseline keeps each region's functions, which only callgrind's
	 * dumps name, for the comparisons against it. */
	if (r->backend == PMC_BACKEND_SIM && !r->request_fd) {
		const char *engine = r->sim_engine ? r->sim_engine : getenv("PMCHECK_SIM_ENGINE");
		struct pmc_error err;

		if ((!engine || !*engine || !strcmp(engine, "auto")) && r->save_baseline)
			engine = "callgrind";
		r->sim_engine_settled = engine;
		if (pmc_sim_engine_prefer(engine, &err)) {
			fprintf(stderr, "%s: %s\n", r->prog, err.message);
			return -1;
		}
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
			bool hw, on_sim;
			unsigned b = o.backends ? o.backends : PMC_BACKEND_PERF | PMC_BACKEND_SIM;

			/* Offer a sim variant only where every event has a simulated
			 * equivalent; the rest would only ever skip there.  Decided
			 * by the events' kinds, never by finding their functions
			 * (a library loaded later is not here yet).  A case left
			 * with no backend (a sim-only case whose events do not
			 * parse) is still listed where it asked to run, to say why. */
			pmc__case_kinds(d, &hw, &on_sim);
			if (!on_sim && (b & PMC_BACKEND_PERF))
				b &= ~(unsigned)PMC_BACKEND_SIM;

			char labels[256];
			size_t k;

			/* name, labels (','-separated), resource lock, timeout, backends,
			 * timeout under sim (what pmcheck_add_suite registers) */
			snprintf(labels, sizeof(labels), "%s%s%s%s", d->suite, hw ? ",hardware" : "",
				 o.labels && *o.labels ? "," : "", o.labels ? o.labels : "");
			for (k = 0; labels[k]; k++)
				if (labels[k] == ';')
					labels[k] = ',';
			printf("%s\t%s\t%s\t%g\t%s%s%s\t%g\n", name, labels, hw ? "pmcheck_pmu" : "-",
			       o.timeout, b & PMC_BACKEND_PERF ? "perf" : "",
			       (b & PMC_BACKEND_PERF) && (b & PMC_BACKEND_SIM) ? "," : "",
			       b & PMC_BACKEND_SIM ? "sim" : "",
			       r->timeout > 0 ? o.timeout : o.timeout * PMC__SIM_TIMEOUT_FACTOR);
		}
	}
	if (shown == 0 && r->filter) {
		fprintf(stderr, "%s: no case matches --filter=%s\n", r->prog, quoted(r->filter));
		return PMC_EXIT_USAGE;
	}
	return 0;
}

/* ---- main ------------------------------------------------------------------------------ */

/* A case's name as a file name: '/' (a Google Benchmark instance's
 * arguments) and '%' escaped as %2F and %25, so no two names share one. */
static void file_stem(char *out, size_t size, const char *name)
{
	size_t o = 0;

	for (const char *p = name; *p && o + 4 < size; p++) {
		if (*p == '/' || *p == '%')
			o += (size_t)snprintf(out + o, size - o, "%%%02X", (unsigned char)*p);
		else
			out[o++] = *p;
	}
	out[o] = '\0';
}

/* Edits from a to b (a letter changed, added or dropped, two neighbours
 * swapped: optimal string alignment), for names under 64 letters. */
static int edits(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	int d[64][64];

	if (la >= 64 || lb >= 64)
		return 64;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = (int)i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = (int)j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int best = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);

			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
			    d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

/* A variable set for the run whose name is one of pmcheck's misspelt
 * (PMCHECK_SIM_EVN=NAME ran the cases without NAME, silently): named,
 * with the one meant. */
static void env_typos(const char *prefix)
{
	static const char *const known[] = {
		"PMCHECK_FAULT_CHECKS", "PMCHECK_GIT_COMMIT",	 "PMCHECK_HISTORY_DB",
		"PMCHECK_HWDB",		"PMCHECK_RESULTS_DIR",	 "PMCHECK_SIM_CHECK_IR",
		"PMCHECK_SIM_ENGINE",	"PMCHECK_SIM_ENV",	 "PMCHECK_SIM_LINE_INFO",
		"PMCHECK_SIM_TOOL_DIR", "PMCHECK_SIM_VALGRIND", "PMCHECK_SIM_DIR",
	};

	for (char **e = environ; *e; e++) {
		char name[64], shown[160];
		size_t n = strcspn(*e, "=");
		const char *meant = NULL;

		if (strncmp(*e, "PMCHECK_", 8) || n >= sizeof(name))
			continue;
		memcpy(name, *e, n);
		name[n] = '\0';
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]) && meant != name; i++) {
			if (!strcmp(name, known[i]))
				meant = name;
			else if (!meant && edits(name, known[i]) <= 2)
				meant = known[i];
		}
		if (meant && meant != name)
			printf("%swarning: %s is set, but pmcheck reads no variable of that name: did you mean %s?\n",
			       prefix, pmc__escape_ctl(shown, sizeof(shown), name), meant);
	}
}

/* The run's header: what a reader needs before the first case to read the
 * verdicts (under TAP, as diagnostics). */
static void print_header(const struct runner *r, char *key, size_t size)
{
	const char *prefix = r->tap ? "# " : "";
	char ci[128];

	key[0] = '\0';
	env_typos(prefix);
	if (r->strict_from_ci)
		printf("%sstrict: CI=%s: an expectation without a budget fails (as with --strict)\n",
		       prefix, pmc__escape_ctl(ci, sizeof(ci), getenv("CI")));
	if (r->backend == PMC_BACKEND_SIM) {
		pmc__sim_env_header(stdout, prefix);
		/* The key once per run; a case's lines write it "<key>".  Under
		 * TAP a failure's lines go to stderr, read apart from this
		 * header, so they keep the key whole. */
		if (pmc__ncases() > 0) {
			pmc__sim_profile_key(pmc__case(0), key, size);
			printf("%ssim: key %s%s\n", prefix, key, r->tap ? "" : " (written \"<key>\" below)");
			if (r->tap)
				key[0] = '\0';
		}
	}
}

static int write_results_dir(struct runner *r, json_t *doc, const struct pmc__results *rs)
{
	char path[PATH_MAX], escaped[NAME_MAX];
	const char *stem = r->prog;

	if (mkdir(r->results_dir, 0755) != 0 && errno != EEXIST) {
		char shown[512];

		fprintf(stderr, "%s: --results-dir=%s: %s\n", r->prog,
			pmc__escape_ctl(shown, sizeof(shown), r->results_dir), strerror(errno));
		return -1;
	}
	if (rs->n == 1) {
		file_stem(escaped, sizeof(escaped) - 16, rs->cases[0].name);
		stem = escaped;
	}
	/* The sim variant of a case is a test of its own. */
	if (snprintf(path, sizeof(path), "%s/%s%s.json", r->results_dir, stem,
		     r->backend == PMC_BACKEND_SIM ? ".sim" : "") >= (int)sizeof(path))
		return -1;
	int rc = pmc__write_json(path, doc);

	if (rc != 0) {
		char shown[PATH_MAX];

		fprintf(stderr, "%s: cannot write %s: %s; --results-dir names a directory for a new or regular file of each case\n",
			r->prog, pmc__escape_ctl(shown, sizeof(shown), path), strerror(-rc));
		return -1;
	}
	return 0;
}

int pmc_main(int argc, char **argv)
{
	struct runner r = { .prog = pmc__file_part(argc > 0 ? argv[0] : "pmcheck-suite") };
	size_t counts[PMC__NVERDICTS] = { 0 };
	size_t i, total = 0, idx = 0;
	struct pmc__results run = { 0 };
	json_t *doc = NULL, *summary;
	bool keeps;
	double t0 = pmc__child_now();
	int rc, status = PMC_EXIT_PASS;
	char run_key[PMC_HWDB_KEY_MAX];

	pmc__program_path = argc > 0 ? argv[0] : NULL;
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
		return pmc__run_inner_case(&r);
	for (i = 0; i < pmc__ncases(); i++) {
		char name[256];

		pmc__full_name(pmc__case(i), name, sizeof(name));
		total += pmc__filter_match(r.filter, name);
	}
	if (r.backend == PMC_BACKEND_SIM && !pmc_sim_active() && total > 0 &&
	    (rc = pmc__sim_unavailable(&r)) != 0) {
		free(r.hwdb_env);
		return rc;
	}
	if (total == 0) {
		fprintf(stderr, "%s: no case matches%s%s (see --list)\n", r.prog,
			r.filter ? " --filter=" : "", r.filter ? quoted(r.filter) : "");
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
	pmc__runner_forward_signals();
	if (r.tap && !r.calibrate)
		printf("TAP version 13\n1..%zu\n", total);
	print_header(&r, run_key, sizeof(run_key));
	fflush(stdout);
	if (r.calibrate) {
		status = pmc__run_calibrate(&r, total);
		pmc__hwdb_teardown();
		free(r.hwdb_env);
		return status;
	}
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
		pmc__run_one(&r, d, &secs, &res);
		counts[res.verdict]++;
		if (r.tap) {
			pmc__print_tap(stdout, &res, idx);
			/* TAP harnesses (meson test, prove) show a test's stderr,
			 * not its YAML: what did not pass, in the console's words. */
			if (res.verdict == PMC_FAIL || res.verdict == PMC_ERROR ||
			    res.verdict == PMC_INCONCLUSIVE || res.verdict == PMC_UNBUDGETED) {
				pmc__print_case_line(stderr, &res, idx, total, false, NULL);
				pmc__print_case_details(stderr, &res, r.verbose, NULL);
			}
		} else {
			if (isatty(STDOUT_FILENO) && !r.verbose)
				printf("\033[K");
			pmc__print_case_line(stdout, &res, idx, total, r.color, run_key);
			pmc__print_case_details(stdout, &res, r.verbose, run_key);
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
	/* Under CTest (pmcheck_add_suite passes --ctest), an unbudgeted case
	 * is a skip, with the command that records its budget in its output:
	 * ctest must not show it as Passed. */
	if (r.ctest && status == PMC_EXIT_UNBUDGETED)
		status = PMC_EXIT_SKIP;
	/* A whole-suite run also answers for the budgets: every budgeted case
	 * must have run (a filtered run selects cases on purpose). */
	if (!r.filter && pmc__budgets_not_run(&run, r.backend == PMC_BACKEND_SIM ? "sim" : "perf",
					      stdout) > 0 &&
	    (status == PMC_EXIT_PASS || status == PMC_EXIT_SKIP || status == PMC_EXIT_UNBUDGETED))
		status = PMC_EXIT_FAIL;
	/* The machine and the commit (a git run) only for a run that keeps
	 * its results or compares them: a run read in a terminal does
	 * without. */
	keeps = r.json_path || r.junit_path || r.results_dir || r.save_baseline || r.baseline;
	if (keeps)
		run.environment = pmc__environment(r.backend == PMC_BACKEND_SIM ? "sim" : "perf");
	summary = pmc__summary(&run);
	if (!r.tap)
		pmc__print_summary(stdout, summary, pmc__child_now() - t0);
	else
		printf("# %s\n", json_string_value(json_object_get(summary, "line")));
	json_decref(summary);
	if (r.baseline) {
		int cs = pmc__run_compare_baseline(&r, &run);

		if (cs == PMC_EXIT_ERROR ||
		    (cs == PMC_EXIT_REGRESSION &&
		     (status == PMC_EXIT_PASS || status == PMC_EXIT_UNBUDGETED)))
			status = cs;
	}
	if (keeps) {
		struct pmc__run_info info = { r.prog, r.backend == PMC_BACKEND_SIM ? "sim" : "perf",
					      argc, argv, pmc__child_now() - t0 };

		doc = pmc__results_doc(&run, &info);
	}
	if (r.json_path && (rc = pmc__write_json(r.json_path, doc)) != 0) {
		fprintf(stderr, "%s: cannot write --json=%s: %s\n", r.prog, r.json_path, strerror(-rc));
		status = PMC_EXIT_ERROR;
	}
	if (r.junit_path) {
		char *xml = pmc__junit(&run, r.prog, pmc__child_now() - t0);
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
