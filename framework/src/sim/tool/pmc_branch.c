/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: the branch predictors (the rules are in
 * pmc_main.c's header comment, "Branch mispredictions"), as generated
 * code: a prediction is a few loads, compares and stores, no call.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"

#include "pmc_tool_int.h"

Bool pmc_branch_sim;

#define HISTORY_BITS 7
#define ADDRESS_BITS 7
#define TARGET_BITS 9

/* Two-bit saturating counters (0..3, taken predicted from 2), indexed by
 * the last HISTORY_BITS outcomes above the branch's low ADDRESS_BITS.  A
 * counter's byte holds the counter times 16: with the outcome times 8 it
 * is the byte offset of its transition in `next`. */
static UChar counters[1 << (HISTORY_BITS + ADDRESS_BITS)];
/* The last HISTORY_BITS outcomes (the latest lowest), kept shifted into
 * place as the index's upper bits, so that the generated code adds it to
 * the counters' address for this branch and has its counter's address. */
static ULong history_index;
#define HISTORY_MASK (((1ULL << HISTORY_BITS) - 1) << ADDRESS_BITS)
/* The transition of a counter c on an outcome (taken: 1), at next[2c +
 * outcome]: in its low byte the counter moved one towards 3 or 0 (times
 * 16, as the counters keep it), and above bit 32 whether c had predicted
 * the outcome wrongly (1) or not (0), to be added to Bcm as it is. */
#define MISSED_SHIFT 32
static ULong next[8];
/* The last target of each indirect branch, by its low TARGET_BITS. */
static ULong targets[1 << TARGET_BITS];

void pmc_branch_init(void)
{
	for (Int c = 0; c < 4; c++)
		for (Int taken = 0; taken < 2; taken++) {
			Int moved = taken ? (c < 3 ? c + 1 : 3) : (c > 0 ? c - 1 : 0);
			ULong missed = (c >= 2) != taken;

			next[2 * c + taken] = ((ULong)moved << 4) | (missed << MISSED_SHIFT);
		}
}

static IRExpr *u64(ULong v)
{
	return IRExpr_Const(IRConst_U64(v));
}

static IRExpr *op1(IRSB *out, IRType ty, IROp op, IRExpr *a)
{
	return pmc_ir_tmp(out, ty, IRExpr_Unop(op, a));
}

static IRExpr *op2(IRSB *out, IRType ty, IROp op, IRExpr *a, IRExpr *b)
{
	return pmc_ir_tmp(out, ty, IRExpr_Binop(op, a, b));
}

void pmc_branch_cond(IRSB *out, Addr insn, IRExpr *taken, Bool inverted)
{
	/* The outcome times 8 (Not1 costs the host nothing: the condition
	 * is tested the other way). */
	IRExpr *went8 = op2(out, Ity_I64, Iop_Shl64,
			    op1(out, Ity_I64, Iop_1Uto64, inverted ? op1(out, Ity_I1, Iop_Not1, taken) : taken),
			    IRExpr_Const(IRConst_U8(3)));
	IRExpr *h, *where, *b, *t, *missed, *h2;

	h = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, &history_index)));
	where = op2(out, Ity_I64, Iop_Add64, h,
		    mkIRExpr_HWord((HWord)&counters[insn & ((1u << ADDRESS_BITS) - 1)]));
	b = op1(out, Ity_I64, Iop_8Uto64, pmc_ir_tmp(out, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, where)));
	t = pmc_ir_tmp(out, Ity_I64,
		       IRExpr_Load(Iend_LE, Ity_I64,
				   op2(out, Ity_I64, Iop_Add64, op2(out, Ity_I64, Iop_Or64, b, went8),
				       mkIRExpr_HWord((HWord)next))));
	missed = op2(out, Ity_I64, Iop_Shr64, t, IRExpr_Const(IRConst_U8(MISSED_SHIFT)));
	pmc_ir_add(out, &pmc_live[PMC_TOOL_BCM], missed);
	if (pmc_fn_sb)
		pmc_ir_add_at(out, pmc_fn_sb, PMC_TOOL_BCM * PMC_FN_STRIDE * 8, missed);
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, where, op1(out, Ity_I8, Iop_64to8, t)));
	/* The outcome enters the history (went8 << 4: the outcome at bit 7). */
	h2 = op2(out, Ity_I64, Iop_Or64, op2(out, Ity_I64, Iop_Shl64, h, IRExpr_Const(IRConst_U8(1))),
		 op2(out, Ity_I64, Iop_Shl64, went8, IRExpr_Const(IRConst_U8(ADDRESS_BITS - 3))));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, &history_index),
					op2(out, Ity_I64, Iop_And64, h2, u64(HISTORY_MASK))));
}

void pmc_branch_indirect(IRSB *out, Addr insn, IRExpr *dst)
{
	const ULong *target = &targets[insn & ((1u << TARGET_BITS) - 1)];
	IRExpr *before = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, target)));
	IRExpr *missed = op1(out, Ity_I64, Iop_1Uto64, op2(out, Ity_I1, Iop_CmpNE64, before, dst));

	pmc_ir_add(out, &pmc_live[PMC_TOOL_BIM], missed);
	if (pmc_fn_sb)
		pmc_ir_add_at(out, pmc_fn_sb, PMC_TOOL_BIM * PMC_FN_STRIDE * 8, missed);
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, target), dst));
}
