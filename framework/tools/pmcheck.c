/* SPDX-License-Identifier: MIT */
/*
 * pmcheck: the command-line tool.  The commands are the table below; `pmcheck
 * help` and `pmcheck COMMAND --help` are printed from it.  Each command's
 * code is in cmd_NAME.c, and a command's subcommands are a table there
 * (cmd_history.c, cmd_hwdb.c), which its row here points at.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

static const struct cli_command commands[] = {
	{ "probe", "probe [--json] [--output=FILE] [--timeout=S] [--deep]",
	  "what this machine can measure: a table, or JSON with --json; the probes\n"
	  "run at once, each in its own process with the time limit",
	  "  --json          the record as JSON on stdout\n"
	  "  --output=FILE   the JSON record, written atomically to FILE\n"
	  "  --timeout=S     each probe's time limit in seconds (default 10)\n"
	  "  --deep          also run callgrind on /bin/true (about 0.4 s)\n",
	  cmd_probe, NULL },
	{ "events", "events LIST",
	  "parse a comma-separated event list and show each event's canonical name,\n"
	  "kind, perf_event_attr fields and sim backend columns",
	  "exit status: 0 parsed, 1 an event was refused (the message points at it).\n",
	  cmd_events, NULL },
	{ "results", "results [options] DIR|FILE...",
	  "merge suite result files (--json, --results-dir), each checked on read, and\n"
	  "print the summary with grouped skip reasons",
	  "  --require-measured  fail only when measuring cases were selected but none\n"
	  "                      measured anything (all skipped), or there are no result\n"
	  "                      files; failed cases do not fail it (each is a failed test\n"
	  "                      of its own); a selection without measuring cases (a\n"
	  "                      conformance suite) has nothing to guard\n"
	  "  --clear             empty the DIRs given of result files (a CTest run's start)\n"
	  "  --by-suite          a per-suite (conformance: per-area) table with kernel\n"
	  "                      and CPU\n"
	  "  --markdown=FILE     that table as Markdown (implies --by-suite)\n"
	  "  --top[=N]           the N functions (default 5) each region spent its events\n"
	  "                      in, where the results carry them (sim backend; a case\n"
	  "                      that failed on perf, from samples)\n"
	  "  --json=FILE         the merged results, atomically\n"
	  "  --junit=FILE        JUnit XML, atomically\n"
	  "  --format=NAME       the figures for a dashboard: bencher (Bencher Metric\n"
	  "                      Format) or github-action-benchmark (customSmallerIsBetter);\n"
	  "                      a benchmark per case, region and backend, the judged figure\n"
	  "                      with the samples' range; one machine per export (its CPU\n"
	  "                      model is the testbed, printed); what has no figures is\n"
	  "                      counted on stderr\n"
	  "  --output=FILE       where --format writes, atomically (default: stdout, and\n"
	  "                      the summary goes to stderr)\n"
	  "\n"
	  "exit status: the merged cases' (0 pass, 1 fail, 2 error, 4 inconclusive; all\n"
	  "skipped is 0); with --require-measured 0, or 1 when nothing was measured; 2\n"
	  "for an unreadable file or an export of several machines, 64 usage.\n",
	  cmd_results, NULL },
	{ "history", "history [--db=STORE]",
	  "results across commits and machines in one store: an SQLite file, or a\n"
	  "PostgreSQL database (a postgresql:// URI) that many machines add to at once",
	  "  --db=STORE  an SQLite file or a postgresql:// URI (default\n"
	  "              $PMCHECK_HISTORY_DB, else pmcheck-history.sqlite here); made\n"
	  "              on first use, versioned; a URI's password is never printed\n"
	  "  --html=DIR  report: where index.html goes\n"
	  "  --since=REV changes: only those after this commit (a prefix naming one\n"
	  "              commit of the store); a regression among them exits 1\n"
	  "  --json      changes: as JSON on stdout\n"
	  "  --significance=P  changes: a noisy change point's p-value at most P\n"
	  "              (default 0.005)\n"
	  "  --min-change=PCT  changes: the smallest change of a noisy series worth\n"
	  "              reporting, in percent of the level before (default 0.5)\n"
	  "  --permutations=N  changes: at most N per test (default 199)\n"
	  "  --min-size=N      changes: the fewest commits on each side of a noisy\n"
	  "              series' change (default 5)\n"
	  "\n"
	  "exit status: 0; 1 no figures of that case (show), a regression after --since\n"
	  "(changes); 2 an unreadable file (nothing of it is added) or store (cannot\n"
	  "connect, newer schema); 64 usage.\n",
	  cmd_history, cmd_history_subcommands },
	{ "compare", "compare OLD.json NEW.json [options]",
	  "regression report between two result files, region by region and event by\n"
	  "event",
	  "  --tolerance=PCT        tolerance for every event, deterministic ones too\n"
	  "                         (default: exact for deterministic events, 2% for noisy)\n"
	  "  --tolerance=EVENT=PCT  tolerance for one event (repeatable)\n"
	  "  --allow-missing        a case of OLD that NEW did not measure is not a failure\n"
	  "  --force                compare across CPUs, backends or toolchains\n"
	  "  --json=FILE            the comparison as JSON (atomically)\n"
	  "  --markdown=FILE        the comparison as Markdown (a CI job summary)\n"
	  "  --moved-cases=FILE     the cases whose counts moved, one per line (atomically)\n"
	  "  --filter=GLOBS         compare only the cases whose suite.name matches a\n"
	  "                         comma-separated glob (-GLOB leaves cases out)\n"
	  "\n"
	  "exit status: 0 no regression, 3 a regression or a case that did not run,\n"
	  "2 unreadable input or runs that cannot be compared (CPU, backend, the\n"
	  "toolchain of a sim case), 64 usage.\n",
	  cmd_compare, NULL },
	{ "hwdb", "hwdb [options]",
	  "the hardware database by hand: CPU models, their facts, and budgets",
	  "  --hwdb=DIR        a database directory (repeatable; PMCHECK_HWDB adds\n"
	  "                    colon-separated ones; default: the built-in hwdb)\n"
	  "  --signature=SIG   budget: the CPU signature (default: this CPU's)\n"
	  "  --backend=B       budget: perf or sim (default perf)\n"
	  "  --tolerance=PCT   merge: widen noisy ranges by PCT (default 10)\n"
	  "  --from-history[=DB]  merge: from the history store (default\n"
	  "                    $PMCHECK_HISTORY_DB, else ./pmcheck-history.sqlite)\n"
	  "  --commit=REV      merge --from-history: the runs of this commit (a prefix\n"
	  "                    naming one; default: the newest commit in the store)\n"
	  "\n"
	  "exit status: 0 found / clean / merged, 1 unbudgeted / a deterministic count\n"
	  "the machines disagree on, 2 a broken database or results file, 64 usage.\n",
	  cmd_hwdb, cmd_hwdb_subcommands },
	{ "validate", "validate [--backend=perf|sim] [--output=FILE] [--program=PATH]",
	  "does this CPU model (or the simulator) count what hwdb says?  Known-count\n"
	  "kernels at 1x and 2x length: per-event table of expected, measured,\n"
	  "deviation and verdict",
	  "  --backend=B     perf (this CPU) or sim (the simulator)\n"
	  "  --output=FILE   the JSON report (keep accepted ones in hwdb/results/)\n"
	  "  --program=PATH  the validation program (default: pmcheck-validate of this\n"
	  "                  build or installation)\n"
	  "\n"
	  "exit status: 0 every judged figure passed, 1 a failure, 77 nothing could be\n"
	  "validated here, 2 the suite could not run, 64 usage.\n",
	  cmd_validate, NULL },
	{ "sim", "sim [-v] [--only=EVENTS] [--print-command] [--] PROGRAM [ARG...]",
	  "run PROGRAM under the sim backend (valgrind with pmcheck's valgrind tool, or\n"
	  "callgrind, with pmcheck's fixed cache geometry, branch simulation, ASLR off,\n"
	  "pinned glibc tunables), so the counter sets it opens with PMC_OPEN_SIM read\n"
	  "the simulator",
	  "  -v, --verbose     show the valgrind command line\n"
	  "  --only=EVENTS     simulate only what EVENTS need (instructions and calls:\n"
	  "                    neither the caches nor the branch predictor); the\n"
	  "                    program's sets may count nothing else\n"
	  "  --print-command   print the environment and valgrind options of a sim run\n"
	  "                    on callgrind, the cross-check engine, for a bare\n"
	  "                    callgrind run that simulates the same:\n"
	  "                    env $(pmcheck sim --print-command) PROGRAM\n"
	  "\n"
	  "environment: PMCHECK_SIM_ENGINE=pmcheck|callgrind chooses who counts;\n"
	  "PMCHECK_SIM_LINE_INFO=1 has pmcheck's tool read DWARF line tables, so that a\n"
	  "stack trace valgrind prints names files and lines (off: they cost a quarter\n"
	  "of a short run, and nothing counted needs them).  Neither reaches PROGRAM's\n"
	  "environment.\n"
	  "\n"
	  "exit status: PROGRAM's (128 + N when signal N killed it), 2 when it could not\n"
	  "be started, 64 usage.\n",
	  cmd_sim, NULL },
	{ "stat", "stat [-e EVENTS] [-r N] [--backend=perf|sim] [--json=FILE] -- COMMAND [ARG...]",
	  "count a command with pmcheck's event syntax: each event's count (min, median\n"
	  "and max over the runs) and the share of the time its counter ran; a\n"
	  "multiplexed or never-counted value is marked, never scaled",
	  "  -e, --events=LIST   the events (default on perf: task-clock, context-switches,\n"
	  "                      cpu-migrations, page-faults, and instructions:u,cycles:u\n"
	  "                      where there is a hardware PMU; on sim: instructions:u,\n"
	  "                      L1-dcache loads, stores and load misses, branches and\n"
	  "                      branch misses)\n"
	  "  -r, --repeat=N      run the command N times (default 1)\n"
	  "  --backend=B         perf (the kernel's counters, from the command's exec, its\n"
	  "                      threads and children included) or sim (valgrind, with\n"
	  "                      pmcheck's tool or callgrind: every process of the\n"
	  "                      command, start to exit)\n"
	  "  --json=FILE         the results document (case stat.PROGRAM, region\n"
	  "                      \"command\", one sample per run), for pmcheck compare\n"
	  "  -v, --verbose       show the valgrind command line (sim)\n"
	  "\n"
	  "environment (sim): PMCHECK_SIM_ENGINE=pmcheck|callgrind chooses who counts;\n"
	  "PMCHECK_SIM_LINE_INFO=1 reads DWARF line tables, for files and lines in a\n"
	  "stack trace valgrind prints.  Neither reaches the command's environment.\n"
	  "\n"
	  "exit status: the command's (the last non-zero one over the runs), 2 when it\n"
	  "could not be counted, 64 usage.\n",
	  cmd_stat, NULL },
	{ "version", "version", "print the version", NULL, cmd_version, NULL },
	{ "help", "help [COMMAND]", "this text, or one command's", NULL, cmd_help, NULL },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static int cmd_version(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	int status = 0, c;

	while ((c = cli_next("version", argc, argv, "h", opts, &status)) != -1)
		if (c == -2)
			return status;
	if (optind < argc)
		return cli_usage("version", "unexpected \"%s\"", argv[optind]);
	printf("pmcheck %s\n", PMCHECK_VERSION_STRING);
	return 0;
}

static int cmd_help(int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, { 0 } };
	const struct cli_command *c;
	int status = 0, o;

	while ((o = cli_next("help", argc, argv, "h", opts, &status)) != -1)
		if (o == -2)
			return status;
	if (optind >= argc) {
		cli_print_overview(stdout);
		return 0;
	}
	if (argc - optind > 1)
		return cli_usage("help", "expected one command");
	c = cli_find(argv[optind]);
	if (!c)
		return cli_usage("help", "unknown command \"%s\"", argv[optind]);
	return cli_print_help(c);
}

int main(int argc, char **argv)
{
	const struct cli_command *c;

	cli_commands(commands, NCOMMANDS);
	if (argc < 2) {
		cli_print_overview(stderr);
		return PMC_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		cli_print_overview(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version"))
		argv[1] = (char *)"version";
	c = cli_find(argv[1]);
	if (!c) {
		fprintf(stderr, "pmcheck: unknown command \"%s\"\n\n", argv[1]);
		cli_print_overview(stderr);
		return PMC_EXIT_USAGE;
	}
	{
		char why[1024];

		/* Before any command's work: a switch no code reads would
		 * be a test that injects nothing. */
		if (pmc__fault_switch_check(why, sizeof(why))) {
			fprintf(stderr, "pmcheck: %s\n", why);
			return PMC_EXIT_USAGE;
		}
	}
	optind = 0; /* getopt starts afresh on the command's argv */
	return c->run(argc - 1, argv + 1);
}
