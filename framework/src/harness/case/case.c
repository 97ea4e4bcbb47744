/* SPDX-License-Identifier: MIT */
/*
 * Running one case in the calling process: options, requirements, events,
 * fixture, the repetitions.  Immediate endings (skip, fail, error, failed
 * check) longjmp back here.  Regions and their samples are region.c,
 * expectations and their budgets expect.c, the verdict judge.c, the result
 * record record.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness_int.h"
#include "sim/sim_harness.h"

static void crash_handlers(struct pmc_test *t, bool on);

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

void pmc__case_kinds(const struct pmc_test_def *def, bool *hardware, bool *on_sim)
{
	struct pmc_event_spec *specs = NULL;
	size_t n = 0, i;
	bool parsed = false;

	*hardware = def->opt.requires & (PMC_REQ_HW_PMU | PMC_REQ_USER_READ);
	*on_sim = !(def->opt.backends && !(def->opt.backends & PMC_BACKEND_SIM)) &&
		  !(def->opt.requires & (PMC_REQ_USER_READ | PMC_REQ_BREAKPOINT));
	if (!def->opt.events || !*def->opt.events) {
		/* Events added by a fixture at run time are unknown here: such
		 * a case is a sim case only when it says so. */
		*on_sim = *on_sim && (def->opt.backends & PMC_BACKEND_SIM);
		return;
	}
	/* What the events are, not where, parsed once for both answers: the
	 * listing runs before the case loads what its calls: events name, and
	 * every calls: event has a simulated equivalent, whether or not its
	 * function can be found yet. */
	specs = calloc(PMC_MAX_EVENTS, sizeof(*specs));
	if (specs)
		parsed = pmc_event_parse_list_flags(def->opt.events, PMC_PARSE_DEFER_SYMBOLS, specs,
						    PMC_MAX_EVENTS, &n, NULL) == 0;
	for (i = 0; parsed && i < n; i++) {
		unsigned mask;

		*hardware = *hardware || specs[i].uses_hw_counter;
		*on_sim = *on_sim && pmc_sim_columns(&specs[i], &mask, NULL) == 0;
	}
	*on_sim = *on_sim && parsed;
	free(specs);
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
	pmc__copy_str(t->label[t->nev], sizeof(t->label[0]), label ? label : t->spec[t->nev].name);
	t->nev++;
}

void pmc_test_watch(struct pmc_test *t, const char *label, const void *addr, size_t len,
		    unsigned access)
{
	struct pmc_error err;

	check_can_add(t, label ? label : "breakpoint");
	if (pmc_event_breakpoint(&t->spec[t->nev], addr, len, access, &err))
		pmc_test_error(t, "breakpoint \"%s\": %s", label ? label : "?", err.message);
	pmc__copy_str(t->label[t->nev], sizeof(t->label[0]), label ? label : t->spec[t->nev].name);
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
		/* calls: events: callgrind counts the calls itself. */
		req &= ~(unsigned)(PMC_REQ_HW_PMU | PMC_REQ_USER_READ | PMC_REQ_UPROBE);
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
	if (req & PMC_REQ_BREAKPOINT) {
		struct pmc_kind_check c;

		if (pmc_kind_check(PMC_KIND_CHECK_BP_WRITE, &c) == PMC_E_NOT_COUNTING) {
			snprintf(buf, size, "%s", c.summary);
			return buf;
		}
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
			       (t->backend == PMC_BACKEND_SIM ? PMC_OPEN_SIM : 0) |
				       (t->opt.inherit ? PMC_OPEN_INHERIT : 0),
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
	t->hot.one_group = t->backend == PMC_BACKEND_PERF && pmc_counters_groups(t->set) == 1 &&
			   pmc_counters_path(t->set) != PMC_PATH_SIM;
	/* Counting this thread only on the kernel: watch for the others. */
	/* Counting this thread only (the kernel without .inherit, and
	 * pmcheck's valgrind tool, whose counters are per thread, likewise):
	 * watch for the others.  callgrind counts every thread, but the two
	 * engines must judge alike, so a case is INCONCLUSIVE on both. */
	t->hot.watch_threads = !t->opt.inherit;
	if ((t->opt.requires & PMC_REQ_USER_READ) && pmc_counters_path(t->set) != PMC_PATH_USER)
		pmc_test_skip(t, "needs user-space counter reads (rdpmc/mrs): the kernel does not offer them for these events here (cap_user_rdpmc 0, or arm64 perf_user_access 0)");
}

/* The functions of the case's calls: events, looked up in what is loaded
 * now or will be (a library named by @OBJECT is also looked for where the
 * dynamic linker would find it).  Not found is the case's error, not a
 * skip: the name, or the program, is wrong. */
static void resolve_events(struct pmc_test *t)
{
	struct pmc_error err;
	size_t i;
	int rc;

	for (i = 0; i < t->nev; i++) {
		if (t->spec[i].kind != PMC_KIND_UPROBE || t->spec[i].path[0])
			continue;
		rc = pmc_event_resolve(&t->spec[i], &err);
		if (rc == 0)
			continue;
		if (pmc_error_is_capability(rc) && rc != PMC_E_NO_SYMBOL)
			pmc_test_skip(t, "%s", err.message);
		pmc_test_error(t, "%s (looked up when the counters open, after the fixture's setup; a library the case loads later is found by the name it is loaded by, calls:FUNC@libNAME.so.N, or by its path)",
			       err.message);
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
		/* Functions are looked up once the fixture's setup has run
		 * (resolve_events), so a library it dlopen()s can be named. */
		rc = pmc_event_parse_list_flags(t->opt.events, PMC_PARSE_DEFER_SYMBOLS, t->spec,
						PMC_MAX_EVENTS, &n, &err);
		if (rc) {
			if (pmc_error_is_capability(rc))
				pmc_test_skip(t, "%s", err.message);
			pmc_test_error(t, "events \"%s\": %s", t->opt.events, err.message);
		}
		for (t->nev = 0; t->nev < n; t->nev++)
			pmc__copy_str(t->label[t->nev], sizeof(t->label[0]), t->spec[t->nev].name);
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
	resolve_events(t);
	open_counters(t);
	pmc__measure_overhead(t);
	pmc__sampling_open(t);
	crash_handlers(t, true);
	for (t->rep = -(int)t->opt.warmup; t->rep < (int)t->opt.reps; t->rep++) {
		pmc__repetition_begin(t);
		t->def->body(t);
		pmc__repetition_end(t);
	}
	crash_handlers(t, false);
	t->hot.recording = 0;
	t->hot.expect = NULL;
	/* Measured: judging and the record need no simulation. */
	if (t->backend == PMC_BACKEND_SIM)
		pmc_sim_pause();
	pmc__judge_case(t);
	t->verdict = pmc__verdict_from_checks(t->check, t->nexpect, t->strict, t->reason,
					      sizeof(t->reason));
	t->verdict_from_checks = true;
}

/*
 * A case that crashes says in which region (the runner puts it in the
 * reason): a handler for the signals that end a process with a fault, set
 * while the body runs and only where nothing else handles them, writes the
 * open region's name to the case's output and dies of the signal as it
 * would have.  Only async-signal-safe calls.
 */
static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct pmc_test *crashing;
static struct sigaction crash_old[sizeof(crash_signals) / sizeof(crash_signals[0])];
static bool crash_set[sizeof(crash_signals) / sizeof(crash_signals[0])];

static void say(const char *s)
{
	if (write(STDERR_FILENO, s, strlen(s)) < 0)
		return;
}

static void crashed(int sig)
{
	const struct pmc__region *r = crashing ? (crashing->hot.open ? crashing->hot.open
								     : crashing->hot.inline_open)
					       : NULL;

	if (r && r->name) {
		say("\npmcheck: crashed in region \"");
		say(r->name);
		say("\"\n");
	} else if (crashing) {
		say("\npmcheck: crashed outside any region\n");
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void crash_handlers(struct pmc_test *t, bool on)
{
	for (size_t i = 0; i < sizeof(crash_signals) / sizeof(crash_signals[0]); i++) {
		if (on) {
			struct sigaction sa;

			crash_set[i] = sigaction(crash_signals[i], NULL, &crash_old[i]) == 0 &&
				       !(crash_old[i].sa_flags & SA_SIGINFO) &&
				       crash_old[i].sa_handler == SIG_DFL;
			if (!crash_set[i])
				continue;
			memset(&sa, 0, sizeof(sa));
			sa.sa_handler = crashed;
			sa.sa_flags = SA_RESETHAND | SA_NODEFER;
			sigemptyset(&sa.sa_mask);
			crash_set[i] = sigaction(crash_signals[i], &sa, NULL) == 0;
		} else if (crash_set[i]) {
			sigaction(crash_signals[i], &crash_old[i], NULL);
			crash_set[i] = false;
		}
	}
	crashing = on ? t : NULL;
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
	crash_handlers(t, false); /* also when the body ended the case early */
	t->hot.open = t->hot.expect = t->hot.inline_open = NULL;
	t->hot.recording = 0;
	t->measuring_overhead = false;
	pmc__settle_all(t); /* a case ended mid-repetition keeps its samples final */
	if (t->setup_done && t->opt.fixture && t->opt.fixture->teardown) {
		enum pmc_verdict before = t->verdict;
		char reason[sizeof(t->reason)];

		memcpy(reason, t->reason, sizeof(reason));
		if (setjmp(t->jump) == 0) {
			t->opt.fixture->teardown(t, t->data);
		} else if (pmc__verdict_rank(before) > pmc__verdict_rank(t->verdict)) {
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
	rc = pmc__result_record(t, out);
	pmc__sampling_close(t);
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
