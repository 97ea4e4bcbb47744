/* SPDX-License-Identifier: MIT */
/*
 * The arithmetic of a region's summary, pure: the log-bucket sketch of a
 * count's values and of a ratio's, and one event's distribution, exact
 * while it holds at most PMC__EXACT_DISTINCT values, then sketched.
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

static double sketch_gamma(void)
{
	return (1.0 + PMC__SKETCH_ALPHA) / (1.0 - PMC__SKETCH_ALPHA);
}

size_t pmc__sketch_buckets(void)
{
	return (size_t)ceil(64.0 * log(2.0) / log(sketch_gamma())) + 2;
}

/* Bucket i holds (gamma^(i-1), gamma^i]; its estimate is within alpha of
 * every value in it. */
static size_t sketch_index(uint64_t v)
{
	size_t i = (size_t)ceil(log((double)v) / log(sketch_gamma()));
	size_t nb = pmc__sketch_buckets();

	return i < nb ? i : nb - 1;
}

double pmc__sketch_value(size_t i)
{
	return 2.0 * pow(sketch_gamma(), (double)i) / (sketch_gamma() + 1.0);
}

void pmc__sketch_add(struct pmc__dist *d, uint64_t v, uint64_t count)
{
	if (v == 0)
		d->zeros += count;
	else
		d->bucket[sketch_index(v)] += count;
}

size_t pmc__ratio_index(double q)
{
	long i = lround(ceil(log(q) / log(sketch_gamma()))) + (long)pmc__sketch_buckets();

	return i < 0 ? 0 : (size_t)i >= 2 * pmc__sketch_buckets() ? 2 * pmc__sketch_buckets() - 1 : (size_t)i;
}

double pmc__ratio_value(size_t i)
{
	return 2.0 * pow(sketch_gamma(), (double)i - (double)pmc__sketch_buckets()) / (sketch_gamma() + 1.0);
}

/* Add `count` samples of value v to the distribution. */
int pmc__dist_add(struct pmc__dist *d, uint64_t v, uint64_t count)
{
	size_t lo = 0, hi = d->nd;

	if (d->bucket) {
		pmc__sketch_add(d, v, count);
		return 0;
	}
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (d->val[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < d->nd && d->val[lo] == v) {
		d->cnt[lo] += count;
		return 0;
	}
	if (d->nd == PMC__EXACT_DISTINCT) {
		/* Too many distinct values to keep: the sketch from now on. */
		d->bucket = calloc(pmc__sketch_buckets(), sizeof(*d->bucket));
		if (!d->bucket)
			return -ENOMEM;
		for (size_t k = 0; k < d->nd; k++)
			pmc__sketch_add(d, d->val[k], d->cnt[k]);
		free(d->val);
		free(d->cnt);
		d->val = d->cnt = NULL;
		d->nd = d->capd = 0;
		pmc__sketch_add(d, v, count);
		return 0;
	}
	if (d->nd == d->capd) {
		size_t cap = d->capd ? d->capd * 2 : 16;
		uint64_t *nv = realloc(d->val, cap * sizeof(*nv)), *nc;

		if (!nv)
			return -ENOMEM;
		d->val = nv;
		nc = realloc(d->cnt, cap * sizeof(*nc));
		if (!nc)
			return -ENOMEM;
		d->cnt = nc;
		d->capd = cap;
	}
	memmove(d->val + lo + 1, d->val + lo, (d->nd - lo) * sizeof(*d->val));
	memmove(d->cnt + lo + 1, d->cnt + lo, (d->nd - lo) * sizeof(*d->cnt));
	d->val[lo] = v;
	d->cnt[lo] = count;
	d->nd++;
	return 0;
}

int pmc__cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}
