/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the hwdb parsers: the line-numbered INI reader, the
 * budget line split and the bound grammar, and map-style regex keys; and for
 * the perf sample-record decoder.  The
 * first input byte picks the mode; the rest is the file text.  Any crash,
 * sanitizer report, or a parse that "succeeds" with an inconsistent result
 * is a finding.
 */
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/pmcheck.h>

#include "hwdb/hwdb_int.h"

static int budget_line(void *user, const char *section, const char *name, const char *value,
		       int line, struct pmc_error *err)
{
	struct pmc_budget b;
	const char *sp = strpbrk(value, " \t");

	(void)user;
	(void)section;
	(void)name;
	if (line <= 0)
		abort(); /* line numbers start at 1 */
	if (sp && pmc_budget_parse(sp, &b, err) == 0) {
		/* A parsed bound is a real interval. */
		if (b.kind == PMC_BOUND_RANGE && !(b.lo <= b.hi))
			abort();
		if (b.kind == PMC_BOUND_EQ && b.lo != b.hi)
			abort();
		(void)pmc_budget_holds(&b, b.lo);
	}
	return 0;
}

static int map_line(void *user, const char *section, const char *name, const char *value,
		    int line, struct pmc_error *err)
{
	regex_t re;

	(void)user;
	(void)section;
	(void)value;
	(void)line;
	(void)err;
	char why[160];

	/* The library's own guard decides what reaches regcomp. */
	if (pmc__map_pattern_compile(&re, name, why, sizeof(why)) == 0) {
		(void)regexec(&re, "GenuineIntel-6-CF-2", 0, NULL, 0);
		regfree(&re);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmc_error err;
	char *text;

	if (size < 1)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 4) {
	case 3: {
		/* Sample records: 16 bytes of layout, then the record.  The decoder
		 * must stay inside the record whatever its fields claim. */
		struct pmc_sample_layout lay = { 0 };
		struct pmc_sample smp;

		if (size < 1 + 16 + 8)
			break;
		memcpy(&lay.sample_type, data + 1, 8);
		memcpy(&lay.read_format, data + 9, 8);
		lay.sample_regs_user = lay.read_format >> 8;
		lay.sample_id_all = data[9] & 1;
		lay.branch_hw_index = data[10] & 1;
		{
			size_t n = size - 17;
			unsigned char *rec = malloc(n); /* exact size: ASan sees any overread */

			if (rec) {
				memcpy(rec, data + 17, n);
				pmc_sample_parse(rec, n, &lay, &smp, &err);
				pmc_sample_id_parse(rec, n, &lay, &smp, &err);
				free(rec);
			}
		}
		break;
	}
	case 0:
		pmc_ini_parse_text("fuzz.ini", text, size - 1, budget_line, NULL, &err);
		break;
	case 1: {
		struct pmc_budget b;

		if (pmc_budget_parse(text, &b, &err) != 0 && err.position < 0)
			abort(); /* a syntax error always has a position */
		break;
	}
	default:
		pmc_ini_parse_text("map.ini", text, size - 1, map_line, NULL, &err);
		break;
	}
	free(text);
	return 0;
}
