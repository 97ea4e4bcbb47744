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
					     "FAIL", "ERROR", "UNBUDGETED" };

	return (unsigned)v < PMC__NVERDICTS ? names[v] : "?";
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
	for (int v = PMC_PASS; s && v < PMC__NVERDICTS; v++)
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

/* Written as text (pmc__jw, jsonio.c): the case process on the sim backend
 * writes its result so, with none of jansson.  The parsed forms below
 * (pmc__result_to_json, pmc__functions_json) read that text back, so both
 * hold the same keys in the same order. */

/* A count as an integer, another figure as a real; NaN: null. */
static void w_num(struct pmc__jw *w, double x)
{
	if (isnan(x))
		pmc__jw_null(w);
	else if (x == pmc__floor(x) && fabs(x) < 9e15)
		pmc__jw_int(w, (long long)x);
	else
		pmc__jw_real(w, x);
}

static void w_str(struct pmc__jw *w, const char *key, const char *s)
{
	if (s) {
		pmc__jw_key(w, key);
		pmc__jw_str(w, s);
	}
}

static void w_int(struct pmc__jw *w, const char *key, long long v)
{
	pmc__jw_key(w, key);
	pmc__jw_int(w, v);
}

static void w_bool(struct pmc__jw *w, const char *key, bool b)
{
	pmc__jw_key(w, key);
	pmc__jw_bool(w, b);
}

static void w_stats(struct pmc__jw *w, const struct pmc__stat_rec *s, uint64_t iterations)
{
	pmc__jw_open(w, '{');
	w_int(w, "n", (long long)s->n);
	w_int(w, "min", (long long)s->min);
	pmc__jw_key(w, "median");
	w_num(w, s->median);
	w_int(w, "max", (long long)s->max);
	pmc__jw_key(w, "mean");
	w_num(w, s->mean);
	w_int(w, "multiplexed", (long long)s->multiplexed);
	w_int(w, "not_counted", (long long)s->not_counted);
	if (s->other_threads)
		w_int(w, "other_threads", (long long)s->other_threads);
	if (iterations > 1) {
		pmc__jw_key(w, "per_iteration");
		pmc__jw_open(w, '{');
		pmc__jw_key(w, "min");
		w_num(w, (double)s->min / (double)iterations);
		pmc__jw_key(w, "median");
		w_num(w, s->median / (double)iterations);
		pmc__jw_key(w, "max");
		w_num(w, (double)s->max / (double)iterations);
		pmc__jw_close(w, '}');
	}
	pmc__jw_key(w, "values");
	pmc__jw_open(w, '[');
	for (size_t k = 0; k < s->nvalues; k++)
		pmc__jw_int(w, (long long)s->values[k]);
	pmc__jw_close(w, ']');
	if (s->summarised)
		w_int(w, "summarised", (long long)s->summarised);
	if (s->median_error > 0) {
		pmc__jw_key(w, "median_error");
		pmc__jw_real(w, s->median_error);
	}
	pmc__jw_close(w, '}');
}

static void w_functions(struct pmc__jw *w, const struct pmc__region_rec *g)
{
	pmc__jw_open(w, '[');
	for (size_t k = 0; k < g->nfns; k++) {
		pmc__jw_open(w, '{');
		w_str(w, "function", g->fns[k].name ? g->fns[k].name : "");
		w_str(w, "object", g->fns[k].object ? g->fns[k].object : "");
		pmc__jw_key(w, "costs");
		pmc__jw_open(w, '{');
		for (size_t j = 0; j < g->nev; j++)
			if (!isnan(g->fns[k].cost[j])) {
				pmc__jw_key(w, g->ev[j].label);
				w_num(w, g->fns[k].cost[j]);
			}
		pmc__jw_close(w, '}');
		if (!isnan(g->fns[k].calls)) {
			pmc__jw_key(w, "calls");
			w_num(w, g->fns[k].calls);
		}
		if (g->fns[k].samples) {
			pmc__jw_key(w, "samples");
			pmc__jw_open(w, '{');
			for (size_t j = 0; j < g->nev; j++)
				if (!isnan(g->fns[k].cost[j]))
					w_int(w, g->ev[j].label, (long long)g->fns[k].samples[j]);
			pmc__jw_close(w, '}');
		}
		pmc__jw_close(w, '}');
	}
	pmc__jw_close(w, ']');
}

json_t *pmc__functions_json(const struct pmc__region_rec *g)
{
	struct pmc__jw w = { 0 };

	w_functions(&w, g);
	return pmc__jw_json(&w);
}

static void w_sampling(struct pmc__jw *w, const struct pmc__region_rec *g)
{
	pmc__jw_open(w, '[');
	for (size_t k = 0; k < g->nsampled; k++) {
		const struct pmc__sampled_rec *s = &g->sampled[k];

		pmc__jw_open(w, '{');
		w_str(w, "event", s->label ? s->label : "");
		w_int(w, "period", (long long)s->period);
		w_int(w, "samples", (long long)s->samples);
		w_int(w, "lost", (long long)s->lost);
		w_int(w, "executions", (long long)s->executions);
		pmc__jw_close(w, '}');
	}
	pmc__jw_close(w, ']');
}

static void w_result(struct pmc__jw *w, const struct pmc__result *r)
{
	bool any_overhead = false;
	size_t i, j;

	pmc__jw_open(w, '{');
	w_str(w, "name", r->name ? r->name : "");
	w_str(w, "suite", r->suite ? r->suite : "");
	w_str(w, "test", r->test ? r->test : "");
	w_str(w, "file", r->file ? r->file : "");
	w_int(w, "line", r->line);
	w_str(w, "verdict", pmc_verdict_name(r->verdict));
	w_str(w, "backend", r->backend);
	if (r->has_options) {
		w_int(w, "reps", r->reps);
		w_int(w, "warmup", r->warmup);
		w_str(w, "stat", pmc__stat_name(r->stat));
	}
	w_bool(w, "measuring", r->measuring);
	w_str(w, "reason", r->reason);
	w_str(w, "known_issue", r->known_issue);
	if (r->timeout)
		w_bool(w, "timeout", true);
	pmc__jw_key(w, "events");
	pmc__jw_open(w, '[');
	for (i = 0; i < r->nevents; i++) {
		const struct pmc__event_rec *e = &r->events[i];

		pmc__jw_open(w, '{');
		w_str(w, "label", e->label ? e->label : "");
		w_str(w, "name", e->name ? e->name : "");
		if (e->group >= 0)
			w_int(w, "group", e->group);
		w_bool(w, "hardware", e->hardware);
		w_str(w, "kind", e->kind);
		w_str(w, "sim_columns", e->sim_columns);
		w_str(w, "sim_engine", e->sim_engine);
		pmc__jw_close(w, '}');
		any_overhead |= e->has_overhead;
	}
	pmc__jw_close(w, ']');
	w_str(w, "grouping", r->grouping);
	w_str(w, "read_path", r->read_path);
	if (any_overhead) {
		pmc__jw_key(w, "overhead");
		pmc__jw_open(w, '{');
		for (i = 0; i < r->nevents; i++)
			if (r->events[i].has_overhead)
				w_int(w, r->events[i].label, (long long)r->events[i].overhead);
		pmc__jw_close(w, '}');
	}
	w_str(w, "sim_profile", r->sim_profile);
	w_str(w, "simulated_cpu", r->simulated_cpu);
	w_str(w, "sim_engine", r->sim_engine);
	pmc__jw_key(w, "regions");
	pmc__jw_open(w, '[');
	for (i = 0; i < r->nregions; i++) {
		const struct pmc__region_rec *g = &r->regions[i];

		pmc__jw_open(w, '{');
		w_str(w, "name", g->name ? g->name : "");
		w_int(w, "iterations", (long long)g->iterations);
		w_int(w, "samples", (long long)g->samples);
		pmc__jw_key(w, "events");
		pmc__jw_open(w, '{');
		for (j = 0; j < g->nev; j++) {
			pmc__jw_key(w, g->ev[j].label);
			w_stats(w, &g->ev[j], g->iterations);
		}
		pmc__jw_close(w, '}');
		if (g->nfns) {
			pmc__jw_key(w, "functions");
			w_functions(w, g);
		}
		if (g->nsampled) {
			pmc__jw_key(w, "sampling");
			w_sampling(w, g);
		}
		pmc__jw_close(w, '}');
	}
	pmc__jw_close(w, ']');
	pmc__jw_key(w, "checks");
	pmc__jw_open(w, '[');
	for (i = 0; i < r->nchecks; i++) {
		const struct pmc__check_rec *c = &r->checks[i];

		pmc__jw_open(w, '{');
		w_str(w, "kind", pmc__check_kind_name(c->kind));
		w_str(w, "region", c->region ? c->region : "");
		w_str(w, "event", c->event ? c->event : "");
		w_str(w, "status", pmc__check_status_name(c->status));
		w_str(w, "file", c->file ? c->file : "");
		w_int(w, "line", c->line);
		w_str(w, "message", c->message ? c->message : "");
		w_str(w, "per", c->per);
		pmc__jw_key(w, "measured");
		w_num(w, c->measured);
		pmc__jw_key(w, "lo");
		w_num(w, c->lo);
		pmc__jw_key(w, "hi");
		w_num(w, c->hi);
		if (c->has_statistic)
			w_str(w, "statistic", pmc__stat_name(c->statistic));
		w_int(w, "samples", (long long)c->samples);
		w_str(w, "budget_source", c->budget_source);
		if (c->per_iteration)
			w_bool(w, "per_iteration", true);
		w_str(w, "layout", c->layout);
		if (c->gate)
			w_bool(w, "gate", true);
		pmc__jw_close(w, '}');
	}
	pmc__jw_close(w, ']');
	pmc__jw_key(w, "notes");
	pmc__jw_open(w, '[');
	for (i = 0; i < r->nnotes; i++)
		pmc__jw_str(w, r->notes[i]);
	pmc__jw_close(w, ']');
	if (r->nobjects) {
		pmc__jw_key(w, "objects");
		pmc__jw_objects(w, r->objects, r->nobjects);
	}
	if (r->has_duration) {
		pmc__jw_key(w, "duration_s");
		pmc__jw_real(w, r->duration_s);
		/* pmcheck stat runs a command without a time limit. */
		if (r->timeout_s > 0) {
			pmc__jw_key(w, "timeout_s");
			pmc__jw_real(w, r->timeout_s);
		}
	}
	w_str(w, "output", r->output);
	if (r->output_truncated)
		w_int(w, "output_truncated_bytes", (long long)r->output_truncated);
	pmc__jw_close(w, '}');
}

char *pmc__result_to_text(const struct pmc__result *r)
{
	struct pmc__jw w = { 0 };

	w_result(&w, r);
	return pmc__jw_take(&w);
}

json_t *pmc__result_to_json(const struct pmc__result *r)
{
	struct pmc__jw w = { 0 };

	w_result(&w, r);
	return pmc__jw_json(&w);
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
