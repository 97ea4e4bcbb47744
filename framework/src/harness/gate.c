/* SPDX-License-Identifier: MIT */
/*
 * Gates: the hwdb as the runner's budget source, calibration (recording
 * budgets from measurements), and baseline comparison with its reports.
 */
#define _GNU_SOURCE
#include <errno.h>
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

/* Kind of the event an expectation names, from a result's events list. */
static const char *event_kind(json_t *res, const char *event)
{
	json_t *e;
	size_t i;

	json_array_foreach(json_object_get(res, "events"), i, e)
		if (!strcmp(jstr(e, "label"), event) || !strcmp(jstr(e, "name"), event))
			return jstr(e, "kind");
	return "";
}

int pmc__calibration_key(const char *backend, const char *choice, char *key, size_t size,
			 char *why, size_t why_size)
{
	char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX];
	struct pmc_cpu_id cpu;
	struct pmc_hwdb_match m;
	size_t n;
	bool model;
	int idx;

	pmc_cpu_identify(&cpu);
	n = pmc_hwdb_keys(gate_db, backend, cpu.signature, keys, PMC_HWDB_MAX_KEYS);
	model = pmc_hwdb_match(gate_db, cpu.signature, &m, NULL) == 0 || m.model[0];
	if (n == 0) {
		snprintf(why, why_size, "no budget key for CPU signature \"%s\"", cpu.signature);
		return -ENOENT;
	}
	if (!choice || !*choice)
		choice = model ? "model" : "signature";
	if (!strcmp(choice, "signature"))
		idx = 0;
	else if (!strcmp(choice, "model"))
		idx = model ? 1 : -1;
	else if (!strcmp(choice, "vendor"))
		idx = model ? 2 : 1;
	else if (!strcmp(choice, "arch"))
		idx = model ? 3 : 2;
	else if (!strcmp(choice, "any"))
		idx = (int)n - 1;
	else {
		snprintf(why, why_size, "--calibrate-key=%s: expected signature, model, vendor, arch or any", choice);
		return -EINVAL;
	}
	if (idx < 0) {
		snprintf(why, why_size,
			 "no hwdb model matches \"%s\": add a line to a map.ini, or use --calibrate-key=signature",
			 cpu.signature);
		return -ENOENT;
	}
	if ((size_t)idx >= n || (!strcmp(choice, "any") && strcmp(keys[idx], "any"))) {
		snprintf(why, why_size, "no %s key for \"%s\"", choice, cpu.signature);
		return -ENOENT;
	}
	snprintf(key, size, "%s", keys[idx]);
	return 0;
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

/* The budget check of a result with this region and event, by name. */
static json_t *budget_check(json_t *res, const char *region, const char *event)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(res, "checks"), i, c)
		if (!strcmp(jstr(c, "kind"), "budget") && !strcmp(jstr(c, "region"), region) &&
		    !strcmp(jstr(c, "event"), event))
			return c;
	return NULL;
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
 *   - noisy (everything else): "<= ceil(max * (1 + margin))".
 * Returns the number of budgets written, or -1 on error.
 */
int pmc__calibrate_case(json_t **runs, size_t nruns, const struct pmc__calibration *cal,
			FILE *out)
{
	struct pmc_hwdb_model model;
	struct pmc_hwdb_match m;
	struct pmc_cpu_id cpu;
	json_t *first = runs[0], *chk;
	const char *verdict = jstr(first, "verdict");
	size_t i, r;
	const char *shown = NULL;
	int written = 0;
	bool have_model;

	pmc_cpu_identify(&cpu);
	have_model = pmc_hwdb_match(gate_db, cpu.signature, &m, &model) == 0;
	if (!strcmp(verdict, "SKIP") || !strcmp(verdict, "ERROR")) {
		fprintf(out, "  %s: not calibrated: %s: %s\n", jstr(first, "name"), verdict,
			jstr(first, "reason"));
		return 0;
	}
	json_array_foreach(json_object_get(first, "checks"), i, chk) {
		const char *region = jstr(chk, "region"), *event = jstr(chk, "event");
		const char *kind = event_kind(first, event), *key = cal->key;
		double lo = INFINITY, hi = -INFINITY, tol = cal->tolerance_pct;
		bool det, usable = true;
		char bound[256], old[1024];
		struct pmc_error err;

		if (strcmp(jstr(chk, "kind"), "budget"))
			continue;
		for (r = 0; r < nruns; r++) {
			json_t *c = budget_check(runs[r], region, event);
			json_t *x = json_object_get(c, "measured");
			const char *st = jstr(c, "status");

			if (!c) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu ended before judging it (%s: %s)\n",
					jstr(first, "name"), region, event, r + 1,
					jstr(runs[r], "verdict"), jstr(runs[r], "reason"));
				usable = false;
				break;
			}
			if (!json_is_number(x) || !strcmp(st, "inconclusive") || !strcmp(st, "error")) {
				fprintf(out, "  %s %s %s: not calibrated: run %zu: %s\n",
					jstr(first, "name"), region, event, r + 1, jstr(c, "message"));
				usable = false;
				break;
			}
			lo = fmin(lo, json_number_value(x));
			hi = fmax(hi, json_number_value(x));
		}
		if (!usable)
			continue;
		if (!strcmp(jstr(first, "backend"), "sim"))
			det = sim_event_deterministic(event);
		else
			det = !strcmp(kind, "breakpoint") || !strcmp(kind, "uprobe") ||
			      (have_model && pmc_hwdb_model_deterministic(&model, event));
		if (!cal->key_chosen && strcmp(jstr(first, "backend"), "sim") &&
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
				jstr(first, "name"), region, event, nruns, lo, hi, hi - lo,
				tol > 0 ? " widened by the tolerance" : "");
		} else {
			snprintf(bound, sizeof(bound), "<= %.0f ; calibrated: noisy, %zu runs %.0f..%.0f, margin %g%%",
				 ceil(hi * (1.0 + cal->margin_pct / 100.0)), nruns, lo, hi, cal->margin_pct);
		}
		if (pmc_hwdb_write_budget(cal->dir, key, jstr(first, "suite"), jstr(first, "test"),
					  region, event, bound, old, sizeof(old), &err) != 0) {
			fprintf(out, "  error: %s\n", err.message);
			return -1;
		}
		if (key != shown) /* the file, once per key */
			fprintf(out, "  %s/budgets/%s/%s.ini [%s]\n", cal->dir, key,
				jstr(first, "suite"), jstr(first, "test"));
		shown = key;
		if (old[0])
			fprintf(out, "  - %s\n", old);
		fprintf(out, "  + %s = %s %s\n", region, event, bound);
		written++;
	}
	return written;
}

/* ---- comparison ---------------------------------------------------------------------- */

static json_t *find_case(json_t *doc, const char *name)
{
	json_t *c;
	size_t i;

	json_array_foreach(json_object_get(doc, "cases"), i, c)
		if (!strcmp(jstr(c, "name"), name))
			return c;
	return NULL;
}

static json_t *find_region(json_t *c, const char *name)
{
	json_t *r;
	size_t i;

	json_array_foreach(json_object_get(c, "regions"), i, r)
		if (!strcmp(jstr(r, "name"), name))
			return r;
	return NULL;
}

static double num(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

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
static json_t *compare_row(const char *cname, const char *rname, const char *ev, json_t *os,
			   json_t *ns, const struct pmc__tolerance *tols, const char *blocked)
{
	double omin = num(os, "min"), omax = num(os, "max"), nmin = num(ns, "min"),
	       nmax = num(ns, "max");
	size_t on = (size_t)num(os, "n"), nn = (size_t)num(ns, "n");
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
	} else if (num(os, "multiplexed") + num(os, "not_counted") + num(ns, "multiplexed") +
			   num(ns, "not_counted") > 0) {
		verdict = "no-verdict";
		snprintf(reason, sizeof(reason), "partial counts (multiplexed or never counted)");
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

json_t *pmc__compare(json_t *old, json_t *new, const struct pmc__tolerance *tols, bool force)
{
	json_t *rows = json_array(), *c, *oe = json_object_get(old, "environment"),
	       *ne = json_object_get(new, "environment");
	const char *osig = jstr(json_object_get(oe, "cpu"), "signature");
	const char *nsig = jstr(json_object_get(ne, "cpu"), "signature");
	char mismatch[512] = "";
	json_t *rep;
	size_t i, counts[8] = { 0 };
	static const char *const names[] = { "regression", "improvement", "same", "noise",
					     "no-verdict", "new", "gone", "tolerated" };
	json_t *summary;

	if (strcmp(osig, nsig))
		snprintf(mismatch, sizeof(mismatch), "different CPUs: baseline %s, this run %s", osig, nsig);
	else if (strcmp(jstr(oe, "backend"), jstr(ne, "backend")))
		snprintf(mismatch, sizeof(mismatch), "different backends: baseline %s, this run %s",
			 jstr(oe, "backend"), jstr(ne, "backend"));
	json_array_foreach(json_object_get(new, "cases"), i, c) {
		json_t *oc = find_case(old, jstr(c, "name")), *r;
		size_t j;

		json_array_foreach(json_object_get(c, "regions"), j, r) {
			json_t *or = oc ? find_region(oc, jstr(r, "name")) : NULL, *st;
			const char *ev;

			json_object_foreach(json_object_get(r, "events"), ev, st) {
				json_t *os = or ? json_object_get(json_object_get(or, "events"), ev) : NULL;

				if (!os || num(os, "n") == 0 || num(st, "n") == 0) {
					if (num(st, "n") > 0)
						json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:n, s:{s:f, s:f, s:I}, s:s, s:s}",
							"case", jstr(c, "name"), "region", jstr(r, "name"), "event", ev,
							"old", "new", "min", num(st, "min"), "max", num(st, "max"),
							"n", (json_int_t)num(st, "n"), "verdict", "new", "reason",
							"not in the baseline"));
					continue;
				}
				json_array_append_new(rows, compare_row(jstr(c, "name"), jstr(r, "name"), ev, os, st, tols,
									 mismatch[0] && !force ? mismatch : NULL));
			}
		}
	}
	/* What the baseline measured and this run did not. */
	json_array_foreach(json_object_get(old, "cases"), i, c) {
		json_t *nc = find_case(new, jstr(c, "name")), *r;
		size_t j;

		json_array_foreach(json_object_get(c, "regions"), j, r) {
			json_t *nr = nc ? find_region(nc, jstr(r, "name")) : NULL, *st;
			const char *ev;

			json_object_foreach(json_object_get(r, "events"), ev, st) {
				json_t *ns = nr ? json_object_get(json_object_get(nr, "events"), ev) : NULL;

				if ((!ns || num(ns, "n") == 0) && num(st, "n") > 0)
					json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:{s:f, s:f, s:I}, s:n, s:s, s:s}",
						"case", jstr(c, "name"), "region", jstr(r, "name"), "event", ev,
						"old", "min", num(st, "min"), "max", num(st, "max"), "n",
						(json_int_t)num(st, "n"), "new", "verdict", "gone", "reason",
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
			"pmcheck-compare/1", "old", "signature", osig, "backend", jstr(oe, "backend"),
			"new", "signature", nsig, "backend", jstr(ne, "backend"), "summary", summary,
			"rows", rows);
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
	json_t *docs[2] = { NULL, NULL }, *rep;
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
			json_decref(docs[0]);
			json_decref(docs[1]);
			return PMC_EXIT_ERROR;
		}
	}
	rep = pmc__compare(docs[0], docs[1], &tols, force);
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
	json_decref(docs[0]);
	json_decref(docs[1]);
	return status;
}
