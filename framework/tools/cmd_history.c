/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history: results files across commits and machines, in an
 * SQLite database (history_store.c).
 *
 *   history add [--db=FILE] FILE|DIR...   each results file once (by content)
 *   history show [--db=FILE] CASE [EVENT] the series of a case, oldest first
 *   history report [--db=FILE] --html=DIR one static page (history_report.c)
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#if PMCHECK_HAVE_SQLITE
#include "history.h"

static int show(sqlite3 *db, const char *dbpath, const char *name, const char *event)
{
	sqlite3_stmt *st;
	int rows = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.date, r.git_commit, r.cpu_signature, r.backend, f.region, f.event,"
			       " f.min, f.median, f.max, f.verdict, f.partial, f.budget_lo, f.budget_hi"
			       " FROM figures f JOIN runs r ON r.id = f.run_id"
			       " WHERE f.case_name = ?1 AND (?2 IS NULL OR f.event = ?2)"
			       " ORDER BY f.region, f.event, r.cpu_signature, r.backend, r.date, r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return history_fail(db, dbpath, "cannot read the history");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (event)
		sqlite3_bind_text(st, 2, event, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *commit = (const char *)sqlite3_column_text(st, 1);
		char bounds[64] = "";

		if (rows++ == 0)
			printf("%-20s %-12s %-22s %-5s %-12s %-22s %12s %12s %12s %-8s %s\n", "date",
			       "commit", "cpu", "backend", "region", "event", "min", "median", "max",
			       "verdict", "budget");
		{
			bool has_lo = sqlite3_column_type(st, 11) != SQLITE_NULL;
			bool has_hi = sqlite3_column_type(st, 12) != SQLITE_NULL;
			double lo = sqlite3_column_double(st, 11), hi = sqlite3_column_double(st, 12);

			if (has_lo && has_hi && lo == hi)
				snprintf(bounds, sizeof(bounds), "= %.0f", lo);
			else if (has_lo && has_hi)
				snprintf(bounds, sizeof(bounds), "%.0f..%.0f", lo, hi);
			else if (has_hi)
				snprintf(bounds, sizeof(bounds), "<= %.0f", hi);
			else if (has_lo)
				snprintf(bounds, sizeof(bounds), ">= %.0f", lo);
		}
		printf("%-20.20s %-12.12s %-22.22s %-5.5s %-12.12s %-22.22s %12lld %12.1f %12lld %-8s %s%s\n",
		       (const char *)sqlite3_column_text(st, 0), commit ? commit : "-",
		       (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
		       (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5),
		       sqlite3_column_int64(st, 6), sqlite3_column_double(st, 7),
		       sqlite3_column_int64(st, 8), (const char *)sqlite3_column_text(st, 9), bounds,
		       sqlite3_column_int(st, 10) ? " (partial)" : "");
	}
	sqlite3_finalize(st);
	if (!rows) {
		fprintf(stderr, "pmcheck history: %s: no figures of case %s%s%s\n", dbpath, name,
			event ? ", event " : "", event ? event : "");
		return PMC_EXIT_FAIL;
	}
	return 0;
}


int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dbpath = getenv("PMCHECK_HISTORY_DB"), *sub, *html = NULL;
	int c, status = 0;
	sqlite3 *db;

	if (!dbpath || !*dbpath)
		dbpath = HISTORY_DEFAULT;
	while ((c = cli_next("history", argc, argv, "+h", opts, &status)) != -1) {
		if (c == -2)
			return status;
		if (c == 'd')
			dbpath = optarg;
		if (c == 'H')
			html = optarg;
	}
	if (optind >= argc)
		return cli_usage("history", "say what to do: add FILE|DIR... or show CASE [EVENT]");
	sub = argv[optind++];
	/* Options may follow the subcommand too. */
	while ((c = cli_next("history", argc, argv, "h", opts, &status)) != -1) {
		if (c == -2)
			return status;
		if (c == 'd')
			dbpath = optarg;
		if (c == 'H')
			html = optarg;
	}
	if (!strcmp(sub, "add")) {
		size_t added = 0, present = 0;
		int rc = 0;

		if (optind >= argc)
			return cli_usage("history", "add needs results files or directories");
		if ((status = history_open(dbpath, &db)) != 0)
			return status;
		for (int i = optind; i < argc; i++) {
			int r = history_add_path(db, dbpath, argv[i], &added, &present);

			rc = rc ? rc : r;
		}
		sqlite3_close(db);
		printf("%s: %zu results file(s) added, %zu already there\n", dbpath, added, present);
		return rc;
	}
	if (!strcmp(sub, "show")) {
		if (optind >= argc || argc - optind > 2)
			return cli_usage("history", "show takes a case name and, optionally, an event");
		if ((status = history_open(dbpath, &db)) != 0)
			return status;
		status = show(db, dbpath, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL);
		sqlite3_close(db);
		return status;
	}
	if (!strcmp(sub, "report")) {
		if (!html)
			return cli_usage("history", "report needs --html=DIR");
		if (optind != argc)
			return cli_usage("history", "report takes no operands");
		if ((status = history_open(dbpath, &db)) != 0)
			return status;
		status = history_report(db, dbpath, html);
		sqlite3_close(db);
		return status;
	}
	return cli_usage("history", "unknown subcommand \"%s\" (add, show, report)", sub);
}


#else

int cmd_history(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "pmcheck history: this pmcheck was built without SQLite (libsqlite3-dev); install it and rebuild\n");
	return PMC_EXIT_ERROR;
}

#endif
