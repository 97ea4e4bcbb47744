/* SPDX-License-Identifier: MIT */
/*
 * The callgrind engine: a reading dumps callgrind's counters (a client
 * request), and its dump's totals and calls are parsed on the host CPU,
 * unseen by callgrind (lockstep.c).
 * The cross-check of pmcheck's valgrind tool, the engine of attribution
 * (the dumps name functions), and wherever the tool is not built or not
 * usable.
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

#include <pmcheck/sim.h>

#include "engine.h"
#include "sim_api.h"
#include "sim_harness.h"

/* callgrind's name for the next dump; collect renames it after each. */
char pmc__sim_dump_tag[64];

/*
 * Counting state shared by every sim set of the process: callgrind numbers
 * its dumps per process (1, 2, ...), restarting in a forked child, and one
 * dump zeroes the counters for everyone, so every set sees every interval.
 */
static struct {
	pid_t pid;
	unsigned part;       /* dumps this process has made */
	uint64_t total[PMC_SIM_NCOLUMNS];
	char pending[PATH_MAX]; /* the last reading's dump, deleted at the next */
} sim_state;

/* The name of the next dump, in the program's memory: the request that
 * makes it passes it (lockstep.c). */
static void next_tag(void)
{
	snprintf(pmc__sim_dump_tag, sizeof(pmc__sim_dump_tag), "pmcheck-%ld-%u", (long)sim_state.pid,
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
		snprintf(want, sizeof(want), "Client Request: %s", pmc__sim_dump_tag);
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
			       pmc__sim_dump_tag, dir);
	return rc;
}

static int callgrind_init(unsigned *columns, struct pmc_error *err)
{
	(void)err;
	*columns = pmc__sim_run()->columns;
	sim_state_for_this_process();
	return 0;
}

static int callgrind_refuse(unsigned missing, const char *name, struct pmc_error *err)
{
	return pmc__fail(err, PMC_E_UNSUPPORTED, name ? name : "", -1,
			 "\"%s\" needs callgrind's %s simulation, which this run left off: the runner turns each simulation on from the events the case names in .events, and an event added at run time (pmc_test_add_event) is not among them; name an event that needs it in .events",
			 name ? name : "?", missing & PMC_SIM_CACHE_COLUMNS ? "cache" : "branch");
}

/* calls: slots after the tool's fixed counters, as the tool numbers them. */
static int callgrind_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err)
{
	unsigned k;
	int rc = pmc__cg_calls_watch(s, &k, err);

	if (rc == 0 && k >= PMC_TOOL_MAX_WATCH)
		return pmc__fail(err, PMC_E_TOO_MANY, s->name, -1,
				 "\"%s\": more than %d functions counted with calls: in one process on the sim backend",
				 s->name, PMC_TOOL_MAX_WATCH);
	*slot = PMC_TOOL_NFIXED + k;
	return rc;
}

/*
 * After the dump (callgrind stopped counting the interval there, and
 * counts the next from there), on the host CPU: parse it, add it to the
 * totals, name the next.  Nothing here is in any interval, nor seen by
 * callgrind's caches and predictor.  The values are the running sums of
 * all intervals, so two readings difference like any counter.
 */
static int callgrind_collect(struct pmc__sim_exchange *x)
{
	uint64_t *c = (uint64_t *)(uintptr_t)x->dump.counters;
	struct pmc_sim_dump d;
	int rc;

	sim_state_for_this_process();
	sim_state.part++;
	rc = collect_dump(&d, x->err);
	if (rc == 0)
		for (unsigned k = 0; k < PMC_SIM_NCOLUMNS; k++)
			sim_state.total[k] += d.totals[k];
	next_tag();
	for (unsigned k = 0; k < PMC_SIM_NCOLUMNS; k++)
		c[pmc__sim_counter[k]] = sim_state.total[k];
	for (unsigned k = PMC_TOOL_NFIXED; k < x->dump.n; k++)
		c[k] = pmc__cg_calls_total(k - PMC_TOOL_NFIXED);
	x->dump.now_ns = pmc__sim_now_ns();
	return rc;
}

const struct pmc__sim_engine pmc__sim_callgrind = {
	.name = "callgrind",
	.init = callgrind_init,
	.refuse = callgrind_refuse,
	.watch = callgrind_watch,
	.collect = callgrind_collect,
};
