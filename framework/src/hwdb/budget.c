/* SPDX-License-Identifier: MIT */
/*
 * Budget bounds: the text form ("<= 1200", "1000 +- 2%", "900..1100", ...),
 * its parser with positioned errors, and the test a measured value meets;
 * and the names a budget file can hold (tests, regions, libraries).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/event.h>
#include <pmcheck/hwdb.h>
#include <pmcheck/machine.h>

#include "hwdb_int.h"

/* ---- bounds ------------------------------------------------------------------------------- */

const char *pmc__skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/*
 * A non-negative decimal number (digits, optional fraction), or NULL with
 * *what.  A bound is compared with counts as a double, so a number the
 * double would change is refused rather than rounded: an integer above
 * 2^53 (past 2^64 no count is that large), or a fraction of more than 15
 * significant digits ("= 15.9999999999999999999" would be "= 16").
 */
#define BOUND_INT_MAX 9007199254740992.0 /* 2^53 */
static const char *parse_number(const char *p, double *out, const char **what)
{
	const char *s = p, *digits;
	size_t sig = 0;
	bool fraction = false;
	char *end;

	*what = "a number is missing";
	if (!isdigit((unsigned char)*p))
		return NULL;
	while (*p == '0' && isdigit((unsigned char)p[1]))
		p++;
	digits = p;
	while (isdigit((unsigned char)*p))
		p++;
	sig = *digits == '0' ? 0 : (size_t)(p - digits);
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		fraction = true;
		p++;
		for (const char *f = p; isdigit((unsigned char)*f); f++)
			if (sig || *f != '0')
				sig++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	/* The integer part against 2^53 as text: strtod would round 2^53 + 1
	 * down to 2^53 and let it through. */
	{
		size_t ilen = *digits == '0' ? 0 : (size_t)strspn(digits, "0123456789");

		if (ilen > 16 || (ilen == 16 && strncmp(digits, "9007199254740992", 16) > 0)) {
			*what = "a number larger than any count a bound holds exactly (at most 2^53 = 9007199254740992)";
			return NULL;
		}
	}
	if (fraction && sig > 15) {
		*what = "a number of more than 15 significant digits, which a bound cannot hold exactly (it would be rounded)";
		return NULL;
	}
	if ((size_t)(p - s) >= 64) {
		*what = fraction ? "a number of more than 63 characters, which a bound cannot hold exactly"
				 : "a number larger than any count a bound holds exactly (at most 2^53 = 9007199254740992)";
		return NULL;
	}
	{
		char buf[64];
		size_t len = (size_t)(p - s);

		memcpy(buf, s, len);
		buf[len] = '\0';
		*out = strtod(buf, &end);
		if (*end || !isfinite(*out) || *out > BOUND_INT_MAX) {
			*what = "a number larger than any count a bound holds exactly (at most 2^53 = 9007199254740992)";
			return NULL;
		}
	}
	return p;
}

/* The bound in text, or -1 with what is wrong and where. */
static int budget_parse(const char *text, struct pmc_budget *out, const char **what,
			const char **at)
{
	const char *p = pmc__skip_blank(text), *q;
	double a, b;

	memset(out, 0, sizeof(*out));
	if ((p[0] == '<' || p[0] == '>') && p[1] == '=') {
		out->kind = p[0] == '<' ? PMC_BOUND_LE : PMC_BOUND_GE;
		*at = pmc__skip_blank(p + 2);
		if (!(q = parse_number(*at, &a, what)))
			return -1;
		if (out->kind == PMC_BOUND_LE)
			out->hi = a;
		else
			out->lo = a;
		p = q;
	} else if (p[0] == '=') {
		out->kind = PMC_BOUND_EQ;
		*at = pmc__skip_blank(p + 1);
		if (!(q = parse_number(*at, &a, what)))
			return -1;
		out->lo = out->hi = a;
		p = q;
	} else {
		*at = p;
		if (!(q = parse_number(p, &a, what))) {
			if (!isdigit((unsigned char)*p))
				*what = "unexpected text";
			return -1;
		}
		p = pmc__skip_blank(q);
		if (p[0] == '.' && p[1] == '.') {
			*at = pmc__skip_blank(p + 2);
			if (!(q = parse_number(*at, &b, what))) {
				if (!isdigit((unsigned char)**at))
					*what = "the upper end of the range is missing";
				return -1;
			}
			if (b < a) {
				*at = p;
				*what = "the range is empty (upper end below lower end)";
				return -1;
			}
			out->kind = PMC_BOUND_RANGE;
			out->lo = a;
			out->hi = b;
			p = q;
		} else if (p[0] == '+' && p[1] == '-') {
			*at = pmc__skip_blank(p + 2);
			if (!(q = parse_number(*at, &b, what))) {
				if (!isdigit((unsigned char)**at))
					*what = "the tolerance is missing";
				return -1;
			}
			if (*q == '%') {
				/* Beyond 100% the range would reach below zero,
				 * which no count is: say "<= N" instead. */
				if (b > 100) {
					*what = "a tolerance above 100% (the range would reach below zero; write \"<= N\" for an upper bound alone)";
					return -1;
				}
				b = a * b / 100.0;
				q++;
			}
			out->kind = PMC_BOUND_RANGE;
			out->lo = a - b < 0 ? 0 : a - b;
			out->hi = a + b;
			p = q;
		} else {
			*at = p;
			*what = "a bare number";
			return -1;
		}
	}
	p = pmc__skip_blank(p);
	if (!strncmp(p, "per iteration", 13)) {
		out->per_iteration = 1;
		p = pmc__skip_blank(p + 13);
	}
	if (*p) {
		*at = p;
		*what = "trailing text";
		return -1;
	}
	/* Keep the text as written (trimmed), for reports. */
	{
		size_t len = strlen(pmc__skip_blank(text));

		while (len > 0 && isspace((unsigned char)pmc__skip_blank(text)[len - 1]))
			len--;
		if (len >= sizeof(out->text))
			len = sizeof(out->text) - 1;
		memcpy(out->text, pmc__skip_blank(text), len);
		out->text[len] = '\0';
	}
	return 0;
}

#define BOUND_FORMS "expected \"<= N\", \">= N\", \"= N\", \"A..B\" or \"N +-T[%%]\", optionally followed by \"per iteration\""

int pmc_budget_parse(const char *text, struct pmc_budget *out, struct pmc_error *err)
{
	const char *what = "", *at = text;
	char shown[PMC__HWDB_SHOWN_MAX * 4 + 32];

	if (budget_parse(text, out, &what, &at) == 0)
		return 0;
	return pmc__fail(err, PMC_E_SYNTAX, text, (int)(at - text),
			 "bound \"%s\": %s at column %d; " BOUND_FORMS,
			 pmc__hwdb_shown(shown, sizeof(shown), text), what, (int)(at - text) + 1);
}

int pmc__budget_parse_line(const char *text, struct pmc_budget *out, const char *where,
			   struct pmc_error *err)
{
	const char *what = "", *at = text;

	if (budget_parse(text, out, &what, &at) == 0)
		return 0;
	return pmc__fail(err, PMC_E_SYNTAX, where, (int)(at - text),
			 "%s: the bound: %s at its column %d; " BOUND_FORMS, where, what,
			 (int)(at - text) + 1);
}

int pmc_budget_holds(const struct pmc_budget *b, double x)
{
	switch (b->kind) {
	case PMC_BOUND_LE:
		return x <= b->hi;
	case PMC_BOUND_GE:
		return x >= b->lo;
	case PMC_BOUND_EQ:
	case PMC_BOUND_RANGE:
		return x >= b->lo && x <= b->hi;
	}
	return 0;
}

/* ---- names in budget files -------------------------------------------------------- */

/* The length of the UTF-8 sequence at p (0 if invalid) and its code point. */
static size_t utf8_decode(const unsigned char *p, unsigned *cp)
{
	size_t n = p[0] >= 0xF0 && p[0] < 0xF5 ? 4 : p[0] >= 0xE0 ? 3 : p[0] >= 0xC2 ? 2 : 0;

	if (n == 0 || p[0] >= 0xF5)
		return 0;
	*cp = p[0] & (0x3F >> (n - 1));
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (p[i] & 0x3F);
	}
	/* Overlong forms, surrogates and beyond U+10FFFF. */
	if ((n == 3 && *cp < 0x800) || (n == 4 && (*cp < 0x10000 || *cp > 0x10FFFF)) ||
	    (*cp >= 0xD800 && *cp <= 0xDFFF))
		return 0;
	return n;
}

/* Unicode's white space and the invisible characters that pass for none. */
static bool unicode_blank(unsigned cp)
{
	return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200D) ||
	       cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x2060 ||
	       cp == 0x3000 || cp == 0xFEFF || (cp >= 0x80 && cp < 0xA0);
}

const char *pmc__budget_name_why(const char *name)
{
	const unsigned char *p = (const unsigned char *)name;

	if (!*p)
		return "it is empty";
	if (strlen(name) >= 200)
		return "it is 200 bytes or longer";
	while (*p) {
		unsigned cp;
		size_t n;

		if (*p < 0x80) {
			if (*p <= ' ' || *p == 0x7F)
				return *p == ' ' || *p == '\t' ? "it contains a blank" : "it contains a control character";
			if (strchr("=:;#[]", *p))
				return "it contains one of = : ; # [ ]";
			p++;
			continue;
		}
		n = utf8_decode(p, &cp);
		if (n == 0)
			return "it is not valid UTF-8";
		if (unicode_blank(cp))
			return "it contains a Unicode blank or invisible character (such as a non-breaking space)";
		p += n;
	}
	return NULL;
}
