/* SPDX-License-Identifier: MIT */
/*
 * Results for dashboards (export.c): Bencher's metric format and
 * github-action-benchmark's customSmallerIsBetter, for `pmcheck results
 * --format=`.
 */
#ifndef PMCHECK_TOOLS_EXPORT_H
#define PMCHECK_TOOLS_EXPORT_H

#include <inttypes.h>
#include <stdbool.h>

#include <jansson.h>

#include "tools.h"

/* Bencher's limit on a measure slug. */
#define EXPORT_SLUG_MAX 64

/* What an export left out, for the caller to say. */
struct export_notes {
	size_t cases_without_figures;          /* skipped, broken: no samples */
	size_t by_verdict[PMC__NVERDICTS];      /* ... by verdict */
	size_t events_without_samples;         /* in cases that have figures */
};

/* { "CASE / REGION [BACKEND]": { "EVENT-SLUG": { "value", "lower_value",
 * "upper_value" } } }, or NULL out of memory. */
json_t *export_bencher(const struct pmc__results *rs, struct export_notes *notes);
/* [ { "name", "unit", "value", "range", "extra" } ], each event of each
 * region; testbed names the machine in "extra".  NULL out of memory. */
json_t *export_github(const struct pmc__results *rs, const char *testbed,
		      struct export_notes *notes);

#endif
