/* SPDX-License-Identifier: MIT */
/*
 * `pmcheck results`: merge suite result files, each checked on read, and
 * print the summary, the per-suite table, the merged JSON and JUnit.
 *
 * Over 600 lines because `pmcheck results` is one command with many outputs
 * over the same merged records (the summary, the per-suite table, merged
 * JSON, JUnit, the dashboard exports), and cmd_results (about 200 lines)
 * checks every option against the others before any work.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/*
 * Text from a results file, for a terminal or a Markdown page: a control
 * character (an escape sequence, a newline that would forge a line) is
 * written \xHH or \n (pmc__escape_ctl).  A ring of buffers, so that one
 * printf can show several.
 */
static const char *esc(const char *s)
{
	static char ring[8][4096];
	static unsigned next;
	char *out = ring[next++ % 8];

	return pmc__escape_ctl(out, sizeof(ring[0]), s ? s : "");
}

/* Read one results file into rs (its cases appended, its environment kept
 * if rs has none yet). */
/* The kernel each loaded case ran on (its file's environment), in the
 * order of the merged cases: --by-suite gives one column per kernel. */
static char **case_kernel;
static size_t ncase_kernel;

static void note_kernel(size_t upto, json_t *env)
{
	json_t *kj = json_object_get(env, "kernel");
	const char *k = pmc__jstr(kj, "release"), *m = pmc__jstr(kj, "machine");
	char **grown = realloc(case_kernel, (upto + 1) * sizeof(*case_kernel));

	if (!grown)
		return;
	case_kernel = grown;
	while (ncase_kernel < upto) {
		char *name = NULL;

		if (asprintf(&name, "%s%s%s%s", *k ? esc(k) : "?", *m ? " (" : "", esc(m), *m ? ")" : "") < 0)
			name = NULL;
		case_kernel[ncase_kernel++] = name ? name : strdup("?");
	}
}

/* The CPU signatures of the loaded files, each once: an export to a
 * dashboard is one machine's (its testbed). */
static char *machines[8];
static size_t nmachines, more_machines;

static void note_machine(json_t *env)
{
	const char *sig = pmc__jstr(json_object_get(env, "cpu"), "signature");

	for (size_t i = 0; i < nmachines; i++)
		if (!strcmp(machines[i], sig))
			return;
	if (nmachines == sizeof(machines) / sizeof(machines[0]))
		more_machines++;
	else if ((machines[nmachines] = strdup(*sig ? sig : "?")) != NULL)
		nmachines++;
}

static int load_into(const char *path, struct pmc__results *rs)
{
	struct pmc__results one;
	char why[1024];
	size_t i;

	if (pmc__results_load(path, &one, why, sizeof(why))) {
		fprintf(stderr, "pmcheck results: %s\n", why);
		return -1;
	}
	for (i = 0; i < one.n; i++)
		if (pmc__results_add(rs, &one.cases[i]))
			break;
	note_kernel(rs->n, one.environment);
	note_machine(one.environment);
	if (!rs->environment)
		rs->environment = json_incref(one.environment);
	pmc__results_release(&one);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(const char *dir, struct pmc__results *rs, size_t *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	struct stat sb;
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "pmcheck results: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char **p;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		/* Only regular files: a FIFO named *.json would block the read. */
		if (fstatat(dirfd(d), e->d_name, &sb, 0) != 0) {
			fprintf(stderr, "pmcheck results: %s/%s: skipped: %s\n", dir, e->d_name, strerror(errno));
			continue;
		}
		if (!S_ISREG(sb.st_mode)) {
			fprintf(stderr, "pmcheck results: %s/%s: skipped: %s, not a results file (only regular files are read)\n",
				dir, e->d_name, S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
			continue;
		}
		p = realloc(names, (n + 1) * sizeof(*names));
		if (!p)
			break;
		names = p;
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		rc |= load_into(names[i], rs);
		free(names[i]);
	}
	free(names);
	*files += n;
	return rc;
}

static const char *const verdicts[] = { "PASS", "FAIL", "SKIP", "ERROR", "KNOWN-ISSUE",
					"INCONCLUSIVE", "UNBUDGETED" };

/* Verdict counts per suite (for a conformance suite: per area of the
 * manual), in the order suites first appear; only the cases that ran on
 * `kernel` when it is not NULL. */
static json_t *counts_by_suite(const struct pmc__results *rs, const char *kernel)
{
	json_t *out = json_object();

	for (size_t i = 0; i < rs->n; i++) {
		const char *suite = rs->cases[i].suite, *v = pmc_verdict_name(rs->cases[i].verdict);
		json_t *row = json_object_get(out, suite);

		if (kernel && (i >= ncase_kernel || strcmp(case_kernel[i], kernel)))
			continue;
		if (!row) {
			row = json_object();
			for (size_t k = 0; k < sizeof(verdicts) / sizeof(verdicts[0]); k++)
				json_object_set_new(row, verdicts[k], json_integer(0));
			json_object_set_new(out, suite, row);
		}
		json_object_set_new(row, v, json_integer(json_integer_value(json_object_get(row, v)) + 1));
	}
	return out;
}

/* The kernels the loaded cases ran on, in first-seen order. */
static json_t *kernels_seen(void)
{
	json_t *ks = json_array();

	for (size_t i = 0; i < ncase_kernel; i++) {
		size_t k;

		for (k = 0; k < json_array_size(ks); k++)
			if (!strcmp(json_string_value(json_array_get(ks, k)), case_kernel[i]))
				break;
		if (k == json_array_size(ks))
			json_array_append_new(ks, json_string(case_kernel[i]));
	}
	return ks;
}

/* One cell: the nonzero verdict counts ("10 pass, 1 skip"), "-" for none. */
static void fmt_cell(char *buf, size_t size, json_t *row)
{
	static const char *const words[] = { "pass", "fail", "skip", "error", "known issue",
					      "inconclusive" };
	size_t used = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < 6 && used < size; k++) {
		json_int_t n = json_integer_value(json_object_get(row, verdicts[k]));

		if (n)
			used += (size_t)snprintf(buf + used, size - used, "%s%" JSON_INTEGER_FORMAT " %s",
						 used ? ", " : "", n, words[k]);
	}
	if (!buf[0])
		snprintf(buf, size, "-");
}

/* Several kernels: suites down, one column per kernel. */
static char *kernel_table(json_t *per_kernel, json_t *suites, bool markdown)
{
	const char *kernel, *suite;
	json_t *by, *row;
	char *buf = NULL, cell[160];
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "%sPer-suite results on %zu kernels\n\n", markdown ? "### " : "",
		json_object_size(per_kernel));
	fprintf(f, markdown ? "| suite |" : "  %-10s", markdown ? "" : "suite");
	json_object_foreach(per_kernel, kernel, by)
		fprintf(f, markdown ? " %s |" : " | %-34.34s", kernel);
	fprintf(f, "\n");
	if (markdown) {
		fprintf(f, "| --- |");
		json_object_foreach(per_kernel, kernel, by)
			fprintf(f, " --- |");
		fprintf(f, "\n");
	}
	json_object_foreach(suites, suite, row) {
		fprintf(f, markdown ? "| %s |" : "  %-10s", esc(suite));
		json_object_foreach(per_kernel, kernel, by) {
			fmt_cell(cell, sizeof(cell), json_object_get(by, suite));
			fprintf(f, markdown ? " %s |" : " | %-34.34s", cell);
		}
		fprintf(f, "\n");
	}
	fclose(f);
	return buf;
}

static char *suite_table(json_t *by, json_t *env, bool markdown)
{
	json_t *kernel = json_object_get(env, "kernel"), *cpu = json_object_get(env, "cpu"), *row;
	const char *suite;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "%sPer-suite results: kernel %s (%s), CPU %s, backend %s\n\n",
		markdown ? "### " : "", esc(pmc__jstr(kernel, "release")), esc(pmc__jstr(kernel, "machine")),
		esc(pmc__jstr(cpu, "signature")), esc(pmc__jstr(env, "backend")));
	if (markdown)
		fprintf(f, "| suite | pass | fail | skip | error | known issue | inconclusive | unbudgeted |\n"
			   "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	else
		fprintf(f, "  %-14s %5s %5s %5s %5s %6s %6s %6s\n", "suite", "pass", "fail", "skip",
			"error", "known", "inconc", "unbudg");
	json_object_foreach(by, suite, row) {
#define N(v) json_integer_value(json_object_get(row, v))
		if (markdown)
			fprintf(f, "| %s | %lld | %lld | %lld | %lld | %lld | %lld | %lld |\n", esc(suite),
				N("PASS"), N("FAIL"), N("SKIP"), N("ERROR"), N("KNOWN-ISSUE"),
				N("INCONCLUSIVE"), N("UNBUDGETED"));
		else
			fprintf(f, "  %-14s %5lld %5lld %5lld %5lld %6lld %6lld %6lld\n", esc(suite), N("PASS"),
				N("FAIL"), N("SKIP"), N("ERROR"), N("KNOWN-ISSUE"), N("INCONCLUSIVE"),
				N("UNBUDGETED"));
#undef N
	}
	fclose(f);
	return buf;
}

/* Markdown: every case that did not pass, with each failed check's words
 * (where a library changed since calibration, or the layout moved, they
 * say so); appended to the table. */
static char *with_failures(char *md, const struct pmc__results *rs)
{
	char *buf = NULL;
	size_t size = 0, shown = 0;
	FILE *f;

	if (!md || !(f = open_memstream(&buf, &size)))
		return md;
	fputs(md, f);
	for (size_t i = 0; i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];

		if (c->verdict != PMC_FAIL && c->verdict != PMC_ERROR &&
		    c->verdict != PMC_INCONCLUSIVE && c->verdict != PMC_UNBUDGETED)
			continue;
		if (!shown++)
			fprintf(f, "\n### Cases that did not pass\n\n");
		fprintf(f, "- **%s** `%s`\n", pmc_verdict_name(c->verdict), esc(c->name));
		for (size_t k = 0; k < c->nchecks; k++)
			if (c->checks[k].status != PMC__CHECK_PASS &&
			    (c->checks[k].status != PMC__CHECK_UNBUDGETED ||
			     c->verdict == PMC_UNBUDGETED))
				fprintf(f, "  - %s\n", esc(c->checks[k].message));
		if (!c->nchecks && c->reason)
			fprintf(f, "  - %s\n", esc(c->reason));
	}
	fclose(f);
	free(md);
	return buf;
}

/* --top: where each region's events went, per function (sim attribution,
 * or the samples of a failed case's perf re-run). */
static void print_top(const struct pmc__results *rs, unsigned top)
{
	bool any = false;

	for (size_t i = 0; i < rs->n; i++)
		for (size_t j = 0; j < rs->cases[i].nregions; j++) {
			const struct pmc__region_rec *g = &rs->cases[i].regions[j];

			if (!g->nfns)
				continue;
			any = true;
			if (g->nsampled) {
				printf("\n%s, region \"%s\": per function, from perf samples (statistical unless every event was sampled): samples, and the share of the samples times the region's mean count\n",
				       esc(rs->cases[i].name), esc(g->name));
				for (size_t s = 0; s < g->nsampled; s++)
					printf("  %s: %" PRIu64 " samples, one every %" PRIu64 ", %" PRIu64 " executions%s\n",
					       esc(g->sampled[s].label), g->sampled[s].samples,
					       g->sampled[s].period, g->sampled[s].executions,
					       g->sampled[s].lost ? ", some lost" : "");
			} else {
				printf("\n%s, region \"%s\": own cost per function (sim, the mean of the first measured executions)\n",
				       esc(rs->cases[i].name), esc(g->name));
			}
			printf("  %-36s %-24s", "function", "object");
			for (size_t e = 0; e < g->nev; e++)
				if (!g->fns[0].samples || !isnan(g->fns[0].cost[e]))
					printf(" %16.16s%s", esc(g->ev[e].label), g->fns[0].samples ? "  samples" : "");
			printf("\n");
			for (size_t k = 0; k < g->nfns && k < top; k++) {
				printf("  %-36.36s %-24.24s", esc(g->fns[k].name),
				       esc(pmc__file_part(g->fns[k].object)));
				for (size_t e = 0; e < g->nev; e++) {
					char v[48];

					if (g->fns[k].samples && isnan(g->fns[k].cost[e]))
						continue;
					pmc__fmt_num(v, sizeof(v), g->fns[k].cost[e]);
					printf(" %16s", v);
					if (g->fns[k].samples)
						printf(" %8" PRIu64, g->fns[k].samples[e]);
				}
				printf("\n");
			}
		}
	if (!any)
		printf("\n--top: no region carries per-function costs (they are recorded on the sim backend, and for a case that failed on perf, from samples)\n");
}

/* --clear DIR...: the start of a run empties each directory of old result
 * files (and makes it when it is missing). */
static int clear_dirs(int n, char **dirs)
{
	int rc = 0;

	if (n < 1)
		return cli_usage("results", "--clear needs the directories to empty");
	for (int i = 0; i < n; i++) {
		DIR *d = opendir(dirs[i]);
		struct dirent *e;

		if (!d) {
			if (mkdir(dirs[i], 0755) != 0 && errno != EEXIST) {
				fprintf(stderr, "pmcheck results: cannot create %s: %s\n", dirs[i],
					strerror(errno));
				rc = PMC_EXIT_ERROR;
			}
			continue;
		}
		while ((e = readdir(d))) {
			size_t len = strlen(e->d_name);
			char *p;

			if (len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
			    asprintf(&p, "%s/%s", dirs[i], e->d_name) >= 0) {
				unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	return rc;
}

/* The testbed a dashboard files one machine's figures under: its CPU
 * model as hwdb names it, else its signature. */
static void testbed_of(const char *sig, char *out, size_t size)
{
	struct pmc_hwdb *hw = NULL;
	struct pmc_hwdb_match m;
	struct pmc_error err;

	if (pmc_hwdb_open(&hw, NULL, 0, &err) == 0 && pmc_hwdb_match(hw, sig, &m, NULL) == 0 && m.model[0])
		snprintf(out, size, "%s", esc(m.model));
	else
		snprintf(out, size, "%s", esc(sig));
	pmc_hwdb_free(hw);
}

/* --format: the document, to `output` (atomically) or stdout, and what was
 * left out, on stderr.  Returns 0 or PMC_EXIT_ERROR. */
static int export_results(const struct pmc__results *rs, const char *format, const char *output)
{
	struct export_notes notes = { 0 };
	char testbed[128], *text;
	json_t *doc;
	int rc = 0;

	if (nmachines + more_machines > 1) {
		fprintf(stderr, "pmcheck results: --format=%s: these results come from %zu machines (", format,
			nmachines + more_machines);
		for (size_t i = 0; i < nmachines; i++)
			fprintf(stderr, "%s%s", i ? ", " : "", machines[i]);
		fprintf(stderr, "%s); a dashboard run is one machine's (Bencher's testbed): export each machine's results on its own\n",
			more_machines ? ", ..." : "");
		return PMC_EXIT_ERROR;
	}
	testbed_of(nmachines ? machines[0] : "?", testbed, sizeof(testbed));
	doc = !strcmp(format, "bencher") ? export_bencher(rs, &notes) : export_github(rs, testbed, &notes);
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	json_decref(doc);
	if (!text) {
		fprintf(stderr, "pmcheck results: --format=%s: out of memory\n", format);
		return PMC_EXIT_ERROR;
	}
	if (output) {
		if (pmc_write_file_atomic(output, text, strlen(text)) != 0) {
			fprintf(stderr, "pmcheck results: cannot write %s: %s\n", output, strerror(errno));
			rc = PMC_EXIT_ERROR;
		}
	} else {
		printf("%s\n", text);
	}
	free(text);
	if (rc)
		return rc;
	fprintf(stderr, "%s: testbed %s (the CPU model; for Bencher: bencher run --testbed %s --adapter json --file %s)\n",
		format, testbed, testbed, output ? output : "FILE");
	if (notes.cases_without_figures) {
		fprintf(stderr, "not exported: %zu cases without figures (", notes.cases_without_figures);
		for (int v = 0, first = 1; v < PMC__NVERDICTS; v++)
			if (notes.by_verdict[v]) {
				fprintf(stderr, "%s%zu %s", first ? "" : ", ", notes.by_verdict[v],
					pmc_verdict_name((enum pmc_verdict)v));
				first = 0;
			}
		fprintf(stderr, ")\n");
	}
	if (notes.events_without_samples)
		fprintf(stderr, "not exported: %zu events without samples in cases that have figures\n",
			notes.events_without_samples);
	return 0;
}

int cmd_results(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "require-measured", no_argument, NULL, 'r' },
		{ "clear", no_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'j' },
		{ "junit", required_argument, NULL, 'u' },
		{ "by-suite", no_argument, NULL, 's' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "top", optional_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *json_path = NULL, *junit_path = NULL, *md_path = NULL, *format = NULL,
		   *output = NULL;
	FILE *say = stdout;
	bool require_measured = false, clear = false, by_suite = false;
	unsigned top = 0;
	struct pmc__results rs = { 0 };
	json_t *summary, *doc = NULL;
	size_t files = 0;
	int i, c, rc = 0, status = 0;

	while ((c = cli_next("results", argc, argv, "h", opts, &status)) != -1) {
		switch (c) {
		case -2:
			return status;
		case 'r':
			require_measured = true;
			break;
		case 'c':
			clear = true;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'u':
			junit_path = optarg;
			break;
		case 's':
			by_suite = true;
			break;
		case 't':
			top = 5;
			if (optarg && cli_positive("results", "--top", optarg, &top))
				return PMC_EXIT_USAGE;
			break;
		case 'm':
			by_suite = true;
			md_path = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "bencher") && strcmp(optarg, "github-action-benchmark"))
				return cli_usage("results", "--format=%s: the formats are bencher (Bencher Metric Format) and github-action-benchmark (its customSmallerIsBetter input)",
						 optarg);
			format = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		}
	}
	if (output && !format)
		return cli_usage("results", "--output=%s: names where --format writes; give --format", output);
	/* The document alone on stdout: the summary goes to stderr. */
	if (format && !output && (top || by_suite))
		return cli_usage("results", "--format without --output writes the document to stdout: give --output=FILE to combine it with --top, --by-suite or --markdown");
	if (format && !output)
		say = stderr;
	{
		const char *opt[] = { "--json", "--junit", "--markdown", "--output" };
		const char *path[] = { json_path, junit_path, md_path, output };
		int rc = cli_outputs("results", opt, path, 4);

		if (rc)
			return rc;
	}
	if (clear)
		return clear_dirs(argc - optind, argv + optind);
	for (i = optind; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			rc |= load_dir(argv[i], &rs, &files);
		} else {
			rc |= load_into(argv[i], &rs);
			files++;
		}
	}
	if (!rc && files == 0 && !require_measured) {
		/* A summary of nothing reads as a clean run: say it (the guard,
		 * --require-measured, fails it below as nothing measured). */
		if (optind == argc)
			fprintf(stderr, "pmcheck results: no results given: name result files or the directory PMCHECK_RESULTS_DIR pointed to\n");
		else
			fprintf(stderr, "pmcheck results: no result files (*.json) in %s%s: did the tests run with PMCHECK_RESULTS_DIR set to it?\n",
				argv[optind], argc - optind > 1 ? " and the others given" : "");
		return PMC_EXIT_ERROR;
	}
	if (rc) {
		/* A summary without the unreadable files would be partial. */
		fprintf(stderr, "pmcheck results: no summary: a results file above could not be read (fix or remove it)\n");
		pmc__results_release(&rs);
		return PMC_EXIT_ERROR;
	}
	summary = pmc__summary(&rs);
	fprintf(say, "%s (from %zu result files)\n", pmc__jstr(summary, "line"), files);
	{
		json_t *reasons = json_object_get(summary, "skip_reasons"), *n;
		const char *reason;

		json_object_foreach(reasons, reason, n)
			fprintf(say, "  SKIP %3" JSON_INTEGER_FORMAT " x %s\n", json_integer_value(n), esc(reason));
	}
	status = (int)json_integer_value(json_object_get(summary, "exit_status"));
	if (status == PMC_EXIT_SKIP)
		status = PMC_EXIT_PASS;
	/* The guard judges one thing, that something was measured: a failed
	 * case is already a failed test of its own, and the summary above
	 * shows it. */
	if (require_measured)
		status = PMC_EXIT_PASS;
	if (require_measured && files > 0 && json_integer_value(json_object_get(summary, "measured")) == 0 &&
	    json_integer_value(json_object_get(summary, "measuring")) == 0) {
		/* e.g. ctest -L conformance: the selection holds no case that
		 * counts events, so there is nothing whose skipping to guard. */
		fprintf(say, "no measuring case among the selected ones (they check behaviour, not counts): nothing to guard\n");
	} else if (require_measured && json_integer_value(json_object_get(summary, "measured")) == 0) {
		if (files == 0)
			/* The guard's case: the tests ran (it comes after them);
			 * no case wrote a file.  A suite that stops before its
			 * first case writes none. */
			fprintf(stderr, "pmcheck results: no result files: no case wrote one. Either the tests ran without PMCHECK_RESULTS_DIR set to this directory, or every suite stopped before its first case: a sanitizer build run with --backend=sim (refused: valgrind cannot run it), no valgrind, a usage error; each test's own output says which (ctest --output-on-failure)\n");
		else
			fprintf(stderr, "pmcheck results: nothing was measured: every measuring case was skipped or broken (--require-measured)\n");
		status = PMC_EXIT_FAIL;
	}
	json_decref(summary);
	if (!rs.environment)
		rs.environment = json_object();
	/* The merged document only for --json: made for every case, it
	 * costs more than reading them did. */
	if (json_path) {
		char *args[] = { (char *)"pmcheck", (char *)"results" };
		struct pmc__run_info info = { "pmcheck results", "", 2, args, 0.0 };

		doc = pmc__results_doc(&rs, &info);
	}
	if (format && export_results(&rs, format, output))
		status = PMC_EXIT_ERROR;
	if (top)
		print_top(&rs, top);
	if (by_suite) {
		json_t *by = counts_by_suite(&rs, NULL), *ks = kernels_seen(), *per = NULL;
		char *text, *md;
		size_t k;

		/* Results from several kernels: a column each. */
		if (json_array_size(ks) > 1) {
			per = json_object();
			for (k = 0; k < json_array_size(ks); k++) {
				const char *name = json_string_value(json_array_get(ks, k));

				json_object_set_new(per, name, counts_by_suite(&rs, name));
			}
		}
		text = per ? kernel_table(per, by, false) : suite_table(by, rs.environment, false);
		md = !md_path ? NULL : per ? kernel_table(per, by, true)
					   : suite_table(by, rs.environment, true);
		md = md_path ? with_failures(md, &rs) : NULL;
		if (per)
			json_object_set_new(json_object_get(doc, "summary"), "by_suite_kernel", per);
		json_decref(ks);

		if (text)
			printf("\n%s", text);
		if (md_path && (!md || pmc_write_file_atomic(md_path, md, strlen(md)) != 0)) {
			fprintf(stderr, "pmcheck results: cannot write %s: %s\n", md_path, strerror(errno));
			rc = -1;
		}
		free(text);
		free(md);
		json_object_set_new(json_object_get(doc, "summary"), "by_suite", by);
	}
	if (rc)
		status = PMC_EXIT_ERROR;
	if (json_path && pmc__write_json(json_path, doc) != 0) {
		fprintf(stderr, "pmcheck results: cannot write %s: %s\n", json_path, strerror(errno));
		status = PMC_EXIT_ERROR;
	}
	if (junit_path) {
		char *xml = pmc__junit(&rs, "pmcheck results", 0.0);

		if (!xml || pmc_write_file_atomic(junit_path, xml, strlen(xml)) != 0) {
			fprintf(stderr, "pmcheck results: cannot write %s: %s\n", junit_path, strerror(errno));
			status = PMC_EXIT_ERROR;
		}
		free(xml);
	}
	json_decref(doc);
	pmc__results_release(&rs);
	for (size_t k = 0; k < ncase_kernel; k++)
		free(case_kernel[k]);
	free(case_kernel);
	case_kernel = NULL;
	ncase_kernel = 0;
	for (size_t k = 0; k < nmachines; k++)
		free(machines[k]);
	nmachines = more_machines = 0;
	return status;
}
