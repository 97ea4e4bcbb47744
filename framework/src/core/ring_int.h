/* SPDX-License-Identifier: MIT */
/*
 * Private: taking one record out of a perf ring buffer's data area, pure
 * (no barriers, no kernel), so the wrap-around arithmetic is unit-tested on
 * plain memory.  ring.c wraps it with the ABI's ordering rules.
 */
#ifndef PMCHECK_RING_INT_H
#define PMCHECK_RING_INT_H

#include <linux/perf_event.h>
#include <stdint.h>
#include <string.h>

#include <pmcheck/error.h>

/*
 * data: the data area, `size` bytes (a power of two); head/tail: the
 * kernel's free-running positions (offset = position & (size - 1)).  Copies
 * the record at `tail` into buf, joining the two pieces of a record that
 * wraps.  Returns 1 and the record's length, 0 when head == tail,
 * PMC_E_TOO_LONG (record bigger than bufsize, *len = its size) or
 * PMC_E_RING (a header that cannot be right).
 */
static inline int pmc__ring_take(const unsigned char *data, uint64_t size, uint64_t head,
				 uint64_t tail, void *buf, size_t bufsize, size_t *len)
{
	struct perf_event_header h;
	uint64_t unread = head - tail, off = tail & (size - 1), first;

	if (unread == 0)
		return 0;
	if (unread < sizeof(h) || unread > size)
		return PMC_E_RING;
	/* The header itself may wrap. */
	first = size - off < sizeof(h) ? size - off : sizeof(h);
	memcpy(&h, data + off, first);
	memcpy((unsigned char *)&h + first, data, sizeof(h) - first);
	if (h.size < sizeof(h) || h.size > unread)
		return PMC_E_RING;
	*len = h.size;
	if (h.size > bufsize)
		return PMC_E_TOO_LONG;
	first = size - off < h.size ? size - off : h.size;
	memcpy(buf, data + off, first);
	memcpy((unsigned char *)buf + first, data, h.size - first);
	return 1;
}

#endif
