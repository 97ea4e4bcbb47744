/* SPDX-License-Identifier: MIT */
/*
 * Change points of one series (changepoint.c): pure logic, no store.
 *
 * cp_exact: a piecewise-constant series changes wherever a value differs
 * from the one before it.
 *
 * cp_edivisive: E-divisive (Matteson and James 2014) with alpha = 1 over
 * the whole of each segment, found by bisection; each new change point must
 * pass a permutation test (values shuffled within the current segments;
 * p = (exceeding + 1) / (permutations run + 1), stopped early once p cannot
 * get below the significance).  A scan of a segment of m values costs
 * O(m log m): the sums of distances are kept in Fenwick trees over ranks.
 */
#ifndef PMCHECK_TOOLS_CHANGEPOINT_H
#define PMCHECK_TOOLS_CHANGEPOINT_H

#include <stddef.h>
#include <stdint.h>

struct cp_options {
	double significance;   /* a change point's p-value must be at most this */
	unsigned permutations; /* at most this many permutations per test */
	unsigned min_size;     /* the fewest values on each side of a change (>= 2) */
	uint64_t seed;         /* the permutations' generator: same seed, same answer */
};

#define CP_DEFAULT_SIGNIFICANCE 0.005
#define CP_DEFAULT_PERMUTATIONS 199
#define CP_DEFAULT_MIN_SIZE 5

struct cp_change {
	size_t index;   /* the first value of the new level */
	double p_value; /* 0 for an exact series */
};

/*
 * Whether x[0..n), one value per commit whose runs all agreed, is exact: a
 * count that varies between runs of unchanged code is noise, whatever its
 * counter kind, and shows as a level that does not last.  So x is exact
 * when every level between its first and its newest (a run of equal
 * values) lasts at least min_levels commits: a blip (5 5 6 5 5) or a count
 * that takes one of two values at random makes it noisy, a step that holds
 * does not.  The first and the newest level may be shorter (the store may
 * start just before a step; the newest commit may be a new step).
 */
int cp_series_exact(const double *x, size_t n, size_t min_level);

/* Every index i > 0 with x[i] != x[i-1], up to max; returns how many there
 * are (which may exceed max). */
size_t cp_exact(const double *x, size_t n, struct cp_change *out, size_t max);

/* The significant change points of x, in order of index, up to max;
 * returns how many were stored, or (size_t)-1 when out of memory. */
size_t cp_edivisive(const double *x, size_t n, const struct cp_options *o, struct cp_change *out,
		    size_t max);

/* Keep the changes of c[0..k) (in order of index) where the medians of the
 * levels on either side differ by at least min_change of the one before
 * (relative) and by at least the series' noise (a robust standard
 * deviation of the values around their levels: a smaller shift cannot be
 * placed at a commit); the others are dropped, weakest first, and the
 * levels around each merged again.  Returns how many are left, at the
 * front of c. */
size_t cp_min_change(const double *x, size_t n, struct cp_change *c, size_t k, double min_change);

/* The median of x[0..n) (n > 0); x is not changed. */
double cp_median(const double *x, size_t n);

#endif
