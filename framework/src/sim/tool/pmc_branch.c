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
 * the last HISTORY_BITS outcomes above the branch's low ADDRESS_BITS. */
static UChar counters[1 << (HISTORY_BITS + ADDRESS_BITS)];
static ULong history; /* outcomes, the latest in bit 0 */
/* The last target of each indirect branch, by its low TARGET_BITS. */
static ULong targets[1 << TARGET_BITS];

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
	IRExpr *went = op1(out, Ity_I64, Iop_1Uto64, taken);
	IRExpr *h, *index, *where, *c, *predicted, *missed, *up, *down, *next;

	if (inverted) {
		went = op2(out, Ity_I64, Iop_Xor64, went, u64(1));
		taken = op1(out, Ity_I1, Iop_Not1, taken);
	}
	h = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&history)));
	index = op2(out, Ity_I64, Iop_Shl64,
		    op2(out, Ity_I64, Iop_And64, h, u64((1u << HISTORY_BITS) - 1)),
		    IRExpr_Const(IRConst_U8(ADDRESS_BITS)));
	index = op2(out, Ity_I64, Iop_Or64, index, u64(insn & ((1u << ADDRESS_BITS) - 1)));
	where = op2(out, Ity_I64, Iop_Add64, index, mkIRExpr_HWord((HWord)counters));
	c = op1(out, Ity_I64, Iop_8Uto64, pmc_ir_tmp(out, Ity_I8, IRExpr_Load(Iend_LE, Ity_I8, where)));
	predicted = op1(out, Ity_I64, Iop_1Uto64, op2(out, Ity_I1, Iop_CmpLT64U, u64(1), c));
	missed = op2(out, Ity_I64, Iop_Xor64, predicted, went);
	pmc_ir_add(out, &pmc_live[PMC_TOOL_BCM], missed);
	if (pmc_fn_sb)
		pmc_ir_add_at(out, pmc_fn_sb, PMC_TOOL_BCM * PMC_FN_STRIDE * 8, missed);
	/* Towards 3 when taken, towards 0 when not. */
	up = op2(out, Ity_I64, Iop_Add64, c,
		 op1(out, Ity_I64, Iop_1Uto64, op2(out, Ity_I1, Iop_CmpLT64U, c, u64(3))));
	down = op2(out, Ity_I64, Iop_Sub64, c,
		   op1(out, Ity_I64, Iop_1Uto64, op2(out, Ity_I1, Iop_CmpNE64, c, u64(0))));
	next = pmc_ir_tmp(out, Ity_I64, IRExpr_ITE(taken, up, down));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, where, op1(out, Ity_I8, Iop_64to8, next)));
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, mkIRExpr_HWord((HWord)&history),
					op2(out, Ity_I64, Iop_Or64,
					    op2(out, Ity_I64, Iop_Shl64, h, IRExpr_Const(IRConst_U8(1))),
					    went)));
}

void pmc_branch_indirect(IRSB *out, Addr insn, IRExpr *dst)
{
	IRExpr *where = mkIRExpr_HWord((HWord)&targets[insn & ((1u << TARGET_BITS) - 1)]);
	IRExpr *before = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, where));
	IRExpr *missed = op1(out, Ity_I64, Iop_1Uto64, op2(out, Ity_I1, Iop_CmpNE64, before, dst));

	pmc_ir_add(out, &pmc_live[PMC_TOOL_BIM], missed);
	if (pmc_fn_sb)
		pmc_ir_add_at(out, pmc_fn_sb, PMC_TOOL_BIM * PMC_FN_STRIDE * 8, missed);
	addStmtToIRSB(out, IRStmt_Store(Iend_LE, where, dst));
}
