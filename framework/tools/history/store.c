/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history's store: the schema, its versions and migration, and
 * adding results files (history.h), on SQLite or PostgreSQL (history_db.h).
 *
 * The store is versioned (SQLite: PRAGMA user_version; PostgreSQL: the
 * one-row table meta, in the schema "pmcheck"); a newer one is refused rather
 * than misread, an older one migrated, on both engines alike.  Each file is
 * added in one transaction, so CI jobs may add at once: a file is either
 * wholly in or not at all, and a file already in (the same bytes) is
 * skipped.  SQLite writers wait for each other (busy timeout, IMMEDIATE
 * transactions, WAL journal); PostgreSQL writers run side by side and meet
 * only on a file's digest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../cli.h"
#include "tools.h"
#include "history.h"

#define HISTORY_SCHEMA 3

/*
 * The tables, in SQL both engines take: BIGINT and DOUBLE PRECISION have
 * SQLite's INTEGER and REAL affinities, and @ID@ is each engine's row id
 * (SQLite's INTEGER PRIMARY KEY alias of the rowid, PostgreSQL's BIGSERIAL).
 * Schema 1: files, runs, figures.
 */
static const char schema1_sql[] =
	"CREATE TABLE files (id @ID@, digest TEXT NOT NULL UNIQUE,"
	"  path TEXT NOT NULL, added TEXT NOT NULL);"
	"CREATE TABLE runs (id @ID@, file_id BIGINT NOT NULL REFERENCES files(id),"
	"  date TEXT, git_commit TEXT, cpu_signature TEXT, cpu_model TEXT, kernel TEXT,"
	"  backend TEXT, compiler TEXT, hostname TEXT, pmcheck_version TEXT);"
	"CREATE TABLE figures (run_id BIGINT NOT NULL REFERENCES runs(id),"
	"  case_name TEXT NOT NULL, verdict TEXT NOT NULL, region TEXT NOT NULL,"
	"  event TEXT NOT NULL, samples BIGINT NOT NULL, min BIGINT, median DOUBLE PRECISION,"
	"  max BIGINT, mean DOUBLE PRECISION, partial INTEGER NOT NULL,"
	"  budget_lo DOUBLE PRECISION, budget_hi DOUBLE PRECISION);"
	"CREATE INDEX figures_case ON figures(case_name, event)";

/* Schema 1 -> 2: each budget expectation's judged figure, with what
 * decides its hwdb key (hwdb merge --from-history). */
static const char schema2_sql[] =
	"CREATE TABLE budget_checks (run_id BIGINT NOT NULL REFERENCES runs(id),"
	"  suite TEXT NOT NULL, test TEXT NOT NULL, region TEXT NOT NULL, event TEXT NOT NULL,"
	"  kind TEXT, name TEXT, sim_columns TEXT, sim_profile TEXT, backend TEXT NOT NULL,"
	"  value DOUBLE PRECISION NOT NULL);"
	"CREATE INDEX budget_checks_run ON budget_checks(run_id)";

/* Schema 2 -> 3: a sim figure's line, "PROFILE ENGINE" (sim counts do not
 * depend on the host, so a fleet's sim runs make one series per profile
 * and engine, not one per host CPU model).  Kept per figure, not per run:
 * one file holds cases of either engine (a failing case's callgrind
 * re-run).  NULL on other backends, and on sim figures added before
 * schema 3 (one line of their own). */
static const char schema3_sql[] = "ALTER TABLE figures ADD COLUMN sim_line TEXT";

/* PostgreSQL keeps the history in a schema of its own, so a database that
 * holds other tables (runs, files) can hold it too, and the version in a
 * one-row table (SQLite's is PRAGMA user_version). */
#define PG_SCHEMA "pmcheck"
/* Every writer's schema check holds this advisory lock (pmcheck's own
 * number), so the first writers of a new database do not race to create it. */
#define PG_SCHEMA_LOCK "SELECT pg_advisory_xact_lock(7071696369)"

static int insert_budget_checks(struct hdb *db, int64_t run_id, const struct pmc__results *rs,
				const char *path);
static int migrate_1_to_2(struct hdb *db);

/* The privileges a PostgreSQL role lacks for what failed, as GRANTs would
 * name them ("USAGE on schema pmcheck, INSERT on table pmcheck.files"), or
 * "" when none is found missing.  Asked after the failed transaction is
 * rolled back. */
static void missing_privileges(struct hdb *db, bool write, char *out, size_t size)
{
	static const char *const tables[] = { "meta", "files", "runs", "figures", "budget_checks" };
	static const char *const sequences[] = { "files_id_seq", "runs_id_seq" };
	char sql[256];
	size_t used = 0;

	out[0] = '\0';
	hdb_rollback(db);
	if (hdb_scalar(db, "SELECT count(*) FROM pg_namespace WHERE nspname = '" PG_SCHEMA "'", 1) == 0) {
		if (hdb_scalar(db, "SELECT has_database_privilege(current_database(), 'CREATE')::int", 1) == 0)
			snprintf(out, size, "CREATE on the database (to make the schema " PG_SCHEMA ")");
		return;
	}
	if (hdb_scalar(db, "SELECT has_schema_privilege('" PG_SCHEMA "', 'USAGE')::int", 1) == 0) {
		snprintf(out, size, "USAGE on schema " PG_SCHEMA);
		return;
	}
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		for (int w = 0; w < (write ? 2 : 1); w++) {
			const char *priv = w ? "INSERT" : "SELECT";

			snprintf(sql, sizeof(sql),
				 "SELECT has_table_privilege('" PG_SCHEMA ".%s', '%s')::int", tables[i], priv);
			if (hdb_scalar(db, sql, 1) == 0 && used + 1 < size)
				used += (size_t)snprintf(out + used, size - used, "%s%s on table " PG_SCHEMA ".%s",
							 used ? ", " : "", priv, tables[i]);
		}
	for (size_t i = 0; write && i < sizeof(sequences) / sizeof(sequences[0]); i++) {
		snprintf(sql, sizeof(sql), "SELECT has_sequence_privilege('" PG_SCHEMA ".%s', 'USAGE')::int",
			 sequences[i]);
		if (hdb_scalar(db, sql, 1) == 0 && used + 1 < size)
			used += (size_t)snprintf(out + used, size - used, "%sUSAGE on sequence " PG_SCHEMA ".%s",
						 used ? ", " : "", sequences[i]);
	}
}

static int store_fail(struct hdb *db, const char *what, bool write)
{
	char lacks[512] = "";

	fprintf(stderr, "pmcheck history: %s: %s: %s", hdb_name(db), what, hdb_errmsg(db));
	if (hdb_is_pg(db) && !strcmp(hdb_sqlstate(db), "42501")) {
		missing_privileges(db, write, lacks, sizeof(lacks));
		if (lacks[0])
			fprintf(stderr, "; the role lacks %s (an owner of the database grants %s)", lacks,
				"them with GRANT ... TO the role");
		else
			fprintf(stderr, "; a permission is missing (the server's words above name it)");
	}
	fputs("\n", stderr);
	return PMC_EXIT_ERROR;
}

int history_fail(struct hdb *db, const char *what)
{
	return store_fail(db, what, false);
}

/* DDL with the engine's id column. */
static int create(struct hdb *db, const char *ddl)
{
	const char *id = hdb_is_pg(db) ? "BIGSERIAL PRIMARY KEY" : "INTEGER PRIMARY KEY";
	size_t n = strlen(ddl) + 16 * strlen(id) + 1;
	char *sql = malloc(n), *o = sql;
	int rc;

	if (!sql)
		return -1;
	for (const char *p = ddl; *p;) {
		if (!strncmp(p, "@ID@", 4)) {
			o = stpcpy(o, id);
			p += 4;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	rc = hdb_exec(db, sql);
	free(sql);
	return rc;
}

/* The store's schema version: 0 when it has none (new, or not ours). */
static int64_t schema_version(struct hdb *db)
{
	if (!hdb_is_pg(db))
		return hdb_scalar(db, "PRAGMA user_version", -1);
	if (hdb_scalar(db, "SELECT count(*) FROM pg_tables WHERE schemaname = '" PG_SCHEMA
			   "' AND tablename = 'meta'", 0) == 0)
		return 0;
	return hdb_scalar(db, "SELECT schema_version FROM meta", -1);
}

static int set_schema_version(struct hdb *db, int version)
{
	char sql[96];

	if (hdb_is_pg(db))
		snprintf(sql, sizeof(sql), "UPDATE meta SET schema_version = %d", version);
	else
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	return hdb_exec(db, sql);
}

/* A new store: the tables of every schema, at the newest version. */
static int create_store(struct hdb *db)
{
	int64_t tables;

	if (hdb_is_pg(db))
		tables = hdb_scalar(db, "SELECT count(*) FROM pg_tables WHERE schemaname = '" PG_SCHEMA "'", -1);
	else
		tables = hdb_scalar(db, "SELECT count(*) FROM sqlite_master", -1);
	if (tables) {
		fprintf(stderr, hdb_is_pg(db)
					? "pmcheck history: %s: the database's schema \"" PG_SCHEMA "\" holds tables, but not a pmcheck history (no schema version); give another database\n"
					: "pmcheck history: %s: an SQLite database, but not a pmcheck history (no schema version); give another --db\n",
			hdb_name(db));
		return PMC_EXIT_ERROR;
	}
	if ((hdb_is_pg(db) &&
	     hdb_exec(db, "CREATE SCHEMA IF NOT EXISTS " PG_SCHEMA ";"
			  "CREATE TABLE meta (schema_version INTEGER NOT NULL);"
			  "INSERT INTO meta VALUES (0)")) ||
	    create(db, schema1_sql) || create(db, schema2_sql) || create(db, schema3_sql) ||
	    set_schema_version(db, HISTORY_SCHEMA))
		return store_fail(db, "cannot create the history tables", true);
	return 0;
}

/* One check PRAGMA's first row: NULL when it says "ok", else its words
 * (or the error's), to be freed. */
static char *lite_damage(struct hdb *db, const char *pragma)
{
	struct hdb_stmt *st = hdb_prepare(db, pragma);
	const char *verdict = NULL;
	char *damage = NULL;
	int row = st ? hdb_step(st) : -1;

	if (row == 1)
		verdict = hdb_col_text(st, 0);
	if (row != 1 || !verdict || strcmp(verdict, "ok"))
		damage = strdup(verdict ? verdict : hdb_errmsg(db));
	hdb_finalize(st);
	return damage;
}

/* An SQLite store's pages and indexes are whole: 0, or an exit status with
 * the first damage printed.  A writer also checks the files table's digest
 * index against its rows (a damaged one would add a file twice); the other
 * indexes are only read through, so the whole integrity_check, 2.5 times
 * the cost on a 150 MB store, is not paid on every add. */
static int lite_check(struct hdb *db, bool write)
{
	char *damage = lite_damage(db, "PRAGMA quick_check(1)");

	if (!damage && write &&
	    hdb_scalar(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'files'", 0) > 0)
		damage = lite_damage(db, "PRAGMA integrity_check(files)");
	if (!damage)
		return 0;
	fprintf(stderr, "pmcheck history: %s: the SQLite file is damaged: %s; %srestore it from a copy (sqlite3's .recover saves what is left)\n",
		hdb_name(db), damage, write ? "nothing was added; " : "");
	free(damage);
	return PMC_EXIT_ERROR;
}

/* A store to read: it must hold a pmcheck history of this schema; it is
 * never made, migrated or written. */
static int open_to_read(struct hdb *db)
{
	int64_t version;

	if (hdb_is_pg(db)) {
		if (hdb_exec(db, "SET search_path TO " PG_SCHEMA))
			return history_fail(db, "cannot read the history");
		if (hdb_scalar(db, "SELECT count(*) FROM pg_namespace WHERE nspname = '" PG_SCHEMA "'", -1) == 0) {
			fprintf(stderr, "pmcheck history: %s: the database holds no pmcheck history (no schema \"" PG_SCHEMA "\"); history add makes one, or give the database that holds it\n",
				hdb_name(db));
			return PMC_EXIT_ERROR;
		}
		{
			char lacks[512];

			missing_privileges(db, false, lacks, sizeof(lacks));
			if (lacks[0]) {
				fprintf(stderr, "pmcheck history: %s: cannot read the history: the role lacks %s (an owner of the database grants them with GRANT ... TO the role)\n",
					hdb_name(db), lacks);
				return PMC_EXIT_ERROR;
			}
		}
	} else {
		int rc = lite_check(db, false);

		if (rc)
			return rc;
	}
	version = schema_version(db);
	if (version < 0 || (hdb_is_pg(db) && !strcmp(hdb_sqlstate(db), "42501")))
		return history_fail(db, "cannot read the history's schema version");
	if (version == HISTORY_SCHEMA)
		return 0;
	if (version == 0)
		fprintf(stderr, hdb_is_pg(db)
					? "pmcheck history: %s: the database's schema \"" PG_SCHEMA "\" is not a pmcheck history (no schema version); give the database that holds it\n"
				: hdb_scalar(db, "SELECT count(*) FROM sqlite_master", 1) == 0
					? "pmcheck history: %s: an empty SQLite database, not a pmcheck history; give the file history add made\n"
					: "pmcheck history: %s: an SQLite database, but not a pmcheck history (no schema version); give the file history add made\n",
			hdb_name(db));
	else if (version < HISTORY_SCHEMA)
		fprintf(stderr, "pmcheck history: %s: schema version %lld, older than this pmcheck's %d; reading commands never change a store: pmcheck history add (of any file) migrates it\n",
			hdb_name(db), (long long)version, HISTORY_SCHEMA);
	else
		fprintf(stderr, "pmcheck history: %s: schema version %lld, and this pmcheck knows %d: a newer pmcheck made it; use that one\n",
			hdb_name(db), (long long)version, HISTORY_SCHEMA);
	return PMC_EXIT_ERROR;
}

/* Open and check the schema version, the same way on both engines; to
 * write, make the store when new and migrate it when older. */
int history_open(const char *target, enum hdb_mode mode, struct hdb **out)
{
	struct hdb *db = NULL;
	int64_t version;
	int rc;

	*out = NULL;
	if ((rc = hdb_connect(target, mode, &db)) != 0)
		return rc;
	if (mode == HDB_READ) {
		if ((rc = open_to_read(db)) != 0) {
			hdb_close(db);
			return rc;
		}
		*out = db;
		return 0;
	}
	if (!hdb_is_pg(db) && hdb_scalar(db, "SELECT count(*) FROM sqlite_master", -1) > 0 &&
	    (rc = lite_check(db, true)) != 0) {
		hdb_close(db);
		return rc;
	}
	if (hdb_is_pg(db))
		hdb_exec(db, "SET search_path TO " PG_SCHEMA);
	else /* WAL: readers do not block the writer; set once, kept in the file. */
		hdb_exec(db, "PRAGMA journal_mode = WAL");
	if (hdb_begin(db) || (hdb_is_pg(db) && hdb_exec(db, PG_SCHEMA_LOCK))) {
		rc = store_fail(db, "cannot lock the history database", true);
		goto out;
	}
	version = schema_version(db);
	if (version < 0) {
		rc = store_fail(db, "cannot read the history's schema version", true);
	} else if (version == 0) {
		rc = create_store(db);
	} else if (version < HISTORY_SCHEMA && version > 0) {
		if (version == 1)
			rc = migrate_1_to_2(db);
		if (rc == 0 && (create(db, schema3_sql) || set_schema_version(db, 3)))
			rc = store_fail(db, "cannot migrate the history to schema 3", true);
	} else if (version != HISTORY_SCHEMA) {
		fprintf(stderr, "pmcheck history: %s: schema version %lld, and this pmcheck knows %d: %s\n",
			hdb_name(db), (long long)version, HISTORY_SCHEMA,
			version > HISTORY_SCHEMA ? "a newer pmcheck made it; use that one"
						 : "not a pmcheck history");
		rc = PMC_EXIT_ERROR;
	}
	if (rc == 0 && hdb_commit(db))
		rc = store_fail(db, "cannot create the history tables", true);
out:
	if (rc) {
		hdb_rollback(db);
		hdb_close(db);
		return rc;
	}
	*out = db;
	return 0;
}

/* The file's identity: its length and two 64-bit FNV-1a hashes of its
 * bytes (different offsets), as hex. */
static void digest_of(const char *text, size_t len, char *out, size_t size)
{
	uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;

	for (size_t i = 0; i < len; i++) {
		a = (a ^ (unsigned char)text[i]) * 0x100000001b3ull;
		b = (b ^ (unsigned char)text[len - 1 - i]) * 0x100000001b3ull;
	}
	snprintf(out, size, "%zx-%016" PRIx64 "%016" PRIx64, len, a, b);
}

static const char *env_str(json_t *env, const char *obj, const char *key)
{
	json_t *o = obj ? json_object_get(env, obj) : env;

	return json_string_value(json_object_get(o, key));
}

/* The bounds a case judged (region, event) by: its budget, or an explicit
 * bound (=, <=, >=, range) when it has no budget; NAN when none. */
static void budget_of(const struct pmc__result *c, const char *region, const char *label,
		      double *lo, double *hi)
{
	*lo = *hi = NAN;
	for (size_t k = 0; k < c->nchecks; k++) {
		const struct pmc__check_rec *cr = &c->checks[k];
		const struct pmc__event_rec *e = pmc__result_event(c, cr->event);

		bool bound = cr->kind == PMC_EXPECT_KIND_BUDGET || cr->kind == PMC_EXPECT_KIND_LE ||
			     cr->kind == PMC_EXPECT_KIND_GE || cr->kind == PMC_EXPECT_KIND_RANGE ||
			     cr->kind == PMC_EXPECT_KIND_EQ;

		if (bound && !cr->per && !strcmp(cr->region, region) && e && !strcmp(e->label, label) &&
		    (cr->kind == PMC_EXPECT_KIND_BUDGET || (isnan(*lo) && isnan(*hi)))) {
			*lo = cr->lo;
			*hi = cr->hi;
		}
	}
}

/* Now, in UTC, as SQLite's datetime('now') writes it. */
static void now_utc(char *out, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm);
}

/*
 * Rows in batches: on PostgreSQL, one INSERT of up to BATCH_ROWS rows
 * ("VALUES ($1, $2), ($3, $4) ..."), so that a file's figures are one round
 * trip to the server, not one per row; on SQLite, which has no round trips
 * and parses SQL slower than it inserts a row, one row at a time.  The batch
 * keeps the values (strings copied) until it runs; each statement is
 * prepared once per store (hdb_prepare_cached).
 */
#define BATCH_ROWS 64
#define BATCH_COLUMNS 14

struct cell {
	enum { CELL_NULL, CELL_INT, CELL_REAL, CELL_TEXT } type;
	int64_t i;
	double d;
	char *s;
};

struct batch {
	struct hdb *db;
	const char *head; /* "INSERT INTO t (a, b) VALUES" */
	int columns;
	int rows; /* rows per statement */
	size_t n; /* cells filled */
	struct cell cells[BATCH_ROWS * BATCH_COLUMNS];
	int status;
};

static struct hdb_stmt *batch_prepare(struct batch *b, int rows)
{
	size_t cap = strlen(b->head) + (size_t)rows * (size_t)b->columns * 10 + 16;
	char *sql = malloc(cap), *o = sql;
	struct hdb_stmt *st;

	if (!sql)
		return NULL;
	o = stpcpy(o, b->head);
	for (int r = 0; r < rows; r++) {
		*o++ = r ? ',' : ' ';
		*o++ = '(';
		for (int c = 0; c < b->columns; c++)
			o += sprintf(o, "%s$%d", c ? ", " : "", r * b->columns + c + 1);
		*o++ = ')';
	}
	*o = '\0';
	st = hdb_prepare_cached(b->db, sql);
	free(sql);
	return st;
}

/* Run the rows kept. */
static int batch_flush(struct batch *b)
{
	int rows = (int)(b->n / (size_t)b->columns);
	struct hdb_stmt *st = NULL;

	if (rows && b->status == 0) {
		st = batch_prepare(b, rows);
		if (st) {
			for (size_t i = 0; i < b->n; i++) {
				const struct cell *c = &b->cells[i];

				if (c->type == CELL_INT)
					hdb_bind_int(st, (int)i + 1, c->i);
				else if (c->type == CELL_REAL)
					hdb_bind_real(st, (int)i + 1, c->d);
				else if (c->type == CELL_TEXT)
					hdb_bind_text(st, (int)i + 1, c->s);
				else
					hdb_bind_null(st, (int)i + 1);
			}
		}
		b->status = st && hdb_step(st) >= 0 ? 0 : -1;
	}
	for (size_t i = 0; i < b->n; i++)
		free(b->cells[i].s);
	b->n = 0;
	return b->status;
}

static void cell_int(struct batch *b, int64_t v)
{
	b->cells[b->n++] = (struct cell){ .type = CELL_INT, .i = v };
}

static void cell_real(struct batch *b, double v)
{
	b->cells[b->n++] = (struct cell){ .type = isnan(v) ? CELL_NULL : CELL_REAL, .d = v };
}

static void cell_text(struct batch *b, const char *s)
{
	char *copy = s && *s ? strdup(s) : NULL;

	if (s && *s && !copy)
		b->status = -1;
	b->cells[b->n++] = (struct cell){ .type = copy ? CELL_TEXT : CELL_NULL, .s = copy };
}

/* A row is complete: run the batch when it is full. */
static void batch_row_done(struct batch *b)
{
	if (b->n == (size_t)b->rows * (size_t)b->columns)
		batch_flush(b);
}

static struct batch *batch_new(struct hdb *db, int columns, const char *head)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->db = db;
		b->columns = columns;
		b->head = head;
		b->rows = hdb_is_pg(db) ? BATCH_ROWS : 1;
	}
	return b;
}

/* Run what is left, and free the batch. */
static int batch_finish(struct batch *b)
{
	int rc = batch_flush(b);

	free(b);
	return rc;
}

/* A sim case's line: its sim profile and engine ("" off the sim backend). */
static void sim_line_of(const struct pmc__result *c, char *out, size_t size)
{
	out[0] = '\0';
	if (c->sim_profile && *c->sim_profile)
		snprintf(out, size, "%s %s", c->sim_profile,
			 c->sim_engine && *c->sim_engine ? c->sim_engine : "pmcheck");
}

/* A file's figures: every region and event of every case. */
static int insert_figures(struct hdb *db, int64_t run_id, const struct pmc__results *rs)
{
	struct batch *bp = batch_new(db, 14, "INSERT INTO figures (run_id, case_name, verdict, region,"
					     " event, samples, min, median, max, mean, partial, budget_lo,"
					     " budget_hi, sim_line) VALUES");
	char line[512];

	if (!bp)
		return -1;
	for (size_t i = 0; i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];

		sim_line_of(c, line, sizeof(line));
		for (size_t g = 0; g < c->nregions; g++)
			for (size_t e = 0; e < c->regions[g].nev; e++) {
				const struct pmc__stat_rec *s = &c->regions[g].ev[e];
				double lo, hi;

				budget_of(c, c->regions[g].name, s->label, &lo, &hi);
				cell_int(bp, run_id);
				cell_text(bp, c->name);
				cell_text(bp, pmc_verdict_name(c->verdict));
				cell_text(bp, c->regions[g].name);
				cell_text(bp, s->label);
				cell_int(bp, (int64_t)s->n);
				if (s->n) {
					cell_int(bp, (int64_t)s->min);
					cell_real(bp, s->median);
					cell_int(bp, (int64_t)s->max);
					cell_real(bp, s->mean);
				} else {
					for (int j = 0; j < 4; j++)
						cell_real(bp, NAN);
				}
				cell_int(bp, s->multiplexed || s->not_counted || s->other_threads);
				cell_real(bp, lo);
				cell_real(bp, hi);
				cell_text(bp, line);
				batch_row_done(bp);
			}
	}
	return batch_finish(bp);
}

/* One results file RS (read from PATH, of bytes with DIGEST), in one
 * transaction: 1 added, 0 already there, or -1 when the store failed (the
 * transaction rolled back; hdb_errmsg says why).  The file's row is claimed
 * first (ON CONFLICT DO NOTHING on its digest): a second writer of the same
 * bytes waits for the first's transaction and then finds it, and a writer
 * killed before COMMIT leaves no row at all. */
static int add_file(struct hdb *db, const char *path, const char *digest, struct pmc__results *rs)
{
	char now[32];
	struct hdb_stmt *st = NULL;
	int64_t file_id, run_id;
	int got;
	json_t *env = rs->environment;

	if (hdb_begin(db))
		return -1;
	now_utc(now, sizeof(now));
	st = hdb_prepare_cached(db, "INSERT INTO files (digest, path, added) VALUES ($1, $2, $3)"
				    " ON CONFLICT (digest) DO NOTHING RETURNING id");
	if (!st)
		goto fail;
	hdb_bind_text(st, 1, digest);
	hdb_bind_text(st, 2, path);
	hdb_bind_text(st, 3, now);
	if ((got = hdb_step(st)) < 0)
		goto fail;
	if (got == 0) {
		hdb_reset(st);
		return hdb_commit(db) ? -1 : 0;
	}
	file_id = hdb_col_int(st, 0);
	hdb_reset(st);
	st = hdb_prepare_cached(db, "INSERT INTO runs (file_id, date, git_commit, cpu_signature, cpu_model,"
				    " kernel, backend, compiler, hostname, pmcheck_version)"
				    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id");
	if (!st)
		goto fail;
	hdb_bind_int(st, 1, file_id);
	hdb_bind_text(st, 2, env_str(env, NULL, "date"));
	hdb_bind_text(st, 3, env_str(env, NULL, "git_commit"));
	hdb_bind_text(st, 4, pmc__results_signature(rs));
	hdb_bind_text(st, 5, env_str(env, "cpu", "brand"));
	hdb_bind_text(st, 6, env_str(env, "kernel", "release"));
	hdb_bind_text(st, 7, pmc__results_backend(rs));
	hdb_bind_text(st, 8, env_str(env, NULL, "compiler"));
	hdb_bind_text(st, 9, env_str(env, NULL, "hostname"));
	hdb_bind_text(st, 10, env_str(env, NULL, "pmcheck_version"));
	if (hdb_step(st) != 1)
		goto fail;
	run_id = hdb_col_int(st, 0);
	hdb_reset(st);
	st = NULL;
	if (insert_figures(db, run_id, rs) || insert_budget_checks(db, run_id, rs, path) ||
	    hdb_commit(db))
		goto fail;
	return 1;
fail:
	if (st)
		hdb_reset(st);
	hdb_rollback(db);
	return -1;
}

/* What a directory entry or an operand is, when it is not a regular file. */
static const char *file_kind(mode_t mode)
{
	return S_ISFIFO(mode) ? "a FIFO" : S_ISSOCK(mode) ? "a socket" : S_ISCHR(mode) ? "a character device"
	       : S_ISBLK(mode) ? "a block device" : S_ISDIR(mode) ? "a directory" : "not a regular file";
}

struct file_list {
	char **path;
	size_t n, cap;
};

static int list_push(struct file_list *l, char *path)
{
	if (!path)
		return -1;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **p = realloc(l->path, cap * sizeof(*p));

		if (!p) {
			free(path);
			return -1;
		}
		l->path = p;
		l->cap = cap;
	}
	l->path[l->n++] = path;
	return 0;
}

/* PATH, or the regular *.json files of the directory PATH (sorted): only
 * regular files are read, anything else is skipped with a message, never
 * opened (a FIFO would block the reader).  0, or an exit status. */
static int collect(const char *path, struct file_list *l, size_t *skipped)
{
	struct stat sb;
	struct dirent **names;
	int n, rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	if (!S_ISDIR(sb.st_mode)) {
		if (!S_ISREG(sb.st_mode)) {
			fprintf(stderr, "pmcheck history: %s: %s, not a results file: only regular files are read\n",
				path, file_kind(sb.st_mode));
			return PMC_EXIT_ERROR;
		}
		return list_push(l, strdup(path)) ? PMC_EXIT_ERROR : 0;
	}
	n = scandir(path, &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		char *full = NULL;

		if (len > 5 && !strcmp(names[i]->d_name + len - 5, ".json") &&
		    asprintf(&full, "%s/%s", path, names[i]->d_name) >= 0) {
			if (stat(full, &sb) == 0 && S_ISREG(sb.st_mode)) {
				if (list_push(l, full))
					rc = PMC_EXIT_ERROR;
				full = NULL;
			} else {
				fprintf(stderr, "pmcheck history: %s: skipped: %s, not a results file\n", full,
					stat(full, &sb) == 0 ? file_kind(sb.st_mode) : strerror(errno));
				(*skipped)++;
			}
			free(full);
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

/* A results file read whole, its digest, and what it holds; 0, or an exit
 * status with the reason printed. */
static int read_results(const char *path, char *digest, size_t size, struct pmc__results *rs)
{
	char *text = NULL, why[1024];
	size_t len = 0;
	int rc;

	/* pmc__results_load refuses anything but a regular file, unopened. */
	if (pmc__results_load(path, rs, why, sizeof(why))) {
		fprintf(stderr, "pmcheck history: %s\n", why);
		return PMC_EXIT_ERROR;
	}
	if ((rc = pmc__read_file(path, &text, &len)) != 0) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(-rc));
		pmc__results_release(rs);
		return PMC_EXIT_ERROR;
	}
	digest_of(text, len, digest, size);
	free(text);
	return 0;
}

int history_add(const char *target, char *const *paths, size_t npaths)
{
	struct file_list l = { 0 };
	struct hdb *db = NULL;
	size_t added = 0, present = 0, skipped = 0, i;
	int rc = 0;

	for (i = 0; i < npaths; i++) {
		int r = collect(paths[i], &l, &skipped);

		rc = rc ? rc : r;
	}
	if (!l.n) {
		if (!rc) {
			fprintf(stderr, "pmcheck history add: no results files (*.json, regular files) in ");
			for (i = 0; i < npaths; i++)
				fprintf(stderr, "%s%s", i ? ", " : "", paths[i]);
			fprintf(stderr, "%s; nothing added, no store opened\n",
				skipped ? " (the ones there are skipped above)" : "");
			rc = PMC_EXIT_FAIL;
		}
		goto out;
	}
	for (i = 0; i < l.n; i++) {
		struct pmc__results rs;
		char digest[64];
		int r;

		if (read_results(l.path[i], digest, sizeof(digest), &rs)) {
			rc = PMC_EXIT_ERROR;
			continue;
		}
		/* The store is opened (and made) at the first file worth adding. */
		if (!db && (r = history_open(target, HDB_WRITE, &db)) != 0) {
			pmc__results_release(&rs);
			rc = r;
			goto out;
		}
		r = add_file(db, l.path[i], digest, &rs);
		pmc__results_release(&rs);
		if (r < 0) {
			/* A lost server or a full disk fails every file after it
			 * alike: one message, and a stop. */
			char what[1200];

			snprintf(what, sizeof(what), "cannot add %s (it was not added; %zu added before it, %zu already there, %zu not tried: run the same add again when the store is back)",
				 l.path[i], added, present, l.n - i - 1);
			store_fail(db, what, true);
			rc = PMC_EXIT_ERROR;
			goto out;
		}
		added += r == 1;
		present += r == 0;
	}
	if (db)
		printf("%s: %zu results file(s) added, %zu already there%s\n", hdb_name(db), added, present,
		       rc ? "; the files above could not be read" : "");
	else
		fprintf(stderr, "pmcheck history add: none of the %zu results file(s) could be read; no store opened\n",
			l.n);
out:
	hdb_close(db);
	for (i = 0; i < l.n; i++)
		free(l.path[i]);
	free(l.path);
	return rc;
}

/* Every budget check of a file's cases that has a figure to pool. */
static int insert_budget_checks(struct hdb *db, int64_t run_id, const struct pmc__results *rs,
				const char *path)
{
	struct batch *bp = batch_new(db, 11, "INSERT INTO budget_checks (run_id, suite, test, region,"
					     " event, kind, name, sim_columns, sim_profile, backend,"
					     " value) VALUES");

	if (!bp)
		return -1;
	for (size_t i = 0; i < rs->n; i++)
		for (size_t k = 0; k < rs->cases[i].nchecks; k++) {
			struct pmc__merge_obs o;

			if (!pmc__merge_obs_of(rs, &rs->cases[i], &rs->cases[i].checks[k], path, &o))
				continue;
			cell_int(bp, run_id);
			cell_text(bp, o.suite);
			cell_text(bp, o.test);
			cell_text(bp, o.region);
			cell_text(bp, o.event);
			cell_text(bp, o.kind);
			cell_text(bp, o.name);
			cell_text(bp, o.sim_columns);
			cell_text(bp, o.sim_profile);
			cell_text(bp, o.backend);
			cell_real(bp, o.value);
			batch_row_done(bp);
		}
	return batch_finish(bp);
}

/*
 * Schema 1 kept trends but not what merging needs.  Fill budget_checks from
 * every file still at its path with the bytes it had when added; the runs
 * of the others stay in the trends, and the count of them is printed.
 */
static int migrate_1_to_2(struct hdb *db)
{
	struct hdb_stmt *st;
	size_t files = 0, filled = 0;
	int rc = 0;

	if (create(db, schema2_sql) ||
	    !(st = hdb_prepare(db, "SELECT r.id, f.path, f.digest FROM runs r JOIN files f ON f.id = r.file_id"
				   " ORDER BY r.id")))
		return history_fail(db, "cannot migrate the history to schema 2");
	while (rc == 0 && hdb_step(st) == 1) {
		const char *file = hdb_col_text(st, 1);
		const char *digest = hdb_col_text(st, 2);
		char *text = NULL, now[64], why[1024];
		struct pmc__results rs;
		size_t len = 0;

		files++;
		if (!file || pmc__read_file(file, &text, &len))
			continue;
		digest_of(text, len, now, sizeof(now));
		free(text);
		if (!digest || strcmp(now, digest) || pmc__results_load(file, &rs, why, sizeof(why)))
			continue;
		rc = insert_budget_checks(db, hdb_col_int(st, 0), &rs, file);
		pmc__results_release(&rs);
		filled += rc == 0;
	}
	hdb_finalize(st);
	if (rc || set_schema_version(db, 2))
		return history_fail(db, "cannot migrate the history to schema 2");
	fprintf(stderr, "pmcheck history: %s: schema 1 -> 2: budget figures of %zu of %zu results file(s) filled in from their paths",
		hdb_name(db), filled, files);
	if (filled < files)
		fprintf(stderr, "; %zu moved, changed or gone: their runs stay in the trends, and hwdb merge --from-history cannot pool them (history add them again from where they are now)",
			files - filled);
	fputs("\n", stderr);
	return 0;
}

/* The newest commit in the store: the git commit of the run added last
 * among those of the latest date. */
static char *newest_commit(struct hdb *db)
{
	struct hdb_stmt *st = hdb_prepare(db, "SELECT git_commit FROM runs WHERE git_commit IS NOT NULL"
					      " ORDER BY date DESC, id DESC LIMIT 1");
	char *commit = NULL;

	if (st && hdb_step(st) == 1)
		commit = strdup(hdb_col_text(st, 0));
	hdb_finalize(st);
	return commit;
}

int history_commits_matching(struct hdb *db, const char *prefix)
{
	struct hdb_stmt *st = hdb_prepare(db, "SELECT count(DISTINCT git_commit) FROM runs"
					      " WHERE substr(git_commit, 1, length($1)) = $1");
	int n = -1;

	if (st) {
		hdb_bind_text(st, 1, prefix);
		if (hdb_step(st) == 1)
			n = (int)hdb_col_int(st, 0);
	}
	hdb_finalize(st);
	return n;
}

int history_merge(struct hdb *db, const struct pmc__merge *m, const char *commit, FILE *out)
{
	struct hdb_stmt *st;
	struct pmc__merge_list list = { .owns = true }; /* a row's strings live one step */
	char *chosen = commit ? strdup(commit) : newest_commit(db), *full = NULL, what[512];
	size_t runs = 0;
	int64_t last_run = -1;
	int status = 0, commits;

	if (!chosen) {
		long total = (long)hdb_scalar(db, "SELECT count(*) FROM runs", 0);

		if (total)
			fprintf(stderr, "pmcheck hwdb merge: %s: none of its %ld run(s) names a git commit, and merging pools one commit's runs; results carry one when the suite runs in a git checkout or with PMCHECK_GIT_COMMIT (or GITHUB_SHA, CI_COMMIT_SHA) set; merge the results files instead\n",
				hdb_name(db), total);
		else
			fprintf(stderr, "pmcheck hwdb merge: %s: the history holds no runs; pmcheck history add results files first\n",
				hdb_name(db));
		return PMC_EXIT_FAIL;
	}
	/* A prefix names one commit, or it is refused. */
	commits = history_commits_matching(db, chosen);
	if (commits != 1) {
		fprintf(stderr, "pmcheck hwdb merge: %s: --commit=%s names %s commit in the history; give %s (pmcheck history show CASE lists the commits)\n",
			hdb_name(db), chosen, commits ? "more than one" : "no",
			commits ? "more of its digits" : "one that history add has seen");
		free(chosen);
		return PMC_EXIT_USAGE;
	}
	st = hdb_prepare(db, "SELECT b.suite, b.test, b.region, b.event, b.kind, b.name, b.sim_columns,"
			     " b.backend, r.cpu_signature, b.sim_profile, r.hostname, r.kernel, f.path,"
			     " b.value, r.id, r.git_commit"
			     " FROM budget_checks b JOIN runs r ON r.id = b.run_id"
			     " JOIN files f ON f.id = r.file_id"
			     " WHERE substr(r.git_commit, 1, length($1)) = $1 ORDER BY r.id");
	if (!st) {
		free(chosen);
		return history_fail(db, "cannot read the history");
	}
	hdb_bind_text(st, 1, chosen);
	while (status == 0 && hdb_step(st) == 1) {
#define COL(i) hdb_col_text(st, (i))
		struct pmc__merge_obs o = {
			.suite = COL(0), .test = COL(1), .region = COL(2), .event = COL(3),
			.kind = COL(4), .name = COL(5), .sim_columns = COL(6), .backend = COL(7),
			.signature = COL(8) ? COL(8) : "?", .sim_profile = COL(9), .host = COL(10),
			.kernel = COL(11), .source = COL(12), .value = hdb_col_real(st, 13),
		};
#undef COL

		if (pmc__merge_list_add(&list, &o)) {
			status = PMC_EXIT_ERROR;
			break;
		}
		if (hdb_col_int(st, 14) != last_run) {
			last_run = hdb_col_int(st, 14);
			runs++;
			if (runs == 1)
				full = strdup(hdb_col_text(st, 15));
		}
	}
	hdb_finalize(st);
	snprintf(what, sizeof(what), "the history %s (commit %.12s: %zu run(s) with budget figures)",
		 hdb_name(db), full ? full : chosen, runs);
	if (status == 0)
		status = pmc__hwdb_merge_pool(m, list.obs, list.n, what, out);
	pmc__merge_list_release(&list);
	free(chosen);
	free(full);
	return status;
}
