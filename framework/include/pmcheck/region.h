/* SPDX-License-Identifier: MIT */
/*
 * Measured regions.  A region is the code between pmc_region_begin() and
 * pmc_region_end(); its measurement is the difference of two readings of a
 * counter set.  The compiler must neither move work across the boundaries
 * nor delete work whose result is unused (both were observed while probing),
 * hence the barriers here and PMC_DO_NOT_OPTIMIZE for values computed inside.
 *
 * Cost: begin and end are each one pmc_counters_read() between two compiler
 * barriers; no allocation, no locking, no logging.  Measure it for your set
 * with pmc_counters_overhead() and subtract it with pmc_measurement_subtract().
 */
#ifndef PMCHECK_REGION_H
#define PMCHECK_REGION_H

#include <pmcheck/counters.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forbid the compiler to move memory accesses across this point. */
#define PMC_BARRIER() __asm__ __volatile__("" ::: "memory")

/*
 * Make the compiler believe `v` is read and possibly modified here, so the
 * computation producing it cannot be deleted, hoisted out of a loop, or
 * constant-folded past this point.  `v` must be an lvalue.
 */
#define PMC_DO_NOT_OPTIMIZE(v) __asm__ __volatile__("" : "+m"(v) : : "memory")

struct pmc_region {
	struct pmc_counters *set;
	struct pmc_reading start;
	struct pmc_reading end;
};

/* Bind a region to an open, enabled set. */
static inline void pmc_region_init(struct pmc_region *r, struct pmc_counters *set)
{
	r->set = set;
	r->start.n = 0;
	r->end.n = 0;
}

static inline int pmc_region_begin(struct pmc_region *r)
{
	int rc;

	PMC_BARRIER();
	rc = pmc_counters_read(r->set, &r->start);
	PMC_BARRIER();
	return rc;
}

/* Take the end reading and store end - start in *m. */
static inline int pmc_region_end(struct pmc_region *r, struct pmc_measurement *m)
{
	int rc;

	PMC_BARRIER();
	rc = pmc_counters_read(r->set, &r->end);
	PMC_BARRIER();
	if (rc == 0)
		pmc_measurement_from(m, &r->start, &r->end);
	return rc;
}

#ifdef __cplusplus
}
#endif

#endif
