/* SPDX-License-Identifier: MIT */
/*
 * Baseline comparison: two results documents compared region by region and
 * event by event (exact for deterministic events, distributions for noisy
 * ones), tolerances, and the report as console text, Markdown and status.
 *
 * Over 600 lines because a comparison and the three forms it is shown in
 * (console text, Markdown, status) share each event's verdict and tolerance;
 * apart, every form would need the comparison's insides in a header.
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
#include "util/arith.h"
#include "util/file.h"

/* ---- comparison ---------------------------------------------------------------------- */

int pmc__tolerance_add(struct pmc__tolerance *t, const char *spec, char *why, size_t size)
{
	const char *eq = strrchr(spec, '=');
	const char *num = eq ? eq + 1 : spec;
	char *end = (char *)num;
	double v = 0;

	if (pmc__parse_decimal(num, &end, &v) == 0 && *end == '%')
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
	{
		/* The event as events are spelt everywhere: a name that is no
		 * event would never match one, and the tolerance would silently
		 * not apply.  calls: functions are looked up by the run. */
		struct pmc_event_spec ev;
		struct pmc_error err;
		size_t n;

		if (pmc_event_parse_list_flags(t->event[t->n], PMC_PARSE_DEFER_SYMBOLS, &ev, 1, &n,
					       &err)) {
			snprintf(why, size, "--tolerance=%s: %s (expected EVENT=PCT, e.g. instructions:u=0.5)",
				 spec, err.message);
			return -1;
		}
		for (size_t i = 0; i < t->n; i++)
			if (!strcmp(t->event[i], t->event[t->n])) {
				snprintf(why, size, "--tolerance=%s: a second tolerance for %s (the first is %g%%): give one",
					 spec, t->event[i], t->pct[i]);
				return -1;
			}
	}
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
			   const struct pmc__tolerance *tols, const char *blocked, bool sim_work)
{
	double omin = (double)os->min, omax = (double)os->max, nmin = (double)ns->min,
	       nmax = (double)ns->max;
	size_t on = os->n, nn = ns->n;
	/* One sample cannot show that an event repeats exactly.  On sim, work
	 * executed is exact for one binary: its figure is the minimum, as a
	 * budget judges it, and a sample above it is work the code chose to do
	 * (a first call's lazy set-up, a hash seeded by getrandom); so one
	 * sample a side is enough there (a Google Benchmark instance runs its
	 * fixed iterations once). */
	bool det = ((omin == omax && nmin == nmax && on >= 2 && nn >= 2) || sim_work) && on >= 1 &&
		   nn >= 1,
	     chosen;
	double change = omin > 0 ? 100.0 * (nmin - omin) / omin : (nmin > 0 ? INFINITY : 0);
	double spread = 0, tol, given = tolerance_for(tols, ev, det, &chosen);
	const char *verdict;
	char reason[256] = "";
	json_t *row;

	if (omin > 0)
		spread = pmc__fmax(spread, (omax - omin) / omin);
	if (nmin > 0)
		spread = pmc__fmax(spread, (nmax - nmin) / nmin);
	tol = det ? given : pmc__fmax(given, 200.0 * spread);
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
		else if (omin != omax || nmin != nmax)
			snprintf(reason, sizeof(reason), "sim, work executed: each side's minimum, exact");
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

/* The libraries that are another build in this run than in the baseline
 * (the programs themselves aside): "since_baseline": [text]. */
static void since_baseline(json_t *row, const struct pmc__result *oc, const struct pmc__result *nc)
{
	struct pmc__object_change ch[8];
	size_t n = oc && nc && oc->nobjects && nc->nobjects
			   ? pmc__objects_diff(oc->objects, oc->nobjects, nc->objects, nc->nobjects, ch, 8)
			   : 0;
	json_t *arr;

	if (!n)
		return;
	arr = json_array();
	for (size_t i = 0; i < n; i++) {
		char text[400];

		pmc__object_change_text(&ch[i], "the baseline", text, sizeof(text));
		json_array_append_new(arr, json_string(text));
	}
	json_object_set_new(row, "since_baseline", arr);
}

/* Console lines, or a Markdown list, of what changed since the baseline. */
/*
 * A name from a results file (case, region, event, function, library) as
 * the table and the Markdown show it: control characters escaped
 * (pmc__escape_ctl), so that a file cannot move the cursor or forge a line
 * of the report.  The JSON report keeps the name as it is.  Eight
 * buffers in turn: one fprintf shows at most eight.
 */
static const char *shown_text(const char *s)
{
	static char ring[8][1024];
	static unsigned next;
	char *buf = ring[next++ % 8];

	return pmc__escape_ctl(buf, sizeof(ring[0]), s ? s : "");
}

static const char *shown(json_t *o, const char *key)
{
	return shown_text(pmc__jstr(o, key));
}

static void print_since(FILE *f, json_t *row, bool markdown)
{
	json_t *arr = json_object_get(row, "since_baseline"), *v;
	size_t i;

	json_array_foreach(arr, i, v)
		fprintf(f, markdown ? "- %s\n" : "    since the baseline: %s\n", shown_text(json_string_value(v)));
}

/*
 * A case counted on the simulator under another toolchain on each side (its
 * sim profile: valgrind, cache geometry, compiler, optimisation, build
 * type): the difference would be the toolchain's, never the change's, so
 * the comparison names both and is refused.
 */
static void toolchains(const struct pmc__results *old, const struct pmc__results *new, char *why,
		       size_t size)
{
	for (size_t i = 0; i < new->n; i++) {
		const struct pmc__result *nc = &new->cases[i];
		const struct pmc__result *oc = pmc__results_find(old, nc->name);

		if (oc && oc->sim_profile && nc->sim_profile && *oc->sim_profile &&
		    *nc->sim_profile && strcmp(oc->sim_profile, nc->sim_profile)) {
			snprintf(why, size,
				 "different toolchains: the baseline's %s was built and counted with %s, this run's with %s; the difference would be the toolchain's, not the change's",
				 nc->name, oc->sim_profile, nc->sim_profile);
			return;
		}
	}
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
	else
		toolchains(old, new, mismatch, sizeof(mismatch));
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
				{
					const struct pmc__event_rec *e = pmc__result_event(nc, ns->label);
					bool sim_work = nc->backend && !strcmp(nc->backend, "sim") &&
							oc->backend && !strcmp(oc->backend, "sim") && e &&
							pmc__event_deterministic(nc, e, ns->label, NULL);
					json_t *row = compare_row(nc->name, nr->name, ns->label, os, ns, tols,
								  mismatch[0] && !force ? mismatch : NULL,
								  sim_work);
					const char *v = pmc__jstr(row, "verdict");
					json_t *at = strcmp(v, "regression") && strcmp(v, "improvement")
							     ? NULL : pmc__attribution(or, nr, ns->label);

					if (at && json_array_size(at))
						json_object_set_new(row, "attribution", at);
					else
						json_decref(at);
					if (!strcmp(v, "regression") || !strcmp(v, "improvement"))
						since_baseline(row, oc, nc);
					json_array_append_new(rows, row);
				}
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
		const char *v = pmc__jstr(c, "verdict");

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

/* The functions behind a changed figure: console lines, or a Markdown table. */
static void print_attribution(FILE *f, json_t *rows, bool markdown)
{
	json_t *a;
	size_t i;

	if (!json_array_size(rows))
		return;
	if (markdown)
		fprintf(f, "| function | object | baseline | new | change | share |\n"
			   "| --- | --- | ---: | ---: | ---: | ---: |\n");
	else
		fprintf(f, "    which functions (own cost, sim; largest change first):\n");
	json_array_foreach(rows, i, a) {
		char o[48], n[48], d[48], share[24] = "-";
		const char *obj = pmc__file_part(shown(a, "object"));
		json_t *sh = json_object_get(a, "share");

		pmc__fmt_num(o, sizeof(o), json_number_value(json_object_get(a, "old")));
		pmc__fmt_num(n, sizeof(n), json_number_value(json_object_get(a, "new")));
		pmc__fmt_num(d, sizeof(d), json_number_value(json_object_get(a, "change")));
		if (json_is_number(sh))
			snprintf(share, sizeof(share), "%.1f%%", 100.0 * json_number_value(sh));
		if (markdown)
			fprintf(f, "| `%s` | %s | %s | %s | %s%s | %s |\n", shown(a, "function"),
				obj, o, n,
				json_number_value(json_object_get(a, "change")) > 0 ? "+" : "", d, share);
		else
			fprintf(f, "      %-36s %-22s %14s -> %-14s %s%s (%s of the change)\n",
				shown(a, "function"), obj, o, n,
				json_number_value(json_object_get(a, "change")) > 0 ? "+" : "", d, share);
	}
}

/* perf: where a regressed row's samples fell in this run (no difference:
 * the baseline has no samples). */
static void print_samples(FILE *f, json_t *rows, bool markdown)
{
	json_t *a;
	size_t i;

	if (!json_array_size(rows))
		return;
	if (markdown)
		fprintf(f, "| function | object | samples | share | ~per execution |\n"
			   "| --- | --- | ---: | ---: | ---: |\n");
	else
		fprintf(f, "    where this run's samples fell (perf sampling, statistical; not a difference against the baseline):\n");
	json_array_foreach(rows, i, a) {
		char est[48];

		pmc__fmt_num(est, sizeof(est), json_number_value(json_object_get(a, "estimate")));
		fprintf(f,
			markdown ? "| `%s` | %s | %" JSON_INTEGER_FORMAT " | %.1f%% | %s |\n"
				 : "      %-36s %-22s %8" JSON_INTEGER_FORMAT " samples %5.1f%%  ~%s per execution\n",
			shown(a, "function"), pmc__file_part(shown(a, "object")),
			json_integer_value(json_object_get(a, "samples")),
			100.0 * json_number_value(json_object_get(a, "share")), est);
	}
}

char *pmc__compare_case_text(json_t *rep, const char *case_name)
{
	char *text = NULL;
	size_t cap = 0, i;
	FILE *f = NULL;
	json_t *row;

	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char n[48], o[48], ch[32];

		if (strcmp(pmc__jstr(row, "case"), case_name) ||
		    strcmp(pmc__jstr(row, "verdict"), "regression"))
			continue;
		if (!f && !(f = open_memstream(&text, &cap)))
			return NULL;
		fmt_side(n, sizeof(n), json_object_get(row, "new"));
		fmt_side(o, sizeof(o), json_object_get(row, "old"));
		fmt_change(ch, sizeof(ch), row);
		fprintf(f, "regression against the baseline: region \"%s\", %s: %s, baseline %s (%s)\n",
			shown(row, "region"), shown(row, "event"), n, o, ch);
		print_attribution(f, json_object_get(row, "attribution"), false);
		print_since(f, row, false);
		print_samples(f, json_object_get(row, "samples"), false);
	}
	if (f)
		fclose(f);
	return text;
}

void pmc__print_compare(FILE *f, json_t *rep)
{
	json_t *row, *s = json_object_get(rep, "summary");
	size_t i;

	if (json_is_string(json_object_get(rep, "mismatch")))
		fprintf(f, "warning: %s: no verdicts (use --force to compare anyway)\n",
			shown(rep, "mismatch"));
	fprintf(f, "%-40s %-14s %-24s | %-16s | %-26s | %s\n", "case", "region", "event", "new",
		"baseline (change)", "verdict");
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char n[48], o[48], ch[32], old[96];

		fmt_side(n, sizeof(n), json_object_get(row, "new"));
		fmt_side(o, sizeof(o), json_object_get(row, "old"));
		fmt_change(ch, sizeof(ch), row);
		snprintf(old, sizeof(old), "%s (%s)", o, ch);
		fprintf(f, "%-40s %-14s %-24s | %-16s | %-26s | %s%s%s\n", shown(row, "case"),
			shown(row, "region"), shown(row, "event"), n, old, shown(row, "verdict"),
			json_object_get(row, "hint") ? ": " : "", shown(row, "hint"));
		print_attribution(f, json_object_get(row, "attribution"), false);
		print_since(f, row, false);
		print_samples(f, json_object_get(row, "samples"), false);
	}
	fprintf(f, "\n%" JSON_INTEGER_FORMAT " regressions, %" JSON_INTEGER_FORMAT " improvements, %" JSON_INTEGER_FORMAT " tolerated, %" JSON_INTEGER_FORMAT " same, %" JSON_INTEGER_FORMAT " noise, %" JSON_INTEGER_FORMAT " without verdict, %" JSON_INTEGER_FORMAT " new, %" JSON_INTEGER_FORMAT " gone\n",
		json_integer_value(json_object_get(s, "regression")),
		json_integer_value(json_object_get(s, "improvement")),
		json_integer_value(json_object_get(s, "tolerated")),
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
		shown(json_object_get(rep, "old"), "signature"), shown(json_object_get(rep, "old"), "backend"),
		shown(json_object_get(rep, "new"), "signature"), shown(json_object_get(rep, "new"), "backend"));
	if (json_is_string(json_object_get(rep, "mismatch")))
		fprintf(f, "> **Not comparable:** %s.\n\n", shown(rep, "mismatch"));
	fprintf(f, "| case | region | event | new | baseline (change) | verdict |\n");
	fprintf(f, "| --- | --- | --- | ---: | ---: | --- |\n");
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		char n[48], o[48], ch[32];
		const char *v = pmc__jstr(row, "verdict");

		fmt_side(n, sizeof(n), json_object_get(row, "new"));
		fmt_side(o, sizeof(o), json_object_get(row, "old"));
		fmt_change(ch, sizeof(ch), row);
		fprintf(f, "| `%s` | %s | `%s` | %s | %s (%s) | %s%s%s |\n", shown(row, "case"),
			shown(row, "region"), shown(row, "event"), n, o, ch,
			!strcmp(v, "regression") ? "**regression**" : v,
			json_object_get(row, "hint") ? " — " : "", shown(row, "hint"));
	}
	json_array_foreach(json_object_get(rep, "rows"), i, row)
		if (json_object_get(row, "attribution")) {
			fprintf(f, "\n**`%s` %s `%s`: %s by function** (own cost, sim)\n\n",
				shown(row, "case"), shown(row, "region"), shown(row, "event"),
				shown(row, "verdict"));
			print_attribution(f, json_object_get(row, "attribution"), true);
		}
	json_array_foreach(json_object_get(rep, "rows"), i, row)
		if (json_object_get(row, "since_baseline")) {
			fprintf(f, "\n**`%s` %s `%s`: libraries that are another build than in the baseline**\n\n",
				shown(row, "case"), shown(row, "region"), shown(row, "event"));
			print_since(f, row, true);
		}
	json_array_foreach(json_object_get(rep, "rows"), i, row)
		if (json_object_get(row, "samples")) {
			fprintf(f, "\n**`%s` %s `%s`: where this run's samples fell** (perf sampling, statistical)\n\n",
				shown(row, "case"), shown(row, "region"), shown(row, "event"));
			print_samples(f, json_object_get(row, "samples"), true);
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
		fprintf(f, "error: not compared: %s (compare runs of one CPU, backend and toolchain, or pass --force)\n",
			shown(rep, "mismatch"));
		return PMC_EXIT_ERROR;
	}
	if (gone && !allow_missing) {
		/* A gate must not pass because a case stopped running. */
		fprintf(f, "error: %" JSON_INTEGER_FORMAT " figure(s) of the baseline were not measured by this run:", gone);
		json_array_foreach(json_object_get(rep, "rows"), i, row) {
			if (strcmp(pmc__jstr(row, "verdict"), "gone") || !strcmp(pmc__jstr(row, "case"), last))
				continue;
			last = pmc__jstr(row, "case");
			fprintf(f, " %s", shown_text(last));
		}
		fprintf(f, " (a case that did not run fails the comparison; pass --allow-missing when the run was meant to be partial)\n");
		return PMC_EXIT_REGRESSION;
	}
	return json_integer_value(json_object_get(s, "regression")) ? PMC_EXIT_REGRESSION
								   : PMC_EXIT_PASS;
}

size_t pmc__compare_moved(json_t *rep, FILE *f)
{
	static const char *const moved[] = { "regression", "improvement", "tolerated", "new", "gone" };
	json_t *row, *seen = json_object();
	size_t i, n;

	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		const char *v = pmc__jstr(row, "verdict"), *c = pmc__jstr(row, "case");

		for (size_t k = 0; k < sizeof(moved) / sizeof(moved[0]); k++)
			if (!strcmp(v, moved[k]) && !json_object_get(seen, c)) {
				json_object_set_new(seen, c, json_true());
				if (f)
					fprintf(f, "%s\n", shown_text(c));
			}
	}
	n = json_object_size(seen);
	json_decref(seen);
	return n;
}
