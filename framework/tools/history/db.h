/* SPDX-License-Identifier: MIT */
/*
 * The history store's connection: SQLite (a file) or PostgreSQL (libpq), one
 * statement interface over both, so every history command reads and writes
 * the same SQL on either.  db.c is the common part; each engine is a file
 * of its own beneath it (db_engine.h: db_sqlite.c, db_pg.c).
 *
 * SQL is written once, with $1, $2 ... for parameters (rewritten to ?1, ?2
 * for SQLite) and types both understand (BIGINT, DOUBLE PRECISION, TEXT).
 * Where the two differ (schema versions, the id column, locking), the
 * caller asks hdb_is_pg().
 */
#ifndef PMCHECK_TOOLS_HISTORY_DB_H
#define PMCHECK_TOOLS_HISTORY_DB_H

#include <stdbool.h>
#include <stdint.h>

struct hdb;
struct hdb_stmt;

/* How a store is opened: to read (an SQLite file must exist and is never
 * made) or to write (made when missing). */
enum hdb_mode { HDB_READ, HDB_WRITE };

/* A TARGET is a PostgreSQL connection string by its form: a URI whose
 * scheme is postgresql:// or postgres:// in any case, or a libpq keyword
 * string ("host=... dbname=..."); anything else is an SQLite file.  0, or
 * an exit status with the reason printed: PMC_EXIT_USAGE for an empty
 * TARGET or a connection string that cannot be read safely.  No password
 * of the string is ever printed, nor kept in hdb_name() or hdb_errmsg(). */
int hdb_connect(const char *target, enum hdb_mode mode, struct hdb **out);
void hdb_close(struct hdb *db);
bool hdb_is_pg(const struct hdb *db);
/* The target as it may be printed: a URI's password is left out. */
const char *hdb_name(const struct hdb *db);
/* The last error's words, one line. */
const char *hdb_errmsg(struct hdb *db);
/* PostgreSQL's SQLSTATE of the last error ("42501": a permission), or "". */
const char *hdb_sqlstate(const struct hdb *db);
/* The connection to the server is gone (nothing more can be done). */
bool hdb_lost(const struct hdb *db);
/* Statements without parameters or rows (several, separated by ';'). */
int hdb_exec(struct hdb *db, const char *sql);
/* A writer's transaction: SQLite takes its write lock at once (IMMEDIATE). */
int hdb_begin(struct hdb *db);
int hdb_commit(struct hdb *db);
void hdb_rollback(struct hdb *db);

/* NULL on error (hdb_errmsg says why). */
struct hdb_stmt *hdb_prepare(struct hdb *db, const char *sql);
/* A query whose rows are read once, in order, and may be many: on
 * PostgreSQL a cursor fetched a page at a time (no other statement may run
 * on the store until it is finalized); on SQLite, hdb_prepare. */
struct hdb_stmt *hdb_prepare_stream(struct hdb *db, const char *sql);
/* The same, kept by the store for the next caller with the same SQL, reset;
 * the store finalizes it when closed (never hdb_finalize it). */
struct hdb_stmt *hdb_prepare_cached(struct hdb *db, const char *sql);
void hdb_bind_text(struct hdb_stmt *st, int i, const char *s); /* NULL or "": NULL */
void hdb_bind_int(struct hdb_stmt *st, int i, int64_t v);
void hdb_bind_real(struct hdb_stmt *st, int i, double v); /* NaN: NULL */
void hdb_bind_null(struct hdb_stmt *st, int i);
/* 1: a row, 0: done, -1: an error. */
int hdb_step(struct hdb_stmt *st);
/* Columns of the current row; a text stays valid until the next step. */
const char *hdb_col_text(struct hdb_stmt *st, int i); /* NULL for NULL */
int64_t hdb_col_int(struct hdb_stmt *st, int i);
double hdb_col_real(struct hdb_stmt *st, int i);
bool hdb_col_null(struct hdb_stmt *st, int i);
/* Run again with new bindings (the old ones stay until replaced). */
void hdb_reset(struct hdb_stmt *st);
void hdb_finalize(struct hdb_stmt *st); /* NULL: nothing */

/* A statement that returns one integer (count(*), a version): the value,
 * or fallback when it fails or returns no row. */
int64_t hdb_scalar(struct hdb *db, const char *sql, int64_t fallback);

#endif
