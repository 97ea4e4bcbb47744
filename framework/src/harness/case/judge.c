/* SPDX-License-Identifier: MIT */
/*
 * Judging, pure: where a verdict is decided.  Each expectation is judged
 * against its region's statistics (stats.c) and, for a budget, the budget a
 * resolver found; the case's verdict follows from its checks.  The budget
 * resolver and the unbudgeted message are the caller's (expect.c resolves
 * budgets through the hwdb); nothing here reads a file or the kernel, so
 * test_judge.c drives it with synthetic samples.
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
#include "util/arith.h"
#include "util/file.h"

/* ---- events and regions as expectations name them -------------------------------- */

int pmc__column_in(const struct pmc__columns *cols, const char *event)
{
	struct pmc_event_spec s;
	size_t i;

	for (i = 0; i < cols->n; i++)
		if (!strcmp(cols->label[i], event))
			return (int)i;
	for (i = 0; i < cols->n; i++)
		if (!strcmp(cols->spec[i].name, event))
			return (int)i;
	/* Another spelling of a counted event ("cycles:u" for "cpu-cycles:u"):
	 * parsed here, once per check. */
	if (pmc_event_parse(event, &s, NULL) == 0)
		for (i = 0; i < cols->n; i++)
			if (!strcmp(s.name, cols->spec[i].name))
				return (int)i;
	return -1;
}

static void list_labels(const struct pmc__columns *cols, char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < cols->n && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", cols->label[i]);
}

static struct pmc__region *region_in(const struct pmc__judging *j, const char *name)
{
	for (size_t i = 0; i < j->nregions; i++)
		if (!strcmp(j->regions[i].name, name))
			return &j->regions[i];
	return NULL;
}

/* ---- one expectation ----------------------------------------------------------------- */

void pmc__fmt_num(char *buf, size_t size, double x)
{
	if (isnan(x))
		snprintf(buf, size, "-");
	else if (x == pmc__floor(x) && fabs(x) < 1e18)
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
void pmc__check_msg(struct pmc__check *c, const char *fmt, ...)
{
	char text[sizeof(c->message)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* A message quotes files (an hwdb line): bytes that are not UTF-8
	 * would make the result's JSON refuse it, and the case would end in
	 * an ERROR with no reason. */
	pmc__escape_utf8(c->message, sizeof(c->message), text);
}

static const char *describe_column(const struct pmc__check *c)
{
	return c->e.event ? c->e.event : "?";
}

void pmc__judge(struct pmc__check *c, struct pmc__region *r, int ev, int per,
		enum pmc_stat stat, const struct pmc_budget *budget)
{
	const struct pmc_expectation *e = &c->e;
	struct pmc__stats s, sp;
	bool ratio = e->kind == PMC_EXPECT_KIND_RATIO_LE || e->kind == PMC_EXPECT_KIND_RATIO_GE ||
		     e->kind == PMC_EXPECT_KIND_RATIO_RANGE;
	char bound[128], meas[48], what[300], estimate[96] = "";
	double x, lo = NAN, hi = NAN, error = 0, iters = 1;
	size_t total;
	bool ok;

	c->stat = pmc__stat_name(stat);
	c->measured = NAN;
	c->bound_lo = c->bound_hi = NAN;
	snprintf(what, sizeof(what), "region \"%s\", %s%s%s", e->region, describe_column(c),
		 ratio ? " per " : "", ratio ? e->per : "");
	if (!r || (r->n == 0 && !pmc__region_folded(r))) {
		c->status = PMC__CHECK_ERROR;
		pmc__check_msg(c, "%s: no samples (the region ran only in warm-up runs, or never)", what);
		return;
	}
	s = *pmc__region_stats(r, (size_t)ev);
	total = s.n;
	c->samples = total;
	sp = ratio ? *pmc__region_stats(r, (size_t)per) : s;
	/* A partial count cannot be judged: it is not the code's count. */
	if (s.not_counted || s.multiplexed || (ratio && (sp.not_counted || sp.multiplexed))) {
		size_t nc = s.not_counted + (ratio ? sp.not_counted : 0);
		size_t mx = s.multiplexed + (ratio ? sp.multiplexed : 0);

		c->status = PMC__CHECK_INCONCLUSIVE;
		pmc__check_msg(c,
			 "%s: cannot judge: %zu of %zu samples never counted, %zu multiplexed (counter ran %.0f%% of the time); reduce the events per case or free counters (e.g. the NMI watchdog)",
			 what, nc, total, mx, 100.0 * (ratio && sp.running_share < s.running_share ? sp.running_share : s.running_share));
		return;
	}
	if (ratio) {
		bool div0;
		size_t missed;

		x = pmc__region_ratio(r, (size_t)ev, (size_t)per, stat, &div0, &error, &missed);
		if (missed) {
			c->status = PMC__CHECK_INCONCLUSIVE;
			pmc__check_msg(c,
				"%s: cannot judge: %zu of %zu samples were summarised before this ratio was asked for (a region keeps %d samples, then sums them up); keep a warm-up repetition, or declare the expectation before the region first runs",
				what, missed, total, PMC__WINDOW_ROWS);
			return;
		}
		if (isnan(x)) {
			c->status = PMC__CHECK_ERROR;
			pmc__check_msg(c, "%s: the denominator %s is 0 in every sample", what, e->per);
			return;
		}
	} else {
		x = pmc__stat_pick(&s, stat);
		error = s.median_error;
	}
	if (stat == PMC_STAT_MEDIAN && error > 0)
		snprintf(estimate, sizeof(estimate),
			 "; the median of %zu samples is estimated, within %.1f%%", total, 100.0 * error);
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
			pmc__check_msg(c,
				 "%s: unbudgeted: no budget recorded for this machine (measured %s); record one with --calibrate",
				 what, meas);
			return;
		}
		snprintf(c->budget_source, sizeof(c->budget_source), "%s", budget->source);
		if (budget->per_iteration && r->iterations > 1) {
			x /= (double)r->iterations;
			iters = (double)r->iterations;
			c->per_iteration = true;
		}
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
	/* A per-iteration budget is met by the whole region's count: the
	 * count times the bound's figure, to the nearest count, so that a
	 * figure of at most 15 digits (hwdb's limit) states an exact count
	 * over any number of iterations (17059.65 over 20 is 341193). */
	if (iters > 1)
		ok = (isnan(lo) || x * iters >= lo * iters - 0.5) &&
		     (isnan(hi) || x * iters <= hi * iters + 0.5);
	/* Other threads ran uncounted: the true figure is at least x.  Only a
	 * lower bound that holds stays true; anything else is unknown. */
	if (s.other_threads || (ratio && sp.other_threads)) {
		size_t ot = s.other_threads > (ratio ? sp.other_threads : 0) ? s.other_threads
									 : sp.other_threads;

		if (!(ok && !ratio && isnan(hi))) {
			pmc__fmt_num(meas, sizeof(meas), x);
			c->status = PMC__CHECK_INCONCLUSIVE;
			pmc__check_msg(c,
				"%s: cannot judge: other threads of the process, or child processes, ran uncounted during %zu of %zu samples (measured %s, a partial count); set .inherit = 1 to count threads (the notes say when it was a child process)",
				what, ot, total, meas);
			return;
		}
	}
	pmc__fmt_bound(bound, sizeof(bound), lo, hi);
	pmc__fmt_num(meas, sizeof(meas), x);
	if (c->per_iteration) {
		size_t used = strlen(meas);

		strncat(bound, " per iteration", sizeof(bound) - strlen(bound) - 1);
		snprintf(meas + used, sizeof(meas) - used, " per iteration of %" PRIu64, r->iterations);
	}
	if (ok) {
		c->status = PMC__CHECK_PASS;
		pmc__check_msg(c, "%s: %s (%s of %zu) within %s%s", what, meas,
			 c->stat, total, bound, estimate);
		return;
	}
	{
		double edge = !isnan(hi) && x > hi ? hi : lo;
		double delta = x - edge;
		char d[48];

		pmc__fmt_num(d, sizeof(d), fabs(delta));
		c->status = PMC__CHECK_FAIL;
		if (edge != 0)
			pmc__check_msg(c,
				 "%s: measured %s (%s of %zu samples), expected %s: %s by %s (%+.*f%% of the %s)%s%s%s",
				 what, meas, c->stat, total, bound, delta > 0 ? "over" : "under", d,
				 /* a tiny miss still shows its size: +0.0046%, not +0.00% */
				 fabs(100.0 * delta / edge) < 0.01 ? 4 : 2, 100.0 * delta / edge,
				 budget ? "budget" : "bound",
				 c->budget_source[0] ? "; budget from " : "", c->budget_source, estimate);
		else
			pmc__check_msg(c,
				 "%s: measured %s (%s of %zu samples), expected %s: over by %s%s%s%s",
				 what, meas, c->stat, total, bound, d,
				 c->budget_source[0] ? "; budget from " : "", c->budget_source, estimate);
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
	if (first && reason)
		snprintf(reason, size, "%s%s", first->message,
			 count > 1 ? " (and more, see checks)" : "");
	switch (worst) {
	case PMC__CHECK_ERROR:
		return PMC_ERROR;
	case PMC__CHECK_FAIL:
		if (first && first->status == PMC__CHECK_UNBUDGETED && reason)
			snprintf(reason, size, "%s%s",
				 first->gate ? "" : "unbudgeted in a strict run (--strict, or CI set): ",
				 first->message);
		return PMC_FAIL;
	case PMC__CHECK_INCONCLUSIVE:
		return PMC_INCONCLUSIVE;
	case PMC__CHECK_UNBUDGETED:
		/* Measured, not judged: never a pass. */
		return PMC_UNBUDGETED;
	default:
		return PMC_PASS;
	}
}

/* ---- every expectation of a case ------------------------------------------------------ */

void pmc__judge_checks(struct pmc__check *checks, size_t n, const struct pmc__judging *j)
{
	for (size_t i = 0; i < n; i++) {
		struct pmc__check *c = &checks[i];
		struct pmc_budget budget, *b = NULL;
		struct pmc_error berr;
		struct pmc__region *r;
		char names[512];
		int ev, per;

		if (c->e.kind == PMC_EXPECT_KIND_FIGURE)
			continue; /* judged when it was made */
		ev = pmc__column_in(&j->cols, c->e.event);
		per = c->e.per ? pmc__column_in(&j->cols, c->e.per) : -1;
		if (ev < 0 || (c->e.per && per < 0)) {
			list_labels(&j->cols, names, sizeof(names));
			c->status = PMC__CHECK_ERROR;
			pmc__check_msg(c, "%s:%d: event \"%s\" is not counted by this case (events: %s)",
				       c->e.file, c->e.line, ev < 0 ? c->e.event : c->e.per, names);
			continue;
		}
		r = region_in(j, c->e.region);
		if (!r) {
			c->status = PMC__CHECK_ERROR;
			pmc__check_msg(c, "%s:%d: region \"%s\" never ran", c->e.file, c->e.line,
				       c->e.region);
			continue;
		}
		if (c->e.kind == PMC_EXPECT_KIND_BUDGET && j->budget) {
			int rc;

			memset(&budget, 0, sizeof(budget));
			pmc_error_clear(&berr);
			rc = j->budget(j->ctx, c, &budget, &berr);
			if (rc == 0) {
				b = &budget;
			} else if (rc != -ENOENT) {
				c->status = PMC__CHECK_ERROR;
				pmc__check_msg(c, "budget for region \"%s\", %s: %s", c->e.region,
					       c->e.event, berr.message[0] ? berr.message : pmc_strerror(rc));
				continue;
			}
		}
		pmc__judge(c, r, ev, per, j->stat, b);
		if (c->status == PMC__CHECK_UNBUDGETED && j->unbudgeted)
			j->unbudgeted(j->ctx, c);
		/* No budget where the suite has others (another build type,
		 * another CPU): a gate that looked in the wrong place fails,
		 * and says so as a failure, not as "unbudgeted". */
		if (c->status == PMC__CHECK_UNBUDGETED && c->gate)
			c->status = PMC__CHECK_FAIL;
	}
}
