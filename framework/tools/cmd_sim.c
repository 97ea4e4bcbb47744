/* SPDX-License-Identifier: MIT */
/* `pmcheck sim`: run a program under the sim backend (src/sim/exec.c). */
#define _GNU_SOURCE
#include <stdio.h>

#include "cli.h"

/* For a bare callgrind run that simulates the same:
 * env $(pmcheck sim --print-command) PROGRAM */
static int print_command(void)
{
	const char *const *e = pmc_sim_pinned_env(), *const *o = pmc_sim_valgrind_options();

	for (; *e; e++)
		printf("%s ", *e);
	printf("valgrind");
	for (; *o; o++)
		printf(" %s", *o);
	putchar('\n');
	return 0;
}

int cmd_sim(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "verbose", no_argument, NULL, 'v' },
		{ "print-command", no_argument, NULL, 'p' },
		{ "only", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct pmc_error err;
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	const char *only = NULL;
	unsigned columns = 0;
	size_t n = 0;
	int verbose = 0, status = 0, c, rc;

	/* '+': options end at the program; what follows is its own. */
	while ((c = cli_next("sim", argc, argv, "+vh", opts, &status)) != -1) {
		if (c == -2)
			return status;
		if (c == 'p')
			return print_command();
		if (c == 'v')
			verbose = 1;
		if (c == 'o')
			only = optarg;
	}
	if (optind >= argc)
		return cli_usage("sim", "expected a program to run");
	if (only) {
		int bad = pmc_event_parse_list(only, specs, PMC_MAX_EVENTS, &n, &err);

		for (size_t i = 0; !bad && i < n; i++) {
			unsigned m;

			bad = pmc_sim_columns(&specs[i], &m, &err);
			columns |= m;
		}
		if (bad) {
			fprintf(stderr, "pmcheck sim: --only=%s: %s\n", only, err.message);
			return PMC_EXIT_USAGE;
		}
	}
	pmc_log_set(pmc__log_stderr, NULL);
	/* Settled here; the variables that steer it are not passed on to the
	 * program (exec.c): its environment must not depend on them. */
	if (pmc_sim_engine_prefer(NULL, &err)) {
		fprintf(stderr, "pmcheck sim: %s\n", err.message);
		return PMC_EXIT_USAGE;
	}
	rc = only ? pmc_sim_exec_for(argv + optind, verbose, columns | PMC_SIM_FROM_START, &err)
		  : pmc_sim_exec(argv + optind, verbose, &err);
	if (rc < 0) {
		fprintf(stderr, "pmcheck sim: %s\n", err.message);
		return PMC_EXIT_ERROR;
	}
	return rc;
}
