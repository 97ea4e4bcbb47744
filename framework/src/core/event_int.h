/* SPDX-License-Identifier: MIT */
/*
 * The event parser's private interface.  event_parse.c holds the grammar's
 * entry points (pmc_event_parse, the dispatcher); event_common.c what every
 * form shares (name tables, the error helper, modifiers, canonical names)
 * and the generic names; each other family of forms has its own file:
 * event_pmu.c (pmu/terms/, libpfm4, tracepoints), event_addr.c (mem:,
 * calls:, sim:).  Calls go one way: event_parse.c to the forms, the forms
 * to event_common.c.
 */
#ifndef PMCHECK_EVENT_INT_H
#define PMCHECK_EVENT_INT_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/event.h>

#include "util/util_int.h"

/* One call's parsing context: messages quote the whole input and give
 * positions inside it. */
struct pmc__pctx {
	const char *text; /* the whole input handed to the caller's call */
	int base;         /* offset of this event inside text */
	struct pmc_error *err;
	unsigned flags;   /* PMC_PARSE_* */
};

/* Fill p->err with "event "...", at position N: why" (pos < 0: no position)
 * and return code. */
int pmc__perr(struct pmc__pctx *p, int code, int pos, const char *fmt, ...)
	PMC__PRINTF(4, 5);
/* The input as messages quote it (long inputs shortened, length given). */
void pmc__shown_input(const char *text, char *buf, size_t size);
/* A sysfs read that failed for a reason other than absence. */
int pmc__sysfs_error(struct pmc__pctx *p, int rc, const char *path);
/* [A-Za-z_.][A-Za-z0-9_.]*: 1 or 0. */
int pmc__is_ident(const char *s, size_t len);
/* Apply the modifier letters s[0..len) (u, k, h, p...) found at pos. */
int pmc__apply_modifiers(struct pmc__pctx *p, int pos, const char *s, size_t len,
			 struct pmc_event_spec *spec);
/* Set spec->name to base + sep + the modifiers the spec carries. */
int pmc__set_name(struct pmc__pctx *p, struct pmc_event_spec *spec, const char *base,
		  const char *sep);
/* Canonical name of a software event's config, or "?". */
const char *pmc__software_name(uint64_t config);

/* The generic forms (NAME, cache names, rNNNN) of s[0..blen): *handled
 * is 0 when s is none of them. */
int pmc__parse_generic(struct pmc__pctx *p, const char *s, size_t blen,
		       struct pmc_event_spec *spec, int *handled);
/* Is s[0..len) a generic name (then ':' starts its modifiers)? */
int pmc__is_generic_name(const char *s, size_t len);

/* The forms, each given one event's text s[0..len). */
int pmc__parse_pmu_form(struct pmc__pctx *p, const char *s, size_t len,
			struct pmc_event_spec *spec);
/* Why libpfm4 cannot be consulted (not installed, not initialised), or NULL. */
const char *pmc__libpfm_unusable(void);
int pmc__parse_libpfm(struct pmc__pctx *p, const char *s, size_t len,
		      struct pmc_event_spec *spec, int *handled);
int pmc__parse_tracepoint(struct pmc__pctx *p, const char *s, size_t len,
			  struct pmc_event_spec *spec, int *handled);
int pmc__parse_mem(struct pmc__pctx *p, const char *s, size_t len,
		   struct pmc_event_spec *spec);
int pmc__parse_calls(struct pmc__pctx *p, const char *s, size_t len,
		     struct pmc_event_spec *spec);
/* A calls: event parsed with PMC_PARSE_DEFER_SYMBOLS (its path empty)
 * resolved in place: in the object its name gives, else in object when
 * that is not NULL or "" (the name then becomes calls:NAME@object), else
 * in this process's objects.  Errors in p's context, at the function's
 * name; spec->name is unchanged on failure. */
int pmc__calls_resolve(struct pmc__pctx *p, struct pmc_event_spec *spec, const char *object);
int pmc__parse_sim(struct pmc__pctx *p, const char *s, size_t len,
		   struct pmc_event_spec *spec);
/* The tracefs mount in use, mounting it when absent; NULL with *why. */
const char *pmc__tracefs_root(const char **why);

#endif
