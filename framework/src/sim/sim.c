/* SPDX-License-Identifier: MIT */
/*
 * The sim backend: mapping events onto callgrind's columns, parsing
 * callgrind's dumps, and reading a region's totals back from its dumps.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
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

#include <pmcheck/counters.h>
#include <pmcheck/sim.h>

#include "sim_int.h"

static const char *const column_names[PMC_SIM_NCOLUMNS] = {
	"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bc", "Bcm", "Bi", "Bim",
};

const char *pmc_sim_column_name(unsigned column)
{
	return column < PMC_SIM_NCOLUMNS ? column_names[column] : NULL;
}

int pmc__sim_column_of(const char *name, size_t len)
{
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
		if (strlen(column_names[c]) == len && !strncmp(column_names[c], name, len))
			return (int)c;
	return -1;
}

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

/* ---- dump files --------------------------------------------------------------------- */

int pmc__sim_events_line(const char *q, const char *e, int *map, int max)
{
	int n = 0;

	while (q < e) {
		const char *w;

		while (q < e && (*q == ' ' || *q == '\t'))
			q++;
		w = q;
		while (q < e && *q != ' ' && *q != '\t' && *q != '\r')
			q++;
		if (q == w)
			break;
		if (n == max)
			return -1;
		map[n++] = pmc__sim_column_of(w, (size_t)(q - w));
	}
	return n;
}

static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl : end;
}

int pmc_sim_dump_parse(const char *name, const char *text, size_t len, struct pmc_sim_dump *out,
		       struct pmc_error *err)
{
	const char *p = text, *end = text + len;
	int map[64], nevents = -1, line = 0, have_totals = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *e = line_end(p, end);
		size_t n = (size_t)(e - p);

		line++;
		if (n > 6 && !strncmp(p, "desc: ", 6)) {
			if (n > 15 && !strncmp(p + 6, "Trigger: ", 9))
				snprintf(out->trigger, sizeof(out->trigger), "%.*s", (int)(n - 15),
					 p + 15);
			else if (memmem(p, n, " cache: ", 8)) {
				size_t used = strlen(out->caches);

				snprintf(out->caches + used, sizeof(out->caches) - used, "%s%.*s",
					 used ? "; " : "", (int)(n - 6), p + 6);
			}
		} else if (n >= 7 && !strncmp(p, "events:", 7)) {
			nevents = pmc__sim_events_line(p + 7, e, map, 64);
			if (nevents < 0)
				return pmc__fail(err, PMC_E_SYNTAX, name, line,
						 "%s:%d: more than %zu events on the events: line",
						 name, line, sizeof(map) / sizeof(map[0]));
			for (int k = 0; k < nevents; k++)
				if (map[k] >= 0)
					out->present |= 1u << map[k];
		} else if (n >= 7 && !strncmp(p, "totals:", 7)) {
			const char *q = p + 7;
			int k = 0;

			if (nevents < 0)
				return pmc__fail(err, PMC_E_SYNTAX, name, line,
						 "%s:%d: totals: before the events: line", name, line);
			while (q < e) {
				char *stop;
				unsigned long long v;

				while (q < e && (*q == ' ' || *q == '\t' || *q == '\r'))
					q++;
				if (q == e)
					break;
				if (*q < '0' || *q > '9')
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: expected a count in totals:, found \"%.*s\"",
							 name, line, (int)(e - q), q);
				errno = 0;
				v = strtoull(q, &stop, 10);
				if (errno)
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: count out of range in totals:", name, line);
				if (k >= nevents)
					return pmc__fail(err, PMC_E_SYNTAX, name, line,
							 "%s:%d: totals: has more figures than the %d events named",
							 name, line, nevents);
				if (map[k] >= 0)
					out->totals[map[k]] = v;
				k++;
				q = stop;
			}
			/* Fewer figures than events: callgrind omits trailing zeros. */
			have_totals = 1;
		}
		p = e < end ? e + 1 : end;
	}
	if (nevents < 0)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s: no events: line (not a callgrind dump?)", name);
	if (!have_totals)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s: no totals: line (a truncated callgrind dump?)", name);
	return 0;
}

/* ---- being under the simulator ---------------------------------------------------- */

int pmc_sim_active(void)
{
	return RUNNING_ON_VALGRIND && getenv(SIM_ENV_DIR) != NULL;
}

/*
 * Counting state shared by every sim set of the process: callgrind numbers
 * its dumps per process (1, 2, ...), restarting in a forked child, and one
 * dump zeroes the counters for everyone, so every set sees every interval.
 */
static struct {
	pid_t pid;
	unsigned part;       /* dumps this process has made */
	uint64_t total[PMC_SIM_NCOLUMNS];
	char tag[64];        /* trigger name of the next dump */
	char pending[PATH_MAX]; /* the last reading's dump, deleted at the next */
} sim_state;

static void next_tag(void)
{
	snprintf(sim_state.tag, sizeof(sim_state.tag), "pmcheck-%ld-%u", (long)sim_state.pid,
		 sim_state.part + 1);
}

static void sim_state_for_this_process(void)
{
	pid_t pid = getpid();

	if (sim_state.pid != pid) {
		memset(&sim_state, 0, sizeof(sim_state));
		sim_state.pid = pid;
		next_tag();
	}
}


/* Parse, check the trigger, delete: the dump this process just made. */
static int take_dump(const char *path, struct pmc_sim_dump *d, struct pmc_error *err)
{
	char want[96], *text = NULL;
	size_t len = 0;
	int rc;

	rc = pmc__read_file(path, &text, &len);
	if (rc)
		return rc;
	rc = pmc_sim_dump_parse(path, text, len, d, err);
	if (rc == 0) {
		snprintf(want, sizeof(want), "Client Request: %s", sim_state.tag);
		if (strcmp(d->trigger, want))
			rc = -ESTALE;
		else /* calls: events count from the same dump */
			rc = pmc__sim_calls_count(path, text, len, err);
	}
	free(text);
	if (rc)
		return rc;
	/* Kept until the next reading, for pmc_sim_claim_dump (attribution);
	 * deleting it then is work the next reading's zeroing discards. */
	if (sim_state.pending[0])
		unlink(sim_state.pending);
	snprintf(sim_state.pending, sizeof(sim_state.pending), "%s", path);
	return 0;
}

int pmc_sim_claim_dump(char *path, size_t size)
{
	if (!sim_state.pending[0] || sim_state.pid != getpid())
		return -ENOENT;
	if (pmc__copy(path, size, sim_state.pending))
		return PMC_E_TOO_LONG;
	sim_state.pending[0] = '\0';
	return 0;
}

/* The file is <dir>/cg.<pid>.<part>; if callgrind numbered it otherwise
 * (another dump in the program, e.g. the user's own), find it by trigger. */
static int collect_dump(struct pmc_sim_dump *d, struct pmc_error *err)
{
	const char *dir = getenv(SIM_ENV_DIR);
	char path[PATH_MAX], prefix[64];
	struct dirent *de;
	DIR *dh;
	int rc;

	snprintf(path, sizeof(path), "%s/cg.%ld.%u", dir, (long)sim_state.pid, sim_state.part);
	rc = take_dump(path, d, err);
	if (rc == 0 || (rc != -ENOENT && rc != -ESTALE))
		return rc;
	snprintf(prefix, sizeof(prefix), "cg.%ld.", (long)sim_state.pid);
	dh = opendir(dir);
	if (!dh)
		return pmc__fail(err, -errno, dir, -1, "sim: cannot read the dump directory %s: %s",
				 dir, strerror(errno));
	rc = -ENOENT;
	while ((de = readdir(dh))) {
		if (strncmp(de->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		rc = take_dump(path, d, err);
		if (rc == 0) {
			sim_state.part = (unsigned)strtoul(de->d_name + strlen(prefix), NULL, 10);
			break;
		}
		if (rc != -ESTALE && rc != -ENOENT)
			break;
	}
	closedir(dh);
	if (rc == -ENOENT || rc == -ESTALE)
		rc = pmc__fail(err, PMC_E_SIM, dir, -1,
			       "sim: callgrind wrote no dump named \"%s\" into %s (is the program running under the sim backend's valgrind command?)",
			       sim_state.tag, dir);
	return rc;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The run pmc_sim_exec_for started: the columns simulated (all when not
 * narrowed) and whether instrumentation waits for the first set.  Read
 * once per process. */
static struct {
	int read;
	unsigned columns;
	int deferred;
} sim_run;

static void read_sim_run(void)
{
	const char *dir = getenv(SIM_ENV_DIR);
	char path[PATH_MAX], line[128];
	FILE *f;

	if (sim_run.read)
		return;
	sim_run.read = 1;
	sim_run.columns = ~0u;
	if (!dir || snprintf(path, sizeof(path), "%s/" SIM_RUN_FILE, dir) >= (int)sizeof(path) ||
	    !(f = fopen(path, "r")))
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned m;

		if (sscanf(line, "columns %x", &m) == 1)
			sim_run.columns = m | (1u << PMC_SIM_IR);
		else if (!strncmp(line, "instrument deferred", 19))
			sim_run.deferred = 1;
	}
	fclose(f);
}

static int instrumenting; /* deferred instrumentation started */

void pmc_sim_pause(void)
{
	if (instrumenting && RUNNING_ON_VALGRIND) {
		CALLGRIND_STOP_INSTRUMENTATION;
		instrumenting = 0;
	}
}

int pmc__sim_check(unsigned mask, const char *name, struct pmc_error *err)
{
	unsigned missing;

	if (!RUNNING_ON_VALGRIND)
		return pmc__fail(err, PMC_E_NO_SIM, "", -1,
				 "the sim backend counts only under valgrind's callgrind: run the suite with --backend=sim, or the program with `pmcheck sim -- PROGRAM`");
	if (!getenv(SIM_ENV_DIR))
		return pmc__fail(err, PMC_E_NO_SIM, "", -1,
				 "running under valgrind, but not as the sim backend starts it (no " SIM_ENV_DIR "): use --backend=sim or `pmcheck sim -- PROGRAM` rather than calling valgrind yourself");
	read_sim_run();
	missing = mask & ~sim_run.columns & ((1u << PMC_SIM_NCOLUMNS) - 1);
	if (missing)
		return pmc__fail(err, PMC_E_UNSUPPORTED, name ? name : "", -1,
				 "\"%s\" needs callgrind's %s simulation, which this run left off: the runner turns each simulation on from the events the case names in .events, and an event added at run time (pmc_test_add_event) is not among them; name an event that needs it in .events",
				 name ? name : "?", missing & PMC_SIM_CACHE_COLUMNS ? "cache" : "branch");
	sim_state_for_this_process();
	/* Instrumentation from the first set on: what ran before (start-up,
	 * the case's set-up) was not measured and ran at valgrind's plain
	 * speed.  The simulated caches start empty here. */
	if (!instrumenting && sim_run.deferred) {
		CALLGRIND_START_INSTRUMENTATION;
		instrumenting = 1;
	}
	return 0;
}

/*
 * One reading: dump (callgrind stops counting the interval here), parse,
 * zero (callgrind starts the next interval here).  Everything between the
 * two requests -- file I/O, parsing, this function's bookkeeping -- is in
 * no interval at all.  The values are the running sums of all intervals,
 * so two readings difference like any counter.
 */
int pmc__sim_read(const unsigned *masks, size_t n, uint64_t t0, struct pmc_reading *r,
		  struct pmc_error *err)
{
	struct pmc_sim_dump d;
	uint64_t t;
	int rc;

	CALLGRIND_DUMP_STATS_AT(sim_state.tag);
	sim_state_for_this_process();
	sim_state.part++;
	rc = collect_dump(&d, err);
	if (rc == 0)
		for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
			sim_state.total[c] += d.totals[c];
	next_tag();
	r->n = n;
	t = now_ns() - t0 + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;

		if (masks[i] & PMC_SIM_CALLS_MASK)
			v = pmc__sim_calls_total(masks[i] & 0xffff);
		else
			for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
				if (masks[i] & (1u << c))
					v += sim_state.total[c];
		r->c[i].value = v;
		/* Simulated counters are never multiplexed. */
		r->c[i].enabled_ns = t;
		r->c[i].running_ns = t;
	}
	CALLGRIND_ZERO_STATS;
	return rc;
}

int pmc__under_valgrind(void)
{
	return RUNNING_ON_VALGRIND ? 1 : 0;
}
