/* SPDX-License-Identifier: MIT */
/*
 * Private: hybrid CPUs (several core PMUs: x86 cpu_core + cpu_atom, arm64
 * big.LITTLE).  A generic hardware or cache event names no PMU, so the
 * kernel would route it to one core type only; pmcheck opens it once per
 * core PMU with that PMU's type in the high 32 bits of config (the uapi's
 * PERF_PMU_TYPE_SHIFT) and sums the parts.  Pure, so the encoding and the
 * summing are unit-tested on synthetic PMU lists.
 */
#ifndef PMCHECK_HYBRID_INT_H
#define PMCHECK_HYBRID_INT_H

#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/counters.h>
#include <pmcheck/event.h>
#include <pmcheck/machine.h>

#ifndef PERF_PMU_TYPE_SHIFT
#define PERF_PMU_TYPE_SHIFT 32 /* uapi since Linux 5.13 */
#endif

/* A task's read of one part and of the next is this far apart at most
 * (nanoseconds): the slack the completeness rule allows for it. */
#define PMC__PART_READ_SKEW_NS 10000u

/*
 * Spread spec s over the core PMUs: with two or more, a generic hardware or
 * cache event without a PMU type becomes one spec per core PMU, named
 * "PMU/NAME/MODIFIERS" internally, with config = type << 32 | config.  Anything else
 * stays one spec.  Returns the number of specs written to out (at most
 * ncore, or 1).
 */
static inline size_t pmc__spread(const struct pmc_event_spec *s,
				 const struct pmc_core_pmu *core, size_t ncore,
				 struct pmc_event_spec *out)
{
	size_t k;

	out[0] = *s;
	if (ncore < 2 || (s->kind != PMC_KIND_HARDWARE && s->kind != PMC_KIND_CACHE) ||
	    (s->config >> PERF_PMU_TYPE_SHIFT) != 0 || s->pmu[0])
		return 1;
	for (k = 0; k < ncore; k++) {
		out[k] = *s;
		size_t base = strcspn(s->name, ":");

		out[k].config = (uint64_t)core[k].type << PERF_PMU_TYPE_SHIFT | s->config;
		memcpy(out[k].pmu, core[k].name, sizeof(out[k].pmu));
		out[k].pmu[sizeof(out[k].pmu) - 1] = '\0';
		/* perf's spelling of one core type's event: cpu_atom/cycles/u */
		snprintf(out[k].name, sizeof(out[k].name), "%.40s/%.*s/%.16s", out[k].pmu,
			 (int)(base < 60 ? base : 60), s->name,
			 s->name[base] ? s->name + base + 1 : "");
	}
	return ncore;
}

/*
 * The delta of a spread event from its parts' deltas: the sum of the
 * values.  Each part is enabled for the whole region but runs only while
 * the task is on a CPU of its type, so the parts' running times add up to
 * the enabled time when no part was multiplexed.  The parts are read one
 * after another, so their enabled times differ by the read skew; a sum of
 * running times short of the enabled time by more than that skew (plus
 * PMC__PART_READ_SKEW_NS) means some part lost counts: MULTIPLEXED.
 */
static inline void pmc__fold(struct pmc_delta *d, const struct pmc_delta *parts, size_t n)
{
	uint64_t value = 0, running = 0, emax = 0, emin = UINT64_MAX;
	unsigned flags = 0;

	for (size_t k = 0; k < n; k++) {
		value += parts[k].value;
		running += parts[k].running_ns;
		emax = parts[k].enabled_ns > emax ? parts[k].enabled_ns : emax;
		emin = parts[k].enabled_ns < emin ? parts[k].enabled_ns : emin;
		flags |= parts[k].flags & PMC_DELTA_NEGATIVE;
	}
	if (n == 0)
		emin = 0;
	d->value = value;
	d->enabled_ns = emax;
	d->running_ns = running < emax ? running : emax;
	if (running == 0 && emax > 0)
		flags |= PMC_DELTA_NOT_COUNTED;
	else if (running + (emax - emin) + PMC__PART_READ_SKEW_NS < emax)
		flags |= PMC_DELTA_MULTIPLEXED;
	d->flags = flags;
}

/*
 * A sysfs CPU list ("0-3,8,10-11\n") into *set.  An empty list is every
 * CPU (x86 "cpu" has no cpus file).  0, or -1 for text that is not a list.
 */
static inline int pmc__parse_cpulist(const char *text, cpu_set_t *set)
{
	const char *p = text;

	CPU_ZERO(set);
	if (!*p || *p == '\n') {
		for (int c = 0; c < CPU_SETSIZE; c++)
			CPU_SET(c, set);
		return 0;
	}
	while (*p && *p != '\n') {
		char *end;
		unsigned long lo = strtoul(p, &end, 10), hi = lo;

		if (end == p)
			return -1;
		p = end;
		if (*p == '-') {
			hi = strtoul(p + 1, &end, 10);
			if (end == p + 1 || hi < lo)
				return -1;
			p = end;
		}
		if (hi >= CPU_SETSIZE)
			return -1;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET((int)c, set);
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			return -1;
	}
	return 0;
}

#endif
