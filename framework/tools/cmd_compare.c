/* SPDX-License-Identifier: MIT */
/* `pmcheck compare OLD.json NEW.json`: the regression report (the
 * comparison itself is src/harness/gate/compare.c). */
#define _GNU_SOURCE
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* Only the cases of rs that --filter selects; how many are left. */
static size_t keep_matching(struct pmc__results *rs, const char *filter)
{
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++) {
		if (rs->cases[i].name && pmc__filter_match(filter, rs->cases[i].name))
			rs->cases[n++] = rs->cases[i];
		else
			pmc__result_release(&rs->cases[i]);
	}
	rs->n = n;
	return n;
}

int cmd_compare(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tolerance", required_argument, NULL, 't' },
		{ "allow-missing", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'f' },
		{ "json", required_argument, NULL, 'j' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "moved-cases", required_argument, NULL, 'c' },
		{ "filter", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *files[2], *json_path = NULL, *md_path = NULL, *moved_path = NULL, *filter = NULL;
	struct pmc__tolerance tols = { 0 };
	bool force = false, allow_missing = false;
	struct pmc__results docs[2] = { { 0 }, { 0 } };
	json_t *rep;
	char why[1024];
	int i, c, status = 0;

	while ((c = cli_next("compare", argc, argv, "h", opts, &status)) != -1) {
		switch (c) {
		case -2:
			return status;
		case 't':
			if (pmc__tolerance_add(&tols, optarg, why, sizeof(why)))
				return cli_usage("compare", "%s", why);
			break;
		case 'f':
			force = true;
			break;
		case 'a':
			allow_missing = true;
			break;
		case 'j':
			json_path = optarg;
			break;
		case 'm':
			md_path = optarg;
			break;
		case 'c':
			moved_path = optarg;
			break;
		case 'F':
			if (strspn(optarg, ",") == strlen(optarg))
				return cli_usage("compare", "--filter=%s names no case: give the cases to compare as comma-separated globs (--filter='xml.*,-xml.slow')",
						 optarg);
			filter = optarg;
			break;
		}
	}
	if (argc - optind != 2)
		return cli_usage("compare", "expected two result files, OLD.json and NEW.json");
	{
		const char *opt[] = { "--json", "--markdown", "--moved-cases" };
		const char *path[] = { json_path, md_path, moved_path };
		int rc = cli_outputs("compare", opt, path, 3);

		if (rc)
			return rc;
	}
	files[0] = argv[optind];
	files[1] = argv[optind + 1];
	for (i = 0; i < 2; i++) {
		if (pmc__results_load(files[i], &docs[i], why, sizeof(why))) {
			fprintf(stderr, "pmcheck compare: %s\n", why);
			pmc__results_release(&docs[0]);
			return PMC_EXIT_ERROR;
		}
	}
	if (filter) {
		size_t kept = 0;

		for (i = 0; i < 2; i++)
			kept += keep_matching(&docs[i], filter);
		if (!kept) {
			char shown[3][512];

			fprintf(stderr, "pmcheck compare: --filter=%s matches no case of %s or %s (pmcheck results FILE lists them)\n",
				pmc__escape_ctl(shown[0], sizeof(shown[0]), filter),
				pmc__escape_ctl(shown[1], sizeof(shown[1]), files[0]),
				pmc__escape_ctl(shown[2], sizeof(shown[2]), files[1]));
			pmc__results_release(&docs[0]);
			pmc__results_release(&docs[1]);
			return PMC_EXIT_ERROR;
		}
	}
	rep = pmc__compare(&docs[0], &docs[1], &tols, force);
	pmc__print_compare(stdout, rep);
	status = pmc__compare_status(rep, allow_missing, stdout);
	if (json_path && pmc__write_json(json_path, rep) != 0) {
		fprintf(stderr, "pmcheck compare: cannot write %s: %s\n", json_path, strerror(errno));
		status = PMC_EXIT_ERROR;
	}
	if (md_path) {
		char *md = pmc__compare_markdown(rep);

		if (!md || pmc_write_file_atomic(md_path, md, strlen(md)) != 0) {
			fprintf(stderr, "pmcheck compare: cannot write %s: %s\n", md_path, strerror(errno));
			status = PMC_EXIT_ERROR;
		}
		free(md);
	}
	if (moved_path) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		if (f)
			pmc__compare_moved(rep, f);
		if (!f || fclose(f) || pmc_write_file_atomic(moved_path, text, len) != 0) {
			fprintf(stderr, "pmcheck compare: cannot write %s: %s\n", moved_path, strerror(errno));
			status = PMC_EXIT_ERROR;
		}
		free(text);
	}
	json_decref(rep);
	pmc__results_release(&docs[0]);
	pmc__results_release(&docs[1]);
	return status;
}
