/* SPDX-License-Identifier: MIT */
/*
 * Running one case in the calling process: requirements, events, fixture,
 * overhead, repetitions, regions, expectations, and the result object.
 * Immediate endings (skip, fail, error, failed check) longjmp back here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness_int.h"

static const struct pmc_budget_source *budget_source;
const char *pmc__program;

/* Bounded copy (labels and names are cut at their buffer's size). */
static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memmove(dst, src, n);
	dst[n] = '\0';
}

void pmc_harness_set_budget_source(const struct pmc_budget_source *src)
{
	budget_source = src;
}

const struct pmc_budget_source *pmc__budget_source(void)
{
	return budget_source;
}

const char *pmc_verdict_name(enum pmc_verdict v)
{
	static const char *const names[] = { "PASS", "SKIP", "KNOWN-ISSUE", "INCONCLUSIVE",
					     "FAIL", "ERROR" };

	return (unsigned)v <= PMC_ERROR ? names[v] : "?";
}

void pmc__effective_options(const struct pmc_test_def *def, unsigned reps, double timeout,
			    struct pmc_test_options *out)
{
	*out = def->opt;
	if (!out->reps)
		out->reps = PMC__DEFAULT_REPS;
	if (out->no_warmup)
		out->warmup = 0;
	else if (!out->warmup)
		out->warmup = PMC__DEFAULT_WARMUP;
	if (!(out->timeout > 0))
		out->timeout = PMC__DEFAULT_TIMEOUT;
	if (reps)
		out->reps = reps;
	if (timeout > 0)
		out->timeout = timeout;
	if (!out->events)
		out->events = "";
}

bool pmc__case_is_hardware(const struct pmc_test_def *def)
{
	struct pmc_event_spec *specs;
	size_t n = 0, i;
	bool hw = false;

	if (def->opt.requires & (PMC_REQ_HW_PMU | PMC_REQ_USER_READ))
		return true;
	if (!def->opt.events || !*def->opt.events)
		return false;
	specs = calloc(PMC_MAX_EVENTS, sizeof(*specs));
	if (!specs)
		return false;
	if (pmc_event_parse_list(def->opt.events, specs, PMC_MAX_EVENTS, &n, NULL) == 0)
		for (i = 0; i < n; i++)
			hw = hw || specs[i].uses_hw_counter;
	free(specs);
	return hw;
}

bool pmc__case_runs_on_sim(const struct pmc_test_def *def)
{
	struct pmc_event_spec *specs;
	size_t n = 0, i;
	bool ok;

	if (def->opt.backends && !(def->opt.backends & PMC_BACKEND_SIM))
		return false;
	if (def->opt.requires & (PMC_REQ_USER_READ | PMC_REQ_BREAKPOINT | PMC_REQ_UPROBE))
		return false;
	/* Events added by a fixture at run time are unknown here: such a case
	 * is a sim case only when it says so. */
	if (!def->opt.events || !*def->opt.events)
		return def->opt.backends & PMC_BACKEND_SIM;
	specs = calloc(PMC_MAX_EVENTS, sizeof(*specs));
	if (!specs)
		return false;
	ok = pmc_event_parse_list(def->opt.events, specs, PMC_MAX_EVENTS, &n, NULL) == 0;
	for (i = 0; ok && i < n; i++) {
		unsigned mask;

		ok = pmc_sim_columns(&specs[i], &mask, NULL) == 0;
	}
	free(specs);
	return ok;
}

/* ---- immediate endings --------------------------------------------------------- */

static __attribute__((noreturn)) void end_case(struct pmc_test *t, enum pmc_verdict v,
					       const char *prefix, const char *fmt, va_list ap)
{
	size_t len;

	snprintf(t->reason, sizeof(t->reason), "%s", prefix);
	len = strlen(t->reason);
	vsnprintf(t->reason + len, sizeof(t->reason) - len, fmt, ap);
	t->verdict = v;
	if (!t->jump_armed) {
		/* Called outside a running case (a bug in the caller): there is
		 * nowhere to return to. */
		fprintf(stderr, "pmcheck: %s outside a running case: %s\n", pmc_verdict_name(v),
			t->reason);
		abort();
	}
	longjmp(t->jump, 1);
}

void pmc_test_skip(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_SKIP, "", fmt, ap);
}

void pmc_test_fail(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_FAIL, "", fmt, ap);
}

void pmc_test_error(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_ERROR, "", fmt, ap);
}

void pmc__check_failed(struct pmc_test *t, const char *file, int line, const char *fmt, ...)
{
	char prefix[512];
	const char *base = strrchr(file, '/');
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s:%d: ", base ? base + 1 : file, line);
	va_start(ap, fmt);
	end_case(t, PMC_FAIL, prefix, fmt, ap);
}

void pmc_test_known_issue(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->known_issue, sizeof(t->known_issue), fmt, ap);
	va_end(ap);
}

void pmc_test_note(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nnotes >= PMC__MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(t->notes[t->nnotes++], sizeof(t->notes[0]), fmt, ap);
	va_end(ap);
}

void *pmc_test_data(struct pmc_test *t)
{
	return t->data;
}

int pmc_test_rep(const struct pmc_test *t)
{
	return t->rep;
}

enum pmc_backend pmc_test_backend(const struct pmc_test *t)
{
	return t->backend;
}

/* ---- events ---------------------------------------------------------------------- */

static void check_can_add(struct pmc_test *t, const char *what)
{
	if (t->opened)
		pmc_test_error(t, "%s: the counters are already open; add events from the fixture's setup", what);
	if (t->nev >= PMC_MAX_EVENTS)
		pmc_test_error(t, "%s: more than %d events in one case", what, PMC_MAX_EVENTS);
}

void pmc_test_add_event(struct pmc_test *t, const char *label, const char *event)
{
	struct pmc_error err;
	int rc;

	check_can_add(t, event);
	rc = pmc_event_parse(event, &t->spec[t->nev], &err);
	if (rc) {
		if (pmc_error_is_capability(rc))
			pmc_test_skip(t, "%s", err.message);
		pmc_test_error(t, "event \"%s\": %s", event, err.message);
	}
	copy_str(t->label[t->nev], sizeof(t->label[0]), label ? label : t->spec[t->nev].name);
	t->nev++;
}

void pmc_test_watch(struct pmc_test *t, const char *label, const void *addr, size_t len,
		    unsigned access)
{
	struct pmc_error err;

	check_can_add(t, label ? label : "breakpoint");
	if (pmc_event_breakpoint(&t->spec[t->nev], addr, len, access, &err))
		pmc_test_error(t, "breakpoint \"%s\": %s", label ? label : "?", err.message);
	copy_str(t->label[t->nev], sizeof(t->label[0]), label ? label : t->spec[t->nev].name);
	t->nev++;
}

static const char *missing_requirement(unsigned req, enum pmc_backend backend, char *buf,
				       size_t size)
{
	struct stat st;

	if (backend == PMC_BACKEND_SIM) {
		/* The simulator is the "hardware" here; what it cannot give: */
		if (req & PMC_REQ_USER_READ)
			return "needs user-space counter reads (rdpmc/mrs), which do not exist under simulation (--backend=perf on a machine with a PMU)";
		if (req & PMC_REQ_BREAKPOINT)
			return "needs breakpoint events, which the sim backend does not offer (valgrind runs translated code)";
		if (req & PMC_REQ_UPROBE)
			return "needs uprobe events, which the sim backend does not offer (valgrind runs translated code; a uprobe would never fire)";
		req &= ~(unsigned)(PMC_REQ_HW_PMU | PMC_REQ_USER_READ);
	}

	if ((req & PMC_REQ_ROOT) && geteuid() != 0) {
		snprintf(buf, size, "needs root (running as uid %d)", (int)geteuid());
		return buf;
	}
	if (req & (PMC_REQ_HW_PMU | PMC_REQ_USER_READ)) {
		char pmus[256];

		if (!pmc_machine_has_hw_pmu(pmus, sizeof(pmus))) {
			snprintf(buf, size, "needs a hardware PMU: this machine has only %s (use --backend=sim or the emulated-PMU lane)", pmus);
			return buf;
		}
	}
	if ((req & PMC_REQ_BREAKPOINT) && !pmc_machine_has_pmu("breakpoint")) {
		snprintf(buf, size, "needs the breakpoint PMU (CONFIG_HAVE_HW_BREAKPOINT)");
		return buf;
	}
	if ((req & PMC_REQ_UPROBE) && !pmc_machine_has_pmu("uprobe")) {
		snprintf(buf, size, "needs the uprobe PMU (CONFIG_UPROBE_EVENTS)");
		return buf;
	}
	if ((req & PMC_REQ_TRACEFS) && stat("/sys/kernel/tracing/events", &st) != 0 &&
	    stat("/sys/kernel/debug/tracing/events", &st) != 0) {
		snprintf(buf, size, "needs tracefs: not mounted (mount -t tracefs nodev /sys/kernel/tracing)");
		return buf;
	}
	return NULL;
}

static void open_counters(struct pmc_test *t)
{
	struct pmc_error err;
	int rc;

	t->opened = true;
	if (t->nev == 0)
		return;
	rc = pmc_counters_open(&t->set, t->spec, t->nev,
			       t->backend == PMC_BACKEND_SIM ? PMC_OPEN_SIM
			       : t->opt.inherit		       ? PMC_OPEN_INHERIT
								       : 0,
			       &err);
	if (rc) {
		if (pmc_error_is_capability(rc))
			pmc_test_skip(t, "%s", err.message);
		pmc_test_error(t, "%s", err.message);
	}
	rc = pmc_counters_enable(t->set);
	if (rc)
		pmc_test_error(t, "cannot enable the counters: %s", pmc_strerror(rc));
	pmc_region_init(&t->hot.core, t->set);
	/* Counting this thread only on the kernel: watch for the others. */
	t->hot.watch_threads = t->backend == PMC_BACKEND_PERF && !t->opt.inherit;
	if ((t->opt.requires & PMC_REQ_USER_READ) && pmc_counters_path(t->set) != PMC_PATH_USER)
		pmc_test_skip(t, "needs user-space counter reads (rdpmc/mrs): the kernel does not offer them for these events here (cap_user_rdpmc 0, or arm64 perf_user_access 0)");
}

/* ---- regions (hot path) ---------------------------------------------------------- */

static struct pmc__region *region_named(struct pmc_test *t, const char *name)
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

static struct pmc__region *open_region(const struct pmc_test *t)
{
	return t->hot.open ? t->hot.open : t->hot.inline_open;
}

/* May PMC_REGION's inline path take the next region?  Recording, a set
 * read inline from user space, and nobody else to watch (harness.h). */
static bool inline_allowed(const struct pmc_test *t)
{
	return t->hot.recording && t->hot.core.fast &&
	       (!t->hot.watch_threads || pmc__one_thread());
}

int pmc_test_region_begin_n(struct pmc_test *t, const char *name, uint64_t iterations)
{
	struct pmc__region *r;
	int rc;

	if (open_region(t))
		pmc_test_error(t, "region \"%s\" begun while region \"%s\" is still open: a PMC_REGION block was left with break, return or goto, or regions were nested",
			       name, open_region(t)->name);
	if (t->measuring_overhead) {
		r = &t->scratch;
	} else {
		r = region_named(t, name);
		if (!r) {
			if (t->nregions >= PMC__MAX_REGIONS)
				pmc_test_error(t, "more than %d regions in one case", PMC__MAX_REGIONS);
			r = &t->region[t->nregions++];
			r->name = name;
			r->nev = t->nev;
		}
		r->iterations = iterations ? iterations : 1;
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
	pmc_test_error(t, "region \"%s\": reading the counters failed: %s",
		       open_region(t) ? open_region(t)->name : "?", pmc_strerror(rc));
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
 * thread's.  Limits (README): another thread running in parallel is seen
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

int pmc_test_region_end(struct pmc_test *t)
{
	struct pmc_measurement *m = &t->hot.m;
	struct pmc__region *r = open_region(t);
	bool others;
	int rc;

	if (!r)
		pmc_test_error(t, "pmc_test_region_end without pmc_test_region_begin");
	if (t->hot.inline_open) /* begun by PMC_REGION inline: one thread then */
		t->threaded_at_begin = false;
	rc = pmc_region_end(&t->hot.core, m);
	others = t->hot.watch_threads && !t->measuring_overhead && other_threads_ran(t);
	if (rc)
		pmc__test_read_failed(t, rc);
	if (t->hot.recording) {
		pmc_measurement_subtract(m, &t->overhead_general);
		for (size_t i = 0; others && i < m->n; i++)
			m->d[i].flags |= PMC_DELTA_OTHER_THREADS;
		pmc__region_settle(r, &t->hot.overhead); /* raw rows before it */
		if (pmc__region_append(r, m))
			pmc_test_error(t, "out of memory storing samples of region \"%s\"", r->name);
	}
	t->hot.open = t->hot.inline_open = NULL;
	t->hot.expect = inline_allowed(t) ? r->next : NULL;
	return 0;
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
 * per event over PMC__OVERHEAD_TRIES empty regions, for each of the two
 * paths a region can take (PMC_REGION's inline one, and the general
 * functions), since the code inside the counted window differs.  Each
 * sample has its own path's overhead subtracted.
 */
static void measure_overhead(struct pmc_test *t)
{
	struct pmc__region *s = &t->scratch;

	memset(&t->hot.overhead, 0, sizeof(t->hot.overhead));
	memset(&t->overhead_general, 0, sizeof(t->overhead_general));
	t->hot.overhead.n = t->overhead_general.n = t->nev;
	if (!t->set)
		return;
	s->name = "(overhead)";
	s->nev = t->nev;
	s->iterations = 1;
	s->next = s;
	if (pmc__region_reserve(s, PMC__OVERHEAD_TRIES))
		pmc_test_error(t, "out of memory measuring the overhead");
	t->measuring_overhead = true;
	t->hot.recording = 1;
	/* Through PMC_REGION both times, as the cases call it: the general
	 * path with the inline one held off, then the inline one. */
	for (size_t k = 0; k < PMC__OVERHEAD_TRIES; k++) {
		t->hot.expect = NULL;
		PMC_REGION(t, s->name) {
		}
	}
	scratch_minimum(t, &t->overhead_general);
	if (inline_allowed(t)) {
		s->next = s;
		t->hot.expect = s;
		for (size_t k = 0; k < PMC__OVERHEAD_TRIES; k++) {
			PMC_REGION(t, s->name) {
			}
		}
		scratch_minimum(t, &t->hot.overhead);
	}
	t->hot.recording = 0;
	t->hot.first = t->hot.last = t->hot.expect = NULL;
	t->measuring_overhead = false;
}

static void settle_all(struct pmc_test *t)
{
	for (size_t i = 0; i < t->nregions; i++)
		pmc__region_settle(&t->region[i], &t->hot.overhead);
}

/* Room for every measured sample of the regions seen so far: the warm-up
 * ran each region `warm` times over opt.warmup repetitions, or (no
 * warm-up) the first measured repetition ran it n times. */
static void reserve_samples(struct pmc_test *t)
{
	for (size_t i = 0; i < t->nregions; i++) {
		struct pmc__region *r = &t->region[i];
		size_t per_rep = t->opt.warmup ? (r->warm + t->opt.warmup - 1) / t->opt.warmup : r->n;

		if (per_rep && pmc__region_reserve(r, r->n + per_rep * t->opt.reps))
			pmc_test_error(t, "out of memory reserving samples of region \"%s\"", r->name);
	}
}

/* ---- expectations ------------------------------------------------------------------ */

static void set_msg(struct pmc__check *c, const char *fmt, ...) PMC__FMT(2, 3);

void pmc_test_expect_figure(struct pmc_test *t, const char *name, const char *event,
			    double measured, double lo, double hi, const char *fmt, ...)
{
	struct pmc__check *c = NULL;
	char why[256], bound[96], meas[48];
	va_list ap;
	size_t i;
	bool ok;

	for (i = 0; i < t->nexpect; i++)
		if (t->check[i].e.kind == PMC_EXPECT_KIND_FIGURE &&
		    !strcmp(t->check[i].figure_name, name) && !strcmp(t->check[i].figure_event, event))
			c = &t->check[i];
	if (!c) {
		if (t->nexpect >= PMC__MAX_EXPECT)
			pmc_test_error(t, "more than %d expectations in one case", PMC__MAX_EXPECT);
		c = &t->check[t->nexpect++];
	}
	memset(c, 0, sizeof(*c));
	copy_str(c->figure_name, sizeof(c->figure_name), name);
	copy_str(c->figure_event, sizeof(c->figure_event), event);
	c->e = (struct pmc_expectation){ .kind = PMC_EXPECT_KIND_FIGURE, .region = c->figure_name,
					 .event = c->figure_event, .file = t->def->file,
					 .line = t->def->line };
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->measured = measured;
	c->bound_lo = lo;
	c->bound_hi = hi;
	c->samples = 1;
	ok = !(measured < lo) && !(measured > hi) && !isnan(measured);
	c->status = ok ? PMC__CHECK_PASS : PMC__CHECK_FAIL;
	pmc__fmt_bound(bound, sizeof(bound), lo, hi);
	pmc__fmt_num(meas, sizeof(meas), measured);
	set_msg(c, "%s, %s: measured %s, expected %s (%s)%s", name, event, meas, bound, why,
		ok ? "" : measured > hi ? ": over" : ": under");
}

void pmc_test_expect(struct pmc_test *t, const struct pmc_expectation *e)
{
	size_t i;

	for (i = 0; i < t->nexpect; i++) {
		const struct pmc_expectation *o = &t->check[i].e;

		if (o->line == e->line && !strcmp(o->file, e->file) && !strcmp(o->region, e->region) &&
		    !strcmp(o->event, e->event) &&
		    (o->per == e->per || (o->per && e->per && !strcmp(o->per, e->per))))
			return;
	}
	if (!e->region || !e->event)
		pmc_test_error(t, "%s:%d: expectation without a region or event", e->file, e->line);
	if (t->nexpect >= PMC__MAX_EXPECT)
		pmc_test_error(t, "more than %d expectations in one case", PMC__MAX_EXPECT);
	memset(&t->check[t->nexpect], 0, sizeof(t->check[0]));
	t->check[t->nexpect++].e = *e;
}

static void set_msg(struct pmc__check *c, const char *fmt, ...) PMC__FMT(2, 3);
static void set_msg(struct pmc__check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->message, sizeof(c->message), fmt, ap);
	va_end(ap);
}

/* Column of an event as an expectation names it: its label, its canonical
 * name, or any spelling that parses to the same canonical name. */
static int column_of(struct pmc_test *t, const char *event)
{
	struct pmc_event_spec s;
	size_t i;

	for (i = 0; i < t->nev; i++)
		if (!strcmp(t->label[i], event))
			return (int)i;
	for (i = 0; i < t->nev; i++)
		if (!strcmp(t->spec[i].name, event))
			return (int)i;
	if (pmc_event_parse(event, &s, NULL) == 0)
		for (i = 0; i < t->nev; i++)
			if (!strcmp(s.name, t->spec[i].name))
				return (int)i;
	return -1;
}

static void list_labels(struct pmc_test *t, char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < t->nev && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? ", " : "", t->label[i]);
}

uint64_t pmc_test_last(struct pmc_test *t, const char *region, const char *event)
{
	struct pmc__region *r = region_named(t, region);
	int ev = column_of(t, event);

	if (r)
		pmc__region_settle(r, &t->hot.overhead);
	if (ev < 0)
		pmc_test_error(t, "pmc_test_last: the case counts no event \"%s\"", event);
	if (!r || r->n == 0)
		pmc_test_error(t, "pmc_test_last: region \"%s\" has no sample yet (warm-up runs keep none)",
			       region);
	if (r->flags[(r->n - 1) * r->nev + (size_t)ev] &
	    (PMC_DELTA_MULTIPLEXED | PMC_DELTA_NOT_COUNTED | PMC_DELTA_OTHER_THREADS))
		pmc_test_skip(t, "region \"%s\", %s: the last sample was multiplexed, never counted, or missed other threads (set .inherit = 1); its value is partial",
			      region, event);
	return r->value[(r->n - 1) * r->nev + (size_t)ev];
}

void pmc__sim_profile_key(const struct pmc_test_def *def, char *buf, size_t size)
{
	const char *vg = pmc_sim_valgrind_version();
	size_t i;

#if defined(__x86_64__)
	const char *arch = "x86_64";
#elif defined(__aarch64__)
	const char *arch = "aarch64";
#else
	const char *arch = "other";
#endif
	snprintf(buf, size, "sim-%s-%s-%s-%s", arch, *vg ? vg : "valgrind-unknown",
		 PMC_SIM_GEOMETRY, def->build && *def->build ? def->build : "unknown-build");
	/* A key is a directory name: no '/', no blanks. */
	for (i = 0; buf[i]; i++)
		if (buf[i] == '/' || buf[i] == ' ' || buf[i] == '\t')
			buf[i] = '_';
}

/*
 * A budget expectation found no budget.  When the suite has budgets under
 * other keys on this backend (another build, another CPU model), this is a
 * gate that looked in the wrong place: the check fails, naming the key it
 * looked up and the keys that exist.  Otherwise the suite was never
 * calibrated here: the check stays unbudgeted (a failure under --strict).
 */
static void unbudgeted_message(struct pmc_test *t, struct pmc__check *c, const char *looked_up)
{
	char keys[8][PMC_HWDB_KEY_MAX], list[700] = "", meas[48], hint[600], detail[400] = "";
	const char *backend = t->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	const char *dir = pmc__hwdb_first_dir();
	size_t n = 0, i, used = 0;

	if (budget_source && budget_source->suite_keys)
		n = budget_source->suite_keys(budget_source->ctx, backend, t->def->suite, keys, 8);
	for (i = 0; i < n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 keys[i]);
	pmc__fmt_num(meas, sizeof(meas), c->measured);
	snprintf(hint, sizeof(hint), "%s --filter=%s.%s%s --calibrate --hwdb=%s",
		 pmc__program ? pmc__program : "<suite>", t->def->suite, t->def->name,
		 t->backend == PMC_BACKEND_SIM ? " --backend=sim" : "", dir ? dir : "DIR");
	if (n == 0) {
		set_msg(c,
			"region \"%s\", %s: unbudgeted: no budget for suite \"%s\" under any key on the %s backend (looked up %s; measured %s); record one with: %s",
			c->e.region, c->e.event, t->def->suite, backend, looked_up, meas, hint);
		return;
	}
	c->gate = true;
	if (t->backend == PMC_BACKEND_SIM) {
		/* Same simulator and compiler, another build type? Say so. */
		const char *dash = strrchr(looked_up, '-');
		size_t stem = dash ? (size_t)(dash - looked_up) : 0;

		for (i = 0; i < n && !detail[0]; i++)
			if (stem && !strncmp(keys[i], looked_up, stem) && keys[i][stem] == '-')
				snprintf(detail, sizeof(detail),
					 " Only another build type's budgets exist (%s; this build is %s): build as calibrated, or calibrate this build type.",
					 keys[i] + stem + 1, dash + 1);
		if (!detail[0])
			snprintf(detail, sizeof(detail),
				 " This binary differs from the calibrated one (compiler, optimisation, build type or valgrind version): build it as calibrated, or calibrate this one.");
	}
	set_msg(c,
		"region \"%s\", %s: no budget under key %s (measured %s), but suite \"%s\" has budgets under: %s.%s Record one with: %s",
		c->e.region, c->e.event, looked_up, meas, t->def->suite, list, detail, hint);
}

static void judge_all(struct pmc_test *t)
{
	char sim_key[PMC_HWDB_KEY_MAX];
	struct pmc_cpu_id cpu;
	bool have_cpu = false;
	size_t i;

	pmc__sim_profile_key(t->def, sim_key, sizeof(sim_key));
	for (i = 0; i < t->nexpect; i++) {
		struct pmc__check *c = &t->check[i];
		struct pmc__region *r;
		int ev;

		if (c->e.kind == PMC_EXPECT_KIND_FIGURE)
			continue; /* judged when it was made */
		r = region_named(t, c->e.region);
		ev = column_of(t, c->e.event);
		int per = c->e.per ? column_of(t, c->e.per) : -1;
		struct pmc_budget budget, *b = NULL;
		struct pmc_error berr;
		char names[512];

		if (ev < 0 || (c->e.per && per < 0)) {
			list_labels(t, names, sizeof(names));
			c->status = PMC__CHECK_ERROR;
			set_msg(c,
				 "%s:%d: event \"%s\" is not counted by this case (events: %s)",
				 c->e.file, c->e.line, ev < 0 ? c->e.event : c->e.per, names);
			continue;
		}
		if (!r) {
			c->status = PMC__CHECK_ERROR;
			set_msg(c, "%s:%d: region \"%s\" never ran",
				 c->e.file, c->e.line, c->e.region);
			continue;
		}
		if (c->e.kind == PMC_EXPECT_KIND_BUDGET && budget_source && budget_source->lookup) {
			struct pmc_budget_key key;
			int rc;

			if (!have_cpu)
				pmc_cpu_identify(&cpu), have_cpu = true;
			/* Budget files spell events as the expectations do. */
			key = (struct pmc_budget_key){ t->def->suite, t->def->name, c->e.region,
						       c->e.event,
						       t->backend == PMC_BACKEND_SIM ? "sim" : "perf",
						       t->backend == PMC_BACKEND_SIM ? sim_key : cpu.signature };
			memset(&budget, 0, sizeof(budget));
			pmc_error_clear(&berr);
			rc = budget_source->lookup(budget_source->ctx, &key, &budget, &berr);
			if (rc == 0) {
				b = &budget;
			} else if (rc != -ENOENT) {
				c->status = PMC__CHECK_ERROR;
				set_msg(c, "budget for region \"%s\", %s: %s", c->e.region, c->e.event,
					berr.message[0] ? berr.message : pmc_strerror(rc));
				continue;
			}
		}
		pmc__judge(c, r, ev, per, t->opt.stat, b);
		if (c->status == PMC__CHECK_UNBUDGETED) {
			if (!have_cpu)
				pmc_cpu_identify(&cpu), have_cpu = true;
			unbudgeted_message(t, c, t->backend == PMC_BACKEND_SIM ? sim_key : cpu.signature);
		}
	}
}

/* ---- the case --------------------------------------------------------------------- */

static void run_phases(struct pmc_test *t)
{
	const struct pmc_fixture *fx = t->opt.fixture;
	struct pmc_error err;
	char why[512];
	size_t n = 0;
	int rc;

	if (t->opt.backends && !(t->opt.backends & t->backend))
		pmc_test_skip(t, "does not run on the %s backend",
			      t->backend == PMC_BACKEND_SIM ? "sim" : "perf");
	if (missing_requirement(t->opt.requires, t->backend, why, sizeof(why)))
		pmc_test_skip(t, "%s", why);
	if (t->opt.events && *t->opt.events) {
		rc = pmc_event_parse_list(t->opt.events, t->spec, PMC_MAX_EVENTS, &n, &err);
		if (rc) {
			if (pmc_error_is_capability(rc))
				pmc_test_skip(t, "%s", err.message);
			pmc_test_error(t, "events \"%s\": %s", t->opt.events, err.message);
		}
		for (t->nev = 0; t->nev < n; t->nev++)
			copy_str(t->label[t->nev], sizeof(t->label[0]), t->spec[t->nev].name);
	}
	if (fx && fx->setup) {
		t->in_setup = true;
		rc = fx->setup(t, &t->data);
		t->in_setup = false;
		if (rc)
			pmc_test_error(t, "fixture \"%s\": setup failed (returned %d)",
				       fx->name ? fx->name : "?", rc);
	}
	t->setup_done = true;
	open_counters(t);
	measure_overhead(t);
	for (t->rep = -(int)t->opt.warmup; t->rep < (int)t->opt.reps; t->rep++) {
		t->hot.recording = t->rep >= 0;
		/* The repetition starts over at hot.first. */
		t->hot.last = NULL;
		t->hot.expect = inline_allowed(t) ? t->hot.first : NULL;
		if (t->rep == 0 || (t->rep == 1 && t->opt.warmup == 0))
			reserve_samples(t);
		t->def->body(t);
		settle_all(t);
		if (open_region(t))
			pmc_test_error(t, "region \"%s\" was not closed: a PMC_REGION block was left with break, return or goto",
				       open_region(t)->name);
	}
	t->hot.recording = 0;
	t->hot.expect = NULL;
	judge_all(t);
	t->verdict = pmc__verdict_from_checks(t->check, t->nexpect, t->strict, t->reason,
					      sizeof(t->reason));
}

static const char *kind_label(enum pmc_event_kind k)
{
	static const char *const names[] = { "?", "hardware", "cache", "raw", "pmu", "libpfm4",
					     "software", "breakpoint", "uprobe", "sim", "tracepoint" };

	return (unsigned)k <= PMC_KIND_TRACEPOINT ? names[k] : "?";
}

static char *dup_or_null(const char *s)
{
	return s && *s ? strdup(s) : NULL;
}

/* The case's result record: everything the reports, calibration and
 * comparison need, built here and nowhere else. */
static int result_record(struct pmc_test *t, struct pmc__result *r)
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
		e->kind = strdup(kind_label(t->spec[i].kind));
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
			struct pmc__stats s;

			pmc__stats_of(g, j, &s);
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

static bool defer_close;
static struct pmc_counters *deferred_set; /* reachable: not a leak at exit */

void pmc__defer_close(void)
{
	defer_close = true;
}

void pmc__close_deferred(void)
{
	pmc_counters_close(deferred_set);
	deferred_set = NULL;
}

int pmc__run_case(const struct pmc_test_def *def, const struct pmc_test_options *opt,
		  enum pmc_backend backend, bool strict, struct pmc__result *out)
{
	struct pmc_test *t = calloc(1, sizeof(*t));
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!t)
		return -ENOMEM;
	t->def = def;
	t->opt = *opt;
	t->backend = backend;
	t->strict = strict;
	t->verdict = PMC_PASS;
	/* t lives on the heap, so its fields are valid after longjmp. */
	if (setjmp(t->jump) == 0) {
		t->jump_armed = true;
		run_phases(t);
	}
	t->hot.open = t->hot.expect = t->hot.inline_open = NULL;
	t->hot.recording = 0;
	t->measuring_overhead = false;
	settle_all(t); /* a case ended mid-repetition keeps its samples final */
	if (t->setup_done && t->opt.fixture && t->opt.fixture->teardown) {
		enum pmc_verdict before = t->verdict;
		char reason[sizeof(t->reason)];

		memcpy(reason, t->reason, sizeof(reason));
		if (setjmp(t->jump) == 0) {
			t->opt.fixture->teardown(t, t->data);
		} else if (before > t->verdict) {
			/* Teardown ending the case does not hide an earlier worse verdict. */
			t->verdict = before;
			memcpy(t->reason, reason, sizeof(reason));
		}
	}
	t->jump_armed = false;
	if (t->verdict == PMC_FAIL && t->known_issue[0]) {
		char observed[sizeof(t->reason)];

		memcpy(observed, t->reason, sizeof(observed));
		t->verdict = PMC_KNOWN_ISSUE;
		snprintf(t->reason, sizeof(t->reason), "known issue: %.400s; observed: %.500s",
			 t->known_issue, observed);
	} else if (t->verdict == PMC_PASS && t->known_issue[0]) {
		pmc_test_note(t, "declared known issue did not reproduce: %s", t->known_issue);
	}
	rc = result_record(t, out);
	if (defer_close && !deferred_set)
		deferred_set = t->set;
	else
		pmc_counters_close(t->set);
	for (i = 0; i < t->nregions; i++)
		pmc__region_release(&t->region[i]);
	pmc__region_release(&t->scratch);
	free(t);
	return rc;
}
