/* SPDX-License-Identifier: MIT */
/*
 * Reading counters from their perf_event_mmap_page without a system call.
 * This header is the machinery behind region.h's begin/end (the reads they
 * call, the differences end computes inline); its
 * names start with pmc__ and may change between releases.
 *
 * The kernel rewrites the page whenever the event is scheduled in or out and
 * brackets each rewrite with increments of `lock` (a sequence count).  A
 * reader copies the fields, reads the hardware counter, and accepts the copy
 * only if `lock` is unchanged afterwards; otherwise the task was preempted
 * mid-read, the counter may have moved to another register (on arm64,
 * PMSELR_EL0 is also zeroed), and the whole read is repeated.
 *
 * What is checked where.  The counter width cannot change while the event
 * lives, so it is validated once, at open, and kept as a shift.  What the
 * kernel may change at any time is read on every pass: the sequence count,
 * `index` (0 while the event is not on a counter) and cap_user_rdpmc (the
 * x86 sysfs rdpmc switch can turn user reads off at run time; rdpmc then
 * faults), with the time capabilities from the same word.
 *
 * The functions are generic over the two machine reads (counter register and
 * timestamp), so the same code runs on real pages with rdpmc/mrs and in unit
 * tests on synthetic pages with scripted readers.  They are forced inline,
 * and with constant reader arguments the indirection disappears.
 */
#ifndef PMCHECK_USERPAGE_H
#define PMCHECK_USERPAGE_H

#include <linux/perf_event.h>
#include <stdint.h>

#include <pmcheck/counters.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMC__ALWAYS_INLINE inline __attribute__((always_inline))
/* A function the compiler may neither inline nor reason about across the
 * call (known work for checks and tests).  clang has no noipa: noinline
 * and optnone keep its calls and its body as written. */
#if defined(__clang__)
#define PMC__NOIPA __attribute__((noinline, optnone))
#else
#define PMC__NOIPA __attribute__((noipa))
#endif
#define PMC__COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

/* Give up after this many torn reads; the caller then uses read(2).  The
 * kernel holds the lock odd only for a few instructions, so hitting this
 * means the page is not being updated by a kernel (a broken test page). */
#define PMC__UPAGE_MAX_RETRIES 1000u

/* Bits of perf_event_mmap_page.capabilities (the bitfields' positions in
 * the kernel's ABI), tested on one copy of the word per pass. */
#define PMC__CAP_USER_RDPMC (1ull << 2)
#define PMC__CAP_USER_TIME (1ull << 3)
#define PMC__CAP_USER_TIME_SHORT (1ull << 5)

struct pmc__upage_value {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
	unsigned retries; /* torn reads repeated (for tests and diagnostics) */
};

enum pmc__upage_status {
	PMC__UPAGE_OK = 0,       /* value read from the counter register */
	PMC__UPAGE_FALLBACK = 1, /* index 0 / no cap_user_rdpmc / endless tearing: use read(2) */
};

typedef uint64_t (*pmc__counter_fn)(uint32_t counter, void *ctx);
typedef uint64_t (*pmc__timestamp_fn)(void *ctx);

/* The shift that sign-extends a counter of `width` bits (64 - width), or -1
 * when the page's width is unusable (outside 1..64): read(2) only. */
static inline int pmc__upage_shift(unsigned width)
{
	return width >= 1 && width <= 64 ? (int)(64u - width) : -1;
}

/*
 * Sign-extend a raw counter whose top `shift` bits are not valid.  Counters
 * narrower than 64 bits are programmed with negative start values by the
 * kernel (so that they overflow into an interrupt) and the upper bits read
 * back as garbage or zero; shifting the valid bits to the top and
 * arithmetic-shifting back gives the signed delta that `offset` expects.
 */
static PMC__ALWAYS_INLINE uint64_t pmc__sign_extend(uint64_t raw, unsigned shift)
{
	return (uint64_t)((int64_t)(raw << shift) >> shift);
}

/*
 * Convert a timestamp counter reading into the nanoseconds elapsed since the
 * page was last updated, per the rules documented for time_offset,
 * time_mult, time_shift and (cap_user_time_short) time_cycles/time_mask.
 * The quotient/remainder split keeps quot * mult from overflowing.
 */
static PMC__ALWAYS_INLINE uint64_t
pmc__upage_time_delta(const volatile struct perf_event_mmap_page *pc, uint64_t caps,
		      uint64_t cyc)
{
	uint64_t quot, rem;
	uint16_t shift = pc->time_shift;
	uint32_t mult = pc->time_mult;

	if (caps & PMC__CAP_USER_TIME_SHORT)
		cyc = pc->time_cycles + ((cyc - pc->time_cycles) & pc->time_mask);
	quot = cyc >> shift;
	rem = cyc & (((uint64_t)1 << shift) - 1);
	return pc->time_offset + quot * mult + ((rem * mult) >> shift);
}

/*
 * One seqlock round trip over the page.  with_times (a constant at every
 * call, so the unused half compiles away) says whether to extend the times
 * to now as well: a group member's times are its leader's.  A fallback is
 * decided without waiting for a consistent copy: read(2) is always right.
 */
static PMC__ALWAYS_INLINE int
pmc__upage_read_core(const volatile struct perf_event_mmap_page *pc, unsigned shift,
		     pmc__counter_fn read_counter, pmc__timestamp_fn read_time, void *ctx,
		     int with_times, struct pmc__upage_value *out)
{
	uint32_t seq, idx;
	uint64_t caps, count, enabled = 0, running = 0, delta;
	unsigned retries = 0;

	for (;;) {
		seq = pc->lock;
		PMC__COMPILER_BARRIER();
		caps = pc->capabilities;
		idx = pc->index;
		if (!(caps & PMC__CAP_USER_RDPMC) || idx == 0)
			return PMC__UPAGE_FALLBACK;
		if (with_times) {
			enabled = pc->time_enabled;
			running = pc->time_running;
		}
		count = pc->offset + pmc__sign_extend(read_counter(idx - 1, ctx), shift);
		/* Times only advance in the page at schedule events; extend
		 * them to "now" (on a counter now, so running advances too). */
		if (with_times && (caps & PMC__CAP_USER_TIME)) {
			delta = pmc__upage_time_delta(pc, caps, read_time(ctx));
			enabled += delta;
			running += delta;
		}
		PMC__COMPILER_BARRIER();
		if (pc->lock == seq)
			break;
		if (++retries >= PMC__UPAGE_MAX_RETRIES)
			return PMC__UPAGE_FALLBACK;
	}
	out->value = count;
	out->enabled_ns = enabled;
	out->running_ns = running;
	out->retries = retries;
	return PMC__UPAGE_OK;
}

/* Value and times. */
static PMC__ALWAYS_INLINE int
pmc__upage_read(const volatile struct perf_event_mmap_page *pc, unsigned shift,
		pmc__counter_fn read_counter, pmc__timestamp_fn read_time, void *ctx,
		struct pmc__upage_value *out)
{
	return pmc__upage_read_core(pc, shift, read_counter, read_time, ctx, 1, out);
}

/*
 * The value alone, for a group member whose times are its leader's (a group
 * is scheduled as a whole, so the kernel's group read(2) reports one
 * enabled/running pair too): the same seqlock, index and cap_user_rdpmc
 * rules, without the timestamp and its arithmetic.
 */
static PMC__ALWAYS_INLINE int
pmc__upage_read_value(const volatile struct perf_event_mmap_page *pc, unsigned shift,
		      pmc__counter_fn read_counter, void *ctx, uint64_t *value)
{
	struct pmc__upage_value v;
	if (pmc__upage_read_core(pc, shift, read_counter, NULL, ctx, 0, &v))
		return PMC__UPAGE_FALLBACK;
	*value = v.value;
	return PMC__UPAGE_OK;
}

/* ---- the machine reads ------------------------------------------------------ */

#if defined(__x86_64__) || defined(__i386__)
static PMC__ALWAYS_INLINE uint64_t pmc__hw_counter(uint32_t counter, void *ctx)
{
	uint32_t lo, hi;

	(void)ctx;
	__asm__ __volatile__("rdpmc" : "=a"(lo), "=d"(hi) : "c"(counter));
	return (uint64_t)hi << 32 | lo;
}

static PMC__ALWAYS_INLINE uint64_t pmc__hw_timestamp(void *ctx)
{
	uint32_t lo, hi;

	(void)ctx;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}
#define PMC__HAVE_USER_READ 1
#elif defined(__aarch64__)
/* PMEVCNTR<n>_EL0 takes n as part of the instruction encoding, so every
 * register needs its own mrs; counter 31 is the cycle counter PMCCNTR_EL0
 * (the kernel publishes it as index 32). */
#define PMC__EVCNTR(n)                                                 \
	case n:                                                        \
		__asm__ __volatile__("mrs %0, pmevcntr" #n "_el0" : "=r"(v)); \
		break
static PMC__ALWAYS_INLINE uint64_t pmc__hw_counter(uint32_t counter, void *ctx)
{
	uint64_t v = 0;

	(void)ctx;
	switch (counter) {
		PMC__EVCNTR(0); PMC__EVCNTR(1); PMC__EVCNTR(2); PMC__EVCNTR(3);
		PMC__EVCNTR(4); PMC__EVCNTR(5); PMC__EVCNTR(6); PMC__EVCNTR(7);
		PMC__EVCNTR(8); PMC__EVCNTR(9); PMC__EVCNTR(10); PMC__EVCNTR(11);
		PMC__EVCNTR(12); PMC__EVCNTR(13); PMC__EVCNTR(14); PMC__EVCNTR(15);
		PMC__EVCNTR(16); PMC__EVCNTR(17); PMC__EVCNTR(18); PMC__EVCNTR(19);
		PMC__EVCNTR(20); PMC__EVCNTR(21); PMC__EVCNTR(22); PMC__EVCNTR(23);
		PMC__EVCNTR(24); PMC__EVCNTR(25); PMC__EVCNTR(26); PMC__EVCNTR(27);
		PMC__EVCNTR(28); PMC__EVCNTR(29); PMC__EVCNTR(30);
	case 31:
		__asm__ __volatile__("mrs %0, pmccntr_el0" : "=r"(v));
		break;
	}
	return v;
}

static PMC__ALWAYS_INLINE uint64_t pmc__hw_timestamp(void *ctx)
{
	uint64_t v;

	(void)ctx;
	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v));
	return v;
}
#define PMC__HAVE_USER_READ 1
#else
#define PMC__HAVE_USER_READ 0
#endif

/* ---- the fast path of a whole set ------------------------------------------- */

/*
 * A set that is one kernel group of counters, each readable from user
 * space: its pages in spec order (page[0] is the group's leader, whose times
 * are the group's) and each counter's sign-extension shift.  Built and owned
 * by the set; pmc_counters_fast() returns it, or NULL for any other set
 * (several groups, spread, inherited, sim, under valgrind, no user reads).
 */
struct pmc_fast {
	unsigned n;
	unsigned char shift[PMC_MAX_EVENTS];
	const struct perf_event_mmap_page *page[PMC_MAX_EVENTS];
};

/*
 * Read every event of a fast set into r: c[0] with the group's times,
 * c[1..n) values only (their times are c[0]'s).  0, or 1 when some counter
 * is not readable now (not on a counter, user reads switched off, endless
 * tearing): then nothing useful is in r and the caller reads with read(2).
 */
static PMC__ALWAYS_INLINE int
pmc__fast_read_with(const struct pmc_fast *f, struct pmc_reading *r,
		    pmc__counter_fn read_counter, pmc__timestamp_fn read_time, void *ctx)
{
	struct pmc__upage_value v;

	if (pmc__upage_read(f->page[0], f->shift[0], read_counter, read_time, ctx, &v))
		return 1;
	r->c[0].value = v.value;
	r->c[0].enabled_ns = v.enabled_ns;
	r->c[0].running_ns = v.running_ns;
	for (unsigned k = 1; k < f->n; k++)
		if (pmc__upage_read_value(f->page[k], f->shift[k], read_counter, ctx,
					  &r->c[k].value))
			return 1;
	return 0;
}

/*
 * end - start of a fast set, in one flat pass: every event takes the
 * group's times (c[0]'s) and the flags they imply, exactly as
 * pmc_measurement_from() would give them.
 */
static PMC__ALWAYS_INLINE void pmc__fast_delta(struct pmc_measurement *m,
					       const struct pmc_reading *a,
					       const struct pmc_reading *b, unsigned n)
{
	uint64_t en = b->c[0].enabled_ns - a->c[0].enabled_ns;
	uint64_t ru = b->c[0].running_ns - a->c[0].running_ns;
	unsigned flags = ru == 0 && en > 0 ? (unsigned)PMC_DELTA_NOT_COUNTED
			 : ru < en	   ? (unsigned)PMC_DELTA_MULTIPLEXED
					   : 0u;

	m->n = n;
	m->nparts = 0;
	for (unsigned k = 0; k < n; k++) {
		uint64_t x = a->c[k].value, y = b->c[k].value;
		struct pmc_delta *d = &m->d[k];

		d->value = y >= x ? y - x : 0;
		d->flags = y >= x ? flags : flags | (unsigned)PMC_DELTA_NEGATIVE;
		d->enabled_ns = en;
		d->running_ns = ru;
	}
}

#if PMC__HAVE_USER_READ
static PMC__ALWAYS_INLINE int pmc__fast_read(const struct pmc_fast *f, struct pmc_reading *r)
{
	return pmc__fast_read_with(f, r, pmc__hw_counter, pmc__hw_timestamp, NULL);
}
#endif

/*
 * pmc__fast_read, out of line, in the library: what regions call.  The code
 * between a region's counter reads (the end of begin's read, the start of
 * end's) is then this one function's at every call site, so the overhead
 * measured once is what every region pays, to the instruction; inlined,
 * each site's compiler arrangement differed by a few instructions (measured
 * in the lane: 4 to 6) and the subtraction took too much or too little.
 * A leaf function: the call costs a branch and a return.
 */
PMC_API int pmc__fast_read_call(const struct pmc_fast *f, struct pmc_reading *r);

#ifdef __cplusplus
}
#endif

#endif
