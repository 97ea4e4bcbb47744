/* SPDX-License-Identifier: MIT */
/*
 * An event specification: what to count, as pmc_event_parse() (event.h)
 * fills it and pmc_counters_open() (counters.h) and the sim backend
 * (sim.h) read it.  Types and constants only, so that the layers beneath
 * the event parser use the spec without it; <pmcheck/event.h> includes it.
 *
 * A spec is a plain value the caller owns; it holds no descriptors and no
 * heap memory, so it can be copied with assignment.
 */
#ifndef PMCHECK_SPEC_H
#define PMCHECK_SPEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMC_EVENT_NAME_MAX 128
#define PMC_EVENT_PATH_MAX 1024

enum pmc_event_kind {
	PMC_KIND_HARDWARE = 1, /* generic hardware (PERF_TYPE_HARDWARE) */
	PMC_KIND_CACHE,        /* generic cache (PERF_TYPE_HW_CACHE) */
	PMC_KIND_RAW,          /* rNNNN (PERF_TYPE_RAW) */
	PMC_KIND_PMU,          /* pmu/terms/ with a sysfs PMU type */
	PMC_KIND_LIBPFM,       /* encoded by libpfm4 */
	PMC_KIND_SOFTWARE,     /* PERF_TYPE_SOFTWARE */
	PMC_KIND_BREAKPOINT,   /* PERF_TYPE_BREAKPOINT */
	PMC_KIND_UPROBE,       /* uprobe PMU, counts entries of a function */
	PMC_KIND_SIM,          /* sim:NAME[+NAME]: callgrind events, sim backend only;
				* config is a mask of enum pmc_sim_column bits */
	PMC_KIND_TRACEPOINT,   /* SUBSYSTEM:EVENT, config is the tracefs id */
};

/* Breakpoint access types, combinable (R|W); X stands alone. */
enum pmc_bp_access {
	PMC_BP_R = 1,
	PMC_BP_W = 2,
	PMC_BP_RW = 3,
	PMC_BP_X = 4,
};

struct pmc_event_spec {
	/* Canonical spelling: what perf would print, stable across runs. */
	char name[PMC_EVENT_NAME_MAX];
	enum pmc_event_kind kind;
	/* Name of the sysfs PMU the event belongs to when known ("cpu",
	 * "armv8_pmuv3", "software", "breakpoint", "uprobe", "msr"); empty for
	 * generic hardware events, which the kernel routes to the core PMU. */
	char pmu[64];

	/* perf_event_attr fields, ready to use. */
	uint32_t type;
	uint64_t config;
	uint64_t config1;
	uint64_t config2;
	uint64_t bp_addr;   /* breakpoint address */
	uint64_t bp_len;    /* breakpoint length in bytes */
	uint32_t bp_type;   /* HW_BREAKPOINT_* bits */
	unsigned exclude_user : 1;
	unsigned exclude_kernel : 1;
	unsigned exclude_hv : 1;
	unsigned precise_ip : 2;
	/* True when this event is counted by the CPU's PMU and so competes for
	 * hardware counters (and can be read with rdpmc/mrs). */
	unsigned uses_hw_counter : 1;

	/* uprobe only: object file path and the function's file offset.  The
	 * kernel reads the path through attr.uprobe_path at open time.  An
	 * empty path: a calls: event parsed with PMC_PARSE_DEFER_SYMBOLS and
	 * not resolved yet (pmc_event_resolve). */
	char path[PMC_EVENT_PATH_MAX];
	uint64_t probe_offset;
};

#ifdef __cplusplus
}
#endif

#endif
