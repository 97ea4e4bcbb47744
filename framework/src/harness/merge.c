/* SPDX-License-Identifier: MIT */
/*
 * pmcheck hwdb merge: budgets per CPU model from the results of many
 * machines.  Each results file's CPU signature goes through hwdb's map to
 * its model (the signature itself when no model matches; the case's sim
 * profile on the sim backend; "any" for counts no CPU changes), and every
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

#include "harness_int.h"

struct seen {
	double value;
	const char *host, *kernel, *file;
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

static struct pool *pool_of(struct pools *ps, const char *key, const struct pmc__result *r,
			    const char *region, const char *event)
{
	struct pool *g;

	for (size_t i = 0; i < ps->n; i++) {
		g = &ps->p[i];
		if (!strcmp(g->key, key) && !strcmp(g->suite, r->suite) && !strcmp(g->test, r->test) &&
		    !strcmp(g->region, region) && !strcmp(g->event, event))
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
	g->suite = strdup(r->suite);
	g->test = strdup(r->test);
	g->region = strdup(region);
	g->event = strdup(event);
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
}

static const char *host_of(const struct seen *s)
{
	return s->host;
}

static const char *kernel_of(const struct seen *s)
{
	return s->kernel;
}

/* The budget line for a pool, or NULL with the disagreement printed. */
static int write_pool(const struct pmc__merge *m, const struct pool *g, FILE *out)
{
	char bound[1024], hosts[400], kernels[300], old[1024];
	double lo = INFINITY, hi = -INFINITY, t = m->tolerance_pct / 100.0;
	size_t nhosts, nkernels;
	struct pmc_error err;

	for (size_t i = 0; i < g->n; i++) {
		lo = fmin(lo, g->v[i].value);
		hi = fmax(hi, g->v[i].value);
	}
	distinct(g, host_of, hosts, sizeof(hosts), &nhosts);
	distinct(g, kernel_of, kernels, sizeof(kernels), &nkernels);
	if (g->det && lo != hi) {
		fprintf(out, "  NOT MERGED %s %s.%s %s %s: a deterministic count on which the machines disagree (%.0f..%.0f); find out why before budgeting it:\n",
			g->key, g->suite, g->test, g->region, g->event, lo, hi);
		for (size_t i = 0; i < g->n; i++)
			fprintf(out, "      %.0f  %s, kernel %s, %s\n", g->v[i].value, g->v[i].host,
				g->v[i].kernel, g->v[i].file);
		return 1;
	}
	if (g->det)
		snprintf(bound, sizeof(bound), "= %.0f ; merged: exact, %zu runs on %zu machine%s (%s), kernel%s %s",
			 lo, g->n, nhosts, nhosts == 1 ? "" : "s", hosts, nkernels == 1 ? "" : "s",
			 kernels);
	else
		snprintf(bound, sizeof(bound), "%.0f..%.0f ; merged: noisy, %zu runs on %zu machine%s (%s) saw %.0f..%.0f, widened by %g%%, kernel%s %s",
			 floor(lo * (1.0 - t)), ceil(hi * (1.0 + t)), g->n, nhosts,
			 nhosts == 1 ? "" : "s", hosts, lo, hi, m->tolerance_pct,
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

int pmc__hwdb_merge(const struct pmc__merge *m, char *const *files, size_t nfiles, FILE *out)
{
	struct pmc__results *rs = calloc(nfiles + 1, sizeof(*rs));
	struct pools ps = { 0 };
	size_t disagree = 0, written = 0;
	int status = 0;

	if (!rs)
		return PMC_EXIT_ERROR;
	for (size_t f = 0; f < nfiles && status == 0; f++) {
		char why[1024], model_key[PMC_HWDB_KEY_MAX];
		struct pmc_hwdb_model model;
		struct pmc_hwdb_match match;
		const char *sig, *backend, *host, *kernel;
		bool have_model;

		if (pmc__results_load(files[f], &rs[f], why, sizeof(why))) {
			fprintf(stderr, "pmcheck hwdb merge: %s\n", why);
			status = PMC_EXIT_ERROR;
			break;
		}
		sig = pmc__results_signature(&rs[f]);
		backend = pmc__results_backend(&rs[f]);
		host = pmc__jstr(rs[f].environment, "hostname");
		kernel = pmc__jstr(json_object_get(rs[f].environment, "kernel"), "release");
		have_model = pmc_hwdb_match(m->db, sig, &match, &model) == 0;
		snprintf(model_key, sizeof(model_key), "%s", have_model ? match.model : sig);
		for (size_t c = 0; c < rs[f].n; c++) {
			const struct pmc__result *r = &rs[f].cases[c];

			for (size_t k = 0; k < r->nchecks; k++) {
				const struct pmc__check_rec *cr = &r->checks[k];
				const struct pmc__event_rec *ev = pmc__result_event(r, cr->event);
				const char *key = model_key;
				struct seen s = { cr->measured, *host ? host : files[f],
						  *kernel ? kernel : "?", files[f] };
				struct pool *g;

				if (cr->kind != PMC_EXPECT_KIND_BUDGET || isnan(cr->measured) ||
				    cr->status == PMC__CHECK_INCONCLUSIVE || cr->status == PMC__CHECK_ERROR)
					continue;
				if (!strcmp(backend, "sim"))
					key = r->sim_profile ? r->sim_profile : "sim";
				else if (pmc__cpu_independent(ev))
					key = "any";
				g = pool_of(&ps, key, r, cr->region, cr->event);
				if (!g || pool_add(g, &s)) {
					status = PMC_EXIT_ERROR;
					break;
				}
				if (g->n == 1)
					g->det = pmc__event_deterministic(r, ev, cr->event,
									  have_model ? &model : NULL);
			}
		}
	}
	if (status == 0)
		fprintf(out, "merging %zu results file(s) into %s/budgets/:\n", nfiles, m->dir);
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
		fprintf(stderr, "pmcheck hwdb merge: nothing to merge: no budget expectation was measured in these files (cases skipped, or without PMC_EXPECT_BUDGET)\n");
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
	for (size_t f = 0; f < nfiles; f++)
		pmc__results_release(&rs[f]);
	free(rs);
	return status;
}
