/* SPDX-License-Identifier: MIT */
/*
 * Measured regions.  A region is the code between pmc_region_begin() and
 * pmc_region_end(); its measurement is the difference of two readings of a
 * counter set.  The compiler must neither move work across the boundaries
 * nor delete work whose result is unused (both were observed while probing),
 * hence the barriers here and PMC_DO_NOT_OPTIMIZE for values computed inside.
 *
 * Cost: no allocation, no locking, no logging.  On a set that is one group
 * of counters readable from user space (pmc_counters_fast), begin and end
 * each call the library's lean read (pmc__fast_read_call: one seqlock pass
 * per counter, the timestamp once, on the group's leader) and end computes
 * the differences inline in one flat loop.  Any other set,
 * and a reading during which a counter is off its register, goes through
 * pmc_counters_read().  Measure the cost for your set with
 * pmc_counters_overhead() and subtract it with pmc_measurement_subtract().
 */
#ifndef PMCHECK_REGION_H
#define PMCHECK_REGION_H

#include <pmcheck/counters.h>
#include <pmcheck/userpage.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Forbid the compiler to move memory accesses across this point. */
#define PMC_BARRIER() __asm__ __volatile__("" ::: "memory")

/*
 * Keep the computation of `v`: the compiler must believe v is read here, so
 * the work producing it cannot be deleted or sunk past this point.
 *
 * An lvalue (a variable, p[i], s->f) is also taken as possibly modified
 * here, so what follows cannot constant-fold it or reuse a copy held in a
 * register: "+m"(v), the same code in C and C++.
 *
 * Any other expression -- f(x), a + b, m.size(), a class-type temporary --
 * has nothing to modify: its value is stored to memory that the compiler
 * must believe is read here, the same store the lvalue form makes, and no
 * more.  In C++, PMC_DO_NOT_OPTIMIZE takes it directly (overloads tell the
 * two apart).  C cannot tell an lvalue from an rvalue at compile time, so
 * in C an rvalue goes through PMC_DO_NOT_OPTIMIZE_VALUE (which C++ has
 * too); a C macro that took both would change the code of every existing
 * lvalue use.
 */
#ifdef __cplusplus
} /* extern "C" */
namespace pmc {
namespace detail {
template <class T> PMC__ALWAYS_INLINE void do_not_optimize(T &v)
{
	__asm__ __volatile__("" : "+m"(v) : : "memory");
}
template <class T> PMC__ALWAYS_INLINE void do_not_optimize(const T &v)
{
	__asm__ __volatile__("" : : "m"(v) : "memory");
}
template <class T> PMC__ALWAYS_INLINE void do_not_optimize_value(const T &v)
{
	__asm__ __volatile__("" : : "m"(v) : "memory");
}
} // namespace detail
} // namespace pmc
extern "C" {
#define PMC_DO_NOT_OPTIMIZE(v) ::pmc::detail::do_not_optimize(v)
#define PMC_DO_NOT_OPTIMIZE_VALUE(v) ::pmc::detail::do_not_optimize_value(v)
#else
#define PMC_DO_NOT_OPTIMIZE(v) __asm__ __volatile__("" : "+m"(v) : : "memory")
#define PMC_DO_NOT_OPTIMIZE_VALUE(v)                                           \
	do {                                                                   \
		const __typeof__(((void)0, (v))) pmc__value = (v);             \
		__asm__ __volatile__("" : : "m"(pmc__value) : "memory");       \
	} while (0)
#endif

struct pmc_region {
	struct pmc_counters *set;
	const struct pmc_fast *fast; /* NULL: read with pmc_counters_read() */
	struct pmc_reading start;
	struct pmc_reading end;
};

/* Bind a region to an open, enabled set. */
static inline void pmc_region_init(struct pmc_region *r, struct pmc_counters *set)
{
	r->set = set;
	r->fast = PMC__HAVE_USER_READ ? pmc_counters_fast(set) : NULL;
	r->start.n = r->end.n = pmc_counters_count(set);
	r->start.nparts = r->end.nparts = 0;
}

/* A reading of a region known to have a fast set: the lean read, or
 * read(2) while a counter is off its register. */
static PMC__ALWAYS_INLINE int pmc__fast_read_or_read(struct pmc_region *r, struct pmc_reading *x)
{
	if (__builtin_expect(pmc__fast_read_call(r->fast, x) == 0, 1))
		return 0;
	return pmc_counters_read(r->set, x);
}

/*
 * One reading for PMC_REGION's inline path, out of line: the lean user
 * read when the set has one (and its counters are on their registers),
 * else read(2).  Every call site then runs the same caller-side code
 * inside the counted window whichever way the kernel lets the set be
 * read, so a budget recorded where user reads exist holds to the
 * instruction where they do not (measured in the lane: Linux 5.10, which
 * predates arm64 user reads, counted one instruction more per region
 * when such sets took the general path instead).
 */
PMC_API int pmc__region_read_call(struct pmc_region *r, struct pmc_reading *x);

/* A reading of any region. */
static PMC__ALWAYS_INLINE int pmc__region_read(struct pmc_region *r, struct pmc_reading *x)
{
	return r->fast ? pmc__fast_read_or_read(r, x) : pmc_counters_read(r->set, x);
}

static PMC__ALWAYS_INLINE int pmc_region_begin(struct pmc_region *r)
{
	int rc;

	PMC_BARRIER();
	rc = pmc__region_read(r, &r->start);
	PMC_BARRIER();
	return rc;
}

/* Take the end reading and store end - start in *m. */
static PMC__ALWAYS_INLINE int pmc_region_end(struct pmc_region *r, struct pmc_measurement *m)
{
	int rc;

	PMC_BARRIER();
	rc = pmc__region_read(r, &r->end);
	PMC_BARRIER();
	if (rc)
		return rc;
	/* A reading that went through read(2) carries the group's times on
	 * every event, so the flat difference holds for it too. */
	if (r->fast)
		pmc__fast_delta(m, &r->start, &r->end, r->fast->n);
	else
		pmc_measurement_from(m, &r->start, &r->end);
	return 0;
}

#ifdef __cplusplus
}
#endif

#endif
