/* SPDX-License-Identifier: MIT */
/*
 * The history store on SQLite (db_engine.h): a file, through SQLite's C
 * API.  SQL comes with $1, $2 ... for parameters, rewritten to ?1, ?2.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "../cli.h"
#include "db_engine.h"

struct lite_stmt {
	struct hdb_stmt base;
	sqlite3_stmt *s;
};

#define LITE(db) ((sqlite3 *)(db)->conn)
#define STMT(st) (((struct lite_stmt *)(st))->s)

/* An SQLite store to read must be there, a regular file, and not empty: a
 * reading command never makes one (a mistyped --db would pass a CI step). */
static int lite_check_exists(const char *target, const char *name)
{
	struct stat sb;

	if (stat(target, &sb) != 0) {
		fprintf(stderr, "pmcheck history: %s: no such history store: %s (history add makes one; check --db or PMCHECK_HISTORY_DB)\n",
			name, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "pmcheck history: %s: not a history store: not a regular file; give the SQLite file history add made\n",
			name);
		return PMC_EXIT_ERROR;
	}
	if (sb.st_size == 0) {
		fprintf(stderr, "pmcheck history: %s: not a history store: an empty file; give the SQLite file history add made\n",
			name);
		return PMC_EXIT_ERROR;
	}
	return 0;
}

static int lite_connect(struct hdb *db, const char *file, enum hdb_mode mode)
{
	sqlite3 *lite = NULL;
	int rc;

	if (mode == HDB_READ && (rc = lite_check_exists(file, db->name)) != 0)
		return rc;
	/* A store to add to is made if missing, but what is there must be a
	 * regular file: SQLite said only "disk I/O error" of a FIFO or device. */
	if (mode == HDB_WRITE) {
		struct stat sb;

		if (stat(file, &sb) == 0 && !S_ISREG(sb.st_mode)) {
			fprintf(stderr, "pmcheck history: %s: not a history store: %s, not a regular file; give the SQLite file history add made, or a new name\n",
				db->name,
				S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a FIFO" :
				S_ISCHR(sb.st_mode) ? "a character device" : S_ISBLK(sb.st_mode) ? "a block device" :
				S_ISSOCK(sb.st_mode) ? "a socket" : "something else");
			return PMC_EXIT_ERROR;
		}
	}
	if (sqlite3_open_v2(file, &lite,
			    SQLITE_OPEN_READWRITE | (mode == HDB_WRITE ? SQLITE_OPEN_CREATE : 0),
			    NULL) != SQLITE_OK) {
		fprintf(stderr, "pmcheck history: %s: cannot open the history database: %s\n", db->name,
			lite ? sqlite3_errmsg(lite) : "out of memory");
		sqlite3_close(lite);
		return PMC_EXIT_ERROR;
	}
	sqlite3_busy_timeout(lite, 120000);
	db->conn = lite;
	return 0;
}

static void lite_close(struct hdb *db)
{
	sqlite3_close(LITE(db));
}

static const char *lite_errmsg(struct hdb *db)
{
	return sqlite3_errmsg(LITE(db));
}

static bool lite_lost(const struct hdb *db)
{
	(void)db;
	return false;
}

static int lite_exec(struct hdb *db, const char *sql)
{
	return sqlite3_exec(LITE(db), sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
}

/* $N -> ?N outside quoted strings. */
static char *to_sqlite_params(const char *sql)
{
	char *out = strdup(sql);
	bool quoted = false;

	for (char *p = out; p && *p; p++) {
		if (*p == '\'')
			quoted = !quoted;
		else if (!quoted && *p == '$' && isdigit((unsigned char)p[1]))
			*p = '?';
	}
	return out;
}

static struct hdb_stmt *lite_prepare(struct hdb *db, const char *sql)
{
	struct lite_stmt *st = calloc(1, sizeof(*st));
	char *lite_sql;
	int rc;

	if (!st) {
		hdb_set_err(db, "out of memory");
		return NULL;
	}
	st->base.db = db;
	lite_sql = to_sqlite_params(sql);
	rc = lite_sql ? sqlite3_prepare_v2(LITE(db), lite_sql, -1, &st->s, NULL) : SQLITE_NOMEM;
	free(lite_sql);
	if (rc != SQLITE_OK) {
		free(st);
		return NULL;
	}
	return &st->base;
}

static void lite_bind_text(struct hdb_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(STMT(st), i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(STMT(st), i);
}

static void lite_bind_int(struct hdb_stmt *st, int i, int64_t v)
{
	sqlite3_bind_int64(STMT(st), i, v);
}

static void lite_bind_real(struct hdb_stmt *st, int i, double v)
{
	sqlite3_bind_double(STMT(st), i, v);
}

static void lite_bind_null(struct hdb_stmt *st, int i)
{
	sqlite3_bind_null(STMT(st), i);
}

static int lite_step(struct hdb_stmt *st)
{
	int rc = sqlite3_step(STMT(st));

	return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

static const char *lite_col_text(struct hdb_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(STMT(st), i);
}

static int64_t lite_col_int(struct hdb_stmt *st, int i)
{
	return sqlite3_column_int64(STMT(st), i);
}

static double lite_col_real(struct hdb_stmt *st, int i)
{
	return sqlite3_column_double(STMT(st), i);
}

static bool lite_col_null(struct hdb_stmt *st, int i)
{
	return sqlite3_column_type(STMT(st), i) == SQLITE_NULL;
}

static void lite_reset(struct hdb_stmt *st)
{
	sqlite3_reset(STMT(st));
}

static void lite_finalize(struct hdb_stmt *st)
{
	sqlite3_finalize(STMT(st));
	free(st);
}

const struct hdb_engine hdb_sqlite_engine = {
	.connect = lite_connect,
	.close = lite_close,
	.errmsg = lite_errmsg,
	.lost = lite_lost,
	.exec = lite_exec,
	.begin = "BEGIN IMMEDIATE", /* the write lock at once */
	.prepare = lite_prepare,
	.prepare_stream = lite_prepare, /* rows come one at a time anyway */
	.bind_text = lite_bind_text,
	.bind_int = lite_bind_int,
	.bind_real = lite_bind_real,
	.bind_null = lite_bind_null,
	.step = lite_step,
	.col_text = lite_col_text,
	.col_int = lite_col_int,
	.col_real = lite_col_real,
	.col_null = lite_col_null,
	.reset = lite_reset,
	.finalize = lite_finalize,
};
