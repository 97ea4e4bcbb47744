/* SPDX-License-Identifier: MIT */
/* Private to the harness: the running case, statistics, judging, reports.
 * What the pmcheck command may use of it is in tools.h (included here). */
#ifndef PMCHECK_HARNESS_INT_H
#define PMCHECK_HARNESS_INT_H

#include <jansson.h>
#include <limits.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pmcheck/harness.h>
#include <pmcheck/machine.h>
#include <pmcheck/sampling.h>
#include <pmcheck/sim.h>

#include "tools.h"

#if defined(__GNUC__)
#define PMC__FMT(a, b) __attribute__((format(printf, a, b)))
#else
#define PMC__FMT(a, b)
#endif

#define PMC__MAX_REGIONS 32
#define PMC__MAX_EXPECT 128
#define PMC__MAX_NOTES 8
#define PMC__OVERHEAD_TRIES 16
#define PMC__OVERHEAD_TRIES_SIM 4
/* Scale: a region keeps at most PMC__WINDOW_ROWS rows of samples in memory;
 * a full window is folded into exact statistics (count, minimum, maximum,
 * sum, flags) and the distribution of each event: exact while it takes at
 * most PMC__EXACT_DISTINCT values, else a log-bucket sketch whose median is
 * within PMC__SKETCH_ALPHA of the true one (relative).  The results list the
 * first PMC__KEPT_VALUES samples of each event; the statistics cover all. */
#define PMC__WINDOW_ROWS 16384
#define PMC__EXACT_DISTINCT 4096
#define PMC__SKETCH_ALPHA 0.005
#define PMC__KEPT_VALUES 1000
#define PMC__MAX_RATIOS 16       /* ratios (event / per) a region tracks past its window */
#define PMC__DEFAULT_REPS 5
#define PMC__DEFAULT_WARMUP 1
#define PMC__DEFAULT_TIMEOUT 30.0
#define PMC__LABEL_MAX PMC_EVENT_NAME_MAX



struct pmc__check {
	struct pmc_expectation e;
	enum pmc__check_status status;
	double measured;         /* the judged figure */
	double bound_lo, bound_hi; /* as judged (budgets resolved), NAN if open */
	const char *stat;        /* "min", "median", "max" */
	size_t samples;
	char budget_source[PMC_HWDB_WHERE_MAX];
	bool per_iteration;      /* measured and bounds are per iteration (the budget's) */
	bool gate;               /* unbudgeted, but the suite has budgets elsewhere: fails */
	char message[512];
	/* FIGURE checks own their strings. */
	char figure_name[96];
	char figure_event[PMC_EVENT_NAME_MAX];
};

/* The running case. */
struct pmc_test {
	struct pmc__hot hot; /* first: PMC_REGION's inline path (harness.h) */
	const struct pmc_test_def *def;
	struct pmc_test_options opt;  /* with defaults and CLI overrides applied */
	enum pmc_backend backend;
	bool strict;
	bool verdict_from_checks;  /* the verdict is the checks' (not an early end) */

	/* events: spec + label (how expectations refer to it) */
	size_t nev;
	struct pmc_event_spec spec[PMC_MAX_EVENTS];
	char label[PMC_MAX_EVENTS][PMC__LABEL_MAX];
	bool opened;
	struct pmc_counters *set;
	bool measuring_overhead;
	struct pmc__region scratch; /* the overhead measurement's samples */
	struct pmc_measurement overhead_general; /* the general path's overhead */

	/* regions */
	size_t nregions;
	struct pmc__region region[PMC__MAX_REGIONS];
	int rep;                 /* <0 warm-up */
	/* Other threads during a region (hot.watch_threads: the set counts
	 * this thread only): was the process multi-threaded at begin, and
	 * the CPU clocks then. */
	bool threaded_at_begin;
	struct timespec thread_cpu0, process_cpu0;
	/* sim: the reaped children's page faults at the region's start
	 * (a child reaped inside it ran work the backend did not count) */
	long children_minflt0;
	bool children_noted;
	/* sim: children the engine added (pmc_sim_children) at region begin;
	 * children_added < 0: the engine adds none. */
	int children_added;
	uint64_t children_ended0, children_execed0;

	/* The open region's paused spans (pmc__test_region_pause/resume, the
	 * Google Benchmark adapter's PauseTiming): the reading at the pause,
	 * and what the spans counted, taken out of the region's sample. */
	bool paused;
	size_t npaused;
	struct pmc_reading pause_at;
	struct pmc_measurement paused_sum;

	/* perf attribution: the samplers of a failed case's re-run, or NULL */
	struct pmc__sampling_state *sampling;

	/* expectations */
	size_t nexpect;
	struct pmc__check check[PMC__MAX_EXPECT];

	/* outcome */
	enum pmc_verdict verdict;
	char reason[1024];
	char known_issue[512];
	size_t nnotes;
	char notes[PMC__MAX_NOTES][256];
	void *data;
	bool in_setup;
	bool setup_done;        /* setup returned 0: teardown is due */
	jmp_buf jump;
	bool jump_armed;
};

/* ---- stats.c: pure ---------------------------------------------------------- */

/* Statistics of column `ev` of region r (n may be 0: all zero). */
void pmc__stats_of(const struct pmc__region *r, size_t ev, struct pmc__stats *s);
/* The samples a region summarised (folded out of its window), 0 for none;
 * the first PMC__KEPT_VALUES rows of the region, the summarised and the
 * window's together, nev values each (row-major), and their number. */
size_t pmc__region_folded(const struct pmc__region *r);
size_t pmc__region_kept(const struct pmc__region *r, const uint64_t **rows);
/* Track event ev / per sample by sample through the folds from now on (a
 * ratio expectation's): 0, -E2BIG past PMC__MAX_RATIOS, -ENOMEM. */
int pmc__region_want_ratio(struct pmc__region *r, size_t ev, size_t per);
/* The ratio ev / per of the region's samples, by stat: exact while nothing
 * was folded, and for the minimum and maximum; the median of folded rows
 * is an estimate within *error (relative).  *div0: some denominator was 0
 * (those samples are left out); *missed: folded rows the ratio was not
 * tracked over (asked for too late).  NAN when no sample has a ratio. */
double pmc__region_ratio(const struct pmc__region *r, size_t ev, size_t per, enum pmc_stat stat,
			 bool *div0, double *error, size_t *missed);
/* The last row of the region (final), or NULL when it has none. */
const uint64_t *pmc__region_last(const struct pmc__region *r, const unsigned **flags);
/* Make raw rows final (see struct pmc__region), subtracting `overhead`. */
void pmc__region_settle(struct pmc__region *r, const struct pmc_measurement *overhead);
/* Make room for `rows` samples in all; returns 0 or -ENOMEM. */
int pmc__region_reserve(struct pmc__region *r, size_t rows);

/* The dumps a sim region keeps for attribution (the first measured
 * executions'), and how many functions a record keeps of them. */
#define PMC__ATTR_DUMPS 3
#define PMC__ATTR_TOP 24
struct pmc__attr {
	char dump[PMC__ATTR_DUMPS][4096]; /* fixed: no allocation while measuring */
	size_t n;
};

/* ---- sampled.c: attribution on the perf backend --------------------------------- */

/* A failed case is run again with up to PMC__SAMPLE_MAX of its failing
 * events sampled, each with a period that gives about PMC__SAMPLE_TARGET
 * samples over the case's regions. */
#define PMC__SAMPLE_MAX 4
#define PMC__SAMPLE_TARGET 4000
struct pmc__sample_request {
	size_t n;
	char label[PMC__SAMPLE_MAX][PMC__LABEL_MAX];
	uint64_t period[PMC__SAMPLE_MAX];
};
/* Set by the runner around the re-run (the forked case reads it). */
extern struct pmc__sample_request pmc__sampling;
struct pmc__sampling_state;
/* In the case: open the samplers pmc__sampling asks for (after the
 * counters); a region's begin and end; its rows for the record; close. */
void pmc__sampling_open(struct pmc_test *t);
void pmc__sampling_begin(struct pmc_test *t, const struct pmc__region *r);
void pmc__sampling_end(struct pmc_test *t);
int pmc__sampling_record(struct pmc_test *t, size_t region, struct pmc__region_rec *gr);
void pmc__sampling_close(struct pmc_test *t);
/* In the runner: which events of a failed result to sample, and how
 * often (0: none); then the re-run's rows moved into the result and each
 * failed check explained by them. */
size_t pmc__sampling_request(const struct pmc__result *r, struct pmc__sample_request *req);
/* --baseline on perf: the events of r's regressions in comparison rep. */
size_t pmc__sampling_request_regressions(json_t *rep, const struct pmc__result *r,
					 struct pmc__sample_request *req);
/* The `max` functions with the most samples of `label` in region g
 * ([{function, object, samples, share, estimate}]), or NULL. */
json_t *pmc__sampled_rows_json(const struct pmc__region_rec *g, const char *label, size_t max);
void pmc__sampling_adopt(struct pmc__result *r, struct pmc__result *sampled, double seconds);
/* record.c: append `why` to a failed check's message, and to the case's
 * reason where the reason quotes that check.  0, or -1 out of memory. */
int pmc__check_explain(struct pmc__result *r, struct pmc__check_rec *cr, const char *why);
/* explain.c: the region as calibration measured it, its functions from
 * SUITE.functions.json beside the budget's file (budget_source is
 * "DIR/budgets/KEY/SUITE.ini:LINE"), in g's events: the number of functions
 * (0: none recorded), *path that file; *old freed with pmc__calibrated_free. */
size_t pmc__calibrated_region(const char *case_name, const struct pmc__region_rec *g,
			      const char *budget_source, struct pmc__region_rec *old, char *path,
			      size_t path_size);
void pmc__calibrated_free(struct pmc__region_rec *old);
/* explain.c: words to append to a failed budget's message (malloc'd), or
 * NULL: the functions, or for a calls: event the callers, that moved. */
char *pmc__explain_budget(const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			  const char *label, const char *path, bool calls);
/* record.c: a failed calls: budget whose region g has its callers (perf:
 * sampled at every call), against the callers calibration kept beside the
 * budget: " Callers against calibration (...): that call it more: ...", or
 * NULL when either side has none.  The text is the caller's to free. */
char *pmc__explain_callers(const struct pmc__result *r, const struct pmc__check_rec *cr,
			   const struct pmc__region_rec *g, const char *label);
/* record.c: put `text` before a failed check's figures, after its region
 * and event ("region \"parse\", calls:free: TEXT; measured ..."), and so in
 * the case's reason where it quotes that check.  0, or -1 out of memory. */
int pmc__check_preface(struct pmc__result *r, struct pmc__check_rec *cr, const char *text);

/* ---- judge.c: pure ----------------------------------------------------------- */

/* "<= 1200", "1000..1100", "= 600023", ">= 5" (NAN: an open side): the one
 * bound formatter of messages and reports. */
void pmc__fmt_bound(char *buf, size_t size, double lo, double hi);
/* c->message from a format (cut at the buffer's size). */
void pmc__check_msg(struct pmc__check *c, const char *fmt, ...) PMC__FMT(2, 3);

/* A case's events as expectations name them. */
struct pmc__columns {
	size_t n;
	const struct pmc_event_spec *spec;
	const char (*label)[PMC__LABEL_MAX];
};
/* Column of an event as an expectation names it: its label, its canonical
 * name, or any spelling that parses to the same canonical name; or -1. */
int pmc__column_in(const struct pmc__columns *cols, const char *event);

/* What judging a case's expectations needs.  budget resolves a BUDGET
 * check's budget: 0 found, -ENOENT none, another code an error (err
 * filled); NULL: no budget source.  unbudgeted (may be NULL) words the
 * message of a check left without one, and may make it a failing gate. */
struct pmc__judging {
	struct pmc__columns cols;
	struct pmc__region *regions;
	size_t nregions;
	enum pmc_stat stat;
	int (*budget)(void *ctx, const struct pmc__check *c, struct pmc_budget *out,
		      struct pmc_error *err);
	void (*unbudgeted)(void *ctx, struct pmc__check *c);
	void *ctx;
};
/* Judge every check but FIGURE ones (judged when made). */
void pmc__judge_checks(struct pmc__check *c, size_t n, const struct pmc__judging *j);

/*
 * Judge one expectation against region r.  ev / per are column indices
 * (per is -1 unless a ratio).  budget is the resolved budget for BUDGET
 * kinds (NULL when unbudgeted).  Fills c->status, measured, bounds, message.
 */
void pmc__judge(struct pmc__check *c, struct pmc__region *r, int ev, int per,
		enum pmc_stat stat, const struct pmc_budget *budget);

/* Case verdict from its checks (no immediate failure happened). */
enum pmc_verdict pmc__verdict_from_checks(const struct pmc__check *c, size_t n,
					  bool strict, char *reason, size_t size);

/* Run exit status from verdict counts (index enum pmc_verdict). */
int pmc__exit_status(const size_t counts[PMC__NVERDICTS]);

/* Text our own code wrote (calibration's lines), with every copy of key
 * written "<key>" (key NULL or empty: as it is). */
void pmc__put_keyed(FILE *f, const char *text, const char *key);
/* One console line for a case result.  run_key: the sim key the run's
 * header named (NULL: none), written "<key>" in a case of that key. */
void pmc__print_case_line(FILE *f, const struct pmc__result *r, size_t idx, size_t total,
			  bool color, const char *run_key);
/* Details of a non-passing (or verbose) case: checks, notes, output;
 * run_key as for pmc__print_case_line. */
void pmc__print_case_details(FILE *f, const struct pmc__result *r, bool verbose, const char *run_key);
/* Summary block. */
void pmc__print_summary(FILE *f, json_t *summary, double seconds);
/* TAP line(s) for a case. */
void pmc__print_tap(FILE *f, const struct pmc__result *r, size_t idx);
/* <CTestMeasurement> lines for a case. */
void pmc__print_ctest_measurements(FILE *f, const struct pmc__result *r);

/* ---- case.c ------------------------------------------------------------------ */

/* Run one case in this process; fills *out (0), or -ENOMEM. */
/* ---- the case's jobs, by file ----------------------------------------------- */

/* expect.c: the column of an event as an expectation names it (label,
 * canonical name, or any spelling that parses to it), -1 when none. */
int pmc__column_of(struct pmc_test *t, const char *event);
/* expect.c: judge the case's expectations (budgets from the budget source). */
void pmc__judge_case(struct pmc_test *t);
/* case.c: bounded copy (cut at the buffer's size). */
void pmc__copy_str(char *dst, size_t size, const char *src);
/* region.c: a region by name (the caller's pointer first), NULL if none. */
struct pmc__region *pmc__region_named(struct pmc_test *t, const char *name);
/* region.c: each path's overhead, before the repetitions. */
void pmc__measure_overhead(struct pmc_test *t);
/* Leave the span from a pause to its resume out of the open region's
 * sample (region.c; the Google Benchmark adapter's PauseTiming). */
void pmc__test_region_pause(struct pmc_test *t);
/* Make a region before its first execution, with room for attribution. */
void pmc__region_prepare(struct pmc_test *t, const char *name);
void pmc__test_region_resume(struct pmc_test *t);
/* control.c: end the case now with verdict v. */
__attribute__((noreturn, format(printf, 3, 4))) void
pmc__test_end_now(struct pmc_test *t, enum pmc_verdict v, const char *fmt, ...);
/* region.c: make every raw row final. */
void pmc__settle_all(struct pmc_test *t);
/* region.c: room for the measured samples, after the warm-up. */
void pmc__reserve_samples(struct pmc_test *t);
/* region.c: around each repetition's body (the inline path armed, storage
 * reserved; then rows settled and no region left open). */
void pmc__repetition_begin(struct pmc_test *t);
void pmc__repetition_end(struct pmc_test *t);
/* record.c: the finished case's result record. */
int pmc__result_record(struct pmc_test *t, struct pmc__result *r);

/* In a forked case process: keep the case's counter set open past
 * pmc__run_case until pmc__close_deferred(), so the result is reported
 * before the kernel's slow teardown (uprobe unregistration waits for
 * grace periods: ~70 ms per calls: event here). */
void pmc__defer_close(void);
void pmc__close_deferred(void);
int pmc__run_case(const struct pmc_test_def *def, const struct pmc_test_options *opt,
		  enum pmc_backend backend, bool strict, struct pmc__result *out);
/* Effective options: defaults applied, then overrides (reps > 0, timeout > 0). */
void pmc__effective_options(const struct pmc_test_def *def, unsigned reps,
			    double timeout, struct pmc_test_options *out);
/* The sim backend's budget key for a case: arch, valgrind version, cache
 * geometry and the case's compiler build ("sim-x86_64-valgrind-3.19.0-..."). */
void pmc__sim_profile_key(const struct pmc_test_def *def, char *buf, size_t size);
/* Case timeouts are multiplied by this under the sim backend (valgrind
 * runs code 20-100x slower). */
#define PMC__SIM_TIMEOUT_FACTOR 20
/* What the case's events are, from one parse of its list: *hardware, a
 * hardware case (hardware events or requirements); *on_sim, every event
 * can be counted on the sim backend. */
void pmc__case_kinds(const struct pmc_test_def *def, bool *hardware, bool *on_sim);

/* Program name for hints ("record one with: <program> ..."). */
extern const char *pmc__program;
/* argv[0] as the runner was started: the command a message tells to run. */
extern const char *pmc__program_path;
/* The installed budget source, or NULL. */
const struct pmc_budget_source *pmc__budget_source(void);

/* ---- gate.c: hwdb, calibration, comparison ----------------------------------------- */

/* Install the hwdb over dirs (which must outlive the run) as the budget
 * source.  lazy: open it at the first lookup, so that a case measured in a
 * fresh process starts from the same heap whatever the hwdb holds. */
int pmc__hwdb_setup(const char *const *dirs, size_t n, bool lazy, struct pmc_error *err);
struct pmc_hwdb *pmc__hwdb(void);
/* The first --hwdb directory (where --calibrate writes), or NULL. */
const char *pmc__hwdb_first_dir(void);
void pmc__hwdb_teardown(void);
int pmc__calibration_key(const char *backend, const char *choice, char *key, size_t size,
			 char *why, size_t why_size);
/* Where and how --calibrate records budgets. */
struct pmc__calibration {
	const char *dir;      /* the first hwdb directory */
	const char *key;      /* the budget key for CPU-dependent counts */
	bool key_chosen;      /* --calibrate-key given: every budget goes under key */
	double margin_pct;    /* noisy events: over the largest figure seen */
	double tolerance_pct; /* deterministic events: 0 = exact */
	bool layouts;         /* sim: every run had another memory layout */
	size_t *missed;       /* NULL, or counts each budget expectation (or whole
			       * case: skipped, in error) not calibrated */
	size_t exact_runs;     /* sim: deterministic counts come from the first
				* exact_runs runs only; the rest moved the heap,
				* which moves what allocating code executes (0: all) */
	const char *schedules; /* NULL, or the thread schedules the runs went
				* through, in words ("4 thread schedules: ...") */
};
int pmc__calibrate_case(const struct pmc__result *runs, size_t nruns,
			const struct pmc__calibration *cal, FILE *out);
/* gate.c: has run (the first of a calibration) a budget of a noisy count
 * (on sim: cache or branch misses)? */
bool pmc__calibration_noisy(const struct pmc__result *run);
/* After a whole-suite run: budgets (under this run's keys) naming a test that
 * is no case of the program, or a case that was skipped, are gate holes.
 * Prints each with its file:line; returns how many. */
int pmc__budgets_not_run(const struct pmc__results *run, const char *backend, FILE *out);

/* ---- registry.c -------------------------------------------------------------- */

size_t pmc__ncases(void);
const struct pmc_test_def *pmc__case(size_t i);
/* "suite.name" into buf. */
void pmc__full_name(const struct pmc_test_def *def, char *buf, size_t size);
/* Comma-separated globs; a leading '-' excludes.  NULL/empty matches all. */
bool pmc__filter_match(const char *filter, const char *full_name);


/* result.c: a region's attribution rows as JSON ([{function, object,
 * costs: {label: cost}}], the results files' "functions"). */
json_t *pmc__functions_json(const struct pmc__region_rec *g);
/* compare.c: the functions whose own cost of `label` changed most from og to
 * ng ([{function, object, old, new, change, share}]), NULL without
 * attribution on either side, or with rows estimated from statistical perf
 * samples. */
json_t *pmc__attribution(const struct pmc__region_rec *og, const struct pmc__region_rec *ng,
			 const char *label);
/* compare.c: the same function in another run's region (by name and
 * object, then name and object file name, then a unique name), or NULL. */
const struct pmc__fn_rec *pmc__fn_in(const struct pmc__region_rec *g, const struct pmc__fn_rec *f);

/* layout.c: is the difference of one event between calibration's and this
 * run's functions of a region layout alone?  Only string and memory
 * functions changed, each called as many times as before and within
 * per_call counts a call.  up/down: their changes' sums (the budget may be
 * widened by exactly these); why: "memcpy -6 over 40 calls, ...". */
#define PMC__LAYOUT_PER_CALL 48.0
/* case.c: the bound cases use; 0 (--exact-layout): no layout passes. */
extern double pmc__layout_per_call;
/* process.c: this process is a run under callgrind for the functions behind
 * what pmcheck's valgrind tool counted (a cross-check: a budget the tool
 * counted is judged as callgrind's own). */
extern bool pmc__functions_rerun;
struct pmc__layout {
	bool layout;
	size_t functions, others;  /* changed: layout functions, anything else */
	double up, down, other_change;
	char why[400];
};
bool pmc__layout_function(const char *name);
int pmc__layout_review(const struct pmc__region_rec *cal, const struct pmc__region_rec *now,
		       const char *label, double per_call, struct pmc__layout *out);

/* provenance.c: the objects of a process (pmc_objects_loaded) as JSON,
 * what changed between two lists, and the calibration file. */
struct pmc__object_change {
	const char *path, *was, *now; /* was/now NULL: not loaded then */
	bool pmcheck;                 /* one of pmcheck's own libraries */
};
json_t *pmc__objects_json(const struct pmc_object *o, size_t n);
void pmc__jw_objects(struct pmc__jw *w, const struct pmc_object *o, size_t n);
/* One {path, id} of an objects array, the i-th, appended to out[*n] (room
 * for it allocated): -EINVAL with *why when either is missing, -ENOMEM. */
int pmc__object_append(struct pmc_object *out, size_t *n, size_t i, const char *path,
		       const char *id, char *why, size_t size);
int pmc__objects_from_json(json_t *arr, struct pmc_object **out, size_t *n, char *why,
			   size_t size);
/* The libraries (the program itself left out) that differ, matched by file
 * name: at most max changes into ch; their number. */
size_t pmc__objects_diff(const struct pmc_object *was, size_t nwas, const struct pmc_object *now,
			 size_t nnow, struct pmc__object_change *ch, size_t max);
/* "libexpat.so.1: another build than at calibration (build ID .. -> ..)" */
void pmc__object_change_text(const struct pmc__object_change *c, const char *since, char *out,
			     size_t size);
/* The libraries of a case's objects (pmc__result.objects): each but the
 * program (first) and pmcheck's own, with its name and id, and its package
 * when asked; paths[i] is out[i]'s file (borrowed from r).  0 or -ENOMEM;
 * free() both. */
int pmc__libraries_of(const struct pmc__result *r, bool packages, struct pmc_library **out,
		      const char ***paths, size_t *n);
/* A library that differs from the one a budget was calibrated with: was or
 * now has an empty name when it was not loaded then, or is not now. */
struct pmc__library_change {
	struct pmc_library was, now;
	const char *path;  /* now's file, or NULL */
	bool recorded;     /* was is a library line (with its package), not an
			      object of SUITE.calibration.json (build ID only) */
};
/* The libraries of r that differ from those recorded for its case beside
 * budget_source ("FILE:LINE"): at most max into ch; how many there are.
 * The packages of the changed ones are looked up now (the others' never). */
size_t pmc__libraries_changed(const struct pmc__result *r, const char *budget_source,
			      struct pmc__library_change *ch, size_t max);
/* "library libexpat.so.1 changed since calibration (was libexpat1 2.5.0-1,
 * build ID a2f37366bc97; now no package, build ID 17ebad37d62a, PATH)" */
void pmc__library_change_text(const struct pmc__library_change *c, const char *since, char *out,
			      size_t size);
/* What a failed budget says of whose change it was: the libraries that
 * differ from those its case was calibrated with, each with both
 * identities and (sim) its part of the difference, to put before the
 * figures; and pmcheck's own libraries and version, to append.  Malloc'd
 * text, or NULL when there is nothing to say. */
char *pmc__libraries_before(const struct pmc__result *r, const char *budget_source,
			    const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			    const char *label);
char *pmc__provenance_after(const struct pmc__result *r, const char *budget_source,
			    const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			    const char *label);
/* attribution.c: the change of one event from old to g of the functions of
 * one library (its soname, or the file loaded from path; path may be
 * NULL), and of all functions (*total). */
double pmc__change_in_library(const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			      const char *label, const char *name, const char *path, double *total);
/* The running program's file name. */
const char *pmc__program_name(void);
/* budgets/KEY/SUITE.calibration.json: who calibrated a suite's budgets
 * under a key: the program, pmcheck's version, the objects it loaded. */
#define PMC__CALIBRATION_SUFFIX ".calibration.json"
struct pmc__calibration_file {
	char path[PATH_MAX];
	char program[256], pmcheck[64];
	struct pmc_object *objects;
	size_t nobjects;
};
int pmc__beside_budget(const char *budget_source, const char *suffix, char *path, size_t size);
int pmc__calibration_load(const char *budget_source, struct pmc__calibration_file *cf);
void pmc__calibration_release(struct pmc__calibration_file *cf);
/* 0, or -EEXIST with why: the budget was calibrated by another program;
 * or another negative errno with why: the SUITE.calibration.json beside it
 * is not a regular file (a FIFO would have held the run), is unreadable or
 * too large (pmc__hwdb_json_load). */
int pmc__calibration_program_check(const char *budget_source, char *why, size_t size);
/* Before calibrating: 0, or -EEXIST (said on out) when another program owns the file. */
int pmc__calibration_owner(const char *dir, const char *key, const char *suite, FILE *out);
/* Writes the file for a case calibrated now: its objects, and under
 * "sim_engines" the sim engine that counted each case (engine NULL: not sim). */
int pmc__calibration_write(const char *dir, const char *key, const char *suite, const char *test,
			   const char *engine, const struct pmc_object *o, size_t n);
/* The sim engine ("pmcheck", "callgrind") that counted test's budgets in the
 * file beside budget_source, or "" when it does not say (calibrated before
 * pmcheck recorded it, or not on sim). */
const char *pmc__calibration_engine(const char *budget_source, const char *test);

/* gate.c: the file beside a suite's budgets (budgets/KEY/SUITE.ini) that
 * holds, per case and region, the functions calibration measured. */
#define PMC__FUNCTIONS_SUFFIX ".functions.json"


#endif
