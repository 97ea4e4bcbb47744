/* SPDX-License-Identifier: MIT OR GPL-2.0-or-later */
/*
 * The protocol between libpmcheck and pmcheck's valgrind tool: client
 * request numbers and the counters a reading returns.  Shared by both sides
 * (the library is MIT, the tool GPL-2.0-or-later), so it holds constants
 * only.
 */
#ifndef PMCHECK_TOOL_H
#define PMCHECK_TOOL_H

/* The tool's name: valgrind --tool=pmcheck runs pmcheck-<platform>. */
#define PMC_TOOL_NAME "pmcheck"

/* Requests are VG_USERREQ_TOOL_BASE('P','M') + n. */
#define PMC_TOOL_REQ(n) (((unsigned)'P' << 24 | (unsigned)'M' << 16) + (n))

/* HELLO: returns PMC_TOOL_MAGIC | protocol version.  Any other tool (or
 * none) answers the default 0, so this tells the engines apart. */
#define PMC_TOOL_REQ_HELLO PMC_TOOL_REQ(0)
#define PMC_TOOL_MAGIC 0x706d6300u /* "pmc\0" */
#define PMC_TOOL_PROTOCOL 5u
/* The first protocol whose FUNCTIONS file has the callers of the watched
 * functions (cfn= and calls= lines in the callers' rows). */
#define PMC_TOOL_PROTOCOL_CALLERS 5u
/* Protocol 3 (pmcheck 0.5): the models, no per-function costs. */
#define PMC_TOOL_PROTOCOL_MODELS 3u
/* The first protocol with per-function costs (FUNCTIONS); protocol 4
 * wrote each function's calls as received, with no callers. */
#define PMC_TOOL_PROTOCOL_FUNCTIONS 4u
/* Protocol 2 (pmcheck 0.2 to 0.4): no cache or branch-predictor models,
 * PMC_TOOL_NFIXED_2 fixed counters, calls slots after them. */
#define PMC_TOOL_PROTOCOL_OLDEST 2u
#define PMC_TOOL_NFIXED_2 5

/* READ(ULong *buf, UWord n, UWord ended_too, ULong *now): the calling
 * thread's counters, n of them at most, in enum pmc_tool_counter order,
 * calls slots after; with ended_too, plus every thread that has ended
 * (what perf's inherited counters add when a thread exits); and when now
 * is not NULL, CLOCK_MONOTONIC in ns, read by the tool so that no clock
 * code of the program's runs between two readings.  Returns the number
 * written, or (UWord)-1 when buf or now is not writable client memory. */
#define PMC_TOOL_REQ_READ PMC_TOOL_REQ(1)

/* WATCH(const char *path, ULong offset): count entries to the instruction
 * at that file offset of that object (its real path) in every thread,
 * from now on, wherever it is mapped now or later.  Returns the calls slot
 * (its index after the fixed counters), or (UWord)-1 when the table is
 * full or the path is not readable. */
#define PMC_TOOL_REQ_WATCH PMC_TOOL_REQ(2)

/* WHAT: a bit mask of the fixed counters this run instruments
 * (PMC_TOOL_COUNTS_*): a counter left off reads 0 and must not be used. */
#define PMC_TOOL_REQ_WHAT PMC_TOOL_REQ(3)

/* CHILDREN(ULong out[2]): forked children (theirs included) that ended,
 * whose totals inherited READs add, in out[0]; children that exec'd a
 * program, which valgrind does not follow (their work up to the execve
 * is added, the program's is counted nowhere), in out[1].  Returns 0, or
 * (UWord)-1 when the tool does not follow children (no --pmcheck-out). */
#define PMC_TOOL_REQ_CHILDREN PMC_TOOL_REQ(4)

/* FUNCTIONS(char *path, UWord size): write the functions' self costs in
 * the interval the last DUMP_STATS_AT closed (one the DUMP_STATS_AT before
 * it began with pmc_tool_dump.functions set) to a file in callgrind's dump
 * format (an events: line naming the counters this run counts, then ob=,
 * fn= and one cost line per function, and from protocol 5 each call to a
 * watched function as a cfn= and calls= line in its caller's rows: see
 * pmc_fn.c for the definitions),
 * beside the totals file, and its name to path.  Returns 1, or 0 when
 * this run counts no functions (--pmcheck-functions=no, no --pmcheck-out)
 * or path cannot hold the name.  From protocol 4; an older tool, or
 * callgrind, answers the default.  The program makes this request under
 * either engine, so that both run the same instructions. */
#define PMC_TOOL_REQ_FUNCTIONS PMC_TOOL_REQ(5)

/*
 * callgrind's requests (valgrind/callgrind.h) the tool answers too (from
 * protocol 3), so that a program makes the same requests -- executes the
 * same instructions, touches the same memory -- whichever engine counts
 * it, and the cache and branch models of both see the same program:
 * DUMP_STATS_AT(const char *tag, struct pmc_tool_dump *d): callgrind
 *   dumps its counters; the tool writes d->n counters to d->counters
 *   (READ's order, d->ended_too as READ's), CLOCK_MONOTONIC in ns to
 *   d->now_ns and how many it wrote to d->written.
 * START_INSTRUMENTATION, STOP_INSTRUMENTATION: callgrind switches its
 *   instrumentation; the tool its models, as callgrind switches its
 *   instrumentation: each switch empties the caches, the branch predictor
 *   keeps what it learned, and nothing is simulated while they are off.
 *   A run without models (--pmcheck-cache-sim and --pmcheck-branch-sim
 *   both no) ignores them.
 */
#define PMC_TOOL_CG_REQ(n) (((unsigned)'C' << 24 | (unsigned)'T' << 16) + (n))
#define PMC_TOOL_CG_DUMP_STATS_AT PMC_TOOL_CG_REQ(3)
#define PMC_TOOL_CG_START_INSTRUMENTATION PMC_TOOL_CG_REQ(4)
#define PMC_TOOL_CG_STOP_INSTRUMENTATION PMC_TOOL_CG_REQ(5)

struct pmc_tool_dump {
	unsigned long long counters;  /* the address of n counters */
	unsigned long long n;
	unsigned long long ended_too; /* nonzero: threads that ended count too */
	unsigned long long now_ns;
	unsigned long long written;
	/* Protocol 4: nonzero when the program will keep the functions of the
	 * interval this request begins (FUNCTIONS after the next one): only
	 * then does a run counting functions gather them, so that a reading
	 * costs the same otherwise. */
	unsigned long long functions;
};

enum pmc_tool_counter {
	PMC_TOOL_IR = 0, /* guest instructions executed (callgrind's Ir) */
	PMC_TOOL_DR,     /* data reads (Dr) */
	PMC_TOOL_DW,     /* data writes, read-modify-writes included (Dw) */
	PMC_TOOL_BC,     /* conditional branches executed (Bc) */
	PMC_TOOL_BI,     /* indirect branches executed (Bi) */
	/* protocol 3: the models' counters */
	PMC_TOOL_I1MR, /* instruction fetches that missed I1 (I1mr) */
	PMC_TOOL_D1MR, /* data reads that missed D1 (D1mr) */
	PMC_TOOL_D1MW, /* data writes and modifies that missed D1 (D1mw) */
	PMC_TOOL_ILMR, /* instruction fetches that missed I1 and LL (ILmr) */
	PMC_TOOL_DLMR, /* data reads that missed D1 and LL (DLmr) */
	PMC_TOOL_DLMW, /* data writes that missed D1 and LL (DLmw) */
	PMC_TOOL_BCM,  /* conditional branches mispredicted (Bcm) */
	PMC_TOOL_BIM,  /* indirect branches mispredicted (Bim) */
	PMC_TOOL_NFIXED
};

#define PMC_TOOL_COUNTS_MEMORY 1u     /* Dr, Dw */
#define PMC_TOOL_COUNTS_BRANCHES 2u   /* Bc, Bi */
#define PMC_TOOL_COUNTS_CACHE_SIM 4u  /* I1mr, D1mr, D1mw, ILmr, DLmr, DLmw */
#define PMC_TOOL_COUNTS_BRANCH_SIM 8u /* Bcm, Bim */

/* Calls slots a run can watch. */
#define PMC_TOOL_MAX_WATCH 64

/* The totals file the tool writes at each process's exit
 * (--pmcheck-out=FILE, %p expanded): "pmcheck-tool 1", then one
 * "NAME COUNT" line per fixed counter (Ir Dr Dw Bc Bi, and from protocol
 * 3 I1mr D1mr D1mw ILmr DLmr DLmw Bcm Bim: callgrind's names) and one
 * "call SLOT COUNT" line per watch, summed over every thread of the
 * process since it started or was forked. */
#define PMC_TOOL_TOTALS_HEADER "pmcheck-tool 1"

#endif
