/* SPDX-License-Identifier: MIT */
/*
 * The engine for pmcheck's own valgrind tool (src/sim/tool): the tool adds
 * to per-thread counters inline, and writes the calling thread's counters
 * into the program at a reading's DUMP_STATS_AT request (lockstep.c).  No
 * dump, no file, no parsing: a reading costs about what two system calls
 * do under valgrind.
 *
 * Before its counts decide anything, the tool counts known work in this
 * process (check_known_work): a miscounting tool is an error, never a
 * verdict.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <valgrind/valgrind.h>

#include <pmcheck/sim.h>

#include "engine.h"
#include "tool/pmcheck_tool.h"
#include "sim_api.h"

#define NCOUNTERS (PMC_TOOL_NFIXED + PMC_TOOL_MAX_WATCH)

static struct {
	unsigned protocol; /* the tool's (HELLO), or 0: another tool */
	unsigned what;     /* PMC_TOOL_COUNTS_* of this run */
	unsigned nread;    /* counters the known-work check reads */
} tool;

unsigned pmc__sim_tool_protocol(void)
{
	unsigned long hello = VALGRIND_DO_CLIENT_REQUEST_EXPR(0, PMC_TOOL_REQ_HELLO, 0, 0, 0, 0, 0);
	unsigned protocol = hello & 0xff;

	/* A build of protocol 2 counts what it always counted; that it has
	 * no model is tool_refuse's to say. */
	if ((hello & ~0xffUL) != PMC_TOOL_MAGIC || protocol < PMC_TOOL_PROTOCOL_OLDEST ||
	    protocol > PMC_TOOL_PROTOCOL)
		return 0;
	tool.protocol = protocol;
	return protocol;
}

int pmc__sim_tool_read(uint64_t *c, unsigned n, int ended_too, uint64_t *now)
{
	unsigned long got = VALGRIND_DO_CLIENT_REQUEST_EXPR(0, PMC_TOOL_REQ_READ, c, n, ended_too, now, 0);

	return got == n ? 0 : -EIO;
}

static int tool_watch_at(const char *path, uint64_t offset)
{
	unsigned long slot = VALGRIND_DO_CLIENT_REQUEST_EXPR((unsigned long)-1, PMC_TOOL_REQ_WATCH,
							     path, offset, 0, 0, 0);

	if (slot == (unsigned long)-1 || slot >= NCOUNTERS)
		return -1;
	if (slot + 1 > tool.nread)
		tool.nread = (unsigned)slot + 1;
	return (int)slot;
}

/* ---- known work ------------------------------------------------------------------ */

#if defined(__x86_64__)
/*
 * n iterations (n >= 1) of: a load, a store, an indirect call of a bare
 * return, a decrement and a conditional branch back.  Per iteration, by
 * the definitions the tool shares with callgrind: 6 instructions, 2 reads
 * (the load, the return address), 2 writes (the store, the call's push),
 * 1 conditional branch, 1 indirect branch (the call; returns are not
 * counted).  The stack pointer steps over the red zone first: the caller's
 * leaf code may keep data there, and the call pushes.
 */
__attribute__((noinline, used)) static void known_work(uint64_t *cells, unsigned n)
{
	__asm__ volatile("sub $128, %%rsp\n\t"
			 "lea 1f(%%rip), %%rdx\n\t"
			 "jmp 2f\n"
			 "1:\tret\n"
			 "2:\tmov (%[c]), %%rax\n\t"
			 "mov %%rax, 8(%[c])\n\t"
			 "call *%%rdx\n\t"
			 "dec %[n]\n\t"
			 "jnz 2b\n\t"
			 "add $128, %%rsp\n\t"
			 : [n] "+r"(n)
			 : [c] "r"(cells)
			 : "rax", "rdx", "memory", "cc");
}
#define KNOWN_PER_ITERATION { 6, 2, 2, 1, 1 }
#endif

/* The object known_work lives in and its file offset, for a calls watch. */
#if defined(__x86_64__)
static int known_work_site(char *path, size_t size, uint64_t *offset)
{
	Dl_info info;
	struct link_map *map = NULL;
	uintptr_t at = (uintptr_t)&known_work;
	char exe[PATH_MAX];

	if (!dladdr1((void *)at, &info, (void **)&map, RTLD_DL_LINKMAP) || !map)
		return -ENOENT;
	if (info.dli_fname && strchr(info.dli_fname, '/')) {
		if (!realpath(info.dli_fname, path))
			return -errno;
	} else {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		if (n <= 0)
			return -ENOENT;
		exe[n] = '\0';
		if ((size_t)n >= size)
			return -ENAMETOOLONG;
		memcpy(path, exe, (size_t)n + 1);
	}
	{
		const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)info.dli_fbase;
		const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);

		for (unsigned i = 0; i < eh->e_phnum; i++) {
			uintptr_t start = map->l_addr + ph[i].p_vaddr;

			if (ph[i].p_type == PT_LOAD && at >= start && at < start + ph[i].p_memsz) {
				*offset = at - start + ph[i].p_offset;
				return 0;
			}
		}
	}
	return -ENOENT;
}
#endif

static int known_work_failed(struct pmc_error *err, const char *what)
{
	return pmc__fail(err, PMC_E_SIM, "", -1,
			 "pmcheck's valgrind tool miscounted known work (%s), so its counts decide nothing in this run; run with PMCHECK_SIM_ENGINE=callgrind and report this with `pmcheck probe` output",
			 what);
}

/*
 * Count known_work with two iteration counts through the same code: the
 * difference is exact by construction, whatever the readings around it
 * cost.  Then watch known_work's entry and call it 64 times.
 */
static int check_known_work(struct pmc_error *err)
{
#if defined(__x86_64__)
	static const uint64_t per[PMC_TOOL_NFIXED_2] = KNOWN_PER_ITERATION;
	static const char *const names[PMC_TOOL_NFIXED_2] = {
		"instructions", "data reads", "data writes", "conditional branches",
		"indirect branches",
	};
	static const unsigned counted[PMC_TOOL_NFIXED_2] = {
		0, PMC_TOOL_COUNTS_MEMORY, PMC_TOOL_COUNTS_MEMORY, PMC_TOOL_COUNTS_BRANCHES,
		PMC_TOOL_COUNTS_BRANCHES,
	};
	enum { FEW = 16, MANY = 16 + 1024, CALLS = 64 };
	uint64_t cells[2] = { 1, 0 }, a[2][NCOUNTERS], b[2][NCOUNTERS];
	unsigned iterations[2] = { FEW, MANY };
	char path[PATH_MAX], what[256];
	uint64_t offset = 0;
	int slot;

	for (int k = 0; k < 2; k++) {
		if (pmc__sim_tool_read(a[k], PMC_TOOL_NFIXED, 0, NULL))
			return known_work_failed(err, "a reading failed");
		known_work(cells, iterations[k]);
		if (pmc__sim_tool_read(b[k], PMC_TOOL_NFIXED, 0, NULL))
			return known_work_failed(err, "a reading failed");
	}
	/* The misses' models are not checked here: in a deferred run they
	 * are off until this check has passed. */
	for (int c = 0; c < PMC_TOOL_NFIXED_2; c++) {
		uint64_t got = (b[1][c] - a[1][c]) - (b[0][c] - a[0][c]);
		uint64_t want = per[c] * (MANY - FEW);

		if (counted[c] && !(tool.what & counted[c]))
			continue;
		if (got != want) {
			snprintf(what, sizeof(what), "%u more iterations of a loop of known %s counted %llu, not %llu",
				 MANY - FEW, names[c], (unsigned long long)got, (unsigned long long)want);
			return known_work_failed(err, what);
		}
	}
	/* calls: an entry address, watched after the code was translated. */
	if (known_work_site(path, sizeof(path), &offset))
		return 0; /* no ELF view of ourselves: calls are checked where used */
	slot = tool_watch_at(path, offset);
	if (slot < 0)
		return known_work_failed(err, "it refused to watch a function");
	if (pmc__sim_tool_read(a[0], tool.nread, 0, NULL))
		return known_work_failed(err, "a reading failed");
	for (int i = 0; i < CALLS; i++)
		known_work(cells, 1);
	if (pmc__sim_tool_read(b[0], tool.nread, 0, NULL))
		return known_work_failed(err, "a reading failed");
	if (b[0][slot] - a[0][slot] != CALLS) {
		snprintf(what, sizeof(what), "%d calls of a watched function counted %llu", CALLS,
			 (unsigned long long)(b[0][slot] - a[0][slot]));
		return known_work_failed(err, what);
	}
	return 0;
#else
	return known_work_failed(err, "no known-work loop for this architecture");
#endif
}

/* ---- the engine -------------------------------------------------------------------- */

/* The columns a run of the tool counts. */
static unsigned tool_columns(void)
{
	unsigned m = 1u << PMC_SIM_IR;

	if (tool.what & PMC_TOOL_COUNTS_MEMORY)
		m |= (1u << PMC_SIM_DR) | (1u << PMC_SIM_DW);
	if (tool.what & PMC_TOOL_COUNTS_BRANCHES)
		m |= (1u << PMC_SIM_BC) | (1u << PMC_SIM_BI);
	if (tool.protocol >= 3 && (tool.what & PMC_TOOL_COUNTS_CACHE_SIM))
		m |= (1u << PMC_SIM_I1MR) | (1u << PMC_SIM_D1MR) | (1u << PMC_SIM_D1MW) |
		     (1u << PMC_SIM_ILMR) | (1u << PMC_SIM_DLMR) | (1u << PMC_SIM_DLMW);
	if (tool.protocol >= 3 && (tool.what & PMC_TOOL_COUNTS_BRANCH_SIM))
		m |= (1u << PMC_SIM_BCM) | (1u << PMC_SIM_BIM);
	return m;
}

static int tool_init(unsigned *columns, struct pmc_error *err)
{
	int rc;

	tool.what = (unsigned)VALGRIND_DO_CLIENT_REQUEST_EXPR(0, PMC_TOOL_REQ_WHAT, 0, 0, 0, 0, 0);
	if (tool.nread < PMC_TOOL_NFIXED)
		tool.nread = PMC_TOOL_NFIXED;
	rc = check_known_work(err);
	if (rc)
		return rc;
	*columns = tool_columns();
	return 0;
}

static int tool_refuse(unsigned missing, const char *name, struct pmc_error *err)
{
	const unsigned misses = PMC_SIM_CACHE_COLUMNS & ~((1u << PMC_SIM_DR) | (1u << PMC_SIM_DW));

	if (tool.protocol < 3 && (missing & (misses | (1u << PMC_SIM_BCM) | (1u << PMC_SIM_BIM))))
		return pmc__fail(err, PMC_E_UNSUPPORTED, name ? name : "", -1,
				 "\"%s\" needs callgrind's cache or branch-predictor simulation, and this run counts with a build of pmcheck's valgrind tool of protocol %u, which has neither: rebuild or reinstall pmcheck, or run with PMCHECK_SIM_ENGINE=callgrind",
				 name ? name : "?", tool.protocol);
	return pmc__fail(err, PMC_E_UNSUPPORTED, name ? name : "", -1,
			 "\"%s\" needs %s, which this run's valgrind tool was started without counting: the runner turns each on from the events the case names in .events, and an event added at run time (pmc_test_add_event) is not among them; name it in .events",
			 name ? name : "?",
			 missing & ((1u << PMC_SIM_DR) | (1u << PMC_SIM_DW)) ? "data reads and writes"
			 : missing & ((1u << PMC_SIM_BC) | (1u << PMC_SIM_BI)) ? "branches"
			 : missing & misses ? "the cache model"
					    : "the branch-predictor model");
}

static int tool_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err)
{
	char object[PATH_MAX];
	int k;

	if (!realpath(s->path, object))
		return pmc__fail(err, -errno, s->name, -1,
				 "\"%s\": cannot find %s, the object the function lives in: %s", s->name,
				 s->path, strerror(errno));
	k = tool_watch_at(object, s->probe_offset);
	if (k < 0)
		return pmc__fail(err, PMC_E_TOO_MANY, s->name, -1,
				 "\"%s\": more than %d functions counted with calls: in one process on the sim backend",
				 s->name, PMC_TOOL_MAX_WATCH);
	*slot = (unsigned)k;
	return 0;
}

/* The tool wrote the counters at the request: nothing is outside the
 * count, and the code around the request is the same in every reading, so
 * the empty region's overhead, subtracted, leaves the region's own. */
static int tool_collect(struct pmc__sim_exchange *x)
{
	/* No glibc here (lockstep.c): the words are the program's to write. */
	return x->dump.written == x->dump.n ? 0 : -EIO;
}

static int tool_children(uint64_t *ended, uint64_t *execed)
{
	uint64_t out[2] = { 0, 0 };
	unsigned long rc = VALGRIND_DO_CLIENT_REQUEST_EXPR(1, PMC_TOOL_REQ_CHILDREN, out, 0, 0, 0, 0);

	if (rc)
		return -ENOTSUP;
	*ended = out[0];
	*execed = out[1];
	return 0;
}

const struct pmc__sim_engine pmc__sim_tool = {
	.name = "pmcheck",
	.init = tool_init,
	.refuse = tool_refuse,
	.watch = tool_watch,
	.collect = tool_collect,
	.children = tool_children,
};
