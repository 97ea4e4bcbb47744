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

#endif
