/* SPDX-License-Identifier: MIT */
/*
 * The commits where each series of the history moved (history.h): a series
 * is one case, region and event on one CPU model and backend, its points the
 * commits in the order they first ran, each point the median of that
 * commit's runs (their minimum figure, as the gates judge).
 *
 * A series is exact when every commit's runs agree and it is from the sim
 * backend or holds its value from one commit to the next at least half the
 * time (software counts, calls:); each change of an exact series is a change
 * point at its commit.  Any other series is noisy: E-divisive with a
 * permutation test (changepoint.h) finds its change points, and one is
 * reported when the medians on either side differ by at least the smallest
 * change worth reporting.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tools.h"
#include "changepoint.h"
#include "history.h"

/*
 * A line per CPU model: each signature of the store mapped to its hwdb model
 * (the built-in map and PMCHECK_HWDB's), in a temporary table the queries
 * join; a signature no model matches stands for itself.
 */
int history_map_models(struct hdb *db)
{
	const char *dirs[PMC_HWDB_MAX_DIRS];
	char *env = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL, *save = NULL, *d;
	size_t ndirs = 0;
	struct pmc_hwdb *hw = NULL;
	struct pmc_error err;
	struct hdb_stmt *sel = NULL, *ins = NULL;
	int rc = 0;

	for (d = env ? strtok_r(env, ":", &save) : NULL; d && ndirs < PMC_HWDB_MAX_DIRS;
	     d = strtok_r(NULL, ":", &save))
		dirs[ndirs++] = d;
	if (pmc_hwdb_open(&hw, dirs, ndirs, &err))
		fprintf(stderr, "pmcheck history: lines per signature, not per model: %s\n", err.message);
	if (hdb_exec(db, "CREATE TEMP TABLE IF NOT EXISTS models (signature TEXT PRIMARY KEY, model TEXT)") ||
	    !(sel = hdb_prepare(db, "SELECT DISTINCT cpu_signature FROM runs WHERE cpu_signature IS NOT NULL")) ||
	    !(ins = hdb_prepare(db, "INSERT INTO models VALUES ($1, $2) ON CONFLICT (signature) DO NOTHING")))
		rc = -1;
	while (rc == 0 && hdb_step(sel) == 1) {
		const char *sig = hdb_col_text(sel, 0);
		struct pmc_hwdb_match m;
		struct pmc_hwdb_model model;

		hdb_reset(ins);
		hdb_bind_text(ins, 1, sig);
		hdb_bind_text(ins, 2, hw && pmc_hwdb_match(hw, sig, &m, &model) == 0 ? m.model : sig);
		if (hdb_step(ins) < 0)
			rc = -1;
	}
	hdb_finalize(sel);
	hdb_finalize(ins);
	pmc_hwdb_free(hw);
	free(env);
	return rc;
}

/* Where a commit stands in the store's order: its first run's date, then
 * that run's id (runs without a commit stand for themselves). */
static char *order_key(const char *date, int64_t id)
{
	char *k = NULL;

	if (asprintf(&k, "%s\x01%020lld", date ? date : "", (long long)id) < 0)
		return NULL;
	return k;
}

int history_commit_order(struct hdb *db, const char *prefix, char **key, char **full)
{
	struct hdb_stmt *st;
	int n = history_commits_matching(db, prefix);

	*key = *full = NULL;
	if (n != 1)
		return n;
	st = hdb_prepare(db, "SELECT min(date), min(id), min(git_commit) FROM runs"
			     " WHERE substr(git_commit, 1, length($1)) = $1");
	if (!st)
		return -1;
	hdb_bind_text(st, 1, prefix);
	if (hdb_step(st) == 1) {
		*key = order_key(hdb_col_text(st, 0), hdb_col_int(st, 1));
		*full = strdup(hdb_col_text(st, 2));
	}
	hdb_finalize(st);
	return *key && *full ? 1 : -1;
}

/* The points of the series being read. */
struct series {
	char *case_name, *region, *event, *model, *backend;
	double *value;             /* per point: the median of its runs */
	char **commit, **order;    /* per point */
	bool agree;                /* every point's runs had one value */
	size_t n, cap;
	/* The point being read: its runs' values. */
	double *runs;
	size_t nruns, runs_cap;
};

struct found {
	struct history_change *c;
	size_t n, cap;
	size_t series;
};

static void series_clear(struct series *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->commit[i]);
		free(s->order[i]);
	}
	free(s->case_name);
	free(s->region);
	free(s->event);
	free(s->model);
	free(s->backend);
	s->case_name = s->region = s->event = s->model = s->backend = NULL;
	s->n = 0;
	s->nruns = 0;
	s->agree = true;
}

static int push_run(struct series *s, double v)
{
	if (s->nruns == s->runs_cap) {
		size_t cap = s->runs_cap ? 2 * s->runs_cap : 16;
		double *r = realloc(s->runs, cap * sizeof(*r));

		if (!r)
			return -1;
		s->runs = r;
		s->runs_cap = cap;
	}
	s->runs[s->nruns++] = v;
	return 0;
}

/* Close the point being read. */
static int close_point(struct series *s, const char *commit, const char *order)
{
	if (!s->nruns)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		double *v = realloc(s->value, cap * sizeof(*v));
		char **c = v ? realloc(s->commit, cap * sizeof(*c)) : NULL;
		char **o = c ? realloc(s->order, cap * sizeof(*o)) : NULL;

		if (v)
			s->value = v;
		if (c)
			s->commit = c;
		if (!o)
			return -1;
		s->order = o;
		s->cap = cap;
	}
	for (size_t i = 1; i < s->nruns; i++)
		s->agree = s->agree && s->runs[i] == s->runs[0];
	s->value[s->n] = cp_median(s->runs, s->nruns);
	s->commit[s->n] = strdup(commit ? commit : "");
	s->order[s->n] = strdup(order ? order : "");
	s->n++;
	s->nruns = 0;
	return 0;
}

static bool series_exact(const struct series *s)
{
	size_t held = 0;

	if (!s->agree)
		return false;
	if (s->backend && !strcmp(s->backend, "sim"))
		return true;
	for (size_t i = 1; i < s->n; i++)
		held += s->value[i] == s->value[i - 1];
	return s->n > 1 && 2 * held >= s->n - 1;
}

static int add_change(struct found *f, const struct series *s, size_t at, double before,
		      double after, double p, bool exact)
{
	struct history_change *c;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 32;
		struct history_change *nc = realloc(f->c, cap * sizeof(*nc));

		if (!nc)
			return -1;
		f->c = nc;
		f->cap = cap;
	}
	c = &f->c[f->n++];
	*c = (struct history_change){
		.case_name = strdup(s->case_name), .region = strdup(s->region),
		.event = strdup(s->event), .model = strdup(s->model), .backend = strdup(s->backend),
		.commit = strdup(s->commit[at]), .previous = strdup(s->commit[at - 1]),
		.order = strdup(s->order[at]), .before = before, .after = after,
		.change = before != 0 ? (after - before) / fabs(before) : (after != 0 ? INFINITY : 0),
		.p_value = p, .exact = exact, .regression = after > before, .index = at,
		.points = s->n,
	};
	return c->case_name && c->region && c->event && c->model && c->backend && c->commit &&
			       c->previous && c->order
		       ? 0
		       : -1;
}

static int analyse(struct found *f, const struct series *s, const struct history_changes_options *o)
{
	struct cp_change *cps;
	size_t k;
	int rc = 0;

	if (s->n < 2)
		return 0;
	f->series++;
	cps = malloc(s->n * sizeof(*cps));
	if (!cps)
		return -1;
	if (series_exact(s)) {
		k = cp_exact(s->value, s->n, cps, s->n);
		for (size_t j = 0; j < k && rc == 0; j++)
			rc = add_change(f, s, cps[j].index, s->value[cps[j].index - 1],
					s->value[cps[j].index], 0, true);
		free(cps);
		return rc;
	}
	k = cp_edivisive(s->value, s->n, &o->cp, cps, s->n);
	if (k == (size_t)-1) {
		free(cps);
		return -1;
	}
	for (size_t j = 0; j < k && rc == 0; j++) {
		size_t lo = j ? cps[j - 1].index : 0, at = cps[j].index;
		size_t hi = j + 1 < k ? cps[j + 1].index : s->n;
		double before = cp_median(s->value + lo, at - lo), after = cp_median(s->value + at, hi - at);
		double rel = before != 0 ? fabs(after - before) / fabs(before) : 1;

		if (rel >= o->min_change && after != before)
			rc = add_change(f, s, at, before, after, cps[j].p_value, false);
	}
	free(cps);
	return rc;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int history_changes(struct hdb *db, const struct history_changes_options *o,
		    struct history_change **out, size_t *n, size_t *nseries)
{
	struct hdb_stmt *st;
	struct series s = { .agree = true };
	struct found f = { 0 };
	char *pt_commit = NULL, *pt_order = NULL;
	int rc = 0, row;

	*out = NULL;
	*n = *nseries = 0;
	if (history_map_models(db))
		return history_fail(db, "cannot map CPU signatures to models");
	st = hdb_prepare(db,
		"WITH firsts AS (SELECT git_commit, min(date) AS d, min(id) AS i FROM runs"
		"  WHERE git_commit IS NOT NULL GROUP BY git_commit)"
		" SELECT f.case_name, f.region, f.event, coalesce(m.model, r.cpu_signature, '?'),"
		" coalesce(r.backend, '?'), coalesce(fc.d, r.date, ''), coalesce(fc.i, r.id),"
		" coalesce(r.git_commit, r.date, ''), f.min"
		" FROM figures f JOIN runs r ON r.id = f.run_id"
		" LEFT JOIN firsts fc ON fc.git_commit = r.git_commit"
		" LEFT JOIN models m ON m.signature = r.cpu_signature"
		" WHERE f.min IS NOT NULL AND f.partial = 0"
		" AND ($1 IS NULL OR f.case_name = $1) AND ($2 IS NULL OR f.event = $2)"
		" ORDER BY 1, 2, 3, 4, 5, 6, 7");
	if (!st)
		return history_fail(db, "cannot read the history");
	hdb_bind_text(st, 1, o->case_name);
	hdb_bind_text(st, 2, o->event);
	while (rc == 0 && (row = hdb_step(st)) == 1) {
		const char *c = hdb_col_text(st, 0), *reg = hdb_col_text(st, 1), *ev = hdb_col_text(st, 2);
		const char *model = hdb_col_text(st, 3), *backend = hdb_col_text(st, 4);
		char *order = order_key(hdb_col_text(st, 5), hdb_col_int(st, 6));
		bool new_series = !same(c, s.case_name) || !same(reg, s.region) || !same(ev, s.event) ||
				  !same(model, s.model) || !same(backend, s.backend);

		if (!order) {
			rc = -1;
			break;
		}
		if (new_series || !same(order, pt_order)) {
			rc = close_point(&s, pt_commit, pt_order);
			free(pt_commit);
			free(pt_order);
			pt_commit = strdup(hdb_col_text(st, 7));
			pt_order = order;
			order = NULL;
		}
		free(order);
		if (rc == 0 && new_series) {
			rc = analyse(&f, &s, o);
			series_clear(&s);
			s.case_name = strdup(c);
			s.region = strdup(reg);
			s.event = strdup(ev);
			s.model = strdup(model);
			s.backend = strdup(backend);
		}
		if (rc == 0)
			rc = push_run(&s, (double)hdb_col_int(st, 8));
	}
	if (rc == 0 && row < 0)
		rc = history_fail(db, "cannot read the history");
	else if (rc == 0 && (rc = close_point(&s, pt_commit, pt_order)) == 0)
		rc = analyse(&f, &s, o);
	hdb_finalize(st);
	series_clear(&s);
	free(s.value);
	free(s.commit);
	free(s.order);
	free(s.runs);
	free(pt_commit);
	free(pt_order);
	if (rc) {
		history_changes_free(f.c, f.n);
		return rc > 0 ? rc : PMC_EXIT_ERROR;
	}
	*out = f.c;
	*n = f.n;
	*nseries = f.series;
	return 0;
}

void history_changes_free(struct history_change *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].case_name);
		free(c[i].region);
		free(c[i].event);
		free(c[i].model);
		free(c[i].backend);
		free(c[i].commit);
		free(c[i].previous);
		free(c[i].order);
	}
	free(c);
}
