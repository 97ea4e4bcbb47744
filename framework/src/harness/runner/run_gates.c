/* SPDX-License-Identifier: MIT */
/*
 * The runner's gates: --calibrate (N runs of each selected case, then its
 * budgets, gate.c's policy) and --baseline (the run compared with a stored
 * one, compare.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runner_int.h"
#include "util/child.h"

/*
 * Calibrated on sim with pmcheck's valgrind tool: the functions of each
 * region, which the budgets' functions file keeps for attribution, are the
 * tool's own; a build of the tool without function costs leaves them to
 * one more run under callgrind (its counts are not used).
 */
static void functions_from_callgrind(struct runner *r, const struct pmc_test_def *d,
				     struct pmc__result *first)
{
	struct pmc__result cg;
	double secs;

	if (!first->sim_engine || strcmp(first->sim_engine, "pmcheck") || !pmc__result_has_costs(first))
		return;
	if (pmc__result_has_functions(first)) {
		printf("  the functions of each region for attribution: counted by pmcheck's valgrind tool in the first run\n");
		return;
	}
	pmc__functions_from_callgrind(r, d, &secs, &cg);
	for (size_t i = 0; i < first->nregions; i++) {
		struct pmc__region_rec *g = &first->regions[i];
		struct pmc__region_rec *h = (struct pmc__region_rec *)pmc__result_region(&cg, g->name);

		if (!h || g->nfns || h->nev != g->nev)
			continue;
		g->fns = h->fns;
		g->nfns = h->nfns;
		h->fns = NULL;
		h->nfns = 0;
	}
	printf("  the functions of each region for attribution: from one more run under callgrind (%.3g s)\n", secs);
	pmc__result_release(&cg);
}

/*
 * The thread schedules --calibrate's runs of case d take in turn.  A case
 * that counts other threads and children (.inherit) goes through every
 * one: on an idle machine one order of its threads can repeat in every run
 * (a region that created and joined a thread calibrated exact from five
 * quiet runs, and pthread_join took another path in every run under
 * `ctest -j2`).  Other cases alternate valgrind's two schedulers on sim, as
 * before.  *said names them, for the budget's comment.
 */
static void schedules_of(const struct runner *r, const struct pmc_test_def *d,
			 enum pmc__schedule *sched, size_t *n, char *said, size_t size)
{
	bool sim = r->backend == PMC_BACKEND_SIM;

	*n = 0;
	sched[(*n)++] = PMC__SCHED_QUIET;
	if (sim)
		sched[(*n)++] = PMC__SCHED_FAIR;
	if (d->opt.inherit) {
		sched[(*n)++] = PMC__SCHED_ONE_CPU;
		sched[(*n)++] = PMC__SCHED_CROWDED;
		sched[(*n)++] = PMC__SCHED_BUSY;
	}
	snprintf(said, size, "%zu thread schedules", *n);
	if (!d->opt.inherit)
		return;
	printf("  .inherit: its other threads and children count, so its runs take %zu thread schedules in turn:", *n);
	for (size_t i = 0; i < *n; i++)
		printf("%s %s", i ? "," : "", pmc__schedule_name(sched[i]));
	printf("; then as many runs again with every CPU busy\n");
}

/* --calibrate: N runs per selected case, then budgets into the first hwdb dir. */
int pmc__run_calibrate(struct runner *r, size_t total)
{
	char key[PMC_HWDB_KEY_MAX], why[512];
	const char *backend = r->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	size_t i, idx = 0, written = 0, missed = 0, skipped = 0, cases_missed = 0;
	int status = PMC_EXIT_PASS;

	if (r->backend == PMC_BACKEND_SIM) {
		/* The sim profile is the key (valgrind, geometry, compiler build);
		 * every case of one executable shares its build. */
		if (r->calibrate_key && *r->calibrate_key) {
			fprintf(stderr, "%s: --calibrate-key: the sim backend records under its profile key only\n",
				r->prog);
			return PMC_EXIT_USAGE;
		}
		pmc__sim_profile_key(pmc__case(0), key, sizeof(key));
	} else if (pmc__calibration_key(backend, r->calibrate_key, key, sizeof(key), why,
					sizeof(why))) {
		fprintf(stderr, "%s: --calibrate: %s\n", r->prog, why);
		return PMC_EXIT_USAGE;
	}
	{
		char noisy[160];

		/* On sim, misses move with the memory layout alone: the
		 * layouts' spread is their measure (gate.c), no flat margin. */
		if (r->backend == PMC_BACKEND_SIM && !r->margin_set)
			snprintf(noisy, sizeof(noisy),
				 "miss counts: the largest plus twice the spread over the runs' memory layouts, or twice its square root");
		else
			snprintf(noisy, sizeof(noisy), "noisy ones: margin %.3g%% over the largest", r->margin);
		printf("calibrating %zu case(s), %u runs each, into %s/budgets/%s/%s (deterministic counts: %s; %s)\n",
		       total, r->calibrate, r->hwdb[0], r->backend == PMC_BACKEND_SIM ? "<key>" : key,
		       r->calibrate_key && *r->calibrate_key ? "" : " and, for calls, breakpoint hits and page faults, budgets/any/ (or this release's os-* key where the suite keeps them)",
		       r->cal_tolerance > 0 ? "within the tolerance" : "exact", noisy);
	}
	if (r->cal_tolerance > 0)
		printf("tolerance for deterministic counts: %g%%\n", r->cal_tolerance);
	for (i = 0; i < pmc__ncases(); i++) {
		const struct pmc_test_def *d = pmc__case(i);
		struct pmc__result *runs;
		char name[256];
		enum pmc__schedule sched[PMC__SCHEDULES];
		char said[256];
		size_t nsched, nruns;
		unsigned k, ncal;
		int n;

		pmc__full_name(d, name, sizeof(name));
		if (!pmc__filter_match(r->filter, name))
			continue;
		printf("[%zu/%zu] %s\n", ++idx, total, name);
		fflush(stdout);
		schedules_of(r, d, sched, &nsched, said, sizeof(said));
		/* A case whose threads count: as many runs again with every
		 * CPU busy, the schedule that brings out a join's other path
		 * (a user's libbz2 region: calibrated exact in 2 of 7
		 * calibrations with one busy run, 94 instructions fewer in 11
		 * of 20 busy `ctest -j2` runs). */
		ncal = r->calibrate + (d->opt.inherit ? r->calibrate : 0);
		runs = calloc(ncal, sizeof(*runs));
		if (!runs)
			return PMC_EXIT_ERROR;
		for (k = 0; k < ncal; k++) {
			double secs;

			/* 0, 448, 896, ...: distinct cache-set offsets for 64 runs. */
			pmc__sim_layout_shift = (k * 448) % 4096;
			pmc__schedule = k < r->calibrate ? sched[k % nsched] : PMC__SCHED_BUSY;
			pmc__run_one(r, d, &secs, &runs[k]);
			/* A case that cannot run here will not in the next runs. */
			if (k == 0 && (runs[k].verdict == PMC_SKIP || runs[k].verdict == PMC_ERROR))
				break;
		}
		pmc__schedule = PMC__SCHED_QUIET;
		/* Misses on sim: as many runs again with the heap moved too.
		 * What allocating code executes moves with the heap (expat:
		 * 2489106..2490002 instructions over nine heap offsets), so
		 * deterministic counts come from the first runs alone. */
		nruns = k;
		if (k == ncal && r->backend == PMC_BACKEND_SIM && pmc__calibration_noisy(&runs[0])) {
			struct pmc__result *more = realloc(runs, 2 * k * sizeof(*runs));

			if (!more) {
				free(runs);
				return PMC_EXIT_ERROR;
			}
			runs = more;
			printf("  cache or branch misses: %u more runs with the heap moved too\n", k);
			fflush(stdout);
			for (; nruns < 2 * (size_t)k; nruns++) {
				double secs;

				/* 80, 1168, 2256, ...: 16-byte aligned, distinct sets. */
				pmc__sim_heap_shift = (nruns * 1088 + 80) % 4096;
				pmc__sim_layout_shift = (nruns * 448) % 4096;
				pmc__run_one(r, d, &secs, &runs[nruns]);
			}
			pmc__sim_heap_shift = 0;
		}
		pmc__sim_layout_shift = 0;
		if (k == ncal)
			functions_from_callgrind(r, d, &runs[0]);
		size_t before = missed;
		bool skip = runs[0].verdict == PMC_SKIP;

		{
			/* On sim, the case's lines write the key the run's
			 * header named "<key>", as a run's failures do. */
			char *keyed = NULL;
			size_t keyedlen = 0;
			FILE *m = r->backend == PMC_BACKEND_SIM ? open_memstream(&keyed, &keyedlen) : NULL;

			n = pmc__calibrate_case(runs, k < ncal ? 1 : nruns,
						&(struct pmc__calibration){ r->hwdb[0], key,
									    r->calibrate_key && *r->calibrate_key,
									    r->backend == PMC_BACKEND_SIM && !r->margin_set ? 0 : r->margin,
									    r->cal_tolerance,
									    r->backend == PMC_BACKEND_SIM, &missed,
									    nruns > k ? k : 0,
									    nsched > 1 && d->opt.inherit ? said : NULL },
						m ? m : stdout);
			if (m) {
				fclose(m);
				pmc__put_keyed(stdout, keyed ? keyed : "", key);
				free(keyed);
			}
		}
		if (n < 0)
			status = PMC_EXIT_ERROR, missed++;
		else
			written += (size_t)n;
		/* A case that does not run here (another backend's, no PMU) is
		 * said, not a failure; one that ran and was not calibrated is. */
		skipped += skip;
		cases_missed += !skip && missed > before;
		for (size_t j = 0; j < (nruns > ncal ? nruns : ncal); j++)
			pmc__result_release(&runs[j]); /* empty past an early stop */
		free(runs);
	}
	printf("\n%zu budget(s) written under %s/budgets/ (each file is named above); review them with git diff before committing\n",
	       written, r->hwdb[0]);
	/* A calibration that left a selected case without its budgets did not
	 * do what it was asked: never exit 0 for it (the gate would then be
	 * unbudgeted, or judge by stale budgets). */
	if (skipped)
		printf("%zu of %zu case(s) skipped here, not calibrated (see \"not calibrated\" above)\n",
		       skipped, total);
	if (cases_missed) {
		printf("%zu of %zu case(s) ran but were not calibrated (see \"not calibrated\" above): calibration failed\n",
		       cases_missed, total);
		status = PMC_EXIT_ERROR;
	} else if (status == PMC_EXIT_PASS && skipped == total) {
		status = PMC_EXIT_SKIP;
	}
	return status;
}

/* --baseline: compare, print, Markdown; keeps the comparison with the
 * run's results (--json carries it); returns an exit status. */
int pmc__run_compare_baseline(struct runner *r, struct pmc__results *run)
{
	struct pmc__results old, kept = { 0 };
	size_t i, outside = 0;
	char why[1024];
	json_t *rep;
	int status;

	if (pmc__results_load(r->baseline, &old, why, sizeof(why))) {
		fprintf(stderr, "%s: --baseline: %s\n", r->prog, why);
		return PMC_EXIT_ERROR;
	}
	/* Cases outside --filter were not selected: not compared, not gone. */
	kept.environment = json_incref(old.environment);
	for (i = 0; i < old.n; i++) {
		if (pmc__filter_match(r->filter, old.cases[i].name))
			pmc__results_add(&kept, &old.cases[i]);
		else
			outside++;
	}
	rep = pmc__compare(&kept, run, &r->tolerance, false);
	if (pmc__sim_functions_for_changes(r, rep, run)) {
		json_decref(rep);
		rep = pmc__compare(&kept, run, &r->tolerance, false);
	}
	pmc__sample_regressions(r, rep, run);
	printf("\ncompared with baseline %s", r->baseline);
	if (outside)
		printf(" (%zu of its cases are outside --filter=%s and were not compared)", outside,
		       r->filter);
	printf(":\n");
	pmc__print_compare(stdout, rep);
	status = pmc__compare_status(rep, r->allow_missing, stdout);
	if (r->report_md) {
		char *md = pmc__compare_markdown(rep);
		int wrc = md ? pmc_write_file_atomic(r->report_md, md, strlen(md)) : -ENOMEM;

		if (wrc) {
			fprintf(stderr, "%s: cannot write --report-md=%s: %s\n", r->prog, r->report_md,
				strerror(-wrc));
			status = PMC_EXIT_ERROR;
		}
		free(md);
	}
	json_decref(run->comparison);
	run->comparison = rep;
	pmc__results_release(&kept);
	pmc__results_release(&old);
	return status;
}
