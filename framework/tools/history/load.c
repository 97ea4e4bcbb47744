/* SPDX-License-Identifier: MIT */
/*
 * The history's series, read into memory once (history.h): what `history
 * changes` analyses and `history report` draws.
 *
 * The store is read in two plain scans, with no join and no sort in SQL: the
 * runs (100,000 for a fleet of 100 machines at 1,000 commits), then the
 * figures (2 million for 20 series each), streamed.  A sort of the figures
 * in the database took longer than everything else together.  Here each
 * figure finds its run by id (binary search), its series by a hash of case,
 * region, event and line, and the points are sorted per series.
 *
 * A commit's place is its first run's (date, then id); a run without a
 * commit stands for itself.  A line is a CPU model (hwdb's map of the run's
 * signature; a signature no model matches stands for itself) and backend;
 * on the sim backend, the figure's sim profile and engine, pooling every
 * host.  The pmcheck tool and callgrind are separate lines: the issue's
 * "one series per sim profile and engine" (a failing case's callgrind
 * re-run is filed under callgrind, its file's other cases under the tool).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "changepoint.h"
#include "history.h"

/* ---- an open-addressed table of strings to indices -------------------------------- */

struct names {
	char **key;
	size_t *val;
	size_t cap, n;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

/* The index of KEY, adding it as NEXT when new (*added says which);
 * (size_t)-1 when out of memory. */
static size_t names_get(struct names *t, const char *key, size_t next, bool *added)
{
	uint64_t h;

	*added = false;
	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		char **k = calloc(cap, sizeof(*k));
		size_t *v = calloc(cap, sizeof(*v));

		if (!k || !v) {
			free(k);
			free(v);
			return (size_t)-1;
		}
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->key[i])
				continue;
			for (h = hash_str(t->key[i]); k[h & (cap - 1)]; h++)
				;
			k[h & (cap - 1)] = t->key[i];
			v[h & (cap - 1)] = t->val[i];
		}
		free(t->key);
		free(t->val);
		t->key = k;
		t->val = v;
		t->cap = cap;
	}
	for (h = hash_str(key);; h++) {
		size_t at = h & (t->cap - 1);

		if (!t->key[at]) {
			if (!(t->key[at] = strdup(key)))
				return (size_t)-1;
			t->val[at] = next;
			t->n++;
			*added = true;
			return next;
		}
		if (!strcmp(t->key[at], key))
			return t->val[at];
	}
}

static void names_release(struct names *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->key[i]);
	free(t->key);
	free(t->val);
}

/* Grow an array of n elements of size sz to hold one more. */
static int grow(void *arrayp, size_t *cap, size_t n, size_t sz)
{
	void **a = arrayp, *na;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 64;
	na = realloc(*a, c * sz);
	if (!na)
		return -1;
	*a = na;
	*cap = c;
	return 0;
}

/* ---- models ------------------------------------------------------------------------ */

/* A signature's line name: its hwdb model, or itself. */
static char *model_of(struct pmc_hwdb *hw, const char *sig)
{
	struct pmc_hwdb_match m;
	struct pmc_hwdb_model model;

	if (!sig || !*sig)
		return strdup("?");
	if (hw && pmc_hwdb_match(hw, sig, &m, &model) == 0)
		return strdup(m.model);
	return strdup(sig);
}

static struct pmc_hwdb *open_hwdb(void)
{
	const char *dirs[PMC_HWDB_MAX_DIRS];
	char *env = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL, *save = NULL, *d;
	size_t ndirs = 0;
	struct pmc_hwdb *hw = NULL;
	struct pmc_error err;

	for (d = env ? strtok_r(env, ":", &save) : NULL; d && ndirs < PMC_HWDB_MAX_DIRS;
	     d = strtok_r(NULL, ":", &save))
		dirs[ndirs++] = d;
	if (pmc_hwdb_open(&hw, dirs, ndirs, &err)) {
		fprintf(stderr, "pmcheck history: lines per signature, not per model: %s\n", err.message);
		hw = NULL;
	}
	free(env);
	return hw;
}

/* ---- loading ----------------------------------------------------------------------- */

struct run {
	int64_t id;
	size_t commit, line; /* line: SIZE_MAX on sim, where each figure has its own */
};

/* The lines met so far, by "MODEL\x1fBACKEND". */
struct line_names {
	struct names names;
	size_t cap;
};

/* The index of MODEL on BACKEND in d->lines, added when new; -1 when out of
 * memory. */
static size_t line_index(struct history_data *d, struct line_names *t, const char *model,
			 const char *backend)
{
	char *key = NULL;
	size_t l;
	bool added;

	if (asprintf(&key, "%s\x1f%s", model, backend) < 0)
		return (size_t)-1;
	l = names_get(&t->names, key, d->nlines, &added);
	free(key);
	if (l == (size_t)-1 || !added)
		return l;
	if (grow(&d->lines, &t->cap, d->nlines, sizeof(*d->lines)))
		return (size_t)-1;
	d->lines[d->nlines] = (struct history_line){ .model = strdup(model), .backend = strdup(backend) };
	if (!d->lines[d->nlines].model || !d->lines[d->nlines].backend) {
		free(d->lines[d->nlines].model);
		free(d->lines[d->nlines].backend);
		return (size_t)-1;
	}
	return d->nlines++;
}

struct raw { /* one figure, before the series are sorted */
	size_t commit; /* the commit's rank */
	int64_t run;
	double value, lo, hi;
	bool failed, partial;
};

struct building {
	struct raw *raw;
	size_t nraw, rawcap;
};

static int cmp_run(const void *a, const void *b)
{
	const struct run *x = a, *y = b;

	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_raw(const void *a, const void *b)
{
	const struct raw *x = a, *y = b;

	if (x->commit != y->commit)
		return (x->commit > y->commit) - (x->commit < y->commit);
	return (x->run > y->run) - (x->run < y->run);
}

static const struct history_data *sort_data; /* for the qsort comparators below */

static int cmp_commit_order(const void *a, const void *b)
{
	const struct history_commit *x = &sort_data->commits[*(const size_t *)a];
	const struct history_commit *y = &sort_data->commits[*(const size_t *)b];
	int c = strcmp(x->date, y->date);

	return c ? c : (x->first_run > y->first_run) - (x->first_run < y->first_run);
}

static int cmp_series(const void *a, const void *b)
{
	const struct history_series *x = a, *y = b;
	const struct history_line *lx = &sort_data->lines[x->line], *ly = &sort_data->lines[y->line];
	int c;

	if ((c = strcmp(x->case_name, y->case_name)) || (c = strcmp(x->region, y->region)) ||
	    (c = strcmp(x->event, y->event)) || (c = strcmp(lx->model, ly->model)))
		return c;
	return strcmp(lx->backend, ly->backend);
}

/* The runs: each one's commit and line. */
static int load_runs(struct hdb *db, struct history_data *d, struct line_names *lines, struct run **runs,
		     size_t *nruns)
{
	struct hdb_stmt *st = hdb_prepare_stream(db, "SELECT id, git_commit, date, cpu_signature, backend FROM runs");
	struct names commits = { 0 }, sigs = { 0 };
	struct pmc_hwdb *hw = open_hwdb();
	char **sig_model = NULL;
	size_t runcap = 0, sigcap = 0, nsig = 0, commitcap = 0;
	int rc = st ? 0 : -1, row;

	while (rc == 0 && (row = hdb_step(st)) == 1) {
		const char *commit = hdb_col_text(st, 1), *date = hdb_col_text(st, 2);
		const char *sig = hdb_col_text(st, 3), *backend = hdb_col_text(st, 4);
		int64_t id = hdb_col_int(st, 0);
		char *key = NULL;
		size_t s, c, l;
		bool added;

		if (!date)
			date = "";
		/* A run without a commit is a commit of its own, named by its date. */
		if (commit ? asprintf(&key, "c%s", commit) < 0 : asprintf(&key, "r%lld", (long long)id) < 0) {
			rc = -1;
			break;
		}
		c = names_get(&commits, key, d->ncommits, &added);
		free(key);
		if (c == (size_t)-1 || (added && grow(&d->commits, &commitcap, d->ncommits, sizeof(*d->commits)))) {
			rc = -1;
			break;
		}
		if (added) {
			d->commits[d->ncommits++] = (struct history_commit){
				.name = strdup(commit ? commit : date), .date = strdup(date), .first_run = id,
				.has_commit = commit != NULL,
			};
		} else if (strcmp(date, d->commits[c].date) < 0 ||
			   (!strcmp(date, d->commits[c].date) && id < d->commits[c].first_run)) {
			free(d->commits[c].date);
			d->commits[c].date = strdup(date);
			d->commits[c].first_run = id;
		}
		s = names_get(&sigs, sig ? sig : "", nsig, &added);
		if (s == (size_t)-1 || (added && grow(&sig_model, &sigcap, nsig, sizeof(*sig_model)))) {
			rc = -1;
			break;
		}
		if (added)
			sig_model[nsig++] = model_of(hw, sig);
		/* Sim counts do not depend on the host: a sim figure's line is
		 * its case's profile and engine (history_load). */
		if (backend && !strcmp(backend, "sim")) {
			l = SIZE_MAX;
		} else if ((l = line_index(d, lines, sig_model[s], backend ? backend : "?")) == (size_t)-1) {
			rc = -1;
			break;
		}
		if (grow(runs, &runcap, *nruns, sizeof(**runs))) {
			rc = -1;
			break;
		}
		(*runs)[(*nruns)++] = (struct run){ .id = id, .commit = c, .line = l };
	}
	if (rc == 0 && row < 0)
		rc = -1;
	hdb_finalize(st);
	for (size_t i = 0; i < nsig; i++)
		free(sig_model[i]);
	free(sig_model);
	names_release(&commits);
	names_release(&sigs);
	pmc_hwdb_free(hw);
	if (rc == 0 && *nruns > 1) /* qsort's array may be NULL when empty */
		qsort(*runs, *nruns, sizeof(**runs), cmp_run);
	return rc;
}

/* The commits' ranks in the store's order. */
static int rank_commits(struct history_data *d)
{
	size_t *order = malloc((d->ncommits + 1) * sizeof(*order));

	if (!order)
		return -1;
	for (size_t i = 0; i < d->ncommits; i++)
		order[i] = i;
	sort_data = d;
	if (d->ncommits > 1) /* qsort's array may be NULL when empty */
		qsort(order, d->ncommits, sizeof(*order), cmp_commit_order);
	for (size_t r = 0; r < d->ncommits; r++)
		d->commits[order[r]].rank = r;
	free(order);
	return 0;
}

/* Each series' figures, sorted, made into points: per commit, the median
 * of its whole figures (of all, marked partial, when every one is partial). */
static int make_points(struct history_series *s, struct building *b)
{
	double *v = malloc((b->nraw + 1) * sizeof(*v));

	if (b->nraw > 1) /* qsort's array may be NULL when empty */
		qsort(b->raw, b->nraw, sizeof(*b->raw), cmp_raw);
	s->points = calloc(b->nraw + 1, sizeof(*s->points));
	if (!s->points || !v) {
		free(v);
		return -1;
	}
	s->agree = true;
	for (size_t i = 0; i < b->nraw;) {
		size_t j = i, whole = 0, n = 0;
		struct history_point *p = &s->points[s->npoints++];

		*p = (struct history_point){ .commit = b->raw[i].commit };
		for (; j < b->nraw && b->raw[j].commit == b->raw[i].commit; j++)
			whole += !b->raw[j].partial;
		for (size_t k = i; k < j; k++) {
			if (whole && b->raw[k].partial)
				continue;
			v[n++] = b->raw[k].value;
		}
		for (size_t k = i; k < j; k++)
			p->failed = p->failed || b->raw[k].failed;
		for (size_t k = 1; k < n; k++)
			s->agree = s->agree && v[k] == v[0];
		p->runs = j - i;
		p->partial = whole == 0;
		p->value = cp_median(v, n);
		i = j;
	}
	free(v);
	/* The latest run's bounds. */
	if (b->nraw) {
		const struct raw *last = &b->raw[b->nraw - 1];

		s->lo = last->lo;
		s->hi = last->hi;
	}
	return 0;
}

int history_load(struct hdb *db, const struct history_filter *f, struct history_data *d)
{
	struct run *runs = NULL;
	size_t nruns = 0, seriescap = 0, bcap = 0;
	struct building *b = NULL;
	struct names series = { 0 };
	struct line_names lines = { 0 };
	struct hdb_stmt *st = NULL;
	int rc, row = 0;

	memset(d, 0, sizeof(*d));
	if (load_runs(db, d, &lines, &runs, &nruns) || rank_commits(d)) {
		free(runs);
		names_release(&lines.names);
		history_data_release(d);
		return history_fail(db, "cannot read the history");
	}
	st = hdb_prepare_stream(db,
		"SELECT run_id, case_name, region, event, min, verdict, budget_lo, budget_hi, partial,"
		" sim_line FROM figures WHERE min IS NOT NULL"
		" AND ($1 IS NULL OR case_name = $1) AND ($2 IS NULL OR event = $2)");
	rc = st ? 0 : -1;
	if (st) {
		hdb_bind_text(st, 1, f->case_name);
		hdb_bind_text(st, 2, f->event);
	}
	while (rc == 0 && (row = hdb_step(st)) == 1) {
		struct run key = { .id = hdb_col_int(st, 0) }, *r;
		const char *c = hdb_col_text(st, 1), *reg = hdb_col_text(st, 2), *ev = hdb_col_text(st, 3);
		char *skey = NULL;
		size_t i, line;
		bool added;

		r = bsearch(&key, runs, nruns, sizeof(*runs), cmp_run);
		if (!r || !c || !reg || !ev)
			continue; /* a figure of no run: the foreign key forbids it */
		line = r->line != SIZE_MAX ? r->line
		       : line_index(d, &lines, hdb_col_text(st, 9) ? hdb_col_text(st, 9) : "sim (profile not recorded)",
				    "sim");
		if (line == (size_t)-1 || asprintf(&skey, "%s\x1f%s\x1f%s\x1f%zu", c, reg, ev, line) < 0) {
			rc = -1;
			break;
		}
		i = names_get(&series, skey, d->nseries, &added);
		free(skey);
		if (i == (size_t)-1) {
			rc = -1;
			break;
		}
		if (added) {
			if (grow(&d->series, &seriescap, d->nseries, sizeof(*d->series)) ||
			    grow(&b, &bcap, d->nseries, sizeof(*b))) {
				rc = -1;
				break;
			}
			d->series[d->nseries] = (struct history_series){
				.case_name = strdup(c), .region = strdup(reg), .event = strdup(ev),
				.line = line, .lo = NAN, .hi = NAN,
			};
			b[d->nseries] = (struct building){ 0 };
			d->nseries++;
		}
		if (grow(&b[i].raw, &b[i].rawcap, b[i].nraw, sizeof(*b[i].raw))) {
			rc = -1;
			break;
		}
		b[i].raw[b[i].nraw++] = (struct raw){
			.commit = d->commits[r->commit].rank, .run = r->id,
			.value = (double)hdb_col_int(st, 4),
			.lo = hdb_col_null(st, 6) ? NAN : hdb_col_real(st, 6),
			.hi = hdb_col_null(st, 7) ? NAN : hdb_col_real(st, 7),
			.failed = hdb_col_text(st, 5) && !strcmp(hdb_col_text(st, 5), "FAIL"),
			.partial = hdb_col_int(st, 8) != 0,
		};
	}
	if (rc == 0 && row < 0)
		rc = -1;
	hdb_finalize(st);
	for (size_t i = 0; i < d->nseries; i++) {
		if (rc == 0)
			rc = make_points(&d->series[i], &b[i]);
		free(b[i].raw);
	}
	free(b);
	free(runs);
	names_release(&series);
	names_release(&lines.names);
	if (rc) {
		history_data_release(d);
		return history_fail(db, "cannot read the history");
	}
	/* Commits by rank, so that a point's commit indexes them. */
	{
		struct history_commit *by_rank = malloc((d->ncommits + 1) * sizeof(*by_rank));

		if (!by_rank) {
			history_data_release(d);
			return PMC_EXIT_ERROR;
		}
		for (size_t i = 0; i < d->ncommits; i++)
			by_rank[d->commits[i].rank] = d->commits[i];
		free(d->commits);
		d->commits = by_rank;
	}
	sort_data = d;
	if (d->nseries > 1) /* qsort's array may be NULL when empty */
		qsort(d->series, d->nseries, sizeof(*d->series), cmp_series);
	return 0;
}

void history_data_release(struct history_data *d)
{
	for (size_t i = 0; i < d->ncommits; i++) {
		free(d->commits[i].name);
		free(d->commits[i].date);
	}
	for (size_t i = 0; i < d->nlines; i++) {
		free(d->lines[i].model);
		free(d->lines[i].backend);
	}
	for (size_t i = 0; i < d->nseries; i++) {
		free(d->series[i].case_name);
		free(d->series[i].region);
		free(d->series[i].event);
		free(d->series[i].points);
	}
	free(d->commits);
	free(d->lines);
	free(d->series);
	memset(d, 0, sizeof(*d));
}
