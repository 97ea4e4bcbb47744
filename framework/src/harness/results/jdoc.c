/* SPDX-License-Identifier: MIT */
/*
 * A strict JSON reader over a buffer (jdoc_int.h says what it accepts):
 * one pass, recursive descent, nodes appended to one array.  An error
 * names the file, its line and byte, what was found and what to do.
 *
 * Over 600 lines because a JSON reader's grammar (strings with their
 * escapes, UTF-8 and surrogates; numbers as jansson reads them; nesting) is
 * one recursive descent, fuzzed as a whole against jansson (fuzz_results).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jdoc_int.h"
#include "util/file.h"

/* As jansson's JSON_PARSER_MAX_DEPTH. */
#define MAX_DEPTH 2048
/* Objects of more members than this get a sorted index: a key given twice
 * is found, and a member looked up, without comparing every pair. */
#define FEW 8

/* Bytes a string holds as they are, and the blanks between tokens: one
 * table look-up a byte instead of four comparisons. */
static const unsigned char plain[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7f] = 1, /* not '"' (0x22), '\\' (0x5c) */
};
static const unsigned char blank[256] = { [' '] = 1, ['\n'] = 1, ['\t'] = 1, ['\r'] = 1 };

static uint16_t hash_key(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return (uint16_t)(h ^ h >> 16);
}

struct parser {
	struct pmc__jdoc *d;
	const unsigned char *p, *start, *end;
	const char *shown;
	char *why;
	size_t size;
	int rc;
};

static void fail_at(struct parser *ps, const unsigned char *at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void fail_at(struct parser *ps, const unsigned char *at, const char *fmt, ...)
{
	size_t line = 1, off = (size_t)(at - ps->start), len;
	va_list ap;

	if (ps->rc)
		return;
	ps->rc = -EINVAL;
	for (const unsigned char *q = ps->start; q < at; q++)
		line += *q == '\n';
	snprintf(ps->why, ps->size, "%s:%zu, byte %zu: ", ps->shown, line, off);
	len = strlen(ps->why);
	va_start(ap, fmt);
	vsnprintf(ps->why + len, ps->size - len, fmt, ap);
	va_end(ap);
}

static void not_json(struct parser *ps, const unsigned char *at, const char *what)
{
	if (at >= ps->end)
		fail_at(ps, at, "not JSON: the text ends where %s was expected; give the whole file pmcheck wrote", what);
	else if (*at >= 0x20 && *at < 0x7f)
		fail_at(ps, at, "not JSON: '%c' where %s was expected; a results file is the JSON pmcheck wrote", *at, what);
	else
		fail_at(ps, at, "not JSON: byte 0x%02x where %s was expected; a results file is the JSON pmcheck wrote", *at, what);
}

static void oom(struct parser *ps)
{
	if (!ps->rc) {
		ps->rc = -ENOMEM;
		snprintf(ps->why, ps->size, "%s: out of memory", ps->shown);
	}
}

static bool grow(void **p, size_t *cap, size_t need, size_t each)
{
	size_t c = *cap ? *cap : 64;
	void *q;

	while (c < need)
		c *= 2;
	if (c == *cap)
		return true;
	if (c > UINT32_MAX || !(q = realloc(*p, c * each)))
		return false;
	*p = q;
	*cap = c;
	return true;
}

static struct pmc__jnode *new_node(struct parser *ps, uint8_t type)
{
	struct pmc__jdoc *d = ps->d;
	struct pmc__jnode *v;

	if (d->nnodes == d->cap && !grow((void **)&d->nodes, &d->cap, d->nnodes + 1, sizeof(*v))) {
		oom(ps);
		return NULL;
	}
	v = &d->nodes[d->nnodes++];
	memset(v, 0, sizeof(*v));
	v->type = type;
	v->skip = 1;
	v->at = (uint32_t)(ps->p - ps->start);
	return v;
}

static void skip_space(struct parser *ps)
{
	const unsigned char *p = ps->p;

	while (p < ps->end && blank[*p]) {
		p++;
		/* An indented file's lines start with runs of spaces. */
		while (ps->end - p >= 8) {
			uint64_t w;

			memcpy(&w, p, 8);
			if (w != 0x2020202020202020ull)
				break;
			p += 8;
		}
	}
	ps->p = p;
}

static bool put_str(struct parser *ps, const void *s, size_t n)
{
	struct pmc__jdoc *d = ps->d;

	if (d->slen + n + 1 > d->scap && !grow((void **)&d->strs, &d->scap, d->slen + n + 1, 1)) {
		oom(ps);
		return false;
	}
	memcpy(d->strs + d->slen, s, n);
	d->slen += n;
	return true;
}

static int hex4(const unsigned char *p, const unsigned char *end)
{
	int v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int c = p[i];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
			v |= (c | 0x20) - 'a' + 10;
		else
			return -1;
	}
	return v;
}

/* The length of the valid UTF-8 sequence at p (2 to 4 bytes; no overlong
 * form, no surrogate, nothing past U+10FFFF: as jansson checks), or 0. */
static size_t utf8_at(const unsigned char *p, const unsigned char *end)
{
	size_t n = *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : *p >= 0xc2 ? 2 : 0;
	unsigned cp;

	if (!n || *p > 0xf4 || (size_t)(end - p) < n)
		return 0;
	cp = *p & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if ((n == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (n == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return n;
}

static void put_utf8(struct parser *ps, unsigned cp)
{
	unsigned char b[4];
	size_t n;

	if (cp < 0x80) {
		b[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (unsigned char)(0xc0 | cp >> 6);
		b[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (unsigned char)(0xe0 | cp >> 12);
		b[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (unsigned char)(0xf0 | cp >> 18);
		b[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3f));
		b[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3f));
		b[3] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	put_str(ps, b, n);
}

/* A string at ps->p (its opening quote): unescaped into strs; its offset
 * there, or 0 on failure (offset 0 is the empty string every doc starts
 * with, never a parsed one). */
static uint32_t string(struct parser *ps)
{
	const unsigned char *q = ps->p + 1, *run;
	size_t off = ps->d->slen;

	for (;;) {
		run = q;
		while (q < ps->end && plain[*q])
			q++;
		if (q > run && !put_str(ps, run, (size_t)(q - run)))
			return 0;
		if (q >= ps->end) {
			fail_at(ps, ps->p, "not JSON: a string that is never closed; give the whole file pmcheck wrote");
			return 0;
		}
		if (*q == '"')
			break;
		if (*q < 0x20) {
			fail_at(ps, q, "not JSON: control character 0x%02x inside a string (JSON escapes it, as pmcheck writes it)", *q);
			return 0;
		}
		if (*q >= 0x80) {
			size_t n = utf8_at(q, ps->end);

			if (!n) {
				fail_at(ps, q, "not JSON: byte 0x%02x is not valid UTF-8 (JSON text is UTF-8, as pmcheck writes it)", *q);
				return 0;
			}
			if (!put_str(ps, q, n))
				return 0;
			q += n;
			continue;
		}
		/* A backslash. */
		if (q + 1 >= ps->end) {
			fail_at(ps, q, "not JSON: a string that is never closed; give the whole file pmcheck wrote");
			return 0;
		}
		switch (q[1]) {
		case '"': case '\\': case '/':
			put_str(ps, q + 1, 1);
			q += 2;
			continue;
		case 'b': put_str(ps, "\b", 1); q += 2; continue;
		case 'f': put_str(ps, "\f", 1); q += 2; continue;
		case 'n': put_str(ps, "\n", 1); q += 2; continue;
		case 'r': put_str(ps, "\r", 1); q += 2; continue;
		case 't': put_str(ps, "\t", 1); q += 2; continue;
		case 'u': {
			int cp = hex4(q + 2, ps->end), lo;

			if (cp < 0) {
				fail_at(ps, q, "not JSON: \\u is not followed by 4 hexadecimal digits");
				return 0;
			}
			if (cp == 0) {
				fail_at(ps, q, "not JSON: \\u0000 in a string (a results file's strings hold no NUL)");
				return 0;
			}
			if (cp >= 0xdc00 && cp <= 0xdfff) {
				fail_at(ps, q, "not JSON: \\u%04x is a low surrogate without its high one", (unsigned)cp);
				return 0;
			}
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (q + 7 >= ps->end || q[6] != '\\' || q[7] != 'u' ||
				    (lo = hex4(q + 8, ps->end)) < 0xdc00 || lo > 0xdfff) {
					fail_at(ps, q, "not JSON: \\u%04x is a high surrogate without its low one", (unsigned)cp);
					return 0;
				}
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				q += 6;
			}
			put_utf8(ps, (unsigned)cp);
			q += 6;
			continue;
		}
		default:
			fail_at(ps, q, "not JSON: \\%c is no JSON escape", q[1] >= 0x20 && q[1] < 0x7f ? q[1] : '?');
			return 0;
		}
	}
	if (!put_str(ps, "", 1) || ps->rc)
		return 0;
	ps->p = q + 1;
	return (uint32_t)off;
}

static void number(struct parser *ps, struct pmc__jnode *v)
{
	const unsigned char *q = ps->p, *digits;
	bool real = false, neg = false;
	unsigned long long u = 0;
	char buf[128], *copy = buf;
	size_t len;

	if (*q == '-') {
		neg = true;
		q++;
	}
	digits = q;
	if (q < ps->end && *q == '0')
		q++;
	else
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	if (q == digits) {
		not_json(ps, q, "a digit");
		return;
	}
	if (q < ps->end && *q == '.') {
		real = true;
		if (++q >= ps->end || *q < '0' || *q > '9') {
			not_json(ps, q, "a digit after '.'");
			return;
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		real = true;
		if (++q < ps->end && (*q == '+' || *q == '-'))
			q++;
		if (q >= ps->end || *q < '0' || *q > '9') {
			not_json(ps, q, "a digit of the exponent");
			return;
		}
		while (q < ps->end && *q >= '0' && *q <= '9')
			q++;
	}
	if (!real) {
		for (const unsigned char *c = digits; c < q; c++) {
			unsigned digit = (unsigned)(*c - '0');

			if (u > (ULLONG_MAX - digit) / 10 ||
			    (u = u * 10 + digit) > (unsigned long long)LLONG_MAX + neg) {
				fail_at(ps, ps->p, "not JSON: the integer %.*s%s is past 64 bits; a count in a results file is at most %lld",
					(int)(q - ps->p > 40 ? 40 : q - ps->p), (const char *)ps->p,
					q - ps->p > 40 ? "..." : "", LLONG_MAX);
				return;
			}
		}
		v->type = JSON_INTEGER;
		v->v.i = neg ? (long long)(0 - u) : (long long)u;
		ps->p = q;
		return;
	}
	len = (size_t)(q - ps->p);
	if (len >= sizeof(buf) && !(copy = malloc(len + 1))) {
		oom(ps);
		return;
	}
	memcpy(copy, ps->p, len);
	copy[len] = '\0';
	v->type = JSON_REAL;
	v->v.d = strtod(copy, NULL);
	if (copy != buf)
		free(copy);
	if (isinf(v->v.d)) {
		fail_at(ps, ps->p, "not JSON: the number %.*s%s is past the range of a double",
			(int)(len > 40 ? 40 : len), (const char *)ps->p, len > 40 ? "..." : "");
		return;
	}
	ps->p = q;
}

static int by_key(const void *a, const void *b, void *arg)
{
	const struct pmc__jdoc *d = arg;
	const struct pmc__jnode *x = &d->nodes[*(const uint32_t *)a], *y = &d->nodes[*(const uint32_t *)b];
	int c = strcmp(d->strs + x->key, d->strs + y->key);

	return c ? c : (x->at > y->at) - (x->at < y->at);
}

static void twice(struct parser *ps, const struct pmc__jnode *later)
{
	char key[200];

	pmc__escape_ctl(key, sizeof(key), ps->d->strs + later->key);
	fail_at(ps, ps->start + later->at,
		"key \"%s\" is given twice in one object: a results file names each field once, and which of the two is meant is unknown; remove one",
		key);
}

/* Members of the object at nodes[o] all read: a key given twice is refused;
 * more than FEW members get their sorted index for lookups. */
static void keys_once(struct parser *ps, size_t o)
{
	struct pmc__jdoc *d = ps->d;
	uint32_t n = d->nodes[o].n, *ix;
	const struct pmc__jnode *c;
	size_t i;

	if (n <= FEW)
		return; /* compared as each was read */
	if (!grow((void **)&d->index, &d->icap, d->nindex + n, sizeof(*d->index))) {
		oom(ps);
		return;
	}
	ix = d->index + d->nindex;
	c = &d->nodes[o + 1];
	for (i = 0; i < n; i++, c += c->skip)
		ix[i] = (uint32_t)(c - d->nodes);
	qsort_r(ix, n, sizeof(*ix), by_key, d);
	for (i = 1; i < n; i++)
		if (!strcmp(d->strs + d->nodes[ix[i - 1]].key, d->strs + d->nodes[ix[i]].key)) {
			twice(ps, &d->nodes[ix[i]]);
			return;
		}
	d->nodes[o].v.idx = (uint32_t)d->nindex;
	d->nindex += n;
}

static void value(struct parser *ps, int depth);

static void container(struct parser *ps, int depth, bool object)
{
	size_t self = ps->d->nnodes - 1;
	const unsigned char close = object ? '}' : ']';

	if (depth > MAX_DEPTH) {
		fail_at(ps, ps->p, "refused: values nested deeper than %d; a results file nests a few levels (give the file pmcheck wrote)", MAX_DEPTH);
		return;
	}
	ps->p++;
	skip_space(ps);
	if (ps->p < ps->end && *ps->p == close) {
		ps->p++;
		return;
	}
	for (;;) {
		uint32_t key = 0;
		uint16_t khash = 0;
		const unsigned char *at = ps->p;

		if (object) {
			if (ps->p >= ps->end || *ps->p != '"') {
				not_json(ps, ps->p, "a key (a string)");
				return;
			}
			if (!(key = string(ps)))
				return;
			khash = hash_key(ps->d->strs + key);
			/* A few members: the new key against each before it. */
			if (ps->d->nodes[self].n < FEW) {
				const struct pmc__jnode *c = &ps->d->nodes[self + 1];

				for (uint32_t i = 0; i < ps->d->nodes[self].n; i++, c += c->skip)
					if (c->khash == khash && !strcmp(ps->d->strs + c->key, ps->d->strs + key)) {
						struct pmc__jnode later = { .key = key, .at = (uint32_t)(at - ps->start) };

						twice(ps, &later);
						return;
					}
			}
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != ':') {
				not_json(ps, ps->p, "':' after the key");
				return;
			}
			ps->p++;
			skip_space(ps);
		}
		{
			size_t child = ps->d->nnodes;

			value(ps, depth + 1);
			if (ps->rc)
				return;
			ps->d->nodes[child].key = key;
			ps->d->nodes[child].khash = khash;
			if (object)
				ps->d->nodes[child].at = (uint32_t)(at - ps->start);
			ps->d->nodes[self].n++;
		}
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			skip_space(ps);
			continue;
		}
		if (ps->p < ps->end && *ps->p == close) {
			ps->p++;
			break;
		}
		not_json(ps, ps->p, object ? "',' or '}'" : "',' or ']'");
		return;
	}
	if (object)
		keys_once(ps, self);
}

static bool word(struct parser *ps, const char *w, size_t n)
{
	if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n))
		return false;
	ps->p += n;
	return true;
}

static void value(struct parser *ps, int depth)
{
	size_t self = ps->d->nnodes;
	struct pmc__jnode *v;
	unsigned char c;

	if (ps->p >= ps->end) {
		not_json(ps, ps->p, "a value");
		return;
	}
	c = *ps->p;
	if (!(v = new_node(ps, JSON_NULL)))
		return;
	switch (c) {
	case '{':
	case '[':
		v->type = c == '{' ? JSON_OBJECT : JSON_ARRAY;
		container(ps, depth, c == '{');
		break;
	case '"': {
		uint32_t s = string(ps);

		ps->d->nodes[self].type = JSON_STRING;
		ps->d->nodes[self].v.s = s;
		break;
	}
	case 't':
		v->type = JSON_TRUE;
		if (!word(ps, "true", 4))
			not_json(ps, ps->p, "a value");
		break;
	case 'f':
		v->type = JSON_FALSE;
		if (!word(ps, "false", 5))
			not_json(ps, ps->p, "a value");
		break;
	case 'n':
		if (!word(ps, "null", 4))
			not_json(ps, ps->p, "a value");
		break;
	default:
		if (c == '-' || (c >= '0' && c <= '9'))
			number(ps, v);
		else
			not_json(ps, ps->p, "a value");
	}
	if (!ps->rc)
		ps->d->nodes[self].skip = (uint32_t)(ps->d->nnodes - self);
}

int pmc__jdoc_parse(struct pmc__jdoc *d, const char *text, size_t len, const char *shown,
		    char *why, size_t size)
{
	struct parser ps = { d, (const unsigned char *)text, (const unsigned char *)text,
			     (const unsigned char *)text + len, shown, why, size, 0 };

	memset(d, 0, sizeof(*d));
	if (len >= UINT32_MAX) {
		snprintf(why, size, "%s: %zu bytes, more than a results file can be", shown, len);
		return -EFBIG;
	}
	/* Offset 0 of strs is "": the key of every array item. */
	if (!put_str(&ps, "", 1))
		return ps.rc;
	skip_space(&ps);
	if (ps.p < ps.end && *ps.p != '{' && *ps.p != '[')
		not_json(&ps, ps.p, "'{' (a results file is one JSON object)");
	else
		value(&ps, 1);
	skip_space(&ps);
	if (!ps.rc && ps.p < ps.end)
		fail_at(&ps, ps.p, "not JSON: more text after the document's end; a results file is one JSON object");
	return ps.rc;
}

void pmc__jdoc_release(struct pmc__jdoc *d)
{
	free(d->nodes);
	free(d->strs);
	free(d->index);
	memset(d, 0, sizeof(*d));
}

struct lookup {
	const struct pmc__jdoc *d;
	const char *key;
};

static int find_key(const void *k, const void *m)
{
	const struct lookup *l = k;

	return strcmp(l->key, l->d->strs + l->d->nodes[*(const uint32_t *)m].key);
}

const struct pmc__jnode *pmc__jdoc_get(const struct pmc__jdoc *d, const struct pmc__jnode *o,
				       const char *key)
{
	const struct pmc__jnode *c;
	uint16_t h;
	uint32_t i;

	if (!o || o->type != JSON_OBJECT)
		return NULL;
	if (o->n > FEW) {
		struct lookup l = { d, key };
		const uint32_t *hit = bsearch(&l, d->index + o->v.idx, o->n, sizeof(uint32_t), find_key);

		return hit ? &d->nodes[*hit] : NULL;
	}
	h = hash_key(key);
	pmc__jdoc_foreach(o, i, c)
		if (c->khash == h && !strcmp(d->strs + c->key, key))
			return c;
	return NULL;
}

json_t *pmc__jdoc_json(const struct pmc__jdoc *d, const struct pmc__jnode *v)
{
	const struct pmc__jnode *c;
	json_t *out = NULL;
	uint32_t i;

	switch (v->type) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		out = v->type == JSON_OBJECT ? json_object() : json_array();
		pmc__jdoc_foreach(v, i, c) {
			json_t *x = pmc__jdoc_json(d, c);

			if (!out || !x ||
			    (v->type == JSON_OBJECT ? json_object_set_new_nocheck(out, d->strs + c->key, x)
						    : json_array_append_new(out, x))) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	case JSON_STRING: return json_string_nocheck(d->strs + v->v.s);
	case JSON_INTEGER: return json_integer(v->v.i);
	case JSON_REAL: return json_real(v->v.d);
	case JSON_TRUE: return json_true();
	case JSON_FALSE: return json_false();
	default: return json_null();
	}
}
