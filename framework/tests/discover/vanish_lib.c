/* SPDX-License-Identifier: MIT */
/*
 * A library the vanish suite dlopen()s inside its cases: it is not loaded
 * when the suite lists them, nor when their counters open.
 */
__attribute__((noinline, visibility("default"))) int pmc_vanish_lib_fn(int x)
{
	__asm__ __volatile__("" : "+r"(x));
	return x + 1;
}
