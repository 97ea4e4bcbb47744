/* SPDX-License-Identifier: MIT */
/*
 * The harness's regions: PMC_REGION's general path (its inline path is in
 * harness.h), sample storage, raw rows settled, the overhead of each path
 * measured, and pmc_test_last().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>
#include <unistd.h>

#include "harness_int.h"
#include "sim/sim_harness.h"

struct pmc__region *pmc__region_named(struct pmc_test *t, const char *name)
{
	size_t i;

	for (i = 0; i < t->nregions; i++)
		if (t->region[i].name == name)
			return &t->region[i];
	for (i = 0; i < t->nregions; i++)
		if (!strcmp(t->region[i].name, name))
			return &t->region[i];
	return NULL;
}

/*
 * Page faults of the children this process has reaped (getrusage(2),
 * RUSAGE_CHILDREN): every process faults at least once, so a change
 * across a region says a child (fork, posix_spawn, system) ran and was
 * waited for inside it.  valgrind runs a forked child in a process of
 * its own, whose work pmcheck's valgrind tool adds to inherited readings,
 * and a program a child exec'd not at all (--trace-children=no).
 */
static long children_faults(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_CHILDREN, &ru) ? -1 : ru.ru_minflt + ru.ru_majflt;
}

/* sim: did the engine add every child that ended in the region?  With
 * .inherit, pmcheck's valgrind tool adds a forked child's work (valgrind
 * follows the fork), but not a program a child exec'd. */
static bool children_counted(struct pmc_test *t)
{
	uint64_t ended, execed;

	return t->children_added == 0 && pmc_sim_children(&ended, &execed) == 0 &&
	       ended > t->children_ended0 && execed == t->children_execed0;
}

static void children_note(struct pmc_test *t, const char *region)
{
	uint64_t ended, execed;

	if (!t->opt.inherit)
		pmc_test_note(t, "region \"%s\": a child process (fork, posix_spawn, system) ran and ended inside it, and without .inherit = 1 the case counts this process only: its samples are partial (INCONCLUSIVE); set .inherit = 1 to count a forked child, or start and reap the child outside the region",
			      region);
	else if (t->children_added == 0 && pmc_sim_children(&ended, &execed) == 0 &&
		 execed != t->children_execed0)
		pmc_test_note(t, "region \"%s\": a child process exec'd a program (exec, posix_spawn, system) inside it, which valgrind does not follow, so that program's work is counted nowhere on sim: its samples are partial (INCONCLUSIVE); count it on perf with .inherit = 1, or run the program outside the region",
			      region);
	else
		pmc_test_note(t, "region \"%s\": a child process ran and ended inside it, and %s adds no child's work: its samples are partial (INCONCLUSIVE); count it with pmcheck's valgrind tool (--sim-engine=pmcheck or auto), or on perf",
			      region, pmc_sim_engine() ? pmc_sim_engine() : "this engine");
}

static struct pmc__region *open_region(const struct pmc_test *t)
{
	return t->hot.open ? t->hot.open : t->hot.inline_open;
}

/* May PMC_REGION's inline path take the next region?  Recording, a set of
 * one kernel group, and nobody else to watch (harness.h). */
static bool inline_allowed(const struct pmc_test *t)
{
	return t->hot.recording && t->hot.one_group && !t->sampling &&
	       (!t->hot.watch_threads || pmc__one_thread());
}

/*
 * Make region `name` before its first execution, with room for the sim
 * attribution's dumps: a case whose one measured repetition is its first
 * (the Google Benchmark adapter's: no warm-up) would otherwise learn of
 * the region only after that execution, too late to keep its functions.
 */
/* Region `name` of the case, made the first time. */
static struct pmc__region *region_of(struct pmc_test *t, const char *name)
{
	struct pmc__region *r = pmc__region_named(t, name);

	if (!r) {
		if (t->nregions >= PMC__MAX_REGIONS)
			pmc_test_error(t, "more than %d regions in one case", PMC__MAX_REGIONS);
		r = &t->region[t->nregions++];
		r->name = name;
		r->nev = t->nev;
		r->iterations = 1;
	}
	return r;
}

void pmc__region_prepare(struct pmc_test *t, const char *name)
{
	struct pmc__region *r = region_of(t, name);

	if (t->backend == PMC_BACKEND_SIM && !r->attr)
		r->attr = calloc(1, sizeof(*r->attr));
}

int pmc_test_region_begin_n(struct pmc_test *t, const char *name, uint64_t iterations)
{
	struct pmc__region *r;
	int rc;

	/* A count of 0 or less is no work to divide by: taken as 1 it would
	 * report the whole region as one iteration's figure.  A negative int
	 * arrives here as a uint64_t above 2^63. */
	if (iterations == 0 || iterations > INT64_MAX)
		pmc_test_error(t, "region \"%s\": PMC_REGION_N's iteration count is %" PRId64 ": give the number of iterations the block performs, 1 or more (PMC_REGION for a block that is one unit of work)",
			       name, (int64_t)iterations);
	if (open_region(t))
		pmc_test_error(t, "region \"%s\" begun while region \"%s\" is still open: a PMC_REGION block was left with break, return or goto, or regions were nested",
			       name, open_region(t)->name);
	if (t->measuring_overhead) {
		r = &t->scratch;
	} else {
		r = region_of(t, name);
		r->iterations = iterations;
		if (!t->hot.recording)
			r->warm++;
		else
			t->hot.general++;
	}
	if (!t->set)
		pmc_test_error(t, "region \"%s\": the case counts no events (set .events, or add events in the fixture's setup)", name);
	if (t->hot.last)
		t->hot.last->next = r;
	else
		t->hot.first = r;
	t->hot.open = t->hot.last = r;
	t->hot.expect = NULL;
	/* Outside the counted window.  A process that never created a thread
	 * (glibc's __libc_single_threaded) needs no clocks; otherwise the
	 * thread clock is read first, so that end - begin of the process
	 * clock exceeds the thread clock's only by other threads' time. */
	t->threaded_at_begin = !pmc__one_thread();
	if (t->hot.watch_threads && t->threaded_at_begin && !t->measuring_overhead) {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t->thread_cpu0);
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t->process_cpu0);
	}
	/* The tool gathers the functions of the executions kept for
	 * attribution only (keep_dump). */
	if (t->backend == PMC_BACKEND_SIM)
		pmc_sim_keep_next(!t->measuring_overhead && t->hot.recording && r->attr &&
				  r->attr->n < PMC__ATTR_DUMPS);
	if (t->backend == PMC_BACKEND_SIM && !t->measuring_overhead) {
		t->children_minflt0 = children_faults();
		t->children_added = t->opt.inherit ? pmc_sim_children(&t->children_ended0,
								      &t->children_execed0)
						   : -1;
	}
	if (t->sampling)
		pmc__sampling_begin(t, r);
	t->paused = false;
	t->npaused = 0;
	rc = pmc_region_begin(&t->hot.core);
	if (rc)
		pmc__test_read_failed(t, rc);
	return 1;
}

int pmc_test_region_begin(struct pmc_test *t, const char *name)
{
	return pmc_test_region_begin_n(t, name, 1);
}

void pmc__test_read_failed(struct pmc_test *t, int rc)
{
	const char *why = t->backend == PMC_BACKEND_SIM ? pmc_sim_read_error() : NULL;

	pmc_test_error(t, "region \"%s\": reading the counters failed: %s",
		       open_region(t) ? open_region(t)->name : "?", why ? why : pmc_strerror(rc));
}

struct pmc_counters *pmc_test_counters(struct pmc_test *t)
{
	return t ? t->set : NULL;
}

size_t pmc_test_general_samples(const struct pmc_test *t)
{
	return t ? t->hot.general : 0;
}

/* Did other threads of the process run since the region began?  Threads
 * created inside the region did (the process is no longer single-threaded);
 * for threads that existed, the process CPU clock advanced beyond this
 * thread's.  Limits (docs/threads.md): another thread running in parallel is seen
 * once the kernel has accounted its runtime (at least every scheduler
 * tick), and child processes are not seen at all. */
static bool other_threads_ran(struct pmc_test *t)
{
	struct timespec p1, t1;
	int64_t process_ns, thread_ns;

	if (!t->threaded_at_begin)
		return !pmc__one_thread();
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &p1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	process_ns = (int64_t)(p1.tv_sec - t->process_cpu0.tv_sec) * 1000000000 +
		     (p1.tv_nsec - t->process_cpu0.tv_nsec);
	thread_ns = (int64_t)(t1.tv_sec - t->thread_cpu0.tv_sec) * 1000000000 +
		    (t1.tv_nsec - t->thread_cpu0.tv_nsec);
	return process_ns > thread_ns;
}

/* sim: the dump that closed this execution, for attribution (the first
 * few measured executions' only: files on disk, parsed for the record).
 * Nothing is allocated here: the heap is the measured code's too (expat's
 * instruction counts moved by up to 117 when this called strdup). */
static void keep_dump(struct pmc__region *r)
{
	if (r->attr)
		pmc_sim_keep_dump(r->attr->dump[0], sizeof(r->attr->dump[0]), &r->attr->n,
				  PMC__ATTR_DUMPS);
}

int pmc_test_region_end(struct pmc_test *t)
{
	struct pmc_measurement m;
	struct pmc__region *r = open_region(t);
	bool others;
	int rc;

	if (!r)
		pmc_test_error(t, "pmc_test_region_end without pmc_test_region_begin");
	if (t->hot.inline_open) /* begun by PMC_REGION inline: one thread then */
		t->threaded_at_begin = false;
	rc = pmc_region_end(&t->hot.core, &m);
	if (t->backend == PMC_BACKEND_SIM)
		pmc_sim_keep_next(0);
	if (t->sampling)
		pmc__sampling_end(t);
	others = t->hot.watch_threads && !t->measuring_overhead && other_threads_ran(t);
	if (t->backend == PMC_BACKEND_SIM && !t->measuring_overhead &&
	    children_faults() != t->children_minflt0 && !children_counted(t)) {
		others = true;
		if (!t->children_noted) {
			t->children_noted = true;
			children_note(t, r->name);
		}
	}
	if (rc)
		pmc__test_read_failed(t, rc);
	if (t->paused)
		pmc_test_error(t, "region \"%s\" ended while paused (pmc__test_region_pause without a resume)",
			       r->name);
	if (t->npaused)
		pmc_measurement_subtract(&m, &t->paused_sum);
	if (t->hot.recording) {
		pmc_measurement_subtract(&m, &t->overhead_general);
		for (size_t i = 0; others && i < m.n; i++)
			m.d[i].flags |= PMC_DELTA_OTHER_THREADS;
		pmc__region_settle(r, &t->hot.overhead); /* raw rows before it */
		if (pmc__region_append(r, &m))
			pmc_test_error(t, "out of memory storing samples of region \"%s\"", r->name);
		if (t->backend == PMC_BACKEND_SIM && !t->measuring_overhead)
			keep_dump(r);
	}
	t->hot.open = t->hot.inline_open = NULL;
	t->hot.expect = inline_allowed(t) ? r->next : NULL;
	return 0;
}

/*
 * Leave work out of the open region's sample: from a pause to the resume
 * that follows, the counters are read at both ends and what they counted
 * between is subtracted when the region ends (Google Benchmark's
 * PauseTiming/ResumeTiming inside a timed loop).  The reads are the
 * region's own out-of-line ones, so each pause adds to the sample only
 * the few instructions of these two functions outside their reads: the
 * same on every run, so an exact count stays exact.  Open on the general
 * path only (the inline path's sample has no room for a pause).
 */
void pmc__test_region_pause(struct pmc_test *t)
{
	int rc;

	if (!t->hot.open)
		pmc_test_error(t, "a region was paused while none was open on the general path");
	if (t->paused)
		pmc_test_error(t, "region \"%s\" paused twice without a resume", t->hot.open->name);
	t->paused = true;
	/* sim: the span from here to the resume is not the region's work, so
	 * its functions are not kept (the last span's are, keep_dump). */
	if (t->backend == PMC_BACKEND_SIM)
		pmc_sim_keep_next(0);
	PMC_BARRIER();
	rc = pmc__region_read(&t->hot.core, &t->pause_at);
	PMC_BARRIER();
	if (rc)
		pmc__test_read_failed(t, rc);
}

void pmc__test_region_resume(struct pmc_test *t)
{
	struct pmc_reading now;
	struct pmc_measurement d;
	int rc;

	if (!t->hot.open || !t->paused)
		pmc_test_error(t, "a region was resumed that was not paused");
	if (t->backend == PMC_BACKEND_SIM)
		pmc_sim_keep_next(t->hot.recording && t->hot.open->attr &&
				  t->hot.open->attr->n < PMC__ATTR_DUMPS);
	PMC_BARRIER();
	rc = pmc__region_read(&t->hot.core, &now);
	PMC_BARRIER();
	if (rc)
		pmc__test_read_failed(t, rc);
	t->paused = false;
	pmc_measurement_from(&d, &t->pause_at, &now);
	if (t->npaused++ == 0) {
		t->paused_sum = d;
		return;
	}
	for (size_t i = 0; i < d.n && i < t->paused_sum.n; i++)
		t->paused_sum.d[i].value += d.d[i].value;
	for (size_t k = 0; d.nparts == t->paused_sum.nparts && k < d.nparts; k++)
		t->paused_sum.part[k].value += d.part[k].value;
}

/* The smallest of each column of the scratch samples into *o. */
static void scratch_minimum(struct pmc_test *t, struct pmc_measurement *o)
{
	struct pmc__region *s = &t->scratch;

	pmc__region_settle(s, &t->hot.overhead); /* zero while measuring */
	for (size_t i = 0; i < t->nev; i++) {
		uint64_t min = UINT64_MAX;

		for (size_t k = 0; k < s->n; k++)
			min = s->value[k * s->nev + i] < min ? s->value[k * s->nev + i] : min;
		o->d[i].value = s->n ? min : 0;
	}
	/* Reused from row 0: raw rows expect zeroed flags. */
	if (s->flags)
		memset(s->flags, 0, s->cap * s->nev * sizeof(*s->flags));
	s->n = s->settled = 0;
}

/*
 * The counts the measurement itself adds to every sample: the smallest
 * per event over PMC__OVERHEAD_TRIES empty regions (PMC__OVERHEAD_TRIES_SIM on
 * the simulator), for each of the two
 * paths a region can take (PMC_REGION's inline one, and the general
 * functions), since the code inside the counted window differs.  Each
 * sample has its own path's overhead subtracted.
 */
void pmc__measure_overhead(struct pmc_test *t)
{
	struct pmc__region *s = &t->scratch;
	/* Simulated counts repeat: a few tries find the same smallest, and
	 * every try is two dumps of callgrind's counters. */
	size_t tries = t->backend == PMC_BACKEND_SIM ? PMC__OVERHEAD_TRIES_SIM : PMC__OVERHEAD_TRIES;

	memset(&t->hot.overhead, 0, sizeof(t->hot.overhead));
	memset(&t->overhead_general, 0, sizeof(t->overhead_general));
	t->hot.overhead.n = t->overhead_general.n = t->nev;
	if (!t->set)
		return;
	s->name = "(overhead)";
	s->nev = t->nev;
	s->iterations = 1;
	s->next = s;
	if (pmc__region_reserve(s, tries))
		pmc_test_error(t, "out of memory measuring the overhead");
	t->measuring_overhead = true;
	t->hot.recording = 1;
	/* Through PMC_REGION both times, as the cases call it: the general
	 * path with the inline one held off, then the inline one. */
	for (size_t k = 0; k < tries; k++) {
		t->hot.expect = NULL;
		PMC_REGION(t, s->name) {
		}
	}
	scratch_minimum(t, &t->overhead_general);
	if (inline_allowed(t)) {
		s->next = s;
		t->hot.expect = s;
		for (size_t k = 0; k < tries; k++) {
			PMC_REGION(t, s->name) {
			}
		}
		scratch_minimum(t, &t->hot.overhead);
	}
	t->hot.recording = 0;
	t->hot.first = t->hot.last = t->hot.expect = NULL;
	t->measuring_overhead = false;
}

void pmc__settle_all(struct pmc_test *t)
{
	for (size_t i = 0; i < t->nregions; i++)
		pmc__region_settle(&t->region[i], &t->hot.overhead);
}

/* Room for every measured sample of the regions seen so far: the warm-up
 * ran each region `warm` times over opt.warmup repetitions, or (no
 * warm-up) the first measured repetition ran it n times. */
void pmc__reserve_samples(struct pmc_test *t)
{
	for (size_t i = 0; i < t->nregions; i++) {
		struct pmc__region *r = &t->region[i];
		size_t per_rep = t->opt.warmup ? (r->warm + t->opt.warmup - 1) / t->opt.warmup : r->n;

		if (per_rep && pmc__region_reserve(r, r->n + per_rep * t->opt.reps))
			pmc_test_error(t, "out of memory reserving samples of region \"%s\"", r->name);
		/* sim: room for the attribution's dump paths, with the samples'. */
		if (t->backend == PMC_BACKEND_SIM && !r->attr)
			r->attr = calloc(1, sizeof(*r->attr));
	}
}

uint64_t pmc_test_last(struct pmc_test *t, const char *region, const char *event)
{
	struct pmc__region *r = pmc__region_named(t, region);
	int ev = pmc__column_of(t, event);
	const uint64_t *last;
	const unsigned *flags;

	if (r)
		pmc__region_settle(r, &t->hot.overhead);
	if (ev < 0)
		pmc_test_error(t, "pmc_test_last: the case counts no event \"%s\"", event);
	if (!r || !(last = pmc__region_last(r, &flags)))
		pmc_test_error(t, "pmc_test_last: region \"%s\" has no sample yet (warm-up runs keep none)",
			       region);
	if (flags[ev] & (PMC_DELTA_MULTIPLEXED | PMC_DELTA_NOT_COUNTED | PMC_DELTA_OTHER_THREADS))
		pmc_test_skip(t, "region \"%s\", %s: the last sample was multiplexed, never counted, or missed other threads (set .inherit = 1); its value is partial",
			      region, event);
	return last[ev];
}

/* Before each repetition's body: record from the first measured one on,
 * start the inline path over at the region that came first last time, and
 * make room for the samples once the warm-up has shown how many. */
/* Ratio expectations declared so far: their regions track the ratios
 * sample by sample through the folds (stats.c), since a ratio of two
 * summaries is not the ratio of the samples. */
static void want_ratios(struct pmc_test *t)
{
	for (size_t i = 0; i < t->nexpect; i++) {
		const struct pmc_expectation *e = &t->check[i].e;
		struct pmc__region *r;
		int ev, per;

		if (e->kind != PMC_EXPECT_KIND_RATIO_LE && e->kind != PMC_EXPECT_KIND_RATIO_GE &&
		    e->kind != PMC_EXPECT_KIND_RATIO_RANGE)
			continue;
		r = pmc__region_named(t, e->region);
		ev = pmc__column_of(t, e->event);
		per = e->per ? pmc__column_of(t, e->per) : -1;
		if (r && ev >= 0 && per >= 0 &&
		    pmc__region_want_ratio(r, (size_t)ev, (size_t)per) == -ENOMEM)
			pmc_test_error(t, "out of memory tracking a ratio of region \"%s\"", r->name);
	}
}

void pmc__repetition_begin(struct pmc_test *t)
{
	want_ratios(t);
	t->hot.recording = t->rep >= 0;
	t->hot.last = NULL;
	t->hot.expect = inline_allowed(t) ? t->hot.first : NULL;
	if (t->rep == 0 || (t->rep == 1 && t->opt.warmup == 0))
		pmc__reserve_samples(t);
}

/* After it: every row final, and no region left open. */
void pmc__repetition_end(struct pmc_test *t)
{
	pmc__settle_all(t);
	if (open_region(t))
		pmc_test_error(t, "region \"%s\" was not closed: a PMC_REGION block was left with break, return or goto",
			       open_region(t)->name);
}
