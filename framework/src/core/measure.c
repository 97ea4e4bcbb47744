/* SPDX-License-Identifier: MIT */
/*
 * Introspection of an open set, and measurements: deltas between two
 * readings with their flags, the overhead of an empty region, and its
 * subtraction.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <time.h>

#include <valgrind/valgrind.h>

#include <pmcheck/counters.h>
#include <pmcheck/sampling.h>
#include <pmcheck/sim.h>

#include <pmcheck/machine.h>
#include <pmcheck/region.h>
#include <pmcheck/userpage.h>

#include "core_int.h"
#include "counters_int.h"
#include "hybrid_int.h"
#include "sim/sim_api.h"

/* ---- introspection -------------------------------------------------------- */

size_t pmc_counters_count(const struct pmc_counters *set)
{
	return set ? set->nuser : 0;
}

size_t pmc_counters_groups(const struct pmc_counters *set)
{
	return set ? set->ngroups : 0;
}

int pmc_counters_group_of(const struct pmc_counters *set, size_t i)
{
	return set && i < set->nuser ? set->ev[set->first[i]].group : -1;
}

const struct pmc_event_spec *pmc_counters_spec(const struct pmc_counters *set, size_t i)
{
	if (!set || i >= set->nuser)
		return NULL;
	return set->uspec ? &set->uspec[i] : &set->ev[i].spec;
}

int pmc_counters_fd(const struct pmc_counters *set, size_t i)
{
	return set && i < set->nuser ? set->ev[set->first[i]].fd : -1;
}

const char *pmc_counters_part_pmu(const struct pmc_counters *set, size_t part)
{
	return set && set->spread && part < set->n ? set->ev[part].spec.pmu : NULL;
}

__attribute__((noinline)) int pmc__fast_read_call(const struct pmc_fast *f, struct pmc_reading *r)
{
#if PMC__HAVE_USER_READ
	return pmc__fast_read(f, r);
#else
	(void)f;
	(void)r;
	return 1;
#endif
}

__attribute__((noinline)) int pmc__region_read_call(struct pmc_region *r, struct pmc_reading *x)
{
#if PMC__HAVE_USER_READ
	if (r->fast && pmc__fast_read(r->fast, x) == 0)
		return 0;
#endif
	return pmc_counters_read(r->set, x);
}

const struct pmc_fast *pmc_counters_fast(const struct pmc_counters *set)
{
	return set && set->fast.n ? &set->fast : NULL;
}

enum pmc_read_path pmc_counters_path(const struct pmc_counters *set)
{
	return set ? set->path : PMC_PATH_READ;
}

int pmc_counters_describe(const struct pmc_counters *set, char *buf, size_t size)
{
	size_t used = 0;
	int total = 0;

	if (size)
		buf[0] = '\0';
	for (size_t gi = 0; set && gi < set->ngroups; gi++) {
		for (size_t k = 0; k < set->g[gi].nmembers; k++) {
			int w = snprintf(buf ? buf + used : NULL, used < size ? size - used : 0,
					 "%s%s%s%s", k == 0 && gi ? " " : "", k == 0 ? "{" : ",",
					 set->ev[set->g[gi].member[k]].spec.name,
					 k + 1 == set->g[gi].nmembers ? "}" : "");

			if (w < 0)
				return w;
			total += w;
			used = (size_t)total < size ? (size_t)total : size;
		}
	}
	return total;
}

/* ---- measurements ----------------------------------------------------------- */

static void delta_of(struct pmc_delta *d, const struct pmc_count *a, const struct pmc_count *b)
{
	d->flags = 0;
	if (b->value >= a->value) {
		d->value = b->value - a->value;
	} else {
		d->value = 0;
		d->flags |= PMC_DELTA_NEGATIVE;
	}
	d->enabled_ns = b->enabled_ns - a->enabled_ns;
	d->running_ns = b->running_ns - a->running_ns;
}

/* Hybrid: each part's delta, and each spread event's delta from its parts. */
static void measure_parts(struct pmc_measurement *m, const struct pmc_reading *start,
			  const struct pmc_reading *end)
{
	struct pmc_delta mine[PMC_MAX_EVENTS];

	m->nparts = start->nparts;
	for (size_t k = 0; k < start->nparts; k++) {
		delta_of(&m->part[k], &start->part[k], &end->part[k]);
		m->part_of[k] = start->part_of[k];
	}
	for (size_t i = 0; i < m->n; i++) {
		size_t n = 0;

		for (size_t k = 0; k < m->nparts; k++)
			if (m->part_of[k] == i)
				mine[n++] = m->part[k];
		if (n > 1)
			pmc__fold(&m->d[i], mine, n);
	}
}

void pmc_measurement_from(struct pmc_measurement *m, const struct pmc_reading *start,
			  const struct pmc_reading *end)
{
	size_t n = start->n < end->n ? start->n : end->n;

	m->n = n;
	for (size_t i = 0; i < n; i++) {
		const struct pmc_count *a = &start->c[i], *b = &end->c[i];
		struct pmc_delta *d = &m->d[i];

		delta_of(d, a, b);
		if (d->running_ns == 0 && d->enabled_ns > 0)
			d->flags |= PMC_DELTA_NOT_COUNTED;
		else if (d->running_ns < d->enabled_ns)
			d->flags |= PMC_DELTA_MULTIPLEXED;
	}
	m->nparts = 0;
	if (start->nparts && start->nparts == end->nparts)
		measure_parts(m, start, end);
}

/* Through pmc_region_begin/end themselves: the code inside the counted
 * window must be the regions' own (the inline user-space read on a fast
 * set), or the subtraction would take too much or too little. */
int pmc_counters_overhead(struct pmc_counters *set, unsigned reps,
			  struct pmc_measurement *overhead)
{
	struct pmc_region r;
	struct pmc_measurement m;

	if (!set || !overhead || reps == 0)
		return -EINVAL;
	pmc_region_init(&r, set);
	for (unsigned rep = 0; rep < reps; rep++) {
		int rc = pmc_region_begin(&r);

		if (!rc)
			rc = pmc_region_end(&r, &m);
		if (rc)
			return rc;
		if (rep == 0) {
			*overhead = m;
			continue;
		}
		for (size_t i = 0; i < m.n; i++)
			if (m.d[i].value < overhead->d[i].value)
				overhead->d[i] = m.d[i];
	}
	return 0;
}

void pmc_measurement_subtract(struct pmc_measurement *m,
			      const struct pmc_measurement *overhead)
{
	size_t n = m->n < overhead->n ? m->n : overhead->n;

	for (size_t i = 0; i < n; i++)
		m->d[i].value = m->d[i].value > overhead->d[i].value
					? m->d[i].value - overhead->d[i].value : 0;
	for (size_t k = 0; m->nparts == overhead->nparts && k < m->nparts; k++)
		m->part[k].value = m->part[k].value > overhead->part[k].value
					   ? m->part[k].value - overhead->part[k].value : 0;
}
