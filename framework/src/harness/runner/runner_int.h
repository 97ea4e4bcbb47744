/* SPDX-License-Identifier: MIT */
/*
 * The runner's private interface, shared by its files: runner.c (the
 * command line, selection, output, pmc_main), rerun.c (a case's run and
 * the re-runs for the functions behind a failure), process.c (one case in
 * a child process with a deadline), sim_case.c (under the sim backend, one
 * valgrind per case and the case's side of it), case_io.c (the result and
 * output pipes) and run_gates.c (--calibrate and --baseline).
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
	bool strict_from_ci;   /* strict because CI is set, not --strict */
	bool sim_full; /* --sim-full: every simulation, instrumented from the start */
	const char *sim_engine; /* --sim-engine, or NULL */
	const char *sim_engine_settled; /* what pmc_sim_engine_prefer was given */
	const char *json_path, *junit_path, *results_dir;
	const char *hwdb[PMC_HWDB_MAX_DIRS];
	size_t nhwdb;
	unsigned calibrate;
	double margin, cal_tolerance;
	bool margin_set; /* --calibrate-margin given (sim: else the layouts' spread alone) */
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


/* rerun.c: run case d as the runner is set up to (forked, or in this
 * process with --no-fork), and once more for the functions behind a
 * failure; *seconds its duration. */
void pmc__run_one(struct runner *r, const struct pmc_test_def *d, double *seconds,
		  struct pmc__result *res);
/* rerun.c: may a re-run's judgement (again) replace the run's (res)?
 * diff: the first difference between the two runs' figures ("" when they
 * counted alike).  Only when every judged figure (each event's smallest
 * sample and number of samples) is the same, and, when anything else
 * differs, the re-run reached the same verdict. */
bool pmc__rerun_adoptable(const struct pmc__result *res, const struct pmc__result *again,
			  const char *diff);
/* rerun.c: a region of res has functions (the tool counted them in the
 * case's own run): none needs one more run under callgrind for them. */
bool pmc__result_has_functions(const struct pmc__result *res);
/* rerun.c: does a region of res count an event a table of functions'
 * costs can explain (any event; a calls: event by its callers)? */
bool pmc__result_has_costs(const struct pmc__result *res);
/* rerun.c: one more run of d under callgrind for its functions (sim, after
 * the tool counted it). */
void pmc__functions_from_callgrind(struct runner *r, const struct pmc_test_def *d,
				   double *seconds, struct pmc__result *cg);
/* rerun.c: --baseline on perf: each case of `run` that regressed in `rep`
 * is run once more with the regressed events sampled; the rows go to the
 * case's regions and the comparison's rows ("samples"). */
void pmc__sample_regressions(struct runner *r, json_t *rep, struct pmc__results *run);
/* rerun.c: sim: functions from callgrind for the cases a comparison found
 * moved. */
size_t pmc__sim_functions_for_changes(struct runner *r, json_t *rep, struct pmc__results *run);

/* process.c: case d in a forked child with o's deadline; an ERROR record
 * when it crashed, timed out or wrote no result. */
void pmc__run_forked(struct runner *r, const struct pmc_test_def *d,
		     const struct pmc_test_options *o, double *seconds, struct pmc__result *res);
/* process.c: SIGINT and SIGTERM kill the running case, then the runner. */
void pmc__runner_forward_signals(void);

/* sim_case.c: in the forked child, the case under valgrind; returns the
 * child's exit status. */
int pmc__exec_sim_case(struct runner *r, const struct pmc_test_def *d, int resfd);
/* sim_case.c: does the tool count function costs in case d's run (a run
 * that keeps what it measured, a case with budgets under this build's sim
 * key, or pmc__functions_forced)? */
bool pmc__functions_wanted(const struct runner *r, const struct pmc_test_def *d);
extern bool pmc__functions_forced;
/* sim_case.c: the offset, in bytes, by which the next sim case's stack is
 * moved (calibration runs give each run its own cache-set layout). */
extern size_t pmc__sim_layout_shift;
/* sim_case.c: bytes the next sim case allocates and keeps before it runs,
 * so that the heap it allocates from starts elsewhere (calibration of
 * cache and branch misses); 0 in gate runs. */
extern size_t pmc__sim_heap_shift;
/*
 * process.c: how the next case's threads are scheduled.  --calibrate runs
 * a case whose region counts other threads and children (.inherit) under
 * each in turn, so that a count that depends on how threads interleave
 * varies between its runs instead of being recorded exact from quiet ones.
 */
enum pmc__schedule {
	PMC__SCHED_QUIET,    /* as a gate run: the machine's CPUs, valgrind's default lock */
	PMC__SCHED_FAIR,     /* sim: valgrind's ticket lock (--fair-sched=yes) */
	PMC__SCHED_ONE_CPU,  /* every thread of the case on one CPU */
	PMC__SCHED_CROWDED,  /* on one CPU shared with a process that never sleeps */
	PMC__SCHED_BUSY,     /* every CPU it may use busy with such a process */
	PMC__SCHEDULES
};
extern enum pmc__schedule pmc__schedule;
/* The words for schedule s, for calibration's lines. */
const char *pmc__schedule_name(enum pmc__schedule s);
/* sim_case.c: --backend=sim from outside the simulator: can cases start
 * under it?  0, or the exit status to end with. */
int pmc__sim_unavailable(struct runner *r);

/* The run's header line for the sim backend: the variables a case sees
 * (PATH and what PMCHECK_SIM_ENV names), and warnings for a name not set
 * or a ',' used as the separator.  Each line starts with prefix. */
void pmc__sim_env_header(FILE *f, const char *prefix);
/* sim_case.c: the process the sim backend started for one case: run it
 * and hand its result over (--pmc-request-fd, --pmc-result-fd). */
int pmc__run_inner_case(struct runner *r);

/* case_io.c: a memory file (a deleted temporary file where memfd_create
 * is refused); the last `keep` bytes of one, *total its size; the record
 * of a case that ended without one; a result written for the runner (0
 * when all of it went out). */
int pmc__case_memfd(const char *name);
char *pmc__case_slurp(int fd, size_t keep, size_t *total);
void pmc__case_error_result(const struct pmc_test_def *d, const char *reason, struct pmc__result *r);
int pmc__case_write_result(int fd, const struct pmc__result *res);

/* run_gates.c */
int pmc__run_calibrate(struct runner *r, size_t total);
int pmc__run_compare_baseline(struct runner *r, struct pmc__results *run);

#endif
