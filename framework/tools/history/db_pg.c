/* SPDX-License-Identifier: MIT */
/*
 * The history store on PostgreSQL (db_engine.h), through libpq, loaded with
 * dlopen when a PostgreSQL store is opened.  Compiled where the build found
 * libpq's headers; elsewhere db_pg_none.c stands in.
 *
 * Statements run with text parameters (PQexecParams); a text parameter is
 * sent as type text so that expressions such as length($1) resolve, and
 * numbers are sent untyped for the server to infer.  A statement run a
 * second time is prepared on the server once, so adding a file's figures
 * costs one round trip per row, not a parse.  Rows come back whole (one
 * PGresult); the largest query, the report's, holds each figure once.  A
 * streamed query is a cursor fetched a page at a time.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "../cli.h"
#include "db_engine.h"

/* libpq is loaded when a PostgreSQL store is opened, not at start: it
 * brings 24 libraries (TLS, Kerberos, LDAP) whose loading cost every
 * pmcheck command 14 ms (8 -> 22 ms to start a program linked with it). */
#define PQ_FUNCTIONS(X)                                                                    \
	X(PQclear) X(PQconnectdbParams) X(PQerrorMessage) X(PQexec) X(PQexecParams)          \
	X(PQexecPrepared) X(PQfinish) X(PQgetisnull) X(PQgetvalue) X(PQntuples) X(PQprepare) \
	X(PQresultErrorMessage) X(PQresultStatus) X(PQsetNoticeProcessor) X(PQstatus)        \
	X(PQtransactionStatus) X(PQresultErrorField)
static struct {
#define PQ_MEMBER(name) __typeof__(name) *name;
	PQ_FUNCTIONS(PQ_MEMBER)
#undef PQ_MEMBER
} pq;
/* A statement that never ran has no result to clear. */
#define PQclear(res) ((res) ? pq.PQclear(res) : (void)0)
#define PQconnectdbParams(...) pq.PQconnectdbParams(__VA_ARGS__)
#define PQerrorMessage(...) pq.PQerrorMessage(__VA_ARGS__)
#define PQexec(...) pq.PQexec(__VA_ARGS__)
#define PQexecParams(...) pq.PQexecParams(__VA_ARGS__)
#define PQexecPrepared(...) pq.PQexecPrepared(__VA_ARGS__)
#define PQfinish(...) pq.PQfinish(__VA_ARGS__)
#define PQgetisnull(...) pq.PQgetisnull(__VA_ARGS__)
#define PQgetvalue(...) pq.PQgetvalue(__VA_ARGS__)
#define PQntuples(...) pq.PQntuples(__VA_ARGS__)
#define PQprepare(...) pq.PQprepare(__VA_ARGS__)
#define PQresultErrorMessage(...) pq.PQresultErrorMessage(__VA_ARGS__)
#define PQresultStatus(...) pq.PQresultStatus(__VA_ARGS__)
#define PQsetNoticeProcessor(...) pq.PQsetNoticeProcessor(__VA_ARGS__)
#define PQstatus(...) pq.PQstatus(__VA_ARGS__)
#define PQtransactionStatus(...) pq.PQtransactionStatus(__VA_ARGS__)
#define PQresultErrorField(...) pq.PQresultErrorField(__VA_ARGS__)

struct pg_conn {
	PGconn *c;
	unsigned next_name; /* server-side prepared statements and cursors: s1, s2, ... */
};

struct pg_stmt {
	struct hdb_stmt base;
	char *sql;
	char **values; /* nparams of them */
	Oid *types;
	int nparams;
	PGresult *res;
	int row, rows, runs;
	char prepared[16];
	/* A streamed query: a cursor fetched STREAM_ROWS at a time, in a
	 * transaction of its own when none is open. */
	char cursor[24];
	bool declared, began, exhausted;
};

#define STREAM_ROWS 20000
#define PG_TEXT_OID 25

static PGconn *conn_of(const struct hdb *db)
{
	return ((struct pg_conn *)db->conn)->c;
}

static struct pg_stmt *stmt_of(struct hdb_stmt *st)
{
	return (struct pg_stmt *)st;
}

/* The error of R (or of the connection, when R has none), its SQLSTATE, and
 * whether the connection was lost: a lost server gives an empty result
 * message and says why on the connection. */
static void pg_err(struct hdb *db, const PGresult *r)
{
	const char *msg = r ? PQresultErrorMessage(r) : NULL, *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	char lost[600];

	if (!msg || !*msg)
		msg = PQerrorMessage(conn_of(db));
	snprintf(db->sqlstate, sizeof(db->sqlstate), "%s", state ? state : "");
	if (PQstatus(conn_of(db)) == CONNECTION_BAD) {
		snprintf(lost, sizeof(lost), "the connection to the server was lost: %s", msg && *msg ? msg : "no reason given");
		msg = lost;
	}
	hdb_set_err(db, msg);
}

/* 0, or an error naming the library and the package that brings it. */
static int pq_load(struct hdb *db)
{
	static void *lib;
	const char *missing = NULL;

	if (lib)
		return 0;
	lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(db->err, sizeof(db->err), "%s", dlerror());
		fprintf(stderr, "pmcheck history: %s: a PostgreSQL store needs libpq, which cannot be loaded: %s (Debian: apt-get install libpq5)\n",
			db->name, db->err);
		return PMC_EXIT_ERROR;
	}
#define PQ_LOAD(name)                                                \
	if (!(*(void **)&pq.name = dlsym(lib, #name)) && !missing) \
		missing = #name;
	PQ_FUNCTIONS(PQ_LOAD)
#undef PQ_LOAD
	if (missing) {
		fprintf(stderr, "pmcheck history: %s: the libpq loaded has no %s (older than the libpq %s pmcheck was built with)\n",
			db->name, missing, PMCHECK_LIBPQ_VERSION);
		dlclose(lib);
		lib = NULL;
		return PMC_EXIT_ERROR;
	}
	return 0;
}

static void quiet_notices(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int pg_connect(struct hdb *db, const char *conn, enum hdb_mode mode)
{
	/* Later keywords override earlier ones, and the URI is expanded in
	 * place: its own connect_timeout, or PGCONNECT_TIMEOUT, wins over ours. */
	const char *keys[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *vals[] = { getenv("PGCONNECT_TIMEOUT") ? getenv("PGCONNECT_TIMEOUT") : "10",
			       "pmcheck", conn, NULL };
	struct pg_conn *pg;

	(void)mode; /* a database is never made here; the store's schema is (store.c) */
	if (pq_load(db))
		return PMC_EXIT_ERROR;
	if (!(pg = calloc(1, sizeof(*pg))))
		return PMC_EXIT_ERROR;
	pg->c = PQconnectdbParams(keys, vals, 1);
	if (!pg->c || PQstatus(pg->c) != CONNECTION_OK) {
		hdb_set_err(db, pg->c ? PQerrorMessage(pg->c) : "out of memory");
		fprintf(stderr, "pmcheck history: %s: cannot connect to the PostgreSQL server: %s (check the connection string, that the server runs, and its password: ~/.pgpass or PGPASSWORD)\n",
			db->name, db->err);
		if (pg->c)
			PQfinish(pg->c);
		free(pg);
		return PMC_EXIT_ERROR;
	}
	PQsetNoticeProcessor(pg->c, quiet_notices, NULL);
	db->conn = pg;
	return 0;
}

static void pg_close(struct hdb *db)
{
	PQfinish(conn_of(db));
	free(db->conn);
	db->conn = NULL;
}

static bool pg_lost(const struct hdb *db)
{
	return PQstatus(conn_of(db)) == CONNECTION_BAD;
}

static int pg_exec(struct hdb *db, const char *sql)
{
	PGresult *r = PQexec(conn_of(db), sql);
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

	if (!ok)
		pg_err(db, r);
	PQclear(r);
	return ok ? 0 : -1;
}

static struct hdb_stmt *pg_prepare(struct hdb *db, const char *sql)
{
	struct pg_stmt *st = calloc(1, sizeof(*st));

	if (!st) {
		hdb_set_err(db, "out of memory");
		return NULL;
	}
	st->base.db = db;
	st->sql = strdup(sql);
	if (!st->sql) {
		free(st);
		return NULL;
	}
	/* The highest $N is the number of parameters. */
	for (const char *p = sql; (p = strchr(p, '$')) != NULL; p++) {
		int n = atoi(p + 1);

		if (n > st->nparams && n <= 65535)
			st->nparams = n;
	}
	st->values = calloc((size_t)st->nparams + 1, sizeof(*st->values));
	st->types = calloc((size_t)st->nparams + 1, sizeof(*st->types));
	if (!st->values || !st->types) {
		free(st->values);
		free(st->types);
		free(st->sql);
		free(st);
		hdb_set_err(db, "out of memory");
		return NULL;
	}
	return &st->base;
}

static void pg_finalize(struct hdb_stmt *base);

static struct hdb_stmt *pg_prepare_stream(struct hdb *db, const char *sql)
{
	struct hdb_stmt *base = pg_prepare(db, sql);
	struct pg_stmt *st = base ? stmt_of(base) : NULL;
	char *declare = NULL;

	if (!st)
		return NULL;
	snprintf(st->cursor, sizeof(st->cursor), "pmc_cursor%u", ++((struct pg_conn *)db->conn)->next_name);
	if (asprintf(&declare, "DECLARE %s NO SCROLL CURSOR FOR %s", st->cursor, sql) < 0) {
		pg_finalize(base);
		return NULL;
	}
	free(st->sql);
	st->sql = declare;
	return base;
}

static void pg_param(struct pg_stmt *st, int i, char *value, Oid type)
{
	if (i < 1 || i > st->nparams) {
		free(value);
		return;
	}
	free(st->values[i - 1]);
	st->values[i - 1] = value;
	st->types[i - 1] = type;
}

static void pg_bind_text(struct hdb_stmt *st, int i, const char *s)
{
	/* NULL as a text NULL, so that "$1 IS NULL OR x = $1" has a type. */
	pg_param(stmt_of(st), i, s ? strdup(s) : NULL, PG_TEXT_OID);
}

static void pg_bind_int(struct hdb_stmt *st, int i, int64_t v)
{
	char *s = NULL;

	if (asprintf(&s, "%lld", (long long)v) >= 0)
		pg_param(stmt_of(st), i, s, 0);
}

static void pg_bind_real(struct hdb_stmt *st, int i, double v)
{
	char *s = NULL;

	/* 17 significant digits: the double comes back bit for bit. */
	if (asprintf(&s, "%.17g", v) >= 0)
		pg_param(stmt_of(st), i, s, 0);
}

static void pg_bind_null(struct hdb_stmt *st, int i)
{
	/* Untyped: the server takes the column's or the expression's type. */
	pg_param(stmt_of(st), i, NULL, 0);
}

static int pg_run(struct pg_stmt *st)
{
	struct hdb *db = st->base.db;
	ExecStatusType s;

	/* The second run of a statement prepares it on the server. */
	if (st->runs == 1 && !st->prepared[0]) {
		char name[16];
		PGresult *r;

		snprintf(name, sizeof(name), "s%u", ++((struct pg_conn *)db->conn)->next_name);
		r = PQprepare(conn_of(db), name, st->sql, st->nparams, st->types);
		if (PQresultStatus(r) == PGRES_COMMAND_OK)
			memcpy(st->prepared, name, sizeof(name));
		PQclear(r);
	}
	st->runs++;
	st->res = st->prepared[0]
			  ? PQexecPrepared(conn_of(db), st->prepared, st->nparams,
					   (const char *const *)st->values, NULL, NULL, 0)
			  : PQexecParams(conn_of(db), st->sql, st->nparams, st->types,
					 (const char *const *)st->values, NULL, NULL, 0);
	s = PQresultStatus(st->res);
	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK) {
		st->row = -1;
		st->rows = s == PGRES_TUPLES_OK ? PQntuples(st->res) : 0;
		return 0;
	}
	pg_err(db, st->res);
	PQclear(st->res);
	st->res = NULL;
	return -1;
}

/* The next row of a cursor: declared on the first step, fetched in pages. */
static int pg_stream_step(struct pg_stmt *st)
{
	struct hdb *db = st->base.db;

	if (!st->declared) {
		if (PQtransactionStatus(conn_of(db)) == PQTRANS_IDLE) {
			if (pg_exec(db, "BEGIN"))
				return -1;
			st->began = true;
		}
		if (pg_run(st))
			return -1;
		PQclear(st->res);
		st->res = NULL;
		st->declared = true;
	}
	while (!st->res || st->row + 1 >= st->rows) {
		char fetch[64];

		if (st->exhausted)
			return 0;
		PQclear(st->res);
		snprintf(fetch, sizeof(fetch), "FETCH %d FROM %s", STREAM_ROWS, st->cursor);
		st->res = PQexec(conn_of(db), fetch);
		if (PQresultStatus(st->res) != PGRES_TUPLES_OK) {
			pg_err(db, st->res);
			PQclear(st->res);
			st->res = NULL;
			return -1;
		}
		st->rows = PQntuples(st->res);
		st->row = -1;
		st->exhausted = st->rows < STREAM_ROWS;
		if (!st->rows)
			return 0;
	}
	st->row++;
	return 1;
}

static int pg_step(struct hdb_stmt *base)
{
	struct pg_stmt *st = stmt_of(base);

	if (st->cursor[0])
		return pg_stream_step(st);
	if (!st->res && pg_run(st))
		return -1;
	if (st->row + 1 >= st->rows) {
		st->row = st->rows;
		return 0;
	}
	st->row++;
	return 1;
}

static const char *pg_col_text(struct hdb_stmt *base, int i)
{
	struct pg_stmt *st = stmt_of(base);

	if (!st->res || st->row < 0 || st->row >= st->rows || PQgetisnull(st->res, st->row, i))
		return NULL;
	return PQgetvalue(st->res, st->row, i);
}

static int64_t pg_col_int(struct hdb_stmt *st, int i)
{
	const char *s = pg_col_text(st, i);

	/* An integral column may come back from an expression as numeric. */
	return s ? (int64_t)strtoll(s, NULL, 10) : 0;
}

static double pg_col_real(struct hdb_stmt *st, int i)
{
	const char *s = pg_col_text(st, i);

	return s ? strtod(s, NULL) : 0;
}

static bool pg_col_null(struct hdb_stmt *st, int i)
{
	return pg_col_text(st, i) == NULL;
}

static void pg_reset(struct hdb_stmt *base)
{
	struct pg_stmt *st = stmt_of(base);

	PQclear(st->res);
	st->res = NULL;
}

static void pg_finalize(struct hdb_stmt *base)
{
	struct pg_stmt *st = stmt_of(base);
	struct hdb *db = base->db;

	PQclear(st->res);
	if (st->declared) {
		char *sql = NULL, keep[sizeof(db->err)];

		memcpy(keep, db->err, sizeof(keep));
		if (asprintf(&sql, "CLOSE %s", st->cursor) >= 0)
			pg_exec(db, sql);
		free(sql);
		if (st->began)
			pg_exec(db, "COMMIT");
		memcpy(db->err, keep, sizeof(keep));
	}
	for (int i = 0; i < st->nparams && st->values; i++)
		free(st->values[i]);
	free(st->values);
	free(st->types);
	if (st->prepared[0]) {
		char *sql = NULL, keep[sizeof(db->err)];

		/* In a failed transaction this fails too; the first error stays. */
		memcpy(keep, db->err, sizeof(keep));
		if (asprintf(&sql, "DEALLOCATE %s", st->prepared) >= 0)
			pg_exec(db, sql);
		memcpy(db->err, keep, sizeof(keep));
		free(sql);
	}
	free(st->sql);
	free(st);
}

const struct hdb_engine hdb_pg_engine = {
	.connect = pg_connect,
	.close = pg_close,
	.lost = pg_lost,
	.exec = pg_exec,
	.begin = "BEGIN",
	.prepare = pg_prepare,
	.prepare_stream = pg_prepare_stream,
	.bind_text = pg_bind_text,
	.bind_int = pg_bind_int,
	.bind_real = pg_bind_real,
	.bind_null = pg_bind_null,
	.step = pg_step,
	.col_text = pg_col_text,
	.col_int = pg_col_int,
	.col_real = pg_col_real,
	.col_null = pg_col_null,
	.reset = pg_reset,
	.finalize = pg_finalize,
};
