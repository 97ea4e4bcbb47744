/* SPDX-License-Identifier: MIT */
/*
 * Capability probes: what can this machine measure, and why not?
 *
 * Every fact is gathered by trying (opening events, reading sysfs, running
 * tools), and every fact records how it was obtained.  Each probe runs in a
 * child process under a time limit, so a probe that hangs, crashes or leaks
 * descriptors costs its own entry and nothing else.
 *
 * The record is a JSON object (jansson); its schema is
 * probes/probe.schema.json, explained in probes/README.md.
 */
#ifndef PMCHECK_PROBE_H
#define PMCHECK_PROBE_H

#include <stdio.h>

#include <jansson.h>

struct pmc_probe_options {
	unsigned timeout_s; /* per probe; 0 means the default (10 s) */
	int deep;           /* also run what is slow to try (callgrind on /bin/true) */
};

/* Run every probe and return the record (caller owns; json_decref). NULL
 * only when memory runs out. */
json_t *pmc_probe_run(const struct pmc_probe_options *opt);

/* Print the record as a compact table for a person. */
void pmc_probe_print(const json_t *record, FILE *out);

/*
 * Every counter kind checked on known work in this process (pmc_kind_check),
 * as the record's "kinds" object: name -> {status, work, counted, cost_us,
 * injected, how}.  Mounts tracefs for the tracepoint check in a mount
 * namespace of the process's own when root and nobody has mounted it.  The
 * uprobe check leaves its uprobe registered until the process exits.
 */
json_t *pmc_probe_kinds(void);

/* The "kinds" object as lines, "    NAME  STATUS: WORDS", the probe's and
 * pmcheck validate's. */
void pmc_probe_print_kinds(const json_t *kinds, FILE *out);

#endif
