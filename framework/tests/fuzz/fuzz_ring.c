/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for the ring-buffer reader's arithmetic (ring_int.h):
 * whatever data_head, data_tail and the record headers claim, taking a
 * record stays inside the data area and the caller's buffer, and what it
 * returns is consistent.  Input: 1 byte log2 of the area size (3..12),
 * 8 bytes head, 8 bytes tail, 2 bytes buffer size, then the area's bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ring_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t head, tail, area;
	uint16_t bufsize;
	unsigned char *ring, *buf;
	size_t len = 0;
	int rc;

	if (size < 19)
		return 0;
	area = 1ull << (3 + data[0] % 10);
	memcpy(&head, data + 1, 8);
	memcpy(&tail, data + 9, 8);
	memcpy(&bufsize, data + 17, 2);
	ring = calloc(1, area); /* exact sizes: ASan sees any stray access */
	buf = malloc(bufsize ? bufsize : 1);
	if (!ring || !buf)
		abort();
	memcpy(ring, data + 19, size - 19 < area ? size - 19 : area);
	/* Drain as a reader would: a taken record moves the tail on. */
	for (int i = 0; i < 64; i++) {
		rc = pmc__ring_take(ring, area, head, tail, buf, bufsize, &len);
		if (rc == 0) {
			if (head != tail)
				abort();
			break;
		}
		if (rc == PMC_E_TOO_LONG) {
			if (len <= bufsize || len > head - tail)
				abort();
			break;
		}
		if (rc != 1)
			break; /* PMC_E_RING: a header that cannot be right */
		if (len < sizeof(struct perf_event_header) || len > bufsize || len > head - tail)
			abort();
		tail += len;
	}
	free(ring);
	free(buf);
	return 0;
}
