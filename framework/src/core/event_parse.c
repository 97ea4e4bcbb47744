/* SPDX-License-Identifier: MIT */
/*
 * Event string parser: the entry points and the dispatcher.  The grammar
 * follows perf stat -e where perf has a form (see event.h); every accepted
 * string gets a canonical name, and every rejected one an error with the
 * byte position and the reason.  The generic names, modifiers and helpers
 * are event_common.c; the other forms event_pmu.c and event_addr.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <dirent.h>
#include <pthread.h>
#include <sys/mount.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <perfmon/pfmlib_perf_event.h>

#include <pmcheck/event.h>
#include <pmcheck/machine.h>
#include <pmcheck/sim.h>

#include "core_int.h"
#include "event_int.h"
static int parse_one(struct pmc__pctx *p, const char *s, size_t len,
		     struct pmc_event_spec *spec)
{
	const char *colon;
	size_t blen = len;
	int rc, handled;
	char base[PMC_EVENT_NAME_MAX];

	memset(spec, 0, sizeof(*spec));
	if (len == 0)
		return pmc__perr(p, PMC_E_SYNTAX, 0, "empty event name");
	for (size_t i = 0; i < len; i++)
		if (isspace((unsigned char)s[i]))
			return pmc__perr(p, PMC_E_SYNTAX, (int)i, "unexpected white space");
	if (len >= 4 && !strncmp(s, "mem:", 4))
		return pmc__parse_mem(p, s, len, spec);
	if (len >= 6 && !strncmp(s, "calls:", 6))
		return pmc__parse_calls(p, s, len, spec);
	if (len >= 4 && !strncmp(s, "sim:", 4))
		return pmc__parse_sim(p, s, len, spec);
	if (memchr(s, '/', len))
		return pmc__parse_pmu_form(p, s, len, spec);

	if (len >= 3 && s[0] == 'r' && s[1] == '0' && (s[2] == 'x' || s[2] == 'X'))
		return pmc__perr(p, PMC_E_SYNTAX, 1,
			    "a raw event is r and hex digits without 0x (r%.*s)", (int)(len > 3 ? len - 3 : 0), s + 3);
	/* A generic name (hardware, software, cache, rNNNN) is followed by one
	 * group of modifiers after its first ':', and nothing else may follow:
	 * "instructions:q" is a bad modifier, not a libpfm4 name. */
	colon = memchr(s, ':', len);
	if (colon && pmc__is_generic_name(s, (size_t)(colon - s))) {
		if (colon + 1 == s + len)
			return pmc__perr(p, PMC_E_SYNTAX, (int)len,
				    "expected modifiers after ':' (u, k, h, p)");
		blen = (size_t)(colon - s);
	} else if (colon) {
		/* libpfm4 names hold ':' themselves (pmu::EVENT:UMASK); only
		 * a last segment of modifier letters is pmcheck's. */
		colon = memrchr(s, ':', len);
		if (colon + 1 == s + len)
			return pmc__perr(p, PMC_E_SYNTAX, (int)len, "expected modifiers after ':'");
		if (strspn(colon + 1, "ukhp") >= (size_t)(s + len - colon - 1) && colon > s &&
		    colon[-1] != ':')
			blen = (size_t)(colon - s);
	}
	if (blen < len) {
		rc = pmc__apply_modifiers(p, (int)blen + 1, s + blen + 1, len - blen - 1, spec);
		if (rc)
			return rc;
	}
	if (blen >= sizeof(base))
		return pmc__perr(p, PMC_E_TOO_LONG, PMC_EVENT_NAME_MAX - 1,
			    "the event name is %zu bytes, longer than any event's (at most %d); check for a missing ','",
			    blen, PMC_EVENT_NAME_MAX - 1);
	rc = pmc__parse_generic(p, s, blen, spec, &handled);
	if (handled)
		return rc;
	if (colon) {
		rc = pmc__parse_tracepoint(p, s, len, spec, &handled);
		if (handled)
			return rc;
	}
	{
		struct pmc_event_spec keep = *spec;

		rc = pmc__parse_libpfm(p, s, blen, spec, &handled);
		if (handled) {
			if (rc == 0) {
				/* pmcheck's modifiers win over libpfm's defaults. */
				spec->exclude_user = keep.exclude_user;
				spec->exclude_kernel = keep.exclude_kernel;
				spec->exclude_hv = keep.exclude_hv;
				spec->precise_ip = keep.precise_ip;
				memcpy(base, spec->name, sizeof(base));
				rc = pmc__set_name(p, spec, base, ":");
			}
			return rc;
		}
	}
	{
		const char *pfm_why = pmc__libpfm_unusable();
		char pfm_hint[320];
		const char *hint = pmc__has_hw_pmu() ? ""
				   : " (no hardware PMU here: libpfm4 knows only the PMUs CPUID shows)";
		const char *why = NULL;

		if (pfm_why)
			snprintf(pfm_hint, sizeof(pfm_hint), " libpfm4 was not consulted: %s", pfm_why);

		if (colon && !pmc__tracefs_root(&why))
			return pmc__perr(p, PMC_E_UNKNOWN_EVENT, 0,
				    "\"%.*s\" is no event pmcheck knows, and if it is a tracepoint: %s",
				    (int)(blen < 64 ? blen : 64), s, why);
		if (pfm_why) /* the fix is libpfm4's, not the spelling's */
			return pmc__perr(p, PMC_E_UNKNOWN_EVENT, 0,
				    "unknown event \"%.*s\": not a generic name, rNNNN or tracepoint, and%s",
				    (int)(blen < 64 ? blen : 64), s, pfm_hint);
		return pmc__perr(p, PMC_E_UNKNOWN_EVENT, 0,
			    "unknown event \"%.*s\": not a generic name (instructions, task-clock, L1-dcache-load-misses, ...), rNNNN, tracepoint (SUBSYSTEM:EVENT) or libpfm4 event%s; check the spelling, or write pmu/event=.../ or pfm_pmu::EVENT",
			    (int)(blen < 64 ? blen : 64), s, hint);
	}
}

int pmc_event_parse(const char *text, struct pmc_event_spec *spec, struct pmc_error *err)
{
	struct pmc__pctx p = { text, 0, err, 0 };

	if (!text || !spec)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_event_parse: NULL argument");
	pmc_error_clear(err);
	return parse_one(&p, text, strlen(text), spec);
}

size_t pmc_event_list_token(const char *s)
{
	const char *slash;

	/* Commas inside pmu/.../ belong to the event; mem: and calls: use '/'
	 * and '@' differently and end at the next comma. */
	if (!strncmp(s, "mem:", 4) || !strncmp(s, "calls:", 6) || !strncmp(s, "sim:", 4))
		return strcspn(s, ",");
	slash = s + strcspn(s, ",/");
	if (*slash == '/') {
		const char *close = strchr(slash + 1, '/');

		return (size_t)((close ? close + strcspn(close, ",") : slash + strlen(slash)) - s);
	}
	return (size_t)(slash - s);
}

int pmc_event_parse_list(const char *text, struct pmc_event_spec *specs, size_t max,
			 size_t *count, struct pmc_error *err)
{
	return pmc_event_parse_list_flags(text, 0, specs, max, count, err);
}

int pmc_event_parse_list_flags(const char *text, unsigned flags, struct pmc_event_spec *specs,
			       size_t max, size_t *count, struct pmc_error *err)
{
	struct pmc__pctx p = { text, 0, err, flags };
	const char *s = text;
	size_t n = 0;

	if (!text || !count)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_event_parse_list: NULL argument");
	if (flags & ~(unsigned)PMC_PARSE_DEFER_SYMBOLS)
		return pmc__fail(err, -EINVAL, "", -1,
				 "pmc_event_parse_list_flags: unknown flags 0x%x", flags);
	pmc_error_clear(err);
	*count = 0;
	for (;;) {
		const char *e = s + pmc_event_list_token(s);
		int rc;

		if (n == max) {
			char shown[128];

			pmc__shown_input(text, shown, sizeof(shown));
			return pmc__fail(err, PMC_E_TOO_MANY, text, (int)(s - text),
					 "event list \"%s\", at position %d: more than %zu events; split the list",
					 shown, (int)(s - text), max);
		}
		p.base = (int)(s - text);
		rc = parse_one(&p, s, (size_t)(e - s), &specs[n]);
		if (rc)
			return rc;
		n++;
		if (!*e)
			break;
		s = e + 1;
	}
	*count = n;
	return 0;
}
