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

#include "util/child.h"

/* {"value": v, "how": how} */
json_t *pmc__probe_fact(json_t *value, const char *how);
/* The integer a file holds, as a fact. */
json_t *pmc__probe_file_int(const char *path);
/* Run argv with a time limit, capture the first line of its output;
 * -ENOENT when the tool is not installed. */
int pmc__probe_run_tool(char *const argv[], char *line, size_t size, unsigned timeout_s);

/* A tool's `--version` line, run at most once per build of the tool: the
 * line is kept in ~/.cache/pmcheck/tool-versions (XDG_CACHE_HOME) under the
 * binary's path, inode, size and modification time, so a changed binary
 * is asked again.  `fresh` asks regardless.  0 and the line; -ENOENT when
 * the tool is not on PATH.  *how says which of the two happened. */
struct pmc__tool_query {
	struct pmc__child child; /* the running `--version` */
	int running;
	char path[4096]; /* the binary found on PATH */
	char real[4096]; /* its real path, the cache's name for it */
	char key[4200];  /* path, inode, size, mtime */
	char line[256];
	int rc;          /* -ENOENT, or 0 */
	int cached;
};
/* Start: look the tool up, and start it unless the cache knows the line. */
void pmc__probe_tool_start(struct pmc__tool_query *q, const char *name, int fresh);
/* Finish: wait (at most timeout_s) for the line, and remember it. */
int pmc__probe_tool_finish(struct pmc__tool_query *q, unsigned timeout_s);

/* probe_count.c: each experiment's record. */
json_t *pmc__probe_hardware(void);
json_t *pmc__probe_breakpoints(void);
json_t *pmc__probe_kprobes(void);
/* {"kinds": ..., "uprobes": ..., "tracepoints": ...} from one set of checks. */
json_t *pmc__probe_kinds_and_events(void);
json_t *pmc__probe_software(void);
/* deep: also run callgrind on /bin/true. */
json_t *pmc__probe_tools(unsigned timeout_s, int deep);

#endif
