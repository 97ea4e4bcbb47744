/* SPDX-License-Identifier: MIT */
/*
 * The runner's private interface, shared by its three files: runner.c (the
 * command line, selection, output, pmc_main), process.c (one case in a
 * child process with a deadline; under the sim backend, one valgrind per
 * case and the case's side of it) and run_gates.c (--calibrate and
 * --baseline).
 */
#ifndef PMCHECK_RUNNER_INT_H
#define PMCHECK_RUNNER_INT_H

#include "harness_int.h"


struct runner {
	const char *prog;
	const char *filter;
	const char *list;      /* NULL, "", or "tsv" */
	unsigned repeat;
	double timeout;
	enum pmc_backend backend;
	bool strict, no_fork, verbose, tap, ctest, color;
	bool sim_full; /* --sim-full: every simulation, instrumented from the start */
	const char *sim_engine; /* --sim-engine, or NULL */
	const char *sim_engine_settled; /* what pmc_sim_engine_prefer was given */
	const char *json_path, *junit_path, *results_dir;
	const char *hwdb[PMC_HWDB_MAX_DIRS];
	size_t nhwdb;
	unsigned calibrate;
	double margin, cal_tolerance;
	struct pmc__tolerance tolerance;
	bool allow_missing;
	bool no_sampling;      /* --no-sampling: no attribution re-run on perf */
	const char *calibrate_key, *baseline, *save_baseline, *report_md;
	char *hwdb_env;
	/* Set in the process the sim backend starts for one case (see
	 * exec_sim_case): run that case here and write its result to fd. */
	const char *inner_case;
	int request_fd, result_fd;
};


/* process.c: run case d as the runner is set up to (forked, or in this
 * process with --no-fork); *seconds its duration. */
/* A region of res has functions (the tool counted them in the case's own
 * run): none needs one more run under callgrind for them. */
bool pmc__result_has_functions(const struct pmc__result *res);
/* One more run of d under callgrind for its functions (sim, after the tool
 * counted it). */
void pmc__functions_from_callgrind(struct runner *r, const struct pmc_test_def *d,
				   double *seconds, struct pmc__result *cg);
void pmc__run_one(struct runner *r, const struct pmc_test_def *d, double *seconds,
		  struct pmc__result *res);
/* process.c: the offset, in bytes, by which the next sim case's stack is
 * moved (calibration runs give each run its own cache-set layout). */
extern size_t pmc__sim_layout_shift;
extern bool pmc__sim_other_schedule;
/* process.c: SIGINT and SIGTERM kill the running case, then the runner. */
void pmc__runner_forward_signals(void);
/* process.c: --backend=sim from outside the simulator: can cases start
 * under it?  0, or the exit status to end with. */
int pmc__sim_unavailable(struct runner *r);
/* process.c: the process the sim backend started for one case: run it and
 * hand its result over (--pmc-request-fd, --pmc-result-fd). */
int pmc__run_inner_case(struct runner *r);

/* process.c: --baseline on perf: each case of `run` that regressed in
 * `rep` is run once more with the regressed events sampled; the rows go
 * to the case's regions and the comparison's rows ("samples"). */
void pmc__sample_regressions(struct runner *r, json_t *rep, struct pmc__results *run);
/* sim: functions from callgrind for the cases a comparison found moved. */
size_t pmc__sim_functions_for_changes(struct runner *r, json_t *rep, struct pmc__results *run);

/* run_gates.c */
int pmc__run_calibrate(struct runner *r, size_t total);
int pmc__run_compare_baseline(struct runner *r, struct pmc__results *run);

#endif
