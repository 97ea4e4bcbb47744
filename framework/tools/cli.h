/* SPDX-License-Identifier: MIT */
/*
 * The pmcheck command line: one table of commands (pmcheck.c), one way of
 * parsing their arguments (getopt_long through cli_next), one exit status
 * for usage errors (PMC_EXIT_USAGE, 64).  Each command is a function of
 * its own file, cmd_NAME.c, given argv with argv[0] = its name.
 *
 * This is the command's one private header (layers.cli_one_header): what
 * its files share (the table, the option parsing, the exports, the pooling
 * of `hwdb merge`) and, included here, all of the library it may use
 * beyond the public headers.  The history store's folder keeps its own
 * interface (history/history.h).
 */
#ifndef PMCHECK_TOOLS_CLI_H
#define PMCHECK_TOOLS_CLI_H

#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include <jansson.h>

#include <pmcheck/harness.h>
#include <pmcheck/pmcheck.h>

/* Of the library, the command uses the public headers and these two only:
 * the harness's interface to it and the probes'. */
#include "probe.h"
#include "tools.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

struct cli_subcommand;

struct cli_command {
	const char *name;
	const char *synopsis; /* the command line, after "pmcheck " (before the subcommands) */
	const char *summary;  /* what it does, for `pmcheck help` */
	const char *help;     /* the rest of `pmcheck NAME --help`: options, exit status */
	int (*run)(int argc, char **argv);
	const struct cli_subcommand *subcommands; /* its table (ended by a NULL name), or NULL */
};

/*
 * A subcommand (`pmcheck history show`, `pmcheck hwdb lookup`) is one row
 * of its command's table and one function: its name is written here only.
 * The command's usage line, its help and `pmcheck help`, and the usage
 * errors that list the subcommands are made from the rows.
 */
struct cli_subcommand {
	const char *name;
	const char *operands; /* after the name in the usage line ("CASE [EVENT]"), or "" */
	const char *summary;  /* what it does, for the help (wrapped there) */
	const char *options;  /* the command's long options that belong to it alone,
				 separated by spaces ("since json"), or NULL */
	int min, max;         /* how many operands it takes; max -1: any number */
	/* ARGS: the command's options, as it parsed them; OPERANDS: those after
	 * the subcommand's name.  Returns the exit status. */
	int (*run)(void *args, char **operands, int n);
};

/*
 * The subcommand of COMMAND that OPERANDS[0] names, once COMMAND has parsed
 * its options with cli_next: NULL with *status set (the usage error
 * printed) when there is none, when it is not in the table, when an option
 * given belongs to another subcommand, or when the number of operands after
 * the name is not one it takes.
 */
const struct cli_subcommand *cli_subcommand(const char *command, char **operands, int n,
					    int *status);

/* main's command table, for cli_find and the help (cli.c). */
void cli_commands(const struct cli_command *table, size_t n);
const struct cli_command *cli_find(const char *name);
/* `pmcheck help`: every command's synopsis and summary. */
void cli_print_overview(FILE *f);
/* `pmcheck NAME --help`. */
int cli_print_help(const struct cli_command *c);

/*
 * The next option of a command's argv (getopt_long, GNU permutation unless
 * shortopts starts with '+'; longopts must hold { "help", ..., 'h' }).
 * Returns the option's value, or -1 at the end (optind: the first operand);
 * the long option is noted for cli_subcommand.
 * On --help, or on an unknown option or a missing argument, it prints the
 * help or the error itself and returns -2 with *status set (0 or
 * PMC_EXIT_USAGE): the command returns *status.
 */
int cli_next(const char *name, int argc, char **argv, const char *shortopts,
	     const struct option *longopts, int *status);

/* "pmcheck NAME: MESSAGE (see pmcheck NAME --help)" on stderr; returns
 * PMC_EXIT_USAGE. */
int cli_usage(const char *name, const char *fmt, ...) CLI_PRINTF(2, 3);

/* Each output file a command was given (paths[i], NULL when not asked
 * for, named by options[i]), checked before any work as pmc__output_check
 * does: 0, or a usage error (PMC_EXIT_USAGE, printed) naming the option,
 * the path and the fix. */
int cli_outputs(const char *name, const char *const *options, const char *const *paths, size_t n);

/* A positive whole number of seconds or counts in an option's argument:
 * 0, or a usage error (PMC_EXIT_USAGE, printed). */
int cli_positive(const char *name, const char *option, const char *arg, unsigned *out);

/* The text with a caret under the byte at position, on stderr, control
 * characters escaped (the caret under the escaped text). */
void cli_caret(const char *text, int position);

/* ---- export.c: results for dashboards (`pmcheck results --format=`):
 * Bencher's metric format and github-action-benchmark's
 * customSmallerIsBetter ---- */

/* Bencher's limit on a measure slug. */
#define EXPORT_SLUG_MAX 64

/* What an export left out, for the caller to say. */
struct export_notes {
	size_t cases_without_figures;          /* skipped, broken: no samples */
	size_t by_verdict[PMC__NVERDICTS];      /* ... by verdict */
	size_t events_without_samples;         /* in cases that have figures */
};

/* { "CASE / REGION [BACKEND]": { "EVENT-SLUG": { "value", "lower_value",
 * "upper_value" } } }, or NULL out of memory. */
json_t *export_bencher(const struct pmc__results *rs, struct export_notes *notes);
/* [ { "name", "unit", "value", "range", "extra" } ], each event of each
 * region; testbed names the machine in "extra".  NULL out of memory. */
json_t *export_github(const struct pmc__results *rs, const char *testbed,
		      struct export_notes *notes);

/* ---- hwdb_merge.c: `pmcheck hwdb merge`, from results files or (through
 * history/merge.c) the history store ---- */

/* hwdb_merge.c: pool results files from many machines into budgets per CPU
 * model, in dir (pmcheck hwdb merge).  Returns an exit status. */
struct pmc__merge {
	const char *dir;
	struct pmc_hwdb *db;   /* the map that decides each signature's model */
	double tolerance_pct;  /* noisy events: the range seen, widened by it */
};
int pmc__hwdb_merge(const struct pmc__merge *m, char *const *files, size_t nfiles, FILE *out);
/* One figure to pool: a budget check's judged figure, with what decides its
 * key (signature, backend, sim profile, the event's kind) and provenance. */
struct pmc__merge_obs {
	const char *suite, *test, *region, *event;
	const char *kind, *name, *sim_columns; /* the event record's, may be NULL */
	const char *backend, *signature, *sim_profile;
	const char *host, *kernel, *source;    /* source: the results file */
	double value;
};
bool pmc__merge_obs_of(const struct pmc__results *rs, const struct pmc__result *r,
		       const struct pmc__check_rec *cr, const char *source, struct pmc__merge_obs *o);
int pmc__hwdb_merge_pool(const struct pmc__merge *m, const struct pmc__merge_obs *obs, size_t n,
			 const char *what, FILE *out);
/* A growing list of observations; with owns, each added observation's
 * strings are copied (a source whose strings do not outlive the add). */
struct pmc__merge_list {
	struct pmc__merge_obs *obs;
	size_t n, cap;
	bool owns;
};
int pmc__merge_list_add(struct pmc__merge_list *l, const struct pmc__merge_obs *o);
void pmc__merge_list_release(struct pmc__merge_list *l);

/* ---- the commands (pmcheck.c's table) ---- */
int cmd_probe(int argc, char **argv);
int cmd_history(int argc, char **argv);
extern const struct cli_subcommand cmd_history_subcommands[];
int cmd_events(int argc, char **argv);
int cmd_results(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_hwdb(int argc, char **argv);
extern const struct cli_subcommand cmd_hwdb_subcommands[];
int cmd_validate(int argc, char **argv);
int cmd_sim(int argc, char **argv);
int cmd_stat(int argc, char **argv);

#endif
