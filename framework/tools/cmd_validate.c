/* SPDX-License-Identifier: MIT */
/*
 * `pmcheck validate`: run the validation suite (the pmcheck-validate
 * program) on this machine or the simulator, and turn its results into a
 * per-event table -- expected, measured, deviation, verdict -- and a JSON
 * report that names the CPU signature, model, kernel and backend, ready to
 * be kept in hwdb/results/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "cli.h"


static double jnum(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The validation program: --program, PMCHECK_VALIDATE_PROGRAM, next to this
 * executable, then the build tree's. */
static int find_program(const char *given, char *out, size_t size)
{
	char self[4096];
	ssize_t n;

	if (given) {
		snprintf(out, size, "%s", given);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	if (getenv("PMCHECK_VALIDATE_PROGRAM")) {
		snprintf(out, size, "%s", getenv("PMCHECK_VALIDATE_PROGRAM"));
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		snprintf(out, size, "%s/pmcheck-validate", dirname(self));
		if (access(out, X_OK) == 0)
			return 0;
	}
#ifdef PMCHECK_VALIDATE_BUILD_PATH
	snprintf(out, size, "%s", PMCHECK_VALIDATE_BUILD_PATH);
	if (access(out, X_OK) == 0)
		return 0;
#endif
	return -ENOENT;
}

/* Model facts for the header: what validate judged against. */
static json_t *model_json(const char *backend, const char *signature)
{
	struct pmc_hwdb_model model;
	struct pmc_hwdb_match m;
	struct pmc_hwdb *db = NULL;
	struct pmc_error err;
	json_t *out, *errata = json_array();
	int listed = 0;

	memset(&model, 0, sizeof(model));
	if (pmc_hwdb_open(&db, NULL, 0, &err) == 0) {
		if (!strcmp(backend, "sim"))
			listed = pmc_hwdb_model(db, "callgrind", &model) == 0;
		else
			listed = pmc_hwdb_match(db, signature, &m, &model) == 0 && model.id[0];
		pmc_hwdb_free(db);
	}
	for (char *save = NULL, *line = strtok_r(model.errata, "\n", &save); listed && line;
	     line = strtok_r(NULL, "\n", &save))
		json_array_append_new(errata, json_string(line));
	out = json_pack("{s:s, s:b, s:s, s:s, s:o}", "id", listed ? model.id : "unlisted", "listed",
			listed, "name", listed ? model.name : "", "where", listed ? model.where : "",
			"errata", errata);
	return out;
}

static void print_bound(char *buf, size_t size, double lo, double hi)
{
	if (!isnan(lo) && !isnan(hi) && lo == hi)
		snprintf(buf, size, "= %.4g", lo);
	else if (!isnan(lo) && !isnan(hi))
		snprintf(buf, size, "%.4g..%.4g", lo, hi);
	else if (!isnan(hi))
		snprintf(buf, size, "<= %.4g", hi);
	else
		snprintf(buf, size, ">= %.4g", lo);
}

/* Build the report from a results document. */
static json_t *report_of(json_t *doc, const char *backend)
{
	json_t *env = json_object_get(doc, "environment"), *rows = json_array(),
	       *skipped = json_array(), *c;
	size_t i, pass = 0, fail = 0;

	json_array_foreach(json_object_get(doc, "cases"), i, c) {
		const char *verdict = pmc__jstr(c, "verdict");
		json_t *chk;
		size_t k, figures = 0;

		if (!strcmp(verdict, "SKIP") || !strcmp(verdict, "ERROR")) {
			json_array_append_new(skipped, json_pack("{s:s, s:s, s:s}", "case",
								 pmc__jstr(c, "name"), "verdict", verdict,
								 "reason", pmc__jstr(c, "reason")));
			continue;
		}
		json_array_foreach(json_object_get(c, "checks"), k, chk) {
			double lo = jnum(chk, "lo"), hi = jnum(chk, "hi"), x = jnum(chk, "measured");
			/* Deviation: from the value when one is expected, else the
			 * distance outside the range (0 inside it). */
			double ref = lo == hi ? lo : x < lo ? lo : x > hi ? hi : x;
			int ok = !strcmp(pmc__jstr(chk, "status"), "pass");
			json_t *row;

			if (strcmp(pmc__jstr(chk, "kind"), "figure"))
				continue;
			figures++;
			ok ? pass++ : fail++;
			row = json_pack("{s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:s, s:s, s:O}", "case",
					pmc__jstr(c, "name"), "figure", pmc__jstr(chk, "region"), "event",
					pmc__jstr(chk, "event"), "expected", ref, "measured", x,
					"deviation", x - ref, "deviation_pct",
					ref != 0 ? 100.0 * (x - ref) / ref : 0.0, "verdict",
					ok ? "PASS" : "FAIL", "message", pmc__jstr(chk, "message"), "notes",
					json_object_get(c, "notes"));
			json_object_set_new(row, "expected_lo", isnan(lo) ? json_null() : json_real(lo));
			json_object_set_new(row, "expected_hi", isnan(hi) ? json_null() : json_real(hi));
			json_array_append_new(rows, row);
		}
		if (figures == 0)
			json_array_append_new(skipped,
					      json_pack("{s:s, s:s, s:s}", "case", pmc__jstr(c, "name"),
							"verdict", verdict, "reason",
							strcmp(verdict, "PASS") ? pmc__jstr(c, "reason")
										: "no figure judged"));
	}
	return json_pack("{s:s, s:s, s:O, s:o, s:o, s:o, s:{s:i, s:i, s:i}}", "schema",
			 "pmcheck-validation/1", "backend", backend, "environment", env, "model",
			 model_json(backend, pmc__jstr(json_object_get(env, "cpu"), "signature")), "rows",
			 rows, "skipped", skipped, "summary", "pass", (int)pass, "fail", (int)fail,
			 "skip", (int)json_array_size(skipped));
}

static void print_report(json_t *rep)
{
	json_t *env = json_object_get(rep, "environment"), *model = json_object_get(rep, "model"),
	       *row, *e;
	size_t i;

	printf("pmcheck validate: %s%s (%s), kernel %s, backend %s\n", pmc__jstr(model, "id"),
	       json_is_true(json_object_get(model, "listed")) ? "" : " (not in hwdb: architectural expectations)",
	       pmc__jstr(json_object_get(env, "cpu"), "signature"),
	       pmc__jstr(json_object_get(env, "kernel"), "release"), pmc__jstr(rep, "backend"));
	json_array_foreach(json_object_get(model, "errata"), i, e)
		printf("  erratum: %s\n", json_string_value(e));
	printf("\n  %-26s %-22s %12s %12s %9s  %s\n", "case", "event", "expected", "measured",
	       "deviation", "verdict");
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char bound[48];
		const char *name = pmc__jstr(row, "case");

		double lo = jnum(row, "expected_lo"), hi = jnum(row, "expected_hi");
		char dev[32];

		print_bound(bound, sizeof(bound), lo, hi);
		if (lo != hi && jnum(row, "deviation") == 0)
			snprintf(dev, sizeof(dev), "in range");
		else
			snprintf(dev, sizeof(dev), "%+.3g%%", jnum(row, "deviation_pct"));
		printf("  %-26s %-22s %12s %12.6g %9s  %s\n",
		       strncmp(name, "validate.", 9) ? name : name + 9, pmc__jstr(row, "event"), bound,
		       jnum(row, "measured"), dev, pmc__jstr(row, "verdict"));
	}
	json_array_foreach(json_object_get(rep, "skipped"), i, row)
		printf("  %-26s %s: %s\n", pmc__jstr(row, "case") + 9, pmc__jstr(row, "verdict"),
		       pmc__jstr(row, "reason"));
	printf("\n%d pass, %d fail, %d not validated here\n",
	       (int)json_integer_value(json_object_get(json_object_get(rep, "summary"), "pass")),
	       (int)json_integer_value(json_object_get(json_object_get(rep, "summary"), "fail")),
	       (int)json_integer_value(json_object_get(json_object_get(rep, "summary"), "skip")));
}

int cmd_validate(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "output", required_argument, NULL, 'o' },
		{ "program", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *backend = "perf", *output = NULL, *program = NULL;
	struct pmc__child child;
	char prog[4096], tmp[] = "/tmp/pmcheck-validate-XXXXXX", json_arg[64];
	json_error_t jerr;
	json_t *doc, *rep, *kinds;
	int fd, status = 0, c, rc;

	while ((c = cli_next("validate", argc, argv, "h", opts, &status)) != -1) {
		switch (c) {
		case -2:
			return status;
		case 'b':
			if (strcmp(optarg, "perf") && strcmp(optarg, "sim"))
				return cli_usage("validate", "--backend=%s: expected perf or sim", optarg);
			backend = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'p':
			program = optarg;
			break;
		}
	}
	if (optind < argc)
		return cli_usage("validate", "unexpected \"%s\"", argv[optind]);
	{
		const char *opt[] = { "--output" }, *path[] = { output };
		int rc = cli_outputs("validate", opt, path, 1);

		if (rc)
			return rc;
	}
	if (find_program(program, prog, sizeof(prog))) {
		fprintf(stderr, "pmcheck validate: cannot find the validation program pmcheck-validate (build it, install it next to pmcheck, or give --program=PATH)\n");
		return 2;
	}
	fd = mkstemp(tmp);
	if (fd < 0) {
		fprintf(stderr, "pmcheck validate: temporary file: %s\n", strerror(errno));
		return 2;
	}
	/* On perf, validation starts from the kinds' checks: a figure on a
	 * kind that opens but does not count is skipped by the suite with
	 * the same words. */
	kinds = strcmp(backend, "sim") ? pmc_probe_kinds() : NULL;
	close(fd);
	snprintf(json_arg, sizeof(json_arg), "--json=%s", tmp);
	if (pmc__child_fork(&child, 0, NULL) == 0) {
		/* Its console output is not the report: keep it out of the table. */
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 1);
		execl(prog, prog, json_arg, !strcmp(backend, "sim") ? "--backend=sim" : "--backend=perf",
		      (char *)NULL);
		_exit(127);
	}
	pmc__child_reap(&child, true);
	status = child.status;
	doc = json_load_file(tmp, 0, &jerr);
	unlink(tmp);
	if (!doc) {
		fprintf(stderr, "pmcheck validate: %s produced no results (exit %d): %s\n", prog,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1, jerr.text);
		json_decref(kinds);
		return 2;
	}
	rep = report_of(doc, backend);
	json_decref(doc);
	if (kinds) {
		/* What the figures may rest on, in the probe's words. */
		printf("counter kinds on this machine, checked on known work:\n");
		pmc_probe_print_kinds(kinds, stdout);
		printf("\n");
		json_object_set_new(rep, "kinds", kinds);
	}
	print_report(rep);
	/* 1: a figure failed; 77: nothing could be validated here (all skipped). */
	rc = json_integer_value(json_object_get(json_object_get(rep, "summary"), "fail")) ? 1
	     : json_array_size(json_object_get(rep, "rows")) == 0			      ? 77
											      : 0;
	if (output) {
		char *text = json_dumps(rep, JSON_INDENT(1) | JSON_SORT_KEYS);

		if (!text || pmc_write_file_atomic(output, text, strlen(text)) != 0) {
			fprintf(stderr, "pmcheck validate: cannot write %s: %s\n", output, strerror(errno));
			rc = 2;
		} else {
			printf("report written to %s\n", output);
		}
		free(text);
	}
	json_decref(rep);
	return rc;
}
