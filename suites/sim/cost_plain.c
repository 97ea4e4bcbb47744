/* SPDX-License-Identifier: MIT */
/*
 * The references ci/bench sets a sim case's cost against:
 *
 *   pmcheck_sim_cost_plain body N
 *       cost.c's inputs, then its body N times, as a plain program: run
 *       under valgrind --tool=none it is the same work as the case without
 *       pmcheck (N = the case's repetitions plus its warm-up).
 *   pmcheck_sim_cost_plain readings N [EVENTS]
 *       under `pmcheck sim --only=EVENTS --`: N readings of a sim counter
 *       set, timed; prints "reading_us X", the time of one reading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pmcheck/counters.h>
#include <pmcheck/event.h>
#include <pmcheck/sim.h>

#include "cost_body.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int readings(long n, const char *events)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set = NULL;
	struct pmc_reading r;
	struct pmc_error err;
	size_t nspecs = 0;
	double t0, t;

	if (pmc_event_parse_list(events, specs, PMC_MAX_EVENTS, &nspecs, &err) ||
	    pmc_counters_open(&set, specs, nspecs, PMC_OPEN_SIM, &err)) {
		fprintf(stderr, "pmcheck_sim_cost_plain: %s\n", err.message);
		return 1;
	}
	pmc_counters_enable(set);
	pmc_counters_read(set, &r);
	t0 = now();
	for (long i = 0; i < n; i++)
		if (pmc_counters_read(set, &r)) {
			fprintf(stderr, "pmcheck_sim_cost_plain: reading %ld failed\n", i);
			return 1;
		}
	t = now() - t0;
	printf("reading_us %.3f engine %s\n", t / (double)n * 1e6, pmc_sim_engine() ? pmc_sim_engine() : "none");
	pmc_counters_close(set);
	return 0;
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
	uint64_t sink = 0;

	if (argc < 3 || n < 1 || (strcmp(argv[1], "body") && strcmp(argv[1], "readings"))) {
		fprintf(stderr, "usage: pmcheck_sim_cost_plain body|readings N [EVENTS]\n");
		return 2;
	}
	if (!strcmp(argv[1], "readings"))
		return readings(n, argc > 3 ? argv[3] : "instructions:u");
	cost_inputs();
	for (long i = 0; i < n; i++)
		sink += body();
	printf("sink %llu\n", (unsigned long long)sink);
	return 0;
}
