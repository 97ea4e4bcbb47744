/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history's store (history_store.c), shared by its command
 * (cmd_history.c: add, show), its page (history_report.c) and
 * `pmcheck hwdb merge --from-history` (cmd_hwdb.c).
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

#include <stddef.h>
#include <stdio.h>

#include <sqlite3.h>

#define HISTORY_DEFAULT "pmcheck-history.sqlite"

struct pmc__merge;

/* Open (creating when new, migrating when older) and check the schema
 * version; 0, or an exit status with the reason printed. */
int history_open(const char *path, sqlite3 **out);
/* Print "pmcheck history: PATH: WHAT: sqlite's words"; PMC_EXIT_ERROR. */
int history_fail(sqlite3 *db, const char *path, const char *what);
/* Add FILE, or every *.json of DIR (sorted), each once by content. */
int history_add_path(sqlite3 *db, const char *dbpath, const char *path, size_t *added,
		     size_t *present);
/* The static page (DIR/index.html). */
int history_report(sqlite3 *db, const char *dbpath, const char *dir);
/* Pool the budget figures of one commit's runs (commit: a prefix of the
 * git commit, or NULL for the newest commit in the store) into m->dir. */
int history_merge(sqlite3 *db, const char *dbpath, const struct pmc__merge *m, const char *commit,
		  FILE *out);

#endif
