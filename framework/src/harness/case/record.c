/* SPDX-License-Identifier: MIT */
/*
 * The case's result record: everything the reports, calibration and
 * comparison need, built from a finished case here and nowhere else.
 *
 * Over 600 lines because the case's record is built here and nowhere else
 * (pmc__result_record), and the explanations a failed check carries
 * (functions attributed, the layout excused, the engine that moved, the
 * calibrated region compared) need the live case, which exists only in its
 * own process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <limits.h>
#include <stdbool.h>
#include <time.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"
#include "sim/sim_harness.h"
#include "util/util_int.h"

/* "Ir", "D1mr+D1mw": the columns the sim backend counts the event with
 * (from its spec: nothing downstream parses the name again), or NULL. */
static char *sim_columns(const struct pmc_event_spec *s)
{
	char buf[128];
	size_t used = 0;
	unsigned mask;

	if (pmc_sim_columns(s, &mask, NULL) != 0 || !mask)
		return NULL;
	if (mask & PMC_SIM_CALLS_MASK)
		return strdup("calls");
	buf[0] = '\0';
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS && used < sizeof(buf); c++)
		if (mask & (1u << c))
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
						 used ? "+" : "", pmc_sim_column_name(c));
	return strdup(buf);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* ---- attribution (sim) ------------------------------------------------------------ */

struct fn_sum {
	struct pmc_sim_fn_cost f; /* costs summed over the dumps */
	double score;             /* its largest share of any event */
	double to[PMC_MAX_EVENTS]; /* calls: events: its calls to the function, summed */
};

/* A function's calls to the function of one calls: event, in one dump. */
struct caller {
	size_t event;
	struct pmc_sim_fn_cost f;
};

static int by_name(const void *a, const void *b)
{
	const struct pmc_sim_fn_cost *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : strcmp(x->object, y->object);
}

static void callers_free(struct caller *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].f.name);
		free(c[i].f.object);
	}
	free(c);
}

static int by_score(const void *a, const void *b)
{
	const struct fn_sum *x = a, *y = b;

	return x->score < y->score ? 1 : x->score > y->score ? -1 : strcmp(x->f.name, y->f.name);
}

/* The event's cost in a function: the sum of the event's columns. */
static double event_cost(const uint64_t *cost, unsigned mask)
{
	double v = 0;

	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
		if (mask & (1u << c))
			v += (double)cost[c];
	return v;
}

/* A function's cost of event j: its columns summed; for a calls: event,
 * the calls it made to that event's function. */
static double row_cost(const struct fn_sum *r, size_t j, const unsigned *mask)
{
	return mask[j] & PMC_SIM_CALLS_MASK ? r->to[j] : event_cost(r->f.cost, mask[j]);
}

/* The callers in one dump of each calls: event's function, appended to
 * *callers; 0, or a message in why. */
static int dump_callers(struct pmc_test *t, size_t nev, const unsigned *mask, const char *file,
			const char *text, size_t len, struct caller **callers, size_t *n, char *why,
			size_t size)
{
	for (size_t j = 0; j < nev; j++) {
		struct pmc_sim_fn_cost *f = NULL;
		struct caller *grown;
		struct pmc_error err;
		size_t nf = 0;

		if (!(mask[j] & PMC_SIM_CALLS_MASK))
			continue;
		if (pmc_sim_dump_callers(file, text, len, &t->spec[j], &f, &nf, &err)) {
			snprintf(why, size, "the callers of %s: %s", t->label[j], err.message);
			return -1;
		}
		grown = realloc(*callers, (*n + nf + 1) * sizeof(**callers));
		if (!grown) {
			pmc_sim_functions_free(f, nf);
			snprintf(why, size, "out of memory");
			return -1;
		}
		*callers = grown;
		for (size_t k = 0; k < nf; k++)
			(*callers)[(*n)++] = (struct caller){ j, f[k] };
		free(f); /* the strings moved into *callers */
	}
	return 0;
}

/*
 * The region's own costs per function for the record: its kept dumps
 * parsed and merged, each event's columns summed (for a calls: event, the
 * function's calls to the event's function: the callers), the mean over
 * the dumps;
 * the PMC__ATTR_TOP functions with the largest share of any event, and the
 * rest as "(other)".  The dumps are deleted.  A dump that cannot be read
 * leaves the region without attribution (a note says why); -1 only when
 * memory runs out.
 */
static int attribution(struct pmc_test *t, struct pmc__region *g, struct pmc__region_rec *gr)
{
	struct pmc_sim_fn_cost *all = NULL;
	struct fn_sum *sum = NULL;
	struct caller *callers = NULL;
	size_t nall = 0, nsum = 0, ndumps = g->attr->n, keep, ncallers = 0;
	unsigned mask[PMC_MAX_EVENTS];
	double total[PMC_MAX_EVENTS] = { 0 };
	int rc = 0;

	for (size_t j = 0; j < g->nev; j++)
		if (pmc_sim_columns(&t->spec[j], &mask[j], NULL))
			mask[j] = 0;
	for (size_t d = 0; d < ndumps && rc == 0; d++) {
		struct pmc_sim_fn_cost *f = NULL, *grown;
		struct pmc_error err;
		char *text = NULL, why[600] = "";
		size_t len = 0, n = 0;
		int prc = pmc__read_file(g->attr->dump[d], &text, &len);

		if (prc)
			snprintf(why, sizeof(why), "%s", strerror(-prc));
		else if (pmc_sim_dump_functions(g->attr->dump[d], text, len, &f, &n, &err))
			snprintf(why, sizeof(why), "%s", err.message);
		else if (dump_callers(t, g->nev, mask, g->attr->dump[d], text, len, &callers,
				      &ncallers, why, sizeof(why)))
			pmc_sim_functions_free(f, n);
		if (why[0]) {
			free(text);
			pmc_test_note(t, "region \"%s\": no attribution: dump %s: %s", g->name,
				      g->attr->dump[d], why);
			pmc_sim_functions_free(all, nall);
			callers_free(callers, ncallers);
			return 0;
		}
		free(text);
		grown = realloc(all, (nall + n) * sizeof(*all));
		if (!grown) {
			pmc_sim_functions_free(f, n);
			rc = -1;
			break;
		}
		all = grown;
		memcpy(all + nall, f, n * sizeof(*f));
		nall += n;
		free(f); /* the strings moved into all */
	}
	if (rc || nall == 0) {
		pmc_sim_functions_free(all, nall);
		callers_free(callers, ncallers);
		return rc;
	}
	qsort(all, nall, sizeof(*all), by_name);
	sum = calloc(nall + ncallers, sizeof(*sum));
	if (!sum) {
		pmc_sim_functions_free(all, nall);
		callers_free(callers, ncallers);
		return -1;
	}
	for (size_t i = 0; i < nall; i++) {
		if (nsum && !by_name(&sum[nsum - 1].f, &all[i])) {
			for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
				sum[nsum - 1].f.cost[c] += all[i].cost[c];
			sum[nsum - 1].f.calls += all[i].calls;
			free(all[i].name);
			free(all[i].object);
			continue;
		}
		sum[nsum++].f = all[i];
	}
	/* Each caller's calls on its row, made when it cost nothing. */
	for (size_t k = 0; k < ncallers; k++) {
		size_t i = 0;

		while (i < nsum && by_name(&sum[i].f, &callers[k].f))
			i++;
		if (i == nsum) {
			sum[nsum++].f = callers[k].f;
			memset(sum[i].f.cost, 0, sizeof(sum[i].f.cost));
			sum[i].f.calls = 0;
			callers[k].f.name = callers[k].f.object = NULL;
		}
		sum[i].to[callers[k].event] += (double)callers[k].f.calls;
	}
	callers_free(callers, ncallers);
	for (size_t i = 0; i < nsum; i++)
		for (size_t j = 0; j < g->nev; j++)
			total[j] += row_cost(&sum[i], j, mask);
	for (size_t i = 0; i < nsum; i++)
		for (size_t j = 0; j < g->nev; j++)
			if (total[j] > 0 && row_cost(&sum[i], j, mask) / total[j] > sum[i].score)
				sum[i].score = row_cost(&sum[i], j, mask) / total[j];
	qsort(sum, nsum, sizeof(*sum), by_score);
	/* Functions that cost nothing of the case's events are left out. */
	while (nsum > 0 && sum[nsum - 1].score <= 0) {
		nsum--;
		free(sum[nsum].f.name);
		free(sum[nsum].f.object);
	}
	keep = nsum < PMC__ATTR_TOP ? nsum : PMC__ATTR_TOP;
	gr->fns = calloc(keep + 2, sizeof(*gr->fns));
	for (size_t i = 0; gr->fns && i < keep + (nsum > keep); i++) {
		struct pmc__fn_rec *fr = &gr->fns[gr->nfns++];
		bool other = i == keep;

		fr->name = strdup(other ? "(other)" : sum[i].f.name);
		fr->object = strdup(other ? "" : sum[i].f.object);
		fr->cost = calloc(g->nev + 1, sizeof(*fr->cost));
		if (!fr->name || !fr->object || !fr->cost) {
			rc = -1;
			break;
		}
		fr->calls = 0;
		if (other)
			for (size_t k = keep; k < nsum; k++)
				fr->calls += (double)sum[k].f.calls / (double)ndumps;
		else
			fr->calls = (double)sum[i].f.calls / (double)ndumps;
		for (size_t j = 0; j < g->nev; j++) {
			double v = 0;

			if (other)
				for (size_t k = keep; k < nsum; k++)
					v += row_cost(&sum[k], j, mask);
			else
				v = row_cost(&sum[i], j, mask);
			fr->cost[j] = v / (double)ndumps;
		}
	}
	if (!gr->fns)
		rc = -1;
	for (size_t i = 0; i < nsum; i++) {
		free(sum[i].f.name);
		free(sum[i].f.object);
	}
	free(sum);
	free(all);
	return rc;
}

/* Is the check's event a count of one function's calls (calls:FUNC)? */
static bool calls_event(const struct pmc__result *r, const char *event)
{
	const struct pmc__event_rec *ev = pmc__result_event(r, event);

	return ev && ev->kind && !strcmp(ev->kind, "uprobe");
}

/*
 * A failed exact sim budget whose whole difference is layout (layout.c):
 * the check passes, in words that say so, and the case gets a note.
 * Returns 1 when excused, 0 when not, -1 when memory ran out.
 */
static int excuse_layout(struct pmc_test *t, struct pmc__result *r, struct pmc__check *c,
			 struct pmc__check_rec *cr, const struct pmc__region_rec *old,
			 const struct pmc__region_rec *g, const char *label)
{
	const struct pmc__event_rec *ev = pmc__result_event(r, c->e.event);
	struct pmc__layout lay;
	char *why = NULL;

	/* A count of calls is no string function's cost: never layout. */
	if (!pmc__layout_per_call || calls_event(r, c->e.event) ||
	    !pmc__event_deterministic(r, ev, c->e.event, NULL) ||
	    pmc__layout_review(old, g, label, pmc__layout_per_call, &lay) || !lay.layout)
		return 0;
	/* The budget widened by exactly what those functions moved. */
	if (isnan(c->measured) ||
	    (!isnan(c->bound_lo) && c->measured < c->bound_lo + lay.down - 0.5) ||
	    (!isnan(c->bound_hi) && c->measured > c->bound_hi + lay.up + 0.5))
		return 0;
	if (asprintf(&why,
		     " Layout, not a regression: the difference lies wholly in string and memory functions called as many times as at calibration (%s), whose cost where their buffers lie moves by up to %.0f a call; passed. Calibrate again to make the budget exact for this build.",
		     lay.why, pmc__layout_per_call) < 0)
		return -1;
	if (pmc__check_explain(r, cr, why)) {
		free(why);
		return -1;
	}
	free(why);
	cr->status = PMC__CHECK_PASS;
	c->status = PMC__CHECK_PASS;
	cr->layout = strdup(lay.why);
	pmc_test_note(t, "layout: region \"%s\", %s: measured %.0f, %+.0f outside the budget, all of it in %s (call counts as at calibration): passed as layout, not judged a regression",
		      c->e.region, c->e.event, c->measured,
		      c->measured < c->bound_lo ? c->measured - c->bound_lo : c->measured - c->bound_hi,
		      lay.why);
	return cr->layout ? 1 : -1;
}

bool pmc__functions_rerun;

static const char *sim_engine_words(const char *engine)
{
	return !strcmp(engine, "pmcheck") ? "pmcheck's valgrind tool" : engine;
}

/*
 * A failed sim budget counted by the other engine: the two engines count
 * alike by design (sim.engines.agree holds them to it), but a difference
 * between them must not become a FAIL, for pmcheck switches engine by
 * itself (valgrind upgraded after pmcheck was built, a miss event added).
 * The check is INCONCLUSIVE and says which engine counted what, and how to
 * calibrate on this one.  Returns 1 when it was, 0 when not, -1 on ENOMEM.
 */
static int engine_moved(struct pmc_test *t, struct pmc__result *r, struct pmc__check *c,
			struct pmc__check_rec *cr)
{
	const char *then = pmc__calibration_engine(c->budget_source, r->test);
	const char *now = r->sim_engine;
	char *why = NULL;

	if (!*then || !now || !strcmp(then, now) || pmc__functions_rerun)
		return 0;
	if (asprintf(&why,
		     " Not judged: this budget was counted by %s, and this run by %s. The two engines should count alike, so this may be a real change, but it is not one this gate can tell from the change of engine. To judge it, run with --sim-engine=%s, or calibrate again on this engine (--calibrate --sim-engine=%s).",
		     sim_engine_words(then), sim_engine_words(now), then, now) < 0)
		return -1;
	if (pmc__check_explain(r, cr, why)) {
		free(why);
		return -1;
	}
	free(why);
	cr->status = PMC__CHECK_INCONCLUSIVE;
	c->status = PMC__CHECK_INCONCLUSIVE;
	pmc_test_note(t, "sim: region \"%s\", %s: budget counted by %s, this run by %s: the difference from it is not judged",
		      c->e.region, c->e.event, sim_engine_words(then), sim_engine_words(now));
	return 1;
}

/* The case's result record: everything the reports, calibration and
 * comparison need, built here and nowhere else. */
int pmc__result_record(struct pmc_test *t, struct pmc__result *r)
{
	char name[256], desc[1024];
	size_t i, j, k, excused = 0, nkept;
	const uint64_t *kept;

	memset(r, 0, sizeof(*r));
	pmc__full_name(t->def, name, sizeof(name));
	r->name = strdup(name);
	r->suite = strdup(t->def->suite);
	r->test = strdup(t->def->name);
	r->file = strdup(t->def->file);
	r->line = t->def->line;
	r->verdict = t->verdict;
	r->backend = t->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	r->has_options = true;
	r->reps = t->opt.reps;
	r->warmup = t->opt.warmup;
	r->stat = t->opt.stat;
	/* A case that counts events (a conformance case need not): the
	 * guard fails only when every selected measuring case was skipped. */
	r->measuring = t->nev > 0 || (t->def->opt.events && *t->def->opt.events) ||
		       /* ended before a setup that may add events: assume so */
		       (t->def->opt.fixture && t->def->opt.fixture->setup && !t->setup_done);
	r->reason = dup_or_null(t->reason);
	r->known_issue = dup_or_null(t->known_issue);
	if (pmc_objects_loaded(&r->objects, &r->nobjects))
		goto oom;
	r->events = calloc(t->nev + 1, sizeof(*r->events));
	r->regions = calloc(t->nregions + 1, sizeof(*r->regions));
	r->checks = calloc(t->nexpect + 1, sizeof(*r->checks));
	r->notes = calloc(t->nnotes + 1, sizeof(*r->notes));
	if (!r->name || !r->suite || !r->test || !r->file || !r->events || !r->regions ||
	    !r->checks || !r->notes)
		goto oom;
	for (i = 0; i < t->nev; i++) {
		struct pmc__event_rec *e = &r->events[r->nevents++];

		e->label = strdup(t->label[i]);
		e->name = strdup(t->spec[i].name);
		e->kind = strdup(pmc_event_kind_name(t->spec[i].kind));
		e->sim_columns = sim_columns(&t->spec[i]);
		if (e->sim_columns && t->backend == PMC_BACKEND_SIM && pmc_sim_engine())
			e->sim_engine = strdup(pmc_sim_engine());
		e->group = t->set ? pmc_counters_group_of(t->set, i) : -1;
		e->hardware = t->spec[i].uses_hw_counter;
		e->has_overhead = t->set != NULL;
		e->overhead = (t->hot.one_group ? &t->hot.overhead : &t->overhead_general)->d[i].value;
		if (!e->label || !e->name || !e->kind)
			goto oom;
	}
	if (t->set) {
		enum pmc_read_path path = pmc_counters_path(t->set);

		pmc_counters_describe(t->set, desc, sizeof(desc));
		r->grouping = strdup(desc);
		r->read_path = strdup(path == PMC_PATH_USER ? "user" : path == PMC_PATH_SIM ? "sim" : "read");
		if (t->backend == PMC_BACKEND_SIM) {
			char key[PMC_HWDB_KEY_MAX];

			pmc__sim_profile_key(t->def, key, sizeof(key));
			r->sim_profile = strdup(key);
			/* The CPU valgrind shows the program: synthetic, not the
			 * host's (the run's environment names the host). */
			if (pmc_sim_active()) {
				struct pmc_cpu_id cpu;

				pmc_cpu_identify(&cpu);
				r->simulated_cpu = strdup(cpu.signature);
				if (pmc_sim_engine())
					r->sim_engine = strdup(pmc_sim_engine());
				/* Why not the tool, when the case did not choose. */
				if (pmc_sim_fallback())
					pmc_test_note(t, "sim: counted by callgrind, not pmcheck's valgrind tool: %s",
						      pmc_sim_fallback());
				/* Then a failure takes its functions from one
				 * more run, under callgrind (process.c). */
				if (pmc_sim_functions_missing())
					pmc_test_note(t, "sim: no function costs from this run: %s; functions behind a failure or a change come from one more run under callgrind",
						      pmc_sim_functions_missing());
			}
		}
	}
	for (i = 0; i < t->nregions; i++) {
		struct pmc__region *g = &t->region[i];
		struct pmc__region_rec *gr = &r->regions[r->nregions++];

		gr->name = strdup(g->name);
		gr->iterations = g->iterations;
		gr->samples = g->n + pmc__region_folded(g);
		gr->ev = calloc(g->nev + 1, sizeof(*gr->ev));
		if (!gr->name || !gr->ev)
			goto oom;
		for (j = 0; j < g->nev; j++) {
			struct pmc__stat_rec *st = &gr->ev[gr->nev++];
			/* The statistics the judging used, not computed again. */
			const struct pmc__stats s = *pmc__region_stats(g, j);
			st->label = strdup(t->label[j]);
			st->n = s.n;
			st->min = s.min;
			st->max = s.max;
			st->median = s.median;
			st->mean = s.mean;
			st->multiplexed = s.multiplexed;
			st->not_counted = s.not_counted;
			st->other_threads = s.other_threads;
			st->median_error = s.median_error;
			/* The first samples (PMC__KEPT_VALUES at most); the
			 * statistics above cover every one. */
			nkept = pmc__region_kept(g, &kept);
			st->values = calloc(nkept + 1, sizeof(*st->values));
			if (!st->label || !st->values)
				goto oom;
			for (k = 0; k < nkept; k++)
				st->values[st->nvalues++] = kept[k * g->nev + j];
			st->summarised = s.n - st->nvalues;
		}
		if (g->attr && g->attr->n && attribution(t, g, gr))
			goto oom;
		if (t->sampling && pmc__sampling_record(t, i, gr))
			goto oom;
	}
	for (i = 0; i < t->nexpect; i++) {
		struct pmc__check *c = &t->check[i];
		struct pmc__check_rec *cr;

		if (!c->message[0])
			continue; /* not judged: the case ended before */
		cr = &r->checks[r->nchecks++];
		cr->kind = c->e.kind;
		cr->status = c->status;
		cr->region = strdup(c->e.region);
		cr->event = strdup(c->e.event);
		cr->per = c->e.per ? strdup(c->e.per) : NULL;
		cr->file = strdup(c->e.file);
		cr->line = c->e.line;
		cr->message = strdup(c->message);
		cr->measured = c->measured;
		cr->lo = c->bound_lo;
		cr->hi = c->bound_hi;
		cr->has_statistic = c->stat != NULL;
		cr->statistic = c->stat && !strcmp(c->stat, "median") ? PMC_STAT_MEDIAN
				: c->stat && !strcmp(c->stat, "max")  ? PMC_STAT_MAX
								      : PMC_STAT_MIN;
		cr->samples = c->samples;
		cr->budget_source = dup_or_null(c->budget_source);
		cr->per_iteration = c->per_iteration;
		cr->gate = c->gate;
		if (!cr->region || !cr->event || !cr->file || !cr->message)
			goto oom;
		if (c->status == PMC__CHECK_FAIL && c->e.kind == PMC_EXPECT_KIND_BUDGET) {
			const struct pmc__region_rec *g = pmc__result_region(r, c->e.region);
			int col = pmc__column_of(t, c->e.event);
			struct pmc__region_rec old = { 0 };
			char path[PATH_MAX] = "", *why = NULL, *whose = NULL, *libs = NULL;
			const char *label = g && col >= 0 && (size_t)col < g->nev ? g->ev[col].label : NULL;
			int ex = 0;

			if (label && t->backend == PMC_BACKEND_SIM) {
				pmc__calibrated_region(r->name, g, c->budget_source, &old, path, sizeof(path));
				ex = excuse_layout(t, r, c, cr, &old, g, label);
				excused += ex > 0;
				why = ex == 0 ? pmc__explain_budget(&old, g, label, path, calls_event(r, c->e.event))
					      : NULL;
			}
			whose = ex == 0 ? pmc__provenance_after(r, c->budget_source, &old, g, label) : NULL;
			libs = ex == 0 ? pmc__libraries_before(r, c->budget_source, &old, g, label) : NULL;
			pmc__calibrated_free(&old);
			if (ex == 0 && t->backend == PMC_BACKEND_SIM) {
				int moved = engine_moved(t, r, c, cr);

				if (moved < 0) {
					free(why);
					free(whose);
					free(libs);
					goto oom;
				}
				excused += moved;
			}
			if (ex < 0 || (why && pmc__check_explain(r, cr, why)) ||
			    (whose && pmc__check_explain(r, cr, whose)) ||
			    (libs && pmc__check_preface(r, cr, libs))) {
				free(why);
				free(whose);
				free(libs);
				goto oom;
			}
			free(why);
			free(whose);
			free(libs);
		}
	}
	/* Every failure was layout, or not judged (another engine's budget):
	 * the verdict the checks give now. */
	if (excused && r->verdict == PMC_FAIL && t->verdict_from_checks && !t->known_issue[0]) {
		char reason[sizeof(t->reason)];

		r->verdict = pmc__verdict_from_checks(t->check, t->nexpect, t->strict, reason,
						      sizeof(reason));
		free(r->reason);
		r->reason = dup_or_null(reason);
	}
	if (t->nnotes) { /* judging here may have added notes */
		char **grown = realloc(r->notes, (t->nnotes + 1) * sizeof(*grown));

		if (!grown)
			goto oom;
		r->notes = grown;
	}
	for (i = 0; i < t->nnotes; i++)
		if (!(r->notes[r->nnotes++] = strdup(t->notes[i])))
			goto oom;
	return 0;
oom:
	pmc__result_release(r);
	return -ENOMEM;
}

