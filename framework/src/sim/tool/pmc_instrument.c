/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: the instrumentation of a superblock.  Counts
 * are known when the code is translated and are added to the counters at
 * each exit and at the end, in as few additions as there are counters
 * that moved.  The models' events are queued and emitted where callgrind
 * emits its calls (the rules are in pmc_main.c's header comment).
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"

#include "pmc_tool_int.h"

/* ---- the models' events ------------------------------------------------------------ */

/* callgrind's queue: events wait here until an exit, the end, a guarded
 * access, a load-linked or a full queue, and are then simulated in order.
 * Where they wait decides what a fault in the middle of a superblock
 * leaves unsimulated, so the tool waits where callgrind does. */
#define QUEUE_MAX 16

enum model_event { EV_FETCH, EV_READ, EV_WRITE, EV_MODIFY, EV_COND, EV_INDIRECT };

struct queued {
	enum model_event kind;
	Int insn;     /* which instruction of the superblock */
	Addr at;      /* the instruction's address */
	Int size;     /* bytes fetched, read or written */
	IRExpr *what; /* the address read or written, the branch's condition or target */
	Bool inverted;
};

struct queue {
	struct queued ev[QUEUE_MAX];
	Int n;
	UWord last_fetched; /* the block this superblock fetched from last */
};

static void flush_models(IRSB *out, struct queue *q)
{
	for (Int i = 0; i < q->n; i++) {
		struct queued *e = &q->ev[i];

		switch (e->kind) {
		case EV_FETCH:
			pmc_cache_fetch(out, e->at, e->size, &q->last_fetched);
			break;
		case EV_READ:
			pmc_cache_data(out, e->what, e->size, False, NULL);
			break;
		case EV_WRITE:
		case EV_MODIFY:
			pmc_cache_data(out, e->what, e->size, True, NULL);
			break;
		case EV_COND:
			pmc_branch_cond(out, e->at, e->what, e->inverted);
			break;
		case EV_INDIRECT:
			pmc_branch_indirect(out, e->at, e->what);
			break;
		}
	}
	q->n = 0;
}

static Bool same_atom(const IRExpr *a, const IRExpr *b)
{
	if (a->tag == Iex_RdTmp && b->tag == Iex_RdTmp)
		return a->Iex.RdTmp.tmp == b->Iex.RdTmp.tmp;
	if (a->tag == Iex_Const && b->tag == Iex_Const)
		return eqIRConst(a->Iex.Const.con, b->Iex.Const.con);
	return False;
}

static void queue(IRSB *out, struct queue *q, enum model_event kind, Int insn, Addr at, Int size,
		  IRExpr *what)
{
	Bool cache = kind <= EV_MODIFY;

	if (!pmc_models_active || (cache ? !pmc_cache_sim : !pmc_branch_sim))
		return;
	/* A write of what the instruction just read, at the same address and
	 * size, is one modify (simulated as the write). */
	if (kind == EV_WRITE && q->n && q->ev[q->n - 1].kind == EV_READ &&
	    q->ev[q->n - 1].insn == insn && q->ev[q->n - 1].size == size &&
	    same_atom(q->ev[q->n - 1].what, what)) {
		q->ev[q->n - 1].kind = EV_MODIFY;
		return;
	}
	if (q->n == QUEUE_MAX)
		flush_models(out, q);
	q->ev[q->n].kind = kind;
	q->ev[q->n].insn = insn;
	q->ev[q->n].at = at;
	q->ev[q->n].size = size;
	q->ev[q->n].what = what;
	q->ev[q->n].inverted = False;
	q->n++;
}

/* ---- counting ---------------------------------------------------------------------- */

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

static void flush_counts(IRSB *out, struct pending *p)
{
	for (Int c = 0; c < PMC_TOOL_NFIXED; c++)
		if (p->n[c]) {
			pmc_ir_add(out, &pmc_live[c], IRExpr_Const(IRConst_U64(p->n[c])));
			if (pmc_fn_sb)
				pmc_ir_add_at(out, pmc_fn_sb, c * PMC_FN_STRIDE * 8,
					      IRExpr_Const(IRConst_U64(p->n[c])));
			p->n[c] = 0;
		}
}

/* A guarded load or store counts when its guard holds.  callgrind adds it
 * at once, after emptying its queue, so it never merges. */
static void guarded(IRSB *out, struct pending *p, struct queue *q, Int counter, IRExpr *guard,
		    IRExpr *addr, Int size)
{
	if (pmc_clo_memory) {
		IRExpr *held = pmc_ir_tmp(out, Ity_I64, IRExpr_Unop(Iop_1Uto64, guard));

		flush_counts(out, p);
		pmc_ir_add(out, &pmc_live[counter], held);
		if (pmc_fn_sb)
			pmc_ir_add_at(out, pmc_fn_sb, counter * PMC_FN_STRIDE * 8, held);
	}
	if (pmc_models_active && pmc_cache_sim) {
		flush_models(out, q);
		pmc_cache_data(out, addr, size, counter == PMC_TOOL_DW, guard);
	}
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

/* callgrind's guess that VEX inverted a conditional branch: the last
 * instruction's last exit goes to the next instruction.  Only the
 * superblock's last exit can be one. */
static Bool last_exit_inverted(const IRSB *in, Int from, Int *exits)
{
	Addr at = 0, next = 0;
	Bool to_next = False;

	*exits = 0;
	for (Int i = from; i < in->stmts_used; i++) {
		const IRStmt *st = in->stmts[i];

		if (st->tag == Ist_IMark) {
			at = (Addr)st->Ist.IMark.addr;
			next = at + st->Ist.IMark.len;
			to_next = False;
		} else if (st->tag == Ist_Exit) {
			const IRConst *d = st->Ist.Exit.dst;

			to_next = (d->tag == Ico_U64 ? (Addr)d->Ico.U64 : (Addr)d->Ico.U32) == next;
			(*exits)++;
		}
	}
	return to_next;
}

/* Counters this run was started without add nothing.  The fault that
 * pmcheck's tests inject: one instruction too few at each exit. */
static void zero_unasked(struct pending *p, Bool at_exit)
{
	if (at_exit && pmc_clo_miscount && p->n[PMC_TOOL_IR] > 1)
		p->n[PMC_TOOL_IR]--;
	if (!pmc_clo_memory)
		p->n[PMC_TOOL_DR] = p->n[PMC_TOOL_DW] = 0;
	if (!pmc_clo_branches)
		p->n[PMC_TOOL_BC] = p->n[PMC_TOOL_BI] = 0;
}

IRSB *pmc_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
		     const VexGuestExtents *vge, const VexArchInfo *archinfo_host, IRType gWordTy,
		     IRType hWordTy)
{
	IRSB *out = deepCopyIRSBExceptStmts(in);
	struct pending p = { { 0 } };
	struct last_load last = { False, 0, 0, NULL };
	struct queue q;
	Int insn = 0, i = 0, exits, exit_no = 0, insn_size = 0;
	Addr insn_at = 0, sb_at;
	Bool inverted;

	(void)closure;
	(void)layout;
	(void)vge;
	(void)archinfo_host;
	if (gWordTy != hWordTy || hWordTy != Ity_I64)
		VG_(tool_panic)("pmcheck: only 64-bit guests on 64-bit hosts");
	q.n = 0;
	q.last_fetched = ~(UWord)0;
	/* VEX's preamble (the self-modifying-code check) is not client code. */
	for (; i < in->stmts_used && in->stmts[i]->tag != Ist_IMark; i++)
		addStmtToIRSB(out, in->stmts[i]);
	/* The whole superblock is its first instruction's function's, as
	 * callgrind charges a block. */
	sb_at = i < in->stmts_used
			? (Addr)(in->stmts[i]->Ist.IMark.addr + in->stmts[i]->Ist.IMark.delta)
			: 0;
	pmc_ir_base(out);
	/* --pmcheck-fault=ill-typed-ir: a 32-bit read of the guest state written
	 * to a 64-bit temporary and stored, which VEX's IR check refuses (the test that
	 * --pmcheck-check-ir reaches it); without the check it runs. */
	if (pmc_clo_ill_typed_ir) {
		static ULong sink;
		IRTemp t = newIRTemp(out->tyenv, Ity_I64);

		addStmtToIRSB(out, IRStmt_WrTmp(t, IRExpr_Get(0, Ity_I32)));
		addStmtToIRSB(out, IRStmt_Store(Iend_LE, IRExpr_Const(IRConst_U64((ULong)(Addr)&sink)),
						IRExpr_RdTmp(t)));
	}
	pmc_fn_sb = pmc_functions && i < in->stmts_used ? pmc_fn_enter(out, sb_at) : NULL;
	inverted = last_exit_inverted(in, i, &exits);
	for (; i < in->stmts_used; i++) {
		IRStmt *st = in->stmts[i];

		switch (st->tag) {
		case Ist_IMark: {
			Int slot = pmc_nsites ? pmc_watch_slot_at((Addr)st->Ist.IMark.addr) : -1;

			insn++;
			insn_at = (Addr)(st->Ist.IMark.addr + st->Ist.IMark.delta);
			/* An instruction VEX could not decode has length 0. */
			insn_size = st->Ist.IMark.len ? (Int)st->Ist.IMark.len : 1;
			p.n[PMC_TOOL_IR]++;
			last.valid = False;
			queue(out, &q, EV_FETCH, insn, insn_at, insn_size, NULL);
			addStmtToIRSB(out, st);
			if (slot >= 0)
				pmc_ir_add(out, &pmc_live[PMC_TOOL_NFIXED + slot], IRExpr_Const(IRConst_U64(1)));
			continue;
		}
		case Ist_WrTmp:
			if (st->Ist.WrTmp.data->tag == Iex_Load) {
				Int size = sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty);
				IRExpr *addr = st->Ist.WrTmp.data->Iex.Load.addr;

				on_load(&p, &last, insn, size, addr);
				queue(out, &q, EV_READ, insn, insn_at, size, addr);
			}
			break;
		case Ist_Store: {
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.Store.data));

			on_store(&p, &last, insn, size, st->Ist.Store.addr);
			queue(out, &q, EV_WRITE, insn, insn_at, size, st->Ist.Store.addr);
			break;
		}
		case Ist_StoreG: {
			IRStoreG *sg = st->Ist.StoreG.details;

			guarded(out, &p, &q, PMC_TOOL_DW, sg->guard, sg->addr,
				sizeofIRType(typeOfIRExpr(in->tyenv, sg->data)));
			last.valid = False;
			break;
		}
		case Ist_LoadG: {
			IRLoadG *lg = st->Ist.LoadG.details;
			IRType loaded = Ity_INVALID, widened = Ity_INVALID;

			typeOfIRLoadGOp(lg->cvt, &widened, &loaded);
			guarded(out, &p, &q, PMC_TOOL_DR, lg->guard, lg->addr, sizeofIRType(loaded));
			last.valid = False;
			break;
		}
		case Ist_Dirty: {
			IRDirty *d = st->Ist.Dirty.details;
			/* callgrind caps the size at the smallest line. */
			Int cap = pmc_cache_sim ? pmc_cache_max_access() : 64;
			Int size = d->mSize > cap ? cap : d->mSize;

			if (d->mFx == Ifx_Read || d->mFx == Ifx_Modify) {
				on_load(&p, &last, insn, size, d->mAddr);
				queue(out, &q, EV_READ, insn, insn_at, size, d->mAddr);
			}
			if (d->mFx == Ifx_Write || d->mFx == Ifx_Modify) {
				on_store(&p, &last, insn, size, d->mAddr);
				queue(out, &q, EV_WRITE, insn, insn_at, size, d->mAddr);
			}
			break;
		}
		case Ist_CAS: {
			IRCAS *cas = st->Ist.CAS.details;
			Int size = sizeofIRType(typeOfIRExpr(in->tyenv, cas->dataLo));

			if (cas->dataHi)
				size *= 2;
			on_load(&p, &last, insn, size, cas->addr);
			queue(out, &q, EV_READ, insn, insn_at, size, cas->addr);
			on_store(&p, &last, insn, size, cas->addr);
			queue(out, &q, EV_WRITE, insn, insn_at, size, cas->addr);
			last.valid = False;
			break;
		}
		case Ist_LLSC:
			if (!st->Ist.LLSC.storedata) {
				Int size = sizeofIRType(typeOfIRTemp(in->tyenv, st->Ist.LLSC.result));

				p.n[PMC_TOOL_DR]++;
				queue(out, &q, EV_READ, insn, insn_at, size, st->Ist.LLSC.addr);
				flush_models(out, &q);
			} else {
				Int size = sizeofIRType(typeOfIRExpr(in->tyenv, st->Ist.LLSC.storedata));

				on_store(&p, &last, insn, size, st->Ist.LLSC.addr);
				queue(out, &q, EV_WRITE, insn, insn_at, size, st->Ist.LLSC.addr);
			}
			last.valid = False;
			break;
		case Ist_Exit:
			exit_no++;
			if (st->Ist.Exit.jk == Ijk_Boring || st->Ist.Exit.jk == Ijk_Call ||
			    st->Ist.Exit.jk == Ijk_Ret) {
				p.n[PMC_TOOL_BC]++;
				queue(out, &q, EV_COND, insn, insn_at, 0, st->Ist.Exit.guard);
				if (q.n && q.ev[q.n - 1].kind == EV_COND)
					q.ev[q.n - 1].inverted = inverted && exit_no == exits;
			}
			zero_unasked(&p, True);
			flush_counts(out, &p);
			flush_models(out, &q);
			last.valid = False;
			break;
		default:
			break;
		}
		addStmtToIRSB(out, st);
	}
	if ((in->jumpkind == Ijk_Boring || in->jumpkind == Ijk_Call) && in->next->tag == Iex_RdTmp) {
		p.n[PMC_TOOL_BI]++;
		queue(out, &q, EV_INDIRECT, insn, insn_at, 0, in->next);
	}
	zero_unasked(&p, False);
	flush_counts(out, &p);
	flush_models(out, &q);
	if (pmc_fn_sb)
		pmc_fn_leave(out, sb_at, in->jumpkind, in->next, pmc_fn_sb);
	pmc_ir_base_end();
	return out;
}
