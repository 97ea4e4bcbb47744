/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history's store: the SQLite schema, its versions and migration,
 * and adding results files (history.h).
 *
 * The database is versioned (PRAGMA user_version); a newer one is refused
 * rather than misread.  Writers wait for each other (busy timeout, one
 * IMMEDIATE transaction per file, WAL journal), so CI jobs may add at once:
 * a file is either wholly in or not at all, and a file already in (the
 * same bytes) is skipped.
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

#include "cli.h"
#include "tools.h"
#include "history.h"

#define HISTORY_SCHEMA 2

static const char schema_sql[] =
	"CREATE TABLE files (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE,"
	"  path TEXT NOT NULL, added TEXT NOT NULL);"
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id),"
	"  date TEXT, git_commit TEXT, cpu_signature TEXT, cpu_model TEXT, kernel TEXT,"
	"  backend TEXT, compiler TEXT, hostname TEXT, pmcheck_version TEXT);"
	"CREATE TABLE figures (run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  case_name TEXT NOT NULL, verdict TEXT NOT NULL, region TEXT NOT NULL,"
	"  event TEXT NOT NULL, samples INTEGER NOT NULL, min INTEGER, median REAL,"
	"  max INTEGER, mean REAL, partial INTEGER NOT NULL, budget_lo REAL, budget_hi REAL);"
	"CREATE INDEX figures_case ON figures(case_name, event);"
	"PRAGMA user_version = 1;";

/* Schema 1 -> 2: each budget expectation's judged figure, with what
 * decides its hwdb key (hwdb merge --from-history). */
static const char schema2_sql[] =
	"CREATE TABLE budget_checks (run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  suite TEXT NOT NULL, test TEXT NOT NULL, region TEXT NOT NULL, event TEXT NOT NULL,"
	"  kind TEXT, name TEXT, sim_columns TEXT, sim_profile TEXT, backend TEXT NOT NULL,"
	"  value REAL NOT NULL);"
	"CREATE INDEX budget_checks_run ON budget_checks(run_id);"
	"PRAGMA user_version = 2;";

static int insert_budget_checks(sqlite3 *db, sqlite3_int64 run_id, const struct pmc__results *rs,
				const char *path);
static int migrate_1_to_2(sqlite3 *db, const char *path);

int history_fail(sqlite3 *db, const char *path, const char *what)
{
	fprintf(stderr, "pmcheck history: %s: %s: %s\n", path, what, db ? sqlite3_errmsg(db) : "");
	return PMC_EXIT_ERROR;
}

/* Open (creating when new) and check the schema version. */
int history_open(const char *path, sqlite3 **out)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	int version = -1;

	*out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		return history_fail(db, path, "cannot open the history database");
	sqlite3_busy_timeout(db, 120000);
	/* WAL: readers do not block the writer; set once, kept in the file. */
	sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		history_fail(db, path, "cannot lock the history database");
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version == 0) {
		/* New, or a file that is not a history database. */
		int tables = 0;

		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			tables = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (tables) {
			fprintf(stderr, "pmcheck history: %s: an SQLite database, but not a pmcheck history (no schema version); give another --db\n",
				path);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_close(db);
			return PMC_EXIT_ERROR;
		}
		if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(db, schema2_sql, NULL, NULL, NULL) != SQLITE_OK) {
			history_fail(db, path, "cannot create the history tables");
			sqlite3_close(db);
			return PMC_EXIT_ERROR;
		}
	} else if (version == 1) {
		if (migrate_1_to_2(db, path)) {
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_close(db);
			return PMC_EXIT_ERROR;
		}
	} else if (version != HISTORY_SCHEMA) {
		fprintf(stderr, "pmcheck history: %s: schema version %d, and this pmcheck knows %d: %s\n",
			path, version, HISTORY_SCHEMA,
			version > HISTORY_SCHEMA ? "a newer pmcheck made it; use that one"
						 : "not a pmcheck history");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		history_fail(db, path, "cannot create the history tables");
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
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

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
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

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* One results file, in one transaction: 1 added, 0 already there, or an
 * exit status. */
static int add_file(sqlite3 *db, const char *dbpath, const char *path)
{
	struct pmc__results rs;
	char *text = NULL, digest[64], why[1024];
	size_t len = 0;
	sqlite3_stmt *st = NULL;
	sqlite3_int64 file_id, run_id;
	int rc = pmc__read_file(path, &text, &len), status = PMC_EXIT_ERROR, exists = 0;
	json_t *env;

	if (rc) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(-rc));
		return PMC_EXIT_ERROR;
	}
	digest_of(text, len, digest, sizeof(digest));
	free(text);
	if (pmc__results_load(path, &rs, why, sizeof(why))) {
		fprintf(stderr, "pmcheck history: %s\n", why);
		return PMC_EXIT_ERROR;
	}
	env = rs.environment;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		pmc__results_release(&rs);
		return history_fail(db, dbpath, "cannot lock the history database");
	}
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM files WHERE digest = ?", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
	exists = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	st = NULL;
	if (exists) {
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		pmc__results_release(&rs);
		return 0;
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO files (digest, path, added) VALUES (?, ?, datetime('now'))",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	file_id = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO runs (file_id, date, git_commit, cpu_signature, cpu_model,"
			       " kernel, backend, compiler, hostname, pmcheck_version)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, file_id);
	bind_text(st, 2, env_str(env, NULL, "date"));
	bind_text(st, 3, env_str(env, NULL, "git_commit"));
	bind_text(st, 4, pmc__results_signature(&rs));
	bind_text(st, 5, env_str(env, "cpu", "brand"));
	bind_text(st, 6, env_str(env, "kernel", "release"));
	bind_text(st, 7, pmc__results_backend(&rs));
	bind_text(st, 8, env_str(env, NULL, "compiler"));
	bind_text(st, 9, env_str(env, NULL, "hostname"));
	bind_text(st, 10, env_str(env, NULL, "pmcheck_version"));
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	run_id = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO figures (run_id, case_name, verdict, region, event, samples,"
			       " min, median, max, mean, partial, budget_lo, budget_hi)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < rs.n; i++) {
		const struct pmc__result *c = &rs.cases[i];

		for (size_t g = 0; g < c->nregions; g++)
			for (size_t e = 0; e < c->regions[g].nev; e++) {
				const struct pmc__stat_rec *s = &c->regions[g].ev[e];
				double lo, hi;

				budget_of(c, c->regions[g].name, s->label, &lo, &hi);
				sqlite3_reset(st);
				sqlite3_bind_int64(st, 1, run_id);
				sqlite3_bind_text(st, 2, c->name, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 3, pmc_verdict_name(c->verdict), -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 4, c->regions[g].name, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 5, s->label, -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 6, (sqlite3_int64)s->n);
				if (s->n) {
					sqlite3_bind_int64(st, 7, (sqlite3_int64)s->min);
					sqlite3_bind_double(st, 8, s->median);
					sqlite3_bind_int64(st, 9, (sqlite3_int64)s->max);
					sqlite3_bind_double(st, 10, s->mean);
				} else {
					for (int k = 7; k <= 10; k++)
						sqlite3_bind_null(st, k);
				}
				sqlite3_bind_int(st, 11, s->multiplexed || s->not_counted ||
								 s->other_threads);
				bind_real(st, 12, lo);
				bind_real(st, 13, hi);
				if (sqlite3_step(st) != SQLITE_DONE)
					goto fail;
			}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (insert_budget_checks(db, run_id, &rs, path) ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	pmc__results_release(&rs);
	return 1;
fail:
	status = history_fail(db, dbpath, path);
	sqlite3_finalize(st);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	pmc__results_release(&rs);
	return status;
}

/* FILE, or every *.json of DIR (sorted). */
int history_add_path(sqlite3 *db, const char *dbpath, const char *path, size_t *added,
		    size_t *present)
{
	struct stat sb;
	struct dirent **names;
	int n, rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	if (!S_ISDIR(sb.st_mode)) {
		rc = add_file(db, dbpath, path);
		if (rc == 1)
			(*added)++;
		else if (rc == 0)
			(*present)++;
		return rc > 1 ? rc : 0;
	}
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		char *full = NULL;

		if (len > 5 && !strcmp(names[i]->d_name + len - 5, ".json") &&
		    asprintf(&full, "%s/%s", path, names[i]->d_name) >= 0) {
			int r = history_add_path(db, dbpath, full, added, present);

			rc = rc ? rc : r;
			free(full);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return rc;
}


/* Every budget check of a file's cases that has a figure to pool. */
static int insert_budget_checks(sqlite3 *db, sqlite3_int64 run_id, const struct pmc__results *rs,
				const char *path)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (sqlite3_prepare_v2(db,
			       "INSERT INTO budget_checks (run_id, suite, test, region, event, kind, name,"
			       " sim_columns, sim_profile, backend, value)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (size_t i = 0; i < rs->n && rc == 0; i++)
		for (size_t k = 0; k < rs->cases[i].nchecks && rc == 0; k++) {
			struct pmc__merge_obs o;

			if (!pmc__merge_obs_of(rs, &rs->cases[i], &rs->cases[i].checks[k], path, &o))
				continue;
			sqlite3_reset(st);
			sqlite3_bind_int64(st, 1, run_id);
			bind_text(st, 2, o.suite);
			bind_text(st, 3, o.test);
			bind_text(st, 4, o.region);
			bind_text(st, 5, o.event);
			bind_text(st, 6, o.kind);
			bind_text(st, 7, o.name);
			bind_text(st, 8, o.sim_columns);
			bind_text(st, 9, o.sim_profile);
			bind_text(st, 10, o.backend);
			sqlite3_bind_double(st, 11, o.value);
			if (sqlite3_step(st) != SQLITE_DONE)
				rc = -1;
		}
	sqlite3_finalize(st);
	return rc;
}

/*
 * Schema 1 kept trends but not what merging needs.  Fill budget_checks from
 * every file still at its path with the bytes it had when added; the runs
 * of the others stay in the trends, and the count of them is printed.
 */
static int migrate_1_to_2(sqlite3 *db, const char *path)
{
	sqlite3_stmt *st;
	size_t files = 0, filled = 0;
	int rc = 0;

	if (sqlite3_exec(db, schema2_sql, NULL, NULL, NULL) != SQLITE_OK)
		return history_fail(db, path, "cannot migrate the history to schema 2");
	if (sqlite3_prepare_v2(db,
			       "SELECT r.id, f.path, f.digest FROM runs r JOIN files f ON f.id = r.file_id"
			       " ORDER BY r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return history_fail(db, path, "cannot migrate the history to schema 2");
	while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(st, 1);
		const char *digest = (const char *)sqlite3_column_text(st, 2);
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
		rc = insert_budget_checks(db, sqlite3_column_int64(st, 0), &rs, file);
		pmc__results_release(&rs);
		filled += rc == 0;
	}
	sqlite3_finalize(st);
	if (rc)
		return history_fail(db, path, "cannot migrate the history to schema 2");
	fprintf(stderr, "pmcheck history: %s: schema 1 -> 2: budget figures of %zu of %zu results file(s) filled in from their paths",
		path, filled, files);
	if (filled < files)
		fprintf(stderr, "; %zu moved, changed or gone: their runs stay in the trends, and hwdb merge --from-history cannot pool them (history add them again from where they are now)",
			files - filled);
	fputs("\n", stderr);
	return 0;
}

/* The newest commit in the store: the git commit of the run added last
 * among those of the latest date. */
static char *newest_commit(sqlite3 *db)
{
	sqlite3_stmt *st;
	char *commit = NULL;

	if (sqlite3_prepare_v2(db,
			       "SELECT git_commit FROM runs WHERE git_commit IS NOT NULL"
			       " ORDER BY date DESC, id DESC LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		commit = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return commit;
}

int history_merge(sqlite3 *db, const char *dbpath, const struct pmc__merge *m, const char *commit,
		  FILE *out)
{
	sqlite3_stmt *st;
	struct pmc__merge_list list = { .owns = true }; /* sqlite's strings live one step */
	char *chosen = commit ? strdup(commit) : newest_commit(db), *full = NULL, what[512];
	size_t runs = 0;
	sqlite3_int64 last_run = -1;
	int status = 0, commits = 0;

	if (!chosen) {
		long total = 0;

		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM runs", -1, &st, NULL) == SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			total = (long)sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
		if (total)
			fprintf(stderr, "pmcheck hwdb merge: %s: none of its %ld run(s) names a git commit, and merging pools one commit's runs; results carry one when the suite runs in a git checkout or with PMCHECK_GIT_COMMIT (or GITHUB_SHA, CI_COMMIT_SHA) set; merge the results files instead\n",
				dbpath, total);
		else
			fprintf(stderr, "pmcheck hwdb merge: %s: the history holds no runs; pmcheck history add results files first\n",
				dbpath);
		return PMC_EXIT_FAIL;
	}
	/* A prefix names one commit, or it is refused. */
	if (sqlite3_prepare_v2(db,
			       "SELECT count(DISTINCT git_commit) FROM runs"
			       " WHERE substr(git_commit, 1, length(?1)) = ?1",
			       -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, chosen, -1, SQLITE_STATIC);
		if (sqlite3_step(st) == SQLITE_ROW)
			commits = sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	if (commits != 1) {
		fprintf(stderr, "pmcheck hwdb merge: %s: --commit=%s names %s commit in the history; give %s (pmcheck history show CASE lists the commits)\n",
			dbpath, chosen, commits ? "more than one" : "no",
			commits ? "more of its digits" : "one that history add has seen");
		free(chosen);
		return PMC_EXIT_USAGE;
	}
	if (sqlite3_prepare_v2(db,
			       "SELECT b.suite, b.test, b.region, b.event, b.kind, b.name, b.sim_columns,"
			       " b.backend, r.cpu_signature, b.sim_profile, r.hostname, r.kernel, f.path,"
			       " b.value, r.id, r.git_commit"
			       " FROM budget_checks b JOIN runs r ON r.id = b.run_id"
			       " JOIN files f ON f.id = r.file_id"
			       " WHERE substr(r.git_commit, 1, length(?1)) = ?1 ORDER BY r.id",
			       -1, &st, NULL) != SQLITE_OK) {
		free(chosen);
		return history_fail(db, dbpath, "cannot read the history");
	}
	sqlite3_bind_text(st, 1, chosen, -1, SQLITE_STATIC);
	while (status == 0 && sqlite3_step(st) == SQLITE_ROW) {
#define COL(i) ((const char *)sqlite3_column_text(st, (i)))
		struct pmc__merge_obs o = {
			.suite = COL(0), .test = COL(1), .region = COL(2), .event = COL(3),
			.kind = COL(4), .name = COL(5), .sim_columns = COL(6), .backend = COL(7),
			.signature = COL(8) ? COL(8) : "?", .sim_profile = COL(9), .host = COL(10),
			.kernel = COL(11), .source = COL(12), .value = sqlite3_column_double(st, 13),
		};
#undef COL

		if (pmc__merge_list_add(&list, &o)) {
			status = PMC_EXIT_ERROR;
			break;
		}
		if (sqlite3_column_int64(st, 14) != last_run) {
			last_run = sqlite3_column_int64(st, 14);
			runs++;
			if (runs == 1)
				full = strdup((const char *)sqlite3_column_text(st, 15));
		}
	}
	sqlite3_finalize(st);
	snprintf(what, sizeof(what), "the history %s (commit %.12s: %zu run(s) with budget figures)",
		 dbpath, full ? full : chosen, runs);
	if (status == 0)
		status = pmc__hwdb_merge_pool(m, list.obs, list.n, what, out);
	pmc__merge_list_release(&list);
	free(chosen);
	free(full);
	return status;
}
