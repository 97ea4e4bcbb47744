/* SPDX-License-Identifier: MIT */
/*
 * E-divisive change points (changepoint.h), over seeded intervals.
 *
 * For a segment y[0..m) split after n1 values (n2 = m - n1), with B the sum
 * of |y_i - y_j| over pairs across the split and WL, WR the sums over pairs
 * within each side, the divergence is
 *
 *   E = 2B/(n1 n2) - 2WL/(n1(n1-1)) - 2WR/(n2(n2-1)),   Q = n1 n2 / m * E,
 *
 * and the split is the n1 that maximises Q.  Moving y[t] from the right
 * side to the left changes WL by d_left (its distances to the left side),
 * WR by -d_right (to the rest of the right side) and B by d_right - d_left;
 * both distances come from Fenwick trees of counts and sums over the
 * values' ranks, so a whole scan is O(m log m).
 *
 * The series is centred on its median and scaled by its spread before any
 * sum, so the sums stay small and exact enough in doubles; Q scales with
 * the data, so neither the split nor the test's comparisons change.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "changepoint.h"

size_t cp_exact(const double *x, size_t n, struct cp_change *out, size_t max)
{
	size_t k = 0;

	for (size_t i = 1; i < n; i++)
		if (x[i] != x[i - 1]) {
			if (k < max)
				out[k] = (struct cp_change){ .index = i, .p_value = 0 };
			k++;
		}
	return k;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double cp_median(const double *x, size_t n)
{
	double *s = malloc(n * sizeof(*s)), m;

	if (!s)
		return x[n / 2];
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

/*
 * One segment's values in some order (as they stand, or shuffled), each
 * with its rank among them (ties broken by position, once), and where each
 * rank stands: ranks travel with their values through a shuffle, so the
 * values are sorted once per segment, never per interval.
 */
struct arrangement {
	size_t m;
	double *val;  /* val[p] */
	size_t *rank; /* rank[p] */
	size_t *pos;  /* pos[rank[p]] == p */
};

/* The scratch of the scans (sized for the whole series). */
struct scratch {
	size_t *local;  /* an interval's ranks among its own values */
	double *below;  /* below[r]: the sum of the interval's values of local rank < r */
	double *cnt_t;  /* Fenwick trees of the left side: counts and sums by local rank */
	double *sum_t;
	size_t *lists;  /* each interval's positions in rank order */
	size_t *fill;
	size_t *start;
};

static void fen_add(double *t, size_t m, size_t r, double v)
{
	for (size_t i = r + 1; i <= m; i += i & (~i + 1))
		t[i] += v;
}

/* The sum over ranks < r. */
static double fen_below(const double *t, size_t r)
{
	double s = 0;

	for (size_t i = r; i > 0; i -= i & (~i + 1))
		s += t[i];
	return s;
}

/* The best split of val[0..m) whose local ranks and prefix sums are in the
 * scratch (n1 in [min, m-min]); its Q, or -INF when too short. */
static double best_split(const double *val, size_t m, unsigned min, struct scratch *s, size_t *at)
{
	double total = s->below[m], wl = 0, wr = 0, b = 0, best = -INFINITY;
	double left_n = 0, left_sum = 0;

	*at = 0;
	if (m < 2 * (size_t)min)
		return -INFINITY;
	/* All pairs' distances, from the sorted order: the value of rank r is
	 * larger than r values and smaller than m-1-r. */
	for (size_t r = 0; r < m; r++) {
		double v = s->below[r + 1] - s->below[r];

		wr += v * (2.0 * (double)r - (double)m + 1);
	}
	memset(s->cnt_t, 0, (m + 1) * sizeof(double));
	memset(s->sum_t, 0, (m + 1) * sizeof(double));
	for (size_t t = 0; t + min < m; t++) {
		double v = val[t];
		size_t r = s->local[t];
		double lc = fen_below(s->cnt_t, r), ls = fen_below(s->sum_t, r);
		double d_left = v * lc - ls + (left_sum - ls) - v * (left_n - lc);
		/* The right side without v: everything not on the left, less v. */
		double rc_lo = (double)r - lc, rs_lo = s->below[r] - ls;
		double rc_hi = (double)(m - 1 - r) - (left_n - lc);
		double rs_hi = (total - s->below[r + 1]) - (left_sum - ls);
		double d_right = v * rc_lo - rs_lo + rs_hi - v * rc_hi;
		double n1, n2, q;

		wl += d_left;
		wr -= d_right;
		b += d_right - d_left;
		fen_add(s->cnt_t, m, r, 1);
		fen_add(s->sum_t, m, r, v);
		left_n += 1;
		left_sum += v;
		n1 = (double)(t + 1);
		n2 = (double)m - n1;
		if (t + 1 < min)
			continue;
		q = n1 * n2 / (double)m *
		    (2 * b / (n1 * n2) - 2 * wl / (n1 * (n1 - 1)) - 2 * wr / (n2 * (n2 - 1)));
		if (q > best) {
			best = q;
			*at = t + 1;
		}
	}
	return best;
}

struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->v != y->v)
		return (x->v > y->v) - (x->v < y->v);
	return (x->i > y->i) - (x->i < y->i);
}

/* y[0..m) as it stands: sorted once for the ranks. */
static void arrange(struct arrangement *a, const double *y, size_t m, struct ranked *tmp)
{
	a->m = m;
	for (size_t i = 0; i < m; i++) {
		tmp[i] = (struct ranked){ .v = y[i], .i = i };
		a->val[i] = y[i];
	}
	qsort(tmp, m, sizeof(*tmp), cmp_ranked);
	for (size_t r = 0; r < m; r++) {
		a->rank[tmp[r].i] = r;
		a->pos[r] = tmp[r].i;
	}
}

/* xorshift64*: the permutations, reproducible from the seed. */
static uint64_t next_random(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* A shuffle of the arrangement: values move with their ranks. */
static void shuffle(struct arrangement *a, uint64_t *rng)
{
	for (size_t i = a->m; i > 1; i--) {
		size_t j = (size_t)(next_random(rng) % i);
		double v = a->val[i - 1];
		size_t r = a->rank[i - 1];

		a->val[i - 1] = a->val[j];
		a->rank[i - 1] = a->rank[j];
		a->val[j] = v;
		a->rank[j] = r;
	}
	for (size_t p = 0; p < a->m; p++)
		a->pos[a->rank[p]] = p;
}

/*
 * The best split of an arrangement over seeded intervals: the whole, then
 * halves, quarters ... (down to 4 * min values) at offsets of half their
 * length.  A level that rises and falls back (a change reverted a few
 * commits later) splits a long segment weakly as a whole, and strongly
 * inside an interval around it (seeded binary segmentation, Kovacs et al.
 * 2020).  Q scales alike on every interval under no change, so the largest
 * is taken.  Each level's intervals get their values in rank order from one
 * pass over the segment's ranks.
 */
static double seeded_best(const struct arrangement *a, unsigned min, struct scratch *s, size_t *at)
{
	size_t m = a->m;
	double best = -INFINITY;

	*at = 0;
	for (size_t len = m; len >= 2 * (size_t)min; len /= 2) {
		size_t step = len / 2 ? len / 2 : 1, n = 0;

		if (len < m && len < 4 * (size_t)min)
			break;
		for (size_t from = 0;; from += step) {
			s->start[n] = from + len > m ? m - len : from;
			s->fill[n++] = 0;
			if (from + len >= m)
				break;
		}
		for (size_t r = 0; r < m; r++) {
			/* The intervals that hold p: those starting within one
			 * length before it, and the last (aligned to the end). */
			size_t p = a->pos[r], j1 = p / step;
			size_t cand[5] = { j1 >= 2 ? j1 - 2 : 0, j1 >= 1 ? j1 - 1 : 0, j1, n >= 2 ? n - 2 : 0, n - 1 };

			for (int c = 0; c < 5; c++) {
				size_t j = cand[c];
				bool seen = false;

				for (int e = 0; e < c; e++)
					seen = seen || cand[e] == j;
				if (seen || j >= n || p < s->start[j] || p >= s->start[j] + len)
					continue;
				s->lists[j * len + s->fill[j]++] = p;
			}
		}
		for (size_t j = 0; j < n; j++) {
			size_t split, from = s->start[j];
			double q;

			s->below[0] = 0;
			for (size_t i = 0; i < len; i++) {
				size_t p = s->lists[j * len + i];

				s->local[p - from] = i;
				s->below[i + 1] = s->below[i] + a->val[p];
			}
			q = best_split(a->val + from, len, min, s, &split);
			if (q > best) {
				best = q;
				*at = from + split;
			}
		}
		if (len == m && m < 4 * (size_t)min)
			break;
	}
	return best;
}

/* The sum of |y - median| over y[a..b). */
static double l1_cost(const double *y, size_t a, size_t b)
{
	double med = cp_median(y + a, b - a), c = 0;

	for (size_t i = a; i < b; i++)
		c += fabs(y[i] - med);
	return c;
}

/*
 * The energy statistic finds that a segment changed, but places a change
 * near a short side a commit or two off (measured: 2 of 600 steps of 4
 * sigma).  Each change is placed again between its neighbours, within
 * CP_REFINE values of where it was found, where a two-level fit around
 * medians leaves the least absolute residual (robust to outliers as a
 * least-squares fit is not).
 */
#define CP_REFINE 4
static void refine(const double *y, size_t n, struct cp_change *c, size_t k, unsigned min)
{
	for (size_t j = 0; j < k; j++) {
		size_t lo = j ? c[j - 1].index : 0, hi = j + 1 < k ? c[j + 1].index : n;
		size_t at = c[j].index, best_at = at;
		double best = l1_cost(y, lo, at) + l1_cost(y, at, hi);

		for (size_t t = at > CP_REFINE ? at - CP_REFINE : 0; t <= at + CP_REFINE; t++) {
			double cost;

			if (t < lo + min || t + min > hi || t == at)
				continue;
			cost = l1_cost(y, lo, t) + l1_cost(y, t, hi);
			if (cost < best) {
				best = cost;
				best_at = t;
			}
		}
		c[j].index = best_at;
	}
}

static int cmp_change(const void *a, const void *b)
{
	const struct cp_change *x = a, *y = b;

	return (x->index > y->index) - (x->index < y->index);
}

size_t cp_edivisive(const double *x, size_t n, const struct cp_options *o, struct cp_change *out,
		    size_t max)
{
	unsigned min = o->min_size < 2 ? 2 : o->min_size;
	size_t *cuts = calloc(n + 2, sizeof(*cuts)), ncuts = 0, found = 0;
	double *y = malloc((n + 1) * sizeof(*y)), *abs_dev = malloc((n + 1) * sizeof(*abs_dev));
	struct ranked *tmp = malloc((n + 1) * sizeof(*tmp));
	size_t *base_rank = malloc((n + 1) * sizeof(*base_rank));
	struct arrangement seg = {
		.val = malloc((n + 1) * sizeof(double)),
		.rank = malloc((n + 1) * sizeof(size_t)),
		.pos = malloc((n + 1) * sizeof(size_t)),
	};
	struct scratch s = {
		.local = malloc((n + 1) * sizeof(size_t)),
		.below = malloc((n + 2) * sizeof(double)),
		.cnt_t = malloc((n + 2) * sizeof(double)),
		.sum_t = malloc((n + 2) * sizeof(double)),
		.lists = malloc((6 * n + 16) * sizeof(size_t)),
		.fill = malloc((n + 4) * sizeof(size_t)),
		.start = malloc((n + 4) * sizeof(size_t)),
	};
	uint64_t rng = o->seed ? o->seed : 0x9E3779B97F4A7C15ull;
	double centre, spread;

	if (!cuts || !y || !abs_dev || !tmp || !base_rank || !seg.val || !seg.rank || !seg.pos || !s.local ||
	    !s.below || !s.cnt_t || !s.sum_t || !s.lists || !s.fill || !s.start) {
		found = (size_t)-1;
		goto out;
	}
	if (n < 2 * (size_t)min)
		goto out;
	/* Centre and scale (see the top of the file). */
	centre = cp_median(x, n);
	for (size_t i = 0; i < n; i++)
		abs_dev[i] = fabs(x[i] - centre);
	spread = cp_median(abs_dev, n);
	if (!(spread > 0)) {
		spread = 0;
		for (size_t i = 0; i < n; i++)
			spread = fmax(spread, abs_dev[i]);
	}
	if (!(spread > 0))
		goto out; /* constant: nothing moves */
	for (size_t i = 0; i < n; i++)
		y[i] = (x[i] - centre) / spread;
	/* cuts: the segment bounds, 0 and n included, kept sorted. */
	cuts[0] = 0;
	cuts[1] = n;
	ncuts = 2;
	while (found < max) {
		size_t best_seg = 0, best_at = 0, exceeded = 0, runs = 0;
		double best_q = -INFINITY;
		/* The test stops once p cannot reach the significance. */
		double allowed = o->significance * (o->permutations + 1.0);

		for (size_t k = 0; k + 1 < ncuts; k++) {
			size_t at;
			double q;

			arrange(&seg, y + cuts[k], cuts[k + 1] - cuts[k], tmp);
			q = seeded_best(&seg, min, &s, &at);
			if (q > best_q) {
				best_q = q;
				best_seg = k;
				best_at = cuts[k] + at;
			}
		}
		if (!isfinite(best_q) || best_q <= 0)
			break;
		/* Each segment's ranks once; a permutation shuffles a copy. */
		for (size_t k = 0; k + 1 < ncuts; k++) {
			arrange(&seg, y + cuts[k], cuts[k + 1] - cuts[k], tmp);
			memcpy(base_rank + cuts[k], seg.rank, seg.m * sizeof(*base_rank));
		}
		for (unsigned r = 0; r < o->permutations && (double)exceeded + 1 <= allowed; r++) {
			double perm_best = -INFINITY;

			for (size_t k = 0; k + 1 < ncuts; k++) {
				size_t at, m = cuts[k + 1] - cuts[k];

				if (m < 2 * (size_t)min)
					continue;
				seg.m = m;
				memcpy(seg.val, y + cuts[k], m * sizeof(*seg.val));
				memcpy(seg.rank, base_rank + cuts[k], m * sizeof(*seg.rank));
				shuffle(&seg, &rng);
				perm_best = fmax(perm_best, seeded_best(&seg, min, &s, &at));
			}
			exceeded += perm_best >= best_q;
			runs++;
		}
		{
			double p = (double)(exceeded + 1) / (double)(runs + 1);

			if (runs == 0 || p > o->significance)
				break;
			out[found++] = (struct cp_change){ .index = best_at, .p_value = p };
		}
		memmove(cuts + best_seg + 2, cuts + best_seg + 1,
			(ncuts - best_seg - 1) * sizeof(*cuts));
		cuts[best_seg + 1] = best_at;
		ncuts++;
	}
	if (found && found != (size_t)-1) {
		qsort(out, found, sizeof(*out), cmp_change);
		refine(y, n, out, found, min);
	}
out:
	free(cuts);
	free(y);
	free(abs_dev);
	free(tmp);
	free(base_rank);
	free(seg.val);
	free(seg.rank);
	free(seg.pos);
	free(s.local);
	free(s.below);
	free(s.cnt_t);
	free(s.sum_t);
	free(s.lists);
	free(s.fill);
	free(s.start);
	return found;
}

/* The series' noise: 1.4826 times the median absolute residual from the
 * median of each value's level (a standard deviation, for Gaussian noise,
 * that outliers do not inflate). */
static double noise_sigma(const double *x, size_t n, const struct cp_change *c, size_t k)
{
	double *res = malloc(n * sizeof(*res)), sigma;

	if (!res)
		return 0;
	for (size_t j = 0; j <= k; j++) {
		size_t lo = j ? c[j - 1].index : 0, hi = j < k ? c[j].index : n;
		double med = cp_median(x + lo, hi - lo);

		for (size_t i = lo; i < hi; i++)
			res[i] = fabs(x[i] - med);
	}
	sigma = 1.4826 * cp_median(res, n);
	free(res);
	return sigma;
}

static double mean_of(const double *x, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += x[i];
	return n ? sum / (double)n : 0;
}

/* The standard deviation of x around the means of its levels. */
static double spread_sigma(const double *x, size_t n, const struct cp_change *c, size_t k)
{
	double sum = 0;

	for (size_t j = 0; j <= k; j++) {
		size_t lo = j ? c[j - 1].index : 0, hi = j < k ? c[j].index : n;
		double m = mean_of(x + lo, hi - lo);

		for (size_t i = lo; i < hi; i++)
			sum += (x[i] - m) * (x[i] - m);
	}
	return n ? sqrt(sum / (double)n) : 0;
}

size_t cp_min_change(const double *x, size_t n, struct cp_change *c, size_t k, double min_change)
{
	/* Drop the weakest change under the thresholds, then look again: its
	 * neighbours' levels take in the merged segment. */
	for (;;) {
		size_t weakest = k;
		double weakest_step = INFINITY, sigma = k ? noise_sigma(x, n, c, k) : 0;
		/* Medians of a count that takes a few values (5 or 6 at random)
		 * jump by a whole count when the balance between them tips by
		 * chance; the means move by the share that tipped.  So the means
		 * must move by the spread of the values too. */
		double spread = k ? spread_sigma(x, n, c, k) : 0;

		for (size_t j = 0; j < k; j++) {
			size_t lo = j ? c[j - 1].index : 0, at = c[j].index, hi = j + 1 < k ? c[j + 1].index : n;
			double before = cp_median(x + lo, at - lo), after = cp_median(x + at, hi - at);
			double step = fabs(after - before);
			double mean_step = fabs(mean_of(x + at, hi - at) - mean_of(x + lo, at - lo));

			if ((step < min_change * fabs(before) || step < sigma || step == 0 || mean_step < spread) &&
			    step < weakest_step) {
				weakest = j;
				weakest_step = step;
			}
		}
		if (weakest == k)
			return k;
		memmove(c + weakest, c + weakest + 1, (k - weakest - 1) * sizeof(*c));
		k--;
	}
}

int cp_series_exact(const double *x, size_t n, size_t min_level)
{
	size_t start = 0;
	bool first = true;

	for (size_t i = 1; i <= n; i++) {
		if (i < n && x[i] == x[i - 1])
			continue;
		/* The level x[start..i): a middle one must last. */
		if (!first && i < n && i - start < min_level)
			return 0;
		first = false;
		start = i;
	}
	return 1;
}
