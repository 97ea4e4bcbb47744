/* SPDX-License-Identifier: MIT */
/*
 * Facts about the machine the process runs on: which perf PMUs exist, the
 * perf_event_paranoid level, which counter kinds count.  Cheap enough to
 * call per test (a few sysfs reads); nothing but a kind's check opens an
 * event.  The CPU's identity (pmc_cpu_identify) is the hwdb's key and is
 * declared in hwdb.h; the atomic file write in file.h, which this header
 * includes.
 */
#ifndef PMCHECK_MACHINE_H
#define PMCHECK_MACHINE_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/event.h>
#include <pmcheck/export.h>
#include <pmcheck/file.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * Counter kinds checked on known work.  A kind of counter can open without
 * error and still not count: on some hypervisors' guests every hardware
 * breakpoint opens and never fires.  Before a verdict rests on a kind,
 * pmcheck counts a known amount of work with it once per process; a kind
 * that opens but miscounts is refused with PMC_E_NOT_COUNTING (a capability
 * error), so a harness skips instead of judging zeros.
 *
 * pmc_counters_open() runs the check of every kind in the set that has one,
 * except PMC_KIND_CHECK_UPROBE: a uprobe's removal costs ~50 ms in the
 * kernel per process (measured on 6.18), and a uprobe is a software trap
 * that no hypervisor intercepts; pmcheck probe runs it.
 *
 * For tests, PMCHECK_FAULT_CHECKS (a comma-separated list of kind names,
 * "breakpoint" for the three breakpoint kinds, or "all") makes the named
 * checks fail on a machine where they pass: the check runs, its count is
 * replaced by 0, and its summary says the fault was injected.
 */
enum pmc_kind_check_id {
	PMC_KIND_CHECK_BP_WRITE = 0, /* write breakpoint: 64 stores */
	PMC_KIND_CHECK_BP_RW,        /* read-write breakpoint: 32 stores, 32 loads */
	PMC_KIND_CHECK_BP_EXEC,      /* execute breakpoint: 64 calls */
	PMC_KIND_CHECK_UPROBE,       /* uprobe (calls:): 64 calls */
	PMC_KIND_CHECK_TRACEPOINT,   /* syscalls:sys_enter_getppid: 64 getppid(2) */
	PMC_KIND_CHECK_PAGE_FAULTS,  /* page-faults:u: 64 first writes to fresh pages */
	PMC_KIND_CHECK_INSTRUCTIONS, /* instructions:u: at least 1 per loop iteration */
	PMC_KIND_CHECK_BRANCHES,     /* branches:u: at least 1 per loop iteration */
	PMC_KIND_CHECK_CYCLES,       /* cycles:u: more than 0 over the loop */
	PMC_KIND_CHECKS              /* how many */
};

enum pmc_kind_status {
	PMC_KIND_COUNTS = 1,       /* counted the known work as expected */
	PMC_KIND_NOT_COUNTING = 2, /* opened, but miscounted the known work */
	PMC_KIND_UNAVAILABLE = 3,  /* could not be opened here (reason in summary) */
};

struct pmc_kind_check {
	enum pmc_kind_check_id id;
	enum pmc_kind_status status;
	uint64_t work;    /* the known work: stores, calls, syscalls, pages, iterations */
	uint64_t counted; /* what the counter said (0 when the fault was injected) */
	uint64_t cost_ns; /* wall time of the check: open, work, read, close */
	int injected;     /* 1 when PMCHECK_FAULT_CHECKS named this kind */
	int error;        /* PMC_KIND_UNAVAILABLE: the open's code */
	/* One sentence for a person, the same words everywhere (skip reasons,
	 * pmcheck probe, pmcheck stat): "write breakpoints open but never fire
	 * on this machine: a check of 64 stores counted 0 (...)". */
	char summary[512];
};

/* The kind's name: "breakpoint-write", "page-faults", ...; "?" outside
 * the enum.  The names PMCHECK_FAULT_CHECKS takes. */
PMC_API const char *pmc_kind_check_name(enum pmc_kind_check_id id);

/*
 * Check a kind on this machine (once per process: later calls return the
 * first answer, except an unavailable one, which is tried again since its
 * cause, such as every breakpoint slot taken, may pass).  Fills *out (may
 * be NULL).  Returns 0 when the kind counts, PMC_E_NOT_COUNTING when it
 * opens but miscounts, or the open's negative code when it is unavailable.
 * The check opens, counts and closes its own event; call it outside any
 * counted window.  Thread-safe.
 */
PMC_API int pmc_kind_check(enum pmc_kind_check_id id, struct pmc_kind_check *out);

/* The status in the words pmcheck uses everywhere: "available", "opens
 * but does not count", "unavailable"; "?" outside the enum. */
PMC_API const char *pmc_kind_status_name(enum pmc_kind_status status);

/* Which check vouches for an event spec: breakpoints by access, uprobes,
 * tracepoints, page faults, and hardware events (instructions, branches
 * and cycles by name; any other hardware-counter event by instructions).
 * -1 for a kind with no check (other software events, msr/, sim:). */
PMC_API int pmc_kind_check_of(const struct pmc_event_spec *spec);

#ifdef __cplusplus
}
#endif

#endif
