/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the results reader: any bytes either read as a
 * results document or are refused with a message; a case that reads is
 * written back (pmc__result_to_json) and must read again.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmc__results rs;
	json_error_t jerr;
	json_t *doc = json_loadb((const char *)data, size, 0, &jerr);
	char why[1024] = "";

	if (!doc)
		return 0;
	if (pmc__results_from_json(doc, "fuzz.json", &rs, why, sizeof(why)) != 0) {
		if (!why[0])
			abort(); /* a refusal always says why */
	} else {
		for (size_t i = 0; i < rs.n; i++) {
			json_t *back = pmc__result_to_json(&rs.cases[i]);
			struct pmc__result r;

			if (!back)
				abort();
			if (pmc__result_from_json(back, &r, "again", why, sizeof(why)) != 0)
				abort(); /* what pmcheck writes, pmcheck reads */
			pmc__result_release(&r);
			json_decref(back);
		}
		pmc__results_release(&rs);
	}
	json_decref(doc);
	return 0;
}
