/* SPDX-License-Identifier: MIT */
/*
 * Gates: calibration (recording budgets from measurements) and the budgets
 * of cases that did not run.  The hwdb as the runner's budget source is
 * expect.c.
 * The baseline comparison is compare.c.
 *
 * Over 600 lines because calibration's policy is one sequence
 * (pmc__calibrate_case, about 220 lines: exact, noisy and per-iteration
 * bounds, the layout runs, the library lines) that is read as a whole,
 * beside the few rules it applies and the holes of cases that did not run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"
#include "util/util_int.h"
#include "util/arith.h"

/* ---- calibration -------------------------------------------------------------------- */

int pmc__calibration_key(const char *backend, const char *choice, char *key, size_t size,
			 char *why, size_t why_size)
{
	static const char *const names[PMC_HWDB_NLEVELS] = {
		[PMC_HWDB_SIGNATURE] = "signature", [PMC_HWDB_MODEL] = "model",
		[PMC_HWDB_VENDOR] = "vendor",       [PMC_HWDB_ARCH] = "arch",
		[PMC_HWDB_ANY] = "any",
	};
	struct pmc_cpu_id cpu;
	int level = -1, rc;

	pmc_cpu_identify(&cpu);
	/* This release's key is no level of the CPU's chain (pmc_hwdb_keys). */
	if (choice && !strcmp(choice, "os")) {
		rc = pmc__os_key(key, size);
		if (rc)
			snprintf(why, why_size, "--calibrate-key=os: no release key here (/etc/os-release has no ID and VERSION_ID%s)",
				 rc == -EINVAL ? " that make a directory name" : "");
		return rc ? -ENOENT : 0;
	}
	if (!choice || !*choice) {
		char model[PMC_HWDB_KEY_MAX];

		level = pmc_hwdb_key_at(pmc__hwdb(), backend, cpu.signature, PMC_HWDB_MODEL, model,
					sizeof(model)) == 0 ? PMC_HWDB_MODEL : PMC_HWDB_SIGNATURE;
		choice = names[level];
	}
	for (int i = 0; i < PMC_HWDB_NLEVELS && level < 0; i++)
		if (!strcmp(choice, names[i]))
			level = i;
	if (level < 0) {
		snprintf(why, why_size, "--calibrate-key=%s: expected signature, model, vendor, arch, os or any", choice);
		return -EINVAL;
	}
	rc = pmc_hwdb_key_at(pmc__hwdb(), backend, cpu.signature, (enum pmc_hwdb_level)level, key, size);
	if (rc == -ENOENT && level == PMC_HWDB_SIGNATURE)
		snprintf(why, why_size, "no budget key for CPU signature \"%s\"", cpu.signature);
	else if (rc == -ENOENT && level == PMC_HWDB_MODEL)
		snprintf(why, why_size,
			 "no hwdb model matches \"%s\": add a line to a map.ini, or use --calibrate-key=signature",
			 cpu.signature);
	else if (rc)
		snprintf(why, why_size, "no %s key for \"%s\"", choice, cpu.signature);
	return rc ? -ENOENT : 0;
}

/*
 * On the sim backend, counts of what the program executes (instructions,
 * data reads and writes, branches) repeat exactly for one binary, while
 * cache and branch misses depend on the simulated caches' and predictor's
 * state, which the layout of everything that ran before changes (measured:
 * L1 misses of one region 92..161 over the reps of one run).
 */
static bool sim_event_deterministic(const struct pmc__event_rec *e)
{
	static const unsigned exact[] = { PMC_SIM_IR, PMC_SIM_DR, PMC_SIM_DW, PMC_SIM_BC,
					  PMC_SIM_BI };
	const char *p = e ? e->sim_columns : NULL;

	if (!p || !*p)
		return false;
	if (!strcmp(p, "calls")) /* callgrind counts every call */
		return true;
	while (*p) {
		size_t len = strcspn(p, "+"), k;

		for (k = 0; k < sizeof(exact) / sizeof(exact[0]); k++)
			if (strlen(pmc_sim_column_name(exact[k])) == len &&
			    !strncmp(p, pmc_sim_column_name(exact[k]), len))
				break;
		if (k == sizeof(exact) / sizeof(exact[0]))
			return false;
		p += len + (p[len] == '+');
	}
	return true;
}

bool pmc__event_deterministic(const struct pmc__result *r, const struct pmc__event_rec *ev,
			      const char *spelling, const struct pmc_hwdb_model *model)
{
	const char *kind = ev && ev->kind ? ev->kind : "";

	if (r->backend && !strcmp(r->backend, "sim"))
		return sim_event_deterministic(ev);
	return !strcmp(kind, "breakpoint") || !strcmp(kind, "uprobe") ||
	       (model && pmc_hwdb_model_deterministic(model, spelling)) ||
	       (model && ev && ev->name && pmc_hwdb_model_deterministic(model, ev->name));
}

bool pmc__calibration_noisy(const struct pmc__result *run)
{
	for (size_t i = 0; i < run->nchecks; i++) {
		const struct pmc__check_rec *c = &run->checks[i];

		if (c->kind == PMC_EXPECT_KIND_BUDGET &&
		    !pmc__event_deterministic(run, pmc__result_event(run, c->event), c->event, NULL))
			return true;
	}
	return false;
}

/*
 * Counts that do not depend on the CPU model: function calls (uprobes),
 * breakpoint hits, page faults.  Their budgets are filed under "any" unless
 * the user chose a key.  The record's canonical name and kind say which.
 */
bool pmc__cpu_independent(const struct pmc__event_rec *e)
{
	static const char *const faults[] = { "page-faults", "minor-faults", "major-faults" };

	if (!e || !e->kind || !e->name)
		return false;
	if (!strcmp(e->kind, "uprobe") || !strcmp(e->kind, "breakpoint"))
		return true;
	if (strcmp(e->kind, "software"))
		return false;
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (!strncmp(e->name, faults[i], strlen(faults[i])))
			return true;
	return false;
}

/*
 * Record budgets for every budget expectation of one case from `nruns`
 * results of it (matched by region and event, never by position).  Policy
 * (hwdb/README.md), written into each line's comment so the file shows it:
 *   - deterministic (breakpoint and uprobe counts; the model's
 *     deterministic list; executed-work counts on sim), every run equal:
 *     "= N", or "N +-T%" with a calibration tolerance;
 *   - deterministic but varied: the observed range "lo..hi" (widened by
 *     the tolerance, if any) and a warning that says why: the code under
 *     test did different work in different runs.  Never a fixed margin;
 *   - noisy (everything else): "<= ceil(max + slack)", the slack being the
 *     margin, twice the spread seen, or PMC__NOISY_MIN_SLACK counts,
 *     whichever is widest.  On sim each run
 *     has its own memory layout (cal->layouts), since misses depend on it.
 * Returns the number of budgets written, or -1 on error.
 */
#define PMC__NOISY_MIN_SLACK 2.0

/*
 * Beside the budgets (budgets/KEY/SUITE.functions.json): the functions each
 * region of the case spent its events in when calibrated (sim; for a
 * calls: event, the calls each function made to its function), so that a
 * failed budget can say which function changed without a baseline file.
 * The file keeps the suite's other cases; written atomically.
 */
static int write_functions(const struct pmc__result *first, const char *dir, const char *key,
			   FILE *out)
{
	char path[PATH_MAX];
	json_t *doc, *cases, *regions = json_object();
	int rc = 0;

	for (size_t j = 0; j < first->nregions; j++)
		if (first->regions[j].nfns)
			json_object_set_new(regions, first->regions[j].name,
					    pmc__functions_json(&first->regions[j]));
	if (json_object_size(regions) == 0) {
		json_decref(regions);
		return 0;
	}
	if (snprintf(path, sizeof(path), "%s/budgets/%s/%s%s", dir, key, first->suite,
		     PMC__FUNCTIONS_SUFFIX) >= (int)sizeof(path)) {
		json_decref(regions);
		return -ENAMETOOLONG;
	}
	{
		char why[PATH_MAX + 256];

		rc = pmc__hwdb_json_load(path, &doc, why, sizeof(why));
		if (rc && rc != -ENOENT) {
			fprintf(out, "  error: %s\n", why);
			json_decref(regions);
			return rc;
		}
	}
	if (!json_is_object(doc) || !json_is_object(json_object_get(doc, "cases"))) {
		json_decref(doc);
		doc = json_pack("{s:s, s:{}}", "schema", "pmcheck-functions/1", "cases");
	}
	cases = json_object_get(doc, "cases");
	json_object_set_new(cases, first->name, regions);
	rc = pmc__write_json(path, doc);
	json_decref(doc);
	if (rc == 0)
		fprintf(out, "  %s [%s]: the functions of each region, for attribution\n", path,
			first->name);
	return rc;
}

/* Each library of a[] that b[] does not hold as it is, as a line of the
 * budget file after sign ("-" went, "+" came). */
static void show_libraries(FILE *out, const char *sign, const struct pmc_library *a, size_t na,
			   const struct pmc_library *b, size_t nb)
{
	for (size_t i = 0; i < na; i++) {
		size_t j = 0;

		while (j < nb && strcmp(a[i].name, b[j].name))
			j++;
		if (j < nb && !strcmp(a[i].id, b[j].id) && !strcmp(a[i].package, b[j].package) &&
		    !strcmp(a[i].version, b[j].version))
			continue;
		fprintf(out, "  %s library:%s = %s%s%s%s%s\n", sign, a[i].name, a[i].id,
			a[i].package[0] ? " package:" : "", a[i].package, a[i].package[0] ? "=" : "",
			a[i].version);
	}
}

/*
 * The libraries the case ran with, in its section of the budget file under
 * key, after its budgets: a failure where one of them differs names it, with
 * both identities, for every budget of the case, under "any" too.  The
 * lines that changed are shown as budgets are.
 */
static void write_libraries(const struct pmc__result *first, const struct pmc_library *libs,
			    size_t n, const char *dir, const char *key, FILE *out)
{
	char path[PATH_MAX];
	struct pmc_library *was = NULL;
	size_t nwas = 0;
	struct pmc_error err;

	snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", dir, key, first->suite);
	if (pmc_hwdb_libraries(path, first->test, &was, &nwas, &err) == PMC_E_SYNTAX ||
	    pmc_hwdb_write_libraries(dir, key, first->suite, first->test, libs, n, &err)) {
		fprintf(out, "  warning: the libraries of %s were not recorded: %s\n", first->name,
			err.message);
		free(was);
		return;
	}
	show_libraries(out, "-", was, nwas, libs, n);
	show_libraries(out, "+", libs, n, was, nwas);
	free(was);
}

/*
 * Where a count that does not depend on the CPU goes: under this release's
 * key when the suite's budgets are kept there already (its libraries count
 * differently from another release's: calls of free in libexpat 2.5 and
 * 2.9), else under "any", which every machine reads.
 */
static const char *independent_key(const struct pmc__calibration *cal, const char *suite,
				   char *os, size_t size)
{
	char path[PATH_MAX];
	struct stat st;

	if (pmc__os_key(os, size) == 0 &&
	    (size_t)snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", cal->dir, os, suite) < sizeof(path) &&
	    stat(path, &st) == 0 && S_ISREG(st.st_mode))
		return os;
	return "any";
}

/*
 * A run's figure for a budget, as the whole region's count: a check judged
 * against a per-iteration budget measured per iteration (judge.c), one
 * judged otherwise the whole region.  Told apart by the region's own
 * statistic, which is the whole region's.
 */
static double region_total(const struct pmc__result *run, const struct pmc__check_rec *c,
			   uint64_t iterations)
{
	const struct pmc__region_rec *rg = pmc__result_region(run, c->region);
	const struct pmc__stat_rec *st = NULL;
	double whole;

	if (iterations <= 1 || !rg)
		return c->measured;
	for (size_t k = 0; k < rg->nev; k++)
		if (rg->ev[k].label && !strcmp(rg->ev[k].label, c->event))
			st = &rg->ev[k];
	if (!st)
		return c->measured;
	whole = !c->has_statistic || c->statistic == PMC_STAT_MIN ? (double)st->min
		: c->statistic == PMC_STAT_MAX			   ? (double)st->max
								   : st->median;
	return fabs(c->measured - whole) < 0.5 ? c->measured : c->measured * (double)iterations;
}

/*
 * A per-iteration figure in a budget line.  Exact (dir 0): the shortest
 * text (at most 15 significant digits, hwdb's limit) that times the
 * iterations rounds back to the whole-region count, which is how the judge
 * reads an exact per-iteration budget (judge.c).  A bound's side: rounded
 * outwards to a thousandth (dir > 0 up, < 0 down).
 */
static void per_iteration_text(char *buf, size_t size, double total, uint64_t iterations, int dir)
{
	double v = total / (double)iterations;

	if (dir > 0)
		v = pmc__ceil(v * 1000.0) / 1000.0;
	else if (dir < 0)
		v = pmc__floor(v * 1000.0) / 1000.0;
	for (int prec = 1; prec <= 15; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (dir ? strtod(buf, NULL) == v : fabs(strtod(buf, NULL) * (double)iterations - total) < 0.5)
			return;
	}
}

/* A bound's figures, per iteration when the region's iterations are many. */
static void bound_figure(char *buf, size_t size, double total, uint64_t iterations, int dir)
{
	if (iterations > 1)
		per_iteration_text(buf, size, total, iterations, dir);
	else
		snprintf(buf, size, "%.0f", total);
}

/* Widen [*lo, *hi] to the least and largest sample of (region, event) in run. */
static void sample_range(const struct pmc__result *run, const char *region, const char *event,
			 double *lo, double *hi)
{
	const struct pmc__region_rec *rg = pmc__result_region(run, region);

	for (size_t k = 0; rg && k < rg->nev; k++)
		if (rg->ev[k].label && !strcmp(rg->ev[k].label, event) && rg->ev[k].n > 0) {
			*lo = pmc__fmin(*lo, rg->ev[k].min);
			*hi = pmc__fmax(*hi, rg->ev[k].max);
		}
}

/* ceil(2 * sqrt(x)) for a count x >= 0, without libm (util/arith.h): the
 * least s with s * s >= 4x, found by bisection over whole numbers. */
static double twice_root(double x)
{
	uint64_t lo = 0, hi = 1, four = x > 0 && x < 1e18 ? (uint64_t)pmc__ceil(x) * 4 : 0;

	while (hi * hi < four)
		hi *= 2;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (mid * mid >= four)
			hi = mid;
		else
			lo = mid + 1;
	}
	return (double)lo;
}

int pmc__calibrate_case(const struct pmc__result *runs, size_t nruns,
			const struct pmc__calibration *cal, FILE *out)
{
	const struct pmc__result *first = &runs[0];
	struct pmc_hwdb_model model;
	struct pmc_hwdb_match m;
	struct pmc_cpu_id cpu;
	size_t i, r;
	const char *shown = NULL, *keys[2], *independent;
	char os[PMC_OS_KEY_MAX];
	size_t nkeys = 0;
	int written = 0;
	bool have_model;

	pmc_cpu_identify(&cpu);
	have_model = pmc_hwdb_match(pmc__hwdb(), cpu.signature, &m, &model) == 0;
	independent = independent_key(cal, first->suite, os, sizeof(os));
	/* Another program's budgets for a suite of the same name stay its own. */
	if (pmc__calibration_owner(cal->dir, cal->key, first->suite, out) ||
	    pmc__calibration_owner(cal->dir, independent, first->suite, out))
		return -1;
	if (first->verdict == PMC_SKIP || first->verdict == PMC_ERROR ||
	    (first->verdict == PMC_INCONCLUSIVE && first->nchecks == 0)) {
		fprintf(out, "  %s: not calibrated: %s: %s\n", first->name,
			pmc_verdict_name(first->verdict), first->reason ? first->reason : "");
		if (cal->missed)
			++*cal->missed;
		return 0;
	}
	for (i = 0; i < first->nchecks; i++) {
		const struct pmc__check_rec *chk = &first->checks[i];
		const char *region = chk->region, *event = chk->event;
		const struct pmc__event_rec *ev = pmc__result_event(first, event);
		const char *key = cal->key;
		double lo = INFINITY, hi = -INFINITY, tol = cal->tolerance_pct;
		size_t used;
		bool det, usable = true;
		char bound[256], old[1024];
		struct pmc_error err;

		const struct pmc__region_rec *rg = pmc__result_region(first, region);
		uint64_t iters = rg && rg->iterations > 1 ? rg->iterations : 1;
		const char *per = iters > 1 ? " per iteration" : "";
		char f1[48], f2[48], of[48] = "";

		if (chk->kind != PMC_EXPECT_KIND_BUDGET)
			continue;
		det = pmc__event_deterministic(first, ev, event, have_model ? &model : NULL);
		used = det && cal->exact_runs && cal->exact_runs < nruns ? cal->exact_runs : nruns;
		/* A figure per iteration holds for that many iterations: fixed
		 * costs are spread over them (said, so a build that runs another
		 * count knows why its figures moved). */
		if (iters > 1)
			snprintf(of, sizeof(of), " of %" PRIu64 " iterations", iters);
		for (r = 0; r < used; r++) {
			const struct pmc__check_rec *c =
				pmc__result_check(&runs[r], PMC_EXPECT_KIND_BUDGET, region, event);

			if (!c) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu ended before judging it (%s: %s)\n",
					first->name, region, event, r + 1,
					pmc_verdict_name(runs[r].verdict),
					runs[r].reason ? runs[r].reason : "");
				usable = false;
				if (cal->missed)
					++*cal->missed;
				break;
			}
			if (isnan(c->measured) || c->status == PMC__CHECK_INCONCLUSIVE ||
			    c->status == PMC__CHECK_ERROR) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu: %s\n", first->name,
					region, event, r + 1, c->message);
				usable = false;
				if (cal->missed)
					++*cal->missed;
				break;
			}
			lo = pmc__fmin(lo, region_total(&runs[r], c, iters));
			hi = pmc__fmax(hi, region_total(&runs[r], c, iters));
			/* A case whose threads count: every sample, not only
			 * the judged one.  A thread spinning until another has
			 * run repeats its least count in most samples of a run
			 * (31581 in 20 of 25 runs' minimum), but not in all. */
			if (det && cal->schedules && iters <= 1)
				sample_range(&runs[r], region, event, &lo, &hi);
		}
		if (!usable)
			continue;
		/* Calls, breakpoint hits and page faults are the program's:
		 * one budget for every CPU and for the simulator (which counts
		 * calls the same way). */
		if (!cal->key_chosen && pmc__cpu_independent(ev))
			key = independent;
		if (det && lo == hi && tol > 0) {
			bound_figure(f1, sizeof(f1), lo, iters, 0);
			snprintf(bound, sizeof(bound), "%s +-%g%%%s ; calibrated: %zu equal runs%s%s%s, tolerance %g%%",
				 f1, tol, per, used, of, cal->schedules ? " under " : "",
				 cal->schedules ? cal->schedules : "", tol);
		} else if (det && lo == hi) {
			bound_figure(f1, sizeof(f1), lo, iters, 0);
			snprintf(bound, sizeof(bound), "= %s%s ; calibrated: %zu equal runs%s%s%s, exact", f1, per,
				 used, of, cal->schedules ? " under " : "", cal->schedules ? cal->schedules : "");
		} else if (det) {
			/* The runs saw part of the range only (the sim runs
			 * alternate thread schedulers to bring it out): a count
			 * that varied is widened by twice the spread seen, as a
			 * noisy one is, never recorded exact. */
			double spread = 2.0 * (hi - lo);

			bound_figure(f1, sizeof(f1), pmc__floor(pmc__fmax(0, lo - spread) * (1.0 - tol / 100.0)),
				     iters, -1);
			bound_figure(f2, sizeof(f2), pmc__ceil((hi + spread) * (1.0 + tol / 100.0)), iters, 1);
			snprintf(bound, sizeof(bound), "%s..%s%s ; calibrated: varied over %zu runs%s%s (%.0f..%.0f), widened by twice the spread%s",
				 f1, f2, per, used,
				 cal->schedules ? " under " : cal->layouts ? " under two thread schedulers" : "",
				 cal->schedules ? cal->schedules : "", lo, hi,
				 tol > 0 ? " and the tolerance" : "");
			fprintf(out, "  warning: %s %s %s should repeat exactly but varied over %zu runs (%.0f..%.0f, %.0f apart): the code under test did different work in different runs (a random seed, the time, getrandom(2), addresses or thread timing); recorded the range seen, widened by twice its spread%s. Make the work repeatable (for example pin the seed, or keep threads out of the region) and calibrate again for an exact budget.\n",
				first->name, region, event, used, lo, hi, hi - lo,
				tol > 0 ? " widened by the tolerance" : "");
		} else {
			/* The margin, twice the spread seen, or 2 counts,
			 * whichever is widest: a few runs show only part of a
			 * noisy count's range, and runs that agreed on a small
			 * count (0 branch misses five times) say nothing of it.
			 * On sim the runs' layouts are what moves a count, so
			 * the spread over them is the bound's measure and no
			 * flat margin is added unless one was asked for: a
			 * count the layouts moved by 0.4% is not given 10%. */
			double slack = pmc__fmax(pmc__fmax(hi * cal->margin_pct / 100.0, 2.0 * (hi - lo)),
					    PMC__NOISY_MIN_SLACK);

			/* Code alignment is the one layout no run varies (a
			 * rebuild moves the program's code against its
			 * libraries'): at least twice the square root of the
			 * count, the spread of so many independent events. */
			if (cal->layouts && cal->margin_pct == 0)
				slack = pmc__fmax(slack, twice_root(hi));

			bound_figure(f1, sizeof(f1), pmc__ceil(hi + slack), iters, 1);
			if (cal->layouts && cal->margin_pct == 0)
				snprintf(bound, sizeof(bound), "<= %s%s ; calibrated: a miss count, %zu runs %.0f..%.0f over as many memory layouts%s, max + %.0f (twice the spread, or twice its square root)",
					 f1, per, nruns, lo, hi,
					 cal->exact_runs ? " (stack, environment and heap)" : "",
					 pmc__ceil(slack));
			else
				snprintf(bound, sizeof(bound), "<= %s%s ; calibrated: noisy, %zu runs %.0f..%.0f%s, max + %.0f (margin %g%%, twice the spread, or 2)",
					 f1, per, nruns, lo, hi, cal->layouts ? " over as many memory layouts" : "",
					 pmc__ceil(slack), cal->margin_pct);
		}
		if (pmc_hwdb_write_budget(cal->dir, key, first->suite, first->test, region, event,
					  bound, old, sizeof(old), &err) != 0) {
			fprintf(out, "  error: %s\n", err.message);
			return -1;
		}
		if (key != shown) { /* the file, once per key */
			int wrc = pmc__calibration_write(cal->dir, key, first->suite, first->test,
							 first->sim_engine, first->objects,
							 first->nobjects);

			fprintf(out, "  %s/budgets/%s/%s.ini [%s]\n", cal->dir, key, first->suite,
				first->test);
			if (wrc)
				fprintf(out, "  warning: %s/budgets/%s/%s%s (who calibrated, which libraries) was not written: %s\n",
					cal->dir, key, first->suite, PMC__CALIBRATION_SUFFIX, strerror(-wrc));
			if (nkeys < sizeof(keys) / sizeof(keys[0]) && !(nkeys && !strcmp(keys[0], key)))
				keys[nkeys++] = key;
		}
		shown = key;
		{
			char line[1400];

			/* A diff of what changed: a line written again as it was
			 * is one line, not a - and + pair. */
			snprintf(line, sizeof(line), "%s = %s %s", region, event, bound);
			if (old[0] && !strcmp(old, line)) {
				fprintf(out, "  = %s\n", line);
			} else {
				if (old[0])
					fprintf(out, "  - %s\n", old);
				fprintf(out, "  + %s\n", line);
			}
		}
		written++;
	}
	/* The libraries after the budgets, once per file written. */
	if (nkeys) {
		struct pmc_library *libs = NULL;
		const char **paths = NULL;
		size_t nlibs = 0;

		if (pmc__libraries_of(first, true, &libs, &paths, &nlibs))
			fprintf(out, "  warning: the libraries of %s were not recorded: out of memory\n",
				first->name);
		else {
			/* One line a name: the first object of a soname is the
			 * one symbols bind to (and the one a run compares with);
			 * another of that name, dlopen()ed by its path, is its
			 * company, and a second line would be refused on read. */
			size_t kept = 0;

			for (size_t i = 0; i < nlibs; i++) {
				bool seen = false;

				for (size_t j = 0; j < kept && !seen; j++)
					seen = !strcmp(libs[j].name, libs[i].name);
				if (!seen)
					libs[kept++] = libs[i];
			}
			for (size_t k = 0; k < nkeys; k++)
				write_libraries(first, libs, kept, cal->dir, keys[k], out);
		}
		free(libs);
		free(paths);
	}
	/* Beside every file of budgets written: a calls: budget, under "any"
	 * or the release's key, is explained by its callers from there. */
	for (size_t k = 0; first->backend && !strcmp(first->backend, "sim") && k < nkeys; k++) {
		int rc = write_functions(first, cal->dir, keys[k], out);

		if (rc)
			fprintf(out, "  warning: the functions for attribution were not written to %s/budgets/%s: %s\n",
				cal->dir, keys[k], strerror(-rc));
	}
	return written;
}

/* ---- budgets of cases that did not run ------------------------------------------ */

struct section_seen {
	char (*name)[128];
	int *line;
	size_t n, cap;
};

static int note_section(void *user, const char *section, const char *name, const char *value,
			int line, struct pmc_error *err)
{
	struct section_seen *s = user;

	(void)name;
	(void)value;
	(void)err;
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], section))
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 16;
		void *a = realloc(s->name, cap * sizeof(*s->name)), *b;

		if (!a)
			return -ENOMEM;
		s->name = a;
		b = realloc(s->line, cap * sizeof(*s->line));
		if (!b)
			return -ENOMEM;
		s->line = b;
		s->cap = cap;
	}
	snprintf(s->name[s->n], sizeof(s->name[0]), "%s", section);
	s->line[s->n++] = line;
	return 0;
}

/* Sections of one budget file (the tests it budgets), with their lines. */
static int budget_sections(const char *path, struct section_seen *s)
{
	struct pmc_error err;
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t len = 0;
	int rc;

	if (!f)
		return -errno;
	{
		FILE *m = open_memstream(&text, &len);
		char buf[4096];
		size_t n;

		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
	}
	fclose(f);
	rc = pmc_ini_parse_text(path, text, len, note_section, s, &err);
	free(text);
	return rc;
}

static const struct pmc__result *result_named(const struct pmc__results *run, const char *suite,
					      const char *test)
{
	for (size_t i = 0; i < run->n; i++)
		if (!strcmp(run->cases[i].suite, suite) && !strcmp(run->cases[i].test, test))
			return &run->cases[i];
	return NULL;
}

int pmc__budgets_not_run(const struct pmc__results *run, const char *backend, FILE *out)
{
	char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX], path[PATH_MAX];
	struct pmc_cpu_id cpu;
	size_t nkeys, k, d, i, c, problems = 0;

	if (!pmc__hwdb() || pmc__ncases() == 0)
		return 0;
	if (!strcmp(backend, "sim")) {
		pmc__sim_profile_key(pmc__case(0), keys[0], sizeof(keys[0]));
		nkeys = 1;
	} else {
		pmc_cpu_identify(&cpu);
		nkeys = pmc_hwdb_keys(pmc__hwdb(), backend, cpu.signature, keys, PMC_HWDB_MAX_KEYS);
	}
	for (c = 0; c < pmc__ncases(); c++) {
		const char *suite = pmc__case(c)->suite;
		bool first = true;

		/* Each suite once. */
		for (i = 0; i < c && first; i++)
			first = strcmp(pmc__case(i)->suite, suite) != 0;
		if (!first)
			continue;
		for (k = 0; k < nkeys; k++) {
			for (d = 0; d < pmc_hwdb_ndirs(pmc__hwdb()); d++) {
				struct section_seen s = { 0 };

				snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", pmc_hwdb_dir(pmc__hwdb(), d),
					 keys[k], suite);
				if (budget_sections(path, &s) == 0) {
					for (i = 0; i < s.n; i++) {
						const struct pmc__result *r = result_named(run, suite, s.name[i]);

						if (!r) {
							fprintf(out, "error: %s:%d: budgets for %s.%s, which is not a case of this program (renamed or removed? rename or delete the section)\n",
								path, s.line[i], suite, s.name[i]);
							problems++;
						} else if (r->verdict == PMC_SKIP) {
							fprintf(out, "error: %s.%s has budgets (%s:%d) but did not run: %s\n",
								suite, s.name[i], path, s.line[i],
								r->reason ? r->reason : "skipped");
							problems++;
						}
					}
				}
				free(s.name);
				free(s.line);
			}
		}
	}
	return (int)problems;
}
