/* SPDX-License-Identifier: MIT */
/*
 * The sim backend as the counting core sees it: events mapped onto
 * callgrind's columns, and the engine that counts this process (pmcheck's
 * valgrind tool when the program runs under it, else callgrind) asked for
 * checks, calls: watches and readings.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <signal.h>
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

#include <pmcheck/sim.h>

#include "engine.h"
#include "tool/pmcheck_tool.h"
#include "sim_api.h"

#define COL(c) (1u << PMC_SIM_##c)

/* ---- event mapping ---------------------------------------------------------------- */

static unsigned hardware_columns(uint64_t config)
{
	switch (config) {
	case PERF_COUNT_HW_INSTRUCTIONS:
		return COL(IR);
	case PERF_COUNT_HW_BRANCH_INSTRUCTIONS:
		return COL(BC) | COL(BI);
	case PERF_COUNT_HW_BRANCH_MISSES:
		return COL(BCM) | COL(BIM);
	/* perf's cache-references / cache-misses count last-level cache
	 * traffic: in callgrind's model every L1 miss is an LL access. */
	case PERF_COUNT_HW_CACHE_REFERENCES:
		return COL(I1MR) | COL(D1MR) | COL(D1MW);
	case PERF_COUNT_HW_CACHE_MISSES:
		return COL(ILMR) | COL(DLMR) | COL(DLMW);
	default:
		return 0;
	}
}

static unsigned cache_columns(uint64_t config)
{
	unsigned id = config & 0xff, op = (config >> 8) & 0xff, res = (config >> 16) & 0xff;
	int miss = res == PERF_COUNT_HW_CACHE_RESULT_MISS;

	switch (id) {
	case PERF_COUNT_HW_CACHE_L1D:
		if (op == PERF_COUNT_HW_CACHE_OP_READ)
			return miss ? COL(D1MR) : COL(DR);
		if (op == PERF_COUNT_HW_CACHE_OP_WRITE)
			return miss ? COL(D1MW) : COL(DW);
		return 0;
	case PERF_COUNT_HW_CACHE_L1I:
		if (op == PERF_COUNT_HW_CACHE_OP_READ)
			return miss ? COL(I1MR) : COL(IR);
		return 0;
	case PERF_COUNT_HW_CACHE_LL:
		if (op == PERF_COUNT_HW_CACHE_OP_READ)
			return miss ? COL(ILMR) | COL(DLMR) : COL(I1MR) | COL(D1MR);
		if (op == PERF_COUNT_HW_CACHE_OP_WRITE)
			return miss ? COL(DLMW) : COL(D1MW);
		return 0;
	case PERF_COUNT_HW_CACHE_BPU:
		if (op == PERF_COUNT_HW_CACHE_OP_READ)
			return miss ? COL(BCM) | COL(BIM) : COL(BC) | COL(BI);
		return 0;
	default:
		return 0; /* TLBs and NUMA nodes are not simulated */
	}
}

int pmc_sim_columns(const struct pmc_event_spec *s, unsigned *mask, struct pmc_error *err)
{
	unsigned m = 0;
	const char *why = NULL;

	switch (s->kind) {
	case PMC_KIND_SIM:
		m = (unsigned)s->config;
		break;
	case PMC_KIND_HARDWARE:
		m = hardware_columns(s->config);
		if (!m)
			why = "callgrind simulates instructions, caches and branches, not cycles or stalls";
		break;
	case PMC_KIND_CACHE:
		m = cache_columns(s->config);
		if (!m)
			why = "callgrind simulates L1, last-level and branch-predictor reads and writes; TLBs, NUMA nodes and prefetches have no simulated equivalent";
		break;
	case PMC_KIND_SOFTWARE:
		why = "software events count the kernel's view of the process, which under valgrind is valgrind's own activity";
		break;
	case PMC_KIND_BREAKPOINT:
		why = "valgrind runs translated copies of the code, so debug registers do not see the program's own accesses the way hardware would";
		break;
	case PMC_KIND_UPROBE:
		/* Not a column: callgrind's count of calls to the function. */
		m = PMC_SIM_CALLS_MASK;
		break;
	case PMC_KIND_TRACEPOINT:
		why = "tracepoints count the kernel's events for the process, which under valgrind are valgrind's own";
		break;
	default:
		why = "raw, PMU-qualified and libpfm4 events are specific to a real PMU";
		break;
	}
	if (m && s->exclude_user) {
		m = 0;
		why = "callgrind sees user-space code only; kernel-only (:k) counts do not exist under simulation";
	}
	if (!m)
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot count \"%s\" on the sim backend: %s; count it with --backend=perf, or use instructions, branches, branch-misses, cache-references, cache-misses, L1-dcache-*, L1-icache-*, LLC-*, branch-loads*, calls:FUNC or sim:Ir/Dr/Dw/I1mr/D1mr/D1mw/ILmr/DLmr/DLmw/Bc/Bcm/Bi/Bim",
				 s->name, why);
	*mask = m;
	return 0;
}

/* ---- being under the simulator ---------------------------------------------------- */

int pmc_sim_active(void)
{
	return RUNNING_ON_VALGRIND && getenv(SIM_ENV_DIR) != NULL;
}

int pmc__under_valgrind(void)
{
	return RUNNING_ON_VALGRIND ? 1 : 0;
}

static struct pmc__sim_run sim_run;

const struct pmc__sim_run *pmc__sim_run(void)
{
	static int read_once;
	const char *dir = getenv(SIM_ENV_DIR);
	char path[PATH_MAX], text[2048], *line, *save = NULL;
	ssize_t n;
	int fd;

	if (read_once)
		return &sim_run;
	read_once = 1;
	sim_run.columns = ~0u;
	/* read(2) into the stack, not stdio: a FILE is heap memory, and the
	 * heap the measured code starts from is part of what it counts. */
	if (!dir || snprintf(path, sizeof(path), "%s/" SIM_RUN_FILE, dir) >= (int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return &sim_run;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return &sim_run;
	text[n] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end;

		/* strtoul, not sscanf: every line of code the case process runs
		 * first is translated by valgrind, and sscanf's are many. */
		if (!strncmp(line, "columns ", 8)) {
			unsigned long m = strtoul(line + 8, &end, 16);

			if (end != line + 8)
				sim_run.columns = (unsigned)m | (1u << PMC_SIM_IR);
		}
		if (!strncmp(line, "instrument deferred", 19))
			sim_run.deferred = 1;
		else if (!strncmp(line, "fallback ", 9))
			snprintf(sim_run.fallback, sizeof(sim_run.fallback), "%s", line + 9);
		else if (!strncmp(line, "nofunctions ", 12))
			snprintf(sim_run.nofunctions, sizeof(sim_run.nofunctions), "%s", line + 12);
	}
	return &sim_run;
}

/* Which counter of a reading (the tool's order) each column is. */
const int pmc__sim_counter[PMC_SIM_NCOLUMNS] = {
	[PMC_SIM_IR] = PMC_TOOL_IR,     [PMC_SIM_DR] = PMC_TOOL_DR,     [PMC_SIM_DW] = PMC_TOOL_DW,
	[PMC_SIM_I1MR] = PMC_TOOL_I1MR, [PMC_SIM_D1MR] = PMC_TOOL_D1MR, [PMC_SIM_D1MW] = PMC_TOOL_D1MW,
	[PMC_SIM_ILMR] = PMC_TOOL_ILMR, [PMC_SIM_DLMR] = PMC_TOOL_DLMR, [PMC_SIM_DLMW] = PMC_TOOL_DLMW,
	[PMC_SIM_BC] = PMC_TOOL_BC,     [PMC_SIM_BCM] = PMC_TOOL_BCM,   [PMC_SIM_BI] = PMC_TOOL_BI,
	[PMC_SIM_BIM] = PMC_TOOL_BIM,
};
