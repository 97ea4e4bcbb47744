/* SPDX-License-Identifier: MIT */
/*
 * Reading a result record back from JSON (a case's result, results files,
 * baselines): every field the harness uses is checked, and an error names
 * the file, the field and what was wrong with it; nothing downstream
 * decodes verdicts, check kinds or statuses from strings.
 *
 * Over 600 lines because this is the one reader of a result record (one
 * place per fact): every field of the schema checked with the file and the
 * field named (read_case alone is about 200 lines, one block per field),
 * with the results file's document, environment and size limits around it.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness_int.h"
#include "jdoc_int.h"

#define GET(o, key) pmc__jdoc_get(rd->d, (o), (key))
#define STR(v) pmc__jdoc_str(rd->d, (v))

/* ---- from JSON ----------------------------------------------------------------------------- */

struct reader {
	const struct pmc__jdoc *d;
	const char *where; /* "FILE: cases[3]" */
	char *why;
	size_t size;
	bool failed;
};

static bool is_type(const struct pmc__jnode *v, json_type t)
{
	return v && v->type == t;
}
#define is_object(v) is_type((v), JSON_OBJECT)
#define is_array(v) is_type((v), JSON_ARRAY)
#define is_string(v) is_type((v), JSON_STRING)
#define is_int(v) is_type((v), JSON_INTEGER)
#define is_true(v) is_type((v), JSON_TRUE)

static bool is_number(const struct pmc__jnode *v)
{
	return is_int(v) || is_type(v, JSON_REAL);
}

static const char *type_name(const struct pmc__jnode *v)
{
	switch (v->type) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a fraction";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

static void fail(struct reader *rd, const char *fmt, ...) PMC__FMT(2, 3);
static void fail(struct reader *rd, const char *fmt, ...)
{
	va_list ap;
	size_t len;

	if (rd->failed)
		return;
	rd->failed = true;
	snprintf(rd->why, rd->size, "%s", rd->where);
	len = strlen(rd->why);
	va_start(ap, fmt);
	vsnprintf(rd->why + len, rd->size - len, fmt, ap);
	va_end(ap);
}

/* The field, if of the wanted kind; NULL (and rd failed unless optional) if
 * not.  A JSON null counts as absent for optional fields. */
static const struct pmc__jnode *field(struct reader *rd, const struct pmc__jnode *o,
				      const char *path, const char *key, json_type type,
				      bool optional)
{
	static const char *const names[] = { "an object", "an array", "a string",
					     "an integer", "a number", "a boolean" };
	const struct pmc__jnode *v = GET(o, key);
	bool ok;

	if (!v || (optional && v->type == JSON_NULL)) {
		if (!optional)
			fail(rd, "%s.%s: missing", path, key);
		return NULL;
	}
	ok = v->type == type || (type == JSON_REAL && is_number(v)) ||
	     (type == JSON_TRUE && (v->type == JSON_TRUE || v->type == JSON_FALSE));
	if (!ok) {
		fail(rd, "%s.%s: expected %s, found %s", path, key,
		     names[type == JSON_REAL ? 4 : type == JSON_TRUE ? 5 : type], type_name(v));
		return NULL;
	}
	return v;
}

static char *dup_str(struct reader *rd, const struct pmc__jnode *o, const char *path,
		     const char *key, bool optional)
{
	const struct pmc__jnode *v = field(rd, o, path, key, JSON_STRING, optional);
	char *s;

	if (!v)
		return NULL;
	s = strdup(STR(v));
	if (!s)
		fail(rd, "%s.%s: out of memory", path, key);
	return s;
}

static uint64_t count(struct reader *rd, const struct pmc__jnode *o, const char *path,
		      const char *key, bool optional)
{
	const struct pmc__jnode *v = field(rd, o, path, key, JSON_INTEGER, optional);

	if (v && v->v.i < 0) {
		fail(rd, "%s.%s: expected a count, found %" JSON_INTEGER_FORMAT, path, key,
		     v->v.i);
		return 0;
	}
	return v ? (uint64_t)v->v.i : 0;
}

/* A count the record keeps in an int or an unsigned (a line, repetitions):
 * larger than INT_MAX is refused, not cut to another number on the way in
 * (the fuzzer's line 3333333333333333333 came back out as a negative one). */
static int small_count(struct reader *rd, const struct pmc__jnode *o, const char *path,
		       const char *key, bool optional)
{
	uint64_t v = count(rd, o, path, key, optional);

	if (v > INT_MAX) {
		fail(rd, "%s.%s: %" PRIu64 " is out of range (at most %d)", path, key, v, INT_MAX);
		return 0;
	}
	return (int)v;
}

static double number(struct reader *rd, const struct pmc__jnode *o, const char *path,
		     const char *key)
{
	const struct pmc__jnode *v = field(rd, o, path, key, JSON_REAL, true);

	return v ? pmc__jdoc_number(v) : NAN;
}

static int stat_of(const char *s)
{
	for (int st = PMC_STAT_MIN; s && st <= PMC_STAT_MAX; st++)
		if (!strcmp(s, pmc__stat_name((enum pmc_stat)st)))
			return st;
	return -1;
}

/* min and max are the samples' own: the smallest and the largest value,
 * or, when some samples were summarised (not listed), no larger and no
 * smaller than every listed one.  A min below every value would read as
 * an improvement nobody measured. */
static void check_extremes(struct reader *rd, const char *path, const struct pmc__stat_rec *s)
{
	uint64_t lo = s->values[0], hi = s->values[0];

	for (size_t k = 1; k < s->nvalues; k++) {
		lo = s->values[k] < lo ? s->values[k] : lo;
		hi = s->values[k] > hi ? s->values[k] : hi;
	}
	if (s->summarised ? s->min > lo : s->min != lo)
		fail(rd, "%s.min: %" PRIu64 ", but the smallest of values is %" PRIu64
			 " (expected min to be %s)",
		     path, s->min, lo, s->summarised ? "at most the smallest value" : "the smallest value");
	else if (s->summarised ? s->max < hi : s->max != hi)
		fail(rd, "%s.max: %" PRIu64 ", but the largest of values is %" PRIu64
			 " (expected max to be %s)",
		     path, s->max, hi, s->summarised ? "at least the largest value" : "the largest value");
	else if (!(s->mean >= (double)s->min && s->mean <= (double)s->max))
		fail(rd, "%s.mean: %g is outside min..max %" PRIu64 "..%" PRIu64
			 " (expected min <= mean <= max)",
		     path, s->mean, s->min, s->max);
}

static void read_stats(struct reader *rd, const struct pmc__jnode *st, const char *path,
		       struct pmc__stat_rec *s)
{
	const struct pmc__jnode *vals, *v;
	size_t k;

	if (!is_object(st)) {
		fail(rd, "%s: expected an object, found %s", path, type_name(st));
		return;
	}
	s->n = count(rd, st, path, "n", false);
	s->min = count(rd, st, path, "min", false);
	s->max = count(rd, st, path, "max", false);
	s->multiplexed = count(rd, st, path, "multiplexed", true);
	s->not_counted = count(rd, st, path, "not_counted", true);
	s->other_threads = count(rd, st, path, "other_threads", true);
	s->median = number(rd, st, path, "median");
	s->mean = number(rd, st, path, "mean");
	for (size_t i = 0; s->n > 0 && i < 2; i++) {
		static const char *const need[] = { "median", "mean" };

		if (!GET(st, need[i]))
			fail(rd, "%s.%s: missing (statistics of %zu samples have a median and a mean)",
			     path, need[i], s->n);
	}
	if (GET(st, "summarised"))
		s->summarised = count(rd, st, path, "summarised", false);
	if (GET(st, "median_error"))
		s->median_error = number(rd, st, path, "median_error");
	/* What the gates and the history compare must be one consistent set. */
	if (!rd->failed && s->n > 0 && s->min > s->max)
		fail(rd, "%s: min %" PRIu64 " is above max %" PRIu64 " (expected min <= median <= max)",
		     path, s->min, s->max);
	if (!rd->failed && s->n > 0 &&
	    !(s->median >= (double)s->min && s->median <= (double)s->max))
		fail(rd, "%s.median: %g is outside min..max %" PRIu64 "..%" PRIu64
			 " (expected min <= median <= max)",
		     path, s->median, s->min, s->max);
	vals = field(rd, st, path, "values", JSON_ARRAY, false);
	if (!vals || rd->failed)
		return;
	s->values = calloc(vals->n + 1, sizeof(*s->values));
	if (!s->values) {
		fail(rd, "%s.values: out of memory", path);
		return;
	}
	pmc__jdoc_foreach(vals, k, v) {
		if (!is_int(v) || v->v.i < 0) {
			fail(rd, "%s.values[%zu]: expected a count, found %s", path, k, type_name(v));
			return;
		}
		s->values[s->nvalues++] = (uint64_t)v->v.i;
	}
	if (s->nvalues + s->summarised != s->n)
		fail(rd, "%s.n: %zu, but values has %zu sample(s)%s (expected n to count them)", path,
		     s->n, s->nvalues, s->summarised ? " beside those summarised" : "");
	if (!rd->failed && s->nvalues)
		check_extremes(rd, path, s);
}

/* The events a region was sampled on (optional, perf attribution). */
static void read_sampling(struct reader *rd, const struct pmc__jnode *region, const char *path,
			  struct pmc__region_rec *g)
{
	const struct pmc__jnode *arr = field(rd, region, path, "sampling", JSON_ARRAY, true), *v;
	size_t i;

	if (!arr || rd->failed)
		return;
	g->sampled = calloc(arr->n + 1, sizeof(*g->sampled));
	pmc__jdoc_foreach(arr, i, v) {
		struct pmc__sampled_rec *s = &g->sampled[g->nsampled];
		char spath[1100];

		if (!g->sampled || rd->failed)
			break;
		snprintf(spath, sizeof(spath), "%s.sampling[%zu]", path, i);
		if (!is_object(v)) {
			fail(rd, "%s: expected an object, found %s", spath, type_name(v));
			break;
		}
		g->nsampled++;
		s->label = dup_str(rd, v, spath, "event", false);
		s->period = count(rd, v, spath, "period", false);
		s->samples = count(rd, v, spath, "samples", false);
		s->lost = count(rd, v, spath, "lost", false);
		s->executions = count(rd, v, spath, "executions", false);
	}
}

/* A region's attribution rows (optional): each function's cost per event,
 * in the order of the region's events (an event a row leaves out costs 0
 * on sim; on a sampled region it was not sampled, NAN). */
static void read_functions(struct reader *rd, const struct pmc__jnode *region, const char *path,
			   struct pmc__region_rec *g)
{
	const struct pmc__jnode *arr = field(rd, region, path, "functions", JSON_ARRAY, true), *v;
	size_t i;

	if (!arr || rd->failed)
		return;
	g->fns = calloc(arr->n + 1, sizeof(*g->fns));
	pmc__jdoc_foreach(arr, i, v) {
		struct pmc__fn_rec *f = &g->fns[g->nfns];
		char fpath[1100];
		const struct pmc__jnode *costs, *samples;

		if (!g->fns || rd->failed)
			break;
		snprintf(fpath, sizeof(fpath), "%s.functions[%zu]", path, i);
		if (!is_object(v)) {
			fail(rd, "%s: expected an object, found %s", fpath, type_name(v));
			break;
		}
		g->nfns++;
		f->name = dup_str(rd, v, fpath, "function", false);
		f->object = dup_str(rd, v, fpath, "object", false);
		costs = field(rd, v, fpath, "costs", JSON_OBJECT, false);
		f->cost = calloc(g->nev + 1, sizeof(*f->cost));
		if (!f->cost) {
			fail(rd, "%s: out of memory", fpath);
			break;
		}
		for (size_t j = 0; costs && j < g->nev; j++) {
			const struct pmc__jnode *c = GET(costs, g->ev[j].label);

			if (c && !is_number(c))
				fail(rd, "%s.costs[\"%s\"]: expected a number, found %s", fpath,
				     g->ev[j].label, type_name(c));
			else if (c)
				f->cost[j] = pmc__jdoc_number(c);
			else if (g->nsampled)
				f->cost[j] = NAN;
		}
		{
			const struct pmc__jnode *calls = GET(v, "calls");

			f->calls = NAN;
			if (calls && (!is_number(calls) || pmc__jdoc_number(calls) < 0))
				fail(rd, "%s.calls: expected a count, found %s", fpath, type_name(calls));
			else if (calls)
				f->calls = pmc__jdoc_number(calls);
		}
		samples = field(rd, v, fpath, "samples", JSON_OBJECT, true);
		if (samples && !rd->failed) {
			f->samples = calloc(g->nev + 1, sizeof(*f->samples));
			for (size_t j = 0; f->samples && j < g->nev; j++) {
				const struct pmc__jnode *c = GET(samples, g->ev[j].label);

				if (c && !is_int(c))
					fail(rd, "%s.samples[\"%s\"]: expected an integer, found %s",
					     fpath, g->ev[j].label, type_name(c));
				else if (c)
					f->samples[j] = (uint64_t)(c)->v.i;
			}
		}
	}
}

/* As pmc__objects_from_json (provenance.c) reads a jansson array. */
static int objects_of(const struct pmc__jdoc *d, const struct pmc__jnode *arr,
		      struct pmc_object **out, size_t *n, char *why, size_t size)
{
	const struct pmc__jnode *v;
	size_t i;

	*out = calloc(arr->n + 1, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	pmc__jdoc_foreach(arr, i, v) {
		const char *p = pmc__jdoc_str(d, pmc__jdoc_get(d, v, "path"));
		const char *id = pmc__jdoc_str(d, pmc__jdoc_get(d, v, "id"));

		int rc = pmc__object_append(*out, n, i, p, id, why, size);

		if (rc)
			return rc;
	}
	return 0;
}

static int read_case(const struct pmc__jdoc *d, const struct pmc__jnode *o, struct pmc__result *r,
		     const char *where, char *why, size_t size)
{
	struct reader rd_ = { d, where, why, size, false }, *rd = &rd_;
	const struct pmc__jnode *arr, *v, *overhead;
	char path[1024];
	size_t i, j, k;
	int x;

	memset(r, 0, sizeof(*r));
	if (!is_object(o)) {
		fail(rd, ": expected an object, found %s", type_name(o));
		return -EINVAL;
	}
	r->name = dup_str(rd, o, "", "name", false);
	r->suite = dup_str(rd, o, "", "suite", true);
	r->test = dup_str(rd, o, "", "test", true);
	r->file = dup_str(rd, o, "", "file", true);
	r->line = small_count(rd, o, "", "line", true);
	v = field(rd, o, "", "verdict", JSON_STRING, false);
	if (v && (x = pmc__verdict_from_name(STR(v))) < 0)
		fail(rd, ".verdict: unknown verdict \"%s\"", STR(v));
	else if (v)
		r->verdict = (enum pmc_verdict)x;
	r->reason = dup_str(rd, o, "", "reason", true);
	r->known_issue = dup_str(rd, o, "", "known_issue", true);
	r->backend = NULL;
	v = field(rd, o, "", "backend", JSON_STRING, true);
	if (v)
		r->backend = !strcmp(STR(v), "sim") ? "sim" : "perf";
	if (GET(o, "reps")) {
		r->has_options = true;
		r->reps = (unsigned)small_count(rd, o, "", "reps", false);
		r->warmup = (unsigned)small_count(rd, o, "", "warmup", true);
		v = field(rd, o, "", "stat", JSON_STRING, true);
		r->stat = v && stat_of(STR(v)) > 0 ? (enum pmc_stat)stat_of(STR(v))
								: PMC_STAT_MIN;
	}
	v = field(rd, o, "", "measuring", JSON_TRUE, true);
	/* Results without the flag (crashes, older files) count as measuring. */
	r->measuring = !v || is_true(v);
	v = field(rd, o, "", "timeout", JSON_TRUE, true);
	r->timeout = v && is_true(v);
	r->grouping = dup_str(rd, o, "", "grouping", true);
	r->read_path = dup_str(rd, o, "", "read_path", true);
	r->sim_profile = dup_str(rd, o, "", "sim_profile", true);
	r->simulated_cpu = dup_str(rd, o, "", "simulated_cpu", true);
	r->sim_engine = dup_str(rd, o, "", "sim_engine", true);
	r->output = dup_str(rd, o, "", "output", true);
	r->output_truncated = count(rd, o, "", "output_truncated_bytes", true);
	if (GET(o, "duration_s")) {
		r->has_duration = true;
		r->duration_s = number(rd, o, "", "duration_s");
		if (GET(o, "timeout_s"))
			r->timeout_s = number(rd, o, "", "timeout_s");
	}

	overhead = field(rd, o, "", "overhead", JSON_OBJECT, true);
	arr = field(rd, o, "", "events", JSON_ARRAY, true);
	if (arr && !rd->failed) {
		r->events = calloc(arr->n + 1, sizeof(*r->events));
		pmc__jdoc_foreach(arr, i, v) {
			struct pmc__event_rec *e = &r->events[r->nevents];

			if (!r->events || rd->failed)
				break;
			snprintf(path, sizeof(path), ".events[%zu]", i);
			if (!is_object(v)) {
				fail(rd, "%s: expected an object, found %s", path, type_name(v));
				break;
			}
			r->nevents++;
			e->label = dup_str(rd, v, path, "label", false);
			e->name = dup_str(rd, v, path, "name", false);
			e->kind = dup_str(rd, v, path, "kind", true);
			e->sim_columns = dup_str(rd, v, path, "sim_columns", true);
			e->sim_engine = dup_str(rd, v, path, "sim_engine", true);
			e->group = is_int(GET(v, "group"))
					   ? (int)(GET(v, "group"))->v.i : -1;
			e->hardware = is_true(GET(v, "hardware"));
			if (e->label && overhead && is_int(GET(overhead, e->label))) {
				e->has_overhead = true;
				e->overhead = (uint64_t)(GET(overhead, e->label))->v.i;
			}
		}
	}

	arr = field(rd, o, "", "regions", JSON_ARRAY, false);
	if (arr && !rd->failed) {
		r->regions = calloc(arr->n + 1, sizeof(*r->regions));
		pmc__jdoc_foreach(arr, i, v) {
			struct pmc__region_rec *g = &r->regions[r->nregions];
			const struct pmc__jnode *evs, *st;

			if (!r->regions || rd->failed)
				break;
			snprintf(path, sizeof(path), ".regions[%zu]", i);
			if (!is_object(v)) {
				fail(rd, "%s: expected an object, found %s", path, type_name(v));
				break;
			}
			r->nregions++;
			g->name = dup_str(rd, v, path, "name", false);
			g->iterations = count(rd, v, path, "iterations", true);
			if (g->iterations == 0)
				g->iterations = 1;
			g->samples = count(rd, v, path, "samples", false);
			evs = field(rd, v, path, "events", JSON_OBJECT, false);
			if (!evs)
				break;
			g->ev = calloc(evs->n + 1, sizeof(*g->ev));
			pmc__jdoc_foreach(evs, k, st) {
				const char *label = pmc__jdoc_key(d, st);
				char epath[1200];

				if (!g->ev || rd->failed)
					break;
				snprintf(epath, sizeof(epath), "%s.events[\"%s\"]", path, label);
				g->ev[g->nev].label = strdup(label);
				read_stats(rd, st, epath, &g->ev[g->nev]);
				g->nev++;
			}
			read_sampling(rd, v, path, g);
			read_functions(rd, v, path, g);
		}
	}

	arr = field(rd, o, "", "checks", JSON_ARRAY, false);
	if (arr && !rd->failed) {
		r->checks = calloc(arr->n + 1, sizeof(*r->checks));
		pmc__jdoc_foreach(arr, i, v) {
			struct pmc__check_rec *c = &r->checks[r->nchecks];
			const struct pmc__jnode *s;

			if (!r->checks || rd->failed)
				break;
			snprintf(path, sizeof(path), ".checks[%zu]", i);
			if (!is_object(v)) {
				fail(rd, "%s: expected an object, found %s", path, type_name(v));
				break;
			}
			r->nchecks++;
			s = field(rd, v, path, "kind", JSON_STRING, false);
			if (s && (x = pmc__check_kind_of(STR(s))) < 0)
				fail(rd, "%s.kind: unknown kind \"%s\"", path, STR(s));
			else if (s)
				c->kind = (enum pmc_expect_kind)x;
			s = field(rd, v, path, "status", JSON_STRING, false);
			if (s && (x = pmc__check_status_of(STR(s))) < 0)
				fail(rd, "%s.status: unknown status \"%s\"", path, STR(s));
			else if (s)
				c->status = (enum pmc__check_status)x;
			c->region = dup_str(rd, v, path, "region", false);
			c->event = dup_str(rd, v, path, "event", false);
			c->per = dup_str(rd, v, path, "per", true);
			c->file = dup_str(rd, v, path, "file", true);
			c->line = small_count(rd, v, path, "line", true);
			c->message = dup_str(rd, v, path, "message", false);
			c->measured = number(rd, v, path, "measured");
			c->lo = number(rd, v, path, "lo");
			c->hi = number(rd, v, path, "hi");
			s = field(rd, v, path, "statistic", JSON_STRING, true);
			if (s && stat_of(STR(s)) >= 0) {
				c->has_statistic = true;
				c->statistic = (enum pmc_stat)stat_of(STR(s));
			}
			c->samples = count(rd, v, path, "samples", true);
			c->budget_source = dup_str(rd, v, path, "budget_source", true);
			c->layout = dup_str(rd, v, path, "layout", true);
			s = field(rd, v, path, "gate", JSON_TRUE, true);
			c->gate = s && is_true(s);
			s = field(rd, v, path, "per_iteration", JSON_TRUE, true);
			c->per_iteration = s && is_true(s);
		}
	}

	arr = field(rd, o, "", "objects", JSON_ARRAY, true);
	if (arr && !rd->failed) {
		char owhy[200] = "";

		if (objects_of(d, arr, &r->objects, &r->nobjects, owhy, sizeof(owhy)))
			fail(rd, ".%s", owhy[0] ? owhy : "objects: out of memory");
	}
	arr = field(rd, o, "", "notes", JSON_ARRAY, true);
	if (arr && !rd->failed) {
		r->notes = calloc(arr->n + 1, sizeof(*r->notes));
		pmc__jdoc_foreach(arr, j, v) {
			if (!r->notes || !is_string(v)) {
				if (r->notes)
					fail(rd, ".notes[%zu]: expected a string, found %s", j, type_name(v));
				break;
			}
			r->notes[r->nnotes++] = strdup(STR(v));
		}
	}
	if (!rd->failed && (!r->suite || !r->test) && r->name) {
		/* "suite.test" is the name; older error results lack the parts. */
		const char *dot = strchr(r->name, '.');

		free(r->suite);
		free(r->test);
		r->suite = dot ? strndup(r->name, (size_t)(dot - r->name)) : strdup(r->name);
		r->test = strdup(dot ? dot + 1 : "");
	}
	if (rd->failed) {
		pmc__result_release(r);
		return -EINVAL;
	}
	return 0;
}

/* ---- whole documents --------------------------------------------------------------------- */

/* "2026-01-31T23:59:60Z", "2026-01-31T12:00:00.5+02:00": RFC 3339's date-time. */
static bool rfc3339(const char *s)
{
	int y, mo, d, h, mi, sec, used = 0;

	if (strlen(s) < 20 || sscanf(s, "%4d-%2d-%2d%*1[Tt ]%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi,
				     &sec, &used) != 6 || used != 19)
		return false;
	for (int i = 0; i < 19; i++)
		if (i != 4 && i != 7 && i != 10 && i != 13 && i != 16 && !isdigit((unsigned char)s[i]))
			return false;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
		return false;
	s += 19;
	if (*s == '.') {
		if (!isdigit((unsigned char)s[1]))
			return false;
		for (s++; isdigit((unsigned char)*s); s++)
			;
	}
	if ((*s == 'Z' || *s == 'z') && !s[1])
		return true;
	return (*s == '+' || *s == '-') && isdigit((unsigned char)s[1]) &&
	       isdigit((unsigned char)s[2]) && s[3] == ':' && isdigit((unsigned char)s[4]) &&
	       isdigit((unsigned char)s[5]) && !s[6] && (s[1] - '0') * 10 + (s[2] - '0') < 24 &&
	       (s[4] - '0') * 10 + (s[5] - '0') < 60;
}

bool pmc__commit_ok(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return n >= 4 && n <= 64 && !s[n];
}

/* A string of the environment, present and well formed, or the reason. */
static int env_field(const struct pmc__jdoc *d, const struct pmc__jnode *o, const char *path,
		     const char *key, bool nullable, bool (*ok)(const char *), const char *expected,
		     char *why, size_t size)
{
	const struct pmc__jnode *v = pmc__jdoc_get(d, o, key);

	if (nullable && (!v || v->type == JSON_NULL))
		return 0;
	if (!v) {
		snprintf(why, size, "%s.%s: missing (expected %s)", path, key, expected);
		return -EINVAL;
	}
	if (!is_string(v)) {
		snprintf(why, size, "%s.%s: expected %s, found %s", path, key, expected, type_name(v));
		return -EINVAL;
	}
	if (!ok(pmc__jdoc_str(d, v))) {
		char shown[96];

		pmc__escape_ctl(shown, sizeof(shown), pmc__jdoc_str(d, v));
		snprintf(why, size, "%s.%s: \"%s\" is not %s", path, key, shown, expected);
		return -EINVAL;
	}
	return 0;
}

static bool signature_ok(const char *s)
{
	if (!*s || strlen(s) >= 128)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f || *s == '/')
			return false;
	return true;
}

/* The fields the gates and the history key their figures by. */
static int check_environment(const struct pmc__jdoc *d, const struct pmc__jnode *env,
			     const char *path, char *why, size_t size)
{
	char where[PATH_MAX + 32];
	const struct pmc__jnode *cpu = pmc__jdoc_get(d, env, "cpu");

	snprintf(where, sizeof(where), "%s: environment", path);
	if (!is_object(cpu)) {
		snprintf(why, size, "%s.cpu: %s%s (it names the CPU signature the budgets and history are kept by)",
			 where, cpu ? "expected an object, found " : "missing", cpu ? type_name(cpu) : "");
		return -EINVAL;
	}
	if (env_field(d, env, where, "date", false, rfc3339,
		      "an RFC 3339 date-time such as \"2026-01-31T12:00:00Z\"", why, size) ||
	    env_field(d, env, where, "git_commit", true, pmc__commit_ok,
		      "a commit: 4 to 64 hexadecimal digits, or null", why, size))
		return -EINVAL;
	snprintf(where, sizeof(where), "%s: environment.cpu", path);
	return env_field(d, cpu, where, "signature", false, signature_ok,
			 "a CPU signature such as \"GenuineIntel-6-55-7\" (no blanks, control characters or '/')",
			 why, size);
}

static int results_of(const struct pmc__jdoc *d, const char *path, struct pmc__results *rs,
		      char *why, size_t size);

int pmc__results_parse(const char *text, size_t len, const char *shown, struct pmc__results *rs,
		       char *why, size_t size)
{
	struct pmc__jdoc d;
	int rc;

	memset(rs, 0, sizeof(*rs));
	rc = pmc__jdoc_parse(&d, text, len, shown, why, size);
	if (rc == 0)
		rc = results_of(&d, shown, rs, why, size);
	pmc__jdoc_release(&d);
	return rc;
}

/* One case from jansson (a case's result through its pipe, a record read
 * back): written as compact text and read by the same reader as a file. */
int pmc__result_from_json(json_t *o, struct pmc__result *r, const char *where, char *why,
			  size_t size)
{
	char *text;
	struct pmc__jdoc d;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!json_is_object(o)) {
		snprintf(why, size, "%s: expected an object, found %s", where,
			 json_is_array(o) ? "an array" : json_is_string(o) ? "a string" :
			 json_is_integer(o) ? "an integer" : json_is_real(o) ? "a fraction" :
			 json_is_boolean(o) ? "a boolean" : "null");
		return -EINVAL;
	}
	text = json_dumps(o, JSON_COMPACT);
	if (!text) {
		snprintf(why, size, "%s: out of memory", where);
		return -ENOMEM;
	}
	rc = pmc__jdoc_parse(&d, text, strlen(text), where, why, size);
	if (rc == 0)
		rc = read_case(&d, d.nodes, r, where, why, size);
	pmc__jdoc_release(&d);
	free(text);
	return rc;
}

static void too_large(const char *shown, unsigned long long bytes, bool grew, char *why,
		      size_t size)
{
	snprintf(why, size,
		 "%s: %s%llu bytes%s, above the limit of %llu bytes (%d MiB) for a results file: a run's results are far smaller; give the file pmcheck wrote, or split the run (--results-dir)",
		 shown, grew ? "grew while read to " : "", bytes, grew ? " or more" : "",
		 (unsigned long long)PMC__RESULTS_MAX_BYTES, (int)(PMC__RESULTS_MAX_BYTES >> 20));
}

int pmc__results_load(const char *path, struct pmc__results *rs, char *why, size_t size)
{
	return pmc__results_load_text(path, rs, NULL, NULL, why, size);
}

int pmc__results_load_text(const char *path, struct pmc__results *rs, char **bytes, size_t *nbytes,
			   char *why, size_t size)
{
	char shown[PATH_MAX + 64];
	struct stat sb = { 0 };
	size_t cap, used = 0;
	char *text = NULL;
	int rc, fd;

	/* The path as messages quote it, control characters escaped. */
	pmc__escape_ctl(shown, sizeof(shown), path);
	memset(rs, 0, sizeof(*rs));
	/* Only a regular file is read: opened without blocking (a FIFO's
	 * open would wait for a writer), and refused unless fstat says so. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, size, "cannot read %s: %s", shown, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		snprintf(why, size, "%s: %s, not a results file: only regular files are read as results", shown,
			 S_ISFIFO(sb.st_mode) ? "a FIFO" : S_ISDIR(sb.st_mode) ? "a directory" : S_ISSOCK(sb.st_mode) ? "a socket" : "a device or other");
		close(fd);
		return -EINVAL;
	}
	/* The size first, so that a huge file is refused unread; the cap
	 * again while reading, for a file that grows meanwhile. */
	if ((unsigned long long)sb.st_size > PMC__RESULTS_MAX_BYTES) {
		too_large(shown, (unsigned long long)sb.st_size, false, why, size);
		close(fd);
		return -EFBIG;
	}
	cap = (size_t)sb.st_size + 4096;
	text = malloc(cap);
	rc = text ? 0 : -ENOMEM;
	while (rc == 0) {
		ssize_t n;

		if (used == cap) {
			/* Past the limit by a page, not a byte: a file read
			 * in units (/proc/self/pagemap: 8 bytes) reads on. */
			size_t grown = cap * 2 > PMC__RESULTS_MAX_BYTES + 4096 ? PMC__RESULTS_MAX_BYTES + 4096 : cap * 2;
			char *p = grown > cap ? realloc(text, grown) : NULL;

			if (!p) {
				rc = grown > cap ? -ENOMEM : -EFBIG;
				break;
			}
			text = p;
			cap = grown;
		}
		n = read(fd, text + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			rc = -errno;
		else if (n == 0)
			break;
		else
			used += (size_t)n;
	}
	close(fd);
	if (rc == 0 && used > PMC__RESULTS_MAX_BYTES)
		rc = -EFBIG;
	if (rc == -EFBIG)
		too_large(shown, (unsigned long long)used, true, why, size);
	else if (rc)
		snprintf(why, size, "cannot read %s: %s", shown, strerror(-rc));
	else
		rc = pmc__results_parse(text, used, shown, rs, why, size);
	if (rc == 0 && bytes) {
		*bytes = text;
		*nbytes = used;
	} else {
		free(text);
	}
	return rc;
}

/* Case names, sorted, to find one given twice. */
static int by_name(const void *a, const void *b)
{
	const struct pmc__result *const *x = a, *const *y = b;
	int c = strcmp((*x)->name, (*y)->name);

	return c ? c : (*x < *y ? -1 : *x > *y);
}

/* The same case twice in one file would be counted twice by every reader
 * (results, compare, the history): refused, with both places. */
static int unique_cases(const struct pmc__results *rs, const char *path, char *why, size_t size)
{
	const struct pmc__result **v;
	int rc = 0;

	if (rs->n < 2)
		return 0;
	v = malloc(rs->n * sizeof(*v));
	if (!v) {
		snprintf(why, size, "%s: out of memory", path);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rs->n; i++)
		v[i] = &rs->cases[i];
	qsort(v, rs->n, sizeof(*v), by_name);
	for (size_t i = 1; i < rs->n && !rc; i++)
		if (!strcmp(v[i - 1]->name, v[i]->name)) {
			char name[256];

			pmc__escape_ctl(name, sizeof(name), v[i]->name);
			snprintf(why, size,
				 "%s: cases[%zu] and cases[%zu] are both case \"%s\": a results file holds each case once (it would be counted twice); remove one, or keep the files of two runs apart",
				 path, (size_t)(v[i - 1] - rs->cases), (size_t)(v[i] - rs->cases), name);
			rc = -EINVAL;
		}
	free(v);
	return rc;
}

static int results_of(const struct pmc__jdoc *d, const char *path, struct pmc__results *rs,
		      char *why, size_t size)
{
	const struct pmc__jnode *doc = d->nodes, *cases, *c, *env, *objects;
	const char *schema;
	size_t i;
	int rc = -EINVAL;

	memset(rs, 0, sizeof(*rs));
	schema = pmc__jdoc_str(d, pmc__jdoc_get(d, doc, "schema"));
	if (!is_object(doc) || !schema || strcmp(schema, PMC__RESULTS_SCHEMA)) {
		snprintf(why, size, "%s: not a pmcheck results file (schema \"%s\", expected \"%s\")",
			 path, schema ? schema : "(none)", PMC__RESULTS_SCHEMA);
		goto out;
	}
	cases = pmc__jdoc_get(d, doc, "cases");
	env = pmc__jdoc_get(d, doc, "environment");
	if (!is_array(cases)) {
		snprintf(why, size, "%s: cases: %s%s", path, cases ? "expected an array, found " : "missing",
			 cases ? type_name(cases) : "");
		goto out;
	}
	if (!is_object(env)) {
		snprintf(why, size, "%s: environment: %s%s", path,
			 env ? "expected an object, found " : "missing", env ? type_name(env) : "");
		goto out;
	}
	if (check_environment(d, env, path, why, size))
		goto out;
	rs->environment = pmc__jdoc_json(d, env);
	if (!rs->environment) {
		snprintf(why, size, "%s: out of memory", path);
		rc = -ENOMEM;
		goto out;
	}
	objects = pmc__jdoc_get(d, env, "objects");
	pmc__jdoc_foreach(cases, i, c) {
		struct pmc__result r;
		char where[PATH_MAX + 32];

		snprintf(where, sizeof(where), "%s: cases[%zu]", path, i);
		if (read_case(d, c, &r, where, why, size) ||
		    /* a case without its own list loaded what the run's says */
		    (!pmc__jdoc_get(d, c, "objects") && is_array(objects) &&
		     objects_of(d, objects, &r.objects, &r.nobjects, why, size)) ||
		    pmc__results_add(rs, &r)) {
			pmc__result_release(&r);
			pmc__results_release(rs);
			goto out;
		}
	}
	rc = unique_cases(rs, path, why, size);
	if (rc)
		pmc__results_release(rs);
out:
	return rc;
}
