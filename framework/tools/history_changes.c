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
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/*
 * Each point's commit, once for all series: "ORDER\x02COMMIT" strings in an
 * open-addressed set, so that a fleet's series (a thousand commits each,
 * hundreds of series) hold pointers, not copies.
 */
struct commits {
	char **slot;
	size_t cap, n;
};

static const char *intern(struct commits *t, const char *order, const char *commit)
{
	size_t lo = strlen(order), lc = strlen(commit), h = 1469598103934665603ull;
	char *key;

	if (2 * (t->n + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 1024;
		char **slot = calloc(cap, sizeof(*slot));

		if (!slot)
			return NULL;
		for (size_t i = 0; i < t->cap; i++) {
			size_t g = 1469598103934665603ull;

			if (!t->slot[i])
				continue;
			for (const char *p = t->slot[i]; *p; p++)
				g = (g ^ (unsigned char)*p) * 1099511628211ull;
			while (slot[g & (cap - 1)])
				g++;
			slot[g & (cap - 1)] = t->slot[i];
		}
		free(t->slot);
		t->slot = slot;
		t->cap = cap;
	}
	key = malloc(lo + lc + 2);
	if (!key)
		return NULL;
	memcpy(key, order, lo);
	key[lo] = '\x02';
	memcpy(key + lo + 1, commit, lc + 1);
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (;; h++) {
		char **at = &t->slot[h & (t->cap - 1)];

		if (!*at) {
			*at = key;
			t->n++;
			return key;
		}
		if (!strcmp(*at, key)) {
			free(key);
			return *at;
		}
	}
}

static void commits_release(struct commits *t)
{
	for (size_t i = 0; i < t->cap; i++)
		free(t->slot[i]);
	free(t->slot);
}

static const char *commit_of(const char *key)
{
	return strchr(key, '\x02') + 1;
}

/* One series: its points, then what was found in it. */
struct series {
	char *case_name, *region, *event, *model, *backend;
	double *value;      /* per point: the median of its runs */
	const char **point; /* per point: its interned commit */
	bool agree;         /* every point's runs had one value */
	size_t n, cap;
	struct history_change *found;
	size_t nfound, found_cap;
	int status;
};

struct reader {
	struct series *all;
	size_t n, cap;
	double *runs; /* the point being read */
	size_t nruns, runs_cap;
};

static void series_release(struct series *s)
{
	free(s->case_name);
	free(s->region);
	free(s->event);
	free(s->model);
	free(s->backend);
	free(s->value);
	free(s->point);
	history_changes_free(s->found, s->nfound);
}

static int push_run(struct reader *r, double v)
{
	if (r->nruns == r->runs_cap) {
		size_t cap = r->runs_cap ? 2 * r->runs_cap : 16;
		double *x = realloc(r->runs, cap * sizeof(*x));

		if (!x)
			return -1;
		r->runs = x;
		r->runs_cap = cap;
	}
	r->runs[r->nruns++] = v;
	return 0;
}

/* Close the point being read (into the newest series). */
static int close_point(struct reader *r, const char *point)
{
	struct series *s = r->n ? &r->all[r->n - 1] : NULL;

	if (!r->nruns || !s)
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		double *v = realloc(s->value, cap * sizeof(*v));
		const char **p = v ? realloc(s->point, cap * sizeof(*p)) : NULL;

		if (v)
			s->value = v;
		if (!p)
			return -1;
		s->point = p;
		s->cap = cap;
	}
	for (size_t i = 1; i < r->nruns; i++)
		s->agree = s->agree && r->runs[i] == r->runs[0];
	s->value[s->n] = cp_median(r->runs, r->nruns);
	s->point[s->n++] = point;
	r->nruns = 0;
	return 0;
}

static int new_series(struct reader *r, const char *c, const char *region, const char *event,
		      const char *model, const char *backend)
{
	struct series *s;

	if (r->n == r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 64;
		struct series *all = realloc(r->all, cap * sizeof(*all));

		if (!all)
			return -1;
		r->all = all;
		r->cap = cap;
	}
	s = &r->all[r->n++];
	*s = (struct series){ .case_name = strdup(c), .region = strdup(region), .event = strdup(event),
			      .model = strdup(model), .backend = strdup(backend), .agree = true };
	return s->case_name && s->region && s->event && s->model && s->backend ? 0 : -1;
}

static bool series_exact(const struct series *s)
{
	size_t held = 0;

	if (!s->agree)
		return false;
	if (!strcmp(s->backend, "sim"))
		return true;
	for (size_t i = 1; i < s->n; i++)
		held += s->value[i] == s->value[i - 1];
	return s->n > 1 && 2 * held >= s->n - 1;
}

static int add_change(struct series *s, size_t at, double before, double after, double p, bool exact)
{
	struct history_change *c;
	const char *order = s->point[at];

	if (s->nfound == s->found_cap) {
		size_t cap = s->found_cap ? 2 * s->found_cap : 8;
		struct history_change *nc = realloc(s->found, cap * sizeof(*nc));

		if (!nc)
			return -1;
		s->found = nc;
		s->found_cap = cap;
	}
	c = &s->found[s->nfound++];
	*c = (struct history_change){
		.case_name = strdup(s->case_name), .region = strdup(s->region),
		.event = strdup(s->event), .model = strdup(s->model), .backend = strdup(s->backend),
		.commit = strdup(commit_of(s->point[at])), .previous = strdup(commit_of(s->point[at - 1])),
		.order = strndup(order, (size_t)(strchr(order, '\x02') - order)), .before = before,
		.after = after,
		.change = before != 0 ? (after - before) / fabs(before) : (after != 0 ? INFINITY : 0),
		.p_value = p, .exact = exact, .regression = after > before, .index = at,
		.points = s->n,
	};
	return c->case_name && c->region && c->event && c->model && c->backend && c->commit &&
			       c->previous && c->order
		       ? 0
		       : -1;
}

static int analyse(struct series *s, const struct history_changes_options *o)
{
	struct cp_change *cps;
	size_t k;
	int rc = 0;

	if (s->n < 2)
		return 0;
	cps = malloc(s->n * sizeof(*cps));
	if (!cps)
		return -1;
	if (series_exact(s)) {
		k = cp_exact(s->value, s->n, cps, s->n);
		for (size_t j = 0; j < k && rc == 0; j++)
			rc = add_change(s, cps[j].index, s->value[cps[j].index - 1], s->value[cps[j].index], 0,
					true);
		free(cps);
		return rc;
	}
	k = cp_edivisive(s->value, s->n, &o->cp, cps, s->n);
	if (k == (size_t)-1) {
		free(cps);
		return -1;
	}
	k = cp_min_change(s->value, s->n, cps, k, o->min_change);
	for (size_t j = 0; j < k && rc == 0; j++) {
		size_t lo = j ? cps[j - 1].index : 0, at = cps[j].index;
		size_t hi = j + 1 < k ? cps[j + 1].index : s->n;

		rc = add_change(s, at, cp_median(s->value + lo, at - lo), cp_median(s->value + at, hi - at),
				cps[j].p_value, false);
	}
	free(cps);
	return rc;
}

/* The series are analysed on every CPU, each from the same seed, so the
 * answer does not depend on how many there are. */
struct pool {
	struct reader *r;
	const struct history_changes_options *o;
	size_t next;
	pthread_mutex_t lock;
};

static void *worker(void *arg)
{
	struct pool *p = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&p->lock);
		i = p->next++;
		pthread_mutex_unlock(&p->lock);
		if (i >= p->r->n)
			return NULL;
		p->r->all[i].status = analyse(&p->r->all[i], p->o);
	}
}

static int analyse_all(struct reader *r, const struct history_changes_options *o)
{
	struct pool p = { .r = r, .o = o };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = cpus > 1 ? (size_t)(cpus > 16 ? 16 : cpus) : 1, started = 0;
	pthread_t threads[16];

	pthread_mutex_init(&p.lock, NULL);
	for (size_t t = 1; t < nthreads; t++)
		if (pthread_create(&threads[started], NULL, worker, &p) == 0)
			started++;
	worker(&p);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	pthread_mutex_destroy(&p.lock);
	for (size_t i = 0; i < r->n; i++)
		if (r->all[i].status)
			return -1;
	return 0;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int history_changes(struct hdb *db, const struct history_changes_options *o,
		    struct history_change **out, size_t *n, size_t *nseries)
{
	struct hdb_stmt *st;
	struct reader r = { 0 };
	struct commits commits = { 0 };
	const char *point = NULL;
	struct history_change *all = NULL;
	size_t total = 0, analysed = 0;
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
		struct series *cur = r.n ? &r.all[r.n - 1] : NULL;
		char *order = order_key(hdb_col_text(st, 5), hdb_col_int(st, 6));
		const char *here = order ? intern(&commits, order, hdb_col_text(st, 7)) : NULL;
		bool fresh = !cur || !same(c, cur->case_name) || !same(reg, cur->region) ||
			     !same(ev, cur->event) || !same(model, cur->model) || !same(backend, cur->backend);

		free(order);
		if (!here) {
			rc = -1;
			break;
		}
		if (fresh || here != point) {
			rc = close_point(&r, point);
			point = here;
		}
		if (rc == 0 && fresh)
			rc = new_series(&r, c, reg, ev, model, backend);
		if (rc == 0)
			rc = push_run(&r, (double)hdb_col_int(st, 8));
	}
	if (rc == 0 && row < 0)
		rc = history_fail(db, "cannot read the history");
	else if (rc == 0)
		rc = close_point(&r, point);
	hdb_finalize(st);
	if (rc == 0)
		rc = analyse_all(&r, o);
	for (size_t i = 0; rc == 0 && i < r.n; i++)
		total += r.all[i].nfound;
	if (rc == 0 && total && !(all = calloc(total, sizeof(*all))))
		rc = -1;
	for (size_t i = 0; i < r.n; i++) {
		if (rc == 0) {
			/* The changes move to the caller; the series keeps none. */
			memcpy(all + *n, r.all[i].found, r.all[i].nfound * sizeof(*all));
			*n += r.all[i].nfound;
			free(r.all[i].found);
			r.all[i].found = NULL;
			r.all[i].nfound = 0;
		}
		analysed += r.all[i].n >= 2;
		series_release(&r.all[i]);
	}
	free(r.all);
	free(r.runs);
	commits_release(&commits);
	if (rc) {
		history_changes_free(all, *n);
		*n = 0;
		return rc > 0 ? rc : PMC_EXIT_ERROR;
	}
	*out = all;
	*nseries = analysed;
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
