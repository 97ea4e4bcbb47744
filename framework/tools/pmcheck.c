/* SPDX-License-Identifier: MIT */
/*
 * pmcheck: the command-line tool.
 *
 *   pmcheck probe | events | results | compare | hwdb | validate | sim |
 *           version | help
 *
 * Each command is described in `usage` below (`pmcheck COMMAND --help`).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "validate.h"

#include "harness_int.h"
#include "probe.h"

static const char usage[] =
	"usage: pmcheck <command> [options]\n"
	"\n"
	"commands:\n"
	"  probe [--json] [--output=FILE] [--timeout=S] [--deep]\n"
	"                      what this machine can measure (table, or JSON with --json;\n"
	"                      --output writes the JSON atomically to FILE); the probes\n"
	"                      run at once, each with the time limit; --deep also runs\n"
	"                      callgrind on /bin/true (about 0.4 s)\n"
	"  events LIST         parse a comma-separated event list and show each event's\n"
	"                      canonical name, kind and perf_event_attr fields\n"
	"  results [--require-measured] [--json=FILE] [--junit=FILE] DIR|FILE...\n"
	"                      merge suite result files (--json, --results-dir), checked\n"
	"                      on read, and print the summary with grouped skip reasons;\n"
	"                      --require-measured fails when measuring cases were\n"
	"                      selected and none measured anything (all skipped);\n"
	"                      --clear DIR empties DIR of result files; --by-suite adds\n"
	"                      a per-suite (conformance: per-area) table with kernel and\n"
	"                      CPU, --markdown=FILE writes it as Markdown (--help)\n"
	"  hwdb lookup [SIG]   which hwdb model a signature (default: this CPU) maps to,\n"
	"                      from which file:line, its facts and the budget keys\n"
	"  hwdb budget SUITE.TEST REGION EVENT [--signature=S] [--backend=B]\n"
	"                      the budget that applies, and its file:line\n"
	"  hwdb check          parse every hwdb file (map, models, budgets)\n"
	"                      (hwdb commands take --hwdb=DIR, and PMCHECK_HWDB)\n"
	"  compare OLD.json NEW.json [--tolerance=[EVENT=]PCT] [--allow-missing] [--force]\n"
	"          [--json=F] [--markdown=F]\n"
	"                      regression report between two result files (exit 3\n"
	"                      on a regression or a case that did not run; --help)\n"
	"  validate [--backend=perf|sim] [--output=FILE]\n"
	"                      does this CPU model (or the simulator) count what hwdb says?\n"
	"                      known-count kernels at 1x and 2x length: per-event table of\n"
	"                      expected, measured, deviation, verdict; --output writes the\n"
	"                      JSON report (keep accepted ones in hwdb/results/)\n"
	"  sim [-v] [--] PROGRAM [ARG...]\n"
	"                      run PROGRAM under the sim backend (valgrind callgrind with\n"
	"                      pmcheck's fixed cache geometry, branch simulation, ASLR off,\n"
	"                      pinned glibc tunables), so counter sets it opens with\n"
	"                      PMC_OPEN_SIM read the simulator; -v shows the command\n"
	"  sim --print-command the environment and valgrind options of a sim run, for a\n"
	"                      bare callgrind run that simulates the same:\n"
	"                      env $(pmcheck sim --print-command) PROGRAM\n"
	"  version             print the version\n"
	"  help                this text\n";

static const char *const kind_names[] = {
	"?", "hardware", "cache", "raw", "pmu", "libpfm4", "software", "breakpoint", "uprobe", "sim",
	"tracepoint",
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
		else if (!strcmp(argv[i], "--deep"))
			opt.deep = 1;
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

/* ---- pmcheck hwdb ------------------------------------------------------------- */

static int open_hwdb_from_args(int *argc, char **argv, struct pmc_hwdb **db, char **env_copy)
{
	const char *dirs[PMC_HWDB_MAX_DIRS];
	size_t n = 0;
	struct pmc_error err;
	int i, j = 0;

	for (i = 0; i < *argc; i++) {
		if (!strncmp(argv[i], "--hwdb=", 7) && n < PMC_HWDB_MAX_DIRS)
			dirs[n++] = argv[i] + 7;
		else
			argv[j++] = argv[i];
	}
	*argc = j;
	*env_copy = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL;
	if (*env_copy) {
		char *save = NULL, *d;

		for (d = strtok_r(*env_copy, ":", &save); d && n < PMC_HWDB_MAX_DIRS;
		     d = strtok_r(NULL, ":", &save))
			dirs[n++] = d;
	}
	if (pmc_hwdb_open(db, dirs, n, &err)) {
		fprintf(stderr, "pmcheck hwdb: %s\n", err.message);
		return 2;
	}
	return 0;
}

static void print_finding(void *user, const struct pmc_error *f)
{
	(void)user;
	fprintf(stderr, "pmcheck hwdb check: %s\n", f->message);
}

/* A model fact, or "?" where models.ini leaves it out. */
static const char *fact(int v, char *buf, size_t size)
{
	if (v < 0)
		return "?";
	snprintf(buf, size, "%d", v);
	return buf;
}

static void print_model(const struct pmc_hwdb_model *m)
{
	char a[16], b[16], c[16], d[16], e[16];

	printf("  model         %s: %s (%s, %s)  [%s]\n", m->id, m->name, m->vendor, m->arch, m->where);
	printf("  counters      %s general x %s bits, %s fixed x %s bits; %s breakpoint slots  (? = not in models.ini)\n",
	       fact(m->general_counters, a, sizeof(a)), fact(m->general_width, b, sizeof(b)),
	       fact(m->fixed_counters, c, sizeof(c)), fact(m->fixed_width, d, sizeof(d)),
	       fact(m->breakpoint_slots, e, sizeof(e)));
	printf("  deterministic %s\n", m->deterministic[0] ? m->deterministic : "(none listed)");
	if (m->errata[0]) {
		const char *p = m->errata;

		while (*p) {
			size_t n = strcspn(p, "\n");

			printf("  erratum       %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
}

static int cmd_hwdb(int argc, char **argv)
{
	struct pmc_hwdb *db = NULL;
	char *env_copy = NULL;
	int rc;

	if (argc < 1) {
		fprintf(stderr, "usage: pmcheck hwdb lookup [SIGNATURE] | budget SUITE.TEST REGION EVENT [--signature=S] [--backend=perf|sim] | check   [--hwdb=DIR]...\n");
		return 64;
	}
	rc = open_hwdb_from_args(&argc, argv, &db, &env_copy);
	if (rc)
		goto out;
	if (!strcmp(argv[0], "lookup")) {
		char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX];
		struct pmc_cpu_id cpu;
		struct pmc_hwdb_match m;
		struct pmc_hwdb_model model;
		const char *sig;
		size_t i, n, d;

		pmc_cpu_identify(&cpu);
		sig = argc > 1 ? argv[1] : cpu.signature;
		printf("pmcheck hwdb lookup %s%s\n", sig, argc > 1 ? "" : "  (this machine)");
		for (d = 0; d < pmc_hwdb_ndirs(db); d++)
			printf("  directory %zu   %s\n", d + 1, pmc_hwdb_dir(db, d));
		rc = pmc_hwdb_match(db, sig, &m, &model);
		if (m.model[0]) {
			printf("  matched       %s = %s  [%s]\n", m.pattern, m.model, m.where);
			if (rc == 0)
				print_model(&model);
			else
				printf("  model         %s has no section in any models.ini\n", m.model);
		} else {
			printf("  matched       nothing: no map.ini line matches \"%s\"; budgets fall back to vendor/arch/any keys\n", sig);
		}
		n = pmc_hwdb_keys(db, "perf", sig, keys, PMC_HWDB_MAX_KEYS);
		printf("  budget keys   (most specific first)\n");
		for (i = 0; i < n; i++) {
			printf("    %-28s", keys[i]);
			for (d = 0; d < pmc_hwdb_ndirs(db); d++) {
				char path[4096];
				struct stat st;

				snprintf(path, sizeof(path), "%s/budgets/%s", pmc_hwdb_dir(db, d), keys[i]);
				if (stat(path, &st) == 0)
					printf(" %s", path);
			}
			printf("\n");
		}
		rc = 0;
	} else if (!strcmp(argv[0], "budget") && argc >= 4) {
		struct pmc_budget_key key = { 0 };
		struct pmc_budget b;
		struct pmc_error err;
		struct pmc_cpu_id cpu;
		char suite[256], *dot;
		int i;

		pmc_cpu_identify(&cpu);
		snprintf(suite, sizeof(suite), "%s", argv[1]);
		dot = strchr(suite, '.');
		if (!dot) {
			fprintf(stderr, "pmcheck hwdb budget: \"%s\": expected SUITE.TEST\n", argv[1]);
			rc = 64;
			goto out;
		}
		*dot = '\0';
		{
			struct pmc_event_spec spec;

			/* A budget line names its event in the parser's canonical
			 * spelling; a misspelt EVENT would only read "unbudgeted". */
			if (pmc_event_parse(argv[3], &spec, &err) != 0 && err.code != PMC_E_NO_SYMBOL &&
			    err.code != PMC_E_UNKNOWN_EVENT && err.code != PMC_E_NO_PMU) {
				fprintf(stderr, "pmcheck hwdb budget: %s\n", err.message);
				rc = 64;
				goto out;
			}
		}
		key = (struct pmc_budget_key){ suite, dot + 1, argv[2], argv[3], "perf", cpu.signature };
		for (i = 4; i < argc; i++) {
			if (!strncmp(argv[i], "--signature=", 12))
				key.signature = argv[i] + 12;
			else if (!strncmp(argv[i], "--backend=", 10))
				key.backend = argv[i] + 10;
		}
		rc = pmc_hwdb_budget(db, &key, &b, &err);
		if (rc == 0) {
			printf("%s %s %s: %s%s  (key %s, %s)\n", argv[1], argv[2], argv[3], b.text,
			       b.per_iteration ? "" : "", b.key, b.source);
		} else if (rc == -ENOENT) {
			printf("%s %s %s: unbudgeted for %s (%s backend)\n", argv[1], argv[2], argv[3],
			       key.signature, key.backend);
			rc = 1;
		} else {
			fprintf(stderr, "pmcheck hwdb budget: %s\n", err.message);
			rc = 2;
		}
	} else if (!strcmp(argv[0], "check")) {
		size_t budgets = 0, unchecked = 0, findings;

		findings = pmc_hwdb_lint(db, print_finding, NULL, &budgets, &unchecked);
		printf("hwdb %s: %zu director%s, %zu budget line(s), %zu finding(s)", findings ? "BROKEN" : "OK",
		       pmc_hwdb_ndirs(db), pmc_hwdb_ndirs(db) == 1 ? "y" : "ies", budgets, findings);
		if (unchecked)
			printf("; %zu event(s) of other CPUs not checked on this one", unchecked);
		printf("\n");
		rc = findings ? 2 : 0;
	} else {
		fprintf(stderr, "pmcheck hwdb: unknown or incomplete subcommand \"%s\" (lookup, budget, check)\n", argv[0]);
		rc = 64;
	}
out:
	pmc_hwdb_free(db);
	free(env_copy);
	return rc;
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

		printf("%-32s %-10s type=%u config=0x%" PRIx64, s->name, (size_t)s->kind < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[s->kind] : "?", s->type,
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
		{
			unsigned mask;

			if (pmc_sim_columns(s, &mask, NULL) == 0) {
				printf(" sim=");
				for (unsigned c = 0, first = 1; c < PMC_SIM_NCOLUMNS; c++)
					if (mask & (1u << c)) {
						printf("%s%s", first ? "" : "+", pmc_sim_column_name(c));
						first = 0;
					}
			} else {
				printf(" sim=unsupported");
			}
		}
		printf("%s%s%s\n", s->exclude_user ? " exclude_user" : "",
		       s->exclude_kernel ? " exclude_kernel" : "", s->exclude_hv ? " exclude_hv" : "");
	}
	return 0;
}

static int cmd_sim(int argc, char **argv)
{
	struct pmc_error err;
	int verbose = 0, rc;

	while (argc > 0 && argv[0][0] == '-') {
		if (!strcmp(argv[0], "--")) {
			argc--, argv++;
			break;
		}
		if (!strcmp(argv[0], "-v") || !strcmp(argv[0], "--verbose")) {
			verbose = 1;
			argc--, argv++;
			continue;
		}
		if (!strcmp(argv[0], "--print-command")) {
			/* For a bare callgrind run that simulates the same:
			 * env $(pmcheck sim --print-command) PROGRAM */
			const char *const *e = pmc_sim_pinned_env(), *const *o = pmc_sim_valgrind_options();

			for (; *e; e++)
				printf("%s ", *e);
			printf("valgrind");
			for (; *o; o++)
				printf(" %s", *o);
			putchar('\n');
			return 0;
		}
		fprintf(stderr, "pmcheck sim: unknown option \"%s\"\n\n%s", argv[0], usage);
		return 2;
	}
	if (argc < 1) {
		fprintf(stderr, "pmcheck sim: expected a program to run\n\n%s", usage);
		return 2;
	}
	pmc_log_set(pmc__log_stderr, NULL);
	rc = pmc_sim_exec(argv, verbose, &err);
	if (rc < 0) {
		fprintf(stderr, "pmcheck sim: %s\n", err.message);
		return 2;
	}
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	/* `pmcheck COMMAND --help`: results and compare have their own pages;
	 * the others are described in the command table. */
	if (argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) &&
	    strcmp(argv[1], "results") && strcmp(argv[1], "compare")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(argv[1], "probe"))
		return cmd_probe(argc - 2, argv + 2);
	if (!strcmp(argv[1], "events"))
		return cmd_events(argc - 2, argv + 2);
	if (!strcmp(argv[1], "results"))
		return pmc__results_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "compare"))
		return pmc__compare_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "validate"))
		return pmc__validate_command(argc - 2, argv + 2);
	if (!strcmp(argv[1], "sim"))
		return cmd_sim(argc - 2, argv + 2);
	if (!strcmp(argv[1], "hwdb"))
		return cmd_hwdb(argc - 2, argv + 2);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("pmcheck %d.%d.%d\n", PMCHECK_VERSION_MAJOR, PMCHECK_VERSION_MINOR,
		       PMCHECK_VERSION_PATCH);
		return 0;
	}
	fprintf(stderr, "pmcheck: unknown command \"%s\"\n\n%s", argv[1], usage);
	return 2;
}
