/* SPDX-License-Identifier: MIT */
/*
 * The arithmetic of a region's summary, pure: the log-bucket sketch of a
 * count's values and of a ratio's, and one event's distribution, exact
 * while it holds at most PMC__EXACT_DISTINCT values, then sketched.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_int.h"
#include "summary_int.h"

/*
 * The sketch's buckets are powers of gamma = (1 + alpha) / (1 - alpha).
 * Without libm (util/arith.h says why), the powers are a table, made once:
 * gamma^k for k from -nb to nb - 1, each the one before times gamma (or
 * the one after divided by it), in doubles, so that every process makes
 * the same table (valgrind has no 80-bit long double).  Their error, about
 * 4400 roundings at most, stays below 1e-12 of a value, beside the
 * sketch's own alpha of 0.005.  nb is the number of buckets of a count:
 * the least i with gamma^i >= 2^64, and two more.
 */
#define MAX_BUCKETS 8192
static double powers[2 * MAX_BUCKETS];
static size_t nb;
static pthread_once_t made = PTHREAD_ONCE_INIT;

static double sketch_gamma(void)
{
	return (1.0 + PMC__SKETCH_ALPHA) / (1.0 - PMC__SKETCH_ALPHA);
}

static void make_powers(void)
{
	const double g = sketch_gamma(), top = 18446744073709551616.0; /* 2^64 */
	double p = 1.0;
	size_t i = 0;

	while (p < top && i < MAX_BUCKETS - 2) {
		p *= g;
		i++;
	}
	nb = i + 2;
	powers[nb] = 1.0;
	for (size_t j = nb + 1; j < 2 * nb; j++)
		powers[j] = powers[j - 1] * g;
	for (size_t j = nb; j-- > 0;)
		powers[j] = powers[j + 1] / g;
}

size_t pmc__sketch_buckets(void)
{
	pthread_once(&made, make_powers);
	return nb;
}

/* The least j in [lo, hi) with powers[j] >= x, or hi - 1 when none is. */
static size_t least_at_or_above(double x, size_t lo, size_t hi)
{
	size_t a = lo, b = hi - 1;

	while (a < b) {
		size_t mid = a + (b - a) / 2;

		if (powers[mid] >= x)
			b = mid;
		else
			a = mid + 1;
	}
	return a;
}

/* Bucket i holds (gamma^(i-1), gamma^i]; its estimate is within alpha of
 * every value in it.  v >= 1. */
static size_t sketch_index(uint64_t v)
{
	size_t n = pmc__sketch_buckets();

	return least_at_or_above((double)v, n, 2 * n) - n;
}

double pmc__sketch_value(size_t i)
{
	size_t n = pmc__sketch_buckets();

	return 2.0 * powers[n + (i < n ? i : n - 1)] / (sketch_gamma() + 1.0);
}

void pmc__sketch_add(struct pmc__dist *d, uint64_t v, uint64_t count)
{
	if (v == 0)
		d->zeros += count;
	else
		d->bucket[sketch_index(v)] += count;
}

/* A ratio's bucket: k + nb for the least k with gamma^k >= q, within
 * [0, 2 nb); a ratio that is not positive (or not a number) in the first. */
size_t pmc__ratio_index(double q)
{
	size_t n = pmc__sketch_buckets();

	if (!(q > 0.0))
		return 0;
	return least_at_or_above(q, 0, 2 * n);
}

double pmc__ratio_value(size_t i)
{
	size_t n = pmc__sketch_buckets();

	return 2.0 * powers[i < 2 * n ? i : 2 * n - 1] / (sketch_gamma() + 1.0);
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
