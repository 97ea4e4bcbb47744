/* SPDX-License-Identifier: MIT */
/*
 * The counting core's private interface: the PMUs sysfs lists (pmu.c).
 * The parser's own interface is event_int.h, the counter set's layout
 * counters_int.h.
 */
#ifndef PMCHECK_CORE_INT_H
#define PMCHECK_CORE_INT_H

#include <elf.h>
#include <link.h>
#include <stddef.h>

#include <pmcheck/error.h>

#include "util/util_int.h"

/* The PMU directory root in use (default /sys/bus/event_source/devices). */
const char *pmc__sysfs_root(void);

/* Does sysfs list a CPU PMU ("cpu", "cpu_core", "armv8_pmuv3_0", ...)? */
int pmc__has_hw_pmu(void);

/* Is this PMU a CPU (core) PMU: by its name, or by an rdpmc file? */
int pmc__is_core_pmu(const char *pmu);

/* Comma-separated names of the PMUs in sysfs, for messages. */
void pmc__list_pmus(char *buf, size_t size);

/* The file of a loaded object (the main program's through /proc/self/exe). */
int pmc__object_path(const struct dl_phdr_info *info, char *buf, size_t size);

/* A calls: name that names a compiler clone of a function (gcc's
 * NAME.cold, NAME.part.N, NAME.isra.N, NAME.constprop.N), which a call of
 * the function does not enter, or not always: PMC_E_NO_SYMBOL with *err
 * naming the function and the event to count (with @object when given);
 * 0 for any other name. */
int pmc__symbol_clone_check(const char *name, const char *object, struct pmc_error *err);

#endif
