/* SPDX-License-Identifier: MIT */
/*
 * `pmcheck stat`: count a command with pmcheck's event syntax.  On the perf
 * backend the command is a forked child whose counters (inherited by its
 * threads and children) start at its exec; on the sim backend it runs under
 * callgrind and its totals at exit are read.  Counts are never scaled: a
 * multiplexed or never-counted value is printed as counted and marked.
 * --json writes a results document, one case "stat.PROGRAM" with one
 * region "command", so `pmcheck compare` compares two stat runs.
 *
 * Over 600 lines because `pmcheck stat` runs a command on either backend
 * (perf: a forked child counted from its exec; sim: under valgrind, its
 * totals read at exit) and prints the same table and writes the same results
 * document for both.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

/* More task-clock in the inherited set than in the command's own: another
 * task ran (a thread or child lives a few microseconds at the least). */
#define PMC__STAT_OTHERS_NS 1000

struct stat_run {
	const char *events;
	unsigned repeat;
	enum pmc_backend backend;
	const char *json_path;
	int verbose;
	char **argv;
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	char label[PMC_MAX_EVENTS][PMC_EVENT_NAME_MAX]; /* as the user wrote each */
	/* The kind's check failed here: not opened, shown as no figure. */
	char nocount[PMC_MAX_EVENTS][512];
	size_t n;
	unsigned sim_mask[PMC_MAX_EVENTS];
	char grouping[1024];
	struct pmc__region samples; /* one row per run */
	int status;                 /* the command's last non-zero exit status */
	double seconds;
};

static const char *default_events(enum pmc_backend backend)
{
	if (backend == PMC_BACKEND_SIM)
		return "instructions:u,L1-dcache-loads,L1-dcache-stores,L1-dcache-load-misses,"
		       "branches,branch-misses";
	if (pmc_machine_has_hw_pmu(NULL, 0))
		return "task-clock,context-switches,cpu-migrations,page-faults,instructions:u,cycles:u";
	return "task-clock,context-switches,cpu-migrations,page-faults";
}

/* The command's file, as execvp would find it; "" when it is not found. */
static void program_path(const char *name, char *out, size_t size)
{
	if (pmc__find_on_path(name, out, size))
		out[0] = '\0';
}

/*
 * The kernel's counters of one run.  Events are inherited by the command's
 * threads and children, except uprobes (calls:), which lose counts when an
 * inherited copy exits (see open_error.c): they count the command's own
 * task, and a task-clock pair (inherited, and not) says whether anything
 * else ran, in which case their counts are marked OTHER_THREADS (at least).
 */
struct perf_sets {
	struct pmc_counters *all, *own;
	struct pmc_event_spec all_specs[PMC_MAX_EVENTS], own_specs[PMC_MAX_EVENTS];
	size_t nall, nown;
	size_t where[PMC_MAX_EVENTS]; /* user event i: index in its set */
	bool in_own[PMC_MAX_EVENTS];
};

static int open_sets(struct stat_run *s, struct perf_sets *p, pid_t pid, struct pmc_error *err)
{
	const unsigned flags = PMC_OPEN_ENABLE_ON_EXEC;
	int rc;

	memset(p, 0, offsetof(struct perf_sets, where));
	for (size_t i = 0; i < s->n; i++) {
		if (s->nocount[i][0])
			continue;
		p->in_own[i] = s->specs[i].kind == PMC_KIND_UPROBE;
		if (p->in_own[i]) {
			p->where[i] = p->nown;
			p->own_specs[p->nown++] = s->specs[i];
		} else {
			p->where[i] = p->nall;
			p->all_specs[p->nall++] = s->specs[i];
		}
	}
	if (p->nown && (p->nall == PMC_MAX_EVENTS || p->nown == PMC_MAX_EVENTS)) {
		snprintf(err->message, sizeof(err->message),
			 "at most %d events with calls: (each set also counts task-clock)",
			 PMC_MAX_EVENTS - 1);
		return err->code = PMC_E_TOO_MANY;
	}
	if (p->nall == 0) /* every event failed its check: something to run */
		pmc_event_parse("task-clock", &p->all_specs[p->nall++], NULL);
	if (p->nown) {
		/* The witnesses: task-clock of every task, and of the command's. */
		pmc_event_parse("task-clock", &p->all_specs[p->nall++], NULL);
		pmc_event_parse("task-clock", &p->own_specs[p->nown++], NULL);
		rc = pmc_counters_open_task(&p->own, p->own_specs, p->nown, flags, pid, err);
		if (rc)
			return rc;
	}
	rc = pmc_counters_open_task(&p->all, p->all_specs, p->nall, flags | PMC_OPEN_INHERIT, pid, err);
	if (rc) {
		pmc_counters_close(p->own);
		p->own = NULL;
	}
	return rc;
}

/* The run's measurement in the user's order; 0 or a negative code. */
static int read_sets(struct stat_run *s, struct perf_sets *p, struct pmc_measurement *m)
{
	struct pmc_reading zero, all, own;
	struct pmc_measurement ma, mo;
	bool others = false;
	int rc;

	memset(&zero, 0, sizeof(zero));
	rc = pmc_counters_read(p->all, &all);
	if (rc == 0 && p->own)
		rc = pmc_counters_read(p->own, &own);
	if (rc)
		return rc;
	zero.n = all.n;
	pmc_measurement_from(&ma, &zero, &all);
	if (p->own) {
		uint64_t every = all.c[p->nall - 1].value, mine;

		zero.n = own.n;
		pmc_measurement_from(&mo, &zero, &own);
		mine = own.c[p->nown - 1].value;
		/* Both enabled by the same exec: equal to the nanosecond when
		 * the command ran alone (measured); another task's run time
		 * adds microseconds at the least. */
		others = every > mine + PMC__STAT_OTHERS_NS;
		if (s->verbose)
			fprintf(stderr, "pmcheck stat: task-clock of every task %" PRIu64
				" ns, of the command's own %" PRIu64 " ns\n", every, mine);
	}
	memset(m, 0, sizeof(*m));
	m->n = s->n;
	for (size_t i = 0; i < s->n; i++) {
		if (s->nocount[i][0]) {
			m->d[i].flags = PMC_DELTA_NOT_COUNTED;
			continue;
		}
		m->d[i] = p->in_own[i] ? mo.d[p->where[i]] : ma.d[p->where[i]];
		if (p->in_own[i] && others)
			m->d[i].flags |= PMC_DELTA_OTHER_THREADS;
	}
	return 0;
}

static void close_sets(struct perf_sets *p)
{
	pmc_counters_close(p->all);
	pmc_counters_close(p->own);
	p->all = p->own = NULL;
}

/*
 * One run on the perf backend: the child waits for a byte on `go` and
 * execs; the counters open on its pid meanwhile, enabled by the exec.  The
 * exec's errno comes back on the child's pipe (close-on-exec: end of file
 * means the command runs).
 */
static int run_perf(struct stat_run *s, struct pmc_measurement *m)
{
	struct perf_sets *sets = calloc(1, sizeof(*sets));
	struct pmc__child c;
	struct pmc_error err;
	int go[2], wfd = -1, exec_errno = 0, rc = -1;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_int, old_quit;
	pid_t pid;
	ssize_t got;

	if (!sets || pipe2(go, O_CLOEXEC) != 0) {
		fprintf(stderr, "pmcheck stat: %s\n", strerror(sets ? errno : ENOMEM));
		free(sets);
		return -1;
	}
	pid = pmc__child_fork(&c, PMC__CHILD_PIPE, &wfd);
	if (pid < 0) {
		fprintf(stderr, "pmcheck stat: fork: %s\n", strerror((int)-pid));
		close(go[0]);
		close(go[1]);
		free(sets);
		return -1;
	}
	if (pid == 0) {
		char byte;

		close(go[1]);
		if (read(go[0], &byte, 1) != 1)
			_exit(127); /* the parent gave up */
		execvp(s->argv[0], s->argv);
		rc = errno;
		if (write(wfd, &rc, sizeof(rc)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	if (open_sets(s, sets, pid, &err)) {
		close(go[1]);
		pmc__child_kill(&c);
		fprintf(stderr, "pmcheck stat: %s\n", err.message);
		free(sets);
		return -1;
	}
	if (!s->grouping[0]) {
		char own[512];
		size_t used;

		pmc_counters_describe(sets->all, s->grouping, sizeof(s->grouping));
		used = strlen(s->grouping);
		if (sets->own) {
			pmc_counters_describe(sets->own, own, sizeof(own));
			snprintf(s->grouping + used, sizeof(s->grouping) - used,
				 " inherited by threads and children; %s on the command's own task (the last task-clock of each is the witness of other tasks)",
				 own);
		}
	}
	/* Like the command run by hand: ^C is for it, pmcheck reports after. */
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	if (write(go[1], "", 1) != 1) {
		close(go[1]);
		pmc__child_kill(&c);
		fprintf(stderr, "pmcheck stat: cannot start the command\n");
		goto out;
	}
	close(go[1]);
	do
		got = read(c.fd, &exec_errno, sizeof(exec_errno));
	while (got < 0 && errno == EINTR);
	pmc__child_reap(&c, true);
	pmc__child_close(&c);
	if (got == (ssize_t)sizeof(exec_errno)) {
		fprintf(stderr, "pmcheck stat: cannot run \"%s\": %s\n", s->argv[0], strerror(exec_errno));
		goto out;
	}
	rc = read_sets(s, sets, m);
	if (rc) {
		fprintf(stderr, "pmcheck stat: reading the counters: %s\n", pmc_strerror(rc));
		rc = -1;
		goto out;
	}
	if (WIFSIGNALED(c.status))
		s->status = 128 + WTERMSIG(c.status);
	else if (WEXITSTATUS(c.status))
		s->status = WEXITSTATUS(c.status);
out:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	close_sets(sets);
	free(sets);
	return rc;
}

/*
 * On sim, the command runs with glibc's choices pinned (pmc_sim_pinned_env:
 * baseline x86-64 string functions).  calls:strlen names an IFUNC whose
 * implementation glibc binds by those choices, so pmcheck resolves it as
 * the command will: it runs again under the same settings first (once:
 * the settings are then in place).  Returns only on error.
 */
static int pinned_for_sim(char **argv)
{
	const char *const *env = pmc_sim_pinned_env();
	bool same = true;

	for (size_t i = 0; env[i]; i++) {
		const char *eq = strchr(env[i], '=');
		const char *have = eq ? getenv(strndupa(env[i], (size_t)(eq - env[i]))) : NULL;

		if (!have || strcmp(have, eq + 1))
			same = false;
	}
	if (same)
		return 0;
	for (size_t i = 0; env[i]; i++)
		putenv((char *)env[i]);
	/* argv is the command's (pmcheck.c passes argv + 1 of main's). */
	execv("/proc/self/exe", argv - 1);
	fprintf(stderr, "pmcheck stat: cannot run again with the sim backend's settings: %s\n",
		strerror(errno));
	return -1;
}

/* One run on the sim backend: the engine's totals at the command's exit
 * (pmcheck's valgrind tool, or callgrind where an event needs it). */
static int run_sim(struct stat_run *s, struct pmc_measurement *m)
{
	uint64_t values[PMC_MAX_EVENTS];
	struct pmc_error err;
	int rc;

	if (s->verbose)
		pmc_log_set(pmc__log_stderr, NULL);
	/* The engine was settled before the first run (main below); the
	 * variables that steer it are not passed on to the command (exec.c). */
	rc = pmc_sim_run_events(s->argv, s->verbose, s->specs, s->n, values, &err);
	if (rc < 0) {
		fprintf(stderr, "pmcheck stat: %s\n", err.message);
		return -1;
	}
	if (rc)
		s->status = rc;
	memset(m, 0, sizeof(*m));
	m->n = s->n;
	for (size_t i = 0; i < s->n; i++)
		m->d[i].value = values[i];
	return 0;
}

/* The mark of a value that is not the whole count. */
static const char *mark(const struct stat_run *s, size_t i, const struct pmc__stats *st, char *buf,
			size_t size)
{
	if (s->nocount[i][0])
		snprintf(buf, size, "OPENS BUT DOES NOT COUNT here, no figure: %s", s->nocount[i]);
	else if (st->not_counted)
		snprintf(buf, size, "NOT COUNTED in %zu of %zu runs: the counter never ran (value 0 is no count)",
			 st->not_counted, st->n);
	else if (st->other_threads)
		snprintf(buf, size, "OTHER TASKS in %zu of %zu runs: the command's other threads or processes ran and calls: counts only its own task: at least this",
			 st->other_threads, st->n);
	else if (st->multiplexed)
		snprintf(buf, size, "MULTIPLEXED in %zu of %zu runs: counted %.1f%% of the time at least, NOT scaled",
			 st->multiplexed, st->n, 100.0 * st->running_share);
	else
		buf[0] = '\0';
	return buf;
}

/* On stderr, as perf stat does: the command's own output stays its own. */
static void print_table(struct stat_run *s)
{
	bool one = s->samples.n == 1;
	char name[64], a[48], b[48], c[48], why[600];

	snprintf(name, sizeof(name), "%s", pmc__file_part(s->argv[0]));
	fprintf(stderr, "\npmcheck stat: %s  (%zu run%s, %s backend; counts as counted, never scaled)\n\n",
	       name, s->samples.n, one ? "" : "s", s->backend == PMC_BACKEND_SIM ? "sim" : "perf");
	if (one)
		fprintf(stderr, "  %-32s %18s   %s\n", "event", "count", "running");
	else
		fprintf(stderr, "  %-32s %16s %16s %16s   %s\n", "event", "min", "median", "max", "running");
	for (size_t i = 0; i < s->n; i++) {
		const struct pmc__stats *st = pmc__region_stats(&s->samples, i);
		char run[32];

		if (s->nocount[i][0])
			snprintf(run, sizeof(run), "%s", "-");
		else if (s->backend == PMC_BACKEND_SIM)
			snprintf(run, sizeof(run), "%s", "simulated");
		else
			snprintf(run, sizeof(run), "%.1f%%", 100.0 * st->running_share);
		pmc__fmt_num(a, sizeof(a), (double)st->min);
		pmc__fmt_num(b, sizeof(b), st->median);
		pmc__fmt_num(c, sizeof(c), (double)st->max);
		if (s->nocount[i][0])
			snprintf(a, sizeof(a), "-"), snprintf(b, sizeof(b), "-"), snprintf(c, sizeof(c), "-");
		if (one)
			fprintf(stderr, "  %-32s %18s   %-9s %s\n", s->label[i], a, run, mark(s, i, st, why, sizeof(why)));
		else
			fprintf(stderr, "  %-32s %16s %16s %16s   %-9s %s\n", s->label[i], a, b, c, run,
			       mark(s, i, st, why, sizeof(why)));
	}
	fprintf(stderr, "\n  %.3f s in all", s->seconds);
	if (s->grouping[0])
		fprintf(stderr, "; %s", s->grouping);
	fprintf(stderr, "\n");
	if (s->status)
		fprintf(stderr, "  the command exited with status %d\n", s->status);
}

/* The results document: one case, one region "command", a sample per run. */
static int write_json(struct stat_run *s, int argc, char **argv)
{
	struct pmc__results rs = { 0 };
	struct pmc__result r;
	struct pmc__region_rec *g;
	char name[256];
	json_t *doc;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	snprintf(name, sizeof(name), "stat.%s", pmc__file_part(s->argv[0]));
	/* A case name is SUITE.TEST of [A-Za-z0-9_]: "python3.11" -> "python3_11". */
	for (char *q = name + 5; *q; q++)
		if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9')))
			*q = '_';
	r.name = strdup(name);
	r.suite = strdup("stat");
	r.test = strdup(name + 5);
	r.file = strdup(s->argv[0]);
	r.verdict = PMC_PASS;
	r.backend = s->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	r.has_options = true;
	r.reps = (unsigned)s->samples.n;
	r.measuring = true;
	r.has_duration = true;
	r.duration_s = s->seconds;
	if (s->status && asprintf(&r.reason, "the command exited with status %d", s->status) < 0)
		r.reason = NULL;
	r.grouping = s->grouping[0] ? strdup(s->grouping) : NULL;
	r.read_path = strdup(s->backend == PMC_BACKEND_SIM ? "sim" : "read");
	r.events = calloc(s->n + 1, sizeof(*r.events));
	r.regions = calloc(2, sizeof(*r.regions));
	r.checks = calloc(1, sizeof(*r.checks));
	r.notes = calloc(1, sizeof(*r.notes));
	if (!r.name || !r.suite || !r.test || !r.file || !r.events || !r.regions || !r.checks || !r.notes)
		goto out;
	g = &r.regions[r.nregions++];
	g->name = strdup("command");
	g->iterations = 1;
	g->samples = s->samples.n;
	g->ev = calloc(s->n + 1, sizeof(*g->ev));
	if (!g->name || !g->ev)
		goto out;
	for (size_t i = 0; i < s->n; i++) {
		const struct pmc__stats *st = pmc__region_stats(&s->samples, i);
		struct pmc__event_rec *e = &r.events[r.nevents++];
		struct pmc__stat_rec *sr = &g->ev[g->nev++];

		e->label = strdup(s->label[i]);
		e->name = strdup(s->specs[i].name);
		e->kind = strdup(pmc_event_kind_name(s->specs[i].kind));
		e->group = -1;
		e->hardware = s->specs[i].uses_hw_counter;
		sr->label = strdup(s->label[i]);
		sr->n = st->n;
		sr->min = st->min;
		sr->max = st->max;
		sr->median = st->median;
		sr->mean = st->mean;
		sr->multiplexed = st->multiplexed;
		sr->not_counted = st->not_counted;
		sr->other_threads = st->other_threads;
		sr->values = calloc(s->samples.n + 1, sizeof(*sr->values));
		if (!e->label || !e->name || !e->kind || !sr->label || !sr->values)
			goto out;
		for (size_t k = 0; k < s->samples.n; k++)
			sr->values[sr->nvalues++] = s->samples.value[k * s->samples.nev + i];
	}
	if (pmc__results_add(&rs, &r))
		goto out;
	memset(&r, 0, sizeof(r)); /* rs owns it now */
	{
		struct pmc__run_info info = { "pmcheck stat", rs.cases[0].backend, argc, argv,
					      s->seconds };

		doc = pmc__results_doc(&rs, &info);
	}
	rc = doc ? pmc__write_json(s->json_path, doc) : -ENOMEM;
	json_decref(doc);
	if (rc)
		fprintf(stderr, "pmcheck stat: cannot write %s: %s\n", s->json_path, strerror(-rc));
out:
	pmc__result_release(&r);
	pmc__results_release(&rs);
	return rc ? -1 : 0;
}

int cmd_stat(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "repeat", required_argument, NULL, 'r' },
		{ "backend", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct stat_run *s = calloc(1, sizeof(*s));
	char program[PMC_EVENT_PATH_MAX];
	struct pmc_error err;
	int status = 0, c, rc = PMC_EXIT_ERROR;
	double t0;

	if (!s)
		return PMC_EXIT_ERROR;
	s->repeat = 1;
	s->backend = PMC_BACKEND_PERF;
	while ((c = cli_next("stat", argc, argv, "+e:r:vh", opts, &status)) != -1) {
		switch (c) {
		case -2:
			free(s);
			return status;
		case 'e':
			s->events = optarg;
			break;
		case 'r':
			if (cli_positive("stat", "--repeat", optarg, &s->repeat)) {
				free(s);
				return PMC_EXIT_USAGE;
			}
			break;
		case 'b':
			if (strcmp(optarg, "perf") && strcmp(optarg, "sim")) {
				free(s);
				return cli_usage("stat", "--backend=%s: expected perf or sim", optarg);
			}
			s->backend = strcmp(optarg, "sim") ? PMC_BACKEND_PERF : PMC_BACKEND_SIM;
			break;
		case 'j':
			s->json_path = optarg;
			break;
		case 'v':
			s->verbose = 1;
			break;
		}
	}
	if (optind >= argc) {
		free(s);
		return cli_usage("stat", "expected a command to count (pmcheck stat [options] -- COMMAND ARGS...)");
	}
	s->argv = argv + optind;
	{
		const char *opt[] = { "--json" }, *path[] = { s->json_path };
		int rc = cli_outputs("stat", opt, path, 1);

		if (rc) {
			free(s);
			return rc;
		}
	}
	if (s->backend == PMC_BACKEND_SIM && pinned_for_sim(argv) != 0) {
		free(s);
		return PMC_EXIT_ERROR;
	}
	if (!s->events)
		s->events = default_events(s->backend);
	/* The list parsed once, as the user wrote it: an empty item or a bad
	 * modifier is refused at its own position, never dropped from the
	 * list; its calls: events are then resolved in the command's objects,
	 * an unknown function refused at its own position too. */
	if (pmc_event_parse_list_flags(s->events, PMC_PARSE_DEFER_SYMBOLS, s->specs,
				       PMC_MAX_EVENTS, &s->n, &err)) {
		fprintf(stderr, "pmcheck stat: %s\n", err.message);
		if (err.position >= 0)
			cli_caret(s->events, err.position);
		free(s);
		return PMC_EXIT_USAGE;
	}
	program_path(s->argv[0], program, sizeof(program));
	if (pmc__command_resolve(s->events, program, s->specs, s->n, s->label, &err)) {
		fprintf(stderr, "pmcheck stat: %s\n", err.message);
		if (err.position >= 0)
			cli_caret(s->events, err.position);
		if (err.code == PMC_E_NO_SYMBOL)
			fprintf(stderr, "  (a bare calls:NAME is looked up in the command %s, then in the libraries it loads, then in those pmcheck has loaded; name the object of another: calls:NAME@/path/to/lib.so)\n",
				*program ? program : s->argv[0]);
		free(s);
		return PMC_EXIT_USAGE;
	}
	for (size_t i = 0; i < s->n; i++) {
		const char *at = s->label[i] + 4;

		/* A symbol would be resolved in pmcheck, not in the command. */
		if (s->specs[i].kind == PMC_KIND_BREAKPOINT && !strncmp(s->label[i], "mem:", 4) &&
		    !(at[0] >= '0' && at[0] <= '9')) {
			fprintf(stderr, "pmcheck stat: \"%s\": mem:SYMBOL names an address in pmcheck's own process, not in the command, which is another program at other addresses; give the command's address (mem:0xADDR/LEN:w), or count calls of the function with calls:%.*s (looked up in the command)\n",
				s->label[i], (int)strcspn(at, ":/"), at);
			free(s);
			return PMC_EXIT_USAGE;
		}
	}
	for (size_t i = 0; s->backend == PMC_BACKEND_PERF && i < s->n; i++) {
		struct pmc_kind_check c;
		int id = pmc_kind_check_of(&s->specs[i]);

		if (id >= 0 && id != PMC_KIND_CHECK_UPROBE &&
		    pmc_kind_check((enum pmc_kind_check_id)id, &c) == PMC_E_NOT_COUNTING)
			snprintf(s->nocount[i], sizeof(s->nocount[i]), "%s", c.summary);
	}
	for (size_t i = 0; s->backend == PMC_BACKEND_SIM && i < s->n; i++)
		if (pmc_sim_columns(&s->specs[i], &s->sim_mask[i], &err)) {
			fprintf(stderr, "pmcheck stat: --backend=sim: %s\n", err.message);
			free(s);
			return PMC_EXIT_USAGE;
		}
	/* A bad PMCHECK_SIM_* setting is a usage error, as a bad option is. */
	if (s->backend == PMC_BACKEND_SIM && pmc_sim_engine_prefer(NULL, &err)) {
		fprintf(stderr, "pmcheck stat: %s\n", err.message);
		free(s);
		return PMC_EXIT_USAGE;
	}
	s->samples.name = "command";
	s->samples.iterations = 1;
	s->samples.nev = s->n;
	static int quiet = 2, chatty = 1;

	pmc_log_set(pmc__log_stderr, s->verbose ? &chatty : &quiet);
	t0 = pmc__child_now();
	for (unsigned k = 0; k < s->repeat; k++) {
		struct pmc_measurement m;

		if ((s->backend == PMC_BACKEND_SIM ? run_sim(s, &m) : run_perf(s, &m)) != 0)
			goto out;
		if (pmc__region_append(&s->samples, &m)) {
			fprintf(stderr, "pmcheck stat: out of memory\n");
			goto out;
		}
	}
	s->seconds = pmc__child_now() - t0;
	print_table(s);
	if (s->json_path && write_json(s, argc, argv))
		goto out;
	rc = s->status;
out:
	pmc__region_release(&s->samples);
	free(s);
	return rc;
}
