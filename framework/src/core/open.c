/* SPDX-License-Identifier: MIT */
/*
 * The public open: what pmc_counters_open and pmc_counters_open_task check
 * before a set opens (counters.c).  A kind that opens but failed its check
 * on known work is refused here (kinds.c), and so is what cannot count
 * exactly: a uprobe with inherit.  The kinds' own checks open their sets
 * with pmc__counters_open_set directly, so the layers run one way:
 * open.c -> kinds.c -> counters.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include <pmcheck/counters.h>
#include <pmcheck/machine.h>

#include "core_int.h"
#include "counters_int.h"

/* A uprobe counter loses counts once an inherited thread or process exits. */
static int refuse_inherited_uprobe(const struct pmc_event_spec *specs, size_t n, unsigned flags,
				   struct pmc_error *err)
{
	if ((flags & PMC_OPEN_SIM) || !(flags & (PMC_OPEN_INHERIT | PMC_OPEN_PER_THREAD)))
		return 0;
	for (size_t i = 0; i < n; i++) {
		const struct pmc_event_spec *s = &specs[i];
		const char *sym = strchr(s->name, ':') ? strchr(s->name, ':') + 1 : s->name;
		struct pmc_kind_check bp;
		int bp_counts;

		if (s->kind != PMC_KIND_UPROBE)
			continue;
		bp_counts = pmc_kind_check(PMC_KIND_CHECK_BP_EXEC, &bp) == 0;
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot count \"%s\" with inherit: a uprobe counter loses counts once an inherited thread or process exits (measured on Linux 6.18: 4 threads x 50 calls plus 10 read 210, then 150, then 100; a child process's calls read 0); count the function with an execute breakpoint, which is inherited exactly: mem:%.*s:x%s%.200s%s",
				 s->name, (int)strcspn(sym, "@"), sym, bp_counts ? "" : " (not on this machine: ",
				 bp_counts ? "" : bp.summary, bp_counts ? "" : ")");
	}
	return 0;
}

static int open_checked(struct pmc_counters **out, const struct pmc_event_spec *specs, size_t n,
			unsigned flags, pid_t pid, struct pmc_error *err)
{
	int rc;

	/* Malformed arguments: the set's open says which. */
	if (!out || !specs || n == 0 || n > PMC_MAX_EVENTS)
		return pmc__counters_open_set(out, specs, n, flags, pid, err);
	pmc_error_clear(err);
	/* Before anything opens: a check may need a breakpoint slot. */
	if (!(flags & PMC_OPEN_SIM) && (rc = pmc__kinds_vouch(specs, n, err)))
		return *out = NULL, rc;
	if ((rc = refuse_inherited_uprobe(specs, n, flags, err)))
		return *out = NULL, rc;
	return pmc__counters_open_set(out, specs, n, flags, pid, err);
}

int pmc_counters_open(struct pmc_counters **out, const struct pmc_event_spec *specs,
		      size_t n, unsigned flags, struct pmc_error *err)
{
	return open_checked(out, specs, n, flags, 0, err);
}

int pmc_counters_open_task(struct pmc_counters **out, const struct pmc_event_spec *specs,
			   size_t n, unsigned flags, pid_t pid, struct pmc_error *err)
{
	if (out)
		*out = NULL;
	if (pid <= 0)
		return pmc__fail(err, -EINVAL, "", -1,
				 "pmc_counters_open_task: pid %d; use pmc_counters_open for the calling thread",
				 (int)pid);
	if (flags & (PMC_OPEN_SIM | PMC_OPEN_PER_THREAD))
		return pmc__fail(err, PMC_E_UNSUPPORTED, "", -1,
				 "pmc_counters_open_task: another task is counted by the kernel, as a whole (no sim backend, no per-thread breakdown)");
	/* rdpmc/mrs read the caller's counters, never another task's. */
	return open_checked(out, specs, n, flags | PMC_OPEN_NO_USER_READ, pid, err);
}
