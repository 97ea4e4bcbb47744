/* SPDX-License-Identifier: MIT */
/*
 * How much slower the sim backend runs code than the CPU does: the bodies
 * of the kernels suite (loops, branches, both pointer chases, the checksum),
 * timed with CLOCK_MONOTONIC.  ci/bench runs it natively and under
 * `pmcheck sim --` in the same job and prints the ratio.
 *
 *   pmcheck_sim_slowdown [COMPUTE_REPS]    (default 20)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../common/kernels.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}


int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 20;
	size_t small = (2u << 20) / 64, large = (64u << 20) / 64;
	void *l1 = aligned_alloc(64, small * 64), *ll = aligned_alloc(64, large * 64);
	uint8_t *bits = malloc(30000), *data = malloc(16384);
	uint64_t seed = 1, sink = 0;
	double t0, t;

	if (!l1 || !ll || !bits || !data || !kernel_chase_build(l1, small, 64, 42) ||
	    !kernel_chase_build(ll, large, 64, 7))
		return 1;
	for (size_t i = 0; i < 30000; i++)
		bits[i] = (uint8_t)(kernel_xorshift(&seed) >> 63);
	for (size_t i = 0; i < 16384; i++)
		data[i] = (uint8_t)(i * 131 + 7);
	/* Compute-bound (loop, branches, checksum) and memory-bound (the
	 * chases, whose native time is DRAM latency, which valgrind pays too)
	 * slow down very differently: report both. */
	t0 = now();
	if (reps < 1) {
		fprintf(stderr, "usage: pmcheck_sim_slowdown [COMPUTE_REPS >= 1]\n");
		return 2;
	}
	for (int rep = 0; rep < reps; rep++) {
		sink += kernel_loop(400000);
		sink += kernel_branches(bits, 30000);
		sink += kernel_checksum(data, 16384);
	}
	t = now() - t0;
	t0 = now();
	for (int rep = 0; rep < 2; rep++) {
		sink += (uintptr_t)kernel_chase(l1, small);
		sink += (uintptr_t)kernel_chase(ll, large);
	}
	printf("compute %.6f memory %.6f (sink %llu)\n", t, now() - t0,
	       (unsigned long long)(sink & 1));
	return 0;
}
