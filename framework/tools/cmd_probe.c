/* SPDX-License-Identifier: MIT */
/* `pmcheck probe`: what this machine can measure (probes/probe.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },     { "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, 't' }, { "deep", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },     { 0 },
	};
	struct pmc_probe_options opt = { 0 };
	const char *output = NULL;
	int json = 0, status = 0, c;
	json_t *rec;

	while ((c = cli_next("probe", argc, argv, "h", opts, &status)) != -1) {
		switch (c) {
		case -2:
			return status;
		case 'j':
			json = 1;
			break;
		case 'o':
			output = optarg;
			break;
		case 't':
			if (cli_positive("probe", "--timeout", optarg, &opt.timeout_s))
				return PMC_EXIT_USAGE;
			break;
		case 'd':
			opt.deep = 1;
			break;
		}
	}
	if (optind < argc)
		return cli_usage("probe", "unexpected \"%s\"", argv[optind]);
	{
		const char *opt[] = { "--output" }, *path[] = { output };
		int rc = cli_outputs("probe", opt, path, 1);

		if (rc)
			return rc;
	}
	rec = pmc_probe_run(&opt);
	if (!rec) {
		fprintf(stderr, "pmcheck probe: out of memory\n");
		return PMC_EXIT_ERROR;
	}
	if (output) {
		char *text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
		int rc = text ? pmc_write_file_atomic(output, text, strlen(text)) : -ENOMEM;

		free(text);
		if (rc) {
			fprintf(stderr, "pmcheck probe: cannot write %s: %s\n", output, strerror(-rc));
			json_decref(rec);
			return PMC_EXIT_ERROR;
		}
	}
	if (json) {
		json_dumpf(rec, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
		putchar('\n');
	} else {
		pmc_probe_print(rec, stdout);
	}
	json_decref(rec);
	return 0;
}
