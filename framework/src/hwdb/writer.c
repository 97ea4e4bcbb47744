/* SPDX-License-Identifier: MIT */
/*
 * Writing budget lines: one line replaced or added in its section, the
 * file written atomically, the rest of the file kept byte for byte.
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

/* ---- writing budget lines ------------------------------------------------------------------ */

/* Is this line "[section]" (after blanks)?  Copies the name. */
static bool line_section(const char *line, size_t len, char *name, size_t size)
{
	const char *p = line, *end = line + len;
	const char *close;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p != '[')
		return false;
	close = memchr(p, ']', (size_t)(end - p));
	if (!close || (size_t)(close - p - 1) >= size)
		return false;
	memcpy(name, p + 1, (size_t)(close - p - 1));
	name[close - p - 1] = '\0';
	return true;
}

/* Does this line set `region = event ...`? */
static bool line_is_budget(const char *line, size_t len, const char *region, const char *event)
{
	char buf[1024], ev[512];
	const char *eq, *p, *bound;
	size_t rlen;

	/* Only "region = event bound" matters: a long comment after it (a
	 * provenance naming many machines) must not hide the line. */
	for (size_t i = 1; i < len; i++)
		if (line[i] == ';' && (line[i - 1] == ' ' || line[i - 1] == '\t')) {
			len = i;
			break;
		}
	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	p = pmc__skip_blank(buf);
	if (*p == ';' || *p == '#' || *p == '[')
		return false;
	eq = strchr(p, '=');
	if (!eq)
		return false;
	rlen = (size_t)(eq - p);
	while (rlen > 0 && isspace((unsigned char)p[rlen - 1]))
		rlen--;
	if (rlen != strlen(region) || strncmp(p, region, rlen))
		return false;
	return pmc__split_budget_value(pmc__skip_blank(eq + 1), ev, sizeof(ev), &bound) == 0 &&
	       !strcmp(ev, event);
}

static bool name_ok(const char *s)
{
	return *s && !strpbrk(s, "=:;#[]\n\r\t ") && strlen(s) < 200;
}

/* dir/budgets/KEY/SUITE.ini into path, its directory made, its text read
 * ("" when it does not exist yet): 0, or an error naming it. */
static int read_budget_file(const char *dir, const char *key, const char *suite, char *path,
			    size_t size, char **text, size_t *len, struct pmc_error *err)
{
	int rc = 0;

	if (pmc__snprintf(path, size, "%s/budgets/%s", dir, key) < 0 || (rc = pmc__mkdir_p(path)))
		return pmc__fail(err, rc ? rc : -ENAMETOOLONG, path, -1, "cannot create %s: %s", path,
				 strerror(rc ? -rc : ENAMETOOLONG));
	pmc__snprintf(path, size, "%s/budgets/%s/%s.ini", dir, key, suite);
	/* Read as every reader of hwdb files reads (a FIFO or a link to
	 * /dev/zero refused); nothing there yet is an empty file. */
	rc = pmc__hwdb_read_file(path, text, len, err);
	if (rc == -ENOENT) {
		*len = 0;
		rc = (*text = strdup("")) ? 0 : pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	return rc;
}

/* out[0..len) written atomically to path; text and out freed: 0, or an
 * error naming path. */
static int write_budget_file(const char *path, char *text, char *out, size_t len,
			     struct pmc_error *err)
{
	int rc = pmc_write_file_atomic(path, out, len);

	free(text);
	free(out);
	return rc ? pmc__fail(err, rc, path, -1, "cannot write %s: %s", path, strerror(-rc)) : 0;
}

int pmc_hwdb_write_budget(const char *dir, const char *key, const char *suite, const char *test,
			  const char *region, const char *event, const char *bound,
			  char *old_line, size_t old_size, struct pmc_error *err)
{
	char path[PATH_MAX], sect[256], newline[8192];
	const char *why;
	struct pmc_budget check;
	char *text = NULL, *out = NULL;
	size_t len = 0, outlen = 0, cap;
	const char *p, *end;
	bool in_section = false, done = false;
	int rc;

	if (old_line && old_size)
		old_line[0] = '\0';
	if ((why = pmc__budget_name_why(test)))
		return pmc__fail(err, -EINVAL, test, -1,
				 "cannot write a budget for test \"%s\": %s; rename the test (budget files name tests without blanks, control characters or any of = : ; # [ ])",
				 test, why);
	if ((why = pmc__budget_name_why(region)))
		return pmc__fail(err, -EINVAL, region, -1,
				 "cannot write a budget for region \"%s\" of test \"%s\": %s; rename the region (budget files name regions without blanks, control characters or any of = : ; # [ ])",
				 region, test, why);
	if (!name_ok(key) || !name_ok(suite) || strchr(key, '/') || strchr(suite, '/') || !*event ||
	    strlen(event) >= PMC_HWDB_KEY_MAX * 2 || strpbrk(event, " \t;\n\r"))
		return pmc__fail(err, -EINVAL, region, -1,
				 "cannot write a budget for key \"%s\", suite \"%s\", test \"%s\", region \"%s\", event \"%s\": names in budget files must not contain blanks or any of = : ; # [ ] (and keys and suites no '/')",
				 key, suite, test, region, event);
	{
		/* The bound may carry a comment (" ; why"), as any INI line. */
		const char *semi = strstr(bound, " ;");
		char only[sizeof(check.text)];

		pmc__snprintf(only, sizeof(only), "%.*s",
			      (int)(semi ? (size_t)(semi - bound) : strlen(bound)), bound);
		if (strchr(only, ';') || strchr(bound, '\n'))
			return pmc__fail(err, -EINVAL, bound, -1,
					 "bound \"%s\": a comment must follow the bound after \" ;\"", bound);
		if ((rc = pmc_budget_parse(only, &check, err)))
			return rc;
	}
	if ((rc = read_budget_file(dir, key, suite, path, sizeof(path), &text, &len, err)))
		return rc;
	pmc__snprintf(newline, sizeof(newline), "%s = %s %s", region, event, bound);
	cap = len + strlen(newline) + strlen(test) + 64;
	out = malloc(cap);
	if (!out) {
		free(text);
		return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	/* First pass: copy lines, replacing the budget's line in place if it
	 * exists in the test's section. */
	for (p = text, end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line_section(p, l, sect, sizeof(sect))) {
			in_section = !strcmp(sect, test);
		} else if (in_section && !done && line_is_budget(p, l, region, event)) {
			if (old_line && old_size)
				pmc__snprintf(old_line, old_size, "%.*s", (int)l, p);
			memcpy(out + outlen, newline, strlen(newline));
			outlen += strlen(newline);
			out[outlen++] = '\n';
			done = true;
			p += l + (nl ? 1 : 0);
			continue;
		}
		memcpy(out + outlen, p, l);
		outlen += l;
		out[outlen++] = '\n';
		p += l + (nl ? 1 : 0);
	}
	if (!done) {
		/* Rebuild with the new line at the end of the test's section, or a
		 * new section at the end of the file. */
		char *out2 = malloc(cap + 64);
		size_t o2 = 0;
		bool placed = false;

		if (!out2) {
			free(text);
			free(out);
			return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
		}
		in_section = false;
		for (p = out, end = out + outlen; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			const char *q = nl ? nl + 1 : end;

			memcpy(out2 + o2, p, l);
			o2 += l;
			out2[o2++] = '\n';
			if (line_section(p, l, sect, sizeof(sect)))
				in_section = !strcmp(sect, test);
			if (in_section && !placed) {
				/* Last non-blank line of the section: the next line
				 * starts another section, or only blanks follow. */
				const char *r = q;
				bool last = true;

				while (r < end) {
					const char *rn = memchr(r, '\n', (size_t)(end - r));
					size_t rl = rn ? (size_t)(rn - r) : (size_t)(end - r);
					const char *s = pmc__skip_blank(r);

					if (line_section(r, rl, sect, sizeof(sect)))
						break;
					if ((size_t)(s - r) < rl) {
						last = false;
						break;
					}
					r = rn ? rn + 1 : end;
				}
				if (last) {
					memcpy(out2 + o2, newline, strlen(newline));
					o2 += strlen(newline);
					out2[o2++] = '\n';
					placed = true;
				}
			}
			p = q;
		}
		if (!placed) {
			if (o2 > 0 && out2[o2 - 1] == '\n' && o2 > 1 && out2[o2 - 2] != '\n')
				out2[o2++] = '\n';
			o2 += (size_t)sprintf(out2 + o2, "[%s]\n%s\n", test, newline);
		}
		free(out);
		out = out2;
		outlen = o2;
	}
	return write_budget_file(path, text, out, outlen, err);
}

/* ---- writing a case's library lines ------------------------------------------------ */

/* Is this line one of the libraries ("library:NAME = ...")? */
static bool line_is_library(const char *line, size_t len)
{
	const char *p = pmc__skip_blank(line);
	size_t n = strlen(PMC__LIBRARY_PREFIX);

	return (size_t)(p - line) + n <= len && !strncmp(p, PMC__LIBRARY_PREFIX, n);
}

int pmc_hwdb_write_libraries(const char *dir, const char *key, const char *suite,
			     const char *test, const struct pmc_library *l, size_t n,
			     struct pmc_error *err)
{
	char path[PATH_MAX], sect[256], *text = NULL, *out = NULL;
	size_t len = 0, outlen = 0, cap, lines_len = 0, at = SIZE_MAX;
	bool in_section = false;
	const char *why;
	int rc = 0;

	if ((why = pmc__budget_name_why(test)) || !name_ok(key) || !name_ok(suite))
		return pmc__fail(err, -EINVAL, test, -1,
				 "cannot write the libraries of test \"%s\" (key \"%s\", suite \"%s\"): names in budget files have no blanks, control characters or any of = : ; # [ ]",
				 test, key, suite);
	for (size_t i = 0; i < n; i++) {
		char line[1024];

		if (pmc__library_format(&l[i], line, sizeof(line)))
			return pmc__fail(err, -EINVAL, l[i].name, -1,
					 "cannot write library \"%s\" (%s) of test \"%s\" as a line of a budget file: its name or package has a character such a line cannot hold",
					 l[i].name, l[i].id, test);
		lines_len += strlen(line) + 1;
	}
	if ((rc = read_budget_file(dir, key, suite, path, sizeof(path), &text, &len, err)))
		return rc;
	cap = len + lines_len + strlen(test) + 8;
	if (!(out = malloc(cap))) {
		free(text);
		return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	/* The file without the section's library lines; `at`: the end of the
	 * section's last line that is not blank. */
	for (const char *p = text, *end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line_section(p, ll, sect, sizeof(sect)))
			in_section = !strcmp(sect, test);
		if (!(in_section && line_is_library(p, ll))) {
			memcpy(out + outlen, p, ll);
			outlen += ll;
			out[outlen++] = '\n';
			if (in_section && (size_t)(pmc__skip_blank(p) - p) < ll)
				at = outlen;
		}
		p += ll + 1;
	}
	if (at == SIZE_MAX) { /* a new section at the end */
		if (outlen > 1 && out[outlen - 2] != '\n')
			out[outlen++] = '\n';
		at = outlen + (size_t)sprintf(out + outlen, "[%s]\n", test);
		outlen = at;
	}
	memmove(out + at + lines_len, out + at, outlen - at);
	for (size_t i = 0, o = at; i < n; i++) {
		char line[1024];

		pmc__library_format(&l[i], line, sizeof(line));
		memcpy(out + o, line, strlen(line)); /* no NUL: the rest follows */
		o += strlen(line);
		out[o++] = '\n';
	}
	outlen += lines_len;
	return write_budget_file(path, text, out, outlen, err);
}
