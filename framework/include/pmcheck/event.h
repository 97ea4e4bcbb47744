/* SPDX-License-Identifier: MIT */
/*
 * Event specifications: what to count, parsed from perf-stat-like strings.
 *
 * Accepted forms (see docs/events.md):
 *   instructions, cycles, branch-misses, ...      generic hardware events
 *   L1-dcache-load-misses, LLC-loads, ...         hardware cache events
 *   task-clock, page-faults, context-switches ... software events
 *   r01c4                                         raw config for the core PMU
 *   cpu/event=0xc4,umask=0x11/, msr/tsc/          PMU-qualified, fields from sysfs
 *   INST_RETIRED:ANY_P, spr::BR_MISP_RETIRED:...  libpfm4 names
 *   mem:0x1234[/8][:rw], mem:SYMBOL:w             hardware breakpoints
 *   calls:SYMBOL[@OBJECT]                         uprobe on a function's entry
 *   sched:sched_switch, syscalls:sys_enter_read   tracepoints (id from tracefs)
 *   sim:Bcm, sim:Bcm+Bim                          callgrind events (sim backend)
 * followed by optional modifiers `:u`, `:k`, `:h` (any combination; naming
 * some excludes the others, as in perf) and `:p`..`:ppp` (precise_ip).
 *
 * The spec itself, a plain value every layer hands on, is in spec.h.
 */
#ifndef PMCHECK_EVENT_H
#define PMCHECK_EVENT_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>
#include <pmcheck/export.h>
#include <pmcheck/spec.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The kind's name in results and listings ("hardware", "uprobe", ...), or
 * "?" for a value outside the enum. */
PMC_API const char *pmc_event_kind_name(enum pmc_event_kind kind);

/*
 * Parse one event string into *spec.  On failure returns a negative code and
 * fills *err (may be NULL) with the text, the byte position of the problem and
 * a message saying what was expected:
 *   PMC_E_SYNTAX         malformed text
 *   PMC_E_UNKNOWN_EVENT  well-formed but not a known name (and not libpfm4's)
 *   PMC_E_NO_PMU         pmu/.../ names a PMU absent from sysfs
 *   PMC_E_BAD_FIELD      pmu/.../ uses a field the PMU does not define, or a
 *                        value wider than the field
 *   PMC_E_NO_SYMBOL      calls:/mem: symbol not defined by any loaded object,
 *                        or calls: names a compiler clone (NAME.cold,
 *                        NAME.part.N, NAME.isra.N): the message names the
 *                        function to count instead
 * Parsing consults sysfs (PMU types and formats) and the process's loaded
 * objects; it never opens a perf event.
 */
PMC_API int pmc_event_parse(const char *text, struct pmc_event_spec *spec,
			    struct pmc_error *err);

/* The length of the first event of a comma-separated list, cut as
 * pmc_event_parse_list cuts it (a comma inside pmu/.../ belongs to it). */
PMC_API size_t pmc_event_list_token(const char *list);

/*
 * Parse a comma-separated list ("instructions,cycles:u,msr/tsc/").  Commas
 * inside pmu/.../ are part of that event.  Fills at most `max` specs and
 * stores their number in *count.  Errors as pmc_event_parse, with positions
 * relative to the whole list.
 */
PMC_API int pmc_event_parse_list(const char *text, struct pmc_event_spec *specs,
				 size_t max, size_t *count, struct pmc_error *err);

/* Flags of pmc_event_parse_list_flags(). */
enum pmc_parse_flags {
	/* calls:SYMBOL[@OBJECT] is checked for its form, kind and name only:
	 * the symbol is not looked up, the path is left empty.  What a list
	 * holds (its kinds, its hardware events, what the sim backend can
	 * count) is then known before the objects are loaded, e.g. a library
	 * the program dlopen()s later. */
	PMC_PARSE_DEFER_SYMBOLS = 1,
};

/*
 * pmc_event_parse_list() with PMC_PARSE_* flags.  With
 * PMC_PARSE_DEFER_SYMBOLS, call pmc_event_resolve() on each spec before
 * pmc_counters_open(), which refuses an unresolved one.  -EINVAL for an
 * unknown flag.
 */
PMC_API int pmc_event_parse_list_flags(const char *text, unsigned flags,
				       struct pmc_event_spec *specs, size_t max,
				       size_t *count, struct pmc_error *err);

/*
 * Look up the symbol of a calls: event parsed with PMC_PARSE_DEFER_SYMBOLS,
 * in the objects loaded now (see pmc_symbol_resolve), and fill its path,
 * offset and the uprobe PMU's type.  A spec that needs no lookup (any other
 * kind, or resolved already) is left as it is: 0.  Errors as
 * pmc_event_parse: PMC_E_NO_SYMBOL (the message says which symbol and
 * why), PMC_E_NO_PMU (no uprobe PMU), with *err quoting the event.
 */
PMC_API int pmc_event_resolve(struct pmc_event_spec *spec, struct pmc_error *err);

/*
 * The API form of a breakpoint: watch `len` bytes at `addr` (1, 2, 4 or 8;
 * for PMC_BP_X the length is ignored and set to sizeof(long)) for the given
 * access.  Returns -EINVAL (with *err filled) for a bad length or access.
 */
PMC_API int pmc_event_breakpoint(struct pmc_event_spec *spec, const void *addr,
				 size_t len, unsigned access,
				 struct pmc_error *err);

/*
 * Where the parser looks for PMUs; defaults to /sys/bus/event_source/devices.
 * Tests point it at a fixture tree.  The string is copied.  NULL restores the
 * default.  Not thread-safe against concurrent parsing.
 */
PMC_API void pmc_event_set_sysfs_root(const char *path);

/* The PMU directory in use (the default, or what was set above). */
PMC_API const char *pmc_event_sysfs_root(void);

/*
 * Resolve a function or object symbol in the loaded objects of this process,
 * searching the main program first and then shared objects in load order.
 * `object` (may be NULL) restricts the search to objects whose path contains
 * it; when no loaded object matches and `object` is the path of an ELF file,
 * that file's own symbols answer (a program this process does not run: the
 * run-time address is then 0), and then a file of that name in the dynamic
 * linker's search path for this program (a library dlopen()ed later; the
 * address is 0).  Compiler clones (NAME.cold, NAME.part.N, NAME.isra.N)
 * never answer for a function.  On success fills the object's path, the
 * symbol's file offset (for uprobes) and its run-time address.  Returns
 * PMC_E_NO_SYMBOL when absent.
 */
PMC_API int pmc_symbol_resolve(const char *symbol, const char *object,
			       char *path, size_t path_size,
			       uint64_t *file_offset, uint64_t *address,
			       struct pmc_error *err);

#ifdef __cplusplus
}
#endif

#endif
