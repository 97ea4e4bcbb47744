/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: counts what callgrind counts for pmcheck's sim
 * backend -- instructions (Ir), data reads and writes (Dr, Dw), conditional
 * and indirect branches (Bc, Bi), entries to watched functions, and, when
 * asked, the misses of callgrind's cache and branch-predictor models --
 * with inline additions to counters in memory, per thread, and answers a
 * reading with a client request, and, when asked, each function's self
 * costs per interval (pmc_fn.c).  No call graph.  Forked children
 * count in processes of their own and report their totals back (see
 * "forked children").  The tool is this file and, each calling only the
 * ones after it, pmc_instrument.c, pmc_branch.c, pmc_cache.c, pmc_fn.c,
 * pmc_watch.c, pmc_ir.c and pmc_state.c (pmc_tool_int.h).
 *
 * Copyright (C) 2026 the pmcheck authors.  This program is free software:
 * it links valgrind's core (GPL-2.0-or-later) and is distributed under the
 * same licence; see COPYING in this directory.
 *
 * The definitions are callgrind's (valgrind 3.19, callgrind/main.c and
 * sim.c, cachegrind/cg_branchpred.c), so that the two engines agree on the
 * same binary:
 * - Ir: a superblock left through an exit counts the instructions up to
 *   and including the one the exit belongs to; left at its end, all of
 *   them.  A rep-prefixed instruction is a superblock that loops on
 *   itself, so each iteration (and the final test) counts once, as in
 *   callgrind.  Chasing and unrolling are off, as callgrind has them.
 * - Dr/Dw: one per load and store statement; a load followed directly by a
 *   store of the same size to the same address expression in the same
 *   instruction is a modify, which counts as one Dw only; guarded loads and
 *   stores count when their guard holds; a dirty helper's memory effect
 *   counts as a load, a store or a modify; a CAS is a modify.
 * - Bc: every exit of kind Boring, Call or Ret reached (taken or not).
 * - Bi: a superblock that ends in a Boring or Call jump to a computed
 *   address (returns are left out, as callgrind's predictor does).
 * Statements before the first IMark (VEX's self-check preamble) count
 * nothing.
 *
 * Cache misses (--pmcheck-cache-sim=yes; callgrind's simulation as
 * pmcheck runs it: no write-back, no prefetching, no cache-use metrics):
 * - Three caches, each SIZE,WAYS,LINE (--I1, --D1, --LL): a block is an
 *   address divided by the line size, its set the block modulo the number
 *   of sets, and each set keeps WAYS blocks in order of use.  A hit makes
 *   the block the most recently used; a miss brings it in as such and the
 *   least recently used one leaves (LRU).
 * - What reaches them: every instruction executed is fetched from I1 (its
 *   address and length; an instruction VEX cannot decode, 1 byte); every
 *   Dr reads D1 and every Dw (a modify too) writes it, with the size of
 *   the loaded or stored type (a two-word CAS twice its word; a dirty
 *   helper's access capped at the smallest line size).  Reads and writes
 *   are the same to a cache: a write that misses brings its line in
 *   (write-allocate), and no line is ever dirty.
 * - An access over two lines touches the first, then the second, and is
 *   one access: one miss when either missed, none when both hit.
 * - An L1 miss sends the same access to LL, which I1 and D1 share; an L1
 *   hit does not reach LL.  Nothing else ties the levels: a line LL loses
 *   stays in L1 (inclusive only as far as the traffic makes it).
 * - I1mr counts the fetches that missed I1, ILmr those that missed LL
 *   too; D1mr/DLmr the reads, D1mw/DLmw the writes and modifies.
 * - Order: accesses are simulated in the program's order, in callgrind's
 *   batches: they wait and are simulated before each exit, at the
 *   superblock's end, before a guarded access (itself simulated at once,
 *   when its guard holds), after a load-linked, and when 16 wait; a fault
 *   inside a superblock leaves the waiting ones unsimulated, as there.
 * - State: one for every thread; a forked child goes on from a copy.  It
 *   starts empty.  With --pmcheck-models-atstart=no the models wait for
 *   the program's START_INSTRUMENTATION request (callgrind's request and
 *   --instr-atstart=no); each switch on or off empties the caches.
 * - Refused at start, as valgrind refuses them: sizes, ways and lines not
 *   positive, a number of sets or a line size not a power of two, lines
 *   under 16 bytes, a cache of one line or less, more ways than lines, a
 *   smallest line smaller than the largest register.
 * Branch mispredictions (--pmcheck-branch-sim=yes; cachegrind's
 * predictors, which callgrind uses):
 * - Bcm: each Bc consults 16384 two-bit counters (0 to 3, from 0), the
 *   one at (the last 7 outcomes << 7) | (the low 7 bits of the address
 *   of the instruction the exit belongs to).  It predicts taken from 2; a
 *   prediction unlike the outcome is a miss.  The counter then moves one
 *   towards 3 (taken) or 0, and the outcome enters the history.  The
 *   outcome is the exit's condition, inverted for the superblock's last
 *   exit when the last instruction's last exit goes to the next
 *   instruction (callgrind's guess that VEX inverted the branch).
 * - Bim: each Bi compares its target with the last target recorded at
 *   the low 9 bits of the address of the superblock's last instruction
 *   (512 entries, from 0); unlike is a miss; the target is recorded.
 * - The state is never emptied (a switch of the models keeps it); while
 *   the models are off it learns nothing.  One for every thread.
 *
 * Over 600 lines because valgrind registers one tool's callbacks in one
 * pre_clo_init, and a quarter of this file is the comments on the protocol
 * and on forked children; instrumenting, watching, the cache, branch and
 * function costs are already files of their own.
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_clreq.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_transtab.h"
#include "pub_tool_vki.h"
#include "pub_tool_vkiscnums.h"

#include "pmc_tool_int.h"

/* ---- options ---------------------------------------------------------------------- */

/* The options the instrumentation follows are pmc_state.c's. */
static const HChar *clo_out;
/* Fault injection for pmcheck's tests (miscount and ill-typed-ir are
 * pmc_state.c's): --pmcheck-fault=old answers as a build of protocol 2
 * (no models) would. */
static Bool clo_old;
/* --pmcheck-fault=protocol3: answers as a build of protocol 3 (models, no
 * per-function costs) would. */
static Bool clo_protocol3;
static Bool clo_models_atstart = True;
/* --pmcheck-watch=OFFSET:PATH, collected until post_clo_init. */
static const HChar *clo_watch[PMC_TOOL_MAX_WATCH];
static Int clo_nwatch;

/*
 * --pmcheck-check-ir=yes: VEX's type and flatness checks of each
 * superblock's IR, of the guest's as VEX's front end made it and of the
 * instrumented one after its clean-up pass.  VEX runs both on every
 * translation, and translating is much of a short run (the instrumented
 * IR's check was a tenth of it); valgrind's authors took a third check
 * out of production runs for that cost.  They can only catch a bug in
 * VEX's front end or in this tool's instrumentation, never a guest's, and
 * they change no count: a run either stops or counts the same.  So they
 * are on for pmcheck's own tests (PMCHECK_SIM_CHECK_IR=1 in the test
 * presets, sim.engines.check_ir) and callgrind, the cross-check, keeps
 * them; a user's run skips them.  The link wraps VEX's function
 * (-Wl,--wrap=sanityCheckIRSB, CMakeLists.txt).
 */
static Bool clo_check_ir;

void __real_sanityCheckIRSB(const IRSB *bb, const HChar *caller, Bool require_flatness, IRType gwt);
void __wrap_sanityCheckIRSB(const IRSB *bb, const HChar *caller, Bool require_flatness, IRType gwt);
void __wrap_sanityCheckIRSB(const IRSB *bb, const HChar *caller, Bool require_flatness, IRType gwt)
{
	if (clo_check_ir)
		__real_sanityCheckIRSB(bb, caller, require_flatness, gwt);
}

/*
 * --pmcheck-line-info=yes: read each object's DWARF line tables.  Nothing
 * this tool counts or names needs them: function costs are named from the
 * symbol tables, as callgrind's are.  valgrind reads them for every object
 * a process maps (decompressing and sorting them, for libc's detached
 * debug file too), and on a short run that was a quarter of the run.
 * Without them a stack trace valgrind prints (a case that crashes) names
 * functions and objects but not files and lines.  The link wraps the
 * core's line-table reader (-Wl,--wrap, CMakeLists.txt); the wrapper
 * below passes its arguments on untouched, whatever valgrind's version
 * makes them, or returns.
 */
Bool pmc_clo_line_info;
__asm__(".text\n"
	".globl __wrap_vgModuleLocal_read_debuginfo_dwarf3\n"
	".type __wrap_vgModuleLocal_read_debuginfo_dwarf3, @function\n"
	"__wrap_vgModuleLocal_read_debuginfo_dwarf3:\n"
	"\tcmpb $0, pmc_clo_line_info(%rip)\n"
	"\tjne __real_vgModuleLocal_read_debuginfo_dwarf3\n"
	"\tret\n"
	".size __wrap_vgModuleLocal_read_debuginfo_dwarf3, .-__wrap_vgModuleLocal_read_debuginfo_dwarf3\n");

/* ---- counters ------------------------------------------------------------------------ */

/* The running thread's counters are pmc_live (pmc_state.c). */
static ThreadId live_tid = VG_INVALID_THREADID;
/* Every other thread's, swapped in and out when the scheduler switches. */
static ULong (*parked)[NCOUNTERS];
/* Threads that exited, and the counts a forked child started from. */
static ULong exited[NCOUNTERS], at_fork[NCOUNTERS];

static void switch_thread(ThreadId tid, ULong blocks_done)
{
	(void)blocks_done;
	if (tid == live_tid)
		return;
	if (live_tid != VG_INVALID_THREADID)
		VG_(memcpy)(parked[live_tid], pmc_live, sizeof(pmc_live));
	VG_(memcpy)(pmc_live, parked[tid], sizeof(pmc_live));
	if (pmc_functions)
		pmc_fn_switch(live_tid, tid);
	live_tid = tid;
}

static void thread_created(ThreadId parent, ThreadId child)
{
	(void)parent;
	if (child == live_tid)
		VG_(memset)(pmc_live, 0, sizeof(pmc_live));
	VG_(memset)(parked[child], 0, sizeof(parked[child]));
	if (pmc_functions)
		pmc_fn_thread_new(child, child == live_tid);
}

static void thread_exiting(ThreadId tid)
{
	ULong *c = tid == live_tid ? pmc_live : parked[tid];

	for (Int i = 0; i < NCOUNTERS; i++)
		exited[i] += c[i];
	VG_(memset)(c, 0, sizeof(pmc_live));
}

/* The process's totals since it started or was forked: every thread. */
static void process_totals(ULong *total)
{
	for (Int c = 0; c < NCOUNTERS; c++) {
		total[c] = exited[c] + pmc_live[c] - at_fork[c];
		for (ThreadId t = 1; t < VG_N_THREADS; t++)
			if (t != live_tid)
				total[c] += parked[t][c];
	}
}

/* ---- forked children --------------------------------------------------------------- */

/*
 * What perf's inherited counters add for a child process, the tool adds
 * too: valgrind follows a fork, so the child counts in a process of its
 * own, and at its end appends one record of its totals since the fork to
 * a file beside the totals files (O_APPEND: one write each, whole).  A
 * child that execs a program hands valgrind's process over to one it
 * does not follow (--trace-children=no): its record, written before the
 * execve, says so, and that program's work is counted nowhere.  The first
 * process reads the records for inherited readings.  The file is opened
 * for each write and read, so that no descriptor of the tool's sits among
 * the program's.
 */
struct child_record {
	ULong magic;  /* PMC_TOOL_CHILD_MAGIC */
	ULong execed; /* 1: it then ran a program no one counts */
	ULong c[NCOUNTERS];
};

#define PMC_TOOL_CHILD_MAGIC 0x706d632d6b696400ULL /* "pmc-kid\0" */

static HChar *kids_path;     /* NULL: no --pmcheck-out, children not added */
static HChar *out_dir;       /* --pmcheck-out's directory, or NULL */
static Bool is_child;        /* this process is a forked child */
static Off64T kids_read;     /* the first process: bytes of records taken */
static ULong kids[NCOUNTERS];
static ULong kids_ended, kids_execed;

static void child_report(Bool execed)
{
	struct child_record rec;
	SysRes sr;

	if (!kids_path || !is_child)
		return;
	rec.magic = PMC_TOOL_CHILD_MAGIC;
	rec.execed = execed;
	process_totals(rec.c);
	sr = VG_(open)(kids_path, VKI_O_WRONLY | VKI_O_APPEND | VKI_O_CREAT, 0600);
	if (sr_isError(sr)) {
		VG_(umsg)("pmcheck: cannot write this child's totals to %s\n", kids_path);
		return;
	}
	VG_(write)((Int)sr_Res(sr), &rec, sizeof(rec));
	VG_(close)((Int)sr_Res(sr));
	/* An execve that fails goes on here: only what follows counts again. */
	for (Int c = 0; c < NCOUNTERS; c++)
		at_fork[c] += rec.c[c];
}

/* The first process: take the records children appended since last time. */
static void children_take(void)
{
	struct child_record rec;
	SysRes sr;
	Int fd;

	if (!kids_path || is_child)
		return;
	sr = VG_(open)(kids_path, VKI_O_RDONLY, 0);
	if (sr_isError(sr))
		return; /* no child has ended */
	fd = (Int)sr_Res(sr);
	if (VG_(lseek)(fd, kids_read, VKI_SEEK_SET) == kids_read)
		while (VG_(read)(fd, &rec, sizeof(rec)) == (Int)sizeof(rec) &&
		       rec.magic == PMC_TOOL_CHILD_MAGIC) {
			for (Int c = 0; c < NCOUNTERS; c++)
				kids[c] += rec.c[c];
			kids_ended += !rec.execed;
			kids_execed += rec.execed != 0;
			kids_read += sizeof(rec);
		}
	VG_(close)(fd);
}

/* In a forked child only the forking thread goes on: the process's totals
 * start from what it had counted. */
static void forked_child(ThreadId tid)
{
	for (ThreadId t = 1; t < VG_N_THREADS; t++)
		if (t != tid)
			VG_(memset)(parked[t], 0, sizeof(parked[t]));
	VG_(memset)(exited, 0, sizeof(exited));
	switch_thread(tid, 0);
	VG_(memcpy)(at_fork, pmc_live, sizeof(pmc_live));
	is_child = True;
}

static void pre_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nargs)
{
	(void)args;
	(void)nargs;
	if (syscallno == __NR_execve || syscallno == __NR_execveat) {
		switch_thread(tid, 0);
		child_report(True);
	}
}

static void post_syscall(ThreadId tid, UInt syscallno, UWord *args, UInt nargs, SysRes res)
{
	(void)tid;
	(void)syscallno;
	(void)args;
	(void)nargs;
	(void)res;
}

/* ---- client requests --------------------------------------------------------------- */

/* As callgrind switches its instrumentation: the caches start empty, and
 * code translated before is translated again, with or without the
 * models' code. */
static void switch_models(Bool on)
{
	if (on == pmc_models_active)
		return;
	pmc_models_active = on;
	pmc_cache_clear();
	VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "pmcheck");
}

/* The fixed counters this run counts, as a mask of 1 << counter. */
static UInt counted(void)
{
	UInt m = 1u << PMC_TOOL_IR;

	if (pmc_clo_memory)
		m |= (1u << PMC_TOOL_DR) | (1u << PMC_TOOL_DW);
	if (pmc_clo_branches)
		m |= (1u << PMC_TOOL_BC) | (1u << PMC_TOOL_BI);
	if (pmc_cache_sim)
		m |= (1u << PMC_TOOL_I1MR) | (1u << PMC_TOOL_D1MR) | (1u << PMC_TOOL_D1MW) |
		     (1u << PMC_TOOL_ILMR) | (1u << PMC_TOOL_DLMR) | (1u << PMC_TOOL_DLMW);
	if (pmc_branch_sim)
		m |= (1u << PMC_TOOL_BCM) | (1u << PMC_TOOL_BIM);
	return m;
}

/* READ's work: n counters to buf (client memory), now to *now_ns. */
static UWord read_counters(ThreadId tid, Addr buf, UWord n, UWord ended_too, Addr now_ns)
{
	if (n > NCOUNTERS)
		n = NCOUNTERS;
	switch_thread(tid, 0);
	if ((n && !VG_(am_is_valid_for_client)(buf, n * sizeof(ULong), VKI_PROT_WRITE)) ||
	    (now_ns && !VG_(am_is_valid_for_client)(now_ns, sizeof(ULong), VKI_PROT_WRITE)))
		return (UWord)-1;
	if (ended_too)
		children_take();
	for (UWord i = 0; i < n; i++)
		((ULong *)buf)[i] = pmc_live[i] + (ended_too ? exited[i] + kids[i] : 0);
	if (now_ns) {
		struct vki_timespec ts;

		VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
		*(ULong *)now_ns = (ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec;
	}
	return n;
}

/* callgrind's requests, as pmcheck_tool.h says the tool answers them. */
static Bool callgrind_request(ThreadId tid, UWord *arg, UWord *ret)
{
	struct pmc_tool_dump *d = (struct pmc_tool_dump *)arg[2];

	switch (arg[0]) {
	case PMC_TOOL_CG_DUMP_STATS_AT:
		if (!d || !VG_(am_is_valid_for_client)((Addr)d, sizeof(*d), VKI_PROT_WRITE))
			return False;
		d->written = read_counters(tid, (Addr)d->counters, (UWord)d->n, (UWord)d->ended_too,
					   (Addr)&d->now_ns);
		if (pmc_functions)
			pmc_fn_dump(d->functions != 0);
		*ret = 0;
		return True;
	case PMC_TOOL_CG_START_INSTRUMENTATION:
	case PMC_TOOL_CG_STOP_INSTRUMENTATION:
		if (pmc_cache_sim || pmc_branch_sim)
			switch_models(arg[0] == PMC_TOOL_CG_START_INSTRUMENTATION);
		*ret = 0;
		return True;
	default:
		return False;
	}
}

static Bool pmc_client_request(ThreadId tid, UWord *arg, UWord *ret)
{
	/* A build of protocol 2 knew callgrind's requests not. */
	if (VG_IS_TOOL_USERREQ('C', 'T', arg[0]) && !clo_old)
		return callgrind_request(tid, arg, ret);
	if (!VG_IS_TOOL_USERREQ('P', 'M', arg[0]))
		return False;
	switch (arg[0]) {
	case PMC_TOOL_REQ_HELLO:
		*ret = PMC_TOOL_MAGIC | (clo_old	   ? PMC_TOOL_PROTOCOL_OLDEST
					 : clo_protocol3 ? PMC_TOOL_PROTOCOL_MODELS
							 : PMC_TOOL_PROTOCOL);
		return True;
	case PMC_TOOL_REQ_FUNCTIONS:
		/* Older builds knew it not: the default answer. */
		if (clo_old || clo_protocol3)
			return False;
		*ret = arg[1] && arg[2] && VG_(am_is_valid_for_client)(arg[1], arg[2], VKI_PROT_WRITE)
			       ? (UWord)pmc_fn_write(out_dir, (HChar *)arg[1], (SizeT)arg[2], counted())
			       : 0;
		return True;
	case PMC_TOOL_REQ_READ:
		*ret = read_counters(tid, arg[1], arg[2], arg[3], arg[4]);
		return True;
	case PMC_TOOL_REQ_WATCH: {
		const HChar *path = (const HChar *)arg[1];
		Int slot;

		if (!path || !VG_(am_is_valid_for_client)(arg[1], 1, VKI_PROT_READ)) {
			*ret = (UWord)-1;
			return True;
		}
		slot = pmc_watch_add(path, (ULong)arg[2]);
		if (slot >= 0)
			pmc_watch_map_existing(True);
		*ret = slot < 0 ? (UWord)-1 : (UWord)(PMC_TOOL_NFIXED + slot);
		return True;
	}
	case PMC_TOOL_REQ_CHILDREN: {
		ULong *out = (ULong *)arg[1];

		if (!kids_path || !VG_(am_is_valid_for_client)(arg[1], 2 * sizeof(ULong), VKI_PROT_WRITE)) {
			*ret = (UWord)-1;
			return True;
		}
		children_take();
		out[0] = kids_ended;
		out[1] = kids_execed;
		*ret = 0;
		return True;
	}
	case PMC_TOOL_REQ_WHAT:
		*ret = (pmc_clo_memory ? PMC_TOOL_COUNTS_MEMORY : 0) |
		       (pmc_clo_branches ? PMC_TOOL_COUNTS_BRANCHES : 0) |
		       (pmc_cache_sim ? PMC_TOOL_COUNTS_CACHE_SIM : 0) |
		       (pmc_branch_sim ? PMC_TOOL_COUNTS_BRANCH_SIM : 0);
		return True;
	default:
		return False;
	}
}

/* ---- start and end -------------------------------------------------------------------- */

static Bool pmc_option(const HChar *arg)
{
	const HChar *watch;

	if VG_BOOL_CLO (arg, "--pmcheck-memory", pmc_clo_memory) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-branches", pmc_clo_branches) {
	} else if VG_STR_CLO (arg, "--pmcheck-out", clo_out) {
	} else if VG_XACT_CLO (arg, "--pmcheck-fault=miscount", pmc_clo_miscount, True) {
	} else if VG_XACT_CLO (arg, "--pmcheck-fault=ill-typed-ir", pmc_clo_ill_typed_ir, True) {
	} else if VG_XACT_CLO (arg, "--pmcheck-fault=old", clo_old, True) {
	} else if VG_XACT_CLO (arg, "--pmcheck-fault=protocol3", clo_protocol3, True) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-functions", pmc_functions) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-branch-sim", pmc_branch_sim) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-models-atstart", clo_models_atstart) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-check-ir", clo_check_ir) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-line-info", pmc_clo_line_info) {
	} else if (pmc_cache_option(arg)) {
	} else if VG_STR_CLO (arg, "--pmcheck-watch", watch) {
		if (clo_nwatch == PMC_TOOL_MAX_WATCH)
			VG_(fmsg_bad_option)(arg, "more than %d watched functions\n", PMC_TOOL_MAX_WATCH);
		clo_watch[clo_nwatch++] = watch;
	} else
		return False;
	return True;
}

static void pmc_usage(void)
{
	VG_(printf)("    --pmcheck-memory=no|yes     count data reads and writes [yes]\n"
		    "    --pmcheck-branches=no|yes   count conditional and indirect branches [yes]\n"
		    "    --pmcheck-out=FILE          write each process's totals to FILE at exit (%%p: pid)\n"
		    "    --pmcheck-watch=OFFSET:PATH count entries to the code at file offset OFFSET of PATH\n"
		    "    --pmcheck-branch-sim=no|yes simulate the branch predictors as callgrind does [no]\n"
		    "    --pmcheck-models-atstart=no|yes  simulate from the start, or from callgrind's\n"
		    "                                START_INSTRUMENTATION request on [yes]\n"
		    "    --pmcheck-functions=no|yes  count each function's self costs, for FUNCTIONS [no]\n"
		    "    --pmcheck-check-ir=no|yes   check each superblock's IR, before and after\n"
		    "                                instrumenting it, as VEX can [no]\n"
		    "    --pmcheck-line-info=no|yes  read DWARF line tables, for files and lines in\n"
		    "                                stack traces valgrind prints [no]\n"
		    "    --pmcheck-fault=miscount|old|protocol3|ill-typed-ir count wrong, answer as\n"
		    "                                protocol %u or %u, or instrument with ill-typed IR,\n"
		    "                                on purpose (pmcheck's tests)\n",
		    PMC_TOOL_PROTOCOL_OLDEST, PMC_TOOL_PROTOCOL_MODELS);
	pmc_cache_usage();
}

static void pmc_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

static void pmc_post_clo_init(void)
{
	parked = VG_(calloc)("pmcheck.threads", VG_N_THREADS, sizeof(*parked));
	if (pmc_functions)
		pmc_fn_threads_init();
	for (Int i = 0; i < clo_nwatch; i++) {
		const HChar *colon = VG_(strchr)(clo_watch[i], ':');
		HChar *end;
		ULong off = VG_(strtoull10)(clo_watch[i], &end);

		if (!colon || end != colon || colon[1] != '/')
			VG_(fmsg_bad_option)(clo_watch[i], "expected OFFSET:/absolute/path\n");
		pmc_watch_add(colon + 1, off);
	}
	/* A build of protocol 2 knew no model: valgrind refused the options. */
	if (clo_old && (pmc_cache_sim || pmc_branch_sim))
		pmc_refuse_option(pmc_cache_sim ? "--pmcheck-cache-sim=yes" : "--pmcheck-branch-sim=yes",
				  "unknown to a build of protocol 2 (--pmcheck-fault=old)\n");
	/* Builds before protocol 4 knew no function costs. */
	if ((clo_old || clo_protocol3) && pmc_functions)
		pmc_refuse_option("--pmcheck-functions=yes",
				  "unknown to a build of protocol 3 or older (--pmcheck-fault)\n");
	pmc_cache_init();
	pmc_branch_init();
	pmc_models_active = (pmc_cache_sim || pmc_branch_sim) && clo_models_atstart;
	if (clo_out) {
		const HChar *dir = VG_(dirname)(clo_out);

		out_dir = VG_(strdup)("pmcheck.out_dir", dir);
		kids_path = VG_(malloc)("pmcheck.children", VG_(strlen)(dir) + 32);
		VG_(sprintf)(kids_path, "%s/pmcheck.children", dir);
	}
	/* Whatever is mapped already (nothing has been translated yet). */
	if (pmc_watch_count())
		pmc_watch_map_existing(False);
}

static void pmc_fini(Int exitcode)
{
	static const HChar *const names[PMC_TOOL_NFIXED] = {
		"Ir", "Dr", "Dw", "Bc", "Bi", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bcm", "Bim",
	};
	ULong total[NCOUNTERS];
	HChar line[256];
	HChar *file;
	SysRes sr;
	Int fd;

	(void)exitcode;
	if (!clo_out)
		return;
	process_totals(total);
	child_report(False);
	file = VG_(expand_file_name)("--pmcheck-out", clo_out);
	sr = VG_(open)(file, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0600);
	if (sr_isError(sr)) {
		VG_(umsg)("pmcheck: cannot write the totals file %s\n", file);
		return;
	}
	fd = (Int)sr_Res(sr);
	VG_(write)(fd, PMC_TOOL_TOTALS_HEADER "\n", sizeof(PMC_TOOL_TOTALS_HEADER));
	for (Int c = 0; c < PMC_TOOL_NFIXED; c++) {
		Int n;

		/* Counters of models this run had not: no line, not a zero. */
		if ((c >= PMC_TOOL_I1MR && c <= PMC_TOOL_DLMW && !pmc_cache_sim) ||
		    (c >= PMC_TOOL_BCM && !pmc_branch_sim))
			continue;
		n = VG_(snprintf)(line, sizeof(line), "%s %llu\n", names[c], total[c]);
		VG_(write)(fd, line, n);
	}
	for (Int w = 0; w < pmc_watch_count(); w++) {
		Int n = VG_(snprintf)(line, sizeof(line), "call %d %llu\n", w,
				      total[PMC_TOOL_NFIXED + w]);

		VG_(write)(fd, line, n);
	}
	VG_(close)(fd);
}

static void pmc_pre_clo_init(void)
{
	VG_(details_name)("pmcheck");
	VG_(details_version)(NULL);
	VG_(details_description)("pmcheck's inline counter, with callgrind's cache and branch models");
	VG_(details_copyright_author)("Copyright (C) 2026 the pmcheck authors; GNU GPL'd");
	VG_(details_bug_reports_to)("the pmcheck project");
	VG_(details_avg_translation_sizeB)(275);

	/* callgrind's translation settings, so that superblocks -- and with
	 * them where a superblock can be left -- are the ones it counts. */
	VG_(clo_vex_control).iropt_unroll_thresh = 0;
	VG_(clo_vex_control).guest_chase = False;
	VG_(clo_vex_control).iropt_register_updates_default = VG_(clo_px_file_backed) =
		VexRegUpdSpAtMemAccess;

	VG_(basic_tool_funcs)(pmc_post_clo_init, pmc_instrument, pmc_fini);
	VG_(needs_command_line_options)(pmc_option, pmc_usage, pmc_debug_usage);
	VG_(needs_client_requests)(pmc_client_request);
	VG_(track_start_client_code)(switch_thread);
	VG_(track_pre_thread_ll_create)(thread_created);
	VG_(track_pre_thread_ll_exit)(thread_exiting);
	/* The program and the dynamic linker are mapped at start-up, the
	 * rest with mmap. */
	VG_(track_new_mem_startup)(pmc_watch_new_mapping);
	VG_(track_new_mem_mmap)(pmc_watch_new_mapping);
	VG_(track_die_mem_munmap)(pmc_watch_mapping_gone);
	VG_(atfork)(NULL, NULL, forked_child);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pmc_pre_clo_init)
