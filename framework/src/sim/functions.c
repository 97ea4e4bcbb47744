/* SPDX-License-Identifier: MIT */
/*
 * Per-function costs from a callgrind dump: what attribution shows when a
 * gate fails.  A dump lists, for each function (fn=), cost lines (a
 * position, then one figure per event of the events: line; trailing zeros
 * left out) and calls (calls= then one line of the callee's inclusive cost,
 * which is not the caller's own).  Names are compressed: "(id) name" the
 * first time, "(id)" after.  The function's object is the last ob= line.
 * A call names its callee with cfn=, after a cob= when the callee lives
 * in another object than the caller; calls=COUNT TARGET counts the calls,
 * which are summed per callee (the calls each function received).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/sim.h>

#include "sim_api.h"
#include "sim_harness.h"

struct names {
	char **v;       /* by id */
	size_t n;
	char **loose;   /* names given without an id (compression off) */
	size_t nloose;
};

static void names_free(struct names *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	for (size_t i = 0; i < t->nloose; i++)
		free(t->loose[i]);
	free(t->v);
	free(t->loose);
}

/* "(id) name" defines id; "(id)" refers to it; a bare name has no id.
 * Returns the name (owned by the table), or NULL on a bad reference. */
static const char *name_of(struct names *t, const char *p, const char *e)
{
	char *end;
	unsigned long id;

	while (p < e && *p == ' ')
		p++;
	if (p >= e || *p != '(') {
		char *s = strndup(p, (size_t)(e - p)), **v;

		if (!s || !(v = realloc(t->loose, (t->nloose + 1) * sizeof(*v)))) {
			free(s);
			return NULL;
		}
		t->loose = v;
		t->loose[t->nloose++] = s;
		return s;
	}
	id = strtoul(p + 1, &end, 10);
	if (end >= e || *end != ')' || id >= 10000000)
		return NULL;
	p = end + 1;
	while (p < e && *p == ' ')
		p++;
	if (p < e) {
		char *s = strndup(p, (size_t)(e - p));

		if (!s)
			return NULL;
		if (id >= t->n) {
			char **v = realloc(t->v, (id + 1) * sizeof(*v));

			if (!v) {
				free(s);
				return NULL;
			}
			memset(v + t->n, 0, (id + 1 - t->n) * sizeof(*v));
			t->v = v;
			t->n = id + 1;
		}
		free(t->v[id]);
		t->v[id] = s;
	}
	return id < t->n ? t->v[id] : NULL;
}

static struct pmc_sim_fn_cost *fn_row(struct pmc_sim_fn_cost **rows, size_t *n, size_t *cap,
				      const char *name, const char *object)
{
	for (size_t i = *n; i-- > 0;)
		if (!strcmp((*rows)[i].name, name) && !strcmp((*rows)[i].object, object))
			return &(*rows)[i];
	if (*n == *cap) {
		size_t grown = *cap ? *cap * 2 : 64;
		struct pmc_sim_fn_cost *r = realloc(*rows, grown * sizeof(*r));

		if (!r)
			return NULL;
		*rows = r;
		*cap = grown;
	}
	memset(&(*rows)[*n], 0, sizeof((*rows)[*n]));
	(*rows)[*n].name = strdup(name);
	(*rows)[*n].object = strdup(object);
	if (!(*rows)[*n].name || !(*rows)[*n].object) {
		free((*rows)[*n].name);
		free((*rows)[*n].object);
		return NULL;
	}
	return &(*rows)[(*n)++];
}

void pmc_sim_functions_free(struct pmc_sim_fn_cost *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++) {
		free(f[i].name);
		free(f[i].object);
	}
	free(f);
}

/*
 * The sim backend runs callgrind with --demangle=no (a reading must not
 * allocate in the measured process, and matching calls: by mangled name
 * needs no demangler there), so C++ names are demangled here, for people:
 * "_ZN4pugi8xml_node5childEPKc'2" -> "pugi::xml_node::child(char const*)'2",
 * callgrind's recursion level kept.
 */
static void demangle_row(struct pmc_sim_fn_cost *f)
{
	const char *q = strrchr(f->name, '\'');
	size_t n = q && q[1] && strspn(q + 1, "0123456789") == strlen(q + 1) ? (size_t)(q - f->name)
									      : strlen(f->name);
	char *base, *d, *out;

	if (strncmp(f->name, "_Z", 2) || !(base = strndup(f->name, n)))
		return;
	d = pmc__demangle(base);
	free(base);
	if (d && asprintf(&out, "%s%s", d, f->name + n) >= 0) {
		free(f->name);
		f->name = out;
	}
	free(d);
}

/* The dump's functions with their own costs and the calls each received;
 * with only, the callers of that function instead, each with the calls it
 * made to it. */
static int parse_dump(const char *file, const char *text, size_t len,
		      const struct pmc__cg_target *only, struct pmc_sim_fn_cost **out, size_t *count,
		      struct pmc_error *err)
{
	const char *p = text, *end = text + len;
	struct names fns = { 0 }, obs = { 0 };
	struct pmc_sim_fn_cost *rows = NULL, *cur = NULL;
	char object[1024] = "", cob[1024] = "";
	size_t n = 0, cap = 0;
	const char *callee = NULL; /* the last cfn=, owned by fns */
	char callee_object[1024] = "";
	int map[64], nevents = -1, line = 0, rc = 0;
	int skip_next = 0; /* the line after calls= is the callee's cost */

	*out = NULL;
	*count = 0;
	while (p < end && rc == 0) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t l;

		e = e ? e : end;
		l = (size_t)(e - p);
		line++;
		if (l >= 7 && !strncmp(p, "events:", 7)) {
			nevents = pmc__sim_events_line(p + 7, e, map, 64);
			if (nevents < 0)
				rc = pmc__fail(err, PMC_E_SYNTAX, file, line,
					       "%s:%d: more than 64 events on the events: line", file, line);
		} else if (l >= 3 && !strncmp(p, "ob=", 3)) {
			const char *ob = name_of(&obs, p + 3, e);

			if (!ob)
				rc = pmc__fail(err, PMC_E_SYNTAX, file, line, "%s:%d: bad ob= line", file, line);
			else
				snprintf(object, sizeof(object), "%s", ob);
		} else if (l >= 3 && !strncmp(p, "fn=", 3)) {
			const char *name = name_of(&fns, p + 3, e);

			cur = name ? fn_row(&rows, &n, &cap, name, object) : NULL;
			if (!cur)
				rc = pmc__fail(err, name ? -ENOMEM : PMC_E_SYNTAX, file, line,
					       "%s:%d: bad fn= line", file, line);
			skip_next = 0;
			cob[0] = '\0';
		} else if (l >= 4 && !strncmp(p, "cfn=", 4)) {
			/* Defines the name for later fn=(id) references too. */
			callee = name_of(&fns, p + 4, e);
			if (!callee)
				rc = pmc__fail(err, PMC_E_SYNTAX, file, line, "%s:%d: bad cfn= line", file, line);
			snprintf(callee_object, sizeof(callee_object), "%s", cob[0] ? cob : object);
			cob[0] = '\0';
		} else if (l >= 4 && (!strncmp(p, "cob=", 4))) {
			const char *ob = name_of(&obs, p + 4, e);

			if (!ob)
				rc = pmc__fail(err, PMC_E_SYNTAX, file, line, "%s:%d: bad cob= line", file, line);
			else
				snprintf(cob, sizeof(cob), "%s", ob);
		} else if (l >= 6 && !strncmp(p, "calls=", 6)) {
			char *stop;
			unsigned long long count = strtoull(p + 6, &stop, 10);
			struct pmc_sim_fn_cost *to;

			skip_next = 1;
			if (stop == p + 6 || !callee) {
				rc = pmc__fail(err, PMC_E_SYNTAX, file, line,
					       "%s:%d: calls= %s", file, line,
					       callee ? "without a count" : "before any cfn= line");
			} else if (only) {
				if (cur && pmc__cg_target_is(only, callee, callee_object))
					cur->calls += count;
			} else {
				/* The row may move: cur is found again by index. */
				size_t at = cur ? (size_t)(cur - rows) : 0;

				to = fn_row(&rows, &n, &cap, callee, callee_object);
				if (!to)
					rc = pmc__fail(err, -ENOMEM, file, line, "%s:%d: out of memory",
						       file, line);
				else
					to->calls += count;
				if (cur)
					cur = &rows[at];
			}
		} else if (l > 0 && ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*')) {
			const char *q = p;
			int k = 0;

			/* The position, then the figures. */
			while (q < e && *q != ' ' && *q != '\t')
				q++;
			if (skip_next || !cur || nevents < 0 || only) {
				skip_next = 0;
			} else {
				while (q < e && k < nevents) {
					char *stop;
					unsigned long long v;

					while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
						q++;
					if (q >= e)
						break;
					v = strtoull(q, &stop, 10);
					if (stop == q)
						break;
					if (map[k] >= 0)
						cur->cost[map[k]] += v;
					k++;
					q = stop;
				}
			}
		}
		p = e < end ? e + 1 : end;
	}
	names_free(&fns);
	names_free(&obs);
	if (rc == 0 && nevents < 0)
		rc = pmc__fail(err, PMC_E_SYNTAX, file, -1, "%s: no events: line (not a callgrind dump?)",
			       file);
	if (rc) {
		pmc_sim_functions_free(rows, n);
		return rc;
	}
	if (only) { /* the callers only */
		size_t kept = 0;

		for (size_t i = 0; i < n; i++)
			if (rows[i].calls)
				rows[kept++] = rows[i];
			else
				free(rows[i].name), free(rows[i].object);
		n = kept;
	}
	for (size_t i = 0; i < n; i++)
		demangle_row(&rows[i]);
	*out = rows;
	*count = n;
	return 0;
}

int pmc_sim_dump_functions(const char *file, const char *text, size_t len,
			   struct pmc_sim_fn_cost **out, size_t *count, struct pmc_error *err)
{
	return parse_dump(file, text, len, NULL, out, count, err);
}

int pmc_sim_dump_callers(const char *file, const char *text, size_t len,
			 const struct pmc_event_spec *s, struct pmc_sim_fn_cost **out, size_t *count,
			 struct pmc_error *err)
{
	struct pmc__cg_target *t;
	int rc = pmc__cg_target_new(s, &t, err);

	*out = NULL;
	*count = 0;
	if (rc == 0)
		rc = parse_dump(file, text, len, t, out, count, err);
	free(t);
	return rc;
}
