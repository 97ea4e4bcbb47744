/* SPDX-License-Identifier: MIT */
/*
 * pmcheck error codes and the error record.
 *
 * Every fallible pmcheck function returns an int: 0 on success, a negative
 * errno value when the operating system refused something, or one of the
 * negative PMC_E* codes below for pmcheck's own conditions.  The codes live
 * far below -4095 so that they can never collide with an errno.
 *
 * Functions that can explain themselves also take a `struct pmc_error *`
 * (which may be NULL).  On failure it receives the code, the offending input
 * (an event string, a file name), the byte position inside that input when
 * the failure is a syntax error, and a complete message for a person: what
 * failed, why, and what to do about it.
 */
#ifndef PMCHECK_ERROR_H
#define PMCHECK_ERROR_H

#include <stddef.h>

#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* pmcheck's own conditions.  Keep in sync with the table in src/error.c. */
enum pmc_errcode {
	PMC_E_SYNTAX = -10001,       /* malformed event string */
	PMC_E_UNKNOWN_EVENT = -10002, /* well-formed, but no such event name */
	PMC_E_NO_PMU = -10003,       /* the PMU named or needed is not on this machine */
	PMC_E_NO_SYMBOL = -10004,    /* calls:/mem: symbol not found in loaded objects */
	PMC_E_BAD_FIELD = -10005,    /* pmu/field=value/: unknown field or value too wide */
	PMC_E_TOO_MANY = -10006,     /* more events than PMC_MAX_EVENTS */
	PMC_E_UNSCHEDULABLE = -10007, /* the PMU never runs this event, even alone */
	PMC_E_NO_SLOTS = -10008,     /* breakpoint debug registers exhausted */
	PMC_E_PRIVILEGE = -10009,    /* perf_event_paranoid / capabilities forbid it */
	PMC_E_NO_HW_PMU = -10010,    /* hardware event, but this machine has no hardware PMU */
	PMC_E_UNSUPPORTED = -10011,  /* the kernel or PMU does not support this attribute set */
	PMC_E_STATE = -10012,        /* API used in the wrong order (e.g. end before begin) */
	PMC_E_ELF = -10013,          /* an object file could not be read as ELF */
	PMC_E_LIBPFM = -10014,       /* libpfm4 failed to initialize */
	PMC_E_TOO_LONG = -10015,     /* a name or path does not fit its fixed buffer */
	PMC_E_NO_SIM = -10016,       /* the sim backend needs valgrind callgrind, absent or not in use */
	PMC_E_SIM = -10017,          /* a callgrind dump was missing or unreadable */
	PMC_E_RING = -10018,         /* a ring buffer holds a record that cannot be right */
};

/* Size of the message buffer in struct pmc_error. */
#define PMC_ERROR_MSG_MAX 512
#define PMC_ERROR_INPUT_MAX 256

/*
 * Details of the last failure of a call that took this record.  Plain data,
 * owned by the caller; pmc_error_clear() resets it.
 */
struct pmc_error {
	int code;                            /* same value the call returned */
	int position;                        /* byte offset into input, -1 if n/a */
	char input[PMC_ERROR_INPUT_MAX];     /* the text that was being handled */
	char message[PMC_ERROR_MSG_MAX];     /* full sentence(s) for a person */
};

/*
 * Short, static description of a code: pmcheck codes from the table, negative
 * errno values through strerror.  Never returns NULL.
 */
PMC_API const char *pmc_strerror(int code);

/* Reset a record to "no error" (code 0, position -1, empty strings). */
PMC_API void pmc_error_clear(struct pmc_error *err);

/*
 * Optional diagnostics sink.  The library never prints; it reports notable
 * decisions (a group split, a fallback from the user-page path to read())
 * to this callback when one is installed.  Levels: 0 debug, 1 info, 2 warning.
 * Passing NULL removes the callback.  Not thread-safe to change while other
 * threads use the library.
 */
typedef void (*pmc_log_fn)(int level, const char *message, void *ctx);
PMC_API void pmc_log_set(pmc_log_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
