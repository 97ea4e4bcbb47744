/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: the cost of each function (--pmcheck-functions=
 * yes), so that a failing case names the functions behind its figures
 * without a second run under callgrind.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 *
 * The definitions are callgrind's (valgrind 3.19, callgrind/fn.c and
 * bb.c), for what the tool counts:
 * - A superblock's cost is its function's: the function of the address of
 *   its first instruction, found when it is translated.  With chasing off
 *   a superblock seldom crosses into another function; when it does,
 *   callgrind charges the whole block to the first too.
 * - The name is the symbol valgrind's debug information gives there
 *   (VG_(get_fnname): "(below main)" for what runs before main), mangled
 *   when the run says --demangle=no, as pmcheck runs callgrind.  Code with
 *   no symbol (a stripped library's static functions) callgrind names by
 *   the offset, from the object's text bias, of the block a call entered
 *   ("0x%016lx", with " [PLT]" and its other section tags after), and
 *   charges the blocks run until the return to it.  The tool has no call
 *   stack; it names such code by the start of the function around it, as
 *   the object's unwind table (.eh_frame_hdr) gives it: the address a call
 *   enters.  Without a table entry, the block's own offset.
 * - The object is the debug information's file name, "???" without one.
 * - The function a block is charged to: callgrind's, which keeps a call
 *   stack: the function whose first instruction was entered last (by a
 *   call, or by a jump, which callgrind then takes for a call), until the
 *   return; a jump anywhere else stays in it (a tail call through a
 *   pointer into a stripped static function, glibc's memcpy going on into
 *   the body of __memcpy_sse2_unaligned_erms).  A PLT stub is charged to
 *   its caller (--skip-plt=yes, callgrind's default).  The tool keeps the
 *   same per thread: `context`, which a function's first block stores and
 *   every other block adds to, and a stack of STACK contexts that a call
 *   pushes and a return pops.  The two can differ where calls and returns
 *   do not pair (longjmp, exceptions, signal handlers, calls deeper than
 *   STACK), where callgrind unwinds by the stack pointer and the tool
 *   does not.
 * - Calls: entries to a function's first instruction (callgrind counts a
 *   jump there as a call too), the function's start from the unwind table
 *   for code without a symbol.
 * - Callers of a watched function (a calls: target): each entry to it is
 *   a call from the function charged at that moment (callgrind's caller:
 *   the function that jumped there, else the one whose call is on top of
 *   the stack), counted per (caller, callee) in the interval and written
 *   as callgrind writes a call, in the caller's rows; an entry with no
 *   function charged (a thread's first code) stays in the callee's own
 *   calls line.  Only watched functions: one helper call per entry to
 *   one, nothing elsewhere.
 * - Self cost only, summed over every thread (callgrind's
 *   --separate-threads=no); recursion levels are not told apart (callgrind
 *   names a function entered recursively "fn'2": add them to compare).
 * - Intervals are callgrind's: each DUMP_STATS_AT request closes one.  Only
 *   an interval the program will keep is gathered (pmc_tool_dump.functions
 *   at the request that begins it): the counters are emptied there and
 *   read at the next request, which makes its rows the last interval's;
 *   FUNCTIONS writes them out in callgrind's dump format, so that one
 *   reader serves both engines.  Other readings cost nothing more.
 *
 * Generated code adds to a function's counters at the same points it adds
 * to the thread's (one more addition per counter moved); nothing at all
 * when the option is off.  Counters live in chunks that never move, so
 * that generated code may hold their addresses.
 *
 * Over 600 lines because callgrind's definitions of a function's costs are
 * followed here one for one, each beside the comment that gives callgrind's
 * rule (a fifth of the file), so that the two engines agree.
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_vki.h"

#include "pmc_tool_int.h"

Bool pmc_functions;
IRExpr *pmc_fn_sb;
/* Per thread: whose costs code without a symbol, and a PLT stub, add
 * to (the function that jumped to it; NULL: its own row), and the values
 * it had at the calls not yet returned from, most recent at depth - 1,
 * depth modulo STACK (the deepest STACK kept; deeper, a return finds a
 * later frame's).  See
 * "the function a block is charged to" above. */
#define STACK 64
struct fn_thread {
	ULong *context;
	ULong depth;
	ULong *stack[STACK];
};
static struct fn_thread live; /* the running thread's: generated code's */
static struct fn_thread *parked;

#define CHUNK 1024
/* A function's counters: the fixed ones, then its calls. */
#define CALLS PMC_TOOL_NFIXED
#define NCOSTS (PMC_TOOL_NFIXED + 1)
#define MAX_CHUNKS 1024 /* a million functions */

/* A function's counters side by side (NCOSTS of 16 used): an exit's
 * additions touch one or two cache lines of the host's, where one array
 * per counter had them touch one line each. */
struct chunk {
	ULong cost[CHUNK][16];
};

struct fn {
	HChar *name;
	HChar *object;
	UInt hash;
};

static struct chunk *chunks[MAX_CHUNKS];
static struct fn *fns;
static UInt nfns, fns_cap;
/* Open addressing from (object, name) to a function's index + 1. */
static UInt *table, table_size;

/* The last closed interval: the functions that cost something in it. */
struct row {
	UInt fn;
	ULong cost[NCOSTS];
};
static struct row *last;
static UInt nlast, last_cap;
static UInt files_written;

static UInt hash_of(const HChar *object, const HChar *name)
{
	UInt h = 2166136261u;

	for (const HChar *p = object; *p; p++)
		h = (h ^ (UChar)*p) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (const HChar *p = name; *p; p++)
		h = (h ^ (UChar)*p) * 16777619u;
	return h;
}

static void table_grow(void)
{
	UInt size = table_size ? table_size * 2 : 4096;
	UInt *t = VG_(calloc)("pmcheck.fn.table", size, sizeof(*t));

	for (UInt i = 0; i < nfns; i++) {
		UInt k = fns[i].hash & (size - 1);

		while (t[k])
			k = (k + 1) & (size - 1);
		t[k] = i + 1;
	}
	if (table)
		VG_(free)(table);
	table = t;
	table_size = size;
}

/* The index of (object, name), made when new; -1 when the table is full. */
static Int fn_index(const HChar *object, const HChar *name)
{
	UInt h = hash_of(object, name), k;

	if (2 * (nfns + 1) > table_size)
		table_grow();
	for (k = h & (table_size - 1); table[k]; k = (k + 1) & (table_size - 1)) {
		const struct fn *f = &fns[table[k] - 1];

		if (f->hash == h && !VG_(strcmp)(f->name, name) && !VG_(strcmp)(f->object, object))
			return (Int)table[k] - 1;
	}
	if (nfns == CHUNK * MAX_CHUNKS)
		return -1;
	if (nfns == fns_cap) {
		fns_cap = fns_cap ? fns_cap * 2 : 1024;
		fns = VG_(realloc)("pmcheck.fn.names", fns, fns_cap * sizeof(*fns));
	}
	if (!chunks[nfns / CHUNK])
		chunks[nfns / CHUNK] = VG_(calloc)("pmcheck.fn.costs", 1, sizeof(struct chunk));
	fns[nfns].name = VG_(strdup)("pmcheck.fn.name", name);
	fns[nfns].object = VG_(strdup)("pmcheck.fn.object", object);
	fns[nfns].hash = h;
	table[k] = nfns + 1;
	return (Int)nfns++;
}

/* ---- callers of watched functions ----------------------------------------------------- */

/* Calls from one function to a watched one in the interval being
 * gathered, in an open-addressing table keyed by (caller, callee). */
struct edge {
	UInt caller, callee; /* function indices */
	ULong calls;         /* 0: an empty slot */
};
static struct edge *edges, *last_edges;
static UInt edges_size, nedges, nlast_edges, last_edges_cap;
static Bool gathering; /* an interval is being gathered */

/* The index of the function whose counters are at row, or -1. */
static Int row_index(const ULong *row)
{
	for (UInt c = 0; c * CHUNK < nfns; c++) {
		const ULong *base = chunks[c]->cost[0];

		if (row >= base && row < base + CHUNK * 16)
			return (Int)(c * CHUNK + (UInt)((row - base) / 16));
	}
	return -1;
}

static UInt edge_hash(UInt caller, UInt callee)
{
	return (caller * 2654435761u) ^ (callee * 40503u);
}

static void edges_grow(void)
{
	UInt size = edges_size ? edges_size * 2 : 256;
	struct edge *t = VG_(calloc)("pmcheck.fn.edges", size, sizeof(*t));

	for (UInt i = 0; i < edges_size; i++)
		if (edges[i].calls) {
			UInt k = edge_hash(edges[i].caller, edges[i].callee) & (size - 1);

			while (t[k].calls)
				k = (k + 1) & (size - 1);
			t[k] = edges[i];
		}
	if (edges)
		VG_(free)(edges);
	edges = t;
	edges_size = size;
}

/* Generated code's, at an entry to a watched function: one call to it
 * from the function whose counters are at caller (NULL: none). */
static VG_REGPARM(2) void count_edge(ULong *caller, UWord callee)
{
	Int from;
	UInt k;

	if (!gathering || !caller || (from = row_index(caller)) < 0)
		return;
	if (2 * (nedges + 1) > edges_size)
		edges_grow();
	for (k = edge_hash((UInt)from, (UInt)callee) & (edges_size - 1); edges[k].calls;
	     k = (k + 1) & (edges_size - 1))
		if (edges[k].caller == (UInt)from && edges[k].callee == (UInt)callee) {
			edges[k].calls++;
			return;
		}
	edges[k] = (struct edge){ (UInt)from, (UInt)callee, 1 };
	nedges++;
}

/* ---- function starts from .eh_frame_hdr --------------------------------------------- */

/*
 * The binary-search table of an object's .eh_frame_hdr: one (start of a
 * function, its FDE) pair per function, sorted, each start relative to the
 * header.  Only the encoding every linker writes for x86-64 and arm64 is
 * read (version 1, a 4-byte count, 4-byte signed pairs relative to the
 * header); another leaves the object without starts.
 */
struct starts {
	Addr elf; /* the object's ELF header, the key */
	Addr hdr; /* its .eh_frame_hdr, 0: none usable */
	const Int *pairs;
	UInt n;
};

#define NSTARTS 64
static struct starts starts_seen[NSTARTS];
static UInt nstarts_seen;

static Bool readable(Addr a, SizeT n)
{
	return VG_(am_is_valid_for_client)(a, n, VKI_PROT_READ);
}

static void starts_find(struct starts *s)
{
	const UChar *e = (const UChar *)s->elf;
	ULong phoff, first = ~0ULL;
	UShort phnum, phentsize;

	s->hdr = 0;
	if (!readable(s->elf, 64) || e[0] != 0x7f || e[1] != 'E' || e[2] != 'L' || e[3] != 'F' ||
	    e[4] != 2 /* 64-bit */)
		return;
	phoff = *(const ULong *)(e + 32);
	phentsize = *(const UShort *)(e + 54);
	phnum = *(const UShort *)(e + 56);
	if (phentsize != 56 || !readable(s->elf + phoff, (SizeT)phnum * 56))
		return;
	/* The first PT_LOAD maps the header: addresses are from its p_vaddr. */
	for (UInt i = 0; i < phnum; i++) {
		const UChar *ph = e + phoff + (ULong)i * 56;

		if (*(const UInt *)ph == 1 /* PT_LOAD */ && *(const ULong *)(ph + 8) == 0)
			first = *(const ULong *)(ph + 16);
	}
	if (first == ~0ULL)
		return;
	for (UInt i = 0; i < phnum; i++) {
		const UChar *ph = e + phoff + (ULong)i * 56;
		const UChar *h;
		Addr at;

		if (*(const UInt *)ph != 0x6474e550 /* PT_GNU_EH_FRAME */)
			continue;
		at = s->elf + (*(const ULong *)(ph + 16) - first);
		if (!readable(at, 12))
			return;
		h = (const UChar *)at;
		/* version 1; eh_frame_ptr any 4-byte form; count udata4;
		 * table datarel|sdata4. */
		if (h[0] != 1 || (h[1] & 0x0f) != 0x0b || h[2] != 0x03 || h[3] != 0x3b)
			return;
		s->n = *(const UInt *)(h + 8);
		s->pairs = (const Int *)(h + 12);
		if (s->n && readable((Addr)s->pairs, (SizeT)s->n * 8))
			s->hdr = at;
		return;
	}
}

/* The start of the function around a, by the unwind table of the object
 * mapped at a, or 0. */
static Addr function_start(Addr a)
{
	NSegment const *seg = VG_(am_find_nsegment)(a);
	struct starts *s = NULL;
	Addr elf, start;
	UInt lo, hi;

	if (!seg || seg->kind != SkFileC || (Addr)seg->offset > seg->start)
		return 0;
	elf = seg->start - (Addr)seg->offset;
	for (UInt i = 0; i < nstarts_seen && !s; i++)
		if (starts_seen[i].elf == elf)
			s = &starts_seen[i];
	if (!s) {
		s = &starts_seen[nstarts_seen < NSTARTS ? nstarts_seen++ : elf % NSTARTS];
		s->elf = elf;
		starts_find(s);
	}
	if (!s->hdr)
		return 0;
	/* The last start at or below a. */
	lo = 0;
	hi = s->n;
	while (hi - lo > 1) {
		UInt mid = lo + (hi - lo) / 2;

		if (s->hdr + (Addr)(Long)s->pairs[2 * mid] <= a)
			lo = mid;
		else
			hi = mid;
	}
	start = s->hdr + (Addr)(Long)s->pairs[2 * lo];
	return start <= a ? start : 0;
}

/* ---- the table ------------------------------------------------------------------------ */

/* Where a block starts in its function. */
enum start { MIDDLE, SYMBOL_START, UNNAMED_START };

/* The counters of the function at a (a superblock's first instruction),
 * found or made when code there is translated; NULL past the table. */
static ULong *fn_costs(Addr a, enum start *where, Int *index)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	DebugInfo *di = VG_(find_DebugInfo)(ep, a);
	const HChar *object = di ? VG_(DebugInfo_get_filename)(di) : "???";
	const HChar *name;
	HChar unnamed[64];
	Int i;

	*where = MIDDLE;
	if (!VG_(get_fnname)(ep, a, &name)) {
		VgSectKind kind = VG_(DebugInfo_sect_kind)(NULL, a);
		Addr start = kind == Vg_SectText ? function_start(a) : 0;
		Addr offset = (start ? start : a) - (di ? (Addr)VG_(DebugInfo_get_text_bias)(di) : 0);

		*where = start == a ? UNNAMED_START : MIDDLE;
		VG_(sprintf)(unnamed, "%#016lx%s", (UWord)offset,
			     kind == Vg_SectData  ? " [Data]"
			     : kind == Vg_SectBSS ? " [BSS]"
			     : kind == Vg_SectGOT ? " [GOT]"
			     : kind == Vg_SectPLT ? " [PLT]"
						  : "");
		name = unnamed;
	}
	i = fn_index(object, name);
	/* After fn_index has copied the name: this lookup overwrites it. */
	if (name != unnamed && VG_(get_fnname_if_entry)(ep, a, &name))
		*where = SYMBOL_START;
	*index = i;
	return i < 0 ? NULL : chunks[i / CHUNK]->cost[i % CHUNK];
}

static Bool in_plt(Addr a)
{
	return VG_(DebugInfo_sect_kind)(NULL, a) == Vg_SectPLT;
}

static IRExpr *u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

/* A function's counters in a register: its chunk's address, loaded (VEX
 * cannot fold a load), and the row's offset in it.  The additions then
 * address them by displacement, where a constant address costs a 10-byte
 * move at each. */
static IRExpr *row_in_register(IRSB *out, Int i)
{
	IRExpr *chunk = pmc_ir_tmp(out, Ity_I64,
				   IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &chunks[i / CHUNK])));

	return pmc_ir_tmp(out, Ity_I64,
			  IRExpr_Binop(Iop_Add64, chunk,
				       u64((ULong)(i % CHUNK) * sizeof(chunks[0]->cost[0]))));
}

static IRExpr *stack_slot(IRSB *out, IRExpr *depth);

IRExpr *pmc_fn_enter(IRSB *out, Addr a)
{
	enum start where;
	Int i;
	ULong *own = fn_costs(a, &where, &i);
	IRExpr *was, *none, *base;

	if (!own)
		return NULL;
	if (where == SYMBOL_START && !in_plt(a)) {
		IRExpr *row;

		if (pmc_nsites && pmc_watch_slot_at(a) >= 0) {
			/* The caller: the function charged now (one that
			 * jumped here), else the one whose call pushed the top
			 * of the stack.  Read before this block charges
			 * itself. */
			IRExpr *now = pmc_ir_tmp(out, Ity_I64,
						 IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &live.context)));
			IRExpr *depth = pmc_ir_tmp(
				out, Ity_I64,
				IRExpr_Binop(Iop_Sub64,
					     pmc_ir_tmp(out, Ity_I64,
							IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &live.depth))),
					     u64(1)));
			IRExpr *top = pmc_ir_tmp(out, Ity_I64,
						 IRExpr_Load(Iend_LE, Ity_I64, stack_slot(out, depth)));
			IRExpr *called = pmc_ir_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, now, u64(0)));
			IRExpr *caller = pmc_ir_tmp(out, Ity_I64, IRExpr_ITE(called, top, now));
			IRDirty *d = unsafeIRDirty_0_N(2, "pmcheck_count_edge",
						       VG_(fnptr_to_fnentry)((void *)count_edge),
						       mkIRExprVec_2(caller, mkIRExpr_HWord((HWord)i)));

			addStmtToIRSB(out, IRStmt_Dirty(d));
		}
		row = row_in_register(out, i);

		/* A call, or a jump callgrind takes for one. */
		pmc_ir_add_at(out, row, CALLS * PMC_FN_STRIDE * 8, u64(1));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &live.context), row));
		return row;
	}
	/* Whatever is charged now: a stub's caller, the function that jumped
	 * here; nothing (a thread's first code, or a call that entered no
	 * symbol's first instruction): its own. */
	was = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &live.context)));
	none = pmc_ir_tmp(out, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, was, u64(0)));
	base = pmc_ir_tmp(out, Ity_I64, IRExpr_ITE(none, mkIRExpr_HWord((HWord)own), was));
	/* The start of a function without a symbol is a function when called
	 * (callgrind names the block a call entered), not when jumped to. */
	if (where == UNNAMED_START && !in_plt(a)) {
		pmc_ir_add(out, own + CALLS * PMC_FN_STRIDE,
			   pmc_ir_tmp(out, Ity_I64, IRExpr_Unop(Iop_1Uto64, none)));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &live.context), base));
	}
	return base;
}

/* &live.stack[depth % STACK], in generated code. */
static IRExpr *stack_slot(IRSB *out, IRExpr *depth)
{
	IRExpr *index = pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_And64, depth, u64(STACK - 1)));
	IRExpr *bytes = pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Shl64, index,
							      IRExpr_Const(IRConst_U8(3))));

	return pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, bytes, u64((HWord)live.stack)));
}

void pmc_fn_leave(IRSB *out, Addr from, IRJumpKind jk, IRExpr *next, IRExpr *here)
{
	Bool known = next->tag == Iex_Const;
	Addr to = known ? (Addr)next->Iex.Const.con->Ico.U64 : 0;
	IRExpr *what, *depth;

	if (jk == Ijk_Call) {
		/* What the code after the call is charged to, when it returns. */
		depth = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &live.depth)));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, stack_slot(out, depth), here));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &live.depth),
						pmc_ir_tmp(out, Ity_I64,
							   IRExpr_Binop(Iop_Add64, depth, u64(1)))));
		/* The callee's first block says whose it is; a stub's is the
		 * caller's. */
		what = known && in_plt(to) ? here : u64(0);
	} else if (jk == Ijk_Ret) {
		/* A return with nothing pushed (the thread's first function,
		 * a longjmp) takes whatever slot is below: NULL, or a function
		 * of this thread's. */
		depth = pmc_ir_tmp(out, Ity_I64,
				   IRExpr_Binop(Iop_Sub64,
						pmc_ir_tmp(out, Ity_I64,
							   IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &live.depth))),
						u64(1)));
		what = pmc_ir_tmp(out, Ity_I64,
				  IRExpr_Load(Iend_LE, Ity_I64, stack_slot(out, depth)));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &live.depth), depth));
	} else if (jk == Ijk_Boring && in_plt(from)) {
		/* A stub leaving for its function: callgrind's call. */
		what = u64(0);
	} else {
		/* A jump stays in the function charged now. */
		return;
	}
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &live.context), what));
}

void pmc_fn_threads_init(void)
{
	parked = VG_(calloc)("pmcheck.fn.threads", VG_N_THREADS, sizeof(*parked));
}

void pmc_fn_switch(ThreadId from, ThreadId to)
{
	if (from != VG_INVALID_THREADID)
		parked[from] = live;
	live = parked[to];
}

void pmc_fn_thread_new(ThreadId tid, Bool running)
{
	VG_(memset)(running ? &live : &parked[tid], 0, sizeof(live));
}

/* Gathering an interval: the counters were emptied at its start. */

static void interval_end(void)
{
	nlast = 0;
	for (UInt c = 0; c * CHUNK < nfns; c++) {
		struct chunk *k = chunks[c];
		UInt n = nfns - c * CHUNK < CHUNK ? nfns - c * CHUNK : CHUNK;

		for (UInt i = 0; i < n; i++) {
			struct row *r;

			/* Every addition a superblock makes carries its
			 * instructions: a function that cost anything has Ir. */
			if (!k->cost[i][PMC_TOOL_IR])
				continue;
			if (nlast == last_cap) {
				last_cap = last_cap ? last_cap * 2 : 256;
				last = VG_(realloc)("pmcheck.fn.last", last, last_cap * sizeof(*last));
			}
			r = &last[nlast++];
			r->fn = c * CHUNK + i;
			for (Int e = 0; e < NCOSTS; e++) {
				r->cost[e] = k->cost[i][e];
				k->cost[i][e] = 0;
			}
		}
	}
}

void pmc_fn_dump(Bool keep_next)
{
	if (gathering) {
		interval_end();
		/* The table's calls become the last interval's, packed. */
		if (nedges > last_edges_cap) {
			last_edges_cap = nedges;
			last_edges = VG_(realloc)("pmcheck.fn.last_edges", last_edges,
						  last_edges_cap * sizeof(*last_edges));
		}
		nlast_edges = 0;
		for (UInt k = 0; k < edges_size; k++)
			if (edges[k].calls)
				last_edges[nlast_edges++] = edges[k];
	}
	if (edges_size)
		VG_(memset)(edges, 0, edges_size * sizeof(*edges));
	nedges = 0;
	gathering = keep_next;
	if (keep_next)
		for (UInt c = 0; c * CHUNK < nfns; c++)
			VG_(memset)(chunks[c], 0, sizeof(*chunks[c]));
}

/* Buffered writes to fd: one system call per 8 KiB. */
struct out {
	Int fd;
	UInt used;
	HChar buf[8192];
};

static void out_flush(struct out *o)
{
	if (o->used)
		VG_(write)(o->fd, o->buf, (Int)o->used);
	o->used = 0;
}

static void out_str(struct out *o, const HChar *s)
{
	for (; *s; s++) {
		if (o->used == sizeof(o->buf))
			out_flush(o);
		o->buf[o->used++] = *s;
	}
}

/* "ob=" when the object changes, then "fn=": the object now. */
static const HChar *fn_header(struct out *o, const struct fn *f, const HChar *object)
{
	if (!object || VG_(strcmp)(object, f->object)) {
		out_str(o, "ob=");
		out_str(o, f->object);
		out_str(o, "\n");
	}
	out_str(o, "fn=");
	out_str(o, f->name);
	out_str(o, "\n");
	return f->object;
}

/* The calls of function caller (in object) to watched functions, as
 * callgrind writes a call: cob= when the callee is in another object,
 * cfn=, calls=COUNT and the inclusive cost (nothing). */
static void write_edges(struct out *o, UInt caller, const HChar *object)
{
	HChar line[64];

	for (UInt k = 0; k < nlast_edges; k++) {
		const struct fn *to = &fns[last_edges[k].callee];

		if (last_edges[k].caller != caller)
			continue;
		if (VG_(strcmp)(to->object, object)) {
			out_str(o, "cob=");
			out_str(o, to->object);
			out_str(o, "\n");
		}
		out_str(o, "cfn=");
		out_str(o, to->name);
		VG_(sprintf)(line, "\ncalls=%llu 0\n0\n", last_edges[k].calls);
		out_str(o, line);
	}
}

Int pmc_fn_write(const HChar *dir, HChar *path, SizeT size, UInt counted)
{
	static const HChar *const names[PMC_TOOL_NFIXED] = {
		"Ir", "Dr", "Dw", "Bc", "Bi", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw", "Bcm", "Bim",
	};
	struct out *o;
	HChar line[96], *file;
	const HChar *object = NULL;
	SysRes sr;
	Int n;

	if (!pmc_functions || !dir)
		return 0;
	file = VG_(malloc)("pmcheck.fn.path", VG_(strlen)(dir) + 64);
	n = VG_(sprintf)(file, "%s/fn.%d.%u", dir, VG_(getpid)(), files_written++);
	if ((SizeT)n >= size) {
		VG_(free)(file);
		return 0;
	}
	sr = VG_(open)(file, VKI_O_CREAT | VKI_O_WRONLY | VKI_O_TRUNC, 0600);
	if (sr_isError(sr)) {
		VG_(free)(file);
		return 0;
	}
	o = VG_(malloc)("pmcheck.fn.out", sizeof(*o));
	o->fd = (Int)sr_Res(sr);
	o->used = 0;
	out_str(o, "# pmcheck's valgrind tool: self costs per function\nevents:");
	for (Int e = 0; e < PMC_TOOL_NFIXED; e++)
		if (counted & (1u << e)) {
			out_str(o, " ");
			out_str(o, names[e]);
		}
	out_str(o, "\n");
	for (UInt i = 0; i < nlast; i++) {
		const struct fn *f = &fns[last[i].fn];
		ULong called = 0;

		object = fn_header(o, f, object);
		out_str(o, "0");
		for (Int e = 0; e < PMC_TOOL_NFIXED; e++)
			if (counted & (1u << e)) {
				VG_(sprintf)(line, " %llu", last[i].cost[e]);
				out_str(o, line);
			}
		out_str(o, "\n");
		write_edges(o, last[i].fn, f->object);
		/* Its calls from no known caller, as callgrind writes a call
		 * to it (the callee's inclusive cost, which the tool has not,
		 * as nothing); the others are its callers'. */
		for (UInt k = 0; k < nlast_edges; k++)
			if (last_edges[k].callee == last[i].fn)
				called += last_edges[k].calls;
		if (last[i].cost[CALLS] > called) {
			out_str(o, "cfn=");
			out_str(o, f->name);
			VG_(sprintf)(line, "\ncalls=%llu 0\n0\n", last[i].cost[CALLS] - called);
			out_str(o, line);
		}
	}
	/* Callers with no row of their own: charged nothing in the
	 * interval (a function whose calls were all made from code that
	 * was charged to another, a stub's caller). */
	for (UInt k = 0; k < nlast_edges; k++) {
		Bool listed = False, first = True;

		for (UInt i = 0; i < nlast && !listed; i++)
			listed = last[i].fn == last_edges[k].caller;
		for (UInt j = 0; j < k && first; j++)
			first = last_edges[j].caller != last_edges[k].caller;
		if (listed || !first)
			continue;
		object = fn_header(o, &fns[last_edges[k].caller], object);
		write_edges(o, last_edges[k].caller, fns[last_edges[k].caller].object);
	}
	out_flush(o);
	VG_(close)(o->fd);
	VG_(free)(o);
	VG_(strcpy)(path, file);
	VG_(free)(file);
	return 1;
}
