/* SPDX-License-Identifier: MIT */
/*
 * The commits where each series of the history moved (history.h), from the
 * series load.c reads: one case, region and event on one CPU model
 * and backend, a point per commit in the store's order, the median of that
 * commit's runs (their minimum figure, as the gates judge).
 *
 * A series is exact when every commit's runs agree and every level between
 * its first and its newest lasts at least --min-size commits
 * (cp_series_exact), whatever the counter kind or backend: a count that
 * blips, or takes one of two values at random, is noise.  Each change of an
 * exact series is a change point at its commit.  Any other series is noisy: E-divisive with a
 * permutation test (changepoint.h) finds its change points, and one is
 * reported when the medians on either side differ by at least the smallest
 * change worth reporting and by the series' noise (cp_min_change).  Points
 * of partial figures only are left out.
 */
#define _GNU_SOURCE
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../cli.h"
#include "changepoint.h"
#include "history.h"

/* One series' work: its whole points, then what was found in it. */
struct job {
	const struct history_data *d;
	const struct history_series *s;
	double *value;  /* the whole points' values */
	size_t *commit; /* and their commits' ranks */
	size_t n;
	struct history_change *found;
	size_t nfound, cap;
	int status;
};

/* Exact: every commit's runs agreed, and every level held (cp_series_exact). */
static bool series_exact(const struct job *j, const struct history_changes_options *o)
{
	return j->s->agree && j->n > 1 && cp_series_exact(j->value, j->n, o->cp.min_size);
}

static int add_change(struct job *j, size_t at, double before, double after, double p, bool exact)
{
	const struct history_line *l = &j->d->lines[j->s->line];
	struct history_change *c;

	if (j->nfound == j->cap) {
		size_t cap = j->cap ? 2 * j->cap : 8;
		struct history_change *nc = realloc(j->found, cap * sizeof(*nc));

		if (!nc)
			return -1;
		j->found = nc;
		j->cap = cap;
	}
	c = &j->found[j->nfound++];
	*c = (struct history_change){
		.case_name = strdup(j->s->case_name), .region = strdup(j->s->region),
		.event = strdup(j->s->event), .model = strdup(l->model), .backend = strdup(l->backend),
		.commit = strdup(j->d->commits[j->commit[at]].name),
		.previous = strdup(j->d->commits[j->commit[at - 1]].name), .rank = j->commit[at],
		.before = before, .after = after,
		.change = before != 0 ? (after - before) / fabs(before) : (after != 0 ? INFINITY : 0),
		.p_value = p, .exact = exact, .regression = after > before, .index = at, .points = j->n,
	};
	return c->case_name && c->region && c->event && c->model && c->backend && c->commit &&
			       c->previous
		       ? 0
		       : -1;
}

static int analyse(struct job *j, const struct history_changes_options *o)
{
	struct cp_change *cps;
	size_t k;
	int rc = 0;

	j->value = malloc((j->s->npoints + 1) * sizeof(*j->value));
	j->commit = malloc((j->s->npoints + 1) * sizeof(*j->commit));
	cps = malloc((j->s->npoints + 1) * sizeof(*cps));
	if (!j->value || !j->commit || !cps) {
		free(cps);
		return -1;
	}
	for (size_t i = 0; i < j->s->npoints; i++)
		if (!j->s->points[i].partial) {
			j->value[j->n] = j->s->points[i].value;
			j->commit[j->n++] = j->s->points[i].commit;
		}
	if (j->n < 2) {
		free(cps);
		return 0;
	}
	if (series_exact(j, o)) {
		k = cp_exact(j->value, j->n, cps, j->n);
		for (size_t i = 0; i < k && rc == 0; i++)
			rc = add_change(j, cps[i].index, j->value[cps[i].index - 1], j->value[cps[i].index],
					0, true);
		free(cps);
		return rc;
	}
	k = cp_edivisive(j->value, j->n, &o->cp, cps, j->n);
	if (k == (size_t)-1) {
		free(cps);
		return -1;
	}
	k = cp_min_change(j->value, j->n, cps, k, o->min_change);
	for (size_t i = 0; i < k && rc == 0; i++) {
		size_t lo = i ? cps[i - 1].index : 0, at = cps[i].index;
		size_t hi = i + 1 < k ? cps[i + 1].index : j->n;

		rc = add_change(j, at, cp_median(j->value + lo, at - lo), cp_median(j->value + at, hi - at),
				cps[i].p_value, false);
	}
	free(cps);
	return rc;
}

/* The series are analysed on every CPU, each from the same seed, so the
 * answer does not depend on how many there are. */
struct pool {
	struct job *jobs;
	size_t n, next;
	const struct history_changes_options *o;
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
		if (i >= p->n)
			return NULL;
		p->jobs[i].status = analyse(&p->jobs[i], p->o);
	}
}

int history_changes_of(const struct history_data *d, const struct history_changes_options *o,
		       struct history_change **out, size_t *n, size_t *nseries)
{
	struct pool p = { .n = d->nseries, .o = o };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t nthreads = cpus > 1 ? (size_t)(cpus > 16 ? 16 : cpus) : 1, started = 0, total = 0;
	pthread_t threads[16];
	int rc = 0;

	*out = NULL;
	*n = *nseries = 0;
	p.jobs = calloc(d->nseries + 1, sizeof(*p.jobs));
	if (!p.jobs)
		return -1;
	for (size_t i = 0; i < d->nseries; i++)
		p.jobs[i] = (struct job){ .d = d, .s = &d->series[i] };
	pthread_mutex_init(&p.lock, NULL);
	for (size_t t = 1; t < nthreads; t++)
		if (pthread_create(&threads[started], NULL, worker, &p) == 0)
			started++;
	worker(&p);
	for (size_t t = 0; t < started; t++)
		pthread_join(threads[t], NULL);
	pthread_mutex_destroy(&p.lock);
	for (size_t i = 0; i < d->nseries; i++) {
		rc = rc ? rc : p.jobs[i].status;
		total += p.jobs[i].nfound;
		*nseries += p.jobs[i].n >= 2;
	}
	if (rc == 0 && total && !(*out = calloc(total, sizeof(**out))))
		rc = -1;
	for (size_t i = 0; i < d->nseries; i++) {
		if (rc == 0) {
			/* The changes move to the caller. */
			if (p.jobs[i].nfound)
				memcpy(*out + *n, p.jobs[i].found, p.jobs[i].nfound * sizeof(**out));
			*n += p.jobs[i].nfound;
		} else {
			history_changes_free(p.jobs[i].found, p.jobs[i].nfound);
			p.jobs[i].found = NULL;
		}
		free(p.jobs[i].found);
		free(p.jobs[i].value);
		free(p.jobs[i].commit);
	}
	free(p.jobs);
	if (rc) {
		history_changes_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	return rc;
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
	}
	free(c);
}
