/* SPDX-License-Identifier: MIT */
/* Case registration (from PMC_TEST constructors), names and filters. */
#define _GNU_SOURCE
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"

static const struct pmc_test_def **cases;
static size_t ncases, capcases;

/* Constructors run before main: failure to grow the table cannot be
 * reported through the normal path, so it is reported here and the case
 * is missing from --list (which a discovery run would show). */
void pmc_test_register(const struct pmc_test_def *def)
{
	if (ncases == capcases) {
		size_t cap = capcases ? capcases * 2 : 64;
		const struct pmc_test_def **p = realloc(cases, cap * sizeof(*p));

		if (!p) {
			fprintf(stderr, "pmcheck: out of memory registering %s.%s\n", def->suite,
				def->name);
			return;
		}
		cases = p;
		capcases = cap;
	}
	cases[ncases++] = def;
}

size_t pmc__ncases(void)
{
	return ncases;
}

const struct pmc_test_def *pmc__case(size_t i)
{
	return i < ncases ? cases[i] : NULL;
}

void pmc__full_name(const struct pmc_test_def *def, char *buf, size_t size)
{
	snprintf(buf, size, "%s.%s", def->suite, def->name);
}

/* One glob, possibly followed by ',' : match against name. */
static bool glob_match(const char *glob, size_t len, const char *name)
{
	char pat[256];

	if (len >= sizeof(pat))
		return false;
	memcpy(pat, glob, len);
	pat[len] = '\0';
	return fnmatch(pat, name, 0) == 0;
}

bool pmc__filter_match(const char *filter, const char *full_name)
{
	bool any_positive = false, included = false;
	const char *p = filter;

	if (!filter || !*filter)
		return true;
	while (*p) {
		size_t len = strcspn(p, ",");
		bool negative = *p == '-';

		if (negative) {
			if (len > 1 && glob_match(p + 1, len - 1, full_name))
				return false;
		} else if (len > 0) {
			any_positive = true;
			if (glob_match(p, len, full_name))
				included = true;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return any_positive ? included : true;
}
