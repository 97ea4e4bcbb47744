/* SPDX-License-Identifier: MIT */
/*
 * Which functions moved: the same function found in two runs' regions, the
 * largest changes of their own cost (sim attribution, both sides), and the
 * part of a change that lies in one library.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"

/* Column of an event in a region record, or -1. */
static int event_index(const struct pmc__region_rec *g, const char *label)
{
	for (size_t j = 0; g && j < g->nev; j++)
		if (!strcmp(g->ev[j].label, label))
			return (int)j;
	return -1;
}

/* The same function in the other run: same name and object; else same
 * name and object file name (another build directory); else the only
 * function of that name (the program itself, built under another name). */
const struct pmc__fn_rec *pmc__fn_in(const struct pmc__region_rec *g, const struct pmc__fn_rec *f)
{
	const struct pmc__fn_rec *named = NULL;
	size_t i, nnamed = 0;

	for (i = 0; i < g->nfns; i++)
		if (!strcmp(g->fns[i].name, f->name) && !strcmp(g->fns[i].object, f->object))
			return &g->fns[i];
	for (i = 0; i < g->nfns; i++)
		if (!strcmp(g->fns[i].name, f->name) &&
		    !strcmp(pmc__file_part(g->fns[i].object), pmc__file_part(f->object)))
			return &g->fns[i];
	for (i = 0; i < g->nfns; i++)
		if (!strcmp(g->fns[i].name, f->name)) {
			named = &g->fns[i];
			nnamed++;
		}
	return nnamed == 1 ? named : NULL;
}

struct fn_change {
	const char *name, *object;
	double old, new;
	bool unmatched; /* on one side only */
};

static int by_change(const void *a, const void *b)
{
	const struct fn_change *x = a, *y = b;
	double dx = fabs(x->new - x->old), dy = fabs(y->new - y->old);

	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

/* Are the region's rows of the event counts: not from perf samples, or
 * from samples of every event with none lost (a calls: event's callers,
 * page faults sampled at period 1)? */
static bool counted(const struct pmc__region_rec *g, const char *label)
{
	for (size_t k = 0; k < g->nsampled; k++)
		if (!strcmp(g->sampled[k].label, label))
			return g->sampled[k].period == 1 && !g->sampled[k].lost;
	return !g->nsampled;
}

/*
 * Which functions changed the event's cost in the region (sim attribution,
 * or perf samples of every event, on both sides): the PMC__ATTR_SHOWN
 * largest changes of a function's own cost, with their share of the
 * region's change.  NULL without attribution, and for rows estimated from
 * statistical perf samples: the difference of two estimates is not a
 * measured change.
 */
#define PMC__ATTR_SHOWN 5

/* A stripped library names its functions by address; another build of it
 * moves them, so "0x16a00 +1772462" and "0x144d0 -1772462" would be one
 * function seen twice.  Where any address-named function of an object has
 * no match on the other side, all of that object's are one row,
 * "(functions by address)", whose change is the object's.  Returns the
 * number of rows left. */
static bool by_address(const char *name)
{
	return name[0] == '0' && name[1] == 'x';
}

/* Every address-named row of one object made one; the rows left. */
static size_t fold_object(struct fn_change *ch, size_t n, const char *object)
{
	size_t into = n, k = 0;

	while (k < n) {
		if (!by_address(ch[k].name) ||
		    strcmp(pmc__file_part(ch[k].object), pmc__file_part(object))) {
			k++;
		} else if (into == n) {
			into = k++;
			ch[into].name = "(functions by address)";
			ch[into].unmatched = false;
		} else {
			ch[into].old += ch[k].old;
			ch[into].new += ch[k].new;
			ch[k] = ch[--n]; /* k now holds a row not yet seen */
		}
	}
	return n;
}

static size_t fold_addresses(struct fn_change *ch, size_t n)
{
	size_t i = 0;

	while (i < n)
		if (by_address(ch[i].name) && ch[i].unmatched)
			n = fold_object(ch, n, ch[i].object), i = 0;
		else
			i++;
	return n;
}

json_t *pmc__attribution(const struct pmc__region_rec *og, const struct pmc__region_rec *ng,
			 const char *label)
{
	int oi = event_index(og, label), ni = event_index(ng, label);
	struct fn_change *ch;
	size_t n = 0;
	double total = 0;
	json_t *rows;

	if (oi < 0 || ni < 0 || !og->nfns || !ng->nfns || !counted(og, label) || !counted(ng, label))
		return NULL;
	ch = calloc(og->nfns + ng->nfns, sizeof(*ch));
	if (!ch)
		return NULL;
	for (size_t i = 0; i < ng->nfns; i++) {
		const struct pmc__fn_rec *o = pmc__fn_in(og, &ng->fns[i]);

		ch[n++] = (struct fn_change){ ng->fns[i].name, ng->fns[i].object,
					      o ? o->cost[oi] : 0, ng->fns[i].cost[ni], !o };
	}
	for (size_t i = 0; i < og->nfns; i++)
		if (!pmc__fn_in(ng, &og->fns[i]))
			ch[n++] = (struct fn_change){ og->fns[i].name, og->fns[i].object,
						      og->fns[i].cost[oi], 0, true };
	n = fold_addresses(ch, n);
	for (size_t i = 0; i < n; i++)
		total += ch[i].new - ch[i].old;
	qsort(ch, n, sizeof(*ch), by_change);
	rows = json_array();
	for (size_t i = 0; i < n && json_array_size(rows) < PMC__ATTR_SHOWN; i++) {
		double d = ch[i].new - ch[i].old;

		if (d == 0)
			break;
		json_array_append_new(rows, json_pack("{s:s, s:s, s:f, s:f, s:f, s:o}", "function",
						      ch[i].name, "object", ch[i].object, "old",
						      ch[i].old, "new", ch[i].new, "change", d, "share",
						      total != 0 ? json_real(d / total) : json_null()));
	}
	free(ch);
	return rows;
}

/* Is a function's object the library of this name (its soname; the file is
 * most often the soname with the rest of the version after it,
 * libexpat.so.1.8.10) or the one loaded from path (NULL: none now)? */
static bool in_library(const char *object, const char *name, const char *path)
{
	const char *f = pmc__file_part(object);
	size_t n = strlen(name);

	return (path && !strcmp(f, pmc__file_part(path))) || !strcmp(f, name) ||
	       (!strncmp(f, name, n) && f[n] == '.');
}

/* The change of one event from calibration to now of the functions of one
 * library, and of all functions (*total). */
double pmc__change_in_library(const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			      const char *label, const char *name, const char *path, double *total)
{
	double in = 0;
	int j = -1;

	*total = 0;
	for (size_t e = 0; e < g->nev; e++)
		if (!strcmp(g->ev[e].label, label))
			j = (int)e;
	for (size_t k = 0; j >= 0 && k < g->nfns; k++) {
		const struct pmc__fn_rec *o = pmc__fn_in(old, &g->fns[k]);
		double d = g->fns[k].cost[j] - (o ? o->cost[j] : 0);

		*total += d;
		if (in_library(g->fns[k].object, name, path))
			in += d;
	}
	for (size_t k = 0; j >= 0 && k < old->nfns; k++)
		if (!pmc__fn_in(g, &old->fns[k])) {
			*total -= old->fns[k].cost[j];
			if (in_library(old->fns[k].object, name, path))
				in -= old->fns[k].cost[j];
		}
	return in;
}
