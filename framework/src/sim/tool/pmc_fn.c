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
 *   when the run says --demangle=no, as pmcheck runs callgrind.  An address
 *   with no symbol is named by its offset from the object's text bias,
 *   "0x%016lx", with " [PLT]" (and callgrind's other section tags) after.
 * - The object is the debug information's file name, "???" without one.
 * - Self cost only, summed over every thread (callgrind's
 *   --separate-threads=no); recursion levels are not told apart (callgrind
 *   names a function entered recursively "fn'2": add them to compare).
 * - Intervals are callgrind's: each DUMP_STATS_AT request closes one.  The
 *   tool keeps the last closed interval's rows, and FUNCTIONS writes them
 *   out in callgrind's dump format, so that one reader serves both engines.
 *
 * Generated code adds to a function's counters at the same points it adds
 * to the thread's (one more addition per counter moved); nothing at all
 * when the option is off.  Counters live in chunks that never move, so
 * that generated code may hold their addresses.
 */
#include "pub_tool_basics.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_vki.h"

#include "pmc_tool_int.h"

Bool pmc_functions;
ULong *pmc_fn_sb;

#define CHUNK PMC_FN_STRIDE
#define MAX_CHUNKS 1024 /* a million functions */

/* Structure of arrays: a dump's scan reads one counter's array, packed. */
struct chunk {
	ULong cost[PMC_TOOL_NFIXED][CHUNK];
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
	ULong cost[PMC_TOOL_NFIXED];
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

ULong *pmc_fn_costs(Addr a)
{
	DiEpoch ep = VG_(current_DiEpoch)();
	DebugInfo *di = VG_(find_DebugInfo)(ep, a);
	const HChar *object = di ? VG_(DebugInfo_get_filename)(di) : "???";
	const HChar *name;
	HChar unnamed[64];
	Int i;

	if (!VG_(get_fnname)(ep, a, &name)) {
		VgSectKind kind = VG_(DebugInfo_sect_kind)(NULL, a);
		Addr offset = a - (di ? (Addr)VG_(DebugInfo_get_text_bias)(di) : 0);

		VG_(sprintf)(unnamed, "%#016lx%s", (UWord)offset,
			     kind == Vg_SectData  ? " [Data]"
			     : kind == Vg_SectBSS ? " [BSS]"
			     : kind == Vg_SectGOT ? " [GOT]"
			     : kind == Vg_SectPLT ? " [PLT]"
						  : "");
		name = unnamed;
	}
	i = fn_index(object, name);
	return i < 0 ? NULL : &chunks[i / CHUNK]->cost[0][i % CHUNK];
}

void pmc_fn_interval_end(void)
{
	nlast = 0;
	for (UInt c = 0; c * CHUNK < nfns; c++) {
		struct chunk *k = chunks[c];
		UInt n = nfns - c * CHUNK < CHUNK ? nfns - c * CHUNK : CHUNK;

		for (UInt i = 0; i < n; i++) {
			struct row *r;

			/* Every addition a superblock makes carries its
			 * instructions: a function that cost anything has Ir. */
			if (!k->cost[PMC_TOOL_IR][i])
				continue;
			if (nlast == last_cap) {
				last_cap = last_cap ? last_cap * 2 : 256;
				last = VG_(realloc)("pmcheck.fn.last", last, last_cap * sizeof(*last));
			}
			r = &last[nlast++];
			r->fn = c * CHUNK + i;
			for (Int e = 0; e < PMC_TOOL_NFIXED; e++) {
				r->cost[e] = k->cost[e][i];
				k->cost[e][i] = 0;
			}
		}
	}
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

		if (!object || VG_(strcmp)(object, f->object)) {
			out_str(o, "ob=");
			out_str(o, f->object);
			out_str(o, "\n");
			object = f->object;
		}
		out_str(o, "fn=");
		out_str(o, f->name);
		out_str(o, "\n0");
		for (Int e = 0; e < PMC_TOOL_NFIXED; e++)
			if (counted & (1u << e)) {
				VG_(sprintf)(line, " %llu", last[i].cost[e]);
				out_str(o, line);
			}
		out_str(o, "\n");
	}
	out_flush(o);
	VG_(close)(o->fd);
	VG_(free)(o);
	VG_(strcpy)(path, file);
	VG_(free)(file);
	return 1;
}
