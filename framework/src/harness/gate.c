/* SPDX-License-Identifier: MIT */
/*
 * Gates: the hwdb as the runner's budget source, calibration (recording
 * budgets from measurements), and baseline comparison with its reports.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"

/* ---- hwdb as budget source --------------------------------------------------------- */

static struct pmc_hwdb *gate_db;
static struct pmc_budget_source gate_source;
static const char *const *gate_dirs;
static size_t gate_ndirs;

/* The hwdb is opened at the first lookup when setup was lazy. */
static int hwdb_lookup(void *ctx, const struct pmc_budget_key *key, struct pmc_budget *out,
		       struct pmc_error *err)
{
	(void)ctx;
	if (!gate_db) {
		int rc = pmc_hwdb_open(&gate_db, gate_dirs, gate_ndirs, err);

		if (rc)
			return rc;
	}
	return pmc_hwdb_budget(gate_db, key, out, err);
}

static size_t hwdb_suite_keys(void *ctx, const char *backend, const char *suite,
			      char keys[][PMC_HWDB_KEY_MAX], size_t max)
{
	struct pmc_error err;

	(void)ctx;
	if (!gate_db && pmc_hwdb_open(&gate_db, gate_dirs, gate_ndirs, &err))
		return 0;
	return pmc_hwdb_suite_keys(gate_db, backend, suite, keys, max);
}

const char *pmc__hwdb_first_dir(void)
{
	return gate_ndirs ? gate_dirs[0] : NULL;
}

int pmc__hwdb_setup(const char *const *dirs, size_t n, bool lazy, struct pmc_error *err)
{
	gate_dirs = dirs;
	gate_ndirs = n;
	if (!lazy) {
		int rc = pmc_hwdb_open(&gate_db, dirs, n, err);

		if (rc)
			return rc;
	}
	gate_source.lookup = hwdb_lookup;
	gate_source.suite_keys = hwdb_suite_keys;
	gate_source.ctx = NULL;
	if (!pmc__budget_source())
		pmc_harness_set_budget_source(&gate_source);
	return 0;
}

struct pmc_hwdb *pmc__hwdb(void)
{
	return gate_db;
}

void pmc__hwdb_teardown(void)
{
	if (pmc__budget_source() == &gate_source)
		pmc_harness_set_budget_source(NULL);
	pmc_hwdb_free(gate_db);
	gate_db = NULL;
}

/* ---- calibration -------------------------------------------------------------------- */

static const char *jstr(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

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
	if (!choice || !*choice) {
		char model[PMC_HWDB_KEY_MAX];

		level = pmc_hwdb_key_at(gate_db, backend, cpu.signature, PMC_HWDB_MODEL, model,
					sizeof(model)) == 0 ? PMC_HWDB_MODEL : PMC_HWDB_SIGNATURE;
		choice = names[level];
	}
	for (int i = 0; i < PMC_HWDB_NLEVELS && level < 0; i++)
		if (!strcmp(choice, names[i]))
			level = i;
	if (level < 0) {
		snprintf(why, why_size, "--calibrate-key=%s: expected signature, model, vendor, arch or any", choice);
		return -EINVAL;
	}
	rc = pmc_hwdb_key_at(gate_db, backend, cpu.signature, (enum pmc_hwdb_level)level, key, size);
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
static bool sim_event_deterministic(const char *event)
{
	const unsigned exact = 1u << PMC_SIM_IR | 1u << PMC_SIM_DR | 1u << PMC_SIM_DW |
			       1u << PMC_SIM_BC | 1u << PMC_SIM_BI;
	struct pmc_event_spec s;
	unsigned mask;

	if (pmc_event_parse(event, &s, NULL) || pmc_sim_columns(&s, &mask, NULL))
		return false;
	return (mask & ~exact) == 0;
}

/*
 * Counts that do not depend on the CPU model: function calls (uprobes),
 * breakpoint hits, page faults.  Their budgets are filed under "any" unless
 * the user chose a key.
 */
static bool cpu_independent(const char *kind, const char *event)
{
	static const char *const faults[] = { "page-faults", "minor-faults", "major-faults" };
	struct pmc_event_spec s;

	if (!strcmp(kind, "uprobe") || !strcmp(kind, "breakpoint"))
		return true;
	if (strcmp(kind, "software") || pmc_event_parse(event, &s, NULL))
		return false;
	for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
		if (!strcmp(s.name, faults[i]) || !strncmp(s.name, faults[i], strlen(faults[i])))
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

int pmc__calibrate_case(const struct pmc__result *runs, size_t nruns,
			const struct pmc__calibration *cal, FILE *out)
{
	const struct pmc__result *first = &runs[0];
	struct pmc_hwdb_model model;
	struct pmc_hwdb_match m;
	struct pmc_cpu_id cpu;
	size_t i, r;
	const char *shown = NULL;
	int written = 0;
	bool have_model;

	pmc_cpu_identify(&cpu);
	have_model = pmc_hwdb_match(gate_db, cpu.signature, &m, &model) == 0;
	if (first->verdict == PMC_SKIP || first->verdict == PMC_ERROR) {
		fprintf(out, "  %s: not calibrated: %s: %s\n", first->name,
			pmc_verdict_name(first->verdict), first->reason ? first->reason : "");
		return 0;
	}
	for (i = 0; i < first->nchecks; i++) {
		const struct pmc__check_rec *chk = &first->checks[i];
		const char *region = chk->region, *event = chk->event;
		const char *kind = pmc__result_event_kind(first, event), *key = cal->key;
		double lo = INFINITY, hi = -INFINITY, tol = cal->tolerance_pct;
		bool det, usable = true;
		char bound[256], old[1024];
		struct pmc_error err;

		if (chk->kind != PMC_EXPECT_KIND_BUDGET)
			continue;
		for (r = 0; r < nruns; r++) {
			const struct pmc__check_rec *c =
				pmc__result_check(&runs[r], PMC_EXPECT_KIND_BUDGET, region, event);

			if (!c) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu ended before judging it (%s: %s)\n",
					first->name, region, event, r + 1,
					pmc_verdict_name(runs[r].verdict),
					runs[r].reason ? runs[r].reason : "");
				usable = false;
				break;
			}
			if (isnan(c->measured) || c->status == PMC__CHECK_INCONCLUSIVE ||
			    c->status == PMC__CHECK_ERROR) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu: %s\n", first->name,
					region, event, r + 1, c->message);
				usable = false;
				break;
			}
			lo = fmin(lo, c->measured);
			hi = fmax(hi, c->measured);
		}
		if (!usable)
			continue;
		if (first->backend && !strcmp(first->backend, "sim"))
			det = sim_event_deterministic(event);
		else
			det = !strcmp(kind, "breakpoint") || !strcmp(kind, "uprobe") ||
			      (have_model && pmc_hwdb_model_deterministic(&model, event));
		if (!cal->key_chosen && !(first->backend && !strcmp(first->backend, "sim")) &&
		    cpu_independent(kind, event))
			key = "any";
		if (det && lo == hi && tol > 0) {
			snprintf(bound, sizeof(bound), "%.0f +-%g%% ; calibrated: %zu equal runs, tolerance %g%%",
				 lo, tol, nruns, tol);
		} else if (det && lo == hi) {
			snprintf(bound, sizeof(bound), "= %.0f ; calibrated: %zu equal runs, exact", lo, nruns);
		} else if (det) {
			snprintf(bound, sizeof(bound), "%.0f..%.0f ; calibrated: varied over %zu runs%s%s",
				 floor(lo * (1.0 - tol / 100.0)), ceil(hi * (1.0 + tol / 100.0)), nruns,
				 tol > 0 ? ", widened by the tolerance" : "",
				 tol > 0 ? "" : ", the range seen");
			fprintf(out, "  warning: %s %s %s should repeat exactly but varied over %zu runs (%.0f..%.0f, %.0f apart): the code under test did different work in different runs (a random seed, the time, getrandom(2), addresses or thread timing); recorded the range seen%s. Make the work repeatable (for example pin the seed) and calibrate again for an exact budget.\n",
				first->name, region, event, nruns, lo, hi, hi - lo,
				tol > 0 ? " widened by the tolerance" : "");
		} else {
			/* The margin, twice the spread seen, or 2 counts,
			 * whichever is widest: a few runs show only part of a
			 * noisy count's range, and runs that agreed on a small
			 * count (0 branch misses five times) say nothing of it. */
			double slack = fmax(fmax(hi * cal->margin_pct / 100.0, 2.0 * (hi - lo)),
					    PMC__NOISY_MIN_SLACK);

			snprintf(bound, sizeof(bound), "<= %.0f ; calibrated: noisy, %zu runs %.0f..%.0f%s, max + %.0f (margin %g%%, twice the spread, or 2)",
				 ceil(hi + slack), nruns, lo, hi, cal->layouts ? " over as many memory layouts" : "",
				 ceil(slack), cal->margin_pct);
		}
		if (pmc_hwdb_write_budget(cal->dir, key, first->suite, first->test, region, event,
					  bound, old, sizeof(old), &err) != 0) {
			fprintf(out, "  error: %s\n", err.message);
			return -1;
		}
		if (key != shown) /* the file, once per key */
			fprintf(out, "  %s/budgets/%s/%s.ini [%s]\n", cal->dir, key, first->suite,
				first->test);
		shown = key;
		if (old[0])
			fprintf(out, "  - %s\n", old);
		fprintf(out, "  + %s = %s %s\n", region, event, bound);
		written++;
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

	if (!gate_db || pmc__ncases() == 0)
		return 0;
	if (!strcmp(backend, "sim")) {
		pmc__sim_profile_key(pmc__case(0), keys[0], sizeof(keys[0]));
		nkeys = 1;
	} else {
		pmc_cpu_identify(&cpu);
		nkeys = pmc_hwdb_keys(gate_db, backend, cpu.signature, keys, PMC_HWDB_MAX_KEYS);
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
			for (d = 0; d < pmc_hwdb_ndirs(gate_db); d++) {
				struct section_seen s = { 0 };

				snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", pmc_hwdb_dir(gate_db, d),
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

/* ---- comparison ---------------------------------------------------------------------- */

int pmc__tolerance_add(struct pmc__tolerance *t, const char *spec, char *why, size_t size)
{
	const char *eq = strrchr(spec, '=');
	const char *num = eq ? eq + 1 : spec;
	char *end;
	double v = strtod(num, &end);

	if (*end == '%')
		end++;
	if (end == num || *end || !(v >= 0) || v > 1000) {
		snprintf(why, size, "--tolerance=%s: expected PCT or EVENT=PCT (e.g. 0.5, or instructions:u=0.5)", spec);
		return -1;
	}
	if (!eq) {
		t->all = v;
		t->all_set = true;
		return 0;
	}
	if (t->n >= PMC__MAX_TOLERANCES || (size_t)(eq - spec) >= sizeof(t->event[0]) || eq == spec) {
		snprintf(why, size, "--tolerance=%s: at most %d events, names under %zu characters", spec,
			 PMC__MAX_TOLERANCES, sizeof(t->event[0]));
		return -1;
	}
	snprintf(t->event[t->n], sizeof(t->event[0]), "%.*s", (int)(eq - spec), spec);
	t->pct[t->n++] = v;
	return 0;
}

/* The tolerance for one event: its own, else the one for all events, else
 * the default (exact for deterministic events, 2% for noisy ones). */
static double tolerance_for(const struct pmc__tolerance *t, const char *event, bool det,
			    bool *chosen)
{
	*chosen = true;
	for (size_t i = 0; t && i < t->n; i++)
		if (!strcmp(t->event[i], event))
			return t->pct[i];
	if (t && t->all_set)
		return t->all;
	*chosen = false;
	return det ? 0 : 2.0;
}

/*
 * One row: verdict for an event of a region present in both.
 *   deterministic (every sample equal, both sides): exact unless the user
 *   gave a tolerance for the event; a change within it is "tolerated";
 *   noisy: needs 3+ samples a side; regression when the minimum grew by
 *   more than the tolerance AND the new minimum is above the old maximum
 *   (the distributions do not overlap); improvement symmetrically; the
 *   tolerance is max(its tolerance, twice the larger relative spread).
 */
static json_t *compare_row(const char *cname, const char *rname, const char *ev,
			   const struct pmc__stat_rec *os, const struct pmc__stat_rec *ns,
			   const struct pmc__tolerance *tols, const char *blocked)
{
	double omin = (double)os->min, omax = (double)os->max, nmin = (double)ns->min,
	       nmax = (double)ns->max;
	size_t on = os->n, nn = ns->n;
	/* One sample cannot show that an event repeats exactly. */
	bool det = omin == omax && nmin == nmax && on >= 2 && nn >= 2, chosen;
	double change = omin > 0 ? 100.0 * (nmin - omin) / omin : (nmin > 0 ? INFINITY : 0);
	double spread = 0, tol, given = tolerance_for(tols, ev, det, &chosen);
	const char *verdict;
	char reason[256] = "";
	json_t *row;

	if (omin > 0)
		spread = fmax(spread, (omax - omin) / omin);
	if (nmin > 0)
		spread = fmax(spread, (nmax - nmin) / nmin);
	tol = det ? given : fmax(given, 200.0 * spread);
	if (blocked) {
		verdict = "no-verdict";
		snprintf(reason, sizeof(reason), "%s", blocked);
	} else if (os->multiplexed + os->not_counted + os->other_threads + ns->multiplexed +
			   ns->not_counted + ns->other_threads > 0) {
		verdict = "no-verdict";
		snprintf(reason, sizeof(reason), "partial counts (multiplexed, never counted, or other threads uncounted)");
	} else if (det) {
		verdict = nmin == omin ? "same"
			  : fabs(change) <= tol ? "tolerated"
			  : nmin > omin ? "regression" : "improvement";
		if (chosen)
			snprintf(reason, sizeof(reason), "deterministic, tolerance %g%%", tol);
		else
			snprintf(reason, sizeof(reason), "deterministic: exact (every sample equal on each side)");
	} else if (on < 3 || nn < 3) {
		verdict = "no-verdict";
		snprintf(reason, sizeof(reason), "noisy and only %zu/%zu samples (need 3 a side): run with --repeat", on, nn);
	} else if (change > tol && nmin > omax) {
		verdict = "regression";
		snprintf(reason, sizeof(reason), "noisy: beyond tolerance %.2f%%, no overlap", tol);
	} else if (change < -tol && nmax < omin) {
		verdict = "improvement";
		snprintf(reason, sizeof(reason), "noisy: beyond tolerance %.2f%%, no overlap", tol);
	} else {
		verdict = "noise";
		snprintf(reason, sizeof(reason), "noisy: within tolerance %.2f%% or overlapping", tol);
	}
	row = json_pack("{s:s, s:s, s:s, s:{s:f, s:f, s:I}, s:{s:f, s:f, s:I}, s:s, s:s, s:b, s:f}",
			"case", cname, "region", rname, "event", ev, "old", "min", omin, "max", omax,
			"n", (json_int_t)on, "new", "min", nmin, "max", nmax, "n", (json_int_t)nn,
			"verdict", verdict, "reason", reason, "deterministic", det, "tolerance_pct",
			tol);
	json_object_set_new(row, "change_pct", isfinite(change) ? json_real(change) : json_null());
	if (!strcmp(verdict, "improvement"))
		json_object_set_new(row, "hint", json_string("improved: a budget for it can be tightened (--calibrate)"));
	return row;
}

/* A row for an event measured on one side only. */
static json_t *one_sided_row(const char *cname, const char *rname, const char *ev,
			     const struct pmc__stat_rec *st, bool is_new, const char *reason)
{
	json_t *side = json_pack("{s:f, s:f, s:I}", "min", (double)st->min, "max",
				 (double)st->max, "n", (json_int_t)st->n);

	return json_pack("{s:s, s:s, s:s, s:o, s:o, s:s, s:s}", "case", cname, "region", rname,
			 "event", ev, "old", is_new ? json_null() : side, "new",
			 is_new ? side : json_null(), "verdict", is_new ? "new" : "gone", "reason",
			 reason);
}

json_t *pmc__compare(const struct pmc__results *old, const struct pmc__results *new,
		     const struct pmc__tolerance *tols, bool force)
{
	const char *osig = pmc__results_signature(old), *nsig = pmc__results_signature(new);
	const char *oback = pmc__results_backend(old), *nback = pmc__results_backend(new);
	json_t *rows = json_array(), *c;
	char mismatch[512] = "";
	json_t *rep;
	size_t i, j, k, counts[8] = { 0 };
	static const char *const names[] = { "regression", "improvement", "same", "noise",
					     "no-verdict", "new", "gone", "tolerated" };
	json_t *summary;

	if (strcmp(osig, nsig))
		snprintf(mismatch, sizeof(mismatch), "different CPUs: baseline %s, this run %s", osig, nsig);
	else if (strcmp(oback, nback))
		snprintf(mismatch, sizeof(mismatch), "different backends: baseline %s, this run %s",
			 oback, nback);
	for (i = 0; i < new->n; i++) {
		const struct pmc__result *nc = &new->cases[i];
		const struct pmc__result *oc = pmc__results_find(old, nc->name);

		for (j = 0; j < nc->nregions; j++) {
			const struct pmc__region_rec *nr = &nc->regions[j];
			const struct pmc__region_rec *or = pmc__result_region(oc, nr->name);

			for (k = 0; k < nr->nev; k++) {
				const struct pmc__stat_rec *ns = &nr->ev[k];
				const struct pmc__stat_rec *os = pmc__region_event(or, ns->label);

				if (!os || os->n == 0 || ns->n == 0) {
					if (ns->n > 0)
						json_array_append_new(rows, one_sided_row(nc->name, nr->name, ns->label,
											  ns, true, "not in the baseline"));
					continue;
				}
				json_array_append_new(rows, compare_row(nc->name, nr->name, ns->label, os, ns, tols,
									 mismatch[0] && !force ? mismatch : NULL));
			}
		}
	}
	/* What the baseline measured and this run did not. */
	for (i = 0; i < old->n; i++) {
		const struct pmc__result *oc = &old->cases[i];
		const struct pmc__result *nc = pmc__results_find(new, oc->name);

		for (j = 0; j < oc->nregions; j++) {
			const struct pmc__region_rec *or = &oc->regions[j];
			const struct pmc__region_rec *nr = pmc__result_region(nc, or->name);

			for (k = 0; k < or->nev; k++) {
				const struct pmc__stat_rec *os = &or->ev[k];
				const struct pmc__stat_rec *ns = pmc__region_event(nr, os->label);

				if ((!ns || ns->n == 0) && os->n > 0)
					json_array_append_new(rows, one_sided_row(oc->name, or->name, os->label, os, false,
										  nc ? "not measured by this run" : "case not in this run"));
			}
		}
	}
	json_array_foreach(rows, i, c) {
		const char *v = jstr(c, "verdict");

		for (size_t k = 0; k < 8; k++)
			counts[k] += !strcmp(v, names[k]);
	}
	summary = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "regression",
			    (json_int_t)counts[0], "improvement", (json_int_t)counts[1], "same",
			    (json_int_t)counts[2], "noise", (json_int_t)counts[3], "no_verdict",
			    (json_int_t)counts[4], "new", (json_int_t)counts[5], "gone",
			    (json_int_t)counts[6], "tolerated", (json_int_t)counts[7]);
	rep = json_pack("{s:s, s:{s:s, s:s}, s:{s:s, s:s}, s:o, s:o}", "schema",
			"pmcheck-compare/1", "old", "signature", osig, "backend", oback, "new",
			"signature", nsig, "backend", nback, "summary", summary, "rows", rows);
	/* Forced across CPUs or backends, the difference is kept as a note. */
	if (mismatch[0])
		json_object_set_new(rep, force ? "forced_across" : "mismatch", json_string(mismatch));
	return rep;
}

static void fmt_change(char *buf, size_t size, json_t *row)
{
	json_t *ch = json_object_get(row, "change_pct");

	if (json_is_number(ch))
		snprintf(buf, size, "%+.2f%%", json_number_value(ch));
	else
		snprintf(buf, size, "%s", json_object_get(row, "old") && json_is_object(json_object_get(row, "old")) &&
						  json_is_object(json_object_get(row, "new")) ? "from 0" : "-");
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static void fmt_side(char *buf, size_t size, json_t *side)
{
	if (!json_is_object(side))
		snprintf(buf, size, "-");
	else if (num(side, "min") == num(side, "max"))
		snprintf(buf, size, "%.0f", num(side, "min"));
	else
		snprintf(buf, size, "%.0f..%.0f", num(side, "min"), num(side, "max"));
}

void pmc__print_compare(FILE *f, json_t *rep)
{
	json_t *row, *s = json_object_get(rep, "summary");
	size_t i;

	if (json_is_string(json_object_get(rep, "mismatch")))
		fprintf(f, "warning: %s: no verdicts (use --force to compare anyway)\n",
			jstr(rep, "mismatch"));
	fprintf(f, "%-40s %-14s %-24s | %-16s | %-26s | %s\n", "case", "region", "event", "new",
		"baseline (change)", "verdict");
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char n[48], o[48], ch[32], old[96];

		fmt_side(n, sizeof(n), json_object_get(row, "new"));
		fmt_side(o, sizeof(o), json_object_get(row, "old"));
		fmt_change(ch, sizeof(ch), row);
		snprintf(old, sizeof(old), "%s (%s)", o, ch);
		fprintf(f, "%-40s %-14s %-24s | %-16s | %-26s | %s%s%s\n", jstr(row, "case"),
			jstr(row, "region"), jstr(row, "event"), n, old, jstr(row, "verdict"),
			json_object_get(row, "hint") ? ": " : "", jstr(row, "hint"));
	}
	fprintf(f, "\n%" JSON_INTEGER_FORMAT " regressions, %" JSON_INTEGER_FORMAT " improvements, %" JSON_INTEGER_FORMAT " tolerated, %" JSON_INTEGER_FORMAT " same, %" JSON_INTEGER_FORMAT " noise, %" JSON_INTEGER_FORMAT " without verdict, %" JSON_INTEGER_FORMAT " new, %" JSON_INTEGER_FORMAT " gone\n",
		json_integer_value(json_object_get(s, "regression")),
		json_integer_value(json_object_get(s, "tolerated")),
		json_integer_value(json_object_get(s, "improvement")),
		json_integer_value(json_object_get(s, "same")),
		json_integer_value(json_object_get(s, "noise")),
		json_integer_value(json_object_get(s, "no_verdict")),
		json_integer_value(json_object_get(s, "new")),
		json_integer_value(json_object_get(s, "gone")));
}

char *pmc__compare_markdown(json_t *rep)
{
	json_t *row, *s = json_object_get(rep, "summary");
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	fprintf(f, "### pmcheck: %" JSON_INTEGER_FORMAT " regression(s), %" JSON_INTEGER_FORMAT " improvement(s)\n\n",
		json_integer_value(json_object_get(s, "regression")),
		json_integer_value(json_object_get(s, "improvement")));
	fprintf(f, "Baseline `%s` (%s) vs this run `%s` (%s); the change is against the baseline.\n\n",
		jstr(json_object_get(rep, "old"), "signature"), jstr(json_object_get(rep, "old"), "backend"),
		jstr(json_object_get(rep, "new"), "signature"), jstr(json_object_get(rep, "new"), "backend"));
	if (json_is_string(json_object_get(rep, "mismatch")))
		fprintf(f, "> **Not comparable:** %s.\n\n", jstr(rep, "mismatch"));
	fprintf(f, "| case | region | event | new | baseline (change) | verdict |\n");
	fprintf(f, "| --- | --- | --- | ---: | ---: | --- |\n");
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char n[48], o[48], ch[32];
		const char *v = jstr(row, "verdict");

		fmt_side(n, sizeof(n), json_object_get(row, "new"));
		fmt_side(o, sizeof(o), json_object_get(row, "old"));
		fmt_change(ch, sizeof(ch), row);
		fprintf(f, "| `%s` | %s | `%s` | %s | %s (%s) | %s%s%s |\n", jstr(row, "case"),
			jstr(row, "region"), jstr(row, "event"), n, o, ch,
			!strcmp(v, "regression") ? "**regression**" : v,
			json_object_get(row, "hint") ? " — " : "", jstr(row, "hint"));
	}
	fclose(f);
	return buf;
}

int pmc__compare_status(json_t *rep, bool allow_missing, FILE *f)
{
	json_t *s = json_object_get(rep, "summary"), *row;
	json_int_t gone = json_integer_value(json_object_get(s, "gone"));
	const char *last = "";
	size_t i;

	if (json_is_string(json_object_get(rep, "mismatch"))) {
		/* No verdict at all is not a pass: the gate would be off. */
		fprintf(f, "error: not compared: %s (compare runs of one CPU and backend, or pass --force)\n",
			jstr(rep, "mismatch"));
		return PMC_EXIT_ERROR;
	}
	if (gone && !allow_missing) {
		/* A gate must not pass because a case stopped running. */
		fprintf(f, "error: %" JSON_INTEGER_FORMAT " figure(s) of the baseline were not measured by this run:", gone);
		json_array_foreach(json_object_get(rep, "rows"), i, row) {
			if (strcmp(jstr(row, "verdict"), "gone") || !strcmp(jstr(row, "case"), last))
				continue;
			last = jstr(row, "case");
			fprintf(f, " %s", last);
		}
		fprintf(f, " (a case that did not run fails the comparison; pass --allow-missing when the run was meant to be partial)\n");
		return PMC_EXIT_REGRESSION;
	}
	return json_integer_value(json_object_get(s, "regression")) ? PMC_EXIT_REGRESSION
								   : PMC_EXIT_PASS;
}

static const char compare_usage[] =
	"usage: pmcheck compare OLD.json NEW.json [options]\n"
	"\n"
	"Compares two results files region by region and event by event.\n"
	"\n"
	"  --tolerance=PCT        tolerance for every event, deterministic ones too\n"
	"                         (default: exact for deterministic events, 2%% for noisy)\n"
	"  --tolerance=EVENT=PCT  tolerance for one event (repeatable)\n"
	"  --allow-missing        a case of OLD that NEW did not measure is not a failure\n"
	"  --force                compare across CPUs or backends\n"
	"  --json=FILE            the comparison as JSON (atomically)\n"
	"  --markdown=FILE        the comparison as Markdown (a CI job summary)\n"
	"  --help                 this text\n"
	"\n"
	"exit status: 0 no regression, 3 a regression or a case that did not run,\n"
	"2 unreadable input or runs that cannot be compared (CPU, backend), 64 usage.\n";

/* `pmcheck compare OLD.json NEW.json [options]` */
int pmc__compare_command(int argc, char **argv)
{
	const char *files[2] = { NULL, NULL }, *json_path = NULL, *md_path = NULL;
	struct pmc__tolerance tols = { 0 };
	bool force = false, allow_missing = false;
	struct pmc__results docs[2] = { { 0 }, { 0 } };
	json_t *rep;
	char why[512];
	int i, nfiles = 0, status;

	for (i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "--tolerance=", 12)) {
			if (pmc__tolerance_add(&tols, argv[i] + 12, why, sizeof(why))) {
				fprintf(stderr, "pmcheck compare: %s\n", why);
				return PMC_EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(compare_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--force")) {
			force = true;
		} else if (!strcmp(argv[i], "--allow-missing")) {
			allow_missing = true;
		} else if (!strncmp(argv[i], "--json=", 7)) {
			json_path = argv[i] + 7;
		} else if (!strncmp(argv[i], "--markdown=", 11)) {
			md_path = argv[i] + 11;
		} else if (argv[i][0] == '-' || nfiles == 2) {
			fprintf(stderr, "pmcheck compare: unexpected '%s' (see pmcheck compare --help)\n", argv[i]);
			return PMC_EXIT_USAGE;
		} else {
			files[nfiles++] = argv[i];
		}
	}
	if (nfiles != 2) {
		fputs(compare_usage, stderr);
		return PMC_EXIT_USAGE;
	}
	for (i = 0; i < 2; i++) {
		if (pmc__results_load(files[i], &docs[i], why, sizeof(why))) {
			fprintf(stderr, "pmcheck compare: %s\n", why);
			pmc__results_release(&docs[0]);
			return PMC_EXIT_ERROR;
		}
	}
	rep = pmc__compare(&docs[0], &docs[1], &tols, force);
	pmc__print_compare(stdout, rep);
	status = pmc__compare_status(rep, allow_missing, stdout);
	if (json_path && pmc__write_json(json_path, rep) != 0) {
		fprintf(stderr, "pmcheck compare: cannot write %s\n", json_path);
		status = PMC_EXIT_ERROR;
	}
	if (md_path) {
		char *md = pmc__compare_markdown(rep);

		if (!md || pmc_write_file_atomic(md_path, md, strlen(md)) != 0) {
			fprintf(stderr, "pmcheck compare: cannot write %s\n", md_path);
			status = PMC_EXIT_ERROR;
		}
		free(md);
	}
	json_decref(rep);
	pmc__results_release(&docs[0]);
	pmc__results_release(&docs[1]);
	return status;
}
