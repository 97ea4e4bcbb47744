/* SPDX-License-Identifier: MIT */
/* `pmcheck events LIST`: the parser's view of an event list. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>

#include "cli.h"

static void print_spec(const struct pmc_event_spec *s)
{
	unsigned mask;
	struct pmc_error err;
	int sim_rc;

	printf("%-32s %-10s type=%u config=0x%" PRIx64, s->name, pmc_event_kind_name(s->kind),
	       s->type, s->config);
	if (s->config1)
		printf(" config1=0x%" PRIx64, s->config1);
	if (s->config2)
		printf(" config2=0x%" PRIx64, s->config2);
	if (s->kind == PMC_KIND_BREAKPOINT)
		printf(" bp_addr=0x%" PRIx64 " bp_len=%" PRIu64 " bp_type=%u", s->bp_addr, s->bp_len,
		       s->bp_type);
	if (s->kind == PMC_KIND_UPROBE)
		printf(" path=%s offset=0x%" PRIx64, s->path, s->probe_offset);
	sim_rc = pmc_sim_columns(s, &mask, &err);
	if (sim_rc == 0 && (mask & PMC_SIM_CALLS_MASK)) {
		printf(" sim=calls");
	} else if (sim_rc == 0) {
		printf(" sim=");
		for (unsigned c = 0, first = 1; c < PMC_SIM_NCOLUMNS; c++)
			if (mask & (1u << c)) {
				printf("%s%s", first ? "" : "+", pmc_sim_column_name(c));
				first = 0;
			}
	} else {
		printf(" sim=unsupported");
	}
	printf("%s%s%s\n", s->exclude_user ? " exclude_user" : "",
	       s->exclude_kernel ? " exclude_kernel" : "", s->exclude_hv ? " exclude_hv" : "");
	/* Why not, in the words a sim case's SKIP uses. */
	if (sim_rc)
		printf("    %s\n", err.message);
}

int cmd_events(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_error err;
	int status = 0, c;
	size_t n;

	/* '+': an event list may start with '-' only by mistake, and then
	 * the parser says what is wrong with it. */
	while ((c = cli_next("events", argc, argv, "+h", opts, &status)) != -1)
		if (c == -2)
			return status;
	if (argc - optind != 1)
		return cli_usage("events", "expected one comma-separated event list");
	if (pmc_event_parse_list(argv[optind], specs, PMC_MAX_EVENTS, &n, &err)) {
		fprintf(stderr, "pmcheck events: %s\n", err.message);
		if (err.position >= 0)
			cli_caret(argv[optind], err.position);
		return 1;
	}
	for (size_t i = 0; i < n; i++)
		print_spec(&specs[i]);
	return 0;
}
