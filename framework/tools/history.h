/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history's store (history_store.c), on SQLite or PostgreSQL
 * (history_db.h), shared by its command (cmd_history.c: add, show,
 * changes), its page (history_report.c), its change points
 * (history_changes.c) and `pmcheck hwdb merge --from-history` (cmd_hwdb.c).
 *
 * Schema 2: files (one row per results file, by content), runs (a file's
 * environment), figures (every region and event's statistics, for trends)
 * and budget_checks (every budget expectation's judged figure, with what
 * decides its hwdb key, for merging).  A schema-1 store is migrated when
 * opened: budget_checks is filled from each file still at its path with
 * the same bytes.
 */
#ifndef PMCHECK_TOOLS_HISTORY_H
#define PMCHECK_TOOLS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "changepoint.h"
#include "history_db.h"

#define HISTORY_DEFAULT "pmcheck-history.sqlite"

struct pmc__merge;

/* Open TARGET (an SQLite file, or a postgresql:// URI), creating the store
 * when new and migrating it when older, and check its schema version; 0,
 * or an exit status with the reason printed. */
int history_open(const char *target, struct hdb **out);
/* Print "pmcheck history: STORE: WHAT: the engine's words"; PMC_EXIT_ERROR. */
int history_fail(struct hdb *db, const char *what);
/* Add FILE, or every *.json of DIR (sorted), each once by content. */
int history_add_path(struct hdb *db, const char *path, size_t *added, size_t *present);
/* How many commits of the store start with PREFIX; -1 on error. */
int history_commits_matching(struct hdb *db, const char *prefix);
/* The static page (DIR/index.html). */
int history_report(struct hdb *db, const char *dir);
/* Pool the budget figures of one commit's runs (commit: a prefix of the
 * git commit, or NULL for the newest commit in the store) into m->dir. */
int history_merge(struct hdb *db, const struct pmc__merge *m, const char *commit, FILE *out);

/* Where one series moved (history_changes.c). */
struct history_change {
	char *case_name, *region, *event, *model, *backend;
	char *commit;         /* the first commit at the new level */
	char *previous;       /* the commit before it in the series */
	char *order;          /* the commit's place in the store's order (sorts) */
	double before, after; /* the medians of the levels before and after */
	double change;        /* (after - before) / |before| */
	double p_value;       /* the permutation test's; 0 for an exact series */
	bool exact;           /* found as an exact series' change */
	bool regression;      /* the count went up */
	size_t index, points; /* its position in the series, of how many */
};

struct history_changes_options {
	const char *case_name, *event; /* NULL: every one */
	struct cp_options cp;
	double min_change; /* a noisy series' smallest change worth reporting (relative) */
};

#define HISTORY_DEFAULT_MIN_CHANGE 0.005

/* Every change point of every series matching the options; 0, or an exit
 * status with the reason printed.  *out is the caller's
 * (history_changes_free). */
int history_changes(struct hdb *db, const struct history_changes_options *o,
		    struct history_change **out, size_t *n, size_t *nseries);
void history_changes_free(struct history_change *c, size_t n);
/* The temporary table models (signature -> hwdb model) the queries join. */
int history_map_models(struct hdb *db);
/* The place in the store's order of the one commit PREFIX names (*key, *full:
 * the caller's); returns how many commits it names, -1 on error. */
int history_commit_order(struct hdb *db, const char *prefix, char **key, char **full);

#endif
