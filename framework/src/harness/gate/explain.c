/* SPDX-License-Identifier: MIT */
/*
 * A failed budget explained against calibration, without a baseline: the
 * functions (on sim) or callers (a calls: event, on sim and perf) the
 * region spent its count in when it was calibrated, from
 * SUITE.functions.json beside the budget's file, against now.  Used by the
 * case's record (record.c) and by perf's sampled callers (sampled.c).
 */
#define _GNU_SOURCE
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"
#include "util/util_int.h"

/*
 * The region as calibration measured it: its functions from
 * SUITE.functions.json beside the budget's file (budget_source is
 * "DIR/budgets/KEY/SUITE.ini:LINE"), in g's events.  Returns the number of
 * functions (0: none recorded); *old is freed with pmc__calibrated_free().
 */
size_t pmc__calibrated_region(const char *case_name, const struct pmc__region_rec *g,
				const char *budget_source, struct pmc__region_rec *old,
				char *path, size_t size)
{
	json_t *doc, *rows, *row;
	size_t i;

	memset(old, 0, sizeof(*old));
	if (!g->nfns || pmc__beside_budget(budget_source, PMC__FUNCTIONS_SUFFIX, path, size))
		return 0;
	{
		char why[PATH_MAX + 256];

		/* hwdb check names a file here that is not a regular one. */
		pmc__hwdb_json_load(path, &doc, why, sizeof(why));
	}
	rows = json_object_get(json_object_get(json_object_get(doc, "cases"), case_name), g->name);
	old->name = g->name;
	old->nev = g->nev;
	old->ev = g->ev;
	old->fns = calloc(json_array_size(rows) + 1, sizeof(*old->fns));
	json_array_foreach(rows, i, row) {
		struct pmc__fn_rec *fr;
		json_t *costs = json_object_get(row, "costs"), *calls = json_object_get(row, "calls");

		if (!old->fns || !json_is_string(json_object_get(row, "function")))
			continue;
		fr = &old->fns[old->nfns];
		fr->name = strdup(json_string_value(json_object_get(row, "function")));
		fr->object = strdup(pmc__jstr(row, "object"));
		fr->cost = calloc(g->nev + 1, sizeof(*fr->cost));
		fr->calls = json_is_number(calls) ? json_number_value(calls) : NAN;
		if (!fr->cost || !fr->name || !fr->object) {
			free(fr->name);
			free(fr->object);
			free(fr->cost);
			break;
		}
		for (size_t j = 0; j < g->nev; j++)
			fr->cost[j] = json_number_value(json_object_get(costs, g->ev[j].label));
		old->nfns++;
	}
	json_decref(doc);
	return old->nfns;
}

void pmc__calibrated_free(struct pmc__region_rec *old)
{
	for (size_t i = 0; i < old->nfns; i++) {
		free(old->fns[i].name);
		free(old->fns[i].object);
		free(old->fns[i].cost);
	}
	free(old->fns);
}

/*
 * A failed sim budget, explained without a baseline: the functions the
 * region spent the event in when it was calibrated against now.  Returns
 * the text to append to the check's message (malloc'd), or NULL when there
 * is nothing to say.
 */
char *pmc__explain_budget(const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			    const char *label, const char *path, bool calls)
{
	char *text = NULL;
	size_t i, cap = 0;
	json_t *at = old->nfns ? pmc__attribution(old, g, label) : NULL;
	FILE *f = json_array_size(at) ? open_memstream(&text, &cap) : NULL;

	if (f && calls) {
		json_t *a;
		int sign = 0;

		/* A calls: event's costs are the calls each function made to
		 * its function: the callers whose calls moved, largest change
		 * first, those that call it more before those that call it
		 * less. */
		fprintf(f, " Callers against calibration (%s beside it):",
			strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
		for (int pass = 1; pass >= -1; pass -= 2) {
			size_t shown = 0;

			json_array_foreach(at, i, a) {
				double was = json_number_value(json_object_get(a, "old"));
				double now = json_number_value(json_object_get(a, "new"));
				char d[48], o[48], n[48];

				if (i == 3)
					break;
				if ((now > was ? 1 : -1) != pass)
					continue;
				pmc__fmt_num(d, sizeof(d), fabs(now - was));
				pmc__fmt_num(o, sizeof(o), was);
				pmc__fmt_num(n, sizeof(n), now);
				fprintf(f, "%s%s %s %s%s (%s -> %s)",
					shown ? "," : sign ? ";" : "",
					shown ? "" : pass > 0 ? " that call it more:" : " that call it less:",
					pmc__jstr(a, "function"), pass > 0 ? "+" : "-", d, o, n);
				shown++;
				sign = 1;
			}
		}
		fputc('.', f);
		fclose(f);
	} else if (f) {
		json_t *a;

		/* The file beside the budget, whose path (with its long sim
		 * key) the check has named already. */
		fprintf(f, " Which functions, against calibration (%s beside it):",
			strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
		json_array_foreach(at, i, a) {
			char d[48];
			json_t *sh = json_object_get(a, "share");
			const char *fn = pmc__jstr(a, "function");
			/* Rows folded per object (compare.c), and functions a
			 * stripped library names by address, name the object. */
			int in = (*fn == '(' || (fn[0] == '0' && fn[1] == 'x')) &&
				 *pmc__jstr(a, "object");

			if (i == 3)
				break;
			pmc__fmt_num(d, sizeof(d), fabs(json_number_value(json_object_get(a, "change"))));
			fprintf(f, "%s %s%s%s %s%s", i ? ";" : "", fn, in ? " in " : "",
				in ? pmc__file_part(pmc__jstr(a, "object")) : "",
				json_number_value(json_object_get(a, "change")) > 0 ? "+" : "-", d);
			if (json_is_number(sh))
				fprintf(f, " (%.0f%% of the change)", 100.0 * json_number_value(sh));
		}
		fputc('.', f);
		fclose(f);
	}
	json_decref(at);
	return text;
}

char *pmc__explain_callers(const struct pmc__result *r, const struct pmc__check_rec *cr,
			   const struct pmc__region_rec *g, const char *label)
{
	struct pmc__region_rec old;
	char path[PATH_MAX] = "", *why;

	if (!cr->budget_source)
		return NULL;
	pmc__calibrated_region(r->name, g, cr->budget_source, &old, path, sizeof(path));
	why = pmc__explain_budget(&old, g, label, path, true);
	pmc__calibrated_free(&old);
	return why;
}

