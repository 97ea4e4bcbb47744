/* SPDX-License-Identifier: MIT */
/*
 * Results in the formats of the dashboards teams already run, for
 * `pmcheck results --format=`:
 *
 *   bencher                  Bencher Metric Format (BMF), documented at
 *                            https://bencher.dev/docs/reference/bencher-metric-format
 *                            (schema https://bencher.dev/bmf.json):
 *                            { BENCHMARK: { MEASURE: { "value", "lower_value",
 *                            "upper_value" } } }, a benchmark name at most 1024
 *                            characters, a measure slug at most 64.
 *   github-action-benchmark  the customSmallerIsBetter tool of
 *                            https://github.com/benchmark-action/github-action-benchmark:
 *                            [ { "name", "unit", "value", "range", "extra" } ].
 *
 * One benchmark per case, region and backend; one measure per event.  The
 * value is the figure the case judges (its statistic, the minimum by
 * default); the lower and upper values are the smallest and largest
 * samples.  Neither format names a machine, so the testbed -- the CPU
 * model, as hwdb names it -- is the caller's to give Bencher (bencher run
 * --testbed); results of several machines are refused, not mixed.  Cases
 * without figures (skipped, broken) and events without samples are
 * counted for the caller to report: nothing is left out silently.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* A Bencher measure slug: lower case letters, digits and '-', at most 64
 * characters; a longer one keeps its head and a hash of the whole. */
static void measure_slug(const char *label, char *out, size_t size)
{
	size_t n = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	bool dash = false;

	for (const char *p = label; *p; p++) {
		char c = *p;

		h = (h ^ (unsigned char)c) * 0x100000001b3ull;
		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
			if (dash && n > 0 && n + 1 < size)
				out[n++] = '-';
			dash = false;
			if (n + 1 < size)
				out[n++] = c;
		} else {
			dash = true;
		}
	}
	out[n] = '\0';
	if (n > EXPORT_SLUG_MAX) {
		/* 55 characters, '-', 8 hex digits of the label's hash. */
		snprintf(out + 55, size - 55, "-%08x", (unsigned)(h ^ (h >> 32)));
	}
}

static const char *unit_of(const char *label)
{
	if (!strncmp(label, "task-clock", 10) || !strncmp(label, "cpu-clock", 9))
		return "ns";
	if (!strncmp(label, "calls:", 6))
		return "calls";
	return "count";
}

static double judged(const struct pmc__result *c, const struct pmc__stat_rec *s)
{
	return c->stat == PMC_STAT_MEDIAN ? s->median
	       : c->stat == PMC_STAT_MAX  ? (double)s->max
					  : (double)s->min;
}

/* The figures of one case: false when it has none (skipped, broken). */
static bool has_figures(const struct pmc__result *c)
{
	for (size_t g = 0; g < c->nregions; g++)
		for (size_t e = 0; e < c->regions[g].nev; e++)
			if (c->regions[g].ev[e].n)
				return true;
	return false;
}

static void count_left_out(const struct pmc__result *c, struct export_notes *notes)
{
	if (!has_figures(c)) {
		notes->cases_without_figures++;
		notes->by_verdict[c->verdict]++;
		return;
	}
	for (size_t g = 0; g < c->nregions; g++)
		for (size_t e = 0; e < c->regions[g].nev; e++)
			if (!c->regions[g].ev[e].n)
				notes->events_without_samples++;
}

json_t *export_bencher(const struct pmc__results *rs, struct export_notes *notes)
{
	json_t *doc = json_object();

	for (size_t i = 0; doc && i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];

		count_left_out(c, notes);
		for (size_t g = 0; g < c->nregions; g++) {
			const struct pmc__region_rec *r = &c->regions[g];
			json_t *bench = json_object();
			char *name = NULL;

			if (asprintf(&name, "%s / %s [%s]", c->name, r->name,
				     c->backend ? c->backend : "?") < 0 || !bench) {
				free(name);
				json_decref(bench);
				json_decref(doc);
				return NULL;
			}
			for (size_t e = 0; e < r->nev; e++) {
				const struct pmc__stat_rec *s = &r->ev[e];
				char slug[EXPORT_SLUG_MAX + 16];

				if (!s->n)
					continue;
				measure_slug(s->label, slug, sizeof(slug));
				/* Two labels of one slug ("cycles:u", "cycles-u"):
				 * the second gets a number, never overwrites. */
				for (unsigned k = 2; json_object_get(bench, slug); k++) {
					measure_slug(s->label, slug, sizeof(slug));
					snprintf(slug + (strlen(slug) > 60 ? 60 : strlen(slug)),
						 sizeof(slug) - 60, "-%u", k);
				}
				json_object_set_new(bench, slug,
						    json_pack("{s:f, s:f, s:f}", "value", judged(c, s),
							      "lower_value", (double)s->min, "upper_value",
							      (double)s->max));
			}
			if (json_object_size(bench))
				json_object_set_new(doc, name, bench);
			else
				json_decref(bench);
			free(name);
		}
	}
	return doc;
}

json_t *export_github(const struct pmc__results *rs, const char *testbed,
		      struct export_notes *notes)
{
	json_t *doc = json_array();

	for (size_t i = 0; doc && i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];

		count_left_out(c, notes);
		for (size_t g = 0; g < c->nregions; g++) {
			const struct pmc__region_rec *r = &c->regions[g];

			for (size_t e = 0; e < r->nev; e++) {
				const struct pmc__stat_rec *s = &r->ev[e];
				char *name = NULL, *range = NULL, *extra = NULL;

				if (!s->n)
					continue;
				if (asprintf(&name, "%s / %s / %s [%s]", c->name, r->name, s->label,
					     c->backend ? c->backend : "?") < 0 ||
				    asprintf(&range, "%" PRIu64 "..%" PRIu64, s->min, s->max) < 0 ||
				    asprintf(&extra,
					     "%s of %zu samples on %s, backend %s; verdict %s",
					     pmc__stat_name(c->stat), s->n, testbed,
					     c->backend ? c->backend : "?",
					     pmc_verdict_name(c->verdict)) < 0) {
					free(name);
					free(range);
					json_decref(doc);
					return NULL;
				}
				json_array_append_new(doc, json_pack("{s:s, s:s, s:f, s:s, s:s}", "name",
								     name, "unit", unit_of(s->label),
								     "value", judged(c, s), "range",
								     range, "extra", extra));
				free(name);
				free(range);
				free(extra);
			}
		}
	}
	return doc;
}
