/* SPDX-License-Identifier: MIT */
/*
 * What every form of the event grammar shares: the name tables (generic
 * hardware, software and cache events), the error helper that quotes the
 * input with a position, the modifiers and canonical names, and the
 * generic forms (NAME, cache names, rNNNN).  event_parse.c dispatches to
 * these and to the forms in event_pmu.c and event_addr.c.
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
/* ---- name tables --------------------------------------------------------- */

struct pmc__named {
	const char *name; /* canonical first, aliases after with same value */
	uint64_t config;
};

static const struct pmc__named hw_events[] = {
	{ "cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "cpu-cycles", PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_COUNT_HW_BUS_CYCLES },
	{ "stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
	{ "stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
	{ "ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES },
};

static const struct pmc__named sw_events[] = {
	{ "cpu-clock", PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "faults", PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cs", PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "migrations", PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ },
	{ "alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS },
	{ "emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS },
	{ "dummy", PERF_COUNT_SW_DUMMY },
	{ "bpf-output", PERF_COUNT_SW_BPF_OUTPUT },
	{ "cgroup-switches", PERF_COUNT_SW_CGROUP_SWITCHES },
};

/* Cache names, operations and results: canonical spelling first. */
static const struct pmc__named cache_ids[] = {
	{ "L1-dcache", PERF_COUNT_HW_CACHE_L1D },
	{ "l1-d", PERF_COUNT_HW_CACHE_L1D },
	{ "l1d", PERF_COUNT_HW_CACHE_L1D },
	{ "L1-data", PERF_COUNT_HW_CACHE_L1D },
	{ "L1-icache", PERF_COUNT_HW_CACHE_L1I },
	{ "l1-i", PERF_COUNT_HW_CACHE_L1I },
	{ "l1i", PERF_COUNT_HW_CACHE_L1I },
	{ "L1-instruction", PERF_COUNT_HW_CACHE_L1I },
	{ "LLC", PERF_COUNT_HW_CACHE_LL },
	{ "L2", PERF_COUNT_HW_CACHE_LL },
	{ "dTLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "d-tlb", PERF_COUNT_HW_CACHE_DTLB },
	{ "Data-TLB", PERF_COUNT_HW_CACHE_DTLB },
	{ "iTLB", PERF_COUNT_HW_CACHE_ITLB },
	{ "i-tlb", PERF_COUNT_HW_CACHE_ITLB },
	{ "Instruction-TLB", PERF_COUNT_HW_CACHE_ITLB },
	{ "branch", PERF_COUNT_HW_CACHE_BPU },
	{ "bpu", PERF_COUNT_HW_CACHE_BPU },
	{ "btb", PERF_COUNT_HW_CACHE_BPU },
	{ "bpc", PERF_COUNT_HW_CACHE_BPU },
	{ "node", PERF_COUNT_HW_CACHE_NODE },
};

static const struct pmc__named cache_ops[] = {
	{ "load", PERF_COUNT_HW_CACHE_OP_READ },
	{ "loads", PERF_COUNT_HW_CACHE_OP_READ },
	{ "read", PERF_COUNT_HW_CACHE_OP_READ },
	{ "store", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "stores", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "write", PERF_COUNT_HW_CACHE_OP_WRITE },
	{ "prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH },
	{ "prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH },
	{ "speculative-read", PERF_COUNT_HW_CACHE_OP_PREFETCH },
	{ "speculative-load", PERF_COUNT_HW_CACHE_OP_PREFETCH },
};

static const struct pmc__named cache_results[] = {
	{ "refs", PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "references", PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "ops", PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "access", PERF_COUNT_HW_CACHE_RESULT_ACCESS },
	{ "misses", PERF_COUNT_HW_CACHE_RESULT_MISS },
	{ "miss", PERF_COUNT_HW_CACHE_RESULT_MISS },
};

/* Canonical name of the entry with this config (the first in the table). */
static const char *canonical_of(const struct pmc__named *t, size_t n, uint64_t config)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].config == config)
			return t[i].name;
	return "?";
}

const char *pmc__software_name(uint64_t config)
{
	return canonical_of(sw_events, PMC__COUNT(sw_events), config);
}

static const struct pmc__named *lookup(const struct pmc__named *t, size_t n,
				       const char *s, size_t len)
{
	for (size_t i = 0; i < n; i++)
		if (strlen(t[i].name) == len && strncasecmp(t[i].name, s, len) == 0)
			return &t[i];
	return NULL;
}

/* Longest table entry that prefixes s (case-insensitive). */
static const struct pmc__named *lookup_prefix(const struct pmc__named *t, size_t n,
					      const char *s, size_t *used)
{
	const struct pmc__named *best = NULL;
	size_t best_len = 0;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(t[i].name);

		if (l > best_len && strncasecmp(t[i].name, s, l) == 0) {
			best = &t[i];
			best_len = l;
		}
	}
	*used = best_len;
	return best;
}

const char *pmc_event_kind_name(enum pmc_event_kind kind)
{
	static const char *const names[] = { "?", "hardware", "cache", "raw", "pmu", "libpfm4",
					     "software", "breakpoint", "uprobe", "sim", "tracepoint" };

	return (unsigned)kind < PMC__COUNT(names) ? names[kind] : "?";
}

/* ---- helpers ------------------------------------------------------------- */

/* The input as a message quotes it: whole up to 96 bytes, else its start,
 * an ellipsis and its length, so the reason after it is never cut off. */
void pmc__shown_input(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);
	char head[80], escaped[320];

	/* Control characters escaped: the text may come from a terminal or
	 * a file, and must not move the cursor or forge a line. */
	if (n <= 96) {
		pmc__escape_ctl(buf, size, text);
	} else {
		snprintf(head, sizeof(head), "%.72s", text);
		snprintf(buf, size, "%s... (%zu bytes)",
			 pmc__escape_ctl(escaped, sizeof(escaped), head), n);
	}
}

int pmc__perr(struct pmc__pctx *p, int code, int pos, const char *fmt, ...)
{
	char raw[PMC_ERROR_MSG_MAX - 160], why[PMC_ERROR_MSG_MAX - 160], shown[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	/* The reason may quote the input again. */
	pmc__escape_ctl(why, sizeof(why), raw);
	pmc__shown_input(p->text, shown, sizeof(shown));
	if (pos >= 0)
		return pmc__fail(p->err, code, p->text, p->base + pos,
				 "event \"%s\", at position %d: %s", shown, p->base + pos, why);
	return pmc__fail(p->err, code, p->text, -1, "event \"%s\": %s", shown, why);
}

/* A sysfs read that failed for another reason than absence (EMFILE,
 * EACCES, EIO): the parser must not call that "no such PMU or field". */
int pmc__sysfs_error(struct pmc__pctx *p, int rc, const char *path)
{
	if (rc == -EMFILE || rc == -ENFILE)
		return pmc__perr(p, rc, 0, "cannot read %s: out of file descriptors (%s); raise the limit (ulimit -n) or close descriptors",
			    path, strerror(-rc));
	return pmc__perr(p, rc, 0, "cannot read %s: %s", path, strerror(-rc));
}

int pmc__is_ident(const char *s, size_t len)
{
	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '.'))
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

/* ---- modifiers ----------------------------------------------------------- */

/* s[0..len) are modifier letters (after the ':' or the closing '/'). */
int pmc__apply_modifiers(struct pmc__pctx *p, int pos, const char *s, size_t len,
			   struct pmc_event_spec *spec)
{
	int u = 0, k = 0, h = 0, precise = 0;

	for (size_t i = 0; i < len; i++) {
		int *flag = NULL;

		switch (s[i]) {
		case 'u': flag = &u; break;
		case 'k': flag = &k; break;
		case 'h': flag = &h; break;
		case 'p':
			if (++precise > 3)
				return pmc__perr(p, PMC_E_SYNTAX, pos + (int)i,
					    "at most three 'p' modifiers (precise_ip is 0..3)");
			continue;
		case ':':
			return pmc__perr(p, PMC_E_SYNTAX, pos + (int)i,
				    "modifiers form one group after a single ':' (for example instructions:uk), not several");
		default:
			if (isprint((unsigned char)s[i]))
				return pmc__perr(p, PMC_E_SYNTAX, pos + (int)i,
					    "unknown modifier '%c'; modifiers are u (user), k (kernel), h (hypervisor) and p (precise)",
					    s[i]);
			return pmc__perr(p, PMC_E_SYNTAX, pos + (int)i,
				    "unknown modifier (byte 0x%02x); modifiers are u (user), k (kernel), h (hypervisor) and p (precise)",
				    (unsigned char)s[i]);
		}
		if (*flag)
			return pmc__perr(p, PMC_E_SYNTAX, pos + (int)i,
				    "modifier '%c' given twice", s[i]);
		*flag = 1;
	}
	if (u || k || h) {
		spec->exclude_user = !u;
		spec->exclude_kernel = !k;
		spec->exclude_hv = !h;
	}
	spec->precise_ip = (unsigned)precise & 3u;
	return 0;
}

/* Canonical modifier suffix from the spec's bits (":u", ":uk", ":pp"...). */
static void modifier_suffix(const struct pmc_event_spec *s, char *buf, size_t size)
{
	char all[8];
	size_t n = 0;

	if (s->exclude_user || s->exclude_kernel || s->exclude_hv) {
		if (!s->exclude_user)
			all[n++] = 'u';
		if (!s->exclude_kernel)
			all[n++] = 'k';
		if (!s->exclude_hv)
			all[n++] = 'h';
	}
	for (unsigned i = 0; i < s->precise_ip; i++)
		all[n++] = 'p';
	all[n] = '\0';
	snprintf(buf, size, "%s", all);
}

int pmc__set_name(struct pmc__pctx *p, struct pmc_event_spec *spec,
		    const char *base, const char *sep)
{
	char mods[8];
	int n;

	modifier_suffix(spec, mods, sizeof(mods));
	n = snprintf(spec->name, sizeof(spec->name), "%s%s%s", base,
		     mods[0] ? sep : "", mods);
	if (n < 0 || (size_t)n >= sizeof(spec->name))
		return pmc__perr(p, PMC_E_TOO_LONG, -1, "canonical name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	return 0;
}



/* ---- generic names: hardware, software, cache, raw ------------------------- */

static int parse_cache(const char *s, size_t len, struct pmc_event_spec *spec)
{
	const struct pmc__named *c, *op, *res = NULL;
	size_t used, rest;
	const char *q;
	char buf[PMC_EVENT_NAME_MAX];

	c = lookup_prefix(cache_ids, PMC__COUNT(cache_ids), s, &used);
	if (!c || used >= len || s[used] != '-')
		return 0;
	q = s + used + 1;
	rest = len - used - 1;
	op = lookup_prefix(cache_ops, PMC__COUNT(cache_ops), q, &used);
	if (!op)
		return 0;
	if (used < rest) {
		if (q[used] != '-')
			return 0;
		res = lookup(cache_results, PMC__COUNT(cache_results), q + used + 1, rest - used - 1);
		if (!res)
			return 0;
	} else if (used != rest) {
		return 0;
	}
	spec->kind = PMC_KIND_CACHE;
	spec->type = PERF_TYPE_HW_CACHE;
	spec->config = c->config | (op->config << 8) |
		       ((res ? res->config : PERF_COUNT_HW_CACHE_RESULT_ACCESS) << 16);
	spec->uses_hw_counter = 1;
	snprintf(buf, sizeof(buf), "%s-%s", canonical_of(cache_ids, PMC__COUNT(cache_ids), c->config),
		 canonical_of(cache_ops, PMC__COUNT(cache_ops), op->config));
	if (res && res->config == PERF_COUNT_HW_CACHE_RESULT_MISS)
		strcat(buf, "-misses");
	else /* perf's plural: loads, stores, prefetches (which parse back) */
		strcat(buf, op->config == PERF_COUNT_HW_CACHE_OP_PREFETCH ? "es" : "s");
	memcpy(spec->name, buf, sizeof(buf));
	return 1;
}


int pmc__is_generic_name(const char *s, size_t len)
{
	struct pmc_event_spec scratch;

	if (lookup(hw_events, PMC__COUNT(hw_events), s, len) || lookup(sw_events, PMC__COUNT(sw_events), s, len))
		return 1;
	if (len >= 2 && s[0] == 'r' && strspn(s + 1, "0123456789abcdefABCDEF") >= len - 1)
		return 1;
	memset(&scratch, 0, sizeof(scratch));
	return len < PMC_EVENT_NAME_MAX && parse_cache(s, len, &scratch);
}


int pmc__parse_generic(struct pmc__pctx *p, const char *s, size_t blen, struct pmc_event_spec *spec,
		       int *handled)
{
	const struct pmc__named *e;
	char base[PMC_EVENT_NAME_MAX];

	*handled = 1;
	if ((e = lookup(hw_events, PMC__COUNT(hw_events), s, blen))) {
		spec->kind = PMC_KIND_HARDWARE;
		spec->type = PERF_TYPE_HARDWARE;
		spec->config = e->config;
		spec->uses_hw_counter = 1;
		return pmc__set_name(p, spec, canonical_of(hw_events, PMC__COUNT(hw_events), e->config), ":");
	}
	if ((e = lookup(sw_events, PMC__COUNT(sw_events), s, blen))) {
		spec->kind = PMC_KIND_SOFTWARE;
		spec->type = PERF_TYPE_SOFTWARE;
		spec->config = e->config;
		snprintf(spec->pmu, sizeof(spec->pmu), "software");
		return pmc__set_name(p, spec, canonical_of(sw_events, PMC__COUNT(sw_events), e->config), ":");
	}
	if (parse_cache(s, blen, spec)) {
		memcpy(base, spec->name, sizeof(base));
		return pmc__set_name(p, spec, base, ":");
	}
	if (blen >= 2 && s[0] == 'r' && strspn(s + 1, "0123456789abcdefABCDEF") >= blen - 1) {
		char hex[24];

		if (blen - 1 > 16)
			return pmc__perr(p, PMC_E_SYNTAX, 1, "raw config has more than 16 hex digits");
		memcpy(hex, s + 1, blen - 1);
		hex[blen - 1] = '\0';
		spec->kind = PMC_KIND_RAW;
		spec->type = PERF_TYPE_RAW;
		spec->config = strtoull(hex, NULL, 16);
		spec->uses_hw_counter = 1;
		snprintf(base, sizeof(base), "r%" PRIx64, spec->config);
		return pmc__set_name(p, spec, base, ":");
	}
	*handled = 0;
	return 0;
}
