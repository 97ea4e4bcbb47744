/* SPDX-License-Identifier: MIT */
/*
 * A case under the sim backend: the forked child re-executes the suite
 * under valgrind for that one case (pmc__exec_sim_case), with an
 * environment and a stack that do not depend on who started it, and that
 * process runs the case and hands its result over (pmc__run_inner_case).
 * Also what is checked before any sim case starts.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runner_int.h"
#include "sim/sim_harness.h"
#include "util/file.h"

/*
 * The program's stack starts below its argument and environment strings,
 * and where it starts changes the work of alignment-dependent code (glibc's
 * string functions): measured, 12 more instructions in one expat region for
 * an 11-byte environment variable.  So the strings and their pointers are
 * padded to the next multiple of 64 KiB with PMCHECK_SIM_PAD, and a case
 * counts the same whatever the caller's environment or hwdb path holds.
 */
/*
 * Code under test may read its environment (libexpat calls getenv(3) when
 * it creates a parser, and getenv walks every variable: 12 instructions
 * each), so the caller's environment -- a shell, CTest, CI -- would change
 * the counts.  A case under the sim backend sees PATH and the variables
 * PMCHECK_SIM_ENV names (NAME:NAME; a ',' is read as ':' and warned of in
 * the run's header), nothing else; the simulator's own variables are added
 * by pmc_sim_exec().
 */
#define SIM_ENV_SEPARATORS ":,"

static void canonical_environment(void)
{
	const char *keep = getenv("PMCHECK_SIM_ENV"), *path = getenv("PATH");
	char *names = keep ? strdup(keep) : NULL, *save = NULL, *name;
	/* One slot per name it can hold (at most one per byte), and PATH:
	 * no name is ever dropped for want of room. */
	char **kept = calloc((keep ? strlen(keep) : 0) + 2, sizeof(*kept));
	size_t n = 0, i;

	if (!kept || (keep && !names))
		goto oom;
	if (path && asprintf(&kept[n++], "PATH=%s", path) < 0)
		goto oom;
	for (name = names ? strtok_r(names, SIM_ENV_SEPARATORS, &save) : NULL; name;
	     name = strtok_r(NULL, SIM_ENV_SEPARATORS, &save)) {
		const char *v = getenv(name);

		if (v && strcmp(name, "PATH") && asprintf(&kept[n++], "%s=%s", name, v) < 0)
			goto oom;
	}
	clearenv();
	for (i = 0; i < n; i++)
		putenv(kept[i]); /* the child execs soon; the strings live until then */
	free(names);
	return;
oom:
	/* A case run without what PMCHECK_SIM_ENV names counts another
	 * input: it does not start (this is the case's child process). */
	fprintf(stderr, "pmcheck: out of memory keeping PMCHECK_SIM_ENV's variables for a sim case\n");
	_exit(PMC_EXIT_ERROR);
}

#define SIM_PAD_VAR "PMCHECK_SIM_PAD="
/*
 * Extra padding, in bytes: moves the measured process's stack.  Executed
 * work does not change with it (measured: instructions of the checksum gate
 * equal over 11 shifts of 64-byte multiples), cache misses do (L1 misses
 * 66..83 over the same shifts), so --calibrate gives every run its own shift
 * and a noisy budget covers what other layouts do.  Gate runs use 0.
 */
size_t pmc__sim_layout_shift;
size_t pmc__sim_heap_shift;
/* The next case's thread schedule (applied by process.c, named here for
 * calibration's lines; runner_int.h). */
enum pmc__schedule pmc__schedule;

const char *pmc__schedule_name(enum pmc__schedule s)
{
	static const char *const names[PMC__SCHEDULES] = {
		[PMC__SCHED_QUIET] = "as a gate run",
		[PMC__SCHED_FAIR] = "valgrind's fair scheduler",
		[PMC__SCHED_ONE_CPU] = "one CPU",
		[PMC__SCHED_CROWDED] = "one CPU shared with a busy process",
		[PMC__SCHED_BUSY] = "every CPU busy",
	};

	return s < PMC__SCHEDULES ? names[s] : "?";
}

/* In the case's process: the heap shift its request asked for. */
static size_t heap_shift;
#define SIM_PAD_UNIT 65536

static void pad_environment(char *const *args)
{

	size_t room = sizeof(SIM_PAD_VAR) + sizeof(char *), target;
	char **e, *pad;

	unsetenv("PMCHECK_SIM_PAD");
	for (e = environ; *e; e++)
		room += strlen(*e) + 1 + sizeof(char *);
	for (; *args; args++)
		room += strlen(*args) + 1 + sizeof(char *);
	target = (room / SIM_PAD_UNIT + 1) * SIM_PAD_UNIT + pmc__sim_layout_shift;
	pad = malloc(sizeof(SIM_PAD_VAR) + (target - room));
	if (!pad)
		return;
	memcpy(pad, SIM_PAD_VAR, sizeof(SIM_PAD_VAR) - 1);
	memset(pad + sizeof(SIM_PAD_VAR) - 1, 'x', target - room);
	pad[sizeof(SIM_PAD_VAR) - 1 + (target - room)] = '\0';
	putenv(pad); /* the child execs soon; pad lives until then */
}

/*
 * The sim backend measures every case in a process of its own, started the
 * same way every time: valgrind runs this program with the case's name, the
 * result descriptor and only the options that change what the case does.
 * Counts of code that allocates depend on the heap the measured process
 * starts from (measured on libexpat: one region 31122857 instructions in a
 * fresh process, 31250999 when forked from a runner that had run two other
 * cases), so a case run alone by CTest, in the whole suite, in a rerun or
 * by --calibrate must start from the same state.  Runs in the forked child;
 * returns the exit status for it.
 */
/*
 * What the case's valgrind must simulate: the columns its .events need
 * (0 when none needs more than instructions and calls).  -1 and *why when
 * an event has no simulated equivalent: the case is skipped here, without
 * starting valgrind, in the words the case would say under it.  Events
 * that do not parse here are left to the case to report (all columns).
 */
static long sim_columns_of(const struct pmc_test_def *d, char *why, size_t size)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_error err;
	unsigned need = 0, m;
	size_t n = 0;

	if (!d->opt.events || !*d->opt.events)
		return 0;
	if (pmc_event_parse_list_flags(d->opt.events, PMC_PARSE_DEFER_SYMBOLS, specs,
				       PMC_MAX_EVENTS, &n, &err))
		return (long)~0u;
	for (size_t i = 0; i < n; i++) {
		if (pmc_sim_columns(&specs[i], &m, &err)) {
			snprintf(why, size, "%s", err.message);
			return -1;
		}
		need |= m;
	}
	return need;
}

/* The case's run with the tool's function costs (recount_with_functions). */
bool pmc__functions_forced;

/* The case's suite has budgets under this build's sim key: a gate, whose
 * cases are there to fail when their figures move. */
static bool gated_here(const struct pmc_test_def *d)
{
	const struct pmc_budget_source *src = pmc__budget_source();
	char key[PMC_HWDB_KEY_MAX], keys[16][PMC_HWDB_KEY_MAX];
	size_t n;

	if (!d || !src || !src->suite_keys)
		return false;
	pmc__sim_profile_key(d, key, sizeof(key));
	n = src->suite_keys(src->ctx, "sim", d->suite, keys, 16);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(keys[i], key))
			return true;
	return false;
}

/*
 * Does the tool count function costs in a case's run?  They cost the tool
 * one more addition wherever it adds to a counter (about a tenth more of
 * instruction-only work), so only a run that may need them pays: one that
 * writes results or a report, compares with a baseline, calibrates, or
 * runs under CTest (CI's gates), and a gate's case wherever it runs (a
 * budget it misses is then explained at once, where a second run would
 * have cost the failure twice the case).  A failure elsewhere is run once
 * more, with them.  callgrind always has them.
 */
bool pmc__functions_wanted(const struct runner *r, const struct pmc_test_def *d)
{
	if (pmc__functions_rerun)
		return false;
	return pmc__functions_forced || r->json_path || r->junit_path || r->results_dir || r->report_md ||
	       r->baseline || r->save_baseline || r->calibrate || r->ctest || gated_here(d);
}

int pmc__exec_sim_case(struct runner *r, const struct pmc_test_def *d, int resfd)
{
	char exe[PATH_MAX], name[256], *args[4], why[PMC_ERROR_MSG_MAX];
	long columns;
	struct pmc_error err;
	size_t n = 0, i;
	int req, high[2], rc;
	ssize_t len;

	columns = sim_columns_of(d, why, sizeof(why));
	if (columns < 0) {
		struct pmc__result res;

		pmc__case_error_result(d, why, &res);
		res.verdict = PMC_SKIP;
		res.backend = "sim";
		rc = pmc__case_write_result(resfd, &res);
		pmc__result_release(&res);
		return rc ? PMC_EXIT_ERROR : 0;
	}
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (len <= 0) {
		fprintf(stderr, "%s: --backend=sim: cannot find this program (/proc/self/exe): %s\n",
			r->prog, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	exe[len] = '\0';
	/*
	 * The request (case, options, hwdb directories) goes through a
	 * descriptor, not the command line: the measured process's argument
	 * strings, and with them its memory layout, are then the same whoever
	 * started it and with whatever hwdb path.  Descriptors 3 (request) and
	 * 4 (result) in the case, whatever numbers they have here.
	 */
	req = pmc__case_memfd("pmcheck-request");
	pmc__full_name(d, name, sizeof(name));
	if (req < 0 || dprintf(req, "case %s\n", name) < 0)
		return PMC_EXIT_ERROR;
	if (r->repeat)
		dprintf(req, "repeat %u\n", r->repeat);
	if (r->strict)
		dprintf(req, "strict\n");
	if (pmc__layout_per_call == 0)
		dprintf(req, "exact-layout\n");
	if (pmc__functions_rerun)
		dprintf(req, "functions-rerun\n");
	if (pmc__sim_heap_shift)
		dprintf(req, "heap-shift %zu\n", pmc__sim_heap_shift);
	for (i = 0; i < r->nhwdb; i++)
		dprintf(req, "hwdb %s\n", r->hwdb[i]);
	lseek(req, 0, SEEK_SET);
	high[0] = fcntl(req, F_DUPFD_CLOEXEC, 64);
	high[1] = fcntl(resfd, F_DUPFD_CLOEXEC, 64);
	if (high[0] < 0 || high[1] < 0 || dup2(high[0], 3) < 0 || dup2(high[1], 4) < 0) {
		fprintf(stderr, "%s: --backend=sim: cannot pass the case its descriptors: %s\n",
			r->prog, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	close(high[0]);
	close(high[1]);
	args[n++] = exe;
	args[n++] = (char *)"--pmc-request-fd=3";
	args[n++] = (char *)"--pmc-result-fd=4";
	args[n] = NULL;
	canonical_environment();
	pad_environment(args);
	pmc_log_set(pmc__log_stderr, NULL);
	rc = r->sim_full ? pmc_sim_exec(args, r->verbose, &err)
			 : pmc_sim_exec_for(args, r->verbose,
					    (unsigned)columns |
						    (pmc__schedule == PMC__SCHED_FAIR ? PMC_SIM_OTHER_SCHEDULE : 0) |
						    (pmc__functions_wanted(r, d) ? PMC_SIM_FUNCTIONS : 0),
					    &err);
	if (rc < 0) {
		fprintf(stderr, "%s: --backend=sim: %s\n", r->prog, err.message);
		return PMC_EXIT_ERROR;
	}
	if (rc > 128) {
		/* The case died of a signal: die of it too, so the runner
		 * reports a crash. */
		signal(rc - 128, SIG_DFL);
		kill(getpid(), rc - 128);
	}
	return rc;
}

/*
 * PMCHECK_SIM_ENV, checked before any case: a name that is not a variable
 * name is a usage error.  What is merely doubtful (a ',' for ':', a name
 * not set) is said in the run's header, pmc__sim_env_header().
 */
static int sim_env_check(struct runner *r)
{
	const char *keep = getenv("PMCHECK_SIM_ENV");
	const char *p = keep;

	while (p && *p) {
		size_t n = strcspn(p, SIM_ENV_SEPARATORS);
		size_t ok = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

		if (n && (ok < n || (*p >= '0' && *p <= '9'))) {
			char name[65], shown[65 * 4 + 1];

			/* The name alone, by its first 64 bytes, its control
			 * characters escaped: the value may be long, and what
			 * is in it must not reach the terminal as it is. */
			snprintf(name, sizeof(name), "%.*s", (int)(n > 64 ? 64 : n), p);
			fprintf(stderr, "%s: PMCHECK_SIM_ENV: \"%s\"%s, at byte %zu of its %zu, is not a variable name: give names separated by ':' (PMCHECK_SIM_ENV=HOME:LANG)\n",
				r->prog, pmc__escape_ctl(shown, sizeof(shown), name), n > 64 ? "..." : "",
				(size_t)(p - keep) + 1, strlen(keep));
			return PMC_EXIT_USAGE;
		}
		p += n + (p[n] != '\0');
	}
	return 0;
}

void pmc__sim_env_header(FILE *f, const char *prefix)
{
	const char *keep = getenv("PMCHECK_SIM_ENV"), *p = keep;
	char seen[1024] = "", unset[1024] = "";
	size_t used = 0, uused = 0;

	while (p && *p) {
		size_t n = strcspn(p, SIM_ENV_SEPARATORS);
		char name[256];

		if (n && n < sizeof(name)) {
			memcpy(name, p, n);
			name[n] = '\0';
			if (strcmp(name, "PATH") && getenv(name) && used < sizeof(seen))
				used += (size_t)snprintf(seen + used, sizeof(seen) - used, ", %s", name);
			else if (!getenv(name) && uused < sizeof(unset))
				uused += (size_t)snprintf(unset + uused, sizeof(unset) - uused, "%s%s",
							  uused ? ", " : "", name);
		}
		p += n + (p[n] != '\0');
	}
	fprintf(f, "%ssim: a case sees only PATH%s%s%s\n", prefix, seen,
		seen[0] ? " (PMCHECK_SIM_ENV)" : "",
		seen[0] ? "" : "; name more with PMCHECK_SIM_ENV=NAME:NAME");
	if (keep && strchr(keep, ','))
		fprintf(f, "%swarning: PMCHECK_SIM_ENV=\"%s\" separates names with ',': the separator is ':' (PMCHECK_SIM_ENV=NAME:NAME); read as if it were ':'\n",
			prefix, keep);
	if (unset[0])
		fprintf(f, "%swarning: PMCHECK_SIM_ENV names %s, not set in this environment: the cases run without %s\n",
			prefix, unset, strchr(unset, ',') ? "them" : "it");
}

/*
 * A program built with a sanitizer cannot run under valgrind: both manage
 * the address space, and valgrind's loader stops it before main ("ASan
 * runtime does not come first in initial library list" for every case).
 * The runtime is in this very process when the suite was built with it.
 */
static const char *sanitizer_here(void)
{
	static const struct {
		const char *symbol, *name;
	} runtimes[] = {
		{ "__asan_init", "AddressSanitizer (-fsanitize=address)" },
		{ "__hwasan_init", "HWAddressSanitizer (-fsanitize=hwaddress)" },
		{ "__tsan_init", "ThreadSanitizer (-fsanitize=thread)" },
		{ "__msan_init", "MemorySanitizer (-fsanitize=memory)" },
	};

	for (size_t i = 0; i < sizeof(runtimes) / sizeof(runtimes[0]); i++)
		if (dlsym(RTLD_DEFAULT, runtimes[i].symbol))
			return runtimes[i].name;
	return NULL;
}

/* --backend=sim from outside the simulator: can cases be started under it? */
int pmc__sim_unavailable(struct runner *r)
{
#if defined(__SANITIZE_ADDRESS__)
	(void)sim_env_check;
	(void)sanitizer_here;
	printf("%s: SKIP: --backend=sim cannot run an AddressSanitizer build (valgrind and ASan both manage the address space); use a build without sanitizers\n",
	       r->prog);
	return PMC_EXIT_SKIP;
#else
	const char *sanitizer = sanitizer_here();

	if (sanitizer) {
		printf("%s: SKIP: --backend=sim cannot run this program: it is built with %s, whose runtime and valgrind both manage the address space (valgrind stops it before main); build the suite for sim without sanitizers (a build directory of its own), and keep the sanitizer build on --backend=perf\n",
		       r->prog, sanitizer);
		return PMC_EXIT_SKIP;
	}
	/* Asked for explicitly, the sim backend's absence is an error, not a
	 * skip: a gate that meant to count on sim must not pass without it. */
	if (!*pmc_sim_valgrind_version()) {
		fprintf(stderr, "%s: --backend=sim needs valgrind, which is not on PATH: install it (Debian: apt-get install valgrind) or run with --backend=perf\n",
			r->prog);
		return PMC_EXIT_ERROR;
	}
	return sim_env_check(r);
#endif
}

/*
 * Read exec_sim_case's request ("case NAME", "repeat N", "strict", "hwdb
 * DIR" lines) into static storage: nothing on the heap before the case.
 */
static int read_request(struct runner *r)
{
	static char text[16384];
	size_t used = 0;
	char *line, *save = NULL;

	for (;;) {
		ssize_t n = read(r->request_fd, text + used, sizeof(text) - 1 - used);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		used += (size_t)n;
	}
	text[used] = '\0';
	close(r->request_fd);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		if (!strncmp(line, "case ", 5))
			r->inner_case = line + 5;
		else if (!strncmp(line, "repeat ", 7))
			r->repeat = (unsigned)strtoul(line + 7, NULL, 10);
		else if (!strcmp(line, "strict"))
			r->strict = true;
		else if (!strcmp(line, "exact-layout"))
			pmc__layout_per_call = 0;
		else if (!strcmp(line, "functions-rerun"))
			pmc__functions_rerun = true;
		else if (!strncmp(line, "heap-shift ", 11))
			heap_shift = (size_t)strtoul(line + 11, NULL, 10) % 65536;
		else if (!strncmp(line, "hwdb ", 5) && r->nhwdb < PMC_HWDB_MAX_DIRS)
			r->hwdb[r->nhwdb++] = line + 5;
	}
	return r->inner_case ? 0 : -1;
}

/* The process exec_sim_case started: run the one case, hand its result over. */
int pmc__run_inner_case(struct runner *r)
{
	const struct pmc_test_def *d = NULL;
	struct pmc_test_options o;
	struct pmc_error err;
	struct pmc__result res;
	size_t i;
	int rc;

	if (!pmc_sim_active() || r->result_fd < 3 || read_request(r)) {
		fprintf(stderr, "%s: --pmc-request-fd is internal to the sim backend (run a case with --backend=sim --filter=NAME)\n",
			r->prog);
		return PMC_EXIT_USAGE;
	}
	for (i = 0; i < pmc__ncases() && !d; i++) {
		char name[256];

		pmc__full_name(pmc__case(i), name, sizeof(name));
		if (!strcmp(name, r->inner_case))
			d = pmc__case(i);
	}
	if (!d) {
		fprintf(stderr, "%s: the sim backend asked for case %s, which this program does not have\n",
			r->prog, r->inner_case);
		return PMC_EXIT_USAGE;
	}
	pmc__program = r->prog;
	pmc__hwdb_setup(r->hwdb, r->nhwdb, true, &err);
	pmc__effective_options(d, r->repeat, r->timeout, &o);
	/* Calibration of misses: what the case allocates lies elsewhere in
	 * the heap (kept until exit; a gate run allocates nothing here). */
	if (heap_shift) {
		void *volatile moved = malloc(heap_shift);

		(void)moved;
	}
	rc = pmc__run_case(d, &o, PMC_BACKEND_SIM, r->strict, &res) || pmc__case_write_result(r->result_fd, &res);
	pmc__result_release(&res);
	pmc__hwdb_teardown();
	return rc ? PMC_EXIT_ERROR : 0;
}
