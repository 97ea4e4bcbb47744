/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history: results files across commits and machines, in an
 * SQLite file or a PostgreSQL database.  The command: its options, its
 * subcommands' table (cmd_history_subcommands, one row and one function
 * each) and what they print; the store beneath them is history/ (its
 * interface history/history.h).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli.h"
#include "history/history.h"

/* The edit distance of A and B (Levenshtein), up to 64 characters of each. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strnlen(a, 64), lb = strnlen(b, 64), row[65];

	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/*
 * Nothing matched CASE [EVENT]: say so, with the three names of the store
 * nearest to the one that matched nothing (the case's, or, when the case
 * is there, its events); PMC_EXIT_FAIL, or PMC_EXIT_ERROR when the store
 * cannot be read.
 */
static int no_such_series(struct hdb *db, const char *cmd, const char *name, const char *event)
{
	struct hdb_stmt *st;
	const char *wanted;
	char best[3][256] = { "", "", "" };
	size_t dist[3] = { SIZE_MAX, SIZE_MAX, SIZE_MAX }, known = 0;
	bool case_known = !name;
	int row;

	if (name) {
		st = hdb_prepare(db, "SELECT count(*) FROM figures WHERE case_name = $1");
		if (!st)
			return history_fail(db, "cannot read the history");
		hdb_bind_text(st, 1, name);
		row = hdb_step(st);
		case_known = row == 1 && hdb_col_int(st, 0) > 0;
		hdb_finalize(st);
		if (row != 1)
			return history_fail(db, "cannot read the history");
	}
	wanted = case_known ? event : name;
	st = hdb_prepare(db, case_known ? "SELECT DISTINCT event FROM figures WHERE ($1 IS NULL OR case_name = $1)"
					: "SELECT DISTINCT case_name FROM figures");
	if (!st)
		return history_fail(db, "cannot read the history");
	if (case_known)
		hdb_bind_text(st, 1, name);
	while ((row = hdb_step(st)) == 1) {
		const char *have = hdb_col_text(st, 0);
		size_t d = have ? distance(wanted ? wanted : "", have) : SIZE_MAX;

		known++;
		for (int k = 0; k < 3; k++)
			if (d < dist[k]) {
				for (int m = 2; m > k; m--) {
					dist[m] = dist[m - 1];
					memcpy(best[m], best[m - 1], sizeof(best[m]));
				}
				dist[k] = d;
				snprintf(best[k], sizeof(best[k]), "%s", have);
				break;
			}
	}
	hdb_finalize(st);
	if (row < 0)
		return history_fail(db, "cannot read the history");
	if (!wanted) {
		fprintf(stderr, "pmcheck history %s: %s: the history holds no series; pmcheck history add results files first\n",
			cmd, hdb_name(db));
		return PMC_EXIT_FAIL;
	}
	fprintf(stderr, "pmcheck history %s: %s: no such series: %s \"%s\"%s%s%s", cmd, hdb_name(db),
		case_known ? "event" : "case", wanted, case_known && name ? " of case \"" : "",
		case_known && name ? name : "", case_known && name ? "\"" : "");
	if (!known)
		fprintf(stderr, "; the history holds no %s\n", case_known ? "events of it" : "cases");
	else {
		fprintf(stderr, "; nearest of the %zu %s: ", known, case_known ? "event(s)" : "case(s)");
		for (int k = 0; k < 3 && best[k][0]; k++)
			fprintf(stderr, "%s\"%s\"", k ? ", " : "", best[k]);
		fputs("\n", stderr);
	}
	return PMC_EXIT_FAIL;
}

/* A CASE or EVENT operand that cannot name a series is a usage error: a
 * case name is not empty and holds no control character; an event parses
 * (the parser's syntax, not this machine's PMUs: a series of another
 * machine may count what this one cannot). */
static int check_selection(const char *cmd, const char *name, const char *event)
{
	struct pmc_event_spec spec[2];
	struct pmc_error err;
	size_t n = 0;

	if (name) {
		if (!*name)
			return cli_usage("history", "%s: the case name is empty: give one, as history show lists them", cmd);
		for (const unsigned char *p = (const unsigned char *)name; *p; p++)
			if (*p < 0x20 || *p == 0x7f)
				return cli_usage("history", "%s: the case name holds a control character (\\x%02x at position %zu): give the case's name as the suite prints it",
						 cmd, *p, (size_t)(p - (const unsigned char *)name));
	}
	if (event) {
		int rc = pmc_event_parse_list_flags(event, PMC_PARSE_DEFER_SYMBOLS, spec, 2, &n, &err);

		if (rc == PMC_E_SYNTAX)
			return cli_usage("history", "%s: %s", cmd, err.message);
		if (rc == 0 && n != 1)
			return cli_usage("history", "%s: one event, not a list: give the events one at a time", cmd);
	}
	return 0;
}

static int show(struct hdb *db, const char *name, const char *event)
{
	struct hdb_stmt *st;
	int rows = 0, row;

	st = hdb_prepare(db, "SELECT r.date, r.git_commit, r.cpu_signature, r.backend, f.region, f.event,"
			     " f.min, f.median, f.max, f.verdict, f.partial, f.budget_lo, f.budget_hi"
			     " FROM figures f JOIN runs r ON r.id = f.run_id"
			     " WHERE f.case_name = $1 AND ($2 IS NULL OR f.event = $2)"
			     " ORDER BY f.region, f.event, r.cpu_signature, r.backend, r.date, r.id");
	if (!st)
		return history_fail(db, "cannot read the history");
	hdb_bind_text(st, 1, name);
	hdb_bind_text(st, 2, event);
	while ((row = hdb_step(st)) == 1) {
		const char *commit = hdb_col_text(st, 1);
		char bounds[64] = "";
		bool has_lo = !hdb_col_null(st, 11), has_hi = !hdb_col_null(st, 12);
		double lo = hdb_col_real(st, 11), hi = hdb_col_real(st, 12);

		if (rows++ == 0)
			printf("%-20s %-12s %-22s %-5s %-12s %-22s %12s %12s %12s %-8s %s\n", "date",
			       "commit", "cpu", "backend", "region", "event", "min", "median", "max",
			       "verdict", "budget");
		if (has_lo && has_hi && lo == hi)
			snprintf(bounds, sizeof(bounds), "= %.0f", lo);
		else if (has_lo && has_hi)
			snprintf(bounds, sizeof(bounds), "%.0f..%.0f", lo, hi);
		else if (has_hi)
			snprintf(bounds, sizeof(bounds), "<= %.0f", hi);
		else if (has_lo)
			snprintf(bounds, sizeof(bounds), ">= %.0f", lo);
		printf("%-20.20s %-12.12s %-22.22s %-5.5s %-12.12s %-22.22s %12lld %12.1f %12lld %-8s %s%s\n",
		       hdb_col_text(st, 0) ? hdb_col_text(st, 0) : "-", commit ? commit : "-",
		       hdb_col_text(st, 2) ? hdb_col_text(st, 2) : "-",
		       hdb_col_text(st, 3) ? hdb_col_text(st, 3) : "-", hdb_col_text(st, 4),
		       hdb_col_text(st, 5), (long long)hdb_col_int(st, 6), hdb_col_real(st, 7),
		       (long long)hdb_col_int(st, 8), hdb_col_text(st, 9), bounds,
		       hdb_col_int(st, 10) ? " (partial)" : "");
	}
	if (row < 0) {
		/* A damaged page or a lost server: what was printed is partial. */
		history_fail(db, "cannot read the history (the rows above are partial)");
		hdb_finalize(st);
		return PMC_EXIT_ERROR;
	}
	hdb_finalize(st);
	if (!rows)
		return no_such_series(db, "show", name, event);
	return 0;
}

struct changes_args {
	struct history_changes_options o;
	const char *since;
	bool json;
};

static json_t *change_json(const struct history_change *c)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:o, s:o, s:b, s:s, s:I, s:I}",
			 "commit", c->commit, "previous_commit", c->previous, "case", c->case_name,
			 "region", c->region, "event", c->event, "cpu_model", c->model, "backend",
			 c->backend, "before", c->before, "after", c->after, "change",
			 isfinite(c->change) ? json_real(c->change) : json_null(), "p_value",
			 c->exact ? json_null() : json_real(c->p_value), "exact", c->exact, "kind",
			 c->regression ? "regression" : "improvement", "index", (json_int_t)c->index,
			 "points", (json_int_t)c->points);
}

/* Newest first, regressions before improvements within a commit. */
static int by_order(const void *a, const void *b)
{
	const struct history_change *x = a, *y = b;
	int o;

	if (x->rank != y->rank)
		return (y->rank > x->rank) - (y->rank < x->rank);
	if (x->regression != y->regression)
		return y->regression - x->regression;
	o = strcmp(x->case_name, y->case_name);
	return o ? o : strcmp(x->event, y->event);
}

static int changes(struct hdb *db, const struct changes_args *a)
{
	struct history_data d;
	struct history_change *ch = NULL;
	size_t n = 0, series = 0, shown = 0, regressions = 0, since_rank = 0, partial = 0;
	char *since_full = NULL;
	int rc;

	if (a->since) {
		int k = history_commit_named(db, a->since, &since_full);

		if (k < 0)
			return history_fail(db, "cannot read the history");
		if (k != 1) {
			fprintf(stderr, "pmcheck history changes: %s: --since=%s names %s commit in the store; give %s (pmcheck history show CASE lists the commits)\n",
				hdb_name(db), a->since, k ? "more than one" : "no",
				k ? "more of its digits" : "one that history add has seen");
			return PMC_EXIT_USAGE;
		}
	}
	if ((rc = history_load(db, &a->o.filter, &d)) != 0) {
		free(since_full);
		return rc;
	}
	if (!d.nseries) {
		history_data_release(&d);
		free(since_full);
		return no_such_series(db, "changes", a->o.filter.case_name, a->o.filter.event);
	}
	for (size_t i = 0; since_full && i < d.ncommits; i++)
		if (d.commits[i].has_commit && !strcmp(d.commits[i].name, since_full))
			since_rank = d.commits[i].rank;
	if (history_changes_of(&d, &a->o, &ch, &n, &series)) {
		history_data_release(&d);
		free(since_full);
		fprintf(stderr, "pmcheck history changes: out of memory\n");
		return PMC_EXIT_ERROR;
	}
	/* Points of partial figures only are not judged: say how many. */
	for (size_t i = 0; i < d.nseries; i++)
		for (size_t k = 0; k < d.series[i].npoints; k++)
			partial += d.series[i].points[k].partial;
	history_data_release(&d);
	if (n > 1) /* qsort's array may be NULL when empty */
		qsort(ch, n, sizeof(*ch), by_order);
	if (a->json) {
		json_t *list = json_array(), *doc;

		for (size_t i = 0; i < n; i++)
			if (!since_full || ch[i].rank > since_rank) {
				json_array_append_new(list, change_json(&ch[i]));
				regressions += ch[i].regression;
			}
		doc = json_pack("{s:s, s:s?, s:I, s:I, s:o, s:{s:f, s:I, s:I, s:f}}", "store", hdb_name(db),
				"since", since_full, "series", (json_int_t)series, "partial_points_left_out",
				(json_int_t)partial, "changes", list,
				"options", "significance", a->o.cp.significance, "permutations",
				(json_int_t)a->o.cp.permutations, "min_size",
				(json_int_t)a->o.cp.min_size, "min_change", a->o.min_change);
		json_dumpf(doc, stdout, JSON_INDENT(2));
		fputs("\n", stdout);
		json_decref(doc);
	} else {
		for (size_t i = 0; i < n; i++) {
			const struct history_change *c = &ch[i];
			char series_name[512], p[32];

			if (since_full && c->rank <= since_rank)
				continue;
			if (shown++ == 0)
				printf("%-12s  %-60s %14s %14s %9s  %-12s %s\n", "commit", "series",
				       "before", "after", "change", "significance", "");
			snprintf(series_name, sizeof(series_name), "%s / %s / %s (%s, %s)", c->case_name,
				 c->region, c->event, c->model, c->backend);
			if (c->exact)
				snprintf(p, sizeof(p), "exact");
			else
				snprintf(p, sizeof(p), "p = %.4f", c->p_value);
			printf("%-12.12s  %-60s %14.0f %14.0f %+8.2f%%  %-12s %s\n", c->commit,
			       series_name, c->before, c->after, 100 * c->change, p,
			       c->regression ? "REGRESSION" : "improvement");
			regressions += c->regression;
		}
		printf("%s: %zu series, %zu change point(s)%s%.12s, %zu regression(s)", hdb_name(db),
		       series, shown, since_full ? " after " : "", since_full ? since_full : "",
		       regressions);
		if (partial)
			printf("; %zu point(s) of partial figures only (multiplexed, not counted) left out, not judged",
			       partial);
		printf("\n");
	}
	history_changes_free(ch, n);
	rc = since_full && regressions ? PMC_EXIT_FAIL : 0;
	free(since_full);
	return rc;
}

/* A number option of changes: PCT and P are fractions, N a count. */
static int number_arg(const char *option, const char *arg, double lo, double hi, double *out)
{
	char *end = NULL;
	double v = 0;

	if (pmc__parse_decimal(arg, &end, &v) || *end || !(v >= lo && v <= hi))
		return cli_usage("history", "--%s=%s: give a number from %g to %g", option, arg, lo, hi);
	*out = v;
	return 0;
}

/* The command's options, wherever they stood, for its subcommands. */
struct history_args {
	const char *db, *html;
	struct changes_args changes;
};

static int run_add(void *args, char **op, int n)
{
	const struct history_args *a = args;

	return history_add(a->db, op, (size_t)n);
}

static int run_show(void *args, char **op, int n)
{
	const struct history_args *a = args;
	struct hdb *db;
	int status;

	if ((status = check_selection("show", op[0], n > 1 ? op[1] : NULL)) ||
	    (status = history_open(a->db, HDB_READ, &db)) != 0)
		return status;
	status = show(db, op[0], n > 1 ? op[1] : NULL);
	hdb_close(db);
	return status;
}

static int run_changes(void *args, char **op, int n)
{
	struct history_args *a = args;
	struct hdb *db;
	int status;

	a->changes.o.filter.case_name = n > 0 ? op[0] : NULL;
	a->changes.o.filter.event = n > 1 ? op[1] : NULL;
	if ((status = check_selection("changes", a->changes.o.filter.case_name,
				      a->changes.o.filter.event)) ||
	    (status = history_open(a->db, HDB_READ, &db)) != 0)
		return status;
	status = changes(db, &a->changes);
	hdb_close(db);
	return status;
}

static int run_report(void *args, char **op, int n)
{
	const struct history_args *a = args;
	struct hdb *db;
	int status;

	(void)op;
	(void)n;
	if (!a->html)
		return cli_usage("history", "report needs --html=DIR");
	if ((status = history_open(a->db, HDB_READ, &db)) != 0)
		return status;
	status = history_report(db, a->html);
	hdb_close(db);
	return status;
}

const struct cli_subcommand cmd_history_subcommands[] = {
	{ "add", "FILE|DIR...", "results files, each once, by content, each in one transaction",
	  NULL, 1, -1, run_add },
	{ "show", "CASE [EVENT]", "a case's series, oldest first, per CPU and backend",
	  NULL, 1, 2, run_show },
	{ "changes", "[CASE [EVENT]]",
	  "the commits where each series moved (case, region, event, CPU "
	  "model, backend): every change of an exact series, E-divisive change points "
	  "with a permutation test in a noisy one",
	  "since json significance min-change permutations min-size", 0, 2, run_changes },
	{ "report", "--html=DIR",
	  "a static page (DIR/index.html, everything inline), the change "
	  "points listed first and marked on a plot per case and event, a line per CPU "
	  "model and backend, budgets dashed, failing cases first",
	  NULL, 0, 0, run_report },
	{ 0 },
};

int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "html", required_argument, NULL, 'H' },
		{ "since", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "significance", required_argument, NULL, 'S' },
		{ "min-change", required_argument, NULL, 'c' },
		{ "permutations", required_argument, NULL, 'p' },
		{ "min-size", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct history_args a = {
		.db = getenv("PMCHECK_HISTORY_DB"),
		.changes.o = { .cp = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS,
				       CP_DEFAULT_MIN_SIZE, 1 },
			       .min_change = HISTORY_DEFAULT_MIN_CHANGE },
	};
	const struct cli_subcommand *sub;
	int c, status = 0, nops = 0;
	char **ops;

	if (!a.db || !*a.db)
		a.db = HISTORY_DEFAULT;
	/* Options stand anywhere: before the subcommand, between operands, after them. */
	ops = calloc((size_t)argc + 1, sizeof(*ops));
	if (!ops)
		return PMC_EXIT_ERROR;
	while (optind < argc) {
		while ((c = cli_next("history", argc, argv, "+h", opts, &status)) != -1) {
			struct changes_args *ca = &a.changes;
			double v;

			if (c == -2)
				goto out;
			switch (c) {
			case 'd': a.db = optarg; break;
			case 'H': a.html = optarg; break;
			case 's': ca->since = optarg; break;
			case 'j': ca->json = true; break;
			case 'S':
				if ((status = number_arg("significance", optarg, 0, 1, &ca->o.cp.significance)))
					goto out;
				break;
			case 'c':
				if ((status = number_arg("min-change", optarg, 0, 1e6, &v)))
					goto out;
				ca->o.min_change = v / 100;
				break;
			case 'p':
				if ((status = number_arg("permutations", optarg, 1, 1e6, &v)))
					goto out;
				if (v != (double)(unsigned)v) { /* a count: 2.5 was 2 */
					status = cli_usage("history", "--permutations=%s: give a whole number", optarg);
					goto out;
				}
				ca->o.cp.permutations = (unsigned)v;
				break;
			case 'm':
				if ((status = number_arg("min-size", optarg, 2, 1e6, &v)))
					goto out;
				if (v != (double)(unsigned)v) { /* a count: 2.5 was 2 */
					status = cli_usage("history", "--min-size=%s: give a whole number", optarg);
					goto out;
				}
				ca->o.cp.min_size = (unsigned)v;
				break;
			}
		}
		if (optind > 1 && !strcmp(argv[optind - 1], "--")) {
			while (optind < argc)
				ops[nops++] = argv[optind++];
			break;
		}
		if (optind < argc)
			ops[nops++] = argv[optind++];
	}
	if ((sub = cli_subcommand("history", ops, nops, &status)) != NULL)
		status = sub->run(&a, ops + 1, nops - 1);
out:
	free(ops);
	return status;
}
