/* SPDX-License-Identifier: MIT */
/*
 * Facts about the machine the process runs on: CPU identity, which perf
 * PMUs exist, the perf_event_paranoid level.  Cheap enough to call per test
 * (a few sysfs reads and CPUID instructions); nothing here opens an event.
 */
#ifndef PMCHECK_MACHINE_H
#define PMCHECK_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMC_SIGNATURE_MAX 64

/* Identity of the CPU the caller runs on. */
struct pmc_cpu_id {
	/*
	 * perf-style signature, the hwdb key:
	 *   x86:   "GenuineIntel-6-CF-2" (vendor-family-model-stepping; family
	 *          in decimal, model and stepping in hex, extended fields
	 *          folded in as CPUID leaf 1 documents);
	 *   arm64: "ARM-0x41-0xd0c" (MIDR implementer and part number).
	 * "unknown" when neither source is available.
	 */
	char signature[PMC_SIGNATURE_MAX];
	char vendor[16];        /* "GenuineIntel", "AuthenticAMD", "ARM", "unknown" */
	char brand[64];         /* CPUID brand string; empty on arm64 */
	char arch[16];          /* "x86_64", "aarch64", ... (uname machine) */
	int family;             /* x86 display family; arm64: MIDR architecture field */
	int model;              /* x86 display model; arm64: MIDR part number */
	int stepping;           /* x86 stepping; arm64: MIDR variant<<4 | revision */
	uint64_t midr;          /* arm64 MIDR_EL1, 0 elsewhere */
	int hypervisor;         /* 1 yes, 0 no, -1 cannot tell (arm64 EL0) */
	const char *how;        /* where the signature came from (static string) */
};

/* Fill *id for the CPU the caller runs on.  Always succeeds; fields it
 * cannot determine read "unknown"/0/-1.  Returns 0. */
PMC_API int pmc_cpu_identify(struct pmc_cpu_id *id);

/*
 * Does this machine expose a CPU (core) PMU to perf?  When it does not,
 * hardware and cache events cannot be opened.  If name is not NULL the
 * comma-separated list of PMUs that do exist is stored there (terminated),
 * for messages.
 */
PMC_API int pmc_machine_has_hw_pmu(char *pmus, size_t size);

/* A core PMU: one per core type. */
struct pmc_core_pmu {
	char name[64];  /* "cpu", "cpu_core", "cpu_atom", "armv8_cortex_a53", ... */
	uint32_t type;  /* its perf_event_attr.type (sysfs type file) */
	char cpus[256]; /* the CPUs it counts on ("0-7,16"); empty when sysfs has no
			 * cpus file (x86 "cpu": every CPU) */
};

/*
 * The core PMUs sysfs lists (under the parser's root, see
 * pmc_event_set_sysfs_root): a PMU named "cpu", or any PMU with a "cpus"
 * file (x86 hybrids, every arm64 CPU PMU).  Stores up to `max` of them in
 * out, sorted by type (then name), and returns how many there are.  Two or more make a
 * hybrid machine: generic hardware and cache events are then opened on
 * each and summed (see counters.h).
 */
PMC_API size_t pmc_machine_core_pmus(struct pmc_core_pmu *out, size_t max);

/* Is the named sysfs PMU ("breakpoint", "uprobe", "tracepoint") present? */
PMC_API int pmc_machine_has_pmu(const char *pmu);

/* /proc/sys/kernel/perf_event_paranoid, or INT32_MIN when unreadable. */
PMC_API int pmc_machine_paranoid(void);

/*
 * Write `len` bytes to `path` atomically: a temporary file in the same
 * directory, fsync, rename(2).  Readers see the old file or the new one,
 * never a torn one; on failure the old file is untouched and no temporary
 * is left behind.  Returns 0 or a negative errno.
 */
PMC_API int pmc_write_file_atomic(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
