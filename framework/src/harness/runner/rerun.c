/* SPDX-License-Identifier: MIT */
/*
 * A case's run and the runs after it, for the functions behind what moved:
 * pmc__run_one runs the case (process.c) and, when it failed, once more --
 * on perf with its failing events sampled (sampled.c), on sim with the
 * tool counting function costs, or under callgrind when the tool cannot
 * -- and keeps the first run's figures with the re-run's functions.
 * --baseline's changed cases likewise (pmc__sim_functions_for_changes,
 * pmc__sample_regressions).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner_int.h"
#include "util/arith.h"

/* One more run of d under callgrind, for the functions behind what the
 * tool counted: a cross-check, whose budgets counted by the tool are
 * judged as its own (record.c). */
static void run_for_functions(struct runner *r, const struct pmc_test_def *d,
			      const struct pmc_test_options *o, double *seconds,
			      struct pmc__result *cg)
{
	struct pmc_error err;

	pmc_sim_engine_prefer("callgrind", &err);
	pmc__functions_rerun = true;
	pmc__run_forked(r, d, o, seconds, cg);
	pmc__functions_rerun = false;
	pmc_sim_engine_prefer(r->sim_engine_settled, &err);
}

void pmc__functions_from_callgrind(struct runner *r, const struct pmc_test_def *d,
				   double *seconds, struct pmc__result *cg)
{
	struct pmc_test_options o;

	pmc__effective_options(d, r->repeat, r->timeout, &o);
	if (!(r->timeout > 0))
		o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
	run_for_functions(r, d, &o, seconds, cg);
}

/*
 * A case that failed on the perf backend: run it once more with its
 * failing events sampled inside its regions (sampled.c), and explain the
 * failed checks with the functions the samples fell in.  The first run's
 * counts and verdict stand; the re-run only adds rows and words.
 */
static void sample_again(struct runner *r, const struct pmc_test_def *d,
			 const struct pmc_test_options *o, const struct pmc__sample_request *req,
			 struct pmc__result *res)
{
	struct pmc__result sampled;
	double seconds;

	pmc__sampling = *req;
	pmc__run_forked(r, d, o, &seconds, &sampled);
	memset(&pmc__sampling, 0, sizeof(pmc__sampling));
	pmc__sampling_adopt(res, &sampled, seconds);
	pmc__result_release(&sampled);
}

static void attribute_by_sampling(struct runner *r, const struct pmc_test_def *d,
				  const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__sample_request req;

	if (!r->no_sampling && !r->calibrate && pmc__sampling_request(res, &req))
		sample_again(r, d, o, &req, res);
}

static void add_note(struct pmc__result *res, char *note)
{
	char **notes;

	if (!note)
		return;
	notes = realloc(res->notes, (res->nnotes + 2) * sizeof(*notes));
	if (!notes) {
		free(note);
		return;
	}
	res->notes = notes;
	res->notes[res->nnotes++] = note;
	res->notes[res->nnotes] = NULL;
}

/* The first event of a region whose counts differ between two runs of a
 * case, as words; 0 when every event counted the same.  Where only the
 * spread differs (the smallest sample, which budgets judge, is the same),
 * the words say the program's own work varied. */
static int first_difference(const struct pmc__result *a, const struct pmc__result *b, char *out,
			    size_t size)
{
	for (size_t i = 0; i < a->nregions; i++) {
		const struct pmc__region_rec *ga = &a->regions[i];
		const struct pmc__region_rec *gb = pmc__result_region(b, ga->name);

		for (size_t k = 0; k < ga->nev; k++) {
			const struct pmc__stat_rec *ea = &ga->ev[k];
			const struct pmc__stat_rec *eb = gb ? pmc__region_event(gb, ea->label) : NULL;

			if (eb && ea->min == eb->min && ea->max == eb->max && ea->n == eb->n)
				continue;
			if (eb && ea->min == eb->min)
				snprintf(out, size,
					 "the same smallest sample, %" PRIu64 " in region \"%s\", %s, and another spread (%" PRIu64 "..%" PRIu64 " and %" PRIu64 "..%" PRIu64 "): this program's work varies from one execution to the next",
					 ea->min, ga->name, ea->label, ea->min, ea->max, eb->min, eb->max);
			else
				snprintf(out, size,
					 "region \"%s\", %s: pmcheck's valgrind tool counted %" PRIu64 "..%" PRIu64 ", callgrind %s%" PRIu64 "..%" PRIu64,
					 ga->name, ea->label, ea->min, ea->max, eb ? "" : "nothing, ",
					 eb ? eb->min : 0, eb ? eb->max : 0);
			return 1;
		}
	}
	return 0;
}

/* A failed check that judged samples: one that failed before any sample
 * (in a warm-up run, or because the region never ran) has no figure for a
 * re-run to explain.  Every event has a function table that explains it
 * (a calls: event's: the calls each function made to its function). */
static bool failed_on_samples(const struct pmc__result *res)
{
	for (size_t i = 0; i < res->nchecks; i++)
		if (res->checks[i].status == PMC__CHECK_FAIL && res->checks[i].samples > 0)
			return true;
	return false;
}

/* The figures a check judges are the same in two runs of a case: every
 * event's smallest sample and number of samples.  Where only the spread
 * differs (the program's own work varies from one execution to the next),
 * the judgement of either run is the judgement of both. */
static bool same_judged_figures(const struct pmc__result *a, const struct pmc__result *b)
{
	for (size_t i = 0; i < a->nregions; i++) {
		const struct pmc__region_rec *ga = &a->regions[i];
		const struct pmc__region_rec *gb = pmc__result_region(b, ga->name);

		for (size_t k = 0; k < ga->nev; k++) {
			const struct pmc__stat_rec *eb = gb ? pmc__region_event(gb, ga->ev[k].label) : NULL;

			if (!eb || eb->min != ga->ev[k].min || eb->n != ga->ev[k].n)
				return false;
		}
	}
	return a->nregions == b->nregions;
}

/* May the re-run's judgement replace the run's?  When both counted alike
 * (diff empty); when only the spread differs, only if it reached the same
 * verdict: a check that judges more than the smallest sample must not
 * turn a failure into a pass on the other run's figures. */
bool pmc__rerun_adoptable(const struct pmc__result *res, const struct pmc__result *again, const char *diff)
{
	return same_judged_figures(res, again) && (!diff[0] || again->verdict == res->verdict);
}

/* Does a region of res count an event a table of functions' costs can
 * explain (any: a calls: event's costs are the calls each function made
 * to its function)? */
bool pmc__result_has_costs(const struct pmc__result *res)
{
	for (size_t j = 0; j < res->nregions; j++)
		if (res->regions[j].nev)
			return true;
	return false;
}

/* Did the case's own run record functions (pmcheck's valgrind tool counts
 * them): then no region needs one more run under callgrind for them. */
bool pmc__result_has_functions(const struct pmc__result *res)
{
	for (size_t j = 0; j < res->nregions; j++)
		if (res->regions[j].nfns)
			return true;
	return false;
}

/* Move the callgrind run's functions into the gate's regions (those that
 * have none). */
static void adopt_functions(struct pmc__result *res, struct pmc__result *cg)
{
	for (size_t j = 0; j < res->nregions; j++) {
		struct pmc__region_rec *g = &res->regions[j];
		struct pmc__region_rec *h = (struct pmc__region_rec *)pmc__result_region(cg, g->name);

		if (!h || g->nfns || !h->nfns || h->nev != g->nev)
			continue;
		g->fns = h->fns;
		g->nfns = h->nfns;
		h->fns = NULL;
		h->nfns = 0;
	}
}

/* The callgrind run judged the very figures the gate measured: its
 * judgement, which could name the functions (and excuse layout), replaces
 * the tool's; the figures, the engine and the objects stay the gate's. */
static void adopt_judgement(struct pmc__result *res, struct pmc__result *cg)
{
	struct pmc__check_rec *checks = res->checks;
	size_t nchecks = res->nchecks;
	char *reason = res->reason;

	res->checks = cg->checks;
	res->nchecks = cg->nchecks;
	res->reason = cg->reason;
	res->verdict = cg->verdict;
	cg->checks = checks;
	cg->nchecks = nchecks;
	cg->reason = reason;
	adopt_functions(res, cg);
	/* Notes that came of judging (layout, whose change it was). */
	for (size_t i = 0; i < cg->nnotes; i++) {
		bool seen = false;

		for (size_t k = 0; k < res->nnotes && !seen; k++)
			seen = !strcmp(res->notes[k], cg->notes[i]);
		if (!seen && strncmp(cg->notes[i], "sim:", 4)) {
			add_note(res, cg->notes[i]);
			cg->notes[i] = NULL;
		}
	}
}

/*
 * A case that failed on sim, counted by pmcheck's valgrind tool without
 * function costs (functions_wanted: not a gate's case, and a run that keeps
 * nothing): run it once more with them.  The
 * same engine counts the same, so the re-run's judgement, which names the
 * functions, is taken.  False when the re-run has none (a tool too old
 * for them) or counted otherwise: callgrind is asked then.
 */
static bool recount_with_functions(struct runner *r, const struct pmc_test_def *d,
				   const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__result again;
	char diff[512] = "", *note = NULL;
	double seconds;
	bool adopted = false;

	if (pmc__functions_wanted(r, d))
		return false;
	pmc__functions_forced = true;
	pmc__run_forked(r, d, o, &seconds, &again);
	pmc__functions_forced = false;
	if (!first_difference(res, &again, diff, sizeof(diff)))
		first_difference(&again, res, diff, sizeof(diff));
	if (pmc__rerun_adoptable(res, &again, diff) && pmc__result_has_functions(&again) &&
	    (again.verdict == PMC_FAIL || again.verdict == PMC_PASS)) {
		adopt_judgement(res, &again);
		if (asprintf(&note, "sim: run once more with pmcheck's valgrind tool counting function costs, for the functions behind the failure (%.3g s); it counted the same%s%s",
			     seconds, diff[0] ? " figures that were judged, with " : "", diff) >= 0)
			add_note(res, note);
		adopted = true;
	}
	pmc__result_release(&again);
	return adopted;
}

/*
 * A case that failed on sim as counted by pmcheck's valgrind tool, with no
 * function costs of its own: run it once more under callgrind, whose dumps
 * name the functions behind the failure.  The report stays the gate's: the tool's figures, measurements
 * and engine.  When callgrind counted the same, its judgement of those
 * figures (with the functions, and layout told apart) is taken; when it
 * counted otherwise, the tool's verdict stands and a note gives the
 * re-run's figures beside the gate's.  A case that failed before any
 * sample is not re-run: there is nothing to explain.
 */
static void recount_with_callgrind(struct runner *r, const struct pmc_test_def *d,
				   const struct pmc_test_options *o, struct pmc__result *res)
{
	struct pmc__result cg;
	char diff[512] = "";
	double seconds;
	char *note = NULL;
	int rc;

	if (r->calibrate || res->verdict != PMC_FAIL || !res->sim_engine ||
	    strcmp(res->sim_engine, "pmcheck") || !failed_on_samples(res) ||
	    pmc__result_has_functions(res) || recount_with_functions(r, d, o, res))
		return;
	run_for_functions(r, d, o, &seconds, &cg);
	if (!first_difference(res, &cg, diff, sizeof(diff)))
		first_difference(&cg, res, diff, sizeof(diff));
	if (pmc__rerun_adoptable(res, &cg, diff) && (cg.verdict == PMC_FAIL || cg.verdict == PMC_PASS)) {
		const char *was = cg.verdict == PMC_PASS ? "passed it" : "failed it too";

		adopt_judgement(res, &cg);
		rc = asprintf(&note, "sim: counted by pmcheck's valgrind tool; run once more under callgrind for the functions behind the failure (%.3g s), which counted the same and %s: the judgement is of the tool's figures, with callgrind's functions",
			      seconds, was);
	} else {
		rc = asprintf(&note, "sim: the figures are pmcheck's valgrind tool's; a re-run under callgrind for the functions behind the failure (%.3g s) %s%s%s%s",
			      seconds,
			      cg.verdict == PMC_PASS ? "passed" : cg.verdict == PMC_FAIL ? "failed" : cg.verdict == PMC_ERROR ? "ended in error: " : "did not fail: ",
			      cg.verdict == PMC_PASS || cg.verdict == PMC_FAIL ? "" : cg.reason ? cg.reason : "",
			      diff[0] ? "; re-run figures beside the gate's (the engines disagree, which is a bug: report it with both results): " : ", with no functions",
			      diff);
	}
	if (rc >= 0)
		add_note(res, note);
	pmc__result_release(&cg);
}

/*
 * Cases counted by pmcheck's valgrind tool that regressed or improved
 * against a baseline: run each once more under callgrind and keep its
 * functions in the case's regions, so that the comparison can say which
 * functions moved.  Returns how many cases got functions (the caller
 * compares again).
 */
size_t pmc__sim_functions_for_changes(struct runner *r, json_t *rep, struct pmc__results *run)
{
	size_t adopted = 0;

	for (size_t i = 0; i < run->n && r->backend == PMC_BACKEND_SIM; i++) {
		struct pmc__result *res = &run->cases[i], cg;
		struct pmc_test_options o;
		bool changed = false;
		size_t k;
		json_t *row;
		double seconds;
		char diff[512] = "", *note = NULL;

		if (!res->sim_engine || strcmp(res->sim_engine, "pmcheck") ||
		    pmc__result_has_functions(res) || !pmc__result_has_costs(res))
			continue;
		json_array_foreach(json_object_get(rep, "rows"), k, row) {
			const char *v = pmc__jstr(row, "verdict");

			if (!strcmp(pmc__jstr(row, "case"), res->name) &&
			    (!strcmp(v, "regression") || !strcmp(v, "improvement")))
				changed = true;
		}
		for (k = 0; changed && k < pmc__ncases(); k++) {
			char name[256];

			pmc__full_name(pmc__case(k), name, sizeof(name));
			if (!strcmp(name, res->name))
				break;
		}
		if (!changed || k == pmc__ncases())
			continue;
		pmc__effective_options(pmc__case(k), r->repeat, r->timeout, &o);
		if (!(r->timeout > 0))
			o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
		printf("%s moved: running it once more under callgrind for the functions behind it\n",
		       res->name);
		run_for_functions(r, pmc__case(k), &o, &seconds, &cg);
		if (!first_difference(res, &cg, diff, sizeof(diff)))
			first_difference(&cg, res, diff, sizeof(diff));
		adopt_functions(res, &cg);
		if (asprintf(&note, "sim: counted by pmcheck's valgrind tool; the functions are from one more run under callgrind (%.3g s), %s%s",
			     seconds, diff[0] ? "which counted otherwise: " : "which counted the same", diff) >= 0)
			add_note(res, note);
		pmc__result_release(&cg);
		adopted++;
	}
	return adopted;
}

void pmc__sample_regressions(struct runner *r, json_t *rep, struct pmc__results *run)
{
	for (size_t i = 0; i < run->n && !r->no_sampling && r->backend == PMC_BACKEND_PERF; i++) {
		struct pmc__result *res = &run->cases[i];
		struct pmc__sample_request req;
		struct pmc_test_options o;
		json_t *row;
		size_t k;

		if (!pmc__sampling_request_regressions(rep, res, &req))
			continue;
		for (k = 0; k < pmc__ncases(); k++) {
			char name[256];

			pmc__full_name(pmc__case(k), name, sizeof(name));
			if (!strcmp(name, res->name))
				break;
		}
		if (k == pmc__ncases())
			continue;
		pmc__effective_options(pmc__case(k), r->repeat, r->timeout, &o);
		printf("%s regressed: running it once more with %s sampled, for attribution\n",
		       res->name, req.label[0]);
		sample_again(r, pmc__case(k), &o, &req, res);
		json_array_foreach(json_object_get(rep, "rows"), k, row) {
			const char *v = pmc__jstr(row, "verdict");
			json_t *rows;

			if (strcmp(pmc__jstr(row, "case"), res->name) || strcmp(v, "regression"))
				continue;
			rows = pmc__sampled_rows_json(pmc__result_region(res, pmc__jstr(row, "region")),
						      pmc__jstr(row, "event"), 5);
			if (json_array_size(rows))
				json_object_set_new(row, "samples", rows);
			else
				json_decref(rows);
		}
	}
}

void pmc__run_one(struct runner *r, const struct pmc_test_def *d, double *seconds,
		    struct pmc__result *res)
{
	struct pmc_test_options o;

	pmc__effective_options(d, r->repeat, r->timeout, &o);
	if (r->backend == PMC_BACKEND_SIM && !(r->timeout > 0))
		o.timeout *= PMC__SIM_TIMEOUT_FACTOR;
	/* A case that does not run on this backend skips before it does
	 * anything: no process (and no valgrind) for it.  Under the sim
	 * backend every other case is a fresh process anyway. */
	if ((d->opt.backends && !(d->opt.backends & r->backend)) ||
	    (r->no_fork && r->backend != PMC_BACKEND_SIM)) {
		double t0 = pmc__child_now();

		alarm((unsigned)pmc__ceil(o.timeout));
		if (pmc__run_case(d, &o, r->backend, r->strict, res))
			pmc__case_error_result(d, "out of memory building the result", res);
		alarm(0);
		*seconds = pmc__child_now() - t0;
	} else {
		pmc__run_forked(r, d, &o, seconds, res);
		if (r->backend == PMC_BACKEND_SIM)
			recount_with_callgrind(r, d, &o, res);
		else
			attribute_by_sampling(r, d, &o, res);
	}
	res->has_duration = true;
	res->duration_s = *seconds;
	res->timeout_s = o.timeout;
}
