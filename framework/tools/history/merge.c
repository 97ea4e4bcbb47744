/* SPDX-License-Identifier: MIT */
/*
 * The commits of the history store a prefix names (changes --since, hwdb
 * merge --commit), and one commit's budget figures pooled for `pmcheck hwdb
 * merge --from-history` (history.h).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "history.h"

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

int history_commit_named(struct hdb *db, const char *prefix, char **full)
{
	struct hdb_stmt *st;
	int n = history_commits_matching(db, prefix);

	*full = NULL;
	if (n != 1)
		return n;
	st = hdb_prepare(db, "SELECT min(git_commit) FROM runs WHERE substr(git_commit, 1, length($1)) = $1");
	if (!st)
		return -1;
	hdb_bind_text(st, 1, prefix);
	if (hdb_step(st) == 1 && hdb_col_text(st, 0))
		*full = strdup(hdb_col_text(st, 0));
	hdb_finalize(st);
	return *full ? 1 : -1;
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
