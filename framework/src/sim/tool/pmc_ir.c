/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: the IR helpers every part that generates code
 * uses (the instrumentation, the models, the function costs) -- a new
 * temporary, an addition to a counter in memory, and the tool's own data
 * addressed from one base per superblock.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"

#include "pmc_tool_int.h"

IRExpr *pmc_ir_tmp(IRSB *out, IRType ty, IRExpr *e)
{
	IRTemp t = newIRTemp(out->tyenv, ty);

	addStmtToIRSB(out, IRStmt_WrTmp(t, e));
	return IRExpr_RdTmp(t);
}

/* base + offset, as an atom for one use (folded into the host's address). */
static IRExpr *at(IRSB *out, IRExpr *base, Int offset)
{
	if (base->tag == Iex_Const)
		return mkIRExpr_HWord((HWord)base->Iex.Const.con->Ico.U64 + (HWord)offset);
	return pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, base, IRExpr_Const(IRConst_U64((ULong)offset))));
}

void pmc_ir_add_at(IRSB *out, IRExpr *base, Int offset, IRExpr *amount)
{
	IRExpr *old = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, at(out, base, offset)));
	IRExpr *sum = pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, old, amount));

	addStmtToIRSB(out, IRStmt_Store(Iend_LE, at(out, base, offset), sum));
}

/*
 * The tool's own data (counters, the models' tables) is addressed from a
 * base loaded once at the superblock's start: an address written as a
 * constant costs the host a 10-byte move into a register at every use
 * (one for the load of a counter and one more for its store), and an
 * offset from a register costs nothing.  VEX cannot fold a load, so the
 * base stays a register.  NULL while no superblock is instrumented.
 */
static IRExpr *base;
static const void *base_value = pmc_live;

void pmc_ir_base(IRSB *out)
{
	base = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, mkIRExpr_HWord((HWord)&base_value)));
}

void pmc_ir_base_end(void)
{
	base = NULL;
}

IRExpr *pmc_ir_addr(IRSB *out, const void *p)
{
	Long off = (Long)((const UChar *)p - (const UChar *)pmc_live);

	/* A new temporary for each use: VEX folds a temporary used once
	 * into the host instruction's address. */
	if (!base || off != (Long)(Int)off)
		return mkIRExpr_HWord((HWord)p);
	return pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, base, IRExpr_Const(IRConst_U64((ULong)off))));
}

void pmc_ir_add(IRSB *out, ULong *counter, IRExpr *amount)
{
	IRExpr *old = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, counter)));
	IRExpr *sum = pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Add64, old, amount));

	addStmtToIRSB(out, IRStmt_Store(Iend_LE, pmc_ir_addr(out, counter), sum));
}
