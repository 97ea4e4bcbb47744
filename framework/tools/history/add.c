/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history add (history.h): results files found (a file, or a
 * directory's regular *.json files), read and checked, and each added in
 * one transaction, so CI jobs may add at once: a file is either wholly in
 * or not at all, and a file already in (the same bytes) is skipped.  SQLite
 * writers wait for each other (busy timeout, IMMEDIATE transactions, WAL
 * journal); PostgreSQL writers run side by side and meet only on a file's
 * digest.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../cli.h"
#include "history_int.h"

static const char *env_str(json_t *env, const char *obj, const char *key)
{
	json_t *o = obj ? json_object_get(env, obj) : env;

	return json_string_value(json_object_get(o, key));
}

/* Now, in UTC, as SQLite's datetime('now') writes it. */
static void now_utc(char *out, size_t size)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%d %H:%M:%S", &tm);
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
	if (history_insert_figures(db, run_id, rs) ||
	    history_insert_budget_checks(db, run_id, rs, path) ||
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

	/* pmc__results_load refuses anything but a regular file, unopened;
	 * the digest is of the bytes it read (read once, not again). */
	if (pmc__results_load_text(path, rs, &text, &len, why, sizeof(why))) {
		fprintf(stderr, "pmcheck history: %s\n", why);
		return PMC_EXIT_ERROR;
	}
	history_digest(text, len, digest, size);
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
			history_store_fail(db, what, true);
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
