/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the string parsers behind the command-line doors
 * and for what messages quote: --tolerance specs (runner and compare),
 * the names a budget file may hold, the escaping of control characters,
 * and the INI reader in its keep-going mode (hwdb check).  The first byte
 * picks the mode; the rest is the text.  A crash, a sanitizer report, or
 * an accepted input that breaks the parser's promise is a finding.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/pmcheck.h>

#include "hwdb/hwdb_int.h"
#include "tools.h"

static int entry(void *user, const char *section, const char *name, const char *value, int line,
		 struct pmc_error *err)
{
	size_t *entries = user;

	(void)err;
	/* Names and values are trimmed and never hold a line break. */
	if (line <= 0 || strchr(name, '\n') || strchr(value, '\n') || strchr(section, '\n') ||
	    (*name && (name[0] == ' ' || name[strlen(name) - 1] == ' ')) ||
	    (*value && (value[0] == ' ' || value[strlen(value) - 1] == ' ')))
		abort();
	(*entries)++;
	return 0;
}

static void syntax(void *user, const struct pmc_error *e)
{
	(void)user;
	if (e->code != PMC_E_SYNTAX || !strstr(e->message, ":"))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	uint8_t mode;

	if (size < 1)
		return 0;
	mode = data[0] % 4;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (mode == 0) {
		struct pmc__tolerance t = { 0 };
		char why[1024];

		/* Twice: the second time the same event is a duplicate. */
		for (int i = 0; i < 2; i++)
			if (pmc__tolerance_add(&t, text, why, sizeof(why)) == 0 &&
			    (t.n > PMC__MAX_TOLERANCES || (!t.all_set && t.n == 0) ||
			     (t.all_set && !(t.all >= 0 && t.all <= 1000))))
				abort();
		if (t.n > 1)
			abort();
	} else if (mode == 1) {
		char out[64];

		pmc__escape_ctl(out, sizeof(out), text);
		if (strlen(out) >= sizeof(out))
			abort();
		for (const char *p = out; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
	} else if (mode == 2) {
		/* An accepted name has no blank, control or INI character. */
		if (!pmc__budget_name_why(text) &&
		    (!*text || strpbrk(text, " \t\r\n=:;#[]") || strlen(text) >= 200))
			abort();
	} else {
		struct pmc__ini_opts opts = { NULL, syntax };
		struct pmc_error err;
		size_t entries = 0;

		(void)pmc__ini_parse("fuzz.ini", (const char *)data + 1, size - 1, entry, &entries,
				     &opts, &err);
	}
	free(text);
	return 0;
}
