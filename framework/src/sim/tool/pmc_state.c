/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: what its parts share, at the bottom of the
 * tool so that each part reads it without calling the one above -- the
 * running thread's counters, the options the instrumentation follows
 * (pmc_main.c parses them), whether the models simulate now, and the
 * refusal of an option after parsing.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcprint.h"

#include "pmc_tool_int.h"

/* The running thread's counters: generated code adds to these addresses
 * (pmc_main.c swaps them when the scheduler switches threads). */
ULong pmc_live[NCOUNTERS];

Bool pmc_clo_memory = True;
Bool pmc_clo_branches = True;
/* Fault injection for pmcheck's tests: --pmcheck-fault=miscount counts
 * one instruction too few wherever a conditional branch is left, so that
 * the known-work check must catch it. */
Bool pmc_clo_miscount;
/* --pmcheck-fault=ill-typed-ir: instruments with IR VEX's check refuses. */
Bool pmc_clo_ill_typed_ir;

Bool pmc_models_active;

void pmc_refuse_option(const HChar *opt, const HChar *why)
{
	VG_(fmsg)("Bad option: %s\n", opt);
	VG_(fmsg)("%s", why);
	VG_(fmsg)("Use --help for more information or consult the user manual.\n");
	VG_(exit)(1);
}
