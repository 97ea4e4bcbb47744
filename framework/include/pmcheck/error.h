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

/*
 * pmcheck's own conditions, one list: X(NAME, value, capability, text).
 * `capability` is 1 when the code means "this machine (its PMU, kernel or
 * privileges) cannot count it" rather than "the request is wrong"; see
 * pmc_error_is_capability().  The enum, pmc_strerror() and
 * pmc_error_name() are all made from it.
 */
#define PMC_ERRORS(X)                                                                       \
	X(PMC_E_SYNTAX, -10001, 0, "malformed event string")                                \
	X(PMC_E_UNKNOWN_EVENT, -10002, 0, "unknown event name")                              \
	X(PMC_E_NO_PMU, -10003, 1, "no such PMU on this machine")                            \
	X(PMC_E_NO_SYMBOL, -10004, 0, "symbol not found in the loaded objects")              \
	X(PMC_E_BAD_FIELD, -10005, 0, "unknown PMU format field or value out of range")      \
	X(PMC_E_TOO_MANY, -10006, 0, "too many events in one set")                           \
	X(PMC_E_UNSCHEDULABLE, -10007, 1, "the PMU never schedules this event")              \
	X(PMC_E_NO_SLOTS, -10008, 1, "no free breakpoint slot")                              \
	X(PMC_E_PRIVILEGE, -10009, 1, "not permitted by perf_event_paranoid or capabilities") \
	X(PMC_E_NO_HW_PMU, -10010, 1, "no hardware PMU on this machine")                     \
	X(PMC_E_UNSUPPORTED, -10011, 1, "not supported by this kernel or PMU")               \
	X(PMC_E_STATE, -10012, 0, "call made in the wrong state")                            \
	X(PMC_E_ELF, -10013, 0, "object file is not readable ELF")                           \
	X(PMC_E_LIBPFM, -10014, 0, "libpfm4 initialization failed")                          \
	X(PMC_E_TOO_LONG, -10015, 0, "name or path too long")                                \
	X(PMC_E_NO_SIM, -10016, 0, "the sim backend needs valgrind callgrind")               \
	X(PMC_E_SIM, -10017, 0, "callgrind dump missing or unreadable")                      \
	X(PMC_E_RING, -10018, 0, "corrupt perf ring buffer record")                         \
	X(PMC_E_NOT_COUNTING, -10019, 1, "the counter opens but does not count on this machine")

#define PMC__ERRCODE_ENUM(name, value, capability, text) name = value,
enum pmc_errcode { PMC_ERRORS(PMC__ERRCODE_ENUM) };
#undef PMC__ERRCODE_ENUM

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

/* The code's name ("PMC_E_NO_HW_PMU", "ENOENT" for -ENOENT where known),
 * or NULL for a code that is neither pmcheck's nor an errno. */
PMC_API const char *pmc_error_name(int code);

/*
 * Does `code` mean that this machine cannot count it (no such PMU or
 * hardware PMU, not permitted, no breakpoint slot, not supported or never
 * scheduled, a kind of counter that opens but failed its check on known
 * work (PMC_E_NOT_COUNTING, see pmc_kind_check() in machine.h), and the
 * errnos the kernel gives for those: ENOENT, EOPNOTSUPP,
 * EACCES, EPERM), rather than that the request is wrong?  A test harness
 * skips on these and errs on the rest.
 */
PMC_API int pmc_error_is_capability(int code);

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
