/* SPDX-License-Identifier: MIT */
/*
 * A command's objects (command.c): where `pmcheck stat` resolves a
 * command's calls: events; and the check of the fault switch every entry point
 * (the runner, the pmcheck command) makes before any work (kinds.c).  Part
 * of the command's interface (tools.h).
 */
#ifndef PMCHECK_CORE_COMMAND_H
#define PMCHECK_CORE_COMMAND_H

#include <stddef.h>

#include <pmcheck/event.h>

/* The n events of the list events, parsed once with
 * PMC_PARSE_DEFER_SYMBOLS into specs: each label[k] set to event k as
 * written, and each calls: event resolved in place, a bare calls:NAME in
 * the command program (a path; "" for none) or the libraries it loads
 * before those pmcheck has loaded.  0, or the first error, quoting the
 * list as written at that event's position (command.c). */
PMC_API int pmc__command_resolve(const char *events, const char *program, struct pmc_event_spec *specs,
				 size_t n, char (*label)[PMC_EVENT_NAME_MAX], struct pmc_error *err);

/* PMCHECK_FAULT_CHECKS, checked: 0 when it is unset or names only known
 * switches, else -EINVAL with *why naming the unknown word and listing the
 * valid ones (kinds.c). */
PMC_API int pmc__fault_switch_check(char *why, size_t size);

#endif
