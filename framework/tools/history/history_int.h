/* SPDX-License-Identifier: MIT */
/*
 * Inside the history store: what its files share beyond history.h, the
 * commands' interface.  Opening (store.c) and adding (add.c) both write a
 * results file's rows (rows.c): adding a file, and filling a schema-1
 * store's budget checks when it is migrated.
 */
#ifndef PMCHECK_TOOLS_HISTORY_INT_H
#define PMCHECK_TOOLS_HISTORY_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "history.h"

struct pmc__results;

/* Print "pmcheck history: STORE: WHAT: the engine's words", and on
 * PostgreSQL the privileges the role lacks to read (or, with WRITE, to
 * add); PMC_EXIT_ERROR.  history_fail() is this without WRITE. */
int history_store_fail(struct hdb *db, const char *what, bool write);

/* A results file's identity: its length and two 64-bit FNV-1a hashes of
 * its LEN bytes (different offsets), as hex, in OUT (of SIZE bytes). */
void history_digest(const char *text, size_t len, char *out, size_t size);
/* The rows of one results file RS, of the run RUN_ID: every region and
 * event of every case (figures), and every budget check with a figure to
 * pool (budget_checks; PATH names the file in merge's comments).  0, or -1
 * when the store fails (hdb_errmsg says why). */
int history_insert_figures(struct hdb *db, int64_t run_id, const struct pmc__results *rs);
int history_insert_budget_checks(struct hdb *db, int64_t run_id, const struct pmc__results *rs,
				 const char *path);

#endif
