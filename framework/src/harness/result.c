/* SPDX-License-Identifier: MIT */
/*
 * The result of a case as a C record: the one place that converts it to
 * JSON (the pipe from a case's process to the runner, results files,
 * baselines), and the lookups on it (a case of a run, a region, an event,
 * a check); result_read.c is the one place that reads it back.  The names
 * of verdicts, check kinds and statuses live here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"
#include "util/arith.h"

/* ---- names ------------------------------------------------------------------------- */

static const char *const kind_names[] = { "?", "le", "ge", "range", "eq", "ratio_le",
					  "ratio_ge", "ratio_range", "budget", "figure" };
static const char *const status_names[] = { "pass", "unbudgeted", "inconclusive", "fail",
					    "error" };

const char *pmc_verdict_name(enum pmc_verdict v)
{
	static const char *const names[] = { "PASS", "SKIP", "KNOWN-ISSUE", "INCONCLUSIVE",
					     "FAIL", "ERROR" };

	return (unsigned)v <= PMC_ERROR ? names[v] : "?";
}

const char *pmc__check_kind_name(enum pmc_expect_kind k)
{
	return (unsigned)k <= PMC_EXPECT_KIND_FIGURE ? kind_names[k] : "?";
}

const char *pmc__check_status_name(enum pmc__check_status s)
{
	return (unsigned)s <= PMC__CHECK_ERROR ? status_names[s] : "?";
}

static int index_of(const char *s, const char *const *names, size_t n, size_t from)
{
	for (size_t i = from; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

int pmc__check_kind_of(const char *s)
{
	return index_of(s, kind_names, sizeof(kind_names) / sizeof(kind_names[0]), 1);
}

int pmc__check_status_of(const char *s)
{
	return index_of(s, status_names, sizeof(status_names) / sizeof(status_names[0]), 0);
}

int pmc__verdict_from_name(const char *s)
{
	for (int v = PMC_PASS; s && v <= PMC_ERROR; v++)
		if (!strcmp(s, pmc_verdict_name((enum pmc_verdict)v)))
			return v;
	return -1;
}

/* ---- release ------------------------------------------------------------------------- */

void pmc__result_release(struct pmc__result *r)
{
	size_t i, j;

	if (!r)
		return;
	free(r->name);
	free(r->suite);
	free(r->test);
	free(r->file);
	free(r->reason);
	free(r->known_issue);
	free(r->grouping);
	free(r->read_path);
	free(r->sim_profile);
	free(r->simulated_cpu);
	free(r->sim_engine);
	free(r->output);
	for (i = 0; i < r->nevents; i++) {
		free(r->events[i].label);
		free(r->events[i].name);
		free(r->events[i].kind);
		free(r->events[i].sim_columns);
		free(r->events[i].sim_engine);
	}
	free(r->events);
	for (i = 0; i < r->nregions; i++) {
		for (j = 0; j < r->regions[i].nev; j++) {
			free(r->regions[i].ev[j].label);
			free(r->regions[i].ev[j].values);
		}
		free(r->regions[i].ev);
		free(r->regions[i].name);
		for (j = 0; j < r->regions[i].nfns; j++) {
			free(r->regions[i].fns[j].name);
			free(r->regions[i].fns[j].object);
			free(r->regions[i].fns[j].cost);
			free(r->regions[i].fns[j].samples);
		}
		free(r->regions[i].fns);
		for (j = 0; j < r->regions[i].nsampled; j++)
			free(r->regions[i].sampled[j].label);
		free(r->regions[i].sampled);
	}
	free(r->regions);
	pmc_objects_free(r->objects, r->nobjects);
	for (i = 0; i < r->nchecks; i++) {
		struct pmc__check_rec *c = &r->checks[i];

		free(c->region);
		free(c->event);
		free(c->per);
		free(c->file);
		free(c->message);
		free(c->budget_source);
		free(c->layout);
	}
	free(r->checks);
	for (i = 0; i < r->nnotes; i++)
		free(r->notes[i]);
	free(r->notes);
	memset(r, 0, sizeof(*r));
}

void pmc__results_release(struct pmc__results *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		pmc__result_release(&rs->cases[i]);
	free(rs->cases);
	json_decref(rs->environment);
	json_decref(rs->comparison);
	memset(rs, 0, sizeof(*rs));
}

int pmc__results_add(struct pmc__results *rs, struct pmc__result *r)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? rs->cap * 2 : 16;
		struct pmc__result *p = realloc(rs->cases, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		rs->cases = p;
		rs->cap = cap;
	}
	rs->cases[rs->n++] = *r; /* moved: the caller's copy is no longer its own */
	memset(r, 0, sizeof(*r));
	return 0;
}

/* ---- to JSON --------------------------------------------------------------------------- */

static json_t *num(double x)
{
	if (isnan(x))
		return json_null();
	if (x == pmc__floor(x) && fabs(x) < 9e15)
		return json_integer((json_int_t)x);
	return json_real(x);
}

static void set_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

static json_t *stats_to_json(const struct pmc__stat_rec *s, uint64_t iterations)
{
	json_t *o = json_pack("{s:I, s:I, s:o, s:I, s:o, s:I, s:I}", "n", (json_int_t)s->n, "min",
			      (json_int_t)s->min, "median", num(s->median), "max",
			      (json_int_t)s->max, "mean", num(s->mean), "multiplexed",
			      (json_int_t)s->multiplexed, "not_counted", (json_int_t)s->not_counted);
	json_t *vals = json_array();

	if (!o)
		return NULL;
	if (s->other_threads)
		json_object_set_new(o, "other_threads", json_integer((json_int_t)s->other_threads));
	if (iterations > 1)
		json_object_set_new(o, "per_iteration",
				    json_pack("{s:o, s:o, s:o}", "min",
					      num((double)s->min / (double)iterations), "median",
					      num(s->median / (double)iterations), "max",
					      num((double)s->max / (double)iterations)));
	for (size_t k = 0; k < s->nvalues; k++)
		json_array_append_new(vals, json_integer((json_int_t)s->values[k]));
	json_object_set_new(o, "values", vals);
	if (s->summarised)
		json_object_set_new(o, "summarised", json_integer((json_int_t)s->summarised));
	if (s->median_error > 0)
		json_object_set_new(o, "median_error", json_real(s->median_error));
	return o;
}

json_t *pmc__functions_json(const struct pmc__region_rec *g)
{
	json_t *fns = json_array();

	for (size_t k = 0; k < g->nfns; k++) {
		json_t *costs = json_object(), *row;

		for (size_t j = 0; j < g->nev; j++)
			if (!isnan(g->fns[k].cost[j]))
				json_object_set_new(costs, g->ev[j].label, num(g->fns[k].cost[j]));
		row = json_pack("{s:s, s:s, s:o}", "function", g->fns[k].name, "object",
				g->fns[k].object, "costs", costs);
		if (!isnan(g->fns[k].calls))
			json_object_set_new(row, "calls", num(g->fns[k].calls));
		if (g->fns[k].samples) {
			json_t *n = json_object();

			for (size_t j = 0; j < g->nev; j++)
				if (!isnan(g->fns[k].cost[j]))
					json_object_set_new(n, g->ev[j].label,
							    json_integer((json_int_t)g->fns[k].samples[j]));
			json_object_set_new(row, "samples", n);
		}
		json_array_append_new(fns, row);
	}
	return fns;
}

json_t *pmc__sampling_json(const struct pmc__region_rec *g)
{
	json_t *a = json_array();

	for (size_t k = 0; k < g->nsampled; k++) {
		const struct pmc__sampled_rec *s = &g->sampled[k];

		json_array_append_new(a, json_pack("{s:s, s:I, s:I, s:I, s:I}", "event", s->label,
						   "period", (json_int_t)s->period, "samples",
						   (json_int_t)s->samples, "lost", (json_int_t)s->lost,
						   "executions", (json_int_t)s->executions));
	}
	return a;
}

json_t *pmc__result_to_json(const struct pmc__result *r)
{
	json_t *o, *events = json_array(), *overhead = json_object(), *regions = json_array(),
		   *checks = json_array(), *notes = json_array();
	bool any_overhead = false;
	size_t i, j;

	o = json_pack("{s:s, s:s, s:s, s:s, s:i, s:s}", "name", r->name ? r->name : "",
		      "suite", r->suite ? r->suite : "", "test", r->test ? r->test : "", "file",
		      r->file ? r->file : "", "line", r->line, "verdict",
		      pmc_verdict_name(r->verdict));
	if (!o)
		goto oom;
	if (r->backend)
		json_object_set_new(o, "backend", json_string(r->backend));
	if (r->has_options) {
		json_object_set_new(o, "reps", json_integer(r->reps));
		json_object_set_new(o, "warmup", json_integer(r->warmup));
		json_object_set_new(o, "stat", json_string(pmc__stat_name(r->stat)));
	}
	json_object_set_new(o, "measuring", json_boolean(r->measuring));
	set_str(o, "reason", r->reason);
	set_str(o, "known_issue", r->known_issue);
	if (r->timeout)
		json_object_set_new(o, "timeout", json_true());
	for (i = 0; i < r->nevents; i++) {
		const struct pmc__event_rec *e = &r->events[i];
		json_t *eo = json_pack("{s:s, s:s}", "label", e->label, "name", e->name);

		if (e->group >= 0)
			json_object_set_new(eo, "group", json_integer(e->group));
		json_object_set_new(eo, "hardware", json_boolean(e->hardware));
		set_str(eo, "kind", e->kind);
		set_str(eo, "sim_columns", e->sim_columns);
		set_str(eo, "sim_engine", e->sim_engine);
		json_array_append_new(events, eo);
		if (e->has_overhead) {
			json_object_set_new(overhead, e->label, json_integer((json_int_t)e->overhead));
			any_overhead = true;
		}
	}
	json_object_set_new(o, "events", events);
	set_str(o, "grouping", r->grouping);
	set_str(o, "read_path", r->read_path);
	if (any_overhead)
		json_object_set_new(o, "overhead", overhead);
	else
		json_decref(overhead);
	set_str(o, "sim_profile", r->sim_profile);
	set_str(o, "simulated_cpu", r->simulated_cpu);
	set_str(o, "sim_engine", r->sim_engine);
	for (i = 0; i < r->nregions; i++) {
		const struct pmc__region_rec *g = &r->regions[i];
		json_t *evs = json_object();
		json_t *ro = json_pack("{s:s, s:I, s:I}", "name", g->name, "iterations",
				       (json_int_t)g->iterations, "samples", (json_int_t)g->samples);

		for (j = 0; j < g->nev; j++)
			json_object_set_new(evs, g->ev[j].label, stats_to_json(&g->ev[j], g->iterations));
		json_object_set_new(ro, "events", evs);
		if (g->nfns)
			json_object_set_new(ro, "functions", pmc__functions_json(g));
		if (g->nsampled)
			json_object_set_new(ro, "sampling", pmc__sampling_json(g));
		json_array_append_new(regions, ro);
	}
	json_object_set_new(o, "regions", regions);
	for (i = 0; i < r->nchecks; i++) {
		const struct pmc__check_rec *c = &r->checks[i];
		json_t *co = json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:s}", "kind",
				       pmc__check_kind_name(c->kind), "region", c->region, "event",
				       c->event, "status", pmc__check_status_name(c->status), "file",
				       c->file, "line", c->line, "message", c->message);

		set_str(co, "per", c->per);
		json_object_set_new(co, "measured", num(c->measured));
		json_object_set_new(co, "lo", num(c->lo));
		json_object_set_new(co, "hi", num(c->hi));
		if (c->has_statistic)
			json_object_set_new(co, "statistic", json_string(pmc__stat_name(c->statistic)));
		json_object_set_new(co, "samples", json_integer((json_int_t)c->samples));
		set_str(co, "budget_source", c->budget_source);
		set_str(co, "layout", c->layout);
		if (c->gate)
			json_object_set_new(co, "gate", json_true());
		json_array_append_new(checks, co);
	}
	json_object_set_new(o, "checks", checks);
	for (i = 0; i < r->nnotes; i++)
		json_array_append_new(notes, json_string(r->notes[i]));
	json_object_set_new(o, "notes", notes);
	if (r->nobjects)
		json_object_set_new(o, "objects", pmc__objects_json(r->objects, r->nobjects));
	if (r->has_duration) {
		json_object_set_new(o, "duration_s", json_real(r->duration_s));
		/* pmcheck stat runs a command without a time limit. */
		if (r->timeout_s > 0)
			json_object_set_new(o, "timeout_s", json_real(r->timeout_s));
	}
	set_str(o, "output", r->output);
	if (r->output_truncated)
		json_object_set_new(o, "output_truncated_bytes",
				    json_integer((json_int_t)r->output_truncated));
	return o;
oom:
	json_decref(events);
	json_decref(overhead);
	json_decref(regions);
	json_decref(checks);
	json_decref(notes);
	return NULL;
}

static char *joined(const char *a, const char *b)
{
	char *s = NULL;

	return asprintf(&s, "%s%s", a, b) < 0 ? NULL : s;
}

/* The check's message becomes m (taken over); the case's reason quotes
 * the first failed check, so where it quotes this one it follows. */
static int replace_message(struct pmc__result *r, struct pmc__check_rec *cr, char *m)
{
	if (r->reason && !strncmp(r->reason, cr->message, strlen(cr->message))) {
		char *rr = joined(m, r->reason + strlen(cr->message));

		if (!rr) {
			free(m);
			return -1;
		}
		free(r->reason);
		r->reason = rr;
	}
	free(cr->message);
	cr->message = m;
	return 0;
}

int pmc__check_explain(struct pmc__result *r, struct pmc__check_rec *cr, const char *why)
{
	size_t len = strlen(cr->message);
	char *m = NULL;

	/* The check's words end in a full stop before the explanation. */
	if (asprintf(&m, "%s%s%s", cr->message, len && cr->message[len - 1] != '.' ? "." : "",
		     why) < 0)
		return -1;
	return replace_message(r, cr, m);
}

int pmc__check_preface(struct pmc__result *r, struct pmc__check_rec *cr, const char *text)
{
	char *head = NULL, *m = NULL;
	size_t hlen;

	/* After the check's subject, before its figures. */
	if (asprintf(&head, "region \"%s\", %s: ", cr->region, cr->event) < 0)
		return -1;
	hlen = strlen(head);
	if (strncmp(cr->message, head, hlen))
		hlen = 0;
	free(head);
	if (asprintf(&m, "%.*s%s; %s", (int)hlen, cr->message, text, cr->message + hlen) < 0)
		return -1;
	return replace_message(r, cr, m);
}

/* ---- lookups on the model -------------------------------------------------------- */

const char *pmc__results_signature(const struct pmc__results *rs)
{
	const char *s = json_string_value(
		json_object_get(json_object_get(rs->environment, "cpu"), "signature"));

	return s ? s : "";
}

const char *pmc__results_backend(const struct pmc__results *rs)
{
	const char *s = json_string_value(json_object_get(rs->environment, "backend"));

	return s ? s : "";
}

const struct pmc__result *pmc__results_find(const struct pmc__results *rs, const char *name)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->cases[i].name && !strcmp(rs->cases[i].name, name))
			return &rs->cases[i];
	return NULL;
}

const struct pmc__region_rec *pmc__result_region(const struct pmc__result *r, const char *name)
{
	for (size_t i = 0; r && i < r->nregions; i++)
		if (!strcmp(r->regions[i].name, name))
			return &r->regions[i];
	return NULL;
}

const struct pmc__stat_rec *pmc__region_event(const struct pmc__region_rec *g, const char *label)
{
	for (size_t i = 0; g && i < g->nev; i++)
		if (!strcmp(g->ev[i].label, label))
			return &g->ev[i];
	return NULL;
}

const struct pmc__check_rec *pmc__result_check(const struct pmc__result *r,
					       enum pmc_expect_kind kind, const char *region,
					       const char *event)
{
	for (size_t i = 0; r && i < r->nchecks; i++)
		if (r->checks[i].kind == kind && !strcmp(r->checks[i].region, region) &&
		    !strcmp(r->checks[i].event, event))
			return &r->checks[i];
	return NULL;
}

const struct pmc__event_rec *pmc__result_event(const struct pmc__result *r, const char *event)
{
	for (size_t i = 0; i < r->nevents; i++)
		if ((r->events[i].label && !strcmp(r->events[i].label, event)) ||
		    (r->events[i].name && !strcmp(r->events[i].name, event)))
			return &r->events[i];
	return NULL;
}
