/* SPDX-License-Identifier: MIT */
/*
 * The sim backend's supervisor: finding valgrind, the options and the
 * pinned environment every sim run uses, and re-executing a program under
 * the engine choose.c picks (pmcheck's valgrind tool or callgrind).
 *
 * Over 600 lines because re-executing a program under valgrind is one
 * sequence (run_under_valgrind, about 240 lines: the engine, its options,
 * the pinned environment, the logs passed on, the status read back) whose
 * steps share their state; the engine's choice is already choose.c.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#include <pmcheck/reading.h>
#include <pmcheck/sim.h>

#include "tool/pmcheck_tool.h"
#include "sim_api.h"
#include "sim_harness.h"
#include "util/file.h"
#include "util/child.h"




/* ---- re-executing under valgrind ---------------------------------------------------- */

/*
 * glibc picks string and memory functions by the CPU's features (ifunc)
 * and sizes some copy strategies from its cache sizes.  valgrind's
 * synthetic CPUID passes many host features through, so the same program
 * would run different code on different hosts.  Disabling every feature
 * beyond baseline x86-64 and fixing the cache sizes pins the choice.
 * LD_BIND_NOW resolves every PLT entry at start-up, so the first call of a
 * function costs the same as later ones.
 */
static const char *const pinned_env[] = {
	"GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX,-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,"
	"-AVX_Fast_Unaligned_Load,-BMI1,-BMI2,-ERMS,-FSRM,-FMA,-FMA4,-LZCNT,-MOVBE,-POPCNT,"
	"-RTM,-SSE4_1,-SSE4_2,-SSSE3,-XSAVEC,-Prefer_ERMS,-Prefer_FSRM"
	":glibc.cpu.x86_data_cache_size=32768:glibc.cpu.x86_shared_cache_size=8388608"
	":glibc.cpu.x86_non_temporal_threshold=6291456:glibc.cpu.x86_rep_movsb_threshold=2048"
	":glibc.cpu.x86_rep_stosb_threshold=2048",
	"LD_BIND_NOW=1",
	NULL,
};

const char *const *pmc_sim_pinned_env(void)
{
	return pinned_env;
}

/* valgrind's options for every sim run, apart from the dump and log files. */
static const char *const valgrind_options[] = {
	"--tool=callgrind",
	/* The simulated caches: fixed, so results do not depend on the host's. */
	"--cache-sim=yes",
	"--I1=" PMC_SIM_I1,
	"--D1=" PMC_SIM_D1,
	"--LL=" PMC_SIM_LL,
	/* Conditional and indirect branch prediction (Bc/Bcm/Bi/Bim). */
	"--branch-sim=yes",
	/* Only totals are read: no per-instruction costs (line costs stay on:
	 * with both off callgrind prints a notice into the program's stderr). */
	"--dump-instr=no",
	/* Names as the symbol tables give them: calls: are matched on
	 * them in the measured process, where a demangler would allocate;
	 * attribution demangles them afterwards (functions.c). */
	"--demangle=no",
	/* One set of counters for the process, whatever thread counts. */
	"--separate-threads=no",
	/* Count from the start; readings zero the counters themselves. */
	"--collect-atstart=yes",
	/* No banner, and no messages from forked children (every case is one);
	 * but an instruction the simulator cannot decode is said, with its
	 * bytes (--quiet alone hides it: "killed by signal 4" said nothing of
	 * who refused it). */
	"--quiet",
	"--sigill-diagnostics=yes",
	"--child-silent-after-fork=yes",
	/* A program the suite execs is not the code under test. */
	"--trace-children=no",
	NULL,
};

const char *const *pmc_sim_valgrind_options(void)
{
	return valgrind_options;
}


/*
 * Debian's `valgrind` is a shell script that exports a few variables
 * (LD_LIBRARY_PATH, GLIBCXX_FORCE_NEW, ...) and runs "$0.bin"; the shell
 * adds PWD on the way, and reorders the environment.  The measured program
 * would then see the caller's working directory, and code that reads its
 * environment would count differently from one directory to the next
 * (measured: a case that dlopen()s, 933,966 and 934,106 instructions).  So
 * the launcher the script would run is run directly: the program sees
 * exactly the environment pmcheck gives it, plus valgrind's own LD_PRELOAD.
 * Not a script, or not that script: the path as it is.
 */
static void direct_launcher(char *path, size_t size)
{
	char head[4096], bin[PATH_MAX];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	n = read(fd, head, sizeof(head) - 1);
	close(fd);
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return;
	head[n] = '\0';
	if (!strstr(head, "$0.bin") ||
	    snprintf(bin, sizeof(bin), "%s.bin", path) >= (int)sizeof(bin) || access(bin, X_OK))
		return;
	pmc__copy(path, size, bin);
}

static void remove_dir(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;

	if (dh) {
		while ((de = readdir(dh))) {
			char path[PATH_MAX];

			if (de->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
		closedir(dh);
	}
	rmdir(dir);
}

/*
 * valgrind's messages, to the log callback (level 2), minus the ones that
 * say nothing about the run: callgrind reports the host's caches before it
 * applies --I1/--D1/--LL (the dump's "desc:" lines show the geometry that
 * was simulated).
 */
/* Passes valgrind's log on, less its cache-geometry notes; nonzero when
 * it held a stack trace. */
static int pass_on_log(const char *dir)
{
	static const char *const noise[] = {
		"cache found, using its data",
		"specified LL cache:",
		"simulated LL cache:",
		"specified I1 cache:",
		"specified D1 cache:",
		"simulated I1 cache:",
		"simulated D1 cache:",
	};
	DIR *dh = opendir(dir);
	struct dirent *de;
	int trace = 0;

	if (!dh)
		return 0;
	while ((de = readdir(dh))) {
		char path[PATH_MAX], line[1024];
		FILE *f;

		if (strncmp(de->d_name, "valgrind.", 9))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f)) {
			size_t i;

			for (i = 0; i < sizeof(noise) / sizeof(noise[0]); i++)
				if (strstr(line, noise[i]))
					break;
			line[strcspn(line, "\n")] = '\0';
			if (i == sizeof(noise) / sizeof(noise[0]))
				pmc__log(2, "%s", line);
			trace |= strstr(line, "==    at 0x") != NULL;
		}
		fclose(f);
	}
	closedir(dh);
	return trace;
}

/* The variables that steer pmcheck's sim runs (choose.c reads them once),
 * removed from the environment of the program it runs. */
static const char *const sim_settings[] = {
	"PMCHECK_SIM_ENGINE", "PMCHECK_SIM_TOOL_DIR", "PMCHECK_SIM_CHECK_IR", "PMCHECK_SIM_LINE_INFO", NULL,
};

static volatile sig_atomic_t sim_child, sim_signals;

/* Passed on to valgrind; a second one kills it, so that a program that
 * ignores the first still ends, and the dump directory is removed. */
static void forward_signal(int sig)
{
	if (sim_child > 0)
		kill(sim_child, ++sim_signals > 1 ? SIGKILL : sig);
}

/* Sum the program-termination dumps of every process of the run (the
 * command and the children it forked) into totals: 0, or an error. */
struct final_events {
	const struct pmc_event_spec *specs;
	size_t n;
	uint64_t *calls; /* per spec: calls: events' counts, summed over processes */
};

/* One process's totals file, added to totals (and ev->calls): 1 when it
 * was one, 0 when it is not a process's totals, or an error. */
typedef int (*totals_file_fn)(const char *path, const char *name, uint64_t *totals,
			      struct final_events *ev, const int *slot, struct pmc_error *err);

/* callgrind's dump at a process's exit: "cg.PID" (a process's own dumps,
 * a pmcheck suite's, end in ".N"). */
static int add_final_dump(const char *path, const char *name, uint64_t *totals,
			  struct final_events *ev, const int *slot, struct pmc_error *err)
{
	struct pmc_sim_dump d;
	char *text = NULL;
	size_t len = 0;
	int rc;

	(void)slot;
	if (strchr(name + 3, '.'))
		return 0;
	rc = pmc__read_file(path, &text, &len);
	if (rc)
		return pmc__fail(err, rc, path, -1, "cannot read %s: %s", path, strerror(-rc));
	rc = pmc_sim_dump_parse(path, text, len, &d, err);
	for (int c = 0; rc == 0 && c < PMC_SIM_NCOLUMNS; c++)
		totals[c] += d.totals[c];
	for (size_t i = 0; ev && rc == 0 && i < ev->n; i++) {
		unsigned m;
		uint64_t calls;

		if (pmc_sim_columns(&ev->specs[i], &m, NULL) == 0 && (m & PMC_SIM_CALLS_MASK) &&
		    (rc = pmc_sim_dump_calls(path, text, len, &ev->specs[i], &calls, err)) == 0)
			ev->calls[i] += calls;
	}
	free(text);
	return rc ? rc : 1;
}

/* The tool's totals file (--pmcheck-out): ev->calls[i] gets the watch
 * slot[i]'s calls. */
static int add_tool_totals(const char *path, const char *name, uint64_t *totals,
			   struct final_events *ev, const int *slot, struct pmc_error *err)
{
	char line[512];
	int lineno = 0, rc = 0;
	FILE *f = fopen(path, "r");

	(void)name;
	if (!f)
		return pmc__fail(err, -errno, path, -1, "cannot read %s: %s", path, strerror(errno));
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		char word[16];
		unsigned long long v;
		int w;

		line[strcspn(line, "\n")] = '\0';
		if (++lineno == 1) {
			if (strcmp(line, PMC_TOOL_TOTALS_HEADER))
				rc = pmc__fail(err, PMC_E_SYNTAX, path, 1,
					       "%s:1: not a totals file of pmcheck's valgrind tool (\"%s\")", path, line);
			continue;
		}
		if (sscanf(line, "call %d %llu", &w, &v) == 2) {
			for (size_t i = 0; ev && i < ev->n; i++)
				if (slot[i] == w)
					ev->calls[i] += v;
		} else if (sscanf(line, "%15s %llu", word, &v) == 2) {
			/* The tool's names are callgrind's. */
			for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
				if (!strcmp(word, pmc_sim_column_name(c)))
					totals[c] += v;
		} else {
			rc = pmc__fail(err, PMC_E_SYNTAX, path, lineno, "%s:%d: cannot read \"%s\"", path,
				       lineno, line);
		}
	}
	fclose(f);
	if (rc == 0 && lineno == 0)
		rc = pmc__fail(err, PMC_E_SYNTAX, path, 1, "%s: empty (the process was killed while writing it)",
			       path);
	return rc ? rc : 1;
}

/* Sum the totals of every process of the run (the command and the children
 * it forked), the files in dir whose names start with prefix: 0, or an
 * error; who wrote them, for the error when there are none. */
static int sum_totals(const char *dir, const char *prefix, totals_file_fn fn, const char *who,
		      uint64_t totals[PMC_SIM_NCOLUMNS], struct final_events *ev, const int *slot,
		      struct pmc_error *err)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	int rc = 0, found = 0;

	memset(totals, 0, PMC_SIM_NCOLUMNS * sizeof(totals[0]));
	if (!dh)
		return pmc__fail(err, -errno, dir, -1, "cannot read %s: %s", dir, strerror(errno));
	while (rc == 0 && (de = readdir(dh))) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		rc = fn(path, de->d_name, totals, ev, slot, err);
		if (rc > 0) {
			found++;
			rc = 0;
		}
	}
	closedir(dh);
	if (rc == 0 && !found)
		rc = pmc__fail(err, PMC_E_NO_SIM, dir, -1,
			       "%s wrote no totals (the program was killed before it exited, or exec'd another program)",
			       who);
	return rc;
}

/*
 * columns: ~0u for a whole run as it comes (every simulation, counted from
 * the start); else pmc_sim_exec_for's narrower run.
 */
static int run_under_valgrind(char *const argv[], int verbose, unsigned columns,
			       uint64_t *totals, struct final_events *ev, struct pmc_error *err)
{
	char valgrind[PATH_MAX], version[128], dir[] = "/tmp/pmcheck-sim.XXXXXX";
	char outfile[PATH_MAX], logfile[PATH_MAX], exe[PATH_MAX], why[2 * PATH_MAX + 256];
	char env_dir[PATH_MAX], env_version[160], *env[16];
	char *watch[PMC_TOOL_MAX_WATCH];
	int slot[PMC_MAX_EVENTS];
	size_t nwatch = 0;
	bool whole = columns == ~0u, tool, fallback;
	char nofunctions[PATH_MAX + 256] = "";
	const char *vargv[32 + 64 + PMC_TOOL_MAX_WATCH], *engine;
	struct pmc__child c;
	struct sigaction sa = { 0 }, old_int, old_term;
	size_t n = 0, ne = 0, i;
	int status, rc;

	pmc_error_clear(err);
	if (!argv || !argv[0])
		return pmc__fail(err, -EINVAL, "", -1, "pmc_sim_exec: no program");
	if (pmc__find_on_path("valgrind", valgrind, sizeof(valgrind)))
		return pmc__fail(err, PMC_E_NO_SIM, "valgrind", -1,
				 "the sim backend needs valgrind (callgrind), which is not on PATH: install it (apt-get install valgrind) or run with --backend=perf");
	/* Asked once per process (the runner asks for the profile key too). */
	if (pmc__copy(version, sizeof(version), pmc_sim_valgrind_version()) || !version[0])
		return pmc__fail(err, PMC_E_NO_SIM, valgrind, -1,
				 "%s --version failed: the valgrind installation looks broken", valgrind);
	if (pmc__find_on_path(argv[0], exe, sizeof(exe)))
		return pmc__fail(err, -ENOENT, argv[0], -1, "cannot find program \"%s\"", argv[0]);
	/* calls: events of a whole run (pmcheck stat) need callgrind's names
	 * or the tool's watches; the tool counts them itself. */
	engine = pmc_sim_engine_for(columns, why, sizeof(why));
	if (!engine)
		return pmc__fail(err, PMC_E_NO_SIM, "PMCHECK_SIM_ENGINE", -1,
				 "the sim engine asked for cannot be used: %s; use PMCHECK_SIM_ENGINE=callgrind or auto",
				 why);
	tool = !strcmp(engine, "pmcheck");
	/* callgrind counts because the tool could not: the case says why. */
	fallback = !tool && strncmp(why, "callgrind chosen", 16);
	why[strcspn(why, "\n")] = '\0';
	if (tool && snprintf(valgrind, sizeof(valgrind), "%s/valgrind", pmc__sim_tool_dir()) >= (int)sizeof(valgrind))
		return pmc__fail(err, -ENAMETOOLONG, "", -1, "the tool's directory is too long");
	direct_launcher(valgrind, sizeof(valgrind));
	for (size_t i = 0; ev && i < ev->n && i < PMC_MAX_EVENTS; i++) {
		unsigned m;
		char object[PATH_MAX];

		slot[i] = -1;
		if (!tool || pmc_sim_columns(&ev->specs[i], &m, NULL) || !(m & PMC_SIM_CALLS_MASK))
			continue;
		if (!realpath(ev->specs[i].path, object)) {
			int e = errno;

			for (size_t k = 0; k < nwatch; k++)
				free(watch[k]);
			return pmc__fail(err, -e, ev->specs[i].name, -1,
					 "\"%s\": cannot find %s, the object the function lives in: %s",
					 ev->specs[i].name, ev->specs[i].path, strerror(e));
		}
		if (nwatch == PMC_TOOL_MAX_WATCH ||
		    asprintf(&watch[nwatch], "--pmcheck-watch=%llu:%s",
			     (unsigned long long)ev->specs[i].probe_offset, object) < 0)
			continue;
		slot[i] = (int)nwatch++;
	}
	if (!mkdtemp(dir))
		return pmc__fail(err, -errno, dir, -1, "cannot create the sim dump directory: %s",
				 strerror(errno));
	snprintf(outfile, sizeof(outfile), tool ? "--pmcheck-out=%s/pm.%%p" : "--callgrind-out-file=%s/cg.%%p", dir);
	snprintf(logfile, sizeof(logfile), "--log-file=%s/valgrind.%%p.log", dir);

	vargv[n++] = valgrind;
	/* The tool counts the memory accesses and branches of a run only when
	 * asked for (each costs what its additions cost). */
	if (tool) {
		vargv[n++] = "--tool=" PMC_TOOL_NAME;
		vargv[n++] = whole || (columns & ((1u << PMC_SIM_DR) | (1u << PMC_SIM_DW)))
				     ? "--pmcheck-memory=yes"
				     : "--pmcheck-memory=no";
		vargv[n++] = whole || (columns & ((1u << PMC_SIM_BC) | (1u << PMC_SIM_BI)))
				     ? "--pmcheck-branches=yes"
				     : "--pmcheck-branches=no";
		/* The models only when a miss is asked for: without them the
		 * instrumentation is what it was before they existed. */
		if (whole || (columns & PMC__SIM_CACHE_MISSES)) {
			vargv[n++] = "--pmcheck-cache-sim=yes";
			vargv[n++] = "--I1=" PMC_SIM_I1;
			vargv[n++] = "--D1=" PMC_SIM_D1;
			vargv[n++] = "--LL=" PMC_SIM_LL;
		}
		if (whole || (columns & PMC__SIM_BRANCH_MISSES))
			vargv[n++] = "--pmcheck-branch-sim=yes";
		/* As callgrind's instrumentation: from the program's first
		 * sim set on (engine_tool.c switches them on), unless told to
		 * from the start. */
		if (!whole && !(columns & PMC_SIM_FROM_START) &&
		    (columns & (PMC__SIM_CACHE_MISSES | PMC__SIM_BRANCH_MISSES)))
			vargv[n++] = "--pmcheck-models-atstart=no";
		vargv[n++] = "--quiet";
		vargv[n++] = "--sigill-diagnostics=yes";
		vargv[n++] = "--child-silent-after-fork=yes";
		vargv[n++] = "--trace-children=no";
		if (pmc__sim_tool_fault())
			vargv[n++] = pmc__sim_tool_fault();
		if (pmc__sim_tool_asks() & PMC__SIM_ASK_CHECK_IR)
			vargv[n++] = "--pmcheck-check-ir=yes";
		if (pmc__sim_tool_asks() & PMC__SIM_ASK_LINE_INFO)
			vargv[n++] = "--pmcheck-line-info=yes";
		/* Function costs as callgrind names them here: mangled. */
		if (!whole && (columns & PMC_SIM_FUNCTIONS)) {
			unsigned protocol = pmc__sim_tool_protocol_in(pmc__sim_tool_dir());

			/* A calls: event's functions are its callers, which
			 * protocol 4 did not write: callgrind's then. */
			if (protocol >= PMC_TOOL_PROTOCOL_CALLERS ||
			    (protocol >= PMC_TOOL_PROTOCOL_FUNCTIONS && !(columns & PMC_SIM_CALLS_MASK))) {
				vargv[n++] = "--pmcheck-functions=yes";
				vargv[n++] = "--demangle=no";
			} else if (protocol >= PMC_TOOL_PROTOCOL_FUNCTIONS) {
				snprintf(nofunctions, sizeof(nofunctions),
					 "pmcheck's valgrind tool in %s is a build of protocol %u, which counts no callers of calls: functions (protocol %u does)",
					 pmc__sim_tool_dir(), protocol, PMC_TOOL_PROTOCOL_CALLERS);
			} else {
				snprintf(nofunctions, sizeof(nofunctions),
					 "pmcheck's valgrind tool in %s is a build of protocol %u, which counts no function costs (protocol %u does)",
					 pmc__sim_tool_dir(), protocol, PMC_TOOL_PROTOCOL_FUNCTIONS);
			}
		}
		for (i = 0; i < nwatch; i++)
			vargv[n++] = watch[i];
	}
	for (i = 0; !tool && valgrind_options[i]; i++) {
		const char *o = valgrind_options[i];

		/* A narrower run simulates only what its columns need. */
		if (!whole && !strcmp(o, "--cache-sim=yes") && !(columns & PMC_SIM_CACHE_COLUMNS))
			o = "--cache-sim=no";
		if (!whole && !strcmp(o, "--branch-sim=yes") && !(columns & PMC_SIM_BRANCH_COLUMNS))
			o = "--branch-sim=no";
		vargv[n++] = o;
	}
	/* ... and instruments from the program's first sim set on
	 * (pmc__sim_check starts it), unless told to from the start. */
	if (!tool && !whole && !(columns & PMC_SIM_FROM_START))
		vargv[n++] = "--instr-atstart=no";
	if (!whole && (columns & PMC_SIM_OTHER_SCHEDULE))
		vargv[n++] = "--fair-sched=yes";
	/* Dumps go to a private directory, one file per process (%p) and
	 * dump; valgrind's own messages to a log that is filtered afterwards
	 * (pass_on_log), so the program's stderr stays the program's. */
	vargv[n++] = outfile;
	vargv[n++] = logfile;
	vargv[n++] = exe;
	for (i = 1; argv[i] && n < sizeof(vargv) / sizeof(vargv[0]) - 1; i++)
		vargv[n++] = argv[i];
	if (argv[i]) {
		remove_dir(dir);
		for (size_t k = 0; k < nwatch; k++)
			free(watch[k]);
		return pmc__fail(err, -E2BIG, argv[0], -1, "too many arguments for the sim backend");
	}
	vargv[n] = NULL;
	if (verbose) {
		char shown[4096];
		size_t used = pmc__copy(shown, sizeof(shown), "sim:") ? 0 : 4;

		for (i = 0; pinned_env[i] && used < sizeof(shown); i++)
			used += (size_t)snprintf(shown + used, sizeof(shown) - used, " %s", pinned_env[i]);
		for (i = 0; i < n && used < sizeof(shown); i++)
			used += (size_t)snprintf(shown + used, sizeof(shown) - used, " %s", vargv[i]);
		pmc__log(1, "%s", shown);
		pmc__log(1, "sim: engine %s: %s", engine, why);
	}
	snprintf(env_dir, sizeof(env_dir), SIM_ENV_DIR "=%s", dir);
	snprintf(env_version, sizeof(env_version), SIM_ENV_VERSION "=%s", version);
	env[ne++] = env_dir;
	env[ne++] = env_version;
	/* A narrower run says so in a file beside the dumps, not in the
	 * environment: a longer environment costs code that calls getenv(3)
	 * more (libexpat: 24 instructions for two more variables). */
	if (!whole) {
		char run[PATH_MAX];
		FILE *f;

		snprintf(run, sizeof(run), "%s/" SIM_RUN_FILE, dir);
		f = fopen(run, "w");
		if (!f || fprintf(f, "columns %x\n%s%s%s%s%s%s%s",
				  (columns & PMC_SIM_CACHE_COLUMNS ? PMC_SIM_CACHE_COLUMNS : 0) |
					  (columns & PMC_SIM_BRANCH_COLUMNS ? PMC_SIM_BRANCH_COLUMNS : 0) |
					  (1u << PMC_SIM_IR),
				  columns & PMC_SIM_FROM_START ? "" : "instrument deferred\n",
				  fallback ? "fallback " : "", fallback ? why : "", fallback ? "\n" : "",
				  nofunctions[0] ? "nofunctions " : "", nofunctions,
				  nofunctions[0] ? "\n" : "") < 0 ||
		    fclose(f)) {
			if (f)
				fclose(f);
			remove_dir(dir);
			return pmc__fail(err, -EIO, run, -1, "cannot write %s", run);
		}
	}
	for (i = 0; pinned_env[i]; i++)
		env[ne++] = (char *)pinned_env[i];
	/* pmcheck's own settings, read already, are not the program's: in its
	 * environment they would change what its getenv(3) and string
	 * functions execute (PMCHECK_SIM_LINE_INFO=1 added 575 instructions to
	 * /bin/true). */
	for (i = 0; sim_settings[i]; i++)
		env[ne++] = (char *)sim_settings[i];
	env[ne] = NULL;
	/* ASLR off: addresses, and with them cache-set mapping and hash
	 * orders, repeat from run to run. */
	rc = pmc__child_spawn(&c, (char *const *)vargv, env, false, PMC__CHILD_NO_ASLR);
	for (i = 0; i < nwatch; i++)
		free(watch[i]);
	if (rc) {
		remove_dir(dir);
		return pmc__fail(err, rc, valgrind, -1, "cannot execute %s: %s", valgrind,
				 strerror(-rc));
	}
	sim_signals = 0;
	sim_child = c.pid;
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	pmc__child_reap(&c, true);
	status = c.status;
	sim_child = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (pass_on_log(dir) && tool && !(pmc__sim_tool_asks() & PMC__SIM_ASK_LINE_INFO))
		pmc__log(2, "sim: that stack trace names no files or lines: pmcheck's valgrind tool reads DWARF line tables (of objects built with -g) only with PMCHECK_SIM_LINE_INFO=1");
	if (totals && (rc = tool ? sum_totals(dir, "pm.", add_tool_totals, "pmcheck's valgrind tool",
					      totals, ev, slot, err)
				 : sum_totals(dir, "cg.", add_final_dump, "callgrind", totals, ev, NULL,
					      err)) != 0) {
		remove_dir(dir);
		return rc;
	}
	remove_dir(dir);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int pmc_sim_exec(char *const argv[], int verbose, struct pmc_error *err)
{
	return run_under_valgrind(argv, verbose, ~0u, NULL, NULL, err);
}

int pmc_sim_exec_for(char *const argv[], int verbose, unsigned columns, struct pmc_error *err)
{
	/* ~0u is the whole run; no column past the last means the same. */
	return run_under_valgrind(argv, verbose,
				   columns & (((1u << PMC_SIM_NCOLUMNS) - 1) | PMC_SIM_FROM_START |
					      PMC_SIM_OTHER_SCHEDULE | PMC_SIM_FUNCTIONS),
				   NULL,
				   NULL, err);
}

int pmc_sim_run(char *const argv[], int verbose, uint64_t totals[PMC_SIM_NCOLUMNS],
		struct pmc_error *err)
{
	if (!totals)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_sim_run: NULL totals");
	return run_under_valgrind(argv, verbose, ~0u, totals, NULL, err);
}

int pmc_sim_run_events(char *const argv[], int verbose, const struct pmc_event_spec *specs,
		       size_t n, uint64_t *values, struct pmc_error *err)
{
	uint64_t totals[PMC_SIM_NCOLUMNS], *calls = calloc(n + 1, sizeof(*calls));
	struct final_events ev = { specs, n, calls };
	unsigned columns = PMC_SIM_FROM_START;
	int rc;

	if (!calls)
		return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
	/* The engine and the simulations the events need, counted from the
	 * start: a run of instructions and calls is pmcheck's tool's. */
	for (size_t i = 0; i < n; i++) {
		unsigned m;

		if (pmc_sim_columns(&specs[i], &m, NULL) == 0)
			columns |= m & ((1u << PMC_SIM_NCOLUMNS) - 1);
	}
	rc = run_under_valgrind(argv, verbose, columns, totals, &ev, err);
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		unsigned m = 0;

		values[i] = 0;
		if (pmc_sim_columns(&specs[i], &m, NULL))
			continue;
		if (m & PMC_SIM_CALLS_MASK)
			values[i] = calls[i];
		else
			for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
				if (m & (1u << c))
					values[i] += totals[c];
	}
	free(calls);
	return rc;
}
