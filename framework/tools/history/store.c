/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history's store opened (history.h): the schema, its versions and
 * migration, and an SQLite file's damage found, on SQLite or PostgreSQL
 * (db.h); a failure said with what a PostgreSQL role lacks.
 *
 * The store is versioned (SQLite: PRAGMA user_version; PostgreSQL: the
 * one-row table meta, in the schema "pmcheck"); a newer one is refused rather
 * than misread, an older one migrated, on both engines alike.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "history_int.h"

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

int history_store_fail(struct hdb *db, const char *what, bool write)
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
	return history_store_fail(db, what, false);
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
		return history_store_fail(db, "cannot create the history tables", true);
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
		rc = history_store_fail(db, "cannot lock the history database", true);
		goto out;
	}
	version = schema_version(db);
	if (version < 0) {
		rc = history_store_fail(db, "cannot read the history's schema version", true);
	} else if (version == 0) {
		rc = create_store(db);
	} else if (version < HISTORY_SCHEMA && version > 0) {
		if (version == 1)
			rc = migrate_1_to_2(db);
		if (rc == 0 && (create(db, schema3_sql) || set_schema_version(db, 3)))
			rc = history_store_fail(db, "cannot migrate the history to schema 3", true);
	} else if (version != HISTORY_SCHEMA) {
		fprintf(stderr, "pmcheck history: %s: schema version %lld, and this pmcheck knows %d: %s\n",
			hdb_name(db), (long long)version, HISTORY_SCHEMA,
			version > HISTORY_SCHEMA ? "a newer pmcheck made it; use that one"
						 : "not a pmcheck history");
		rc = PMC_EXIT_ERROR;
	}
	if (rc == 0 && hdb_commit(db))
		rc = history_store_fail(db, "cannot create the history tables", true);
out:
	if (rc) {
		hdb_rollback(db);
		hdb_close(db);
		return rc;
	}
	*out = db;
	return 0;
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
		history_digest(text, len, now, sizeof(now));
		free(text);
		if (!digest || strcmp(now, digest) || pmc__results_load(file, &rs, why, sizeof(why)))
			continue;
		rc = history_insert_budget_checks(db, hdb_col_int(st, 0), &rs, file);
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
