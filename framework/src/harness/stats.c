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
	size_t per = r->nev ? r->nev : 1, cells = rows * per, old = r->cap * per;

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

int pmc__region_append(struct pmc__region *r, const struct pmc_measurement *m)
{
	size_t i;

	if (r->n == r->cap && pmc__region_reserve(r, r->cap ? r->cap * 2 : 16))
		return -ENOMEM;
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

void pmc__stats_of(const struct pmc__region *r, size_t ev, struct pmc__stats *s)
{
	uint64_t small[64];
	uint64_t *v = r->n <= 64 ? small : malloc(r->n * sizeof(*v));
	double sum = 0;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->running_share = 1.0;
	if (r->n == 0 || ev >= r->nev)
		goto out;
	if (!v) {
		/* Out of memory for the sort: report min/max/mean only. */
		v = NULL;
	}
	s->n = r->n;
	s->min = UINT64_MAX;
	for (i = 0; i < r->n; i++) {
		size_t k = i * r->nev + ev;
		uint64_t x = r->value[k];

		if (v)
			v[i] = x;
		sum += (double)x;
		if (x < s->min)
			s->min = x;
		if (x > s->max)
			s->max = x;
		if (r->flags[k] & PMC_DELTA_NOT_COUNTED)
			s->not_counted++;
		else if (r->flags[k] & PMC_DELTA_MULTIPLEXED)
			s->multiplexed++;
		if (r->flags[k] & PMC_DELTA_OTHER_THREADS)
			s->other_threads++;
		if (r->enabled_ns[k] > 0) {
			double share = (double)r->running_ns[k] / (double)r->enabled_ns[k];

			if (share < s->running_share)
				s->running_share = share;
		}
	}
	s->mean = sum / (double)r->n;
	if (v) {
		qsort(v, r->n, sizeof(*v), cmp_u64);
		s->median = r->n % 2 ? (double)v[r->n / 2]
				     : ((double)v[r->n / 2 - 1] + (double)v[r->n / 2]) / 2.0;
	} else {
		s->median = s->mean;
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
	if (r->stats && r->stats_rows == r->n && r->stats_settled == r->settled)
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
