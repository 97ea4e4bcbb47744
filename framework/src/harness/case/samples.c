/* SPDX-License-Identifier: MIT */
/*
 * A region's samples, pure: its rows reserved before the measured
 * repetitions, settled (the overhead taken off), appended; a full window
 * folded into the region's summary; the rows the results keep.  No I/O, no
 * kernel: unit-tested with synthetic samples.  Statistics are stats.c.
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

/* Cell c's flags added to the counts, and its running share to the
 * smallest seen. */
void pmc__count_flags(const struct pmc__region *r, size_t c, size_t *not_counted,
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
	qsort(v, r->n, sizeof(*v), pmc__cmp_u64);
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
	x->bucket = calloc(2 * pmc__sketch_buckets(), sizeof(*x->bucket));
	if (!x->bucket)
		return -ENOMEM;
	x->ev = ev;
	x->per = per;
	x->missed = m->folded;
	m->nratio++;
	return 0;
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
				x->bucket[pmc__ratio_index(v)]++;
		}
	}
	for (size_t k = 0; k < r->n && m->nkept < PMC__KEPT_VALUES; k++, m->nkept++)
		memcpy(m->kept + m->nkept * r->nev, r->value + k * r->nev, r->nev * sizeof(*m->kept));
	for (size_t j = 0; r->n && j < r->nev; j++) {
		struct pmc__dist *d = &m->ev[j];

		for (size_t k = 0; k < r->n; k++)
			pmc__count_flags(r, k * r->nev + j, &d->not_counted, &d->multiplexed,
				    &d->other_threads, &d->running_share);
		sorted_column(r, j, col);
		d->min = col[0] < d->min ? col[0] : d->min;
		d->max = col[r->n - 1] > d->max ? col[r->n - 1] : d->max;
		for (size_t k = 0; k < r->n;) {
			size_t e = k;

			while (e < r->n && col[e] == col[k])
				e++;
			d->sum += (unsigned __int128)col[k] * (e - k);
			if (pmc__dist_add(d, col[k], e - k)) {
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
