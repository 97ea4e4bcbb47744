/* SPDX-License-Identifier: MIT */
/*
 * Pure logic of the harness: sample statistics, judging expectations, the
 * case verdict and the run's exit status.  No I/O, no kernel: unit-tested
 * with synthetic samples (multiplexed, never counted, empty).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* Ratio samples event/per, with the chosen statistic. */
static double ratio_pick(const struct pmc__region *r, int ev, int per, enum pmc_stat stat,
			 bool *div0)
{
	double best = 0, *v = malloc(r->n * sizeof(*v));
	size_t i, n = 0;

	*div0 = false;
	if (!v)
		return NAN;
	for (i = 0; i < r->n; i++) {
		uint64_t den = r->value[i * r->nev + (size_t)per];

		if (den == 0) {
			*div0 = true;
			continue;
		}
		v[n++] = (double)r->value[i * r->nev + (size_t)ev] / (double)den;
	}
	if (n > 0) {
		/* Small n: insertion sort keeps this free of another comparator. */
		for (i = 1; i < n; i++) {
			double x = v[i];
			size_t j = i;

			while (j > 0 && v[j - 1] > x) {
				v[j] = v[j - 1];
				j--;
			}
			v[j] = x;
		}
		best = stat == PMC_STAT_MAX ? v[n - 1]
		       : stat == PMC_STAT_MEDIAN ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2)
						 : v[0];
	} else {
		best = NAN;
	}
	free(v);
	return best;
}

void pmc__fmt_num(char *buf, size_t size, double x)
{
	if (isnan(x))
		snprintf(buf, size, "-");
	else if (x == floor(x) && fabs(x) < 1e18)
		snprintf(buf, size, "%.0f", x);
	else if (fabs(x) >= 1000 && fabs(x) < 1e18)
		snprintf(buf, size, "%.1f", x); /* counts stay readable, never 2.75966e+06 */
	else
		snprintf(buf, size, "%.6g", x);
}

void pmc__fmt_bound(char *buf, size_t size, double lo, double hi)
{
	char a[48], b[48];

	pmc__fmt_num(a, sizeof(a), lo);
	pmc__fmt_num(b, sizeof(b), hi);
	if (isnan(lo))
		snprintf(buf, size, "<= %s", b);
	else if (isnan(hi))
		snprintf(buf, size, ">= %s", a);
	else if (lo == hi)
		snprintf(buf, size, "= %s", a);
	else
		snprintf(buf, size, "%s..%s", a, b);
}

/* vsnprintf is not subject to -Wformat-truncation: messages are cut at the
 * buffer's size by design. */
static void set_msg(struct pmc__check *c, const char *fmt, ...) PMC__FMT(2, 3);
static void set_msg(struct pmc__check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

static const char *describe_column(const struct pmc__check *c)
{
	return c->e.event ? c->e.event : "?";
}

void pmc__judge(struct pmc__check *c, const struct pmc__region *r, int ev, int per,
		enum pmc_stat stat, const struct pmc_budget *budget)
{
	const struct pmc_expectation *e = &c->e;
	struct pmc__stats s, sp;
	bool ratio = e->kind == PMC_EXPECT_KIND_RATIO_LE || e->kind == PMC_EXPECT_KIND_RATIO_GE ||
		     e->kind == PMC_EXPECT_KIND_RATIO_RANGE;
	char bound[128], meas[48], what[300];
	double x, lo = NAN, hi = NAN;
	bool ok;

	c->stat = pmc__stat_name(stat);
	c->measured = NAN;
	c->bound_lo = c->bound_hi = NAN;
	snprintf(what, sizeof(what), "region \"%s\", %s%s%s", e->region, describe_column(c),
		 ratio ? " per " : "", ratio ? e->per : "");
	if (!r || r->n == 0) {
		c->status = PMC__CHECK_ERROR;
		set_msg(c, "%s: no samples (the region ran only in warm-up runs, or never)", what);
		return;
	}
	c->samples = r->n;
	pmc__stats_of(r, (size_t)ev, &s);
	if (ratio)
		pmc__stats_of(r, (size_t)per, &sp);
	/* A partial count cannot be judged: it is not the code's count. */
	if (s.not_counted || s.multiplexed || (ratio && (sp.not_counted || sp.multiplexed))) {
		size_t nc = s.not_counted + (ratio ? sp.not_counted : 0);
		size_t mx = s.multiplexed + (ratio ? sp.multiplexed : 0);

		c->status = PMC__CHECK_INCONCLUSIVE;
		set_msg(c,
			 "%s: cannot judge: %zu of %zu samples never counted, %zu multiplexed (counter ran %.0f%% of the time); reduce the events per case or free counters (e.g. the NMI watchdog)",
			 what, nc, r->n, mx, 100.0 * (ratio && sp.running_share < s.running_share ? sp.running_share : s.running_share));
		return;
	}
	if (ratio) {
		bool div0;

		x = ratio_pick(r, ev, per, stat, &div0);
		if (isnan(x)) {
			c->status = PMC__CHECK_ERROR;
			set_msg(c, "%s: the denominator %s is 0 in every sample", what, e->per);
			return;
		}
	} else {
		x = pmc__stat_pick(&s, stat);
	}
	switch (e->kind) {
	case PMC_EXPECT_KIND_LE:
		hi = (double)e->hi;
		break;
	case PMC_EXPECT_KIND_GE:
		lo = (double)e->lo;
		break;
	case PMC_EXPECT_KIND_RANGE:
	case PMC_EXPECT_KIND_EQ:
		lo = (double)e->lo;
		hi = (double)e->hi;
		break;
	case PMC_EXPECT_KIND_RATIO_LE:
		hi = e->rhi;
		break;
	case PMC_EXPECT_KIND_RATIO_GE:
		lo = e->rlo;
		break;
	case PMC_EXPECT_KIND_RATIO_RANGE:
		lo = e->rlo;
		hi = e->rhi;
		break;
	case PMC_EXPECT_KIND_FIGURE:
		/* Judged by pmc_test_expect_figure when it was made. */
		return;
	case PMC_EXPECT_KIND_BUDGET:
		if (!budget) {
			c->status = PMC__CHECK_UNBUDGETED;
			c->measured = x;
			pmc__fmt_num(meas, sizeof(meas), x);
			set_msg(c,
				 "%s: unbudgeted: no budget recorded for this machine (measured %s); record one with --calibrate",
				 what, meas);
			return;
		}
		snprintf(c->budget_source, sizeof(c->budget_source), "%s", budget->source);
		if (budget->per_iteration && r->iterations > 1)
			x /= (double)r->iterations;
		if (budget->kind != PMC_BOUND_LE)
			lo = budget->lo;
		if (budget->kind != PMC_BOUND_GE)
			hi = budget->hi;
		break;
	}
	c->measured = x;
	c->bound_lo = lo;
	c->bound_hi = hi;
	ok = (isnan(lo) || x >= lo) && (isnan(hi) || x <= hi);
	/* Other threads ran uncounted: the true figure is at least x.  Only a
	 * lower bound that holds stays true; anything else is unknown. */
	if (s.other_threads || (ratio && sp.other_threads)) {
		size_t ot = s.other_threads > (ratio ? sp.other_threads : 0) ? s.other_threads
									 : sp.other_threads;

		if (!(ok && !ratio && isnan(hi))) {
			pmc__fmt_num(meas, sizeof(meas), x);
			c->status = PMC__CHECK_INCONCLUSIVE;
			set_msg(c,
				"%s: cannot judge: other threads of the process ran during %zu of %zu samples and the case counts its own thread only (measured %s, a partial count); set .inherit = 1 to count them",
				what, ot, r->n, meas);
			return;
		}
	}
	pmc__fmt_bound(bound, sizeof(bound), lo, hi);
	pmc__fmt_num(meas, sizeof(meas), x);
	if (ok) {
		c->status = PMC__CHECK_PASS;
		set_msg(c, "%s: %s (%s of %zu) within %s", what, meas,
			 c->stat, r->n, bound);
		return;
	}
	{
		double edge = !isnan(hi) && x > hi ? hi : lo;
		double delta = x - edge;
		char d[48];

		pmc__fmt_num(d, sizeof(d), fabs(delta));
		c->status = PMC__CHECK_FAIL;
		if (edge != 0)
			set_msg(c,
				 "%s: measured %s (%s of %zu samples), expected %s: %s by %s (%+.2f%% of the %s)%s%s",
				 what, meas, c->stat, r->n, bound, delta > 0 ? "over" : "under", d,
				 100.0 * delta / edge, budget ? "budget" : "bound",
				 c->budget_source[0] ? "; budget from " : "", c->budget_source);
		else
			set_msg(c,
				 "%s: measured %s (%s of %zu samples), expected %s: over by %s%s%s",
				 what, meas, c->stat, r->n, bound, d,
				 c->budget_source[0] ? "; budget from " : "", c->budget_source);
	}
}

enum pmc_verdict pmc__verdict_from_checks(const struct pmc__check *c, size_t n, bool strict,
					  char *reason, size_t size)
{
	enum pmc__check_status worst = PMC__CHECK_PASS;
	const struct pmc__check *first = NULL;
	size_t i, count = 0;

	for (i = 0; i < n; i++) {
		enum pmc__check_status st = c[i].status;

		if (st == PMC__CHECK_UNBUDGETED && (strict || c[i].gate))
			st = PMC__CHECK_FAIL;
		if (st > worst) {
			worst = st;
			first = &c[i];
			count = 0;
		}
		if (st == worst)
			count++;
	}
	if (reason && size)
		reason[0] = '\0';
	if (first && worst != PMC__CHECK_UNBUDGETED && reason)
		snprintf(reason, size, "%s%s", first->message,
			 count > 1 ? " (and more, see checks)" : "");
	switch (worst) {
	case PMC__CHECK_ERROR:
		return PMC_ERROR;
	case PMC__CHECK_FAIL:
		if (first && first->status == PMC__CHECK_UNBUDGETED && reason)
			snprintf(reason, size, "%s%s", first->gate ? "" : "--strict: ", first->message);
		return PMC_FAIL;
	case PMC__CHECK_INCONCLUSIVE:
		return PMC_INCONCLUSIVE;
	default:
		return PMC_PASS;
	}
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
