/* SPDX-License-Identifier: MIT */
/*
 * pmcheck: the command-line tool.
 *
 *   pmcheck probe [--json] [--output=FILE] [--timeout=SECONDS]
 *   pmcheck events EVENT[,EVENT...]     parse, show canonical names and attrs
 *   pmcheck results [--require-measured] [--json=F] [--junit=F] DIR|FILE...
 *   pmcheck version | help
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"
#include "probe.h"

static const char usage[] =
	"usage: pmcheck <command> [options]\n"
	"\n"
	"commands:\n"
	"  probe [--json] [--output=FILE] [--timeout=S]\n"
	"                      what this machine can measure (table, or JSON with --json;\n"
	"                      --output writes the JSON atomically to FILE)\n"
	"  events LIST         parse a comma-separated event list and show each event's\n"
	"                      canonical name, kind and perf_event_attr fields\n"
	"  results [--require-measured] [--json=FILE] [--junit=FILE] DIR|FILE...\n"
	"                      merge suite result files (--json, --results-dir), print\n"
	"                      the summary with grouped skip reasons; --require-measured\n"
	"                      fails when no case measured anything (all skipped);\n"
	"                      --clear DIR empties DIR of result files\n"
	"  version             print the version\n"
	"  help                this text\n";

static const char *const kind_names[] = {
	"?", "hardware", "cache", "raw", "pmu", "libpfm4", "software", "breakpoint", "uprobe",
};


static int cmd_probe(int argc, char **argv)
{
	struct pmc_probe_options opt = { 0 };
	const char *output = NULL;
	int json = 0;
	json_t *rec;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strncmp(argv[i], "--output=", 9))
			output = argv[i] + 9;
		else if (!strncmp(argv[i], "--timeout=", 10) && atoi(argv[i] + 10) > 0)
			opt.timeout_s = (unsigned)atoi(argv[i] + 10);
		else {
			fprintf(stderr, "pmcheck probe: unknown option \"%s\"\n\n%s", argv[i], usage);
			return 2;
		}
	}
	rec = pmc_probe_run(&opt);
	if (!rec) {
		fprintf(stderr, "pmcheck probe: out of memory\n");
		return 1;
	}
	if (output) {
		char *text = json_dumps(rec, JSON_INDENT(2) | JSON_SORT_KEYS);
		int rc = text ? pmc_write_file_atomic(output, text, strlen(text)) : -ENOMEM;

		free(text);
		if (rc) {
			fprintf(stderr, "pmcheck probe: cannot write %s: %s\n", output, strerror(-rc));
			json_decref(rec);
			return 1;
		}
	}
	if (json)
		json_dumpf(rec, stdout, JSON_INDENT(2) | JSON_SORT_KEYS);
	else
		pmc_probe_print(rec, stdout);
	if (json)
		putchar('\n');
	json_decref(rec);
	return 0;
}

static int cmd_events(int argc, char **argv)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_error err;
	size_t n;

	if (argc != 1) {
		fprintf(stderr, "pmcheck events: expected one comma-separated list\n\n%s", usage);
		return 2;
	}
	if (pmc_event_parse_list(argv[0], specs, PMC_MAX_EVENTS, &n, &err)) {
		fprintf(stderr, "pmcheck: %s\n", err.message);
		if (err.position >= 0)
			fprintf(stderr, "  %s\n  %*s^\n", argv[0], err.position, "");
		return 1;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pmc_event_spec *s = &specs[i];

		printf("%-32s %-10s type=%u config=0x%" PRIx64, s->name, kind_names[s->kind], s->type,
		       s->config);
		if (s->config1)
			printf(" config1=0x%" PRIx64, s->config1);
		if (s->config2)
			printf(" config2=0x%" PRIx64, s->config2);
		if (s->kind == PMC_KIND_BREAKPOINT)
			printf(" bp_addr=0x%" PRIx64 " bp_len=%" PRIu64 " bp_type=%u", s->bp_addr,
			       s->bp_len, s->bp_type);
		if (s->kind == PMC_KIND_UPROBE)
			printf(" path=%s offset=0x%" PRIx64, s->path, s->probe_offset);
		printf("%s%s%s\n", s->exclude_user ? " exclude_user" : "",
		       s->exclude_kernel ? " exclude_kernel" : "", s->exclude_hv ? " exclude_hv" : "");
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 2, argv + 2);
	if (!strcmp(argv[1], "events"))
		return cmd_events(argc - 2, argv + 2);
	if (!strcmp(argv[1], "results"))
		return pmc__results_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("pmcheck %d.%d.%d\n", PMCHECK_VERSION_MAJOR, PMCHECK_VERSION_MINOR,
		       PMCHECK_VERSION_PATCH);
		return 0;
	}
	fprintf(stderr, "pmcheck: unknown command \"%s\"\n\n%s", argv[1], usage);
	return 2;
}
