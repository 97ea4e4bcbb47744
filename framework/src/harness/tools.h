/* SPDX-License-Identifier: MIT */
/*
 * The harness's interface to the pmcheck command (framework/tools): all of
 * the harness that a command may use, and nothing of the running case.
 *
 *   - the results model: a case's result as a record, a run's results, and
 *     reading and writing results files (result.c, result_read.c);
 *   - the statistics of a sample store (struct pmc__region, stats.c), which
 *     `pmcheck stat` fills with its runs;
 *   - results documents, JUnit and the summary (report.c);
 *   - comparing two runs (compare.c), and which events calibration files as
 *     exact or under "any" (gate.c), for pooling many (tools/hwdb_merge.c);
 *   - child processes with a deadline and files (util/child.h, util/file.h);
 *   - a command's calls: events bound to its objects (core/command.h).
 *
 * The harness itself includes this through harness_int.h.  Like that header
 * it is not installed: libpmcheck exports these symbols for the command,
 * not as public API.  A command that needs more of the harness than this is
 * a change to this header, reviewed as such.
 */
#ifndef PMCHECK_HARNESS_TOOLS_H
#define PMCHECK_HARNESS_TOOLS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <pmcheck/harness.h>
#include <pmcheck/hwdb.h>

#include "../core/command.h"
#include "../util/child.h"
#include "../util/file.h"


/* Statistics of one column. */
struct pmc__stats {
	size_t n;
	uint64_t min, max;
	double median, mean;
	/* The median is an estimate within this relative error (0: exact):
	 * more samples than a window, of more distinct values than kept. */
	double median_error;
	size_t multiplexed;      /* samples with running < enabled */
	size_t not_counted;      /* samples with running == 0 */
	size_t other_threads;    /* samples during which other threads ran, uncounted */
	double running_share;    /* smallest running/enabled over the samples */
};

/* Outcome of one expectation. */
enum pmc__check_status {
	PMC__CHECK_PASS = 0,
	PMC__CHECK_UNBUDGETED,
	PMC__CHECK_INCONCLUSIVE,
	PMC__CHECK_FAIL,
	PMC__CHECK_ERROR,
};

/* ---- result.c, result_read.c: the result of a case as a record ---------------- */

#define PMC__RESULTS_SCHEMA "pmcheck-results/1"

/* How many verdicts there are (enum pmc_verdict, PMC_UNBUDGETED last). */
#define PMC__NVERDICTS (PMC_UNBUDGETED + 1)

/* A verdict's severity for the run: PMC_UNBUDGETED, numbered last, ranks
 * between PMC_KNOWN_ISSUE and PMC_INCONCLUSIVE. */
static inline int pmc__verdict_rank(enum pmc_verdict v)
{
	return v == PMC_UNBUDGETED ? PMC_INCONCLUSIVE : v >= PMC_INCONCLUSIVE ? (int)v + 1 : (int)v;
}

/* Statistics of one event in one region. */
struct pmc__stat_rec {
	char *label;
	size_t n, multiplexed, not_counted, other_threads;
	uint64_t min, max;
	double median, mean;
	uint64_t *values;        /* the first samples, overhead subtracted */
	size_t nvalues;
	size_t summarised;       /* samples the statistics cover beyond values */
	double median_error;     /* relative error of the median (0: exact) */
};

/* One function's own cost in a region, per event of the region: on sim
 * the mean over the executions whose dumps were kept; on perf, for the
 * sampled events, the function's share of the samples times the region's
 * mean count (an estimate), NAN for the events not sampled. */
struct pmc__fn_rec {
	char *name, *object;   /* "(other)", "" for the rest */
	double *cost;          /* nev */
	double calls;          /* sim: calls it received (mean over the dumps); NAN: unknown */
	uint64_t *samples;     /* nev, perf sampling only; else NULL */
};

/* perf: one event sampled in a region (attribution of a failed case). */
struct pmc__sampled_rec {
	char *label;
	uint64_t period, samples, lost, executions;
};

struct pmc__region_rec {
	char *name;
	uint64_t iterations;
	size_t samples;
	size_t nev;
	struct pmc__stat_rec *ev;
	size_t nfns;             /* attribution rows, 0 when none */
	struct pmc__fn_rec *fns;
	size_t nsampled;         /* perf: the events sampled for the rows */
	struct pmc__sampled_rec *sampled;
};

struct pmc__check_rec {
	enum pmc_expect_kind kind;
	enum pmc__check_status status;
	char *region, *event;
	char *per;               /* ratios only, else NULL */
	char *file;
	int line;
	char *message;
	double measured, lo, hi; /* NAN: none, or an open side */
	bool has_statistic;
	enum pmc_stat statistic;
	size_t samples;
	char *budget_source;     /* NULL when not a budget */
	bool per_iteration;      /* measured, lo and hi are per iteration of the region */
	bool gate;               /* unbudgeted while the suite has budgets elsewhere */
	char *layout;            /* sim: passed as layout ("memcpy -6 over 40 calls"), else NULL */
};

struct pmc__event_rec {
	char *label, *name, *kind;
	char *sim_columns;       /* "Ir", "D1mr+D1mw": the sim backend's columns, or NULL */
	char *sim_engine;        /* sim: "pmcheck" or "callgrind", the engine that counted it */
	int group;               /* -1: not opened */
	bool hardware;
	bool has_overhead;
	uint64_t overhead;
};

/* One case's result.  Strings are owned (pmc__result_release frees them). */
struct pmc__result {
	char *name, *suite, *test, *file;
	int line;
	enum pmc_verdict verdict;
	char *reason, *known_issue;         /* NULL when none */
	const char *backend;                /* "perf", "sim" (static), or NULL */
	bool has_options;
	unsigned reps, warmup;
	enum pmc_stat stat;
	bool measuring;                     /* counts events (the guard's business) */
	bool timeout;
	bool has_duration;
	double duration_s, timeout_s;
	char *grouping, *read_path, *sim_profile, *simulated_cpu;
	char *sim_engine;                   /* sim: "pmcheck" or "callgrind", or NULL */
	size_t nevents, nregions, nchecks, nnotes;
	struct pmc__event_rec *events;
	struct pmc__region_rec *regions;
	struct pmc__check_rec *checks;
	char **notes;
	char *output;
	size_t output_truncated;
	struct pmc_object *objects;        /* what the measured process loaded */
	size_t nobjects;
};

/* Results of a run or a file: the cases, and the environment as written. */
struct pmc__results {
	struct pmc__result *cases;
	size_t n, cap;
	json_t *environment;  /* owned reference, or NULL */
	json_t *comparison;   /* owned reference, or NULL */
};

const char *pmc__check_kind_name(enum pmc_expect_kind k);
/* The kind (PMC_EXPECT_KIND_*) or status (PMC__CHECK_*) a name stands for,
 * or -1. */
int pmc__check_kind_of(const char *s);
int pmc__check_status_of(const char *s);
const char *pmc__check_status_name(enum pmc__check_status s);
/* Verdict from its name, -1 if unknown. */
int pmc__verdict_from_name(const char *s);
void pmc__result_release(struct pmc__result *r);
void pmc__results_release(struct pmc__results *rs);
/* Move *r into rs (r is left empty); 0 or -ENOMEM. */
int pmc__results_add(struct pmc__results *rs, struct pmc__result *r);
json_t *pmc__result_to_json(const struct pmc__result *r);
/* The same as compact JSON text (malloc'd), written without jansson; NULL
 * when memory ran out. */
char *pmc__result_to_text(const struct pmc__result *r);
/* Read and check one case; -EINVAL with "WHERE.FIELD: what is wrong" in why. */
int pmc__result_from_json(json_t *o, struct pmc__result *r, const char *where, char *why,
			  size_t size);
/* Read a results file and check every case; -EINVAL with "FILE: FIELD: what
 * is wrong" in why. */
int pmc__results_load(const char *path, struct pmc__results *rs, char *why, size_t size);
/* The same, and the bytes it read (malloc'd, *nbytes long, not terminated)
 * handed to the caller on success: what is digested is what was read. */
int pmc__results_load_text(const char *path, struct pmc__results *rs, char **bytes, size_t *nbytes,
			   char *why, size_t size);
/* The largest results file read: 256 MiB, far above any run's (a case's
 * record is a few kilobytes); a larger one is refused unread. */
#define PMC__RESULTS_MAX_BYTES ((size_t)256 << 20)
/* A results document from its text (shown names it in messages): a key
 * given twice in one object, a case given twice, or any field that
 * contradicts another is refused; -EINVAL with the reason in why. */
int pmc__results_parse(const char *text, size_t len, const char *shown, struct pmc__results *rs,
		       char *why, size_t size);
/* registry.c: does a case's full name (suite.name) match --filter's
 * comma-separated globs (a leading '-' excludes)?  NULL or "" matches all. */
bool pmc__filter_match(const char *filter, const char *full_name);
const char *pmc__results_signature(const struct pmc__results *rs);
const char *pmc__results_backend(const struct pmc__results *rs);
const struct pmc__result *pmc__results_find(const struct pmc__results *rs, const char *name);
const struct pmc__region_rec *pmc__result_region(const struct pmc__result *r, const char *name);
const struct pmc__stat_rec *pmc__region_event(const struct pmc__region_rec *g, const char *label);
/* The check of this kind, region and event (checks are matched by name). */
const struct pmc__check_rec *pmc__result_check(const struct pmc__result *r,
					       enum pmc_expect_kind kind, const char *region,
					       const char *event);
/* The event a check names (by label or canonical name), or NULL. */
const struct pmc__event_rec *pmc__result_event(const struct pmc__result *r, const char *event);

/* result.c: what follows the last '/' of a path (the whole path without one). */
const char *pmc__file_part(const char *path);
/* result.c: o[key] when it is a string, else "" (never NULL). */
const char *pmc__jstr(json_t *o, const char *key);

/* ---- stats.c: a sample store's statistics (pure) ---------------------------- */

/* Each column's statistics of region r, computed once (kept in r until
 * its rows change); a column past r->nev reads as no samples. */
const struct pmc__stats *pmc__region_stats(struct pmc__region *r, size_t ev);
/* Figure named by stat. */
double pmc__stat_pick(const struct pmc__stats *s, enum pmc_stat stat);
const char *pmc__stat_name(enum pmc_stat stat);
/* Append one sample row (a full window is summarised first); returns 0
 * or -ENOMEM. */
int pmc__region_append(struct pmc__region *r, const struct pmc_measurement *m);
void pmc__region_release(struct pmc__region *r);
/* judge.c: counts as integers ("2759660", never "2.75966e+06"), fractions to 6 digits. */
void pmc__fmt_num(char *buf, size_t size, double x);

/* ---- report.c --------------------------------------------------------------- */

/* Text read from a file or made by a case, for a terminal: one rule for
 * every output that shows it (the runner's summary, hwdb check): a control
 * character other than tab and newline is written as \xHH (an escape
 * sequence would drive the terminal), and a newline goes on under indent
 * (no line of its own can be forged). */
void pmc__term_text(FILE *f, const char *s, const char *indent);

struct pmc__run_info {
	const char *program;
	const char *backend;
	int argc;
	char **argv;
	double duration_s;
};

/* The environment object of a results document.  Its git_commit is the
 * first of PMCHECK_GIT_COMMIT, GITHUB_SHA, CI_COMMIT_SHA that is a commit
 * (pmc__commit_ok), else the working directory's HEAD, else null. */
json_t *pmc__environment(const char *backend);
/* Is s a commit as results files record it: 4 to 64 hexadecimal digits? */
bool pmc__commit_ok(const char *s);
/* Whole document {schema, environment, cases, summary[, comparison]}; the
 * environment is rs's, or this machine's for info->backend. */
json_t *pmc__results_doc(const struct pmc__results *rs, const struct pmc__run_info *info);
/* Summary object counting the verdicts of the cases. */
json_t *pmc__summary(const struct pmc__results *rs);
/* JUnit XML text (malloc'd). */
char *pmc__junit(const struct pmc__results *rs, const char *program, double seconds);
/* Write a JSON document atomically. */
int pmc__write_json(const char *path, json_t *doc);
/*
 * jsonio.c: a JSON file of an hwdb (SUITE.calibration.json,
 * SUITE.functions.json) read as every hwdb file is: a regular file (or a
 * link to one), opened without waiting (a FIFO's open would wait for a
 * writer forever), of at most 64 MiB.  0 with *doc (NULL when the text is
 * not JSON: no record, as before); -ENOENT when nothing is at path; else a
 * negative errno with why naming the path, what it is and the fix.
 */
int pmc__hwdb_json_load(const char *path, json_t **doc, char *why, size_t size);

/*
 * jsonio.c: JSON written as text, with no tree: a case on the sim backend
 * writes its result for the runner with it, so that the process under
 * valgrind runs none of jansson (every line of code it runs the first time
 * is translated, and jansson's building and dumping were a tenth of an
 * empty case's).  Values are separated and keys quoted as they come; a
 * string's invalid UTF-8 is written as the text \xHH.  A failed
 * allocation is kept and reported by pmc__jw_take.
 */
/* jsonio.c: text grown as it is written (NUL-terminated); a failed
 * allocation sets oom and drops the rest. */
struct pmc__text {
	char *p;
	size_t len, cap;
	bool oom;
};
void pmc__text_put(struct pmc__text *t, const char *s, size_t n);

struct pmc__jw {
	struct pmc__text text;
	unsigned items[32]; /* values so far in each open container */
	unsigned depth;
	bool after_key, failed; /* failed: a container too deep */
};
void pmc__jw_open(struct pmc__jw *w, char bracket);  /* '{' or '[' */
void pmc__jw_close(struct pmc__jw *w, char bracket); /* '}' or ']' */
void pmc__jw_key(struct pmc__jw *w, const char *key);
void pmc__jw_str(struct pmc__jw *w, const char *s); /* NULL: "" */
void pmc__jw_int(struct pmc__jw *w, long long v);
void pmc__jw_real(struct pmc__jw *w, double v); /* not finite: null */
void pmc__jw_bool(struct pmc__jw *w, bool b);
void pmc__jw_null(struct pmc__jw *w);
/* The text (malloc'd; the writer is reset), or NULL when an allocation
 * failed or a container is still open. */
char *pmc__jw_take(struct pmc__jw *w);
/* The same parsed (jansson), for a document built around it. */
json_t *pmc__jw_json(struct pmc__jw *w);

/* ---- compare.c, gate.c: two runs compared; what pooling needs ------------- */

/* gate.c: does the event of result r (spelled as its check spells it)
 * repeat exactly: on sim, executed-work columns; on perf, breakpoint and
 * uprobe counts and the model's deterministic list (model may be NULL). */
bool pmc__event_deterministic(const struct pmc__result *r, const struct pmc__event_rec *ev,
			      const char *spelling, const struct pmc_hwdb_model *model);
/* gate.c: calls, breakpoint hits and page faults: the same on any CPU
 * model, so budgets go under "any". */
bool pmc__cpu_independent(const struct pmc__event_rec *e);
/* Tolerances of a comparison: one for every event, and per event. */
#define PMC__MAX_TOLERANCES 16
struct pmc__tolerance {
	double all;
	bool all_set;
	size_t n;
	char event[PMC__MAX_TOLERANCES][PMC_EVENT_NAME_MAX];
	double pct[PMC__MAX_TOLERANCES];
};
/* Add "PCT" (every event) or "EVENT=PCT"; -1 with *why on a bad spec. */
int pmc__tolerance_add(struct pmc__tolerance *t, const char *spec, char *why, size_t size);
json_t *pmc__compare(const struct pmc__results *old, const struct pmc__results *new,
		     const struct pmc__tolerance *tols, bool force);
/* Exit status of a comparison: a regression, or (unless allow_missing) a
 * baseline figure this run did not measure, is PMC_EXIT_REGRESSION; the
 * cases that did not run are named on f. */
int pmc__compare_status(json_t *rep, bool allow_missing, FILE *f);
/* The cases of a comparison whose counts moved (a regression, an
 * improvement, a change within the tolerance, a figure new or gone), one
 * name per line on f (NULL: only counted), each once; their number. */
size_t pmc__compare_moved(json_t *rep, FILE *f);
void pmc__print_compare(FILE *f, json_t *report);
char *pmc__compare_markdown(json_t *report);
/* The regressions of one case in a comparison, with the functions behind
 * them, as lines of text (JUnit); NULL when it has none. */
char *pmc__compare_case_text(json_t *report, const char *case_name);

/* case_io.c: a log callback (pmc_log_set) that writes each message to
 * stderr on a line of its own; ctx, when not NULL, points to the lowest
 * level written (0 debug, 1 info, 2 warning). */
void pmc__log_stderr(int level, const char *message, void *ctx);

#endif
