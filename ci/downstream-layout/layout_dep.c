/* SPDX-License-Identifier: MIT */
/*
 * A shared library the layout test's region calls, built twice with one
 * soname (liblayoutdep.so.1): the second build (LAYOUT_DEP_MORE) does a
 * little more per call, as a distribution's update of a library may.
 * test_layout.py replaces the first with the second in place.
 */
#ifndef LAYOUT_DEP_MORE
#define LAYOUT_DEP_MORE 0
#endif

__attribute__((visibility("default"))) unsigned layout_dep_mix(unsigned x, unsigned rounds)
{
	for (unsigned i = 0; i < rounds + LAYOUT_DEP_MORE; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}
