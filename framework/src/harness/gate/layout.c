/* SPDX-License-Identifier: MIT */
/*
 * Layout, not a regression: an exact sim budget that failed only because a
 * rebuild moved code or data.  Callgrind counts every call exactly, and
 * where a buffer lies changes what a string or memory function executes
 * per call by a bounded amount: its head and tail run a few more or fewer
 * instructions, its loop one more or fewer round (measured with glibc 2.36
 * under the sim backend's baseline x86-64 tunables, sizes 1..8000 bytes at
 * every source and destination offset in a cache line: memset 7, memcmp
 * 10, memcpy and memmove 14, strlen 26, memchr 28, strcpy and strcmp 41
 * instructions a call at most between two offsets).  A difference from
 * calibration that lies wholly in such functions, with the same number of
 * calls each, each within the bound per call, is layout.  Pure: fed the
 * calibration's and this run's functions of one region.
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "harness_int.h"

/*
 * C reserves names that begin with str, mem or wcs and a lowercase letter
 * for <string.h> and <wchar.h>; glibc's variants add underscores in front
 * (__memcpy_avx_unaligned_erms, __strlen_sse2) and versions behind
 * (memcpy@@GLIBC_2.14).  Also the old BSD names.
 */
bool pmc__layout_function(const char *name)
{
	static const char *const prefixes[] = { "mem", "str", "wmem", "wcs", "stp" };
	static const char *const whole[] = { "bcopy", "bzero", "explicit_bzero", "rawmemchr" };

	while (*name == '_')
		name++;
	for (size_t i = 0; i < sizeof(whole) / sizeof(whole[0]); i++)
		if (!strncmp(name, whole[i], strlen(whole[i])) &&
		    strchr("_@", name[strlen(whole[i])]))
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t n = strlen(prefixes[i]);

		if (!strncmp(name, prefixes[i], n) && name[n] >= 'a' && name[n] <= 'z')
			return true;
	}
	return false;
}

static int label_index(const struct pmc__region_rec *g, const char *label)
{
	for (size_t j = 0; j < g->nev; j++)
		if (!strcmp(g->ev[j].label, label))
			return (int)j;
	return -1;
}

static void say(struct pmc__layout *out, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void say(struct pmc__layout *out, const char *fmt, ...)
{
	size_t used = strlen(out->why);
	va_list ap;

	if (used + 1 >= sizeof(out->why))
		return;
	va_start(ap, fmt);
	vsnprintf(out->why + used, sizeof(out->why) - used, fmt, ap);
	va_end(ap);
}

int pmc__layout_review(const struct pmc__region_rec *cal, const struct pmc__region_rec *now,
		       const char *label, double per_call, struct pmc__layout *out)
{
	int ci = label_index(cal, label), ni = label_index(now, label);
	size_t shown = 0;

	memset(out, 0, sizeof(*out));
	if (per_call <= 0 || ci < 0 || ni < 0 || !cal->nfns || !now->nfns)
		return 0;
	/* Every function of either side, each compared once. */
	for (int side = 0; side < 2; side++) {
		const struct pmc__region_rec *g = side ? cal : now, *o = side ? now : cal;
		int gi = side ? ci : ni, oi = side ? ni : ci;

		for (size_t i = 0; i < g->nfns; i++) {
			const struct pmc__fn_rec *f = &g->fns[i];
			const struct pmc__fn_rec *m = pmc__fn_in(o, f);
			double mine = f->cost[gi], theirs = m ? m->cost[oi] : 0, d;
			double calls = f->calls;

			if (side && m)
				continue; /* seen from this run's side */
			d = side ? theirs - mine : mine - theirs;
			if (isnan(d) || d == 0)
				continue;
			if (!strcmp(f->name, "(other)") || !pmc__layout_function(f->name)) {
				out->others++;
				out->other_change += d;
				continue;
			}
			if (!m || isnan(calls) || isnan(m->calls) || calls != m->calls || calls < 1 ||
			    fabs(d) > per_call * calls) {
				out->others++;
				out->other_change += d;
				continue;
			}
			if (d > 0)
				out->up += d;
			else
				out->down += d;
			out->functions++;
			if (shown++ < 3)
				say(out, "%s%s %+.0f over %.0f calls", shown > 1 ? ", " : "", f->name, d,
				    calls);
		}
	}
	if (shown > 3)
		say(out, " and %zu more", shown - 3);
	out->layout = out->functions > 0 && out->others == 0;
	return 0;
}
