/* SPDX-License-Identifier: MIT */
/* `pmcheck hwdb`: the hardware database by hand, a subcommand per row of
 * cmd_hwdb_subcommands. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "history/history.h"

struct hwdb_args {
	const char *dirs[PMC_HWDB_MAX_DIRS];
	size_t ndirs;
	const char *signature, *backend;
	double tolerance;  /* merge: noisy ranges widened by it, percent */
	bool tolerance_set;
	bool from_history;
	const char *history, *commit; /* merge --from-history[=DB] --commit=REV */
	char *env_copy; /* PMCHECK_HWDB, split in place */
	const char *sub;     /* the subcommand's name, for messages */
	struct pmc_hwdb *db; /* open_hwdb's */
};

static void print_finding(void *user, const struct pmc_error *f)
{
	(void)user;
	fprintf(stderr, "pmcheck hwdb check: ");
	pmc__term_text(stderr, f->message, "  ");
	fprintf(stderr, "\n");
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
	for (const char *p = m->errata; *p;) {
		size_t n = strcspn(p, "\n");

		printf("  erratum       %.*s\n", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

static int lookup(struct pmc_hwdb *db, const char *given)
{
	char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX];
	struct pmc_cpu_id cpu;
	struct pmc_hwdb_match m;
	struct pmc_hwdb_model model;
	const char *sig;
	size_t i, n, d;
	int rc;

	pmc_cpu_identify(&cpu);
	sig = given ? given : cpu.signature;
	printf("pmcheck hwdb lookup %s%s\n", sig, given ? "" : "  (this machine)");
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
	return 0;
}

static int budget(struct pmc_hwdb *db, const struct hwdb_args *a, char **op)
{
	struct pmc_budget_key key;
	struct pmc_event_spec spec;
	struct pmc_budget b;
	struct pmc_error err;
	struct pmc_cpu_id cpu;
	char suite[256], *dot;
	int rc;

	snprintf(suite, sizeof(suite), "%s", op[0]);
	dot = strchr(suite, '.');
	if (!dot)
		return cli_usage("hwdb", "budget \"%s\": expected SUITE.TEST", op[0]);
	*dot = '\0';
	/* A budget line names its event in the parser's canonical spelling;
	 * a misspelt EVENT would only read "unbudgeted". */
	if (pmc_event_parse(op[2], &spec, &err) != 0 && err.code != PMC_E_NO_SYMBOL &&
	    err.code != PMC_E_UNKNOWN_EVENT && err.code != PMC_E_NO_PMU)
		return cli_usage("hwdb", "budget: %s", err.message);
	pmc_cpu_identify(&cpu);
	key = (struct pmc_budget_key){ suite, dot + 1, op[1], op[2], a->backend ? a->backend : "perf",
				       a->signature ? a->signature : cpu.signature };
	rc = pmc_hwdb_budget(db, &key, &b, &err);
	if (rc == 0) {
		printf("%s %s %s: %s  (key %s, %s)\n", op[0], op[1], op[2], b.text, b.key, b.source);
		return 0;
	}
	if (rc == -ENOENT) {
		char keys[8][PMC_HWDB_KEY_MAX];
		size_t n = pmc_hwdb_suite_keys(db, key.backend, suite, keys, 8);

		printf("%s %s %s: unbudgeted for %s (%s backend)\n", op[0], op[1], op[2], key.signature,
		       key.backend);
		/* The next question: where are this suite's budgets, then? */
		if (n == 0)
			printf("  suite \"%s\" has no budgets on the %s backend in these directories\n",
			       suite, key.backend);
		for (size_t i = 0; i < n && i < 8; i++)
			printf("  suite \"%s\" has budgets under --signature=%s\n", suite, keys[i]);
		if (n > 0)
			printf("  (events are spelled as the case's expectations spell them, e.g. \"instructions:u\")\n");
		return 1;
	}
	fprintf(stderr, "pmcheck hwdb budget: ");
	pmc__term_text(stderr, err.message, "  ");
	fprintf(stderr, "\n");
	return PMC_EXIT_ERROR;
}

static int check(struct pmc_hwdb *db)
{
	size_t budgets = 0, unchecked = 0, findings;

	findings = pmc_hwdb_lint(db, print_finding, NULL, &budgets, &unchecked);
	printf("hwdb %s: %zu director%s, %zu budget line(s), %zu finding(s)", findings ? "BROKEN" : "OK",
	       pmc_hwdb_ndirs(db), pmc_hwdb_ndirs(db) == 1 ? "y" : "ies", budgets, findings);
	if (unchecked)
		printf("; %zu event(s) of other CPUs not checked on this one", unchecked);
	printf("\n");
	return findings ? PMC_EXIT_ERROR : 0;
}

/* merge --from-history: the store must exist (merging never creates one). */
static int merge_from_history(const struct hwdb_args *a, const struct pmc__merge *m)
{
	const char *path = a->history;
	struct hdb *hist;
	int rc;

	if (!path || !*path)
		path = getenv("PMCHECK_HISTORY_DB");
	if (!path || !*path)
		path = HISTORY_DEFAULT;
	if ((rc = history_open(path, HDB_READ, &hist)) != 0)
		return rc;
	rc = history_merge(hist, m, a->commit, stdout);
	hdb_close(hist);
	return rc;
}

/* A CPU signature as hwdb keys name it: printable ASCII without blanks or
 * '/', under 128 bytes ("GenuineIntel-6-55-7"). */
static bool signature_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= 128)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || (unsigned char)*s >= 0x7f || *s == '/')
			return false;
	return true;
}

/* The databases of --hwdb and PMCHECK_HWDB, opened into a->db (without the
 * first --hwdb when FRESH: a merge's target that does not exist yet); 0, or
 * an exit status with the reason printed. */
static int open_hwdb(struct hwdb_args *a, bool fresh)
{
	struct pmc_error err;

	a->env_copy = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL;
	if (a->env_copy) {
		char *save = NULL, *d;

		for (d = strtok_r(a->env_copy, ":", &save); d && a->ndirs < PMC_HWDB_MAX_DIRS;
		     d = strtok_r(NULL, ":", &save))
			a->dirs[a->ndirs++] = d;
	}
	if (pmc_hwdb_open(&a->db, a->dirs + fresh, a->ndirs - fresh, &err)) {
		fprintf(stderr, "pmcheck hwdb: ");
		pmc__term_text(stderr, err.message, "  ");
		fprintf(stderr, "\n");
		return PMC_EXIT_ERROR;
	}
	if (pmc_hwdb_ndirs(a->db) == 0) {
		/* Nothing to look up or check: not an empty success. */
		fprintf(stderr,
			"pmcheck hwdb %s: no hwdb directory: the built-in hwdb (share/pmcheck/hwdb of the prefix pmcheck is installed in) is missing; reinstall it, or give --hwdb=DIR or PMCHECK_HWDB\n",
			a->sub);
		return PMC_EXIT_ERROR;
	}
	return 0;
}

static int run_lookup(void *args, char **op, int n)
{
	struct hwdb_args *a = args;
	int rc;

	if (n > 0 && !signature_ok(op[0]))
		return cli_usage("hwdb", "lookup \"%s\": not a CPU signature (printable ASCII without blanks or '/', under 128 bytes; e.g. GenuineIntel-6-55-7)",
				 op[0]);
	if ((rc = open_hwdb(a, false)) != 0)
		return rc;
	return lookup(a->db, n > 0 ? op[0] : NULL);
}

static int run_budget(void *args, char **op, int n)
{
	struct hwdb_args *a = args;
	int rc;

	(void)n;
	if ((rc = open_hwdb(a, false)) != 0)
		return rc;
	return budget(a->db, a, op);
}

static int run_check(void *args, char **op, int n)
{
	struct hwdb_args *a = args;
	int rc;

	(void)op;
	(void)n;
	if ((rc = open_hwdb(a, false)) != 0)
		return rc;
	return check(a->db);
}

static int run_merge(void *args, char **op, int n)
{
	struct hwdb_args *a = args;
	struct pmc__merge m;
	bool fresh;
	int rc;

	if (a->from_history && n > 0)
		return cli_usage("hwdb", "merge --from-history takes no results files: merge them without it, or history add them and merge the store");
	if (!a->from_history && n == 0)
		return cli_usage("hwdb", "merge needs results files, or --from-history[=DB]");
	if (a->commit && !a->from_history)
		return cli_usage("hwdb", "--commit=%s picks runs of the history store: add --from-history",
				 a->commit);
	if (a->ndirs == 0)
		return cli_usage("hwdb", "merge writes into the first --hwdb=DIR: give one");
	/* merge writes into its target, which the writer makes with the first
	 * budget: a target that does not exist yet is not opened (it holds no
	 * map or models), so a merge that fails leaves nothing behind. */
	fresh = access(a->dirs[0], F_OK) != 0;
	if ((rc = open_hwdb(a, fresh)) != 0)
		return rc;
	m = (struct pmc__merge){ a->dirs[0], a->db, a->tolerance_set ? a->tolerance : 10.0 };
	if (a->from_history)
		return merge_from_history(a, &m);
	return pmc__hwdb_merge(&m, op, (size_t)n, stdout);
}

const struct cli_subcommand cmd_hwdb_subcommands[] = {
	{ "lookup", "[SIG]",
	  "which hwdb model a signature (default: this CPU) maps to, from "
	  "which file:line, its facts and the budget keys",
	  NULL, 0, 1, run_lookup },
	{ "budget", "SUITE.TEST REGION EVENT", "the budget that applies and its file:line",
	  "signature backend", 3, 3, run_budget },
	{ "check", "", "parse every hwdb file (map, models, budgets)", NULL, 0, 0, run_check },
	{ "merge", "(RESULTS... | --from-history[=DB])",
	  "pool results files from many machines into budgets per CPU model "
	  "in the first --hwdb directory: exact where every machine agrees on a "
	  "deterministic count, the range seen widened by --tolerance for noisy ones, "
	  "machines, runs and kernels in each line's comment; machines that disagree "
	  "on a deterministic count are listed, not averaged (exit 1). With "
	  "--from-history it pools one commit's runs from the pmcheck history store "
	  "instead of files",
	  "tolerance from-history commit", 0, -1, run_merge },
	{ 0 },
};

int cmd_hwdb(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hwdb", required_argument, NULL, 'd' },
		{ "signature", required_argument, NULL, 's' },
		{ "backend", required_argument, NULL, 'b' },
		{ "tolerance", required_argument, NULL, 't' },
		{ "from-history", optional_argument, NULL, 'H' },
		{ "commit", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct hwdb_args a = { 0 };
	const struct cli_subcommand *sub;
	int status = 0, c, rc;

	while ((c = cli_next("hwdb", argc, argv, "h", opts, &status)) != -1) {
		switch (c) {
		case -2:
			return status;
		case 'd':
			if (a.ndirs == PMC_HWDB_MAX_DIRS)
				return cli_usage("hwdb", "more than %d --hwdb directories",
						 PMC_HWDB_MAX_DIRS);
			a.dirs[a.ndirs++] = optarg;
			break;
		case 's':
			a.signature = optarg;
			break;
		case 'H':
			a.from_history = true;
			a.history = optarg;
			break;
		case 'c':
			a.commit = optarg;
			break;
		case 'b':
			if (strcmp(optarg, "perf") && strcmp(optarg, "sim"))
				return cli_usage("hwdb", "--backend=%s: expected perf or sim", optarg);
			a.backend = optarg;
			break;
		case 't': {
			char *end;

			if (pmc__parse_decimal(optarg, &end, &a.tolerance) || *end || !(a.tolerance >= 0) ||
			    a.tolerance > 1000)
				return cli_usage("hwdb", "--tolerance=%s: expected a percentage, 0 to 1000",
						 optarg);
			a.tolerance_set = true;
			break;
		}
		}
	}
	if (!(sub = cli_subcommand("hwdb", argv + optind, argc - optind, &status)))
		return status;
	a.sub = sub->name;
	rc = sub->run(&a, argv + optind + 1, argc - optind - 1);
	pmc_hwdb_free(a.db);
	free(a.env_copy);
	return rc;
}
