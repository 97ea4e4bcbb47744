/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pmcheck's valgrind tool: watched functions (calls:).  A watch names an
 * object by its real path and an entry by its file offset; wherever the
 * object is mapped, now or later, the entry's address is a site, and the
 * instrumentation counts each execution of a site's instruction.
 *
 * Copyright (C) 2026 the pmcheck authors; GPL-2.0-or-later, see COPYING.
 */
#include "pub_tool_basics.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_transtab.h"

#include "pmc_tool_int.h"

#define MAX_SITES 256

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
Int pmc_nsites;

Int pmc_watch_slot_at(Addr a)
{
	for (Int i = 0; i < pmc_nsites; i++)
		if (sites[i].addr == a)
			return sites[i].slot;
	return -1;
}

static void add_site(Addr a, Int slot, Bool translated)
{
	for (Int i = 0; i < pmc_nsites; i++)
		if (sites[i].addr == a && sites[i].slot == slot)
			return;
	if (pmc_nsites == MAX_SITES) {
		VG_(umsg)("pmcheck: more than %d mappings of watched functions; %s at %#lx is not counted\n",
			  MAX_SITES, watches[slot].path, a);
		return;
	}
	sites[pmc_nsites].addr = a;
	sites[pmc_nsites].slot = slot;
	pmc_nsites++;
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

void pmc_watch_map_existing(Bool translated)
{
	Addr starts[512];
	Int n = VG_(am_get_segment_starts)(SkFileC, starts, 512);

	if (n < 0)
		n = 512; /* more file mappings than that: the first 512 */
	for (Int i = 0; i < n; i++)
		map_segment(VG_(am_find_nsegment)(starts[i]), translated);
}

void pmc_watch_new_mapping(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
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

void pmc_watch_mapping_gone(Addr a, SizeT len)
{
	for (Int i = 0; i < pmc_nsites;)
		if (sites[i].addr >= a && sites[i].addr - a < len)
			sites[i] = sites[--pmc_nsites];
		else
			i++;
}

Int pmc_watch_add(const HChar *path, ULong offset)
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

const HChar *pmc_watch_path(Int slot)
{
	return watches[slot].path;
}

Int pmc_watch_count(void)
{
	return nwatches;
}
