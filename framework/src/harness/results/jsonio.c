/* SPDX-License-Identifier: MIT */
/*
 * The bottom of the records layer: reading a string out of a JSON object,
 * the file part of a path, and writing a JSON document atomically.  It
 * calls nothing of the harness; result.c, result_read.c, provenance.c,
 * report.c and compare.c call it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_int.h"
#include "util/file.h"

const char *pmc__file_part(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

const char *pmc__jstr(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

int pmc__write_json(const char *path, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	size_t len;
	int rc;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\0';
	{
		char *t2 = realloc(text, len + 2);

		if (t2) {
			text = t2;
			text[len++] = '\n';
			text[len] = '\0';
		}
	}
	rc = pmc_write_file_atomic(path, text, len);
	free(text);
	return rc;
}

#define HWDB_JSON_MAX ((size_t)64 << 20) /* as PMC__HWDB_FILE_MAX */

int pmc__hwdb_json_load(const char *path, json_t **doc, char *why, size_t size)
{
	char shown[1024];
	struct stat st;
	size_t used = 0, cap;
	char *text = NULL;
	int fd, rc = 0;

	*doc = NULL;
	pmc__escape_ctl(shown, sizeof(shown), path);
	if (lstat(path, &st) != 0 && errno == ENOENT)
		return -ENOENT;
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, size, "cannot read %s: %s%s; every file of an hwdb must be a readable regular file: fix it or remove it",
			 shown, strerror(-rc),
			 rc == -ENOENT ? " (a symbolic link to nothing)" : rc == -ELOOP ? " (a symbolic link in a loop)" : "");
		return rc;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		mode_t m = st.st_mode;

		snprintf(why, size, "%s is %s (or a link to one), not a regular file: hwdb reads only regular files; remove it or replace it with one",
			 shown, S_ISDIR(m) ? "a directory" : S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device" :
				S_ISBLK(m) ? "a block device" : S_ISSOCK(m) ? "a socket" : "something else");
		rc = -EINVAL;
		goto out;
	}
	cap = (size_t)st.st_size < HWDB_JSON_MAX ? (size_t)st.st_size + 4096 : HWDB_JSON_MAX + 1;
	text = malloc(cap + 1);
	while (text && used < cap) {
		ssize_t n = read(fd, text + used, cap - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			snprintf(why, size, "cannot read %s: %s", shown, strerror(-rc));
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used == cap && cap <= HWDB_JSON_MAX) {
			char *grown = realloc(text, HWDB_JSON_MAX + 2);

			if (!grown) {
				rc = -ENOMEM;
				snprintf(why, size, "%s: out of memory", shown);
				goto out;
			}
			text = grown;
			cap = HWDB_JSON_MAX + 1;
		}
	}
	if (!text) {
		rc = -ENOMEM;
		snprintf(why, size, "%s: out of memory", shown);
		goto out;
	}
	if (used > HWDB_JSON_MAX) {
		rc = -EFBIG;
		snprintf(why, size, "%s is over the limit of 64 MiB for an hwdb file: it is not one calibration wrote; remove it",
			 shown);
		goto out;
	}
	*doc = json_loadb(text, used, 0, NULL);
out:
	free(text);
	close(fd);
	return rc;
}

/* ---- a JSON text writer ------------------------------------------------------------- */

void pmc__text_put(struct pmc__text *t, const char *s, size_t n)
{
	if (t->oom)
		return;
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 1024;
		char *p;

		while (t->len + n + 1 > cap)
			cap *= 2;
		p = realloc(t->p, cap);
		if (!p) {
			t->oom = true;
			return;
		}
		t->p = p;
		t->cap = cap;
	}
	memcpy(t->p + t->len, s, n);
	t->len += n;
	t->p[t->len] = '\0';
}

static void jw_put(struct pmc__jw *w, const char *s, size_t n)
{
	pmc__text_put(&w->text, s, n);
}

/* A value's separator: none after a key or first in its container. */
static void jw_value(struct pmc__jw *w)
{
	if (w->after_key)
		w->after_key = false;
	else if (w->depth && w->items[w->depth - 1]++)
		jw_put(w, ",", 1);
}

void pmc__jw_open(struct pmc__jw *w, char bracket)
{
	jw_value(w);
	jw_put(w, &bracket, 1);
	if (w->depth == sizeof(w->items) / sizeof(w->items[0]))
		w->failed = true;
	else
		w->items[w->depth++] = 0;
}

void pmc__jw_close(struct pmc__jw *w, char bracket)
{
	jw_put(w, &bracket, 1);
	if (w->depth)
		w->depth--;
}

/* A string as JSON carries it: the escapes JSON requires, and each byte
 * that is not part of valid UTF-8 written as the text \xHH (JSON holds
 * only UTF-8; pmc__escape_utf8 says the same of messages). */
static void jw_string(struct pmc__jw *w, const char *s)
{
	char esc[8];

	jw_put(w, "\"", 1);
	while (s && *s) {
		const char *run = s;
		size_t n;

		while ((unsigned char)*s >= 0x20 && *s != '"' && *s != '\\' && (unsigned char)*s < 0x80)
			s++;
		jw_put(w, run, (size_t)(s - run));
		if (!*s)
			break;
		if ((unsigned char)*s >= 0x80) {
			n = pmc__utf8_length((const unsigned char *)s);
			if (n) {
				jw_put(w, s, n);
				s += n;
			} else {
				/* The text \xHH, its backslash escaped for JSON. */
				jw_put(w, esc, (size_t)snprintf(esc, sizeof(esc), "\\\\x%02x", (unsigned char)*s));
				s++;
			}
			continue;
		}
		switch (*s) {
		case '"': jw_put(w, "\\\"", 2); break;
		case '\\': jw_put(w, "\\\\", 2); break;
		case '\n': jw_put(w, "\\n", 2); break;
		case '\t': jw_put(w, "\\t", 2); break;
		case '\r': jw_put(w, "\\r", 2); break;
		case '\b': jw_put(w, "\\b", 2); break;
		case '\f': jw_put(w, "\\f", 2); break;
		default:
			jw_put(w, esc, (size_t)snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char)*s));
		}
		s++;
	}
	jw_put(w, "\"", 1);
}

void pmc__jw_key(struct pmc__jw *w, const char *key)
{
	jw_value(w);
	jw_string(w, key);
	jw_put(w, ":", 1);
	w->after_key = true;
}

void pmc__jw_str(struct pmc__jw *w, const char *s)
{
	jw_value(w);
	jw_string(w, s ? s : "");
}

void pmc__jw_int(struct pmc__jw *w, long long v)
{
	char text[32];

	jw_value(w);
	jw_put(w, text, (size_t)snprintf(text, sizeof(text), "%lld", v));
}

/* As jansson writes a real: 17 significant digits (it reads back exactly),
 * with ".0" when that alone would read as an integer; not finite: null. */
void pmc__jw_real(struct pmc__jw *w, double v)
{
	char text[40];
	int n;

	if (v != v || v - v != 0) {
		pmc__jw_null(w);
		return;
	}
	jw_value(w);
	n = snprintf(text, sizeof(text), "%.17g", v);
	if (!strpbrk(text, ".e"))
		n += snprintf(text + n, sizeof(text) - (size_t)n, ".0");
	jw_put(w, text, (size_t)n);
}

void pmc__jw_bool(struct pmc__jw *w, bool b)
{
	jw_value(w);
	jw_put(w, b ? "true" : "false", b ? 4 : 5);
}

void pmc__jw_null(struct pmc__jw *w)
{
	jw_value(w);
	jw_put(w, "null", 4);
}

char *pmc__jw_take(struct pmc__jw *w)
{
	char *text = w->failed || w->text.oom || w->depth ? NULL : w->text.p;

	if (!text)
		free(w->text.p);
	memset(w, 0, sizeof(*w));
	return text;
}

json_t *pmc__jw_json(struct pmc__jw *w)
{
	char *text = pmc__jw_take(w);
	json_t *o = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	return o;
}
