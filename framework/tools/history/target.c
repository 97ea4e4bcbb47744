/* SPDX-License-Identifier: MIT */
/*
 * A history store's TARGET read as libpq is to read it and as it may be
 * printed (target.h): no connection is made here, so the fuzzer
 * (framework/tests/fuzz/fuzz_history.c) reaches all of it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "target.h"

/* The scheme of a connection URI, in any case (RFC 3986: schemes are
 * case-insensitive); its length, or 0. */
static size_t uri_scheme(const char *target)
{
	if (!strncasecmp(target, "postgresql://", 13))
		return 13;
	if (!strncasecmp(target, "postgres://", 11))
		return 11;
	return 0;
}

/* A libpq keyword string starts with a keyword and "=" ("host=... dbname=..."). */
static bool keyword_form(const char *target)
{
	const char *p = target;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!isalpha((unsigned char)*p))
		return false;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	while (*p == ' ' || *p == '\t')
		p++;
	return *p == '=';
}

bool hdb_target_is_pg(const char *target)
{
	return uri_scheme(target) || keyword_form(target);
}

static bool secret_key(const char *key, size_t n)
{
	return (n == 8 && !strncmp(key, "password", 8)) || (n == 11 && !strncmp(key, "sslpassword", 11));
}

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

/* %XX decoded, as libpq decodes a URI's parts; a malformed escape is kept. */
static char *pct_decode(const char *s, size_t n)
{
	char *out = malloc(n + 1), *o = out;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval((unsigned char)s[i + 1]) >= 0 &&
		    hexval((unsigned char)s[i + 2]) >= 0) {
			*o++ = (char)(hexval((unsigned char)s[i + 1]) * 16 + hexval((unsigned char)s[i + 2]));
			i += 2;
		} else {
			*o++ = s[i];
		}
	}
	*o = '\0';
	return out;
}

/* A secret of the connection string, as written and as decoded. */
static void add_secret(struct hdb_target *db, const char *s, size_t n)
{
	char *raw, *decoded;

	if (!n || db->nsecrets + 2 > sizeof(db->secrets) / sizeof(db->secrets[0]))
		return;
	raw = strndup(s, n);
	decoded = pct_decode(s, n);
	if (raw)
		db->secrets[db->nsecrets++] = raw;
	if (decoded && raw && *decoded && strcmp(decoded, raw))
		db->secrets[db->nsecrets++] = decoded;
	else
		free(decoded);
}

/*
 * A URI as libpq is to read it (*conn: the scheme in lower case, the only
 * spelling libpq knows; in another it would take the URI for keywords and
 * quote it whole in its error) and as it may be printed (*shown: the user
 * without the password, the query without password= and sslpassword=).
 * The user information ends at the last '@'; a '/', '?', '#' or '@' before
 * it makes the URI ambiguous (libpq would take part of the password for the
 * host and print it), so it is refused: -1, nothing of it printed.
 */
static int parse_uri(struct hdb_target *db, const char *uri, char **conn, char **shown)
{
	size_t scheme = uri_scheme(uri);
	const char *rest = uri + scheme, *at = strrchr(rest, '@'), *q;
	char *out = malloc(strlen(uri) + 16), *o;
	size_t n;

	*conn = strdup(uri);
	if (!*conn || !out) {
		free(out);
		return -2;
	}
	for (size_t i = 0; i < scheme; i++)
		(*conn)[i] = (char)tolower((unsigned char)(*conn)[i]);
	o = stpcpy(out, scheme == 13 ? "postgresql://" : "postgres://");
	if (at) {
		const char *colon = memchr(rest, ':', (size_t)(at - rest));

		if (strcspn(rest, "/?#@") < (size_t)(at - rest)) {
			free(out);
			return -1;
		}
		if (colon)
			add_secret(db, colon + 1, (size_t)(at - colon - 1));
		o = stpncpy(o, rest, (size_t)((colon ? colon : at) - rest));
		*o++ = '@';
		rest = at + 1;
	}
	q = strchr(rest, '?');
	n = q ? (size_t)(q - rest) : strlen(rest);
	memcpy(o, rest, n);
	o += n;
	/* Query parameters: all but the secrets (keys decoded, as libpq does). */
	for (bool first = true; q && *q;) {
		const char *key = q + 1, *end = key + strcspn(key, "&");
		const char *eq = memchr(key, '=', (size_t)(end - key));
		char *name = pct_decode(key, (size_t)((eq ? eq : end) - key));

		if (name && secret_key(name, strlen(name))) {
			if (eq)
				add_secret(db, eq + 1, (size_t)(end - eq - 1));
		} else if (end > key) {
			*o++ = first ? '?' : '&';
			o = stpncpy(o, key, (size_t)(end - key));
			first = false;
		}
		free(name);
		q = *end ? end : NULL;
	}
	*o = '\0';
	*shown = out;
	return 0;
}

/*
 * A keyword string (libpq's "keyword = value ...", a value bare or in single
 * quotes with backslash escapes) as it may be printed: every keyword but
 * the secrets.  -1 when it does not parse; nothing of it is printed then.
 */
static int parse_keywords(struct hdb_target *db, const char *s, char **shown)
{
	/* A quoted value may end a pair with no space before the next one
	 * ("host='a'port=5", as libpq reads it): a space each is added. */
	char *out = malloc(2 * strlen(s) + 1), *o = out;
	const char *p = s;

	if (!out)
		return -2;
	*o = '\0';
	for (;;) {
		const char *key, *val;
		size_t klen;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		key = p;
		while (isalnum((unsigned char)*p) || *p == '_')
			p++;
		klen = (size_t)(p - key);
		while (isspace((unsigned char)*p))
			p++;
		if (!klen || *p != '=') {
			free(out);
			return -1;
		}
		p++;
		while (isspace((unsigned char)*p))
			p++;
		val = p;
		if (*p == '\'') {
			for (p++; *p && *p != '\''; p++)
				if (*p == '\\' && p[1])
					p++;
			if (*p != '\'') {
				free(out);
				return -1;
			}
			p++;
		} else {
			while (*p && !isspace((unsigned char)*p))
				p++;
		}
		if (secret_key(key, klen)) {
			size_t n = (size_t)(p - val);

			if (n >= 2 && *val == '\'')
				add_secret(db, val + 1, n - 2);
			else
				add_secret(db, val, n);
			continue;
		}
		if (o != out)
			*o++ = ' ';
		o = stpncpy(o, key, (size_t)(p - key));
		*o = '\0';
	}
	*shown = out;
	return 0;
}

void hdb_target_scrub(const struct hdb_target *db, char *msg, size_t size)
{
	for (size_t i = 0; i < db->nsecrets; i++) {
		char out[1024], *o = out;
		const char *p = msg, *hit;
		size_t n = strlen(db->secrets[i]);

		if (!n || !strstr(msg, db->secrets[i]))
			continue;
		while ((hit = strstr(p, db->secrets[i])) && o + (hit - p) + 4 < out + sizeof(out)) {
			memcpy(o, p, (size_t)(hit - p));
			o = stpcpy(o + (hit - p), "***");
			p = hit + n;
		}
		snprintf(o, sizeof(out) - (size_t)(o - out), "%s", hit ? "***" : p);
		out[size - 1 < sizeof(out) - 1 ? size - 1 : sizeof(out) - 1] = '\0';
		memcpy(msg, out, strlen(out) + 1);
	}
}

void hdb_target_message(const struct hdb_target *t, const char *msg, char *out, size_t size)
{
	size_t n;

	snprintf(out, size, "%s", msg && *msg ? msg : "unknown error");
	hdb_target_scrub(t, out, size);
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	n = strlen(out);
	while (n && out[n - 1] == ' ')
		out[--n] = '\0';
}

int hdb_target_parse(const char *target, struct hdb_target *t)
{
	memset(t, 0, sizeof(*t));
	t->uri = uri_scheme(target) != 0;
	if (t->uri)
		return parse_uri(t, target, &t->conn, &t->shown);
	if (keyword_form(target))
		return parse_keywords(t, target, &t->shown);
	return 1;
}

void hdb_target_release(struct hdb_target *t)
{
	for (size_t i = 0; i < t->nsecrets; i++)
		free(t->secrets[i]);
	free(t->conn);
	free(t->shown);
	memset(t, 0, sizeof(*t));
}
