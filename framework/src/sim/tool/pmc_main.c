/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: counts what callgrind counts for pmcheck's sim
 * backend -- instructions (Ir), data reads and writes (Dr, Dw), conditional
 * and indirect branches (Bc, Bi) and entries to watched functions -- with
 * inline additions to counters in memory, per thread, and answers a
 * reading with a client request.  No cache or branch-predictor model, no
 * call graph, no dump.  Forked children count in processes of their own and
 * report their totals back (see "forked children").
 *
 * Copyright (C) 2026 the pmcheck authors.  This program is free software:
 * it links valgrind's core (GPL-2.0-or-later) and is distributed under the
 * same licence; see COPYING in this directory.
 *
 * The definitions are callgrind's (valgrind 3.19, callgrind/main.c), so
 * that the two engines agree on the same binary:
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

#include "pmcheck_tool.h"

#define NCOUNTERS (PMC_TOOL_NFIXED + PMC_TOOL_MAX_WATCH)
#define MAX_SITES 256

/* ---- options ---------------------------------------------------------------------- */

static Bool clo_memory = True;
static Bool clo_branches = True;
static const HChar *clo_out;
/* Fault injection for pmcheck's tests (--pmcheck-fault=miscount): one
 * instruction too few wherever a conditional branch is left, so that the
 * known-work check must catch it. */
static Bool clo_miscount;
/* --pmcheck-watch=OFFSET:PATH, collected until post_clo_init. */
static const HChar *clo_watch[PMC_TOOL_MAX_WATCH];
static Int clo_nwatch;

/* ---- counters ------------------------------------------------------------------------ */

/* The running thread's counters: generated code adds to these addresses. */
static ULong live[NCOUNTERS];
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
		VG_(memcpy)(parked[live_tid], live, sizeof(live));
	VG_(memcpy)(live, parked[tid], sizeof(live));
	live_tid = tid;
}

static void thread_created(ThreadId parent, ThreadId child)
{
	(void)parent;
	if (child == live_tid)
		VG_(memset)(live, 0, sizeof(live));
	VG_(memset)(parked[child], 0, sizeof(parked[child]));
}

static void thread_exiting(ThreadId tid)
{
	ULong *c = tid == live_tid ? live : parked[tid];

	for (Int i = 0; i < NCOUNTERS; i++)
		exited[i] += c[i];
	VG_(memset)(c, 0, sizeof(live));
}

/* The process's totals since it started or was forked: every thread. */
static void process_totals(ULong *total)
{
	for (Int c = 0; c < NCOUNTERS; c++) {
		total[c] = exited[c] + live[c] - at_fork[c];
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
	VG_(memcpy)(at_fork, live, sizeof(live));
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

/* ---- watched functions ------------------------------------------------------------- */

struct watch {
	HChar *path;  /* the object's real path */
	ULong offset; /* the entry's file offset */
};

static struct watch watches[PMC_TOOL_MAX_WATCH];
static Int nwatches;

struct site {
	Addr addr;
	Int slot;
};

/* Where watched entries are mapped now. */
static struct site sites[MAX_SITES];
static Int nsites;

static Int slot_at(Addr a)
{
	for (Int i = 0; i < nsites; i++)
		if (sites[i].addr == a)
			return sites[i].slot;
	return -1;
}

static void add_site(Addr a, Int slot, Bool translated)
{
	for (Int i = 0; i < nsites; i++)
		if (sites[i].addr == a && sites[i].slot == slot)
			return;
	if (nsites == MAX_SITES) {
		VG_(umsg)("pmcheck: more than %d mappings of watched functions; %s at %#lx is not counted\n",
			  MAX_SITES, watches[slot].path, a);
		return;
	}
	sites[nsites].addr = a;
	sites[nsites].slot = slot;
	nsites++;
	/* Code already translated from there has no counting in it. */
	if (translated)
		VG_(discard_translations_safely)(a, 1, "pmcheck");
}

/* The watches that fall into the executable file mapping seg. */
static void map_segment(NSegment const *seg, Bool translated)
{
	const HChar *name;

	if (!seg || seg->kind != SkFileC || !seg->hasX || !(name = VG_(am_get_filename)(seg)))
		return;
	for (Int w = 0; w < nwatches; w++) {
		ULong off = watches[w].offset;

		if (off >= (ULong)seg->offset && off - (ULong)seg->offset <= seg->end - seg->start &&
		    !VG_(strcmp)(name, watches[w].path))
			add_site(seg->start + (Addr)(off - (ULong)seg->offset), w, translated);
	}
}

static void map_existing(Bool translated)
{
	Addr starts[512];
	Int n = VG_(am_get_segment_starts)(SkFileC, starts, 512);

	if (n < 0)
		n = 512; /* more file mappings than that: the first 512 */
	for (Int i = 0; i < n; i++)
		map_segment(VG_(am_find_nsegment)(starts[i]), translated);
}

static void new_mapping(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{
	(void)rr;
	(void)ww;
	(void)di_handle;
	if (xx && nwatches) {
		Addr end = a + len;

		while (a < end) {
			NSegment const *seg = VG_(am_find_nsegment)(a);

			if (!seg)
				break;
			map_segment(seg, False);
			a = seg->end + 1;
		}
	}
}

static void mapping_gone(Addr a, SizeT len)
{
	for (Int i = 0; i < nsites;)
		if (sites[i].addr >= a && sites[i].addr - a < len)
			sites[i] = sites[--nsites];
		else
			i++;
}

static Int add_watch(const HChar *path, ULong offset)
{
	for (Int w = 0; w < nwatches; w++)
		if (watches[w].offset == offset && !VG_(strcmp)(watches[w].path, path))
			return w;
	if (nwatches == PMC_TOOL_MAX_WATCH)
		return -1;
	watches[nwatches].path = VG_(strdup)("pmcheck.watch", path);
	watches[nwatches].offset = offset;
	return nwatches++;
}

/* ---- instrumentation ---------------------------------------------------------------- */

/* What a superblock has counted since its last addition to the counters. */
struct pending {
	ULong n[PMC_TOOL_NFIXED];
};

/* The last event callgrind would have queued, when it is a load: a store
 * can turn it into a modify. */
struct last_load {
	Bool valid;
	Int insn;
	Int size;
	IRExpr *addr;
};

static void add_to(IRSB *out, ULong *counter, IRExpr *amount)
{
	IRExpr *where = mkIRExpr_HWord((HWord)counter);
	IRTemp old = newIRTemp(out->tyenv, Ity_I64);
	IRTemp sum = newIRTemp(out->tyenv, Ity_I64);

	addStmtToIRSB(out, IRStmt_WrTmp(old, IRExpr_Load(Iend_LE, Ity_I64, where)));
	addStmtToIRSB(out, IRStmt_WrTmp(sum, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(old), amount)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)counter), IRExpr_RdTmp(sum)));
}

static void flush(IRSB *out, struct pending *p)
{
	for (Int c = 0; c < PMC_TOOL_NFIXED; c++)
		if (p->n[c]) {
			add_to(out, &live[c], IRExpr_Const(IRConst_U64(p->n[c])));
			p->n[c] = 0;
		}
}

/* A guarded load or store counts when its guard holds.  callgrind adds it
 * at once, after emptying its queue, so it never merges. */
static void guarded(IRSB *out, struct pending *p, Int counter, IRExpr *guard)
{
	IRTemp one = newIRTemp(out->tyenv, Ity_I64);

	flush(out, p);
	addStmtToIRSB(out, IRStmt_WrTmp(one, IRExpr_Unop(Iop_1Uto64, guard)));
	add_to(out, &live[counter], IRExpr_RdTmp(one));
}

static Bool same_atom(const IRExpr *a, const IRExpr *b)
{
	if (a->tag == Iex_RdTmp && b->tag == Iex_RdTmp)
		return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
	if (a->tag == Iex_Const && b->tag == Iex_Const)
		return eqIRConst(a->Iex.Const.con, b->Iex.Const.con);
	return False;
}

static void on_load(struct pending *p, struct last_load *l, Int insn, Int size, IRExpr *addr)
{
	p->n[PMC_TOOL_DR]++;
	l->valid = True;
	l->insn = insn;
	l->size = size;
	l->addr = addr;
}

static void on_store(struct pending *p, struct last_load *l, Int insn, Int size, IRExpr *addr)
{
	if (l->valid && l->insn == insn && l->size == size && same_atom(l->addr, addr))
		p->n[PMC_TOOL_DR]--; /* a modify: counted as the write only */
	p->n[PMC_TOOL_DW]++;
	l->valid = False;
}

static IRSB *pmc_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
			    const VexGuestExtents *vge, const VexArchInfo *archinfo_host,
			    IRType gWordTy, IRType hWordTy)
{
	IRSB *out = deepCopyIRSBExceptStmts(in);
	struct pending p = { { 0 } };
	struct last_load last = { False, 0, 0, NULL };
	Int insn = 0, i = 0;

	(void)closure;
	(void)layout;
	(void)vge;
	(void)archinfo_host;
	if (gWordTy != hWordTy || hWordTy != Ity_I64)
		VG_(tool_panic)("pmcheck: only 64-bit guests on 64-bit hosts");
	/* VEX's preamble (the self-modifying-code check) is not client code. */
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(out, in->stmts[i]);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		switch (st->tag) {
		case Ist_IMark: {
			Int slot = nsites ? slot_at((Addr)st->Ist.IMark.addr) : -1;

			insn++;
			p.n[PMC_TOOL_IR]++;
			last.valid = False;
			addStmtToIRSB(out, st);
			if (slot >= 0)
				add_to(out, &live[PMC_TOOL_NFIXED + slot], IRExpr_Const(IRConst_U64(1)));
			continue;
		}
		case Ist_WrTmp:
			if (st->Ist.WrTmp.data->tag == Iex_Load)
				on_load(&p, &last, insn, sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty),
					st->Ist.WrTmp.data->Iex.Load.addr);
			break;
		case Ist_Store:
			on_store(&p, &last, insn,
				 sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data)),
				 st->Ist.Store.addr);
			break;
		case Ist_StoreG:
			if (clo_memory)
				guarded(out, &p, PMC_TOOL_DW, st->Ist.StoreG.details->guard);
			last.valid = False;
			break;
		case Ist_LoadG:
			if (clo_memory)
				guarded(out, &p, PMC_TOOL_DR, st->Ist.LoadG.details->guard);
			last.valid = False;
			break;
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;
			/* callgrind caps the size at a cache line (64 bytes). */
			Int size = d->mSize > 64 ? 64 : d->mSize;

			if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify)
				on_load(&p, &last, insn, size, d->mAddr);
			if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify)
				on_store(&p, &last, insn, size, d->mAddr);
			break;
		}
		case Ist_CAS: {
			IRCAS *cas = st->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo));

			if (cas->dataHi)
				size *= 2;
			on_load(&p, &last, insn, size, cas->addr);
			on_store(&p, &last, insn, size, cas->addr);
			last.valid = False; /* callgrind queues a bus event after it */
			break;
		}
		case Ist_LLSC:
			if (!st->Ist.LLSC.storedata)
				p.n[PMC_TOOL_DR]++;
			else
				on_store(&p, &last, insn, 0, st->Ist.LLSC.addr);
			last.valid = False;
			break;
		case Ist_Exit:
			if (st->Ist.Exit.jk == Ijk_Boring || st->Ist.Exit.jk == Ijk_Call ||
			    st->Ist.Exit.jk == Ijk_Ret)
				p.n[PMC_TOOL_BC]++;
			if (clo_miscount && p.n[PMC_TOOL_IR] > 1)
				p.n[PMC_TOOL_IR]--;
			if (!clo_memory)
				p.n[PMC_TOOL_DR] = p.n[PMC_TOOL_DW] = 0;
			if (!clo_branches)
				p.n[PMC_TOOL_BC] = 0;
			flush(out, &p);
			last.valid = False;
			break;
		default:
			break;
		}
		addStmtToIRSB(out, st);
	}
	if ((in->jumpkind == Ijk_Boring || in->jumpkind == Ijk_Call) && in->next->tag == Iex_RdTmp)
		p.n[PMC_TOOL_BI]++;
	if (!clo_memory)
		p.n[PMC_TOOL_DR] = p.n[PMC_TOOL_DW] = 0;
	if (!clo_branches)
		p.n[PMC_TOOL_BC] = p.n[PMC_TOOL_BI] = 0;
	flush(out, &p);
	return out;
}

/* ---- client requests --------------------------------------------------------------- */

static Bool pmc_client_request(ThreadId tid, UWord *arg, UWord *ret)
{
	if (!VG_IS_TOOL_USERREQ('P', 'M', arg[0]))
		return False;
	switch (arg[0]) {
	case PMC_TOOL_REQ_HELLO:
		*ret = PMC_TOOL_MAGIC | PMC_TOOL_PROTOCOL;
		return True;
	case PMC_TOOL_REQ_READ: {
		UWord n = arg[2] < NCOUNTERS ? arg[2] : NCOUNTERS;

		switch_thread(tid, 0);
		if ((n && !VG_(am_is_valid_for_client)(arg[1], n * sizeof(ULong), VKI_PROT_WRITE)) ||
		    (arg[4] && !VG_(am_is_valid_for_client)(arg[4], sizeof(ULong), VKI_PROT_WRITE))) {
			*ret = (UWord)-1;
			return True;
		}
		if (arg[3])
			children_take();
		for (UWord i = 0; i < n; i++)
			((ULong *)arg[1])[i] = live[i] + (arg[3] ? exited[i] + kids[i] : 0);
		if (arg[4]) {
			struct vki_timespec ts;

			VG_(clock_gettime)(&ts, VKI_CLOCK_MONOTONIC);
			*(ULong *)arg[4] = (ULong)ts.tv_sec * 1000000000ULL + (ULong)ts.tv_nsec;
		}
		*ret = n;
		return True;
	}
	case PMC_TOOL_REQ_WATCH: {
		const HChar *path = (const HChar *)arg[1];
		Int slot;

		if (!path || !VG_(am_is_valid_for_client)(arg[1], 1, VKI_PROT_READ)) {
			*ret = (UWord)-1;
			return True;
		}
		slot = add_watch(path, (ULong)arg[2]);
		if (slot >= 0)
			map_existing(True);
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
		*ret = (clo_memory ? PMC_TOOL_COUNTS_MEMORY : 0) |
		       (clo_branches ? PMC_TOOL_COUNTS_BRANCHES : 0);
		return True;
	default:
		return False;
	}
}

/* ---- start and end -------------------------------------------------------------------- */

static Bool pmc_option(const HChar *arg)
{
	const HChar *watch;

	if VG_BOOL_CLO (arg, "--pmcheck-memory", clo_memory) {
	} else if VG_BOOL_CLO (arg, "--pmcheck-branches", clo_branches) {
	} else if VG_STR_CLO (arg, "--pmcheck-out", clo_out) {
	} else if VG_XACT_CLO (arg, "--pmcheck-fault=miscount", clo_miscount, True) {
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
		    "    --pmcheck-fault=miscount    count wrong on purpose (pmcheck's tests)\n");
}

static void pmc_debug_usage(void)
{
	VG_(printf)("    (none)\n");
}

static void pmc_post_clo_init(void)
{
	parked = VG_(calloc)("pmcheck.threads", VG_N_THREADS, sizeof(*parked));
	for (Int i = 0; i < clo_nwatch; i++) {
		const HChar *colon = VG_(strchr)(clo_watch[i], ':');
		HChar *end;
		ULong off = VG_(strtoull10)(clo_watch[i], &end);

		if (!colon || end != colon || colon[1] != '/')
			VG_(fmsg_bad_option)(clo_watch[i], "expected OFFSET:/absolute/path\n");
		add_watch(colon + 1, off);
	}
	if (clo_out) {
		const HChar *dir = VG_(dirname)(clo_out);

		kids_path = VG_(malloc)("pmcheck.children", VG_(strlen)(dir) + 32);
		VG_(sprintf)(kids_path, "%s/pmcheck.children", dir);
	}
	/* Whatever is mapped already (nothing has been translated yet). */
	if (nwatches)
		map_existing(False);
}

static void pmc_fini(Int exitcode)
{
	static const HChar *const names[PMC_TOOL_NFIXED] = { "Ir", "Dr", "Dw", "Bc", "Bi" };
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
		Int n = VG_(snprintf)(line, sizeof(line), "%s %llu\n", names[c], total[c]);

		VG_(write)(fd, line, n);
	}
	for (Int w = 0; w < nwatches; w++) {
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
	VG_(details_description)("pmcheck's inline instruction, memory and branch counter");
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
	VG_(track_new_mem_startup)(new_mapping);
	VG_(track_new_mem_mmap)(new_mapping);
	VG_(track_die_mem_munmap)(mapping_gone);
	VG_(atfork)(NULL, NULL, forked_child);
	VG_(needs_syscall_wrapper)(pre_syscall, post_syscall);
}

VG_DETERMINE_INTERFACE_VERSION(pmc_pre_clo_init)
