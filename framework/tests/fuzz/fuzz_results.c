/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the results reader: any bytes either read as a
 * results document or are refused with a message; a case that reads is
 * written back (pmc__result_to_json), must read again, and must then be
 * written the same: what the reader accepts is consistent (no field lost
 * or changed on the way, no key or case given twice).  The JSON beneath
 * (jdoc.c) is held against jansson's json_loadb(JSON_REJECT_DUPLICATES):
 * both accept the same texts, and read them as the same values.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"
#include "jdoc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmc__results rs;
	char why[1024] = "";
	struct pmc__jdoc d;
	json_error_t jerr;
	json_t *theirs = json_loadb((const char *)data, size, JSON_REJECT_DUPLICATES, &jerr);
	int mine = pmc__jdoc_parse(&d, (const char *)data, size, "fuzz.json", why, sizeof(why));

	if (mine == -ENOMEM) {
		json_decref(theirs);
		pmc__jdoc_release(&d);
		return 0;
	}
	/* jansson drops a NUL byte that follows a number ({"a":0<NUL>} reads
	 * as {"a":0}); jdoc refuses every NUL outside a string, and inside. */
	if (theirs && mine != 0 && memchr(data, '\0', size)) {
		json_decref(theirs);
		theirs = NULL;
	}
	if ((mine == 0) != (theirs != NULL))
		abort(); /* one JSON reader took what the other refused */
	if (mine != 0 && !why[0])
		abort();
	if (theirs) {
		json_t *as_jansson = pmc__jdoc_json(&d, d.nodes);

		if (as_jansson && !json_equal(as_jansson, theirs))
			abort(); /* and both read the same values */
		json_decref(as_jansson);
	}
	json_decref(theirs);
	pmc__jdoc_release(&d);
	why[0] = '\0';
	if (pmc__results_parse((const char *)data, size, "fuzz.json", &rs, why, sizeof(why)) != 0) {
		if (!why[0])
			abort(); /* a refusal always says why */
		return 0;
	}
	for (size_t i = 0; i < rs.n; i++) {
		json_t *back = pmc__result_to_json(&rs.cases[i]), *again;
		struct pmc__result r;

		if (!back)
			abort();
		if (pmc__result_from_json(back, &r, "again", why, sizeof(why)) != 0)
			abort(); /* what pmcheck writes, pmcheck reads */
		again = pmc__result_to_json(&r);
		if (!again || !json_equal(back, again))
			abort(); /* and reads as it was written */
		for (size_t j = 0; j < i; j++)
			if (!strcmp(rs.cases[j].name, rs.cases[i].name))
				abort(); /* a case given twice was refused */
		json_decref(again);
		pmc__result_release(&r);
		json_decref(back);
	}
	pmc__results_release(&rs);
	return 0;
}
