/* SPDX-License-Identifier: MIT */
/*
 * The INI dialect of hwdb files, read one line at a time so that every
 * message carries the exact file:line.  Lines have no length limit: what
 * `hwdb merge` and `--calibrate` write (a provenance comment naming every
 * machine) must read back whatever its length.
 *
 * A line, after leading blanks, is one of:
 *   empty, or a comment starting with ';' or '#';
 *   "[section]", optionally followed by blanks and a comment;
 *   "name = value": split at the first '=', both sides trimmed; in the
 *   value, a ';' after a blank starts a comment.
 * A UTF-8 byte-order mark before the first line is skipped.  There are no
 * continuation lines: an indented line is a line of its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/hwdb.h>

#include "hwdb_int.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* [s, *e) without blanks at either end. */
static char *trim(char *s, char **e)
{
	while (s < *e && is_blank(*s))
		s++;
	while (*e > s && is_blank((*e)[-1]))
		(*e)--;
	**e = '\0';
	return s;
}

/* The end of a value: the first ';' that follows a blank, or the end. */
static char *value_end(char *v, char *end)
{
	for (char *p = v; p < end; p++)
		if (*p == ';' && p > v && is_blank(p[-1]))
			return p;
	return end;
}

/* A line that is not INI: the error, or with opts->syntax a report and 0. */
static int syntax(const struct pmc__ini_opts *opts, void *user, struct pmc_error *err,
		  const char *name, int line, const char *what)
{
	struct pmc_error mine;

	if (opts && opts->syntax) {
		pmc__fail(&mine, PMC_E_SYNTAX, name, -1, "%s:%d: %s", name, line, what);
		opts->syntax(user, &mine);
		return 0;
	}
	return pmc__fail(err, PMC_E_SYNTAX, name, -1, "%s:%d: %s", name, line, what);
}

int pmc__ini_parse(const char *name, const char *text, size_t len, pmc_ini_handler handler,
		   void *user, const struct pmc__ini_opts *opts, struct pmc_error *err)
{
	int *section_line = opts ? opts->section_line : NULL;
	const char *p = text, *end = text + len;
	char *buf = NULL, *section = NULL;
	size_t cap = 0;
	int line = 0, rc = 0;

	section = strdup("");
	if (!section)
		return pmc__fail(err, -ENOMEM, name, -1, "%s: out of memory while parsing", name);
	if (len >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	while (p < end && rc == 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char *s, *e;

		line++;
		if (memchr(p, '\0', n)) {
			rc = syntax(opts, user, err, name, line,
				    "contains a NUL byte: hwdb files are text; remove it");
			p += n + (nl ? 1 : 0);
			continue;
		}
		if (n + 1 > cap) {
			char *grown = realloc(buf, n + 1);

			if (!grown) {
				rc = pmc__fail(err, -ENOMEM, name, -1, "%s:%d: out of memory", name, line);
				break;
			}
			buf = grown;
			cap = n + 1;
		}
		memcpy(buf, p, n);
		p += n + (nl ? 1 : 0);
		e = buf + n;
		s = trim(buf, &e);
		if (*s == '\0' || *s == ';' || *s == '#')
			continue;
		if (*s == '[') {
			char *close = strchr(s, ']'), *rest, *copy;

			if (!close) {
				rc = syntax(opts, user, err, name, line,
					    "a section header without its ']': expected \"[name]\"");
				continue;
			}
			rest = close + 1;
			while (is_blank(*rest))
				rest++;
			if (*rest && *rest != ';' && *rest != '#') {
				rc = syntax(opts, user, err, name, line,
					    "text after a section header: expected \"[name]\", optionally followed by a ; comment");
				continue;
			}
			*close = '\0';
			copy = strdup(s + 1);
			if (!copy) {
				rc = pmc__fail(err, -ENOMEM, name, -1, "%s:%d: out of memory", name, line);
				break;
			}
			free(section);
			section = copy;
			if (section_line)
				*section_line = line;
			continue;
		}
		{
			char *eq = strchr(s, '='), *k, *v, *ke, *ve;

			if (!eq) {
				rc = syntax(opts, user, err, name, line,
					    "expected \"[section]\", \"name = value\" or a ; comment");
				continue;
			}
			ke = eq;
			k = trim(s, &ke);
			ve = value_end(eq + 1, e);
			v = trim(eq + 1, &ve);
			rc = handler(user, section, k, v, line, err);
			if (rc && err && err->code == 0)
				err->code = rc;
		}
	}
	free(buf);
	free(section);
	return rc;
}

int pmc_ini_parse_text(const char *name, const char *text, size_t len, pmc_ini_handler handler,
		       void *user, struct pmc_error *err)
{
	return pmc__ini_parse(name, text, len, handler, user, NULL, err);
}

/* What a path that is not a regular file is, for messages. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "something else";
}

int pmc__hwdb_read_file(const char *path, char **text, size_t *len, struct pmc_error *err)
{
	char shown[PATH_MAX + 64];
	struct stat st;
	size_t cap, used = 0;
	char *buf = NULL;
	int fd = -1, rc = 0;

	*text = NULL;
	*len = 0;
	pmc__escape_ctl(shown, sizeof(shown), path);
	if (lstat(path, &st) != 0) {
		rc = -errno;
		if (rc == -ENOENT)
			return pmc__fail(err, rc, path, -1, "%s does not exist", shown);
		return pmc__fail(err, rc, path, -1,
				 "cannot read %s: %s; every file and directory of an hwdb must be readable by whoever runs pmcheck (fix its mode or owner)",
				 shown, strerror(-rc));
	}
	/* Not blocking: a FIFO's open would wait for a writer; fstat then
	 * refuses it.  A link is followed, to a regular file only. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		if (rc == -ENOENT || rc == -ELOOP)
			return pmc__fail(err, PMC_E_SYNTAX, path, -1,
					 "%s is a symbolic link %s, so no budget in it could be read: remove it or point it at a regular file",
					 shown, rc == -ENOENT ? "to nothing" : "in a loop");
		return pmc__fail(err, rc, path, -1,
				 "cannot read %s: %s; every file and directory of an hwdb must be readable by whoever runs pmcheck (fix its mode or owner)",
				 shown, strerror(-rc));
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = pmc__fail(err, PMC_E_SYNTAX, path, -1,
			       "%s is %s (or a link to one), not a regular file: hwdb reads only regular files; remove it or replace it with one",
			       shown, file_kind(st.st_mode));
		goto out;
	}
	if ((unsigned long long)st.st_size > PMC__HWDB_FILE_MAX) {
		rc = pmc__fail(err, -EFBIG, path, -1,
			       "%s: %llu bytes, above the limit of %d MiB for an hwdb file: hwdb files are text a person reads; remove it or split it",
			       shown, (unsigned long long)st.st_size, (int)(PMC__HWDB_FILE_MAX >> 20));
		goto out;
	}
	cap = (size_t)st.st_size + 4096;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t n;

		if (used == cap) {
			char *grown = cap < PMC__HWDB_FILE_MAX + 1 ? realloc(buf, PMC__HWDB_FILE_MAX + 2) : NULL;

			if (!grown) {
				rc = pmc__fail(err, -EFBIG, path, -1,
					       "%s grew while read to over the limit of %d MiB for an hwdb file",
					       shown, (int)(PMC__HWDB_FILE_MAX >> 20));
				goto out;
			}
			buf = grown;
			cap = PMC__HWDB_FILE_MAX + 1;
		}
		n = read(fd, buf + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = pmc__fail(err, -errno, path, -1, "cannot read %s: %s", shown, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	if (!buf) {
		rc = pmc__fail(err, -ENOMEM, path, -1, "%s: out of memory", shown);
		goto out;
	}
	if (used > PMC__HWDB_FILE_MAX) {
		rc = pmc__fail(err, -EFBIG, path, -1,
			       "%s grew while read to over the limit of %d MiB for an hwdb file", shown,
			       (int)(PMC__HWDB_FILE_MAX >> 20));
		goto out;
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

const char *pmc__hwdb_shown(char *buf, size_t size, const char *s)
{
	size_t len = strlen(s);

	if (len <= PMC__HWDB_SHOWN_MAX) {
		pmc__escape_ctl(buf, size, s);
	} else {
		char start[PMC__HWDB_SHOWN_MAX + 1], esc[PMC__HWDB_SHOWN_MAX * 4 + 1];

		memcpy(start, s, PMC__HWDB_SHOWN_MAX);
		start[PMC__HWDB_SHOWN_MAX] = '\0';
		pmc__escape_ctl(esc, sizeof(esc), start);
		snprintf(buf, size, "%s... (%zu bytes)", esc, len);
	}
	return buf;
}

int pmc__ini_parse_path(const char *path, pmc_ini_handler handler, void *user,
			const struct pmc__ini_opts *opts, struct pmc_error *err)
{
	size_t len = 0;
	char *text = NULL;
	int rc = pmc__hwdb_read_file(path, &text, &len, err);

	if (rc)
		return rc;
	rc = pmc__ini_parse(path, text, len, handler, user, opts, err);
	free(text);
	return rc;
}
