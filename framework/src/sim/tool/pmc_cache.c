/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: the I1, D1 and LL cache models (the rules are
 * in pmc_main.c's header comment, "Cache misses").
 *
 * Each cache is a table of lines, one row per set, most recently used
 * first.  The generated code looks at the first entry of the row only: an
 * access that finds its line there, wholly inside it, hits and changes
 * nothing; every other access calls a slow path, which does what
 * callgrind does.  I1 and D1 keep each line as its address (the block
 * number shifted back into place), so that one subtraction and one
 * unsigned compare tell the generated code both that the line is the
 * first and that the access does not run past its end.
 * Instruction fetches are known when the code is translated, so a fetch
 * from the line the superblock fetched from last (still the first of its
 * row: nothing else fetches in between) needs no code at all.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"

#include "pmc_tool_int.h"

Bool pmc_cache_sim;

struct cache {
	const HChar *name;
	const HChar *option; /* as given, for messages */
	Long size, ways, line; /* bytes, ways, bytes; -1: not given */
	Int line_bits, set_bits;
	UWord set_mask;
	/* sets x ways entries, most recently used first: the lines'
	 * addresses (a block number << line_bits; 0, a line no program
	 * touches, when empty), or, in a narrow cache, the 32 bits of the
	 * block above its set (half the memory: LL's rows are read on every
	 * L1 miss, and the host's caches are what the simulation waits for;
	 * EMPTY when empty). */
	UWord *rows;
	UInt *narrow;
};

/* A narrow cache's entry that no block has.  The widest client address
 * (47 bits) leaves 31 bits above a narrow cache's line and set bits. */
#define EMPTY 0xffffffffu
#define ADDRESS_BITS 47

/* Rows for an L1 of up to SMALL_ROWS lines (512 KiB of 64-byte lines). */
#define SMALL_ROWS 8192
static UWord small_rows[2][SMALL_ROWS];

static struct cache I1 = { "I1", NULL, -1, -1, -1, 0, 0, 0, NULL, NULL };
static struct cache D1 = { "D1", NULL, -1, -1, -1, 0, 0, 0, NULL, NULL };
static struct cache LL = { "LL", NULL, -1, -1, -1, 0, 0, 0, NULL, NULL };

/* callgrind's smallest line: a line of at least 16 bytes keeps every
 * instruction within two lines. */
#define MIN_LINE 16

/* Why c cannot be simulated, or NULL.  The geometries refused are the
 * ones valgrind refuses (cachegrind's check of --I1, --D1, --LL); the
 * reasons are tried in an order that names the plainest first. */
static const HChar *unusable(const struct cache *c)
{
	if (c->size <= 0 || c->ways <= 0 || c->line <= 0)
		return "size, ways and line size must be positive";
	if (c->size > 0x7fffffff || c->ways > 0x7fffffff || c->line > 0x7fffffff)
		return "a figure is too large";
	if (VG_(log2)((UInt)c->line) == -1)
		return "the line size is not a power of two";
	if (c->line < MIN_LINE)
		return "the line size is under 16 bytes";
	if (c->size <= c->line)
		return "the size is not larger than one line";
	if (c->ways > c->size / c->line)
		return "it has more ways than lines";
	if (c->size % (c->line * c->ways) != 0 ||
	    VG_(log2)((UInt)(c->size / c->line / c->ways)) == -1)
		return "the number of sets (size / (ways x line size)) is not a power of two";
	return NULL;
}

static void parse_geometry(struct cache *c, const HChar *arg, const HChar *value)
{
	HChar *end;
	const HChar *why;

	c->option = arg;
	c->size = VG_(strtoll10)(value, &end);
	if (*end != ',')
		goto syntax;
	c->ways = VG_(strtoll10)(end + 1, &end);
	if (*end != ',')
		goto syntax;
	c->line = VG_(strtoll10)(end + 1, &end);
	if (*end != '\0')
		goto syntax;
	why = unusable(c);
	if (why)
		VG_(fmsg_bad_option)(arg, "the %s cache model cannot simulate this geometry: %s\n",
				     c->name, why);
	return;
syntax:
	VG_(fmsg_bad_option)(arg, "expected SIZE,WAYS,LINE_SIZE in bytes (e.g. 32768,8,64)\n");
}

Bool pmc_cache_option(const HChar *arg)
{
	const HChar *value;

	if VG_BOOL_CLO (arg, "--pmcheck-cache-sim", pmc_cache_sim) {
	} else if VG_STR_CLO (arg, "--I1", value) {
		parse_geometry(&I1, arg, value);
	} else if VG_STR_CLO (arg, "--D1", value) {
		parse_geometry(&D1, arg, value);
	} else if VG_STR_CLO (arg, "--LL", value) {
		parse_geometry(&LL, arg, value);
	} else
		return False;
	return True;
}

void pmc_cache_usage(void)
{
	VG_(printf)("    --pmcheck-cache-sim=no|yes  simulate I1, D1 and LL as callgrind does [no]\n"
		    "    --I1=SIZE,WAYS,LINE         the I1 cache (bytes, ways, bytes)\n"
		    "    --D1=SIZE,WAYS,LINE         the D1 cache\n"
		    "    --LL=SIZE,WAYS,LINE         the last-level cache\n");
}

Int pmc_cache_max_access(void)
{
	Long m = I1.line < D1.line ? I1.line : D1.line;

	return (Int)(LL.line < m ? LL.line : m);
}

void pmc_cache_init(void)
{
	struct cache *all[3] = { &I1, &D1, &LL };
	Int largest = VG_(machine_get_size_of_largest_guest_register)();
	HChar why[160];

	if (!pmc_cache_sim)
		return;
	for (Int i = 0; i < 3; i++)
		if (all[i]->size < 0)
			pmc_refuse_option("--pmcheck-cache-sim=yes",
					  "the cache models need the geometry of all three caches: --I1, --D1 and --LL\n");
	/* An access is never split over more than two lines, at any level. */
	if (pmc_cache_max_access() < largest) {
		const struct cache *small = I1.line <= D1.line && I1.line <= LL.line ? &I1
					    : D1.line <= LL.line		     ? &D1
										     : &LL;

		VG_(snprintf)(why, sizeof(why),
			      "the smallest line size (%d bytes) is smaller than the largest register (%d bytes), so one access could span three lines\n",
			      pmc_cache_max_access(), largest);
		pmc_refuse_option(small->option, why);
	}
	for (Int i = 0; i < 3; i++) {
		struct cache *c = all[i];
		UWord sets = (UWord)(c->size / c->line / c->ways);

		c->line_bits = VG_(log2)((UInt)c->line);
		c->set_bits = VG_(log2)((UInt)sets);
		c->set_mask = sets - 1;
		/* The generated code reads I1's and D1's rows: those stay wide,
		 * and, when they fit, in the tool's own data, whose addresses
		 * are small enough for a host instruction's displacement. */
		if (c == &LL && ADDRESS_BITS - c->line_bits - c->set_bits <= 31)
			c->narrow = VG_(malloc)("pmcheck.cache", sets * (UWord)c->ways * sizeof(UInt));
		else if (c != &LL && sets * (UWord)c->ways <= SMALL_ROWS)
			c->rows = small_rows[c == &D1];
		else
			c->rows = VG_(malloc)("pmcheck.cache", sets * (UWord)c->ways * sizeof(UWord));
	}
	pmc_cache_clear();
}

/* Empty, as callgrind leaves its caches when instrumentation is switched:
 * every entry line 0 (which no program fetches or reads), or EMPTY. */
void pmc_cache_clear(void)
{
	struct cache *all[3] = { &I1, &D1, &LL };

	for (Int i = 0; pmc_cache_sim && i < 3; i++) {
		UWord n = (all[i]->set_mask + 1) * (UWord)all[i]->ways;

		if (all[i]->narrow)
			VG_(memset)(all[i]->narrow, 0xff, n * sizeof(UInt));
		else
			VG_(memset)(all[i]->rows, 0, n * sizeof(UWord));
	}
}

/* One line (its address) in its row: True when it was there.  It becomes
 * the first (most recently used); on a miss the last one leaves. */
static inline __attribute__((always_inline)) Bool touch_wide(UWord *row, Int ways, UWord line)
{
	UWord moved = row[0], next;

	if (moved == line)
		return True;
	/* Each entry down one place until the line's own place. */
	for (Int i = 1; i < ways; i++) {
		next = row[i];
		row[i] = moved;
		if (next == line) {
			row[0] = line;
			return True;
		}
		moved = next;
	}
	row[0] = line; /* a miss: the least recently used has left */
	return False;
}

static inline __attribute__((always_inline)) Bool touch_narrow(UInt *row, Int ways, UInt tag)
{
	UInt moved = row[0], next;

	if (moved == tag)
		return True;
	for (Int i = 1; i < ways; i++) {
		next = row[i];
		row[i] = moved;
		if (next == tag) {
			row[0] = tag;
			return True;
		}
		moved = next;
	}
	row[0] = tag;
	return False;
}

static inline __attribute__((always_inline)) Bool touch(struct cache *c, UWord block)
{
	UWord set = block & c->set_mask;

	if (c->narrow) {
		UWord tag = block >> c->set_bits;

		if (tag >= EMPTY)
			VG_(tool_panic)("pmcheck: an address wider than 47 bits reached the LL model");
		return touch_narrow(c->narrow + set * (UWord)c->ways, (Int)c->ways, (UInt)tag);
	}
	return touch_wide(c->rows + set * (UWord)c->ways, (Int)c->ways, block << c->line_bits);
}

/* One access: True for a miss.  An access over two lines touches both
 * and misses when either does (one miss, not two). */
static inline __attribute__((always_inline)) Bool miss(struct cache *c, Addr a, UWord size)
{
	UWord first = a >> c->line_bits, last = (a + size - 1) >> c->line_bits;
	Bool hit = touch(c, first);

	if (last != first) {
		Bool hit2 = touch(c, last);

		hit = hit && hit2;
	}
	return !hit;
}

/* The slow paths.  Generated code passes as few arguments as it can: every
 * argument is an instruction or two at each access, run whether the call
 * is made or not.  Without function costs a data access passes only its
 * address, to one helper per size, and a fetch its address with the size
 * in the top byte; with them, the function's counters too. */
/* One access of size bytes at a to l1 (I1 or D1), and on its miss to LL;
 * l1_miss and ll_miss are the counters the misses go to. */
static inline __attribute__((always_inline)) void simulate(struct cache *l1, Addr a, UWord size, ULong *fn,
							   Int l1_miss, Int ll_miss)
{
	if (miss(l1, a, size)) {
		pmc_live[l1_miss]++;
		if (fn)
			fn[l1_miss * PMC_FN_STRIDE]++;
		if (miss(&LL, a, size)) {
			pmc_live[ll_miss]++;
			if (fn)
				fn[ll_miss * PMC_FN_STRIDE]++;
		}
	}
}

#define fetch(a, size, fn) simulate(&I1, a, size, fn, PMC_TOOL_I1MR, PMC_TOOL_ILMR)
#define data(a, size, fn, l1_miss, ll_miss) simulate(&D1, a, size, fn, l1_miss, ll_miss)

#define PACK_SHIFT 56

static VG_REGPARM(1) void fetch_packed(UWord packed)
{
	fetch(packed & ((1UL << PACK_SHIFT) - 1), packed >> PACK_SHIFT, NULL);
}

static VG_REGPARM(3) void fetch_fn(Addr a, UWord size, ULong *fn)
{
	fetch(a, size, fn);
}

static VG_REGPARM(3) void read_fn(Addr a, UWord size, ULong *fn)
{
	data(a, size, fn, PMC_TOOL_D1MR, PMC_TOOL_DLMR);
}

static VG_REGPARM(3) void write_fn(Addr a, UWord size, ULong *fn)
{
	data(a, size, fn, PMC_TOOL_D1MW, PMC_TOOL_DLMW);
}

#define SIZED(n)                                                          \
	static VG_REGPARM(1) void read_##n(Addr a)                        \
	{                                                                 \
		data(a, n, NULL, PMC_TOOL_D1MR, PMC_TOOL_DLMR);           \
	}                                                                 \
	static VG_REGPARM(1) void write_##n(Addr a)                       \
	{                                                                 \
		data(a, n, NULL, PMC_TOOL_D1MW, PMC_TOOL_DLMW);           \
	}
SIZED(1)
SIZED(2)
SIZED(4)
SIZED(8)
SIZED(16)
SIZED(32)

/* The one-argument helpers, by log2 of the size. */
static const struct {
	const HChar *read_name, *write_name;
	void *read, *write;
} sized[6] = {
	{ "pmcheck_read_1", "pmcheck_write_1", (void *)read_1, (void *)write_1 },
	{ "pmcheck_read_2", "pmcheck_write_2", (void *)read_2, (void *)write_2 },
	{ "pmcheck_read_4", "pmcheck_write_4", (void *)read_4, (void *)write_4 },
	{ "pmcheck_read_8", "pmcheck_write_8", (void *)read_8, (void *)write_8 },
	{ "pmcheck_read_16", "pmcheck_write_16", (void *)read_16, (void *)write_16 },
	{ "pmcheck_read_32", "pmcheck_write_32", (void *)read_32, (void *)write_32 },
};

static void call_when(IRSB *out, const HChar *name, void *fn, Int regparms, IRExpr **args, IRExpr *when)
{
	IRDirty *d = unsafeIRDirty_0_N(regparms, name, VG_(fnptr_to_fnentry)(fn), args);

	d->guard = when;
	addStmtToIRSB(out, IRStmt_Dirty(d));
}

static void call_fetch(IRSB *out, Addr a, Int size, IRExpr *when)
{
	if (pmc_fn_sb)
		call_when(out, "pmcheck_fetch_fn", (void *)fetch_fn, 3,
			  mkIRExprVec_3(mkIRExpr_HWord((HWord)a), mkIRExpr_HWord((HWord)size), pmc_fn_sb), when);
	else
		call_when(out, "pmcheck_fetch", (void *)fetch_packed, 1,
			  mkIRExprVec_1(mkIRExpr_HWord((HWord)a | ((HWord)size << PACK_SHIFT))), when);
}

static void call_data(IRSB *out, IRExpr *ea, Int size, Bool write, IRExpr *when)
{
	Int k = VG_(log2)((UInt)size);

	if (pmc_fn_sb || k < 0 || k > 5)
		call_when(out, write ? "pmcheck_write_fn" : "pmcheck_read_fn",
			  write ? (void *)write_fn : (void *)read_fn, 3,
			  mkIRExprVec_3(ea, mkIRExpr_HWord((HWord)size),
					pmc_fn_sb ? pmc_fn_sb : mkIRExpr_HWord(0)),
			  when);
	else
		call_when(out, write ? sized[k].write_name : sized[k].read_name,
			  write ? sized[k].write : sized[k].read, 1, mkIRExprVec_1(ea), when);
}

/* The byte offset of the row of the set an address ea (an I64 atom) is
 * in: its set's bits masked out and moved to a row's size, one operation
 * when the line is as large as a row (D1's default: 64 bytes, 8 ways). */
static IRExpr *row_offset(IRSB *out, const struct cache *c, IRExpr *ea)
{
	ULong bytes = (ULong)c->ways * sizeof(UWord);
	Int shift = VG_(log2)((UInt)bytes);
	IRExpr *bits = pmc_ir_tmp(out, Ity_I64,
				  IRExpr_Binop(Iop_And64, ea,
					       IRExpr_Const(IRConst_U64((ULong)c->set_mask << c->line_bits))));

	if (shift < 0)
		return pmc_ir_tmp(out, Ity_I64,
				  IRExpr_Binop(Iop_Mul64,
					       pmc_ir_tmp(out, Ity_I64,
							  IRExpr_Binop(Iop_Shr64, bits,
								       IRExpr_Const(IRConst_U8((UChar)c->line_bits)))),
					       IRExpr_Const(IRConst_U64(bytes))));
	if (shift < c->line_bits)
		return pmc_ir_tmp(out, Ity_I64,
				  IRExpr_Binop(Iop_Shr64, bits,
					       IRExpr_Const(IRConst_U8((UChar)(c->line_bits - shift)))));
	if (shift > c->line_bits)
		return pmc_ir_tmp(out, Ity_I64,
				  IRExpr_Binop(Iop_Shl64, bits,
					       IRExpr_Const(IRConst_U8((UChar)(shift - c->line_bits)))));
	return bits;
}

/* I1 when the block's row does not start with it. */
static IRExpr *not_first(IRSB *out, const struct cache *c, UWord block)
{
	const UWord *first = c->rows + (block & c->set_mask) * (UWord)c->ways;
	IRExpr *mru = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, pmc_ir_addr(out, first)));

	return pmc_ir_tmp(out, Ity_I1,
			  IRExpr_Binop(Iop_CmpNE64, mru,
				       IRExpr_Const(IRConst_U64(block << c->line_bits))));
}

void pmc_cache_fetch(IRSB *out, Addr a, Int size, UWord *last)
{
	UWord first = a >> I1.line_bits, end = (a + (UWord)size - 1) >> I1.line_bits;
	IRExpr *when;

	if (first == end && first == *last)
		return; /* a hit on the first of its row: nothing changes */
	when = not_first(out, &I1, first);
	if (end != first)
		when = pmc_ir_tmp(out, Ity_I1, IRExpr_Binop(Iop_Or1, when, not_first(out, &I1, end)));
	*last = end;
	call_fetch(out, a, size, when);
}

/* A data access: inline, a hit on the first of its row, which changes
 * nothing; anything else -- a deeper hit, a miss, two lines -- is the
 * slow path's.  The first entry is a line's address: the access is wholly
 * inside that line when ea - first, unsigned, is at most line - size
 * (an empty entry, 0, never is: no access is within a line of 0). */
void pmc_cache_data(IRSB *out, IRExpr *ea, Int size, Bool write, IRExpr *guard)
{
	IRExpr *row = pmc_ir_tmp(out, Ity_I64,
				 IRExpr_Binop(Iop_Add64, row_offset(out, &D1, ea),
					      mkIRExpr_HWord((HWord)D1.rows)));
	IRExpr *mru = pmc_ir_tmp(out, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, row));
	IRExpr *into = pmc_ir_tmp(out, Ity_I64, IRExpr_Binop(Iop_Sub64, ea, mru));
	/* Not (into < line - size + 1): the constant on the right, where the
	 * host's compare takes it as an immediate. */
	IRExpr *when = pmc_ir_tmp(
		out, Ity_I1,
		IRExpr_Unop(Iop_Not1,
			    pmc_ir_tmp(out, Ity_I1,
				       IRExpr_Binop(Iop_CmpLT64U, into,
						    IRExpr_Const(IRConst_U64((ULong)(D1.line - size + 1)))))));

	if (guard)
		when = pmc_ir_tmp(out, Ity_I1, IRExpr_Binop(Iop_And1, when, guard));
	call_data(out, ea, size, write, when);
}
