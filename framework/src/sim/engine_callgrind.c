/* SPDX-License-Identifier: MIT */
/*
 * The callgrind engine: a reading dumps callgrind's counters (a client
 * request), parses the dump's totals and calls, and zeroes the counters.
 * Used for cache and branch misses, for attribution (the dumps name
 * functions), and wherever pmcheck's own tool is not built or not usable.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>

#include <pmcheck/counters.h>
#include <pmcheck/sim.h>

#include "engine.h"
#include "sim_int.h"

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


/*
 * Parse, check the trigger, delete: the dump this process just made.  The
 * file is mapped, not read into the heap: the measured code allocates too,
 * and a heap that a reading has changed gives the next region other
 * allocations to make (measured on libexpat's chunked parse: 12
 * instructions from one repetition to the next).
 */
static int take_dump(const char *path, struct pmc_sim_dump *d, struct pmc_error *err)
{
	char want[96];
	struct stat st;
	void *text;
	int fd, rc;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size <= 0) {
		rc = st.st_size == 0 ? -ESTALE : -errno;
		close(fd);
		return rc;
	}
	text = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (text == MAP_FAILED)
		return -errno;
	rc = pmc_sim_dump_parse(path, text, (size_t)st.st_size, d, err);
	if (rc == 0) {
		snprintf(want, sizeof(want), "Client Request: %s", sim_state.tag);
		if (strcmp(d->trigger, want))
			rc = -ESTALE;
		else /* calls: events count from the same dump */
			rc = pmc__cg_calls_count(path, text, (size_t)st.st_size, err);
		if (rc == 0) {
			char handler[256];
			int n = pmc__cg_uncalled(text, (size_t)st.st_size, sim_state.part == 1,
						 handler, sizeof(handler));

			if (n > 0)
				rc = pmc__fail(err, PMC_E_UNSUPPORTED, handler, -1,
					       "sim: %s%s ran in this region without being called (a signal handler entered by delivery), and callgrind leaves a handler's cost out of its totals and records no call for it, so no figure of this region would be what ran; count it with pmcheck's valgrind tool (--sim-engine=pmcheck or auto), which counts handlers",
					       handler[0] ? handler : "a function",
					       n > 1 ? " (and others)" : "");
		}
	}
	munmap(text, (size_t)st.st_size);
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
 * (another dump in the program, e.g. the user's own), find it by trigger.
 * The directory is read with getdents64(2) into the stack: opendir(3)
 * would allocate on the heap the measured code allocates from. */
static int collect_dump(struct pmc_sim_dump *d, struct pmc_error *err)
{
	const char *dir = getenv(SIM_ENV_DIR);
	char path[PATH_MAX], prefix[64];
	char buf[8192] __attribute__((aligned(8)));
	long got;
	int rc, fd;

	snprintf(path, sizeof(path), "%s/cg.%ld.%u", dir, (long)sim_state.pid, sim_state.part);
	rc = take_dump(path, d, err);
	if (rc == 0 || (rc != -ENOENT && rc != -ESTALE))
		return rc;
	snprintf(prefix, sizeof(prefix), "cg.%ld.", (long)sim_state.pid);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return pmc__fail(err, -errno, dir, -1, "sim: cannot read the dump directory %s: %s",
				 dir, strerror(errno));
	rc = -ENOENT;
	while (rc == -ENOENT || rc == -ESTALE) {
		got = syscall(SYS_getdents64, fd, buf, sizeof(buf));
		if (got <= 0)
			break;
		for (long at = 0; at < got;) {
			const struct linux_dirent64 {
				uint64_t d_ino;
				int64_t d_off;
				unsigned short d_reclen;
				unsigned char d_type;
				char d_name[];
			} *de = (const void *)(buf + at);

			at += de->d_reclen;
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
	}
	close(fd);
	if (rc == -ENOENT || rc == -ESTALE)
		rc = pmc__fail(err, PMC_E_SIM, dir, -1,
			       "sim: callgrind wrote no dump named \"%s\" into %s (is the program running under the sim backend's valgrind command?)",
			       sim_state.tag, dir);
	return rc;
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
	char path[PATH_MAX], text[256], *line, *save = NULL;
	ssize_t n;
	int fd;

	if (sim_run.read)
		return;
	sim_run.read = 1;
	sim_run.columns = ~0u;
	/* read(2) into the stack, not stdio: a FILE is heap memory, and the
	 * heap the measured code starts from is part of what it counts
	 * (pmcheck's tool engine allocates nothing either). */
	if (!dir || snprintf(path, sizeof(path), "%s/" SIM_RUN_FILE, dir) >= (int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n <= 0)
		return;
	text[n] = '\0';
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned m;

		if (sscanf(line, "columns %x", &m) == 1)
			sim_run.columns = m | (1u << PMC_SIM_IR);
		else if (!strncmp(line, "instrument deferred", 19))
			sim_run.deferred = 1;
	}
}

static int instrumenting; /* deferred instrumentation started */

static void callgrind_pause(void)
{
	if (instrumenting && RUNNING_ON_VALGRIND) {
		CALLGRIND_STOP_INSTRUMENTATION;
		instrumenting = 0;
	}
}

static int callgrind_check(unsigned mask, const char *name, struct pmc_error *err)
{
	unsigned missing;

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
static int callgrind_read(const unsigned *masks, size_t n, uint64_t t0, unsigned flags,
			  struct pmc_reading *r, struct pmc_error *err)
{
	struct pmc_sim_dump d;
	uint64_t t;
	int rc;

	(void)flags;
	CALLGRIND_DUMP_STATS_AT(sim_state.tag);
	sim_state_for_this_process();
	sim_state.part++;
	rc = collect_dump(&d, err);
	if (rc == 0)
		for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
			sim_state.total[c] += d.totals[c];
	next_tag();
	r->n = n;
	t = pmc__sim_now_ns() - t0 + 1;
	for (size_t i = 0; i < n; i++) {
		uint64_t v = 0;

		if (masks[i] & PMC_SIM_CALLS_MASK)
			v = pmc__cg_calls_total(masks[i] & 0xffff);
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


const struct pmc__sim_engine pmc__sim_callgrind = {
	.name = "callgrind",
	.check = callgrind_check,
	.watch = pmc__cg_calls_watch,
	.read = callgrind_read,
	.pause = callgrind_pause,
};
