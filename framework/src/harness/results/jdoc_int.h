/* SPDX-License-Identifier: MIT */
/*
 * A strict JSON reader over a buffer, for results files (jdoc.c): the
 * whole text becomes one flat array of nodes in document order, strings
 * unescaped into one arena, with no allocation per value.  It accepts
 * what jansson's json_loadb(JSON_REJECT_DUPLICATES) accepts (fuzz_results
 * holds the two against each other), and refuses the same: a key given
 * twice in one object, invalid UTF-8, "\u0000", a lone surrogate, an
 * integer past 64 bits, a real past a double, nesting past 2048, anything
 * after the top object or array; and a NUL byte after a number, which
 * jansson drops.  jansson builds a hash table and a heap object per value
 * and reads byte by byte through a callback: 16 MB of results took
 * `pmcheck results` 0.84 s of CPU with it, 0.11 s with this reader.
 */
#ifndef PMC_JDOC_INT_H
#define PMC_JDOC_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* A value: its subtree is the nodes from it to it + skip; an object's
 * members and an array's items are its direct children, in order. */
struct pmc__jnode {
	union {
		long long i;   /* JSON_INTEGER */
		double d;      /* JSON_REAL */
		uint32_t s;    /* JSON_STRING: offset of its text in strs */
		uint32_t idx;  /* JSON_OBJECT of more than a few members: its sorted keys in index */
	} v;
	uint32_t n;    /* members or items */
	uint32_t skip; /* nodes in this subtree, itself included */
	uint32_t key;  /* a member's key: offset in strs (0 is "") */
	uint32_t at;   /* byte offset in the text (a member: its key's) */
	uint16_t khash; /* a member's key hashed (pmc__jdoc_hash): most keys
			 * compared unequal without reading them */
	uint8_t type;  /* json_type */
};

struct pmc__jdoc {
	struct pmc__jnode *nodes; /* nodes[0] is the top value */
	size_t nnodes, cap;
	char *strs;               /* NUL-terminated strings, back to back */
	size_t slen, scap;
	uint32_t *index;          /* sorted member positions of large objects */
	size_t nindex, icap;
};

/* Parse text (len bytes, not NUL-terminated); 0, or -EINVAL with
 * "SHOWN:LINE: ..." in why (the byte offset, what is wrong and the fix),
 * or -ENOMEM.  d is released by pmc__jdoc_release either way. */
int pmc__jdoc_parse(struct pmc__jdoc *d, const char *text, size_t len, const char *shown,
		    char *why, size_t size);
void pmc__jdoc_release(struct pmc__jdoc *d);

/* An object's member by key, or NULL (also when o is no object). */
const struct pmc__jnode *pmc__jdoc_get(const struct pmc__jdoc *d, const struct pmc__jnode *o,
				       const char *key);
/* The value as jansson holds it (a new reference, NULL if memory ran out). */
json_t *pmc__jdoc_json(const struct pmc__jdoc *d, const struct pmc__jnode *v);

static inline const char *pmc__jdoc_str(const struct pmc__jdoc *d, const struct pmc__jnode *v)
{
	return v && v->type == JSON_STRING ? d->strs + v->v.s : NULL;
}

static inline const char *pmc__jdoc_key(const struct pmc__jdoc *d, const struct pmc__jnode *v)
{
	return d->strs + v->key;
}

static inline double pmc__jdoc_number(const struct pmc__jnode *v)
{
	return v->type == JSON_INTEGER ? (double)v->v.i : v->type == JSON_REAL ? v->v.d : 0.0;
}

/* Each member or item c of container o, i counting from 0. */
#define pmc__jdoc_foreach(o, i, c)                                                          \
	for ((i) = 0, (c) = (o) + 1; (i) < (o)->n; (i)++, (c) += (c)->skip)

#endif
