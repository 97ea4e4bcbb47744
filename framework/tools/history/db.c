/* SPDX-License-Identifier: MIT */
/*
 * The history store's two engines behind one statement interface
 * (history_db.h): SQLite through its C API, PostgreSQL through libpq.
 *
 * PostgreSQL statements run with text parameters (PQexecParams); a text
 * parameter is sent as type text so that expressions such as length($1)
 * resolve, and numbers are sent untyped for the server to infer.  A
 * statement run a second time is prepared on the server once, so adding a
 * file's figures costs one round trip per row, not a parse.  Rows come back
 * whole (one PGresult); the largest query, the report's, holds each figure
 * once.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <errno.h>
#include <sys/stat.h>

#include <sqlite3.h>
#if PMCHECK_HAVE_LIBPQ
#include <dlfcn.h>
#include <libpq-fe.h>
#endif

#include "../cli.h"
#include "db.h"
#include "target.h"

struct hdb {
	sqlite3 *lite;
#if PMCHECK_HAVE_LIBPQ
	PGconn *pg;
	unsigned next_name; /* server-side prepared statements: s1, s2, ... */
#endif
	char *name;   /* the target as it may be printed */
	struct hdb_target target; /* a connection string's parts, its passwords among them */
	char err[512];
	char sqlstate[6]; /* PostgreSQL's code of the last error, or "" */
	/* Statements prepared once and kept until the store is closed. */
	struct cached {
		char *sql;
		struct hdb_stmt *st;
	} *cache;
	size_t ncache;
};

struct hdb_stmt {
	struct hdb *db;
	sqlite3_stmt *lite;
#if PMCHECK_HAVE_LIBPQ
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
#endif
};

#define STREAM_ROWS 20000

static void set_err(struct hdb *db, const char *msg)
{
	size_t n;

	snprintf(db->err, sizeof(db->err), "%s", msg && *msg ? msg : "unknown error");
	hdb_target_scrub(&db->target, db->err, sizeof(db->err));
	for (char *p = db->err; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	n = strlen(db->err);
	while (n && db->err[n - 1] == ' ')
		db->err[--n] = '\0';
}

#if PMCHECK_HAVE_LIBPQ
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
/* PQclear(NULL) is called on SQLite's paths too, where no libpq is loaded. */
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

/* The error of R (or of the connection, when R has none), its SQLSTATE, and
 * whether the connection was lost: a lost server gives an empty result
 * message and says why on the connection. */
static void pg_err(struct hdb *db, const PGresult *r)
{
	const char *msg = r ? PQresultErrorMessage(r) : NULL, *state = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : NULL;
	char lost[600];

	if (!msg || !*msg)
		msg = PQerrorMessage(db->pg);
	snprintf(db->sqlstate, sizeof(db->sqlstate), "%s", state ? state : "");
	if (PQstatus(db->pg) == CONNECTION_BAD) {
		snprintf(lost, sizeof(lost), "the connection to the server was lost: %s", msg && *msg ? msg : "no reason given");
		msg = lost;
	}
	set_err(db, msg);
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

static int pg_connect(struct hdb *db, const char *target)
{
	/* Later keywords override earlier ones, and the URI is expanded in
	 * place: its own connect_timeout, or PGCONNECT_TIMEOUT, wins over ours. */
	const char *keys[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *vals[] = { getenv("PGCONNECT_TIMEOUT") ? getenv("PGCONNECT_TIMEOUT") : "10",
			       "pmcheck", target, NULL };

	if (pq_load(db))
		return PMC_EXIT_ERROR;
	db->pg = PQconnectdbParams(keys, vals, 1);
	if (!db->pg || PQstatus(db->pg) != CONNECTION_OK) {
		set_err(db, db->pg ? PQerrorMessage(db->pg) : "out of memory");
		fprintf(stderr, "pmcheck history: %s: cannot connect to the PostgreSQL server: %s (check the connection string, that the server runs, and its password: ~/.pgpass or PGPASSWORD)\n",
			db->name, db->err);
		return PMC_EXIT_ERROR;
	}
	PQsetNoticeProcessor(db->pg, quiet_notices, NULL);
	return 0;
}
#endif

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
	if (hdb_target_is_pg(target)) {
#if PMCHECK_HAVE_LIBPQ
		rc = pg_connect(db, conn ? conn : target);
		free(conn);
		if (rc) {
			hdb_close(db);
			return PMC_EXIT_ERROR;
		}
#else
		free(conn);
		fprintf(stderr, "pmcheck history: %s: this pmcheck was built without libpq (libpq-dev), so it cannot use PostgreSQL; install it and rebuild, or give an SQLite file\n",
			db->name);
		hdb_close(db);
		return PMC_EXIT_ERROR;
#endif
	} else if (mode == HDB_READ && (rc = lite_check_exists(target, db->name)) != 0) {
		hdb_close(db);
		return rc;
	} else if (sqlite3_open_v2(target, &db->lite,
				   SQLITE_OPEN_READWRITE | (mode == HDB_WRITE ? SQLITE_OPEN_CREATE : 0),
				   NULL) != SQLITE_OK) {
		fprintf(stderr, "pmcheck history: %s: cannot open the history database: %s\n", db->name,
			db->lite ? sqlite3_errmsg(db->lite) : "out of memory");
		hdb_close(db);
		return PMC_EXIT_ERROR;
	} else {
		sqlite3_busy_timeout(db->lite, 120000);
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
	if (db->lite)
		sqlite3_close(db->lite);
#if PMCHECK_HAVE_LIBPQ
	if (db->pg)
		PQfinish(db->pg);
#endif
	hdb_target_release(&db->target);
	free(db->name);
	free(db);
}

bool hdb_is_pg(const struct hdb *db)
{
	return db->lite == NULL;
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
#if PMCHECK_HAVE_LIBPQ
	if (db->pg)
		return PQstatus(db->pg) == CONNECTION_BAD;
#endif
	(void)db;
	return false;
}

const char *hdb_errmsg(struct hdb *db)
{
	if (db->lite)
		set_err(db, sqlite3_errmsg(db->lite));
	return db->err;
}

int hdb_exec(struct hdb *db, const char *sql)
{
	if (db->lite)
		return sqlite3_exec(db->lite, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
#if PMCHECK_HAVE_LIBPQ
	{
		PGresult *r = PQexec(db->pg, sql);
		int ok = PQresultStatus(r) == PGRES_COMMAND_OK || PQresultStatus(r) == PGRES_TUPLES_OK;

		if (!ok)
			pg_err(db, r);
		PQclear(r);
		return ok ? 0 : -1;
	}
#else
	return -1;
#endif
}

int hdb_begin(struct hdb *db)
{
	return hdb_exec(db, db->lite ? "BEGIN IMMEDIATE" : "BEGIN");
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

/* $N -> ?N outside quoted strings, for SQLite. */
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

struct hdb_stmt *hdb_prepare(struct hdb *db, const char *sql)
{
	struct hdb_stmt *st = calloc(1, sizeof(*st));

	if (!st) {
		set_err(db, "out of memory");
		return NULL;
	}
	st->db = db;
	if (db->lite) {
		char *lite_sql = to_sqlite_params(sql);
		int rc = lite_sql ? sqlite3_prepare_v2(db->lite, lite_sql, -1, &st->lite, NULL)
				  : SQLITE_NOMEM;

		free(lite_sql);
		if (rc != SQLITE_OK) {
			free(st);
			return NULL;
		}
		return st;
	}
#if PMCHECK_HAVE_LIBPQ
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
		set_err(db, "out of memory");
		return NULL;
	}
#endif
	return st;
}

struct hdb_stmt *hdb_prepare_stream(struct hdb *db, const char *sql)
{
	struct hdb_stmt *st = hdb_prepare(db, sql);

#if PMCHECK_HAVE_LIBPQ
	if (st && !st->lite) {
		char *declare = NULL;

		snprintf(st->cursor, sizeof(st->cursor), "pmc_cursor%u", ++db->next_name);
		if (asprintf(&declare, "DECLARE %s NO SCROLL CURSOR FOR %s", st->cursor, sql) < 0) {
			hdb_finalize(st);
			return NULL;
		}
		free(st->sql);
		st->sql = declare;
	}
#endif
	return st;
}

#if PMCHECK_HAVE_LIBPQ
static void pg_param(struct hdb_stmt *st, int i, char *value, Oid type)
{
	if (i < 1 || i > st->nparams) {
		free(value);
		return;
	}
	free(st->values[i - 1]);
	st->values[i - 1] = value;
	st->types[i - 1] = type;
}
#define PG_TEXT_OID 25
#endif

void hdb_bind_text(struct hdb_stmt *st, int i, const char *s)
{
	if (!s || !*s) {
#if PMCHECK_HAVE_LIBPQ
		/* A text NULL, so that "$1 IS NULL OR x = $1" has a type. */
		if (!st->lite) {
			pg_param(st, i, NULL, PG_TEXT_OID);
			return;
		}
#endif
		hdb_bind_null(st, i);
		return;
	}
	if (st->lite) {
		sqlite3_bind_text(st->lite, i, s, -1, SQLITE_TRANSIENT);
		return;
	}
#if PMCHECK_HAVE_LIBPQ
	pg_param(st, i, strdup(s), PG_TEXT_OID);
#endif
}

void hdb_bind_int(struct hdb_stmt *st, int i, int64_t v)
{
	if (st->lite) {
		sqlite3_bind_int64(st->lite, i, v);
		return;
	}
#if PMCHECK_HAVE_LIBPQ
	{
		char *s = NULL;

		if (asprintf(&s, "%lld", (long long)v) >= 0)
			pg_param(st, i, s, 0);
	}
#endif
}

void hdb_bind_real(struct hdb_stmt *st, int i, double v)
{
	if (isnan(v)) {
		hdb_bind_null(st, i);
		return;
	}
	if (st->lite) {
		sqlite3_bind_double(st->lite, i, v);
		return;
	}
#if PMCHECK_HAVE_LIBPQ
	{
		char *s = NULL;

		/* 17 significant digits: the double comes back bit for bit. */
		if (asprintf(&s, "%.17g", v) >= 0)
			pg_param(st, i, s, 0);
	}
#endif
}

void hdb_bind_null(struct hdb_stmt *st, int i)
{
	if (st->lite) {
		sqlite3_bind_null(st->lite, i);
		return;
	}
#if PMCHECK_HAVE_LIBPQ
	/* Untyped: the server takes the column's or the expression's type. */
	pg_param(st, i, NULL, 0);
#endif
}

#if PMCHECK_HAVE_LIBPQ
static int pg_run(struct hdb_stmt *st)
{
	struct hdb *db = st->db;
	ExecStatusType s;

	/* The second run of a statement prepares it on the server. */
	if (st->runs == 1 && !st->prepared[0]) {
		char name[16];
		PGresult *r;

		snprintf(name, sizeof(name), "s%u", ++db->next_name);
		r = PQprepare(db->pg, name, st->sql, st->nparams, st->types);
		if (PQresultStatus(r) == PGRES_COMMAND_OK)
			memcpy(st->prepared, name, sizeof(name));
		PQclear(r);
	}
	st->runs++;
	st->res = st->prepared[0]
			  ? PQexecPrepared(db->pg, st->prepared, st->nparams,
					   (const char *const *)st->values, NULL, NULL, 0)
			  : PQexecParams(db->pg, st->sql, st->nparams, st->types,
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
#endif

#if PMCHECK_HAVE_LIBPQ
/* The next row of a cursor: declared on the first step, fetched in pages. */
static int pg_stream_step(struct hdb_stmt *st)
{
	struct hdb *db = st->db;

	if (!st->declared) {
		if (PQtransactionStatus(db->pg) == PQTRANS_IDLE) {
			if (hdb_exec(db, "BEGIN"))
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
		st->res = PQexec(db->pg, fetch);
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
#endif

int hdb_step(struct hdb_stmt *st)
{
	if (st->lite) {
		int rc = sqlite3_step(st->lite);

		return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
	}
#if PMCHECK_HAVE_LIBPQ
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
#else
	return -1;
#endif
}

const char *hdb_col_text(struct hdb_stmt *st, int i)
{
	if (st->lite)
		return (const char *)sqlite3_column_text(st->lite, i);
#if PMCHECK_HAVE_LIBPQ
	if (!st->res || st->row < 0 || st->row >= st->rows || PQgetisnull(st->res, st->row, i))
		return NULL;
	return PQgetvalue(st->res, st->row, i);
#else
	return NULL;
#endif
}

int64_t hdb_col_int(struct hdb_stmt *st, int i)
{
	const char *s;

	if (st->lite)
		return sqlite3_column_int64(st->lite, i);
	s = hdb_col_text(st, i);
	/* An integral column may come back from an expression as numeric. */
	return s ? (int64_t)strtoll(s, NULL, 10) : 0;
}

double hdb_col_real(struct hdb_stmt *st, int i)
{
	const char *s;

	if (st->lite)
		return sqlite3_column_double(st->lite, i);
	s = hdb_col_text(st, i);
	return s ? strtod(s, NULL) : 0;
}

bool hdb_col_null(struct hdb_stmt *st, int i)
{
	if (st->lite)
		return sqlite3_column_type(st->lite, i) == SQLITE_NULL;
	return hdb_col_text(st, i) == NULL;
}

void hdb_reset(struct hdb_stmt *st)
{
	if (st->lite) {
		sqlite3_reset(st->lite);
		return;
	}
#if PMCHECK_HAVE_LIBPQ
	PQclear(st->res);
	st->res = NULL;
#endif
}

void hdb_finalize(struct hdb_stmt *st)
{
	if (!st)
		return;
	if (st->lite)
		sqlite3_finalize(st->lite);
#if PMCHECK_HAVE_LIBPQ
	PQclear(st->res);
	if (st->declared) {
		char *sql = NULL, keep[sizeof(st->db->err)];

		memcpy(keep, st->db->err, sizeof(keep));
		if (asprintf(&sql, "CLOSE %s", st->cursor) >= 0)
			hdb_exec(st->db, sql);
		free(sql);
		if (st->began)
			hdb_exec(st->db, "COMMIT");
		memcpy(st->db->err, keep, sizeof(keep));
	}
	for (int i = 0; i < st->nparams && st->values; i++)
		free(st->values[i]);
	free(st->values);
	free(st->types);
	if (st->prepared[0]) {
		char *sql = NULL, keep[sizeof(st->db->err)];

		/* In a failed transaction this fails too; the first error stays. */
		memcpy(keep, st->db->err, sizeof(keep));
		if (asprintf(&sql, "DEALLOCATE %s", st->prepared) >= 0)
			hdb_exec(st->db, sql);
		memcpy(st->db->err, keep, sizeof(keep));
		free(sql);
	}
	free(st->sql);
#endif
	free(st);
}

struct hdb_stmt *hdb_prepare_cached(struct hdb *db, const char *sql)
{
	struct cached *c;
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

int64_t hdb_scalar(struct hdb *db, const char *sql, int64_t fallback)
{
	struct hdb_stmt *st = hdb_prepare(db, sql);
	int64_t v = fallback;

	if (st && hdb_step(st) == 1 && !hdb_col_null(st, 0))
		v = hdb_col_int(st, 0);
	hdb_finalize(st);
	return v;
}
