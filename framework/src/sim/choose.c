/* SPDX-License-Identifier: MIT */
/*
 * Choosing the sim engine of a run: pmcheck's valgrind tool where it is
 * built, matches the valgrind on PATH and has what the run's events need
 * (a build of protocol 2 has no cache or branch models), callgrind
 * otherwise, and why -- for the run's log, its results and `pmcheck probe`.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/sim.h>

#include "tool/pmcheck_tool.h"
#include "sim_api.h"
#include "sim_harness.h"
#include "util/child.h"
#include "util/file.h"

/*
 * "valgrind-3.19.0" from `valgrind --version`, run with an empty
 * environment: the version is part of a sim budget's key, and what the
 * run's environment makes the loader or valgrind say (LD_PRELOAD of a
 * missing object, LD_DEBUG=statistics, VALGRIND_OPTS) must not become it.
 * The cases' valgrind runs without those too (sim_case.c's canonical
 * environment).  The answer is taken only in the shape valgrind prints it:
 * one line, "valgrind-" and a version of digits, letters, '.', '-' and '_'.
 */
static int valgrind_version(const char *valgrind, char *out, size_t size)
{
	static const char shape[] = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-_";
	char *argv[] = { (char *)valgrind, (char *)"--version", NULL };
	/* VALGRIND_LIB is kept: it says which valgrind's tools the launcher
	 * runs (a valgrind unpacked beside the system's), so it is the
	 * version the cases will run under. */
	char lib[PATH_MAX + 16], *env[2] = { NULL, NULL };
	struct pmc__child c;
	size_t len;
	long n;
	int rc;

	if (getenv("VALGRIND_LIB") && (size_t)snprintf(lib, sizeof(lib), "VALGRIND_LIB=%s",
						      getenv("VALGRIND_LIB")) < sizeof(lib))
		env[0] = lib;
	rc = pmc__child_spawn(&c, argv, env, true, PMC__CHILD_CLEAR_ENV);

	if (rc)
		return rc;
	n = pmc__child_read(&c, out, size, pmc__child_now() + 30);
	pmc__child_kill(&c);
	if (n <= 0 || !WIFEXITED(c.status) || WEXITSTATUS(c.status))
		return -EIO;
	len = strcspn(out, "\n");
	if (out[len] == '\n' && out[len + 1])
		return -EIO;
	out[len] = '\0';
	if (strncmp(out, "valgrind-", 9) || !out[9] || strspn(out + 9, shape) != len - 9)
		return -EIO;
	return 0;
}

const char *pmc_sim_valgrind_version(void)
{
	static char asked[128];
	static int tried;
	const char *v = pmc_sim_active() ? getenv(SIM_ENV_VERSION) : NULL;
	char valgrind[PATH_MAX];

	if (v)
		return v;
	/* Outside the simulator (the runner that starts one valgrind per
	 * case): the valgrind on PATH is the one the cases will run under. */
	if (!tried) {
		tried = 1;
		if (pmc__find_on_path("valgrind", valgrind, sizeof(valgrind)) ||
		    valgrind_version(valgrind, asked, sizeof(asked)))
			asked[0] = '\0';
	}
	return asked;
}

static const char *engine_preferred; /* pmc_sim_engine_prefer's, or NULL */
/* PMCHECK_FAULT_CHECKS names sim-tool: the tool miscounts on purpose (the
 * known-work check's test); sim-tool-old: it answers as a build of
 * protocol 2 would, without models; sim-tool-3: as a build of protocol 3,
 * without per-function costs; sim-tool-ir: it instruments with IR that
 * VEX's check refuses (PMCHECK_SIM_CHECK_IR's test).  Latched with the
 * tool's directory. */
static const char *tool_fault;
/* What the environment asks of the tool beyond counting (PMC__SIM_ASK_*,
 * sim_api.h), and the first of its variables set to neither 0 nor 1 (its
 * name and value, refused by pmc_sim_engine_prefer).  Latched with the
 * tool's directory. */
static unsigned tool_asks;
static const char *ask_bad_name;
static char ask_bad_value[64];

static unsigned tool_ask(const char *name, unsigned bit)
{
	const char *v = getenv(name);

	if (!v || !*v || !strcmp(v, "0"))
		return 0;
	if (!strcmp(v, "1"))
		return bit;
	if (!ask_bad_name) {
		ask_bad_name = name;
		snprintf(ask_bad_value, sizeof(ask_bad_value), "%s", v);
	}
	return 0;
}

int pmc_sim_engine_prefer(const char *name, struct pmc_error *err)
{
	pmc__sim_tool_dir();
	if (ask_bad_name)
		return pmc__fail(err, -EINVAL, ask_bad_name, -1, "%s=\"%s\": use 1 (on) or 0 (off)",
				 ask_bad_name, ask_bad_value);
	if (!name)
		name = getenv("PMCHECK_SIM_ENGINE");
	if (!name || !*name || !strcmp(name, "auto")) {
		engine_preferred = "auto";
		return 0;
	}
	if (!strcmp(name, "pmcheck") || !strcmp(name, "callgrind")) {
		engine_preferred = !strcmp(name, "pmcheck") ? "pmcheck" : "callgrind";
		return 0;
	}
	return pmc__fail(err, -EINVAL, name, -1,
			 "unknown sim engine \"%s\" (PMCHECK_SIM_ENGINE or --sim-engine): use auto, pmcheck (pmcheck's valgrind tool) or callgrind",
			 name);
}

/*
 * The tool's directory: the build tree's for a library (or a program
 * linking it statically) in the build tree; beside an installed library,
 * wherever its prefix was put (lib/../libexec/pmcheck); else the prefix
 * configured.  PMCHECK_SIM_TOOL_DIR overrides them.  NULL when the tool
 * was not built.
 */
static const char *find_tool_dir(void)
{
	const char *dir = getenv("PMCHECK_SIM_TOOL_DIR");

	if (dir && *dir)
		return dir;
#ifdef PMCHECK_SIM_TOOL_INSTALL_DIR
	{
		static char beside[PATH_MAX];
		Dl_info info;
		size_t n = strlen(PMCHECK_BUILD_DIR);
		const char *slash;

		if (!dladdr((void *)&find_tool_dir, &info) || !info.dli_fname)
			return PMCHECK_SIM_TOOL_INSTALL_DIR;
		if (!strncmp(info.dli_fname, PMCHECK_BUILD_DIR, n) && info.dli_fname[n] == '/')
			return PMCHECK_SIM_TOOL_BUILD_DIR;
		slash = strrchr(info.dli_fname, '/');
		if (slash &&
		    snprintf(beside, sizeof(beside), "%.*s/%s/" PMC_TOOL_NAME "-amd64-linux",
			     (int)(slash - info.dli_fname), info.dli_fname,
			     PMCHECK_SIM_TOOL_FROM_LIBDIR) < (int)sizeof(beside) &&
		    access(beside, X_OK) == 0) {
			static char real[PATH_MAX];

			*strrchr(beside, '/') = '\0';
			/* /lib -> /usr/lib on merged-/usr systems: say the real place. */
			return realpath(beside, real) ? real : beside;
		}
		return PMCHECK_SIM_TOOL_INSTALL_DIR;
	}
#else
	return NULL;
#endif
}

/* The fault switch's names for the tool, and the option each gives it. */
static const struct {
	const char *name, *option;
} tool_faults[] = {
	{ "sim-tool", "--pmcheck-fault=miscount" },
	{ "sim-tool-old", "--pmcheck-fault=old" },
	{ "sim-tool-3", "--pmcheck-fault=protocol3" },
	{ "sim-tool-ir", "--pmcheck-fault=ill-typed-ir" },
	{ NULL, NULL },
};

const char *pmc__sim_fault_name(size_t i)
{
	return i < PMC__COUNT(tool_faults) ? tool_faults[i].name : NULL;
}

/* Is word one of the comma- or space-separated words of list? */
static int fault_named(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *w = list; w && *w; w += strcspn(w, ", ")) {
		w += strspn(w, ", ");
		if (!strncmp(w, word, n) && (w[n] == '\0' || w[n] == ',' || w[n] == ' '))
			return 1;
	}
	return 0;
}

/* Found once, before a runner clears the environment for a case. */
const char *pmc__sim_tool_dir(void)
{
	static char found[PATH_MAX];
	static int looked;

	if (!looked) {
		const char *dir = find_tool_dir();
		const char *faults = getenv("PMCHECK_FAULT_CHECKS");

		looked = 1;
		tool_asks = tool_ask("PMCHECK_SIM_CHECK_IR", PMC__SIM_ASK_CHECK_IR) |
			    tool_ask("PMCHECK_SIM_LINE_INFO", PMC__SIM_ASK_LINE_INFO);
		tool_fault = NULL;
		for (size_t i = 0; tool_faults[i].name && !tool_fault; i++)
			if (fault_named(faults, tool_faults[i].name))
				tool_fault = tool_faults[i].option;
		if (dir && pmc__copy(found, sizeof(found), dir) == 0)
			return found;
		found[0] = '\0';
		return NULL;
	}
	return found[0] ? found : NULL;
}

/* The protocol of the tool in dir, from the file its build wrote beside
 * it; a build of protocol 2 wrote none. */
unsigned pmc__sim_tool_protocol_in(const char *dir)
{
	char path[PATH_MAX], text[16] = "";
	unsigned protocol = PMC_TOOL_PROTOCOL_OLDEST;
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/protocol", dir) >= (int)sizeof(path))
		return protocol;
	f = fopen(path, "r");
	if (f) {
		if (fgets(text, sizeof(text), f))
			protocol = (unsigned)strtoul(text, NULL, 10);
		fclose(f);
	}
	/* A fault that makes the tool answer as an older build says so here
	 * too, as that build's file would. */
	if (tool_fault && !strcmp(tool_fault, "--pmcheck-fault=protocol3") &&
	    protocol > PMC_TOOL_PROTOCOL_MODELS)
		protocol = PMC_TOOL_PROTOCOL_MODELS;
	return protocol;
}

/* 0 when the tool in dir can run under the valgrind on PATH; else why not. */
static int tool_usable(const char *dir, char *why, size_t size)
{
	char path[PATH_MAX], built[128] = "";
	const char *now = pmc_sim_valgrind_version();
	FILE *f;

	if (!dir) {
		snprintf(why, size, "pmcheck's valgrind tool was not built (valgrind's tool headers were missing when pmcheck was configured)");
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/" PMC_TOOL_NAME "-amd64-linux", dir);
	if (access(path, X_OK)) {
		snprintf(why, size, "pmcheck's valgrind tool is not installed (%s: %s)", path, strerror(errno));
		return -ENOENT;
	}
	snprintf(path, sizeof(path), "%s/valgrind-version", dir);
	f = fopen(path, "r");
	if (!f || !fgets(built, sizeof(built), f))
		snprintf(built, sizeof(built), "an unknown valgrind (its valgrind-version file is unreadable)");
	if (f)
		fclose(f);
	built[strcspn(built, "\r\n")] = '\0';
	if (strcmp(built, now)) {
		snprintf(why, size, "pmcheck's valgrind tool was built against %s and valgrind is now %s: rebuild or reinstall pmcheck to use it",
			 built, *now ? now : "missing");
		return -ESTALE;
	}
	return 0;
}

const char *pmc_sim_engine_for(unsigned columns, char *why, size_t size)
{
	const char *pref = engine_preferred;
	const char *dir = pmc__sim_tool_dir();
	char unusable[2 * PATH_MAX + 256];
	unsigned protocol;
	int models;

	if (!pref)
		pref = getenv("PMCHECK_SIM_ENGINE");
	if (!pref || !*pref)
		pref = "auto";
	if (!strcmp(pref, "callgrind")) {
		snprintf(why, size, "callgrind chosen (PMCHECK_SIM_ENGINE=callgrind or --sim-engine)");
		return "callgrind";
	}
	if (tool_usable(dir, unusable, sizeof(unusable))) {
		snprintf(why, size, "%s", unusable);
		return strcmp(pref, "pmcheck") ? "callgrind" : NULL;
	}
	models = columns == ~0u || (columns & (PMC__SIM_CACHE_MISSES | PMC__SIM_BRANCH_MISSES));
	protocol = pmc__sim_tool_protocol_in(dir);
	if (models && protocol < 3) {
		snprintf(why, size, "pmcheck's valgrind tool in %s is a build of protocol %u, which has no cache or branch-predictor model for %s%s",
			 dir, protocol, columns == ~0u ? "a whole run's misses" : "the misses asked for",
			 strcmp(pref, "pmcheck") ? ": callgrind counts them" : "");
		return strcmp(pref, "pmcheck") ? "callgrind" : NULL;
	}
	if (!strcmp(pref, "pmcheck")) {
		snprintf(why, size, "pmcheck's valgrind tool chosen (PMCHECK_SIM_ENGINE=pmcheck or --sim-engine)");
		return "pmcheck";
	}
	if (strcmp(pref, "auto")) {
		snprintf(why, size, "unknown sim engine \"%s\" in PMCHECK_SIM_ENGINE: use auto, pmcheck or callgrind", pref);
		return NULL;
	}
	snprintf(why, size, "pmcheck's valgrind tool (%s/" PMC_TOOL_NAME "-amd64-linux, for %s) counts instructions, loads, stores, branches, calls%s",
		 dir, pmc_sim_valgrind_version(),
		 protocol < 3 ? "; cache and branch misses go to callgrind (this build, of protocol 2, has no models)"
			      : ", and cache and branch misses with its own models of callgrind's caches and predictor");
	return "pmcheck";
}

const char *pmc__sim_tool_fault(void)
{
	pmc__sim_tool_dir();
	return tool_fault;
}

unsigned pmc__sim_tool_asks(void)
{
	pmc__sim_tool_dir();
	return tool_asks;
}
