/* SPDX-License-Identifier: MIT */
/*
 * INI files through libinih, one line at a time so that every message
 * carries the exact file:line, with no continuation lines.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
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

/* ---- INI with line numbers ---------------------------------------------------------- */

struct ini_ctx {
	const char *name;      /* for messages */
	const char *p, *end;   /* remaining text */
	int line;              /* line number of the line last handed to inih */
	bool too_long;
	pmc_ini_handler handler;
	void *user;
	struct pmc_error *err;
	bool failed;           /* the handler reported an error (err filled) */
};

/*
 * inih reads through this: one line per call, so the line number is exact.
 * Leading blanks are dropped, so indentation never turns a line into a
 * continuation of the previous value (inih's multi-line syntax).
 */
static char *ini_read_line(char *str, int num, void *stream)
{
	struct ini_ctx *c = stream;
	const char *nl;
	size_t len;

	if (c->p >= c->end)
		return NULL;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	len = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);
	c->line++;
	while (len > 0 && (*c->p == ' ' || *c->p == '\t')) {
		c->p++;
		len--;
	}
	if (len + 2 > (size_t)num) {
		c->too_long = true;
		return NULL;
	}
	memcpy(str, c->p, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	/* A NUL inside the line would end it early for inih: refuse it. */
	if (memchr(c->p, '\0', len))
		str[0] = '\0', c->too_long = true;
	c->p += len + (nl ? 1 : 0);
	return c->too_long ? NULL : str;
}

static int ini_handle(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;

	/* inih goes on after a handler's error; the first one is reported. */
	if (c->failed)
		return 0;
	if (c->handler(c->user, section, name, value, c->line, c->err) != 0) {
		c->failed = true;
		return 0;
	}
	return 1;
}

int pmc_ini_parse_text(const char *name, const char *text, size_t len, pmc_ini_handler handler,
		       void *user, struct pmc_error *err)
{
	struct ini_ctx c = { name, text, text + len, 0, false, handler, user, err, false };
	int rc = ini_parse_stream(ini_read_line, &c, ini_handle, &c);

	if (c.too_long)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s:%d: line too long or contains a NUL byte (at most 190 characters per line)",
				 name, c.line);
	if (c.failed)
		return err ? err->code : PMC_E_SYNTAX;
	if (rc > 0)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s:%d: expected \"[section]\", \"name = value\" or a ; comment",
				 name, rc);
	if (rc < 0)
		return pmc__fail(err, -ENOMEM, name, -1, "%s: out of memory while parsing", name);
	return 0;
}


int pmc__ini_parse_path(const char *path, pmc_ini_handler handler, void *user,
			  struct pmc_error *err)
{
	size_t len = 0;
	char *text = NULL;
	int rc = pmc__read_file(path, &text, &len);

	if (rc)
		return pmc__fail(err, rc, path, -1, "cannot read %s: %s", path, strerror(-rc));
	rc = pmc_ini_parse_text(path, text, len, handler, user, err);
	free(text);
	return rc;
}
