/* SPDX-License-Identifier: MIT */
/*
 * The probes' private interface: probe.c (the facts read from the system,
 * each probe in its own process, pmc_probe_run), probe_count.c (the
 * counting experiments), probe_print.c (the table).
 */
#ifndef PMCHECK_PROBE_INT_H
#define PMCHECK_PROBE_INT_H

#include <stddef.h>

#include <jansson.h>

/* {"value": v, "how": how} */
json_t *pmc__probe_fact(json_t *value, const char *how);
/* The integer a file holds, as a fact. */
json_t *pmc__probe_file_int(const char *path);
/* Run argv with a time limit, capture the first line of its output;
 * -ENOENT when the tool is not installed. */
int pmc__probe_run_tool(char *const argv[], char *line, size_t size, unsigned timeout_s);

/* probe_count.c: each experiment's record. */
json_t *pmc__probe_hardware(void);
json_t *pmc__probe_breakpoints(void);
json_t *pmc__probe_uprobes(void);
json_t *pmc__probe_kprobes(void);
json_t *pmc__probe_tracepoints(void);
json_t *pmc__probe_software(void);
/* deep: also run callgrind on /bin/true. */
json_t *pmc__probe_tools(unsigned timeout_s, int deep);

#endif
