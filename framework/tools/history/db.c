/* SPDX-License-Identifier: MIT */
/*
 * The history store's statement interface (db.h), the part every engine
 * shares (db_engine.h): a target read and its engine picked by its form,
 * an error's words with every password left out, the statement cache, and
 * each call handed to the store's engine (db_sqlite.c, db_pg.c).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "db_engine.h"

/* A file name as it may be printed: control characters as \xNN. */
static char *shown_path(const char *path)
{
	char *out = malloc(4 * strlen(path) + 1), *o = out;

	for (const unsigned char *p = (const unsigned char *)path; out && *p; p++)
		o += *p < 0x20 || *p == 0x7f ? sprintf(o, "\\x%02x", *p) : sprintf(o, "%c", *p);
	if (out)
		*o = '\0';
	return out;
}

int hdb_connect(const char *target, enum hdb_mode mode, struct hdb **out)
{
	struct hdb *db = calloc(1, sizeof(*db));
	char *conn = NULL;
	int rc = 0;

	*out = NULL;
	if (!db)
		return PMC_EXIT_ERROR;
	if (!*target) {
		free(db);
		return cli_usage("history", "--db= is empty: give an SQLite file or a postgresql:// URI");
	}
	rc = hdb_target_parse(target, &db->target);
	if (rc == 1) {
		rc = 0;
		db->name = shown_path(target);
	} else if (rc == 0) {
		db->name = db->target.shown;
		db->target.shown = NULL;
		conn = db->target.conn;
		db->target.conn = NULL;
	}
	if (rc == -1) {
		fprintf(stderr, "pmcheck history: --db: a PostgreSQL connection %s that pmcheck cannot read safely: %s; it is not shown, as it may hold a password\n",
			db->target.uri ? "URI" : "string",
			!db->target.uri ? "write it as keyword=value pairs separated by spaces, a value with spaces in single quotes"
					: "its user name or password holds a reserved character ('@', '/', '?', '#'): percent-encode it (%40, %2F, %3F, %23), or give the password in PGPASSWORD or ~/.pgpass");
		hdb_close(db);
		free(conn);
		return PMC_EXIT_USAGE;
	}
	if (rc || !db->name) {
		hdb_close(db);
		free(conn);
		return PMC_EXIT_ERROR;
	}
	db->engine = hdb_target_is_pg(target) ? &hdb_pg_engine : &hdb_sqlite_engine;
	rc = db->engine->connect(db, conn ? conn : target, mode);
	free(conn);
	if (rc) {
		hdb_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

void hdb_close(struct hdb *db)
{
	if (!db)
		return;
	for (size_t i = 0; i < db->ncache; i++) {
		hdb_finalize(db->cache[i].st);
		free(db->cache[i].sql);
	}
	free(db->cache);
	if (db->conn)
		db->engine->close(db);
	hdb_target_release(&db->target);
	free(db->name);
	free(db);
}

bool hdb_is_pg(const struct hdb *db)
{
	return db->engine == &hdb_pg_engine;
}

const char *hdb_name(const struct hdb *db)
{
	return db->name;
}

const char *hdb_sqlstate(const struct hdb *db)
{
	return db->sqlstate;
}

bool hdb_lost(const struct hdb *db)
{
	return db->engine->lost(db);
}

const char *hdb_errmsg(struct hdb *db)
{
	if (db->engine->errmsg)
		hdb_set_err(db, db->engine->errmsg(db));
	return db->err;
}

int hdb_exec(struct hdb *db, const char *sql)
{
	return db->engine->exec(db, sql);
}

int hdb_begin(struct hdb *db)
{
	return hdb_exec(db, db->engine->begin);
}

int hdb_commit(struct hdb *db)
{
	return hdb_exec(db, "COMMIT");
}

void hdb_rollback(struct hdb *db)
{
	char keep[sizeof(db->err)];

	/* The error that made us roll back is the one to report. */
	memcpy(keep, db->err, sizeof(keep));
	hdb_exec(db, "ROLLBACK");
	memcpy(db->err, keep, sizeof(keep));
}

struct hdb_stmt *hdb_prepare(struct hdb *db, const char *sql)
{
	return db->engine->prepare(db, sql);
}

struct hdb_stmt *hdb_prepare_stream(struct hdb *db, const char *sql)
{
	return db->engine->prepare_stream(db, sql);
}

struct hdb_stmt *hdb_prepare_cached(struct hdb *db, const char *sql)
{
	struct hdb_cached *c;
	struct hdb_stmt *st;

	for (size_t i = 0; i < db->ncache; i++)
		if (!strcmp(db->cache[i].sql, sql)) {
			hdb_reset(db->cache[i].st);
			return db->cache[i].st;
		}
	c = realloc(db->cache, (db->ncache + 1) * sizeof(*c));
	if (!c)
		return NULL;
	db->cache = c;
	if (!(st = hdb_prepare(db, sql)))
		return NULL;
	c[db->ncache].sql = strdup(sql);
	if (!c[db->ncache].sql) {
		hdb_finalize(st);
		return NULL;
	}
	c[db->ncache++].st = st;
	return st;
}

void hdb_bind_text(struct hdb_stmt *st, int i, const char *s)
{
	st->db->engine->bind_text(st, i, s && *s ? s : NULL);
}

void hdb_bind_int(struct hdb_stmt *st, int i, int64_t v)
{
	st->db->engine->bind_int(st, i, v);
}

void hdb_bind_real(struct hdb_stmt *st, int i, double v)
{
	if (isnan(v))
		st->db->engine->bind_null(st, i);
	else
		st->db->engine->bind_real(st, i, v);
}

void hdb_bind_null(struct hdb_stmt *st, int i)
{
	st->db->engine->bind_null(st, i);
}

int hdb_step(struct hdb_stmt *st)
{
	return st->db->engine->step(st);
}

const char *hdb_col_text(struct hdb_stmt *st, int i)
{
	return st->db->engine->col_text(st, i);
}

int64_t hdb_col_int(struct hdb_stmt *st, int i)
{
	return st->db->engine->col_int(st, i);
}

double hdb_col_real(struct hdb_stmt *st, int i)
{
	return st->db->engine->col_real(st, i);
}

bool hdb_col_null(struct hdb_stmt *st, int i)
{
	return st->db->engine->col_null(st, i);
}

void hdb_reset(struct hdb_stmt *st)
{
	st->db->engine->reset(st);
}

void hdb_finalize(struct hdb_stmt *st)
{
	if (st)
		st->db->engine->finalize(st);
}

int64_t hdb_scalar(struct hdb *db, const char *sql, int64_t fallback)
{
	struct hdb_stmt *st = hdb_prepare(db, sql);
	int64_t v = fallback;

	if (st && hdb_step(st) == 1 && !hdb_col_null(st, 0))
		v = hdb_col_int(st, 0);
	hdb_finalize(st);
	return v;
}
