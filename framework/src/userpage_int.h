/* SPDX-License-Identifier: MIT */
/*
 * Reading a counter from its perf_event_mmap_page without a system call.
 *
 * The kernel rewrites the page whenever the event is scheduled in or out and
 * brackets each rewrite with increments of `lock` (a sequence count).  A
 * reader copies the fields, reads the hardware counter, and accepts the copy
 * only if `lock` is unchanged afterwards; otherwise the task was preempted
 * mid-read, the counter may have moved to another register (on arm64,
 * PMSELR_EL0 is also zeroed), and the whole read is repeated.
 *
 * The function is generic over the two machine reads (counter register and
 * timestamp) so that the same code runs on real pages with rdpmc/mrs and in
 * unit tests on synthetic pages with scripted readers.  It is forced inline,
 * and with constant reader arguments the indirection disappears.
 */
#ifndef PMCHECK_USERPAGE_INT_H
#define PMCHECK_USERPAGE_INT_H

#include <linux/perf_event.h>
#include <stdint.h>

#define PMC__ALWAYS_INLINE inline __attribute__((always_inline))
#define PMC__COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

/* Give up after this many torn reads; the caller then uses read(2).  The
 * kernel holds the lock odd only for a few instructions, so hitting this
 * means the page is not being updated by a kernel (a broken test page). */
#define PMC__UPAGE_MAX_RETRIES 1000u

struct pmc__upage_value {
	uint64_t value;
	uint64_t enabled_ns;
	uint64_t running_ns;
	unsigned retries; /* torn reads repeated (for tests and diagnostics) */
};

enum pmc__upage_status {
	PMC__UPAGE_OK = 0,       /* value read from the counter register */
	PMC__UPAGE_FALLBACK = 1, /* index 0 / no cap_user_rdpmc / bad width: use read(2) */
};

typedef uint64_t (*pmc__counter_fn)(uint32_t counter, void *ctx);
typedef uint64_t (*pmc__timestamp_fn)(void *ctx);

/*
 * Sign-extend a raw counter of `width` valid bits.  Counters narrower than 64
 * bits are programmed with negative start values by the kernel (so that they
 * overflow into an interrupt) and the upper bits read back as garbage or
 * zero; shifting the valid bits to the top and arithmetic-shifting back gives
 * the signed delta that `offset` expects.
 */
static PMC__ALWAYS_INLINE uint64_t pmc__sign_extend(uint64_t raw, unsigned width)
{
	unsigned shift = 64u - width;

	return (uint64_t)((int64_t)(raw << shift) >> shift);
}

/*
 * Convert a timestamp counter reading into the nanoseconds elapsed since the
 * page was last updated, per the rules documented for time_offset,
 * time_mult, time_shift and (cap_user_time_short) time_cycles/time_mask.
 * The quotient/remainder split keeps quot * mult from overflowing.
 */
static PMC__ALWAYS_INLINE uint64_t
pmc__upage_time_delta(const volatile struct perf_event_mmap_page *pc, uint64_t cyc)
{
	uint64_t quot, rem;
	uint16_t shift = pc->time_shift;
	uint32_t mult = pc->time_mult;

	if (pc->cap_user_time_short)
		cyc = pc->time_cycles + ((cyc - pc->time_cycles) & pc->time_mask);
	quot = cyc >> shift;
	rem = cyc & (((uint64_t)1 << shift) - 1);
	return pc->time_offset + quot * mult + ((rem * mult) >> shift);
}

/*
 * One seqlock round trip over the page.  with_times (a constant at every
 * call, so the unused half compiles away) says whether to extend the times
 * to now as well: a group member's times are its leader's.
 */
static PMC__ALWAYS_INLINE int
pmc__upage_read_core(const volatile struct perf_event_mmap_page *pc,
		     pmc__counter_fn read_counter, pmc__timestamp_fn read_time, void *ctx,
		     int with_times, struct pmc__upage_value *out)
{
	uint32_t seq, idx;
	uint64_t count, enabled = 0, running = 0, delta;
	unsigned retries = 0;
	int status;

	for (;;) {
		seq = pc->lock;
		PMC__COMPILER_BARRIER();
		if (with_times) {
			enabled = pc->time_enabled;
			running = pc->time_running;
		}
		idx = pc->index;
		count = pc->offset;
		status = PMC__UPAGE_FALLBACK;
		if (pc->cap_user_rdpmc && idx) {
			unsigned width = pc->pmc_width;

			if (width >= 1 && width <= 64) {
				count += pmc__sign_extend(read_counter(idx - 1, ctx), width);
				status = PMC__UPAGE_OK;
			}
		}
		/* Times only advance in the page at schedule events; extend
		 * them to "now".  running advances only while on a counter. */
		if (with_times && pc->cap_user_time) {
			delta = pmc__upage_time_delta(pc, read_time(ctx));
			enabled += delta;
			if (idx)
				running += delta;
		}
		PMC__COMPILER_BARRIER();
		if (pc->lock == seq)
			break;
		if (++retries >= PMC__UPAGE_MAX_RETRIES) {
			status = PMC__UPAGE_FALLBACK;
			break;
		}
	}
	out->value = count;
	out->enabled_ns = enabled;
	out->running_ns = running;
	out->retries = retries;
	return status;
}

/* Value and times. */
static PMC__ALWAYS_INLINE int
pmc__upage_read(const volatile struct perf_event_mmap_page *pc,
		pmc__counter_fn read_counter, pmc__timestamp_fn read_time, void *ctx,
		struct pmc__upage_value *out)
{
	return pmc__upage_read_core(pc, read_counter, read_time, ctx, 1, out);
}

/*
 * The value alone, for a group member whose times are its leader's (a group
 * is scheduled as a whole, so the kernel's group read(2) reports one
 * enabled/running pair too): the same seqlock, index, cap_user_rdpmc and
 * width rules, without the timestamp and its arithmetic.
 */
static PMC__ALWAYS_INLINE int
pmc__upage_read_value(const volatile struct perf_event_mmap_page *pc,
		      pmc__counter_fn read_counter, void *ctx, uint64_t *value)
{
	struct pmc__upage_value v;
	int status = pmc__upage_read_core(pc, read_counter, NULL, ctx, 0, &v);

	*value = v.value;
	return status;
}

#endif
