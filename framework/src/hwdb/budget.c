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

/* A non-negative decimal number (digits, optional fraction). */
static const char *parse_number(const char *p, double *out)
{
	const char *s = p;
	char *end;

	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	{
		char buf[64];
		size_t len = (size_t)(p - s);

		if (len >= sizeof(buf))
			return NULL;
		memcpy(buf, s, len);
		buf[len] = '\0';
		*out = strtod(buf, &end);
		if (*end || !isfinite(*out))
			return NULL;
	}
	return p;
}

static int bound_error(struct pmc_error *err, const char *text, const char *at, const char *what)
{
	return pmc__fail(err, PMC_E_SYNTAX, text, (int)(at - text),
			 "bound \"%s\": %s at column %d; expected \"<= N\", \">= N\", \"= N\", \"A..B\" or \"N +-T[%%]\", optionally followed by \"per iteration\"",
			 text, what, (int)(at - text) + 1);
}

int pmc_budget_parse(const char *text, struct pmc_budget *out, struct pmc_error *err)
{
	const char *p = pmc__skip_blank(text), *q;
	double a, b;

	memset(out, 0, sizeof(*out));
	if ((p[0] == '<' || p[0] == '>') && p[1] == '=') {
		out->kind = p[0] == '<' ? PMC_BOUND_LE : PMC_BOUND_GE;
		q = parse_number(pmc__skip_blank(p + 2), &a);
		if (!q)
			return bound_error(err, text, pmc__skip_blank(p + 2), "a number is missing");
		if (out->kind == PMC_BOUND_LE)
			out->hi = a;
		else
			out->lo = a;
		p = q;
	} else if (p[0] == '=') {
		out->kind = PMC_BOUND_EQ;
		q = parse_number(pmc__skip_blank(p + 1), &a);
		if (!q)
			return bound_error(err, text, pmc__skip_blank(p + 1), "a number is missing");
		out->lo = out->hi = a;
		p = q;
	} else {
		q = parse_number(p, &a);
		if (!q)
			return bound_error(err, text, p, "unexpected text");
		p = pmc__skip_blank(q);
		if (p[0] == '.' && p[1] == '.') {
			q = parse_number(pmc__skip_blank(p + 2), &b);
			if (!q)
				return bound_error(err, text, pmc__skip_blank(p + 2), "the upper end of the range is missing");
			if (b < a)
				return bound_error(err, text, p, "the range is empty (upper end below lower end)");
			out->kind = PMC_BOUND_RANGE;
			out->lo = a;
			out->hi = b;
			p = q;
		} else if (p[0] == '+' && p[1] == '-') {
			q = parse_number(pmc__skip_blank(p + 2), &b);
			if (!q)
				return bound_error(err, text, pmc__skip_blank(p + 2), "the tolerance is missing");
			if (*q == '%') {
				b = a * b / 100.0;
				q++;
			}
			out->kind = PMC_BOUND_RANGE;
			out->lo = a - b < 0 ? 0 : a - b;
			out->hi = a + b;
			p = q;
		} else {
			return bound_error(err, text, p, "a bare number");
		}
	}
	p = pmc__skip_blank(p);
	if (!strncmp(p, "per iteration", 13)) {
		out->per_iteration = 1;
		p = pmc__skip_blank(p + 13);
	}
	if (*p)
		return bound_error(err, text, p, "trailing text");
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
