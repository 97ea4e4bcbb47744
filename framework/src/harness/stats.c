/* SPDX-License-Identifier: MIT */
/*
 * Samples and their statistics, pure: each region's sample storage (rows
 * reserved, settled, appended), the statistics of a column (computed once
 * and kept with the region), and the run's exit status.  No I/O, no
 * kernel: unit-tested with synthetic samples.  Judging is judge.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "harness_int.h"

/* The case reserves each region's rows before the measured repetitions, so
 * PMC_REGION's inline path finds room and never allocates.  The new rows
 * are written here: fresh pages fault on first touch, and in the loop each
 * fault would cost the kernel thousands of instructions (measured in the
 * lane: +40 instructions per event per region). */
/* Grow one column array from old to cells cells of elem bytes, the new
 * cells zeroed (touched now, not in the loop). */
static int grow_column(void **p, size_t old, size_t cells, size_t elem)
{
	char *q = realloc(*p, cells * elem);

	if (!q)
		return -ENOMEM;
	memset(q + old * elem, 0, (cells - old) * elem);
	*p = q;
	return 0;
}

int pmc__region_reserve(struct pmc__region *r, size_t rows)
{
	size_t per = r->nev ? r->nev : 1, cells, old = r->cap * per;

	if (rows > PMC__WINDOW_ROWS)
		rows = PMC__WINDOW_ROWS; /* the rest is summarised as it comes */
	cells = rows * per;
	if (rows <= r->cap)
		return 0;
	if (grow_column((void **)&r->value, old, cells, sizeof(*r->value)) ||
	    grow_column((void **)&r->enabled_ns, old, cells, sizeof(*r->enabled_ns)) ||
	    grow_column((void **)&r->running_ns, old, cells, sizeof(*r->running_ns)) ||
	    grow_column((void **)&r->flags, old, cells, sizeof(*r->flags)))
		return -ENOMEM;
	r->cap = rows;
	return 0;
}

/*
 * Turn the raw rows PMC_REGION's inline path stored (rows from r->settled
 * on: value deltas, the group's times and the thread flag in the first
 * cell) into final ones, as pmc_measurement_from() and
 * pmc_measurement_subtract() would have made them: a delta of 2^63 or more
 * is a count that went backwards (NEGATIVE, 0); every event takes the
 * group's times and the flags they imply; the overhead is subtracted,
 * clamping at zero.
 */
void pmc__region_settle(struct pmc__region *r, const struct pmc_measurement *overhead)
{
	for (size_t k = r->settled; r->nev && k < r->n; k++) {
		size_t row = k * r->nev;
		uint64_t en = r->enabled_ns[row], ru = r->running_ns[row];
		unsigned base = (r->flags[row] & PMC_DELTA_OTHER_THREADS) |
				(ru == 0 && en > 0 ? PMC_DELTA_NOT_COUNTED
				 : ru < en	   ? PMC_DELTA_MULTIPLEXED
						   : 0u);

		for (size_t i = 0; i < r->nev; i++) {
			uint64_t v = r->value[row + i];
			uint64_t o = i < overhead->n ? overhead->d[i].value : 0;
			int backwards = (v >> 63) != 0;

			r->value[row + i] = backwards ? 0 : v > o ? v - o : 0;
			r->flags[row + i] = base | (backwards ? PMC_DELTA_NEGATIVE : 0u);
			r->enabled_ns[row + i] = en;
			r->running_ns[row + i] = ru;
		}
	}
	r->settled = r->n;
}

/* ---- summaries: regions executed millions of times ------------------------
 *
 * A region's rows live in a window of at most PMC__WINDOW_ROWS.  When it is
 * full (its next sample takes the general path, which appends here, outside
 * the counted window), the rows are folded into the region's summary and
 * the window starts over: per event the count, minimum, maximum and sum
 * (exact: 128 bits), the samples of each flag, the smallest running share,
 * and the distribution of values for the median -- exact, as sorted
 * distinct values with their counts, while there are at most
 * PMC__EXACT_DISTINCT of them (deterministic counts repeat: a loop's
 * region takes one or a few values), else a sketch of logarithmic buckets
 * whose every value lies within PMC__SKETCH_ALPHA of its bucket's estimate.
 * The summary also keeps the first PMC__KEPT_VALUES rows, which the
 * results list, and the last row, for pmc_test_last().
 */
struct pmc__dist {
	size_t n, multiplexed, not_counted, other_threads;
	uint64_t min, max;
	unsigned __int128 sum;
	double running_share;
	uint64_t *val, *cnt; /* exact: sorted distinct values, their counts */
	size_t nd, capd;
	uint64_t *bucket;    /* sketch (when not NULL): counts per log bucket */
	uint64_t zeros;      /* sketch: samples of value 0 */
};

/* A ratio an expectation asks for (event / per, sample by sample): its
 * exact extremes and a sketch of its values, over the folded rows from
 * the fold it was asked for on. */
struct pmc__ratio {
	size_t ev, per;
	size_t n, div0;   /* rows seen; rows whose denominator was 0 */
	size_t missed;    /* rows folded before it was asked for */
	double min, max;
	uint64_t *bucket; /* 2 * sketch_buckets(): ratios 2^-64 .. 2^64 */
	uint64_t zeros;
};

struct pmc__summary {
	size_t folded, nev;
	uint64_t *kept; /* first PMC__KEPT_VALUES rows, nev values each */
	size_t nkept;
	uint64_t *last;  /* the last folded row */
	unsigned *last_flags;
	struct pmc__dist *ev;
	struct pmc__ratio ratio[PMC__MAX_RATIOS];
	size_t nratio;
};

static double sketch_gamma(void)
{
	return (1.0 + PMC__SKETCH_ALPHA) / (1.0 - PMC__SKETCH_ALPHA);
}

static size_t sketch_buckets(void)
{
	return (size_t)ceil(64.0 * log(2.0) / log(sketch_gamma())) + 2;
}

/* Bucket i holds (gamma^(i-1), gamma^i]; its estimate is within alpha of
 * every value in it. */
static size_t sketch_index(uint64_t v)
{
	size_t i = (size_t)ceil(log((double)v) / log(sketch_gamma()));
	size_t nb = sketch_buckets();

	return i < nb ? i : nb - 1;
}

static double sketch_value(size_t i)
{
	return 2.0 * pow(sketch_gamma(), (double)i) / (sketch_gamma() + 1.0);
}

static void sketch_add(struct pmc__dist *d, uint64_t v, uint64_t count)
{
	if (v == 0)
		d->zeros += count;
	else
		d->bucket[sketch_index(v)] += count;
}

static size_t ratio_index(double q)
{
	long i = lround(ceil(log(q) / log(sketch_gamma()))) + (long)sketch_buckets();

	return i < 0 ? 0 : (size_t)i >= 2 * sketch_buckets() ? 2 * sketch_buckets() - 1 : (size_t)i;
}

static double ratio_value(size_t i)
{
	return 2.0 * pow(sketch_gamma(), (double)i - (double)sketch_buckets()) / (sketch_gamma() + 1.0);
}

/* Add `count` samples of value v to the distribution. */
static int dist_add(struct pmc__dist *d, uint64_t v, uint64_t count)
{
	size_t lo = 0, hi = d->nd;

	if (d->bucket) {
		sketch_add(d, v, count);
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
		d->bucket = calloc(sketch_buckets(), sizeof(*d->bucket));
		if (!d->bucket)
			return -ENOMEM;
		for (size_t k = 0; k < d->nd; k++)
			sketch_add(d, d->val[k], d->cnt[k]);
		free(d->val);
		free(d->cnt);
		d->val = d->cnt = NULL;
		d->nd = d->capd = 0;
		sketch_add(d, v, count);
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

static int cmp_u64(const void *a, const void *b);

/* Cell c's flags added to the counts, and its running share to the
 * smallest seen. */
static void count_flags(const struct pmc__region *r, size_t c, size_t *not_counted,
			size_t *multiplexed, size_t *other_threads, double *running_share)
{
	if (r->flags[c] & PMC_DELTA_NOT_COUNTED)
		(*not_counted)++;
	else if (r->flags[c] & PMC_DELTA_MULTIPLEXED)
		(*multiplexed)++;
	if (r->flags[c] & PMC_DELTA_OTHER_THREADS)
		(*other_threads)++;
	if (r->enabled_ns[c] > 0 && (double)r->running_ns[c] / (double)r->enabled_ns[c] < *running_share)
		*running_share = (double)r->running_ns[c] / (double)r->enabled_ns[c];
}

/* Column ev of the window's rows, sorted, into v (room for r->n). */
static void sorted_column(const struct pmc__region *r, size_t ev, uint64_t *v)
{
	for (size_t k = 0; k < r->n; k++)
		v[k] = r->value[k * r->nev + ev];
	qsort(v, r->n, sizeof(*v), cmp_u64);
}

static void summary_free(struct pmc__summary *m)
{
	if (!m)
		return;
	for (size_t j = 0; m->ev && j < m->nev; j++) {
		free(m->ev[j].val);
		free(m->ev[j].cnt);
		free(m->ev[j].bucket);
	}
	for (size_t q = 0; q < m->nratio; q++)
		free(m->ratio[q].bucket);
	free(m->ev);
	free(m->kept);
	free(m->last);
	free(m->last_flags);
	free(m);
}

/* The region's summary, made empty on first use; NULL out of memory. */
static struct pmc__summary *summary_of(struct pmc__region *r)
{
	struct pmc__summary *m = r->summary;

	if (m)
		return m;
	m = calloc(1, sizeof(*m));
	if (!m || !(m->ev = calloc(r->nev ? r->nev : 1, sizeof(*m->ev))) ||
	    !(m->kept = calloc((size_t)PMC__KEPT_VALUES * (r->nev ? r->nev : 1), sizeof(*m->kept))) ||
	    !(m->last = calloc(r->nev ? r->nev : 1, sizeof(*m->last))) ||
	    !(m->last_flags = calloc(r->nev ? r->nev : 1, sizeof(*m->last_flags)))) {
		summary_free(m);
		return NULL;
	}
	m->nev = r->nev;
	for (size_t j = 0; j < r->nev; j++) {
		m->ev[j].min = UINT64_MAX;
		m->ev[j].running_share = 1.0;
	}
	r->summary = m;
	return m;
}

int pmc__region_want_ratio(struct pmc__region *r, size_t ev, size_t per)
{
	struct pmc__summary *m;
	struct pmc__ratio *x;

	if (ev >= r->nev || per >= r->nev)
		return -EINVAL;
	if (!(m = summary_of(r)))
		return -ENOMEM;
	for (size_t q = 0; q < m->nratio; q++)
		if (m->ratio[q].ev == ev && m->ratio[q].per == per)
			return 0;
	if (m->nratio == PMC__MAX_RATIOS)
		return -E2BIG;
	x = &m->ratio[m->nratio];
	memset(x, 0, sizeof(*x));
	x->bucket = calloc(2 * sketch_buckets(), sizeof(*x->bucket));
	if (!x->bucket)
		return -ENOMEM;
	x->ev = ev;
	x->per = per;
	x->missed = m->folded;
	m->nratio++;
	return 0;
}

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
		size_t nb = 2 * sketch_buckets(), total = x->n + nw, lo = (total - 1) / 2, hi = total / 2;
		uint64_t *b = calloc(nb, sizeof(*b));
		size_t seen, zeros = x->zeros;
		double vlo = 0, vhi = 0;

		if (b) {
			memcpy(b, x->bucket, nb * sizeof(*b));
			for (size_t k = 0; k < nw; k++) {
				if (w[k] == 0)
					zeros++;
				else
					b[ratio_index(w[k])]++;
			}
			seen = zeros;
			for (size_t i = 0; i < nb && seen <= hi; i++) {
				if (lo >= seen && lo < seen + b[i])
					vlo = ratio_value(i);
				if (hi >= seen && hi < seen + b[i])
					vhi = ratio_value(i);
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

/* Fold the window's rows (all settled) into the summary; the window is
 * then empty, its flags zeroed as raw rows expect them. */
static int fold_window(struct pmc__region *r)
{
	struct pmc__summary *m = r->summary;
	uint64_t *col = malloc((r->n ? r->n : 1) * sizeof(*col));

	if (!col)
		return -ENOMEM;
	if (!m && !(m = summary_of(r))) {
		free(col);
		return -ENOMEM;
	}
	for (size_t q = 0; q < m->nratio; q++) {
		struct pmc__ratio *x = &m->ratio[q];

		for (size_t k = 0; k < r->n; k++) {
			uint64_t a = r->value[k * r->nev + x->ev], b = r->value[k * r->nev + x->per];
			double v;

			if (b == 0) {
				x->div0++;
				continue;
			}
			v = (double)a / (double)b;
			x->min = x->n == 0 || v < x->min ? v : x->min;
			x->max = x->n == 0 || v > x->max ? v : x->max;
			x->n++;
			if (v == 0)
				x->zeros++;
			else
				x->bucket[ratio_index(v)]++;
		}
	}
	for (size_t k = 0; k < r->n && m->nkept < PMC__KEPT_VALUES; k++, m->nkept++)
		memcpy(m->kept + m->nkept * r->nev, r->value + k * r->nev, r->nev * sizeof(*m->kept));
	for (size_t j = 0; r->n && j < r->nev; j++) {
		struct pmc__dist *d = &m->ev[j];

		for (size_t k = 0; k < r->n; k++)
			count_flags(r, k * r->nev + j, &d->not_counted, &d->multiplexed,
				    &d->other_threads, &d->running_share);
		sorted_column(r, j, col);
		d->min = col[0] < d->min ? col[0] : d->min;
		d->max = col[r->n - 1] > d->max ? col[r->n - 1] : d->max;
		for (size_t k = 0; k < r->n;) {
			size_t e = k;

			while (e < r->n && col[e] == col[k])
				e++;
			d->sum += (unsigned __int128)col[k] * (e - k);
			if (dist_add(d, col[k], e - k)) {
				free(col);
				return -ENOMEM;
			}
			k = e;
		}
		d->n += r->n;
		m->last[j] = r->value[(r->n - 1) * r->nev + j];
		m->last_flags[j] = r->flags[(r->n - 1) * r->nev + j];
	}
	free(col);
	m->folded += r->n;
	r->n = r->settled = 0;
	memset(r->flags, 0, r->cap * r->nev * sizeof(*r->flags));
	return 0;
}

size_t pmc__region_folded(const struct pmc__region *r)
{
	return r->summary ? r->summary->folded : 0;
}

size_t pmc__region_kept(const struct pmc__region *r, const uint64_t **rows)
{
	if (r->summary && r->summary->folded) {
		*rows = r->summary->kept;
		return r->summary->nkept;
	}
	*rows = r->value;
	return r->n < PMC__KEPT_VALUES ? r->n : PMC__KEPT_VALUES;
}

const uint64_t *pmc__region_last(const struct pmc__region *r, const unsigned **flags)
{
	if (r->n) {
		*flags = r->flags + (r->n - 1) * r->nev;
		return r->value + (r->n - 1) * r->nev;
	}
	if (r->summary && r->summary->folded) {
		*flags = r->summary->last_flags;
		return r->summary->last;
	}
	return NULL;
}

int pmc__region_append(struct pmc__region *r, const struct pmc_measurement *m)
{
	size_t i;

	if (r->n == r->cap && r->cap >= PMC__WINDOW_ROWS) {
		if (fold_window(r))
			return -ENOMEM;
	} else if (r->n == r->cap && pmc__region_reserve(r, r->cap ? r->cap * 2 : 16)) {
		return -ENOMEM;
	}
	for (i = 0; i < r->nev; i++) {
		size_t k = r->n * r->nev + i;

		r->value[k] = i < m->n ? m->d[i].value : 0;
		r->flags[k] = i < m->n ? m->d[i].flags : PMC_DELTA_NOT_COUNTED;
		r->enabled_ns[k] = i < m->n ? m->d[i].enabled_ns : 0;
		r->running_ns[k] = i < m->n ? m->d[i].running_ns : 0;
	}
	r->n++;
	r->settled = r->n; /* final as stored (raw rows are settled first) */
	return 0;
}

void pmc__region_release(struct pmc__region *r)
{
	free(r->value);
	free(r->flags);
	free(r->enabled_ns);
	free(r->running_ns);
	free(r->stats);
	summary_free(r->summary);
	if (r->attr) {
		for (size_t i = 0; i < r->attr->n; i++)
			unlink(r->attr->dump[i]);
		free(r->attr);
	}
	memset(r, 0, sizeof(*r));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
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
	size_t nb = sketch_buckets(), seen;
	struct pmc__dist t = { .bucket = calloc(nb, sizeof(uint64_t)), .zeros = d->zeros };

	if (!t.bucket)
		return -ENOMEM;
	memcpy(t.bucket, d->bucket, nb * sizeof(*t.bucket));
	for (size_t k = 0; k < nw; k++)
		sketch_add(&t, w[k], 1);
	*vlo = *vhi = 0;
	seen = t.zeros;
	for (size_t i = 0; i < nb && seen <= hi; i++) {
		if (lo >= seen && lo < seen + t.bucket[i])
			*vlo = sketch_value(i);
		if (hi >= seen && hi < seen + t.bucket[i])
			*vhi = sketch_value(i);
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
		count_flags(r, k, &s->not_counted, &s->multiplexed, &s->other_threads,
			    &s->running_share);
	}
	s->mean = (double)((long double)sum / (long double)s->n);
	if (!v) {
		/* Out of memory for the sort: the mean stands in. */
		s->median = s->mean;
		goto out;
	}
	qsort(v, r->n, sizeof(*v), cmp_u64);
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

int pmc__exit_status(const size_t counts[PMC_ERROR + 1])
{
	size_t total = 0;
	int v;

	for (v = 0; v <= PMC_ERROR; v++)
		total += counts[v];
	if (counts[PMC_ERROR])
		return PMC_EXIT_ERROR;
	if (counts[PMC_FAIL])
		return PMC_EXIT_FAIL;
	if (counts[PMC_INCONCLUSIVE])
		return PMC_EXIT_INCONCLUSIVE;
	if (total > 0 && counts[PMC_SKIP] == total)
		return PMC_EXIT_SKIP;
	return PMC_EXIT_PASS;
}
