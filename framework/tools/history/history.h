/* SPDX-License-Identifier: MIT */
/*
 * The history store's interface to the commands: `pmcheck history`
 * (tools/cmd_history.c) and `pmcheck hwdb merge --from-history`
 * (tools/cmd_hwdb.c).  Beneath it, in this folder: the store opened and
 * its schema (store.c), files added (add.c, rows.c), one commit's runs
 * (merge.c), the series read (load.c), their change points (changes.c over
 * changepoint.c) and the page (report.c), on SQLite or PostgreSQL through
 * one statement interface (db.h).
 *
 * Schema 3: files (one row per results file, by content), runs (a file's
 * environment), figures (every region and event's statistics, for trends;
 * on sim, the case's profile and engine) and budget_checks (every budget
 * expectation's judged figure, with what decides its hwdb key, for
 * merging).  An older store is migrated when opened to write: from schema
 * 1, budget_checks is filled from each file still at its path with the
 * same bytes.
 */
#ifndef PMCHECK_TOOLS_HISTORY_H
#define PMCHECK_TOOLS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "changepoint.h"
#include "db.h"

#define HISTORY_DEFAULT "pmcheck-history.sqlite"

struct pmc__merge;

/* Open TARGET (an SQLite file, or a PostgreSQL connection string) and check
 * its schema version; 0, or an exit status with the reason printed.  To
 * read (HDB_READ), the store must exist, be pmcheck's, of this schema and
 * whole (SQLite: quick_check); it is never made or changed.  To write
 * (HDB_WRITE), it is made when new and migrated when older, and an SQLite
 * store must pass integrity_check first. */
int history_open(const char *target, enum hdb_mode mode, struct hdb **out);
/* Print "pmcheck history: STORE: WHAT: the engine's words"; PMC_EXIT_ERROR. */
int history_fail(struct hdb *db, const char *what);
/* Add every results file of PATHS (a file, or a directory's regular *.json
 * files, sorted), each once by content, to the store TARGET, opened (and
 * made) at the first file that reads.  A file that does not read is named
 * and skipped (exit 2 at the end); a store that fails (a lost server, a
 * full disk) stops the add at once with one message (exit 2); every file
 * is added whole or not at all.  No results file at all: exit 1. */
int history_add(const char *target, char *const *paths, size_t npaths);
/* How many commits of the store start with PREFIX; -1 on error. */
int history_commits_matching(struct hdb *db, const char *prefix);
/* The static page (DIR/index.html). */
int history_report(struct hdb *db, const char *dir);
/* Pool the budget figures of one commit's runs (commit: a prefix of the
 * git commit, or NULL for the newest commit in the store) into m->dir. */
int history_merge(struct hdb *db, const struct pmc__merge *m, const char *commit, FILE *out);

/* The store's series in memory (load.c). */
struct history_commit {
	char *name;        /* the git commit, or a run's date when it names none */
	char *date;        /* its first run's date */
	int64_t first_run; /* its first run's id (after the date, the order) */
	size_t rank;       /* its place in the store's order; commits[] is by rank */
	bool has_commit;
};

struct history_line {
	char *model, *backend; /* hwdb's model of the signature (or the signature) */
};

struct history_point {
	size_t commit;  /* its commit's rank */
	double value;   /* the median of the commit's whole figures on this line */
	size_t runs;    /* how many runs the point stands for */
	bool failed;    /* one of them FAILed */
	bool partial;   /* every one of them was partial (multiplexed, not counted) */
};

struct history_series {
	char *case_name, *region, *event;
	size_t line;
	struct history_point *points; /* in commit order */
	size_t npoints;
	bool agree;    /* every commit's whole figures were one value */
	double lo, hi; /* the latest run's bounds (NAN: none) */
};

struct history_data {
	struct history_commit *commits;
	size_t ncommits;
	struct history_line *lines;
	size_t nlines;
	struct history_series *series; /* by case, region, event, model, backend */
	size_t nseries;
};

struct history_filter {
	const char *case_name, *event; /* NULL: every one */
};

/* Read the store's series (0, or an exit status with the reason printed);
 * the caller releases *d. */
int history_load(struct hdb *db, const struct history_filter *f, struct history_data *d);
void history_data_release(struct history_data *d);

/* Where one series moved (changes.c). */
struct history_change {
	char *case_name, *region, *event, *model, *backend;
	char *commit;         /* the first commit at the new level */
	char *previous;       /* the commit before it in the series */
	size_t rank;          /* the commit's place in the store's order */
	double before, after; /* the medians of the levels before and after */
	double change;        /* (after - before) / |before| */
	double p_value;       /* the permutation test's; 0 for an exact series */
	bool exact;           /* found as an exact series' change */
	bool regression;      /* the count went up */
	size_t index, points; /* its position in the series, of how many */
};

struct history_changes_options {
	struct history_filter filter;
	struct cp_options cp;
	double min_change; /* a noisy series' smallest change worth reporting (relative) */
};

#define HISTORY_DEFAULT_MIN_CHANGE 0.005

/* The change points of the loaded series (partial points left out); 0, or
 * -1 out of memory.  *out is the caller's (history_changes_free); *nseries:
 * how many series had two points or more. */
int history_changes_of(const struct history_data *d, const struct history_changes_options *o,
		       struct history_change **out, size_t *n, size_t *nseries);
void history_changes_free(struct history_change *c, size_t n);
/* The full name of the one commit PREFIX names (the caller's); returns how
 * many commits it names, -1 on error. */
int history_commit_named(struct hdb *db, const char *prefix, char **full);

#endif
