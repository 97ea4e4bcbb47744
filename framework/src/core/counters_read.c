/* SPDX-License-Identifier: MIT */
/*
 * Counter sets running: enable, disable, reset, and the read paths (the
 * user page where the set allows it, read(2) otherwise, the simulator's
 * readings on the sim backend).  The hot path of every region.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <pmcheck/counters.h>
#include <pmcheck/userpage.h>

#include "core_int.h"
#include "counters_int.h"
#include "sim/sim_api.h"

/* Read one group with read(2) into *r.  The hot path for software events. */
int pmc__read_group(struct pmc_counters *set, const struct pmc__group *g,
		    struct pmc_reading *r)
{
	size_t want = (3 + 2 * g->nmembers) * sizeof(uint64_t);
	ssize_t got = read(g->leader_fd, set->rbuf, want);

	if (got != (ssize_t)want)
		return got < 0 ? -errno : -EIO;
	for (size_t k = 0; k < g->nmembers; k++) {
		struct pmc_count *c = &r->c[g->member[k]];

		c->value = set->rbuf[3 + 2 * k];
		c->enabled_ns = set->rbuf[1];
		c->running_ns = set->rbuf[2];
	}
	return 0;
}

static int ioctl_groups(struct pmc_counters *set, unsigned long req)
{
	if (set->path == PMC_PATH_SIM)
		return 0; /* the simulator always counts; readings are differences */
	for (size_t gi = 0; gi < set->ngroups; gi++)
		if (ioctl(set->g[gi].leader_fd, req, PERF_IOC_FLAG_GROUP) < 0)
			return -errno;
	return 0;
}

int pmc_counters_enable(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_ENABLE) : -EINVAL;
}

int pmc_counters_disable(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_DISABLE) : -EINVAL;
}

int pmc_counters_reset(struct pmc_counters *set)
{
	return set ? ioctl_groups(set, PERF_EVENT_IOC_RESET) : -EINVAL;
}

/* ---- read: the hot path --------------------------------------------------- */

static PMC__ALWAYS_INLINE int read_groups(struct pmc_counters *set, struct pmc_reading *r)
{
	r->n = set->n;
	for (size_t gi = 0; gi < set->ngroups; gi++) {
		const struct pmc__group *g = &set->g[gi];
		int rc;

#if PMC__HAVE_USER_READ
		if (g->user_read) {
			struct pmc__upage_value v;
			size_t k;

			/* The leader's page gives the group's times; members
			 * read their values only (one timestamp per group). */
			const struct pmc__event *l = &set->ev[g->member[0]];

			if (pmc__upage_read(l->page, l->shift, pmc__hw_counter, pmc__hw_timestamp,
					    NULL, &v) == PMC__UPAGE_OK) {
				struct pmc_count *c = &r->c[g->member[0]];

				c->value = v.value;
				c->enabled_ns = v.enabled_ns;
				c->running_ns = v.running_ns;
				for (k = 1; k < g->nmembers; k++) {
					struct pmc_count *m = &r->c[g->member[k]];

					const struct pmc__event *e = &set->ev[g->member[k]];

					if (pmc__upage_read_value(e->page, e->shift, pmc__hw_counter,
								  NULL, &m->value) != PMC__UPAGE_OK)
						break;
					m->enabled_ns = v.enabled_ns;
					m->running_ns = v.running_ns;
				}
			} else {
				k = 0;
			}
			if (k == g->nmembers)
				continue;
			/* Not on a counter right now (multiplexed out or
			 * never scheduled): the kernel has the value. */
		}
#endif
		rc = pmc__read_group(set, g, r);
		if (rc)
			return rc;
	}
	return 0;
}

/* The caller's events from the kernel events: sums of the parts (times:
 * the longest enabled, the summed running), with the parts kept. */
static void fold_reading(const struct pmc_counters *set, struct pmc_reading *r)
{
	r->n = set->nuser;
	memset(r->c, 0, set->nuser * sizeof(r->c[0]));
	for (size_t k = 0; k < set->n; k++) {
		const struct pmc_count *p = &set->raw.c[k];
		struct pmc_count *c = &r->c[set->owner[k]];

		c->value += p->value;
		c->running_ns += p->running_ns;
		c->enabled_ns = p->enabled_ns > c->enabled_ns ? p->enabled_ns : c->enabled_ns;
		r->part[k] = *p;
		r->part_of[k] = set->owner[k];
	}
	r->nparts = set->n;
}

int pmc_counters_read(struct pmc_counters *set, struct pmc_reading *r)
{
	int rc;

	r->nparts = 0;
	if (set->path == PMC_PATH_SIM)
		return pmc__sim_read(set->sim_mask, set->n, set->sim_t0, set->sim_flags, r, NULL);
	if (!set->spread)
		return read_groups(set, r);
	rc = read_groups(set, &set->raw);
	if (rc == 0)
		fold_reading(set, r);
	return rc;
}
