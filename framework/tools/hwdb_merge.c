/* SPDX-License-Identifier: MIT */
/*
 * pmcheck hwdb merge: budgets per CPU model from the results of many
 * machines.  Each results file's CPU signature goes through hwdb's map to
 * its model (the signature itself when no model matches; the case's sim
 * profile on the sim backend; "any" for counts no CPU changes, on either
 * backend, as calibration files them), and every
 * budget expectation's figures are pooled per key, case, region and event:
 *   - a deterministic event on which every run agrees: "= N";
 *   - a deterministic event on which runs disagree: no budget; the runs
 *     are listed (machine, kernel, file, figure), never averaged;
 *   - a noisy event: the range seen, widened by the tolerance.
 * Each line's comment is its provenance: machines, runs, kernels.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

struct seen {
	double value;
	const char *host, *kernel, *file, *backend;
};

struct pool {
	char *key, *suite, *test, *region, *event;
	bool det;
	struct seen *v;
	size_t n, cap;
};

struct pools {
	struct pool *p;
	size_t n, cap;
};

static struct pool *pool_of(struct pools *ps, const char *key, const struct pmc__merge_obs *o)
{
	struct pool *g;

	for (size_t i = 0; i < ps->n; i++) {
		g = &ps->p[i];
		if (!strcmp(g->key, key) && !strcmp(g->suite, o->suite) && !strcmp(g->test, o->test) &&
		    !strcmp(g->region, o->region) && !strcmp(g->event, o->event))
			return g;
	}
	if (ps->n == ps->cap) {
		size_t cap = ps->cap ? 2 * ps->cap : 16;
		struct pool *grown = realloc(ps->p, cap * sizeof(*grown));

		if (!grown)
			return NULL;
		ps->p = grown;
		ps->cap = cap;
	}
	g = &ps->p[ps->n];
	memset(g, 0, sizeof(*g));
	g->key = strdup(key);
	g->suite = strdup(o->suite);
	g->test = strdup(o->test);
	g->region = strdup(o->region);
	g->event = strdup(o->event);
	if (!g->key || !g->suite || !g->test || !g->region || !g->event)
		return NULL;
	ps->n++;
	return g;
}

static int pool_add(struct pool *g, const struct seen *s)
{
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		struct seen *grown = realloc(g->v, cap * sizeof(*grown));

		if (!grown)
			return -1;
		g->v = grown;
		g->cap = cap;
	}
	g->v[g->n++] = *s;
	return 0;
}

/* "a, b, c" of the distinct strings pick(v[i]) gives, in first-seen order. */
static void distinct(const struct pool *g, const char *(*pick)(const struct seen *), char *out,
		     size_t size, size_t *count)
{
	size_t used = 0;

	out[0] = '\0';
	*count = 0;
	for (size_t i = 0; i < g->n; i++) {
		const char *s = pick(&g->v[i]);
		bool dup = false;

		for (size_t j = 0; j < i && !dup; j++)
			dup = !strcmp(pick(&g->v[j]), s);
		if (dup)
			continue;
		(*count)++;
		if (used < size)
			used += (size_t)snprintf(out + used, size - used, "%s%s", used ? ", " : "", s);
	}
	/* The list goes into a comment on one budget line: a control
	 * character from a results file (a newline in a host name) would
	 * break the line, so it is shown as '?'. */
	for (size_t i = 0; out[i]; i++) {
		if ((unsigned char)out[i] < ' ' || out[i] == 0x7f)
			out[i] = '?';
	}
}

static const char *host_of(const struct seen *s)
{
	return s->host;
}

static const char *kernel_of(const struct seen *s)
{
	return s->kernel;
}

static const char *backend_of(const struct seen *s)
{
	return s->backend;
}

/* The budget line for a pool, or NULL with the disagreement printed. */
static int write_pool(const struct pmc__merge *m, const struct pool *g, FILE *out)
{
	char bound[4096], hosts[2048], kernels[1024], backends[64], old[8192];
	double lo = INFINITY, hi = -INFINITY, t = m->tolerance_pct / 100.0;
	size_t nhosts, nkernels, nbackends;
	struct pmc_error err;

	for (size_t i = 0; i < g->n; i++) {
		lo = fmin(lo, g->v[i].value);
		hi = fmax(hi, g->v[i].value);
	}
	distinct(g, host_of, hosts, sizeof(hosts), &nhosts);
	distinct(g, kernel_of, kernels, sizeof(kernels), &nkernels);
	/* A pool of both backends (calls under "any") says so. */
	distinct(g, backend_of, backends + 11, sizeof(backends) - 11, &nbackends);
	if (nbackends > 1)
		memcpy(backends, ", backends ", 11);
	else
		backends[0] = '\0';
	if (g->det && lo != hi) {
		fprintf(out, "  NOT MERGED %s %s.%s %s %s: a deterministic count on which the machines disagree (%.0f..%.0f); find out why before budgeting it:\n",
			g->key, g->suite, g->test, g->region, g->event, lo, hi);
		for (size_t i = 0; i < g->n; i++)
			fprintf(out, "      %.0f  %s, kernel %s, %s, %s\n", g->v[i].value, g->v[i].host,
				g->v[i].kernel, g->v[i].backend, g->v[i].file);
		return 1;
	}
	if (g->det)
		snprintf(bound, sizeof(bound), "= %.0f ; merged: exact, %zu runs on %zu machine%s (%s)%s, kernel%s %s",
			 lo, g->n, nhosts, nhosts == 1 ? "" : "s", hosts, backends,
			 nkernels == 1 ? "" : "s", kernels);
	else
		snprintf(bound, sizeof(bound), "%.0f..%.0f ; merged: noisy, %zu runs on %zu machine%s (%s)%s saw %.0f..%.0f, widened by %g%%, kernel%s %s",
			 floor(lo * (1.0 - t)), ceil(hi * (1.0 + t)), g->n, nhosts,
			 nhosts == 1 ? "" : "s", hosts, backends, lo, hi, m->tolerance_pct,
			 nkernels == 1 ? "" : "s", kernels);
	if (pmc_hwdb_write_budget(m->dir, g->key, g->suite, g->test, g->region, g->event, bound, old,
				  sizeof(old), &err) != 0) {
		fprintf(out, "  error: %s\n", err.message);
		return -1;
	}
	fprintf(out, "  %s/%s.ini [%s] %s = %s %s\n", g->key, g->suite, g->test, g->region, g->event,
		bound);
	return 0;
}

/*
 * Pool the observations (from results files or from the history store) per
 * key, case, region and event, and write a budget line per pool.  `what`
 * names the source in the first line of the report.
 */
int pmc__hwdb_merge_pool(const struct pmc__merge *m, const struct pmc__merge_obs *obs, size_t n,
			 const char *what, FILE *out)
{
	struct pools ps = { 0 };
	size_t disagree = 0, written = 0;
	int status = 0;

	for (size_t i = 0; i < n && status == 0; i++) {
		const struct pmc__merge_obs *o = &obs[i];
		char model_key[PMC_HWDB_KEY_MAX];
		struct pmc_hwdb_model model;
		struct pmc_hwdb_match match;
		/* The classifiers read the event record and the backend only. */
		struct pmc__event_rec ev = { .kind = (char *)o->kind, .name = (char *)o->name,
					     .sim_columns = (char *)o->sim_columns };
		struct pmc__result r = { .backend = o->backend };
		bool have_model = pmc_hwdb_match(m->db, o->signature, &match, &model) == 0;
		const char *key = model_key;
		struct seen s = { o->value, o->host && *o->host ? o->host : o->source,
				  o->kernel && *o->kernel ? o->kernel : "?", o->source, o->backend };
		struct pool *g;

		snprintf(model_key, sizeof(model_key), "%s", have_model ? match.model : o->signature);
		/* As calibration files them: calls, breakpoint hits and page
		 * faults are the program's, one budget for every CPU and the
		 * simulator; the rest per model, or per sim profile. */
		if (pmc__cpu_independent(&ev))
			key = "any";
		else if (!strcmp(o->backend, "sim"))
			key = o->sim_profile && *o->sim_profile ? o->sim_profile : "sim";
		g = pool_of(&ps, key, o);
		if (!g || pool_add(g, &s)) {
			status = PMC_EXIT_ERROR;
			break;
		}
		if (g->n == 1)
			g->det = pmc__event_deterministic(&r, &ev, o->event, have_model ? &model : NULL);
	}
	if (status == 0)
		fprintf(out, "merging %s into %s/budgets/:\n", what, m->dir);
	for (size_t i = 0; i < ps.n && status == 0; i++) {
		int rc = write_pool(m, &ps.p[i], out);

		if (rc < 0)
			status = PMC_EXIT_ERROR;
		else if (rc)
			disagree++;
		else
			written++;
	}
	if (status == 0 && ps.n == 0) {
		/* Nothing to pool is not a merge that worked. */
		fprintf(stderr, "pmcheck hwdb merge: nothing to merge: no budget expectation was measured in %s (cases skipped, or without PMC_EXPECT_BUDGET)\n",
			what);
		status = PMC_EXIT_FAIL;
	} else if (status == 0) {
		fprintf(out, "%zu budget(s) written, %zu not merged (machines disagree on a deterministic count); review with git diff before committing\n",
			written, disagree);
		if (disagree)
			status = PMC_EXIT_FAIL;
	}
	for (size_t i = 0; i < ps.n; i++) {
		free(ps.p[i].key);
		free(ps.p[i].suite);
		free(ps.p[i].test);
		free(ps.p[i].region);
		free(ps.p[i].event);
		free(ps.p[i].v);
	}
	free(ps.p);
	return status;
}

/* What pooling takes from a budget check of a result: false when the check
 * has no figure to pool (inconclusive, an error, not a budget). */
bool pmc__merge_obs_of(const struct pmc__results *rs, const struct pmc__result *r,
		       const struct pmc__check_rec *cr, const char *source, struct pmc__merge_obs *o)
{
	const struct pmc__event_rec *ev = pmc__result_event(r, cr->event);

	if (cr->kind != PMC_EXPECT_KIND_BUDGET || isnan(cr->measured) ||
	    cr->status == PMC__CHECK_INCONCLUSIVE || cr->status == PMC__CHECK_ERROR)
		return false;
	*o = (struct pmc__merge_obs){
		.suite = r->suite, .test = r->test, .region = cr->region, .event = cr->event,
		.kind = ev ? ev->kind : NULL, .name = ev ? ev->name : NULL,
		.sim_columns = ev ? ev->sim_columns : NULL,
		.backend = r->backend ? r->backend : pmc__results_backend(rs),
		.signature = pmc__results_signature(rs), .sim_profile = r->sim_profile,
		.host = pmc__jstr(rs->environment, "hostname"),
		.kernel = pmc__jstr(json_object_get(rs->environment, "kernel"), "release"),
		.source = source, .value = cr->measured,
	};
	return true;
}

/* The string members of an observation, for copying and freeing them. */
#define OBS_STRINGS 13
static void obs_strings(struct pmc__merge_obs *o, const char **f[OBS_STRINGS])
{
	const char **all[OBS_STRINGS] = { &o->suite,	   &o->test,	  &o->region,
					  &o->event,	   &o->kind,	  &o->name,
					  &o->sim_columns, &o->backend,	  &o->signature,
					  &o->sim_profile, &o->host,	  &o->kernel,
					  &o->source };

	memcpy(f, all, sizeof(all));
}

int pmc__merge_list_add(struct pmc__merge_list *l, const struct pmc__merge_obs *o)
{
	const char **f[OBS_STRINGS];

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct pmc__merge_obs *grown = realloc(l->obs, cap * sizeof(*grown));

		if (!grown)
			return -1;
		l->obs = grown;
		l->cap = cap;
	}
	l->obs[l->n] = *o;
	obs_strings(&l->obs[l->n], f);
	for (size_t i = 0; l->owns && i < OBS_STRINGS; i++)
		if (*f[i] && !(*f[i] = strdup(*f[i]))) {
			while (i--)
				free((char *)*f[i]);
			return -1;
		}
	l->n++;
	return 0;
}

void pmc__merge_list_release(struct pmc__merge_list *l)
{
	for (size_t k = 0; l->owns && k < l->n; k++) {
		const char **f[OBS_STRINGS];

		obs_strings(&l->obs[k], f);
		for (size_t i = 0; i < OBS_STRINGS; i++)
			free((char *)*f[i]);
	}
	free(l->obs);
	memset(l, 0, sizeof(*l));
}

int pmc__hwdb_merge(const struct pmc__merge *m, char *const *files, size_t nfiles, FILE *out)
{
	struct pmc__results *rs = calloc(nfiles + 1, sizeof(*rs));
	struct pmc__merge_list list = { 0 };
	char what[64];
	int status = 0;

	if (!rs)
		return PMC_EXIT_ERROR;
	for (size_t f = 0; f < nfiles && status == 0; f++) {
		char why[1024];

		if (pmc__results_load(files[f], &rs[f], why, sizeof(why))) {
			fprintf(stderr, "pmcheck hwdb merge: %s\n", why);
			status = PMC_EXIT_ERROR;
			break;
		}
		for (size_t c = 0; c < rs[f].n && status == 0; c++)
			for (size_t k = 0; k < rs[f].cases[c].nchecks && status == 0; k++) {
				struct pmc__merge_obs o;

				if (pmc__merge_obs_of(&rs[f], &rs[f].cases[c], &rs[f].cases[c].checks[k],
						      files[f], &o) &&
				    pmc__merge_list_add(&list, &o))
					status = PMC_EXIT_ERROR;
			}
	}
	snprintf(what, sizeof(what), "%zu results file(s)", nfiles);
	if (status == 0)
		status = pmc__hwdb_merge_pool(m, list.obs, list.n, what, out);
	pmc__merge_list_release(&list);
	for (size_t f = 0; f < nfiles; f++)
		pmc__results_release(&rs[f]);
	free(rs);
	return status;
}
