/* SPDX-License-Identifier: MIT */
/*
 * A command's objects (command.c): what `pmcheck stat` binds a command's
 * calls: events with; and the check of the fault switch every entry point
 * (the runner, the pmcheck command) makes before any work (kinds.c).  Part
 * of the command's interface (tools.h).
 */
#ifndef PMCHECK_CORE_COMMAND_H
#define PMCHECK_CORE_COMMAND_H

#include <stddef.h>

#include <pmcheck/event.h>

/* The event list with the command's calls: events bound (command.c). */
PMC_API int pmc__bind_calls(const char *events, const char *program, char *out, size_t size,
			    char (*label)[PMC_EVENT_NAME_MAX]);

/* PMCHECK_FAULT_CHECKS, checked: 0 when it is unset or names only known
 * switches, else -EINVAL with *why naming the unknown word and listing the
 * valid ones (kinds.c). */
PMC_API int pmc__fault_switch_check(char *why, size_t size);

#endif
