/* SPDX-License-Identifier: MIT */
/*
 * The case's result record: everything the reports, calibration and
 * comparison need, built from a finished case here and nowhere else.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness_int.h"

/* "Ir", "D1mr+D1mw": the columns the sim backend counts the event with
 * (from its spec: nothing downstream parses the name again), or NULL. */
static char *sim_columns(const struct pmc_event_spec *s)
{
	char buf[128];
	size_t used = 0;
	unsigned mask;

	if (pmc_sim_columns(s, &mask, NULL) != 0 || !mask)
		return NULL;
	buf[0] = '\0';
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS && used < sizeof(buf); c++)
		if (mask & (1u << c))
			used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s%s",
						 used ? "+" : "", pmc_sim_column_name(c));
	return strdup(buf);
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* The case's result record: everything the reports, calibration and
 * comparison need, built here and nowhere else. */
int pmc__result_record(struct pmc_test *t, struct pmc__result *r)
{
	char name[256], desc[1024];
	size_t i, j, k;

	memset(r, 0, sizeof(*r));
	pmc__full_name(t->def, name, sizeof(name));
	r->name = strdup(name);
	r->suite = strdup(t->def->suite);
	r->test = strdup(t->def->name);
	r->file = strdup(t->def->file);
	r->line = t->def->line;
	r->verdict = t->verdict;
	r->backend = t->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	r->has_options = true;
	r->reps = t->opt.reps;
	r->warmup = t->opt.warmup;
	r->stat = t->opt.stat;
	/* A case that counts events (a conformance case need not): the
	 * guard fails only when every selected measuring case was skipped. */
	r->measuring = t->nev > 0 || (t->def->opt.events && *t->def->opt.events) ||
		       /* ended before a setup that may add events: assume so */
		       (t->def->opt.fixture && t->def->opt.fixture->setup && !t->setup_done);
	r->reason = dup_or_null(t->reason);
	r->known_issue = dup_or_null(t->known_issue);
	r->events = calloc(t->nev + 1, sizeof(*r->events));
	r->regions = calloc(t->nregions + 1, sizeof(*r->regions));
	r->checks = calloc(t->nexpect + 1, sizeof(*r->checks));
	r->notes = calloc(t->nnotes + 1, sizeof(*r->notes));
	if (!r->name || !r->suite || !r->test || !r->file || !r->events || !r->regions ||
	    !r->checks || !r->notes)
		goto oom;
	for (i = 0; i < t->nev; i++) {
		struct pmc__event_rec *e = &r->events[r->nevents++];

		e->label = strdup(t->label[i]);
		e->name = strdup(t->spec[i].name);
		e->kind = strdup(pmc_event_kind_name(t->spec[i].kind));
		e->sim_columns = sim_columns(&t->spec[i]);
		e->group = t->set ? pmc_counters_group_of(t->set, i) : -1;
		e->hardware = t->spec[i].uses_hw_counter;
		e->has_overhead = t->set != NULL;
		e->overhead = (t->hot.core.fast ? &t->hot.overhead : &t->overhead_general)->d[i].value;
		if (!e->label || !e->name || !e->kind)
			goto oom;
	}
	if (t->set) {
		enum pmc_read_path path = pmc_counters_path(t->set);

		pmc_counters_describe(t->set, desc, sizeof(desc));
		r->grouping = strdup(desc);
		r->read_path = strdup(path == PMC_PATH_USER ? "user" : path == PMC_PATH_SIM ? "sim" : "read");
		if (t->backend == PMC_BACKEND_SIM) {
			char key[PMC_HWDB_KEY_MAX];

			pmc__sim_profile_key(t->def, key, sizeof(key));
			r->sim_profile = strdup(key);
			/* The CPU valgrind shows the program: synthetic, not the
			 * host's (the run's environment names the host). */
			if (pmc_sim_active()) {
				struct pmc_cpu_id cpu;

				pmc_cpu_identify(&cpu);
				r->simulated_cpu = strdup(cpu.signature);
			}
		}
	}
	for (i = 0; i < t->nregions; i++) {
		struct pmc__region *g = &t->region[i];
		struct pmc__region_rec *gr = &r->regions[r->nregions++];

		gr->name = strdup(g->name);
		gr->iterations = g->iterations;
		gr->samples = g->n;
		gr->ev = calloc(g->nev + 1, sizeof(*gr->ev));
		if (!gr->name || !gr->ev)
			goto oom;
		for (j = 0; j < g->nev; j++) {
			struct pmc__stat_rec *st = &gr->ev[gr->nev++];
			/* The statistics the judging used, not computed again. */
			const struct pmc__stats s = *pmc__region_stats(g, j);
			st->label = strdup(t->label[j]);
			st->n = s.n;
			st->min = s.min;
			st->max = s.max;
			st->median = s.median;
			st->mean = s.mean;
			st->multiplexed = s.multiplexed;
			st->not_counted = s.not_counted;
			st->other_threads = s.other_threads;
			st->values = calloc(g->n + 1, sizeof(*st->values));
			if (!st->label || !st->values)
				goto oom;
			for (k = 0; k < g->n; k++)
				st->values[st->nvalues++] = g->value[k * g->nev + j];
		}
	}
	for (i = 0; i < t->nexpect; i++) {
		struct pmc__check *c = &t->check[i];
		struct pmc__check_rec *cr;

		if (!c->message[0])
			continue; /* not judged: the case ended before */
		cr = &r->checks[r->nchecks++];
		cr->kind = c->e.kind;
		cr->status = c->status;
		cr->region = strdup(c->e.region);
		cr->event = strdup(c->e.event);
		cr->per = c->e.per ? strdup(c->e.per) : NULL;
		cr->file = strdup(c->e.file);
		cr->line = c->e.line;
		cr->message = strdup(c->message);
		cr->measured = c->measured;
		cr->lo = c->bound_lo;
		cr->hi = c->bound_hi;
		cr->has_statistic = c->stat != NULL;
		cr->statistic = c->stat && !strcmp(c->stat, "median") ? PMC_STAT_MEDIAN
				: c->stat && !strcmp(c->stat, "max")  ? PMC_STAT_MAX
								      : PMC_STAT_MIN;
		cr->samples = c->samples;
		cr->budget_source = dup_or_null(c->budget_source);
		cr->gate = c->gate;
		if (!cr->region || !cr->event || !cr->file || !cr->message)
			goto oom;
	}
	for (i = 0; i < t->nnotes; i++)
		if (!(r->notes[r->nnotes++] = strdup(t->notes[i])))
			goto oom;
	return 0;
oom:
	pmc__result_release(r);
	return -ENOMEM;
}

