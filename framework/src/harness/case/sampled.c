/* SPDX-License-Identifier: MIT */
/*
 * Attribution on the perf backend.  A case that failed is run once more
 * with its failing events sampled (pmc_sampler) inside its regions only:
 * each region's measured executions enable the samplers at begin and
 * disable and drain them at end.  The record then carries, per region,
 * the functions the samples fell in (pmc_symtab), as the sim backend's
 * rows: the top PMC__ATTR_TOP and "(other)", each with its samples and
 * an estimate of its count per execution: its share of the samples times
 * the region's mean count.  Not samples x period: a PMU may deliver fewer
 * samples than the period asks for (measured in the emulated lane: QEMU
 * raises the overflow interrupt at the next timer tick, 90 samples where
 * the period asked for 4000), and the share survives that, the product
 * does not.
 *
 * The runner side (which events, which period, the explanation appended
 * to the failed checks) is pmc__attribute_by_sampling, in this file too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/sampling.h>

#include "harness_int.h"
#include "util/arith.h"

struct pmc__sample_request pmc__sampling;

struct ipvec {
	uint64_t *ip;
	size_t n, cap;
};

struct pmc__sampling_state {
	size_t n;
	struct pmc_sampler *s[PMC__SAMPLE_MAX];
	size_t col[PMC__SAMPLE_MAX];          /* the case's column of each */
	struct ipvec ips[PMC__MAX_REGIONS][PMC__SAMPLE_MAX];
	uint64_t lost[PMC__MAX_REGIONS][PMC__SAMPLE_MAX];
	uint64_t executions[PMC__MAX_REGIONS];
	bool on;          /* enabled: a measured region is open */
	size_t region;    /* which */
	bool oom;
};

void pmc__sampling_open(struct pmc_test *t)
{
	struct pmc__sampling_state *st;

	if (!pmc__sampling.n || t->backend != PMC_BACKEND_PERF || !t->set)
		return;
	st = calloc(1, sizeof(*st));
	if (!st) {
		pmc_test_note(t, "sampling: out of memory");
		return;
	}
	for (size_t k = 0; k < pmc__sampling.n; k++) {
		struct pmc_error err;
		int col = pmc__column_of(t, pmc__sampling.label[k]);

		if (col < 0) {
			pmc_test_note(t, "sampling: the case counts no event \"%s\"",
				      pmc__sampling.label[k]);
			continue;
		}
		if (pmc_sampler_open(&st->s[st->n], &t->spec[col], pmc__sampling.period[k],
				     t->opt.inherit ? PMC_OPEN_INHERIT : 0, 64, &err)) {
			pmc_test_note(t, "sampling: %s", err.message);
			continue;
		}
		st->col[st->n++] = (size_t)col;
	}
	if (!st->n) {
		free(st);
		return;
	}
	t->sampling = st;
}

void pmc__sampling_begin(struct pmc_test *t, const struct pmc__region *r)
{
	struct pmc__sampling_state *st = t->sampling;

	if (!st || !t->hot.recording || t->measuring_overhead)
		return;
	st->on = true;
	st->region = (size_t)(r - t->region);
	st->executions[st->region]++;
	for (size_t k = 0; k < st->n; k++)
		pmc_sampler_enable(st->s[k]);
}

struct drain_ctx {
	struct ipvec *v;
	bool *oom;
};

static void keep_ip(void *ctx, uint64_t ip, uint32_t pid, uint32_t tid)
{
	struct drain_ctx *c = ctx;
	struct ipvec *v = c->v;

	(void)pid;
	(void)tid;
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 1024;
		uint64_t *g = realloc(v->ip, cap * sizeof(*g));

		if (!g) {
			*c->oom = true;
			return;
		}
		v->ip = g;
		v->cap = cap;
	}
	v->ip[v->n++] = ip;
}

void pmc__sampling_end(struct pmc_test *t)
{
	struct pmc__sampling_state *st = t->sampling;

	if (!st || !st->on)
		return;
	for (size_t k = 0; k < st->n; k++)
		pmc_sampler_disable(st->s[k]);
	for (size_t k = 0; k < st->n; k++) {
		struct drain_ctx c = { &st->ips[st->region][k], &st->oom };

		pmc_sampler_drain(st->s[k], keep_ip, &c, &st->lost[st->region][k]);
	}
	st->on = false;
}

/* ---- the record's rows ------------------------------------------------------------ */

struct fn_tally {
	char *name, *object;
	uint64_t n[PMC__SAMPLE_MAX];
	double score;
};

static int by_ip(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int by_score(const void *a, const void *b)
{
	const struct fn_tally *x = a, *y = b;

	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* The tally of the function at ip (added when new); NULL out of memory. */
static struct fn_tally *tally_of(struct fn_tally **all, size_t *n, size_t *cap,
				 struct pmc_symtab *syms, uint64_t ip)
{
	struct pmc_symbol_at at;
	char name[64], *nm;
	const char *obj;

	if (pmc_symtab_lookup(syms, ip, &at) == 1) {
		nm = (char *)at.function;
	} else if (at.object) {
		snprintf(name, sizeof(name), "0x%" PRIx64, at.offset);
		nm = name;
	} else {
		/* A kernel address: the interrupt came in the kernel (a PMU
		 * whose overflow is seen late); else memory no object maps. */
		nm = (char *)(ip >> 63 ? "[kernel]" : "[unknown]");
	}
	obj = at.object ? at.object : "";
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*all)[i].name, nm) && !strcmp((*all)[i].object, obj))
			return &(*all)[i];
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 64;
		struct fn_tally *g = realloc(*all, c * sizeof(*g));

		if (!g)
			return NULL;
		*all = g;
		*cap = c;
	}
	memset(&(*all)[*n], 0, sizeof((*all)[0]));
	(*all)[*n].name = strdup(nm);
	(*all)[*n].object = strdup(obj);
	if (!(*all)[*n].name || !(*all)[*n].object)
		return NULL;
	return &(*all)[(*n)++];
}

static int add_row(struct pmc__region_rec *gr, const char *name, const char *object,
		   const uint64_t *n, const uint64_t *total, const struct pmc__sampling_state *st,
		   size_t nev)
{
	struct pmc__fn_rec *fr = &gr->fns[gr->nfns++];

	fr->name = strdup(name);
	fr->object = strdup(object);
	fr->cost = calloc(nev + 1, sizeof(*fr->cost));
	fr->samples = calloc(nev + 1, sizeof(*fr->samples));
	fr->calls = NAN; /* sampling does not count calls */
	if (!fr->name || !fr->object || !fr->cost || !fr->samples)
		return -1;
	for (size_t j = 0; j < nev; j++)
		fr->cost[j] = NAN;
	for (size_t k = 0; k < st->n; k++) {
		size_t c = st->col[k];

		fr->samples[c] = n[k];
		fr->cost[c] = total[k] && c < gr->nev
				      ? pmc__round((double)n[k] / (double)total[k] * gr->ev[c].mean)
				      : 0;
	}
	return 0;
}

/* Region i's rows into gr; -1 when memory runs out. */
int pmc__sampling_record(struct pmc_test *t, size_t i, struct pmc__region_rec *gr)
{
	struct pmc__sampling_state *st = t->sampling;
	struct fn_tally *all = NULL;
	size_t n = 0, cap = 0, keep;
	uint64_t total[PMC__SAMPLE_MAX] = { 0 }, other[PMC__SAMPLE_MAX] = { 0 };
	struct pmc_symtab *syms = NULL;
	struct pmc_error err;
	int rc = 0;

	if (!st || i >= PMC__MAX_REGIONS || !st->executions[i])
		return 0;
	if (st->oom && i == 0)
		pmc_test_note(t, "sampling: out of memory keeping samples; some were dropped");
	gr->sampled = calloc(st->n + 1, sizeof(*gr->sampled));
	if (!gr->sampled)
		return -1;
	for (size_t k = 0; k < st->n; k++) {
		struct pmc__sampled_rec *s = &gr->sampled[gr->nsampled++];

		s->label = strdup(t->label[st->col[k]]);
		s->period = pmc_sampler_period(st->s[k]);
		s->samples = st->ips[i][k].n;
		s->lost = st->lost[i][k];
		s->executions = st->executions[i];
		total[k] = st->ips[i][k].n;
		if (!s->label)
			return -1;
	}
	if (pmc_symtab_open(&syms, &err))
		return -1;
	for (size_t k = 0; k < st->n && rc == 0; k++) {
		struct ipvec *v = &st->ips[i][k];

		/* Sorted, each address is looked up once. */
		qsort(v->ip, v->n, sizeof(*v->ip), by_ip);
		for (size_t a = 0; a < v->n && rc == 0;) {
			size_t b = a;
			struct fn_tally *f;

			while (b < v->n && v->ip[b] == v->ip[a])
				b++;
			f = tally_of(&all, &n, &cap, syms, v->ip[a]);
			if (!f)
				rc = -1;
			else
				f->n[k] += b - a;
			a = b;
		}
	}
	pmc_symtab_close(syms);
	for (size_t f = 0; f < n; f++)
		for (size_t k = 0; k < st->n; k++)
			if (total[k] && (double)all[f].n[k] / (double)total[k] > all[f].score)
				all[f].score = (double)all[f].n[k] / (double)total[k];
	if (rc == 0 && n)
		qsort(all, n, sizeof(*all), by_score);
	keep = n < PMC__ATTR_TOP ? n : PMC__ATTR_TOP;
	for (size_t f = keep; f < n; f++)
		for (size_t k = 0; k < st->n; k++)
			other[k] += all[f].n[k];
	if (rc == 0 && n) {
		gr->fns = calloc(keep + 2, sizeof(*gr->fns));
		if (!gr->fns)
			rc = -1;
		for (size_t f = 0; rc == 0 && f < keep; f++)
			rc = add_row(gr, all[f].name, all[f].object, all[f].n, total, st, gr->nev);
		if (rc == 0 && keep < n)
			rc = add_row(gr, "(other)", "", other, total, st, gr->nev);
	}
	for (size_t f = 0; f < n; f++) {
		free(all[f].name);
		free(all[f].object);
	}
	free(all);
	return rc;
}

void pmc__sampling_close(struct pmc_test *t)
{
	struct pmc__sampling_state *st = t->sampling;

	if (!st)
		return;
	for (size_t k = 0; k < st->n; k++)
		pmc_sampler_close(st->s[k]);
	for (size_t i = 0; i < PMC__MAX_REGIONS; i++)
		for (size_t k = 0; k < st->n; k++)
			free(st->ips[i][k].ip);
	free(st);
	t->sampling = NULL;
}

/* ---- the runner's side ------------------------------------------------------------- */

/* Events whose counts a sample can place: not one-place events, but a
 * uprobe, whose samples name its callers (pmc_sampler_open). */
static bool samplable(const struct pmc__event_rec *e)
{
	return e && e->kind && strcmp(e->kind, "tracepoint") && strcmp(e->kind, "breakpoint") &&
	       strcmp(e->kind, "sim");
}

/* Add event `event` of result r to the request, with a period that gives
 * about PMC__SAMPLE_TARGET samples over its regions (every region counts
 * it); not when it cannot be sampled, is there already, or counted 0. */
static void request_add(struct pmc__sample_request *req, const struct pmc__result *r,
			const char *event)
{
	const struct pmc__event_rec *e = pmc__result_event(r, event);
	double total = 0;
	size_t k;

	if (req->n >= PMC__SAMPLE_MAX || !samplable(e))
		return;
	for (k = 0; k < req->n && strcmp(req->label[k], e->label); k++)
		;
	if (k < req->n)
		return;
	for (size_t g = 0; g < r->nregions; g++) {
		const struct pmc__stat_rec *s = pmc__region_event(&r->regions[g], e->label);

		if (s)
			total += s->mean * (double)s->n;
	}
	if (!(total >= 1))
		return;
	snprintf(req->label[req->n], sizeof(req->label[0]), "%s", e->label);
	req->period[req->n] =
		total <= PMC__SAMPLE_TARGET ? 1 : (uint64_t)pmc__ceil(total / PMC__SAMPLE_TARGET);
	req->n++;
}

static bool on_perf(const struct pmc__result *r)
{
	return r->backend && !strcmp(r->backend, "perf");
}

size_t pmc__sampling_request(const struct pmc__result *r, struct pmc__sample_request *req)
{
	memset(req, 0, sizeof(*req));
	if (r->verdict != PMC_FAIL || !on_perf(r))
		return 0;
	for (size_t c = 0; c < r->nchecks; c++)
		if (r->checks[c].status == PMC__CHECK_FAIL &&
		    r->checks[c].kind != PMC_EXPECT_KIND_FIGURE)
			request_add(req, r, r->checks[c].event);
	return req->n;
}

size_t pmc__sampling_request_regressions(json_t *rep, const struct pmc__result *r,
					 struct pmc__sample_request *req)
{
	json_t *row;
	size_t i;

	memset(req, 0, sizeof(*req));
	if (!on_perf(r))
		return 0;
	json_array_foreach(json_object_get(rep, "rows"), i, row) {
		const struct pmc__region_rec *g = pmc__result_region(r, pmc__jstr(row, "region"));

		/* A region sampled already (the case failed, too) is not again. */
		if (g && !g->nsampled && !strcmp(pmc__jstr(row, "case"), r->name) &&
		    !strcmp(pmc__jstr(row, "verdict"), "regression"))
			request_add(req, r, pmc__jstr(row, "event"));
	}
	return req->n;
}

static int row_by_samples(const struct pmc__fn_rec *a, const struct pmc__fn_rec *b, size_t col)
{
	return a->samples[col] != b->samples[col] ? (a->samples[col] < b->samples[col] ? 1 : -1)
						   : strcmp(a->name, b->name);
}

static size_t sort_col;

static int by_col_samples(const void *a, const void *b)
{
	const struct pmc__fn_rec *x = *(const struct pmc__fn_rec *const *)a;
	const struct pmc__fn_rec *y = *(const struct pmc__fn_rec *const *)b;

	return row_by_samples(x, y, sort_col);
}

json_t *pmc__sampled_rows_json(const struct pmc__region_rec *g, const char *label, size_t max)
{
	const struct pmc__sampled_rec *s = NULL;
	const struct pmc__fn_rec **order;
	json_t *rows;
	size_t col = 0;

	for (size_t k = 0; g && k < g->nsampled; k++)
		if (!strcmp(g->sampled[k].label, label))
			s = &g->sampled[k];
	while (s && col < g->nev && strcmp(g->ev[col].label, label))
		col++;
	if (!s || col == g->nev || !s->samples || !(order = calloc(g->nfns + 1, sizeof(*order))))
		return NULL;
	for (size_t i = 0; i < g->nfns; i++)
		order[i] = &g->fns[i];
	sort_col = col;
	qsort(order, g->nfns, sizeof(*order), by_col_samples);
	rows = json_array();
	for (size_t i = 0; i < g->nfns && i < max && order[i]->samples[col]; i++)
		json_array_append_new(rows, json_pack("{s:s, s:s, s:I, s:f, s:f}", "function",
						      order[i]->name, "object", order[i]->object,
						      "samples", (json_int_t)order[i]->samples[col],
						      "share",
						      (double)order[i]->samples[col] / (double)s->samples,
						      "estimate", order[i]->cost[col]));
	free(order);
	return rows;
}

/* The text a failed check on (region g, column col) gets; calls: a
 * uprobe's, whose samples name its callers. */
static char *explain(const struct pmc__region_rec *g, size_t col, bool calls)
{
	const struct pmc__sampled_rec *s = NULL;
	json_t *top, *row;
	char *text = NULL;
	size_t cap = 0, i;
	double asked;
	FILE *f;

	for (size_t k = 0; k < g->nsampled; k++)
		if (!strcmp(g->sampled[k].label, g->ev[col].label))
			s = &g->sampled[k];
	if (!s || !(f = open_memstream(&text, &cap)))
		return NULL;
	if (calls && s->period == 1)
		fprintf(f, " Its callers (perf sampling of the uprobe at every call, the return address each call left on the stack, exact: %" PRIu64 " call%s over %" PRIu64 " execution%s",
			s->samples, s->samples == 1 ? "" : "s", s->executions,
			s->executions == 1 ? "" : "s");
	else if (calls)
		fprintf(f, " Its callers (perf sampling of the uprobe, the return address one call in %" PRIu64 " left on the stack, statistical: %" PRIu64 " sample%s over %" PRIu64 " execution%s",
			s->period, s->samples, s->samples == 1 ? "" : "s", s->executions,
			s->executions == 1 ? "" : "s");
	else if (s->period == 1)
		fprintf(f, " Where the samples fell (perf sampling, every event sampled, exact: %" PRIu64 " sample%s of %s over %" PRIu64 " execution%s",
			s->samples, s->samples == 1 ? "" : "s", s->label, s->executions,
			s->executions == 1 ? "" : "s");
	else
		fprintf(f, " Where the samples fell (perf sampling, statistical: %" PRIu64 " sample%s of %s, one every %" PRIu64 ", over %" PRIu64 " execution%s",
			s->samples, s->samples == 1 ? "" : "s", s->label, s->period, s->executions,
			s->executions == 1 ? "" : "s");
	if (s->lost)
		fprintf(f, calls ? "; %" PRIu64 " lost or without a readable stack" : "; %" PRIu64 " lost",
			s->lost);
	/* Fewer than a third of what the period asks for: say so. */
	asked = g->ev[col].mean * (double)s->executions / (double)s->period;
	if (s->period > 1 && (double)(s->samples + s->lost) < asked / 3)
		fprintf(f, "; the PMU delivered %" PRIu64 " of the ~%.0f the period asks for, its overflow interrupts late or throttled, so the shares are coarser",
			s->samples, asked);
	fprintf(f, ")");
	top = pmc__sampled_rows_json(g, s->label, 3);
	if (!json_array_size(top))
		fprintf(f, ": none in the region's executions (too short for the period; the estimate needs more work per region)");
	json_array_foreach(top, i, row) {
		char est[48];

		pmc__fmt_num(est, sizeof(est), json_number_value(json_object_get(row, "estimate")));
		const char *fn = pmc__jstr(row, "function");

		/* An address names its object, or it says nothing. */
		fprintf(f, "%s %s%s%s %" JSON_INTEGER_FORMAT " (%.0f%%, ~%s per execution)",
			i ? ";" : ":", fn, strncmp(fn, "0x", 2) ? "" : " in ",
			strncmp(fn, "0x", 2) ? "" : pmc__file_part(pmc__jstr(row, "object")),
			json_integer_value(json_object_get(row, "samples")),
			100.0 * json_number_value(json_object_get(row, "share")), est);
	}
	json_decref(top);
	fputc('.', f);
	fclose(f);
	return text;
}

void pmc__sampling_adopt(struct pmc__result *r, struct pmc__result *sampled, double seconds)
{
	char **notes;

	/* The re-run's rows go to the result's regions of the same name. */
	for (size_t i = 0; i < sampled->nregions; i++) {
		struct pmc__region_rec *from = &sampled->regions[i], *to = NULL;

		for (size_t j = 0; j < r->nregions && !to; j++)
			if (!strcmp(r->regions[j].name, from->name) &&
			    r->regions[j].nev == from->nev && !r->regions[j].nfns)
				to = &r->regions[j];
		if (!to || !from->nsampled)
			continue;
		to->fns = from->fns;
		to->nfns = from->nfns;
		to->sampled = from->sampled;
		to->nsampled = from->nsampled;
		from->fns = NULL;
		from->sampled = NULL;
		from->nfns = from->nsampled = 0;
	}
	for (size_t c = 0; c < r->nchecks; c++) {
		struct pmc__check_rec *cr = &r->checks[c];
		const struct pmc__region_rec *g = pmc__result_region(r, cr->region);
		const struct pmc__event_rec *e = pmc__result_event(r, cr->event);
		char *why = NULL;

		if (cr->status != PMC__CHECK_FAIL || !g || !e || !g->nsampled)
			continue;
		bool calls = e->kind && !strcmp(e->kind, "uprobe");
		char *against = calls ? pmc__explain_callers(r, cr, g, e->label) : NULL;

		for (size_t j = 0; j < g->nev && !why; j++)
			if (!strcmp(g->ev[j].label, e->label))
				why = explain(g, j, calls);
		if (why)
			pmc__check_explain(r, cr, why);
		/* The callers that moved since calibration, where it kept
		 * them (sim calibration, beside the calls: budget). */
		if (against)
			pmc__check_explain(r, cr, against);
		free(why);
		free(against);
	}
	/* What the re-run could not sample, and how it ended if not as a run. */
	notes = realloc(r->notes, (r->nnotes + sampled->nnotes + 2) * sizeof(*r->notes));
	if (!notes)
		return;
	r->notes = notes;
	for (size_t i = 0; i < sampled->nnotes; i++)
		if (!strncmp(sampled->notes[i], "sampling:", 9) &&
		    (r->notes[r->nnotes] = strdup(sampled->notes[i])))
			r->nnotes++;
	if ((sampled->verdict == PMC_ERROR || sampled->verdict == PMC_SKIP
		     ? asprintf(&r->notes[r->nnotes], "sampling: the re-run for attribution ended %s: %s",
				sampled->verdict == PMC_ERROR ? "in error" : "skipped",
				sampled->reason ? sampled->reason : "no reason given")
		     : asprintf(&r->notes[r->nnotes],
				"sampling: the case was run once more with its failing events sampled, for attribution (%.3g s); its counts are not judged",
				seconds)) >= 0)
		r->nnotes++;
	r->notes[r->nnotes] = NULL;
}
