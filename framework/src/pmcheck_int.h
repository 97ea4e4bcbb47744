/* SPDX-License-Identifier: MIT */
/* Private helpers shared by the library's translation units. */
#ifndef PMCHECK_INT_H
#define PMCHECK_INT_H

#include <regex.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>

#if defined(__GNUC__)
#define PMC__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PMC__PRINTF(a, b)
#endif

/* Fill *err (if not NULL) and return code. */
int pmc__fail(struct pmc_error *err, int code, const char *input, int position,
	      const char *fmt, ...) PMC__PRINTF(5, 6);

/* vsnprintf wrapper for paths: returns -ENAMETOOLONG when truncated (the
 * truncated path then simply fails to open). */
int pmc__snprintf(char *buf, size_t size, const char *fmt, ...) PMC__PRINTF(3, 4);

/* Send a message to the installed log callback, if any. */
void pmc__log(int level, const char *fmt, ...) PMC__PRINTF(2, 3);

/* Copy with truncation check: 0, or PMC_E_TOO_LONG when src does not fit. */
int pmc__copy(char *dst, size_t size, const char *src);

/* Read a small sysfs/procfs file into buf (trailing newline stripped).
 * Returns length, or a negative errno. */
int pmc__read_text(const char *path, char *buf, size_t size);

/* Read a file holding one integer (decimal or 0x hex). */
int pmc__read_u64(const char *path, uint64_t *out);

/* The PMU directory root in use (default /sys/bus/event_source/devices). */
const char *pmc__sysfs_root(void);

/* Does sysfs list a CPU PMU ("cpu", "cpu_core", "armv8_pmuv3_0", ...)? */
int pmc__has_hw_pmu(void);

/* sim.c: column index of a callgrind event name, or -1. */
int pmc__sim_column_of(const char *name, size_t len);
/* sim.c: can this process count with the sim backend?  0 or PMC_E_NO_SIM. */
int pmc__sim_check(struct pmc_error *err);
/* sim.c: one reading of n events whose column masks are masks[]; t0 is the
 * set's open time (CLOCK_MONOTONIC ns). */
struct pmc_reading;
int pmc__sim_read(const unsigned *masks, size_t n, uint64_t t0, struct pmc_reading *r,
		  struct pmc_error *err);

/* Compile an hwdb map pattern (POSIX ERE) after refusing patterns whose
 * compiled form could explode (see hwdb.c).  0, or -1 with *why filled. */
int pmc__map_pattern_compile(regex_t *re, const char *pattern, char *why,
			     size_t why_size);

/* Comma-separated names of the PMUs in sysfs, for messages. */
void pmc__list_pmus(char *buf, size_t size);

/* Nonzero when running under valgrind (rdpmc would raise SIGILL there). */
int pmc__under_valgrind(void);

#endif
