/* SPDX-License-Identifier: MIT */
/*
 * Statistics of a region's samples, pure: a column's minimum, median,
 * mean and maximum over the window and the folded summary (computed once
 * and kept with the region), a ratio's, and the run's exit status.  No
 * I/O, no kernel: unit-tested with synthetic samples.  Judging is judge.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_int.h"
#include "summary_int.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double pmc__region_ratio(const struct pmc__region *r, size_t ev, size_t per, enum pmc_stat stat,
			 bool *div0, double *error, size_t *missed)
{
	const struct pmc__ratio *x = NULL;
	double *w = malloc((r->n ? r->n : 1) * sizeof(*w)), best = NAN;
	size_t nw = 0, folded = pmc__region_folded(r);

	*div0 = false;
	*error = 0;
	*missed = 0;
	if (!w)
		return NAN;
	for (size_t q = 0; r->summary && q < r->summary->nratio; q++)
		if (r->summary->ratio[q].ev == ev && r->summary->ratio[q].per == per)
			x = &r->summary->ratio[q];
	if (folded) {
		*missed = x ? x->missed : folded;
		if (x && x->div0)
			*div0 = true;
	}
	for (size_t k = 0; k < r->n; k++) {
		uint64_t den = r->value[k * r->nev + per];

		if (den == 0) {
			*div0 = true;
			continue;
		}
		w[nw++] = (double)r->value[k * r->nev + ev] / (double)den;
	}
	qsort(w, nw, sizeof(*w), cmp_double);
	if (!x || x->n == 0) {
		if (nw)
			best = stat == PMC_STAT_MAX ? w[nw - 1]
			       : stat == PMC_STAT_MEDIAN ? (nw % 2 ? w[nw / 2] : (w[nw / 2 - 1] + w[nw / 2]) / 2)
							 : w[0];
	} else if (stat == PMC_STAT_MIN) {
		best = nw && w[0] < x->min ? w[0] : x->min;
	} else if (stat == PMC_STAT_MAX) {
		best = nw && w[nw - 1] > x->max ? w[nw - 1] : x->max;
	} else {
		/* The median of the folded ratios and the window's: an
		 * estimate within alpha, from the sketch. */
		size_t nb = 2 * pmc__sketch_buckets(), total = x->n + nw, lo = (total - 1) / 2, hi = total / 2;
		uint64_t *b = calloc(nb, sizeof(*b));
		size_t seen, zeros = x->zeros;
		double vlo = 0, vhi = 0;

		if (b) {
			memcpy(b, x->bucket, nb * sizeof(*b));
			for (size_t k = 0; k < nw; k++) {
				if (w[k] == 0)
					zeros++;
				else
					b[pmc__ratio_index(w[k])]++;
			}
			seen = zeros;
			for (size_t i = 0; i < nb && seen <= hi; i++) {
				if (lo >= seen && lo < seen + b[i])
					vlo = pmc__ratio_value(i);
				if (hi >= seen && hi < seen + b[i])
					vhi = pmc__ratio_value(i);
				seen += b[i];
			}
			free(b);
			best = (vlo + vhi) / 2;
			*error = PMC__SKETCH_ALPHA;
		}
	}
	free(w);
	return best;
}

/* The values of ranks lo and hi (0-based, lo <= hi) among an exact
 * distribution d and the sorted values w (nw of them): one merged walk. */
static void exact_ranks(const struct pmc__dist *d, const uint64_t *w, size_t nw, size_t lo,
			size_t hi, uint64_t *vlo, uint64_t *vhi)
{
	size_t i = 0, j = 0, seen = 0;

	*vlo = *vhi = 0;
	while (i < d->nd || j < nw) {
		uint64_t x;
		size_t c;

		if (j >= nw || (i < d->nd && d->val[i] <= w[j])) {
			x = d->val[i];
			c = d->cnt[i++];
		} else {
			x = w[j++];
			c = 1;
		}
		if (lo >= seen && lo < seen + c)
			*vlo = x;
		if (hi >= seen && hi < seen + c) {
			*vhi = x;
			return;
		}
		seen += c;
	}
}

/* The same from a sketch: each rank's bucket estimate (within alpha). */
static int sketch_ranks(const struct pmc__dist *d, const uint64_t *w, size_t nw, size_t lo,
			size_t hi, double *vlo, double *vhi)
{
	size_t nb = pmc__sketch_buckets(), seen;
	struct pmc__dist t = { .bucket = calloc(nb, sizeof(uint64_t)), .zeros = d->zeros };

	if (!t.bucket)
		return -ENOMEM;
	memcpy(t.bucket, d->bucket, nb * sizeof(*t.bucket));
	for (size_t k = 0; k < nw; k++)
		pmc__sketch_add(&t, w[k], 1);
	*vlo = *vhi = 0;
	seen = t.zeros;
	for (size_t i = 0; i < nb && seen <= hi; i++) {
		if (lo >= seen && lo < seen + t.bucket[i])
			*vlo = pmc__sketch_value(i);
		if (hi >= seen && hi < seen + t.bucket[i])
			*vhi = pmc__sketch_value(i);
		seen += t.bucket[i];
	}
	free(t.bucket);
	return 0;
}

void pmc__stats_of(const struct pmc__region *r, size_t ev, struct pmc__stats *s)
{
	const struct pmc__dist *d = r->summary && ev < r->summary->nev && r->summary->ev[ev].n
					    ? &r->summary->ev[ev]
					    : NULL;
	uint64_t small[64];
	uint64_t *v = r->n <= 64 ? small : malloc(r->n * sizeof(*v));
	unsigned __int128 sum = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->running_share = 1.0;
	if (ev >= r->nev || (r->n == 0 && !d))
		goto out;
	s->n = r->n + (d ? d->n : 0);
	s->min = UINT64_MAX;
	if (d) {
		s->min = d->min;
		s->max = d->max;
		sum = d->sum;
		s->not_counted = d->not_counted;
		s->multiplexed = d->multiplexed;
		s->other_threads = d->other_threads;
		s->running_share = d->running_share;
	}
	for (i = 0; i < r->n; i++) {
		size_t k = i * r->nev + ev;
		uint64_t x = r->value[k];

		if (v)
			v[i] = x;
		sum += x;
		if (x < s->min)
			s->min = x;
		if (x > s->max)
			s->max = x;
		pmc__count_flags(r, k, &s->not_counted, &s->multiplexed, &s->other_threads,
			    &s->running_share);
	}
	s->mean = (double)((long double)sum / (long double)s->n);
	if (!v) {
		/* Out of memory for the sort: the mean stands in. */
		s->median = s->mean;
		goto out;
	}
	qsort(v, r->n, sizeof(*v), pmc__cmp_u64);
	if (!d) {
		s->median = r->n % 2 ? (double)v[r->n / 2]
				     : ((double)v[r->n / 2 - 1] + (double)v[r->n / 2]) / 2.0;
	} else if (!d->bucket) {
		uint64_t a, b;

		exact_ranks(d, v, r->n, (s->n - 1) / 2, s->n / 2, &a, &b);
		s->median = ((double)a + (double)b) / 2.0;
	} else {
		double a, b;

		if (sketch_ranks(d, v, r->n, (s->n - 1) / 2, s->n / 2, &a, &b) == 0) {
			s->median = (a + b) / 2.0;
			s->median_error = PMC__SKETCH_ALPHA;
		} else {
			s->median = s->mean;
		}
	}
out:
	if (v && v != small)
		free(v);
}

const struct pmc__stats *pmc__region_stats(struct pmc__region *r, size_t ev)
{
	static const struct pmc__stats none = { .running_share = 1.0 };
	static struct pmc__stats scratch;

	if (ev >= r->nev)
		return &none;
	if (r->stats && r->stats_rows == r->n && r->stats_settled == r->settled &&
	    r->stats_folded == pmc__region_folded(r))
		return &r->stats[ev];
	free(r->stats);
	r->stats = calloc(r->nev, sizeof(*r->stats));
	if (!r->stats) {
		/* No room to keep them: this column's, computed again. */
		pmc__stats_of(r, ev, &scratch);
		return &scratch;
	}
	for (size_t j = 0; j < r->nev; j++)
		pmc__stats_of(r, j, &r->stats[j]);
	r->stats_rows = r->n;
	r->stats_settled = r->settled;
	r->stats_folded = pmc__region_folded(r);
	return &r->stats[ev];
}

double pmc__stat_pick(const struct pmc__stats *s, enum pmc_stat stat)
{
	switch (stat) {
	case PMC_STAT_MEDIAN:
		return s->median;
	case PMC_STAT_MAX:
		return (double)s->max;
	case PMC_STAT_MIN:
	default:
		return (double)s->min;
	}
}

const char *pmc__stat_name(enum pmc_stat stat)
{
	return stat == PMC_STAT_MEDIAN ? "median" : stat == PMC_STAT_MAX ? "max" : "min";
}

int pmc__exit_status(const size_t counts[PMC__NVERDICTS])
{
	size_t total = 0;
	int v;

	for (v = 0; v < PMC__NVERDICTS; v++)
		total += counts[v];
	if (counts[PMC_ERROR])
		return PMC_EXIT_ERROR;
	if (counts[PMC_FAIL])
		return PMC_EXIT_FAIL;
	if (counts[PMC_INCONCLUSIVE])
		return PMC_EXIT_INCONCLUSIVE;
	if (counts[PMC_UNBUDGETED])
		return PMC_EXIT_UNBUDGETED;
	if (total > 0 && counts[PMC_SKIP] == total)
		return PMC_EXIT_SKIP;
	return PMC_EXIT_PASS;
}
