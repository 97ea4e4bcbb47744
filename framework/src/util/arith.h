/* SPDX-License-Identifier: MIT */
/*
 * The few operations on doubles the library needs, without libm.
 *
 * libpmcheck and libpmcheck_harness are loaded into every measured
 * process, and on the sim backend that process runs under valgrind, which
 * reads the debug information of every object the process maps: libm's
 * (from libc6-dbg on Debian) cost an empty sim case about 0.024 s of its
 * 0.19 s, measured in alternating pairs of a program with and without
 * libm under valgrind --tool=none.  So the library does without it: these
 * are exact (the results libm gives, tested against it in test_judge),
 * and the sketch's logarithms are a table (sketch.c).
 *
 * NaN and the infinities pass through as libm passes them; -0.0 may come
 * back as +0.0.
 */
#ifndef PMCHECK_ARITH_H
#define PMCHECK_ARITH_H

#include <stdint.h>

/* Doubles from 2^52 up are whole numbers already. */
#define PMC__WHOLE 4503599627370496.0

static inline double pmc__trunc(double x)
{
	if (!(x > -PMC__WHOLE && x < PMC__WHOLE)) /* NaN, infinite, or whole */
		return x;
	return (double)(int64_t)x;
}

static inline double pmc__floor(double x)
{
	double t = pmc__trunc(x);

	return t > x ? t - 1.0 : t;
}

static inline double pmc__ceil(double x)
{
	double t = pmc__trunc(x);

	return t < x ? t + 1.0 : t;
}

/* Halves away from zero, as round(3). */
static inline double pmc__round(double x)
{
	double t = pmc__trunc(x);

	if (x - t >= 0.5) /* exact: t and x are within 1 of each other */
		return t + 1.0;
	if (t - x >= 0.5)
		return t - 1.0;
	return t;
}

/* The larger, as fmax(3): a NaN loses to a number. */
static inline double pmc__fmax(double a, double b)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	return a > b ? a : b;
}

static inline double pmc__fmin(double a, double b)
{
	if (a != a)
		return b;
	if (b != b)
		return a;
	return a < b ? a : b;
}

#endif
