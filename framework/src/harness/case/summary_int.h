/* SPDX-License-Identifier: MIT */
/*
 * A region's summary of folded rows, shared by the files that keep it
 * (samples.c), compute with it (stats.c) and its arithmetic (sketch.c).
 * The harness's private header; nothing here is installed.
 */
#ifndef PMCHECK_HARNESS_SUMMARY_INT_H
#define PMCHECK_HARNESS_SUMMARY_INT_H

#include <stddef.h>
#include <stdint.h>

#include "harness_int.h"

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

/* sketch.c: the log-bucket sketch (bucket i holds (gamma^(i-1), gamma^i],
 * its estimate within PMC__SKETCH_ALPHA of every value in it), the ratio
 * sketch (2 * pmc__sketch_buckets() buckets over 2^-64 .. 2^64), and the
 * exact-then-sketched distribution of one event. */
size_t pmc__sketch_buckets(void);
double pmc__sketch_value(size_t i);
void pmc__sketch_add(struct pmc__dist *d, uint64_t v, uint64_t count);
size_t pmc__ratio_index(double q);
double pmc__ratio_value(size_t i);
/* Add `count` samples of value v to the distribution: 0 or -ENOMEM. */
int pmc__dist_add(struct pmc__dist *d, uint64_t v, uint64_t count);
/* qsort's comparison of two uint64_t. */
int pmc__cmp_u64(const void *a, const void *b);

/* samples.c: cell c's flags added to the counts, and its running share to
 * the smallest seen. */
void pmc__count_flags(const struct pmc__region *r, size_t c, size_t *not_counted,
		      size_t *multiplexed, size_t *other_threads, double *running_share);

#endif
