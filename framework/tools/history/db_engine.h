/* SPDX-License-Identifier: MIT */
/*
 * Beneath the statement interface (db.h): what an engine of the history
 * store implements, and the parts of a store every engine shares.
 *
 * db.c is the common part: it reads the target (target.c), picks the engine
 * by the target's form, keeps the statement cache and an error's words, and
 * dispatches each call of db.h to the store's engine.  One file per engine,
 * chosen by the build as libuv chooses by platform: db_sqlite.c (SQLite's C
 * API) and db_pg.c (libpq, loaded with dlopen), or, where the build has no
 * such library, db_sqlite_none.c and db_pg_none.c, whose connect says so.
 */
#ifndef PMCHECK_TOOLS_HISTORY_DB_ENGINE_H
#define PMCHECK_TOOLS_HISTORY_DB_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "target.h"

struct hdb {
	const struct hdb_engine *engine;
	void *conn;               /* the engine's connection; NULL until it connects */
	char *name;               /* the target as it may be printed */
	struct hdb_target target; /* a connection string's parts, its passwords among them */
	char err[512];
	char sqlstate[6]; /* PostgreSQL's code of the last error, or "" */
	/* Statements prepared once and kept until the store is closed. */
	struct hdb_cached {
		char *sql;
		struct hdb_stmt *st;
	} *cache;
	size_t ncache;
};

/* The head of every engine's statement, which embeds it first. */
struct hdb_stmt {
	struct hdb *db;
};

/*
 * An engine.  connect is the only call made before it succeeds (db->conn
 * set); after that every call is made, close once.  A failing call leaves
 * its words in db->err (hdb_set_err), or, for an engine with errmsg, in the
 * engine, asked when hdb_errmsg() is.
 */
struct hdb_engine {
	/* Connect to CONN: the target as the engine reads it (a file name, or
	 * libpq's form of the connection string).  0, or an exit status with
	 * the reason printed, naming db->name. */
	int (*connect)(struct hdb *db, const char *conn, enum hdb_mode mode);
	void (*close)(struct hdb *db);
	const char *(*errmsg)(struct hdb *db); /* NULL: db->err is kept up to date */
	bool (*lost)(const struct hdb *db);
	int (*exec)(struct hdb *db, const char *sql);
	const char *begin; /* a writer's BEGIN */
	struct hdb_stmt *(*prepare)(struct hdb *db, const char *sql);
	struct hdb_stmt *(*prepare_stream)(struct hdb *db, const char *sql);
	void (*bind_text)(struct hdb_stmt *st, int i, const char *s); /* s: NULL for NULL */
	void (*bind_int)(struct hdb_stmt *st, int i, int64_t v);
	void (*bind_real)(struct hdb_stmt *st, int i, double v); /* never NaN */
	void (*bind_null)(struct hdb_stmt *st, int i);
	int (*step)(struct hdb_stmt *st);
	const char *(*col_text)(struct hdb_stmt *st, int i);
	int64_t (*col_int)(struct hdb_stmt *st, int i);
	double (*col_real)(struct hdb_stmt *st, int i);
	bool (*col_null)(struct hdb_stmt *st, int i);
	void (*reset)(struct hdb_stmt *st);
	void (*finalize)(struct hdb_stmt *st); /* frees st */
};

extern const struct hdb_engine hdb_sqlite_engine, hdb_pg_engine;

/* MSG as the store's last error: one line, every password of the target
 * replaced (target.c, beneath both db.c and the engines). */
static inline void hdb_set_err(struct hdb *db, const char *msg)
{
	hdb_target_message(&db->target, msg, db->err, sizeof(db->err));
}

#endif
