/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The parts of pmcheck's valgrind tool, each calling only the ones below
 * it, top down: the core (pmc_main.c: options, threads, client requests),
 * the instrumentation (pmc_instrument.c), the two models (pmc_branch.c,
 * pmc_cache.c), the function costs (pmc_fn.c), the watched functions
 * (pmc_watch.c), the IR helpers (pmc_ir.c) and what they all share
 * (pmc_state.c).  layers.files_acyclic fails on a circle.  The
 * definitions the tool counts by are in pmc_main.c's header comment.
 */
#ifndef PMC_TOOL_INT_H
#define PMC_TOOL_INT_H

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"

#include "pmcheck_tool.h"

#define NCOUNTERS (PMC_TOOL_NFIXED + PMC_TOOL_MAX_WATCH)

/* pmc_state.c: the running thread's counters (generated code adds to
 * these addresses; pmc_main.c swaps them per thread) and the options the
 * instrumentation follows (pmc_main.c parses them). */
extern ULong pmc_live[NCOUNTERS];
extern Bool pmc_clo_memory, pmc_clo_branches, pmc_clo_miscount, pmc_clo_ill_typed_ir;
/* The models are simulating now (callgrind's instrumentation state). */
extern Bool pmc_models_active;
/* After the options are parsed: refuse opt with why (a line) and exit,
 * as valgrind refuses a bad option while parsing them. */
__attribute__((noreturn)) void pmc_refuse_option(const HChar *opt, const HChar *why);

/* pmc_ir.c: IR helpers. */
/* A new temporary of type ty holding e (which must be flat). */
IRExpr *pmc_ir_tmp(IRSB *out, IRType ty, IRExpr *e);
/* *counter += amount (an I64 atom), in generated code. */
void pmc_ir_add(IRSB *out, ULong *counter, IRExpr *amount);
/* *(base + offset bytes) += amount, in generated code. */
void pmc_ir_add_at(IRSB *out, IRExpr *base, Int offset, IRExpr *amount);
/* Where p is, as an I64 atom for one use: an offset from the superblock's
 * base (pmc_ir_base, at its start; pmc_ir_base_end, at its end) when p is
 * the tool's own data. */
void pmc_ir_base(IRSB *out);
void pmc_ir_base_end(void);
IRExpr *pmc_ir_addr(IRSB *out, const void *p);

/* pmc_instrument.c */
IRSB *pmc_instrument(VgCallbackClosure *closure, IRSB *in, const VexGuestLayout *layout,
		     const VexGuestExtents *vge, const VexArchInfo *archinfo_host, IRType gWordTy,
		     IRType hWordTy);

/* pmc_watch.c: entries to watched functions. */
Int pmc_watch_slot_at(Addr a); /* the calls slot of an entry address, or -1 */
extern Int pmc_nsites;         /* mapped entries (0: nothing to look up) */
Int pmc_watch_add(const HChar *path, ULong offset);
void pmc_watch_map_existing(Bool translated);
const HChar *pmc_watch_path(Int slot);
Int pmc_watch_count(void);
void pmc_watch_new_mapping(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle);
void pmc_watch_mapping_gone(Addr a, SizeT len);

/* pmc_fn.c: per-function self costs (--pmcheck-functions). */
extern Bool pmc_functions;
/* A function's counters are PMC_FN_STRIDE ULongs apart, in
 * enum pmc_tool_counter order: side by side, so that the additions of one
 * exit touch one or two cache lines. */
#define PMC_FN_STRIDE 1
/* While a superblock is instrumented: where its function's counters are
 * (an I64 atom: a constant, or for code without a symbol and a PLT stub,
 * the jumping function's, loaded when it runs), or NULL when no function
 * is counted.  The models add their
 * misses there too. */
extern IRExpr *pmc_fn_sb;
/* Code at a superblock's start that finds its function's counters. */
IRExpr *pmc_fn_enter(IRSB *out, Addr a);
/* Code at the end of the superblock at from, which leaves for next (an
 * atom) by a jump of kind jk, here being its counters: whose costs the
 * code there adds to, when it has no symbol of its own (pmc_fn.c). */
void pmc_fn_leave(IRSB *out, Addr from, IRJumpKind jk, IRExpr *next, IRExpr *here);
/* Each thread's charging state (with --pmcheck-functions=yes): made,
 * swapped when the scheduler switches, emptied for a new thread. */
void pmc_fn_threads_init(void);
void pmc_fn_switch(ThreadId from, ThreadId to);
void pmc_fn_thread_new(ThreadId tid, Bool running);
/* A DUMP_STATS_AT: an interval being gathered ends, its rows becoming the
 * last interval's; with keep_next, gathering starts for the next one. */
void pmc_fn_dump(Bool keep_next);
/* FUNCTIONS: the last interval's rows to a file in dir, its name to path
 * (size bytes), counting the counters of mask counted; 1, or 0. */
Int pmc_fn_write(const HChar *dir, HChar *path, SizeT size, UInt counted);

/* pmc_cache.c: I1, D1 and LL. */
extern Bool pmc_cache_sim; /* --pmcheck-cache-sim */
Bool pmc_cache_option(const HChar *arg);
void pmc_cache_usage(void);
void pmc_cache_init(void); /* after the options: checks the geometry, or exits */
void pmc_cache_clear(void);
Int pmc_cache_max_access(void); /* the largest access the models take (a line) */
/* Code for one instruction fetch at a constant address; *last is the block
 * this superblock fetched from last (~0: none yet). */
void pmc_cache_fetch(IRSB *out, Addr a, Int size, UWord *last);
/* Code for one data access of size bytes at ea (an I64 atom), done when
 * guard (an I1 atom, or NULL: always) holds. */
void pmc_cache_data(IRSB *out, IRExpr *ea, Int size, Bool write, IRExpr *guard);

/* pmc_branch.c: the conditional and indirect branch predictors. */
extern Bool pmc_branch_sim; /* --pmcheck-branch-sim */
void pmc_branch_init(void); /* after the options */
/* Code for a conditional branch of the instruction at insn, taken when
 * taken (an I1 atom) holds, or when it does not if inverted. */
void pmc_branch_cond(IRSB *out, Addr insn, IRExpr *taken, Bool inverted);
/* Code for an indirect branch of the instruction at insn to dst (I64). */
void pmc_branch_indirect(IRSB *out, Addr insn, IRExpr *dst);

#endif
