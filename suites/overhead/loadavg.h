/* SPDX-License-Identifier: MIT */
/* The 1-minute load average, recorded beside benchmark figures: a loaded
 * machine's figures are not comparable with a quiet one's.  -1 if unknown. */
#ifndef PMCHECK_SUITES_LOADAVG_H
#define PMCHECK_SUITES_LOADAVG_H

#include <stdio.h>

static inline double bench_loadavg(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

#endif
