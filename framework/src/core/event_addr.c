/* SPDX-License-Identifier: MIT */
/*
 * Events at an address: hardware breakpoints (mem:ADDR[/LEN][:rwx]),
 * uprobes on a function (calls:SYMBOL[@OBJECT]), and the sim backend's own
 * names (sim:COLUMN).
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

#include <pmcheck/event.h>
#include <pmcheck/sim.h>

#include "core_int.h"
#include "event_int.h"
#include "sim/sim_api.h"

/* ---- breakpoints and uprobes ---------------------------------------------- */

static int fill_breakpoint(struct pmc_event_spec *spec, uint64_t addr, uint64_t len,
			   unsigned access)
{
	char path[PMC_EVENT_PATH_MAX];
	uint64_t type = PERF_TYPE_BREAKPOINT;

	pmc__snprintf(path, sizeof(path), "%s/breakpoint/type", pmc__sysfs_root());
	(void)pmc__read_u64(path, &type);
	spec->kind = PMC_KIND_BREAKPOINT;
	spec->type = (uint32_t)type;
	snprintf(spec->pmu, sizeof(spec->pmu), "breakpoint");
	spec->bp_addr = addr;
	spec->bp_len = len;
	spec->bp_type = access == PMC_BP_X ? HW_BREAKPOINT_X
			: access == PMC_BP_R ? HW_BREAKPOINT_R
			: access == PMC_BP_W ? HW_BREAKPOINT_W
					     : HW_BREAKPOINT_RW;
	return 0;
}

static const char *access_text(unsigned access)
{
	return access == PMC_BP_X ? "x" : access == PMC_BP_R ? "r"
				    : access == PMC_BP_W ? "w" : "rw";
}

/* mem:ADDR|SYMBOL[/LEN][:ACCESS][:MODS] */
int pmc__parse_mem(struct pmc__pctx *p, const char *s, size_t len,
		     struct pmc_event_spec *spec)
{
	const char *a = s + 4, *end = s + len, *q;
	uint64_t addr, blen = 0, symaddr;
	unsigned access = PMC_BP_RW;
	char sym[PMC_EVENT_NAME_MAX] = "", base[PMC_EVENT_NAME_MAX];
	char object[PMC_EVENT_PATH_MAX];
	int len_given = 0, rc;

	q = a;
	while (q < end && *q != '/' && *q != ':')
		q++;
	if (q == a)
		return pmc__perr(p, PMC_E_SYNTAX, 4, "expected an address or symbol after \"mem:\"");
	if (isdigit((unsigned char)*a)) {
		if (pmc__parse_number(a, (size_t)(q - a), &addr))
			return pmc__perr(p, PMC_E_SYNTAX, 4,
				    "breakpoint address \"%.*s\" is not a number", (int)(q - a), a);
	} else {
		if ((size_t)(q - a) >= sizeof(sym))
			return pmc__perr(p, PMC_E_TOO_LONG, 4, "the symbol name is %zu bytes, longer than %d",
				    (size_t)(q - a), PMC_EVENT_NAME_MAX - 1);
		if (!pmc__is_ident(a, (size_t)(q - a)))
			return pmc__perr(p, PMC_E_SYNTAX, 4,
				    "expected a number or a symbol name after \"mem:\"");
		memcpy(sym, a, (size_t)(q - a));
		sym[q - a] = '\0';
		rc = pmc_symbol_resolve(sym, NULL, object, sizeof(object), NULL, &symaddr,
					NULL);
		if (rc)
			return pmc__perr(p, PMC_E_NO_SYMBOL, 4,
				    "symbol \"%s\" is not defined by the program or a loaded object",
				    sym);
		addr = symaddr;
	}
	if (q < end && *q == '/') {
		const char *l = ++q;

		while (q < end && *q != ':')
			q++;
		if (pmc__parse_number(l, (size_t)(q - l), &blen) ||
		    (blen != 1 && blen != 2 && blen != 4 && blen != 8))
			return pmc__perr(p, PMC_E_SYNTAX, (int)(l - s),
				    "breakpoint length must be 1, 2, 4 or 8 bytes");
		len_given = 1;
	}
	if (q < end && *q == ':') {
		/* One or two ':' segments: an access (r, w, rw, x), then
		 * modifiers; or modifiers alone. */
		const char *m = ++q;
		size_t mlen;

		while (q < end && *q != ':')
			q++;
		mlen = (size_t)(q - m);
		if (mlen && strspn(m, "rwx") >= mlen) {
			int r = memchr(m, 'r', mlen) != NULL, w = memchr(m, 'w', mlen) != NULL;
			int x = memchr(m, 'x', mlen) != NULL;

			if (mlen != (size_t)(r + w + x) || (x && (r || w)))
				return pmc__perr(p, PMC_E_SYNTAX, (int)(m - s),
					    "breakpoint access is r, w, rw or x (x cannot combine with r/w)");
			access = x ? PMC_BP_X : (unsigned)((r ? PMC_BP_R : 0) | (w ? PMC_BP_W : 0));
			if (q < end) {
				m = ++q;
				mlen = (size_t)(end - m);
				if (!mlen)
					return pmc__perr(p, PMC_E_SYNTAX, (int)(m - s),
						    "expected modifiers after ':'");
			} else {
				mlen = 0;
			}
		} else {
			mlen = (size_t)(end - m);
		}
		rc = pmc__apply_modifiers(p, (int)(m - s), m, mlen, spec);
		if (rc)
			return rc;
	}
	if (access == PMC_BP_X) {
		if (len_given && blen != sizeof(long))
			return pmc__perr(p, PMC_E_SYNTAX, (int)(memchr(s, '/', len) ? (const char *)memchr(s, '/', len) - s + 1 : 4),
				    "an execute breakpoint covers one instruction: length must be %zu or omitted",
				    sizeof(long));
		blen = sizeof(long);
	} else if (!len_given) {
		blen = 4; /* perf's default for data breakpoints */
	}
	if (addr == 0)
		return pmc__perr(p, PMC_E_SYNTAX, 4,
			    "address 0 cannot be watched (nothing is mapped there); give the address of a variable or a symbol name");
	if (access != PMC_BP_X && addr % blen)
		return pmc__perr(p, PMC_E_SYNTAX, 4,
			    "address 0x%" PRIx64 " is not aligned to the breakpoint length %" PRIu64
			    "; the debug registers need natural alignment",
			    addr, blen);
	fill_breakpoint(spec, addr, blen, access);
	if (sym[0]) {
		if (snprintf(base, sizeof(base), "mem:%s", sym) >= (int)sizeof(base) - 16)
			return pmc__perr(p, PMC_E_TOO_LONG, 4, "symbol name too long");
	} else
		snprintf(base, sizeof(base), "mem:0x%" PRIx64, addr);
	if (access != PMC_BP_X)
		snprintf(base + strlen(base), sizeof(base) - strlen(base), "/%" PRIu64, blen);
	snprintf(base + strlen(base), sizeof(base) - strlen(base), ":%s", access_text(access));
	return pmc__set_name(p, spec, base, ":");
}

int pmc_event_breakpoint(struct pmc_event_spec *spec, const void *addr, size_t len,
			 unsigned access, struct pmc_error *err)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;

	memset(spec, 0, sizeof(*spec));
	if (access != PMC_BP_R && access != PMC_BP_W && access != PMC_BP_RW &&
	    access != PMC_BP_X)
		return pmc__fail(err, -EINVAL, "breakpoint", -1,
				 "breakpoint access %u is not PMC_BP_R, _W, _RW or _X", access);
	if (access == PMC_BP_X)
		len = sizeof(long);
	if (len != 1 && len != 2 && len != 4 && len != 8)
		return pmc__fail(err, -EINVAL, "breakpoint", -1,
				 "breakpoint length %zu is not 1, 2, 4 or 8 bytes", len);
	/* Execute breakpoints watch one instruction: no data alignment. */
	if (access != PMC_BP_X && a % len)
		return pmc__fail(err, -EINVAL, "breakpoint", -1,
				 "breakpoint address %p is not aligned to its length %zu",
				 addr, len);
	fill_breakpoint(spec, a, len, access);
	if (access == PMC_BP_X)
		snprintf(spec->name, sizeof(spec->name), "mem:0x%" PRIx64 ":x", a);
	else
		snprintf(spec->name, sizeof(spec->name), "mem:0x%" PRIx64 "/%zu:%s", a, len,
			 access_text(access));
	return 0;
}

/* sim:NAME[+NAME...]: callgrind's own events, summed. */
int pmc__parse_sim(struct pmc__pctx *p, const char *s, size_t len, struct pmc_event_spec *spec)
{
	size_t i = 4;
	unsigned mask = 0;
	int used;

	if (len == 4)
		return pmc__perr(p, PMC_E_SYNTAX, 4,
			    "expected a callgrind event after \"sim:\" (Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi, Bim; join with '+')");
	while (i < len) {
		size_t w = i;
		int col;

		while (i < len && s[i] != '+')
			i++;
		col = pmc__sim_column_of(s + w, i - w);
		if (col < 0)
			return pmc__perr(p, PMC_E_UNKNOWN_EVENT, (int)w,
				    "unknown callgrind event \"%.*s\": expected Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi or Bim (case matters)",
				    (int)(i - w), s + w);
		if (mask & (1u << col))
			return pmc__perr(p, PMC_E_SYNTAX, (int)w, "callgrind event \"%.*s\" named twice",
				    (int)(i - w), s + w);
		mask |= 1u << col;
		if (i < len && ++i == len)
			return pmc__perr(p, PMC_E_SYNTAX, (int)len, "expected an event after '+'");
	}
	spec->kind = PMC_KIND_SIM;
	spec->config = mask;
	snprintf(spec->pmu, sizeof(spec->pmu), "sim");
	used = snprintf(spec->name, sizeof(spec->name), "sim:");
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
		if (mask & (1u << c))
			used += snprintf(spec->name + used, sizeof(spec->name) - (size_t)used, "%s%s",
					 used > 4 ? "+" : "", pmc_sim_column_name(c));
	return 0;
}

/* The position of a ':' that is not half of a C++ "::", or -1. */
static int lone_colon(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (s[i] == ':') {
			if (i + 1 < len && s[i + 1] == ':' && i > 0) {
				i++;
				continue;
			}
			return (int)i;
		}
	return -1;
}

/* A C identifier, or C++ ones joined by "::": -1, or where it is not. */
static int qualified_ident(const char *s, size_t len)
{
	size_t at = 0;

	while (at <= len) {
		const char *end = memchr(s + at, ':', len - at);
		size_t n = end ? (size_t)(end - (s + at)) : len - at;

		if (n == 0 || !pmc__is_ident(s + at, n))
			return (int)at;
		if (!end)
			return -1;
		at += n + 2;
	}
	return (int)len;
}

/* The uprobe PMU's type and the function's object and file offset, for
 * calls:NAME[@OBJECT]: errors at position 6 (the name) of p's text. */
static int calls_target(struct pmc__pctx *p, const char *name, const char *object,
			struct pmc_event_spec *spec)
{
	char path[128];
	uint64_t type;
	int rc;

	pmc__snprintf(path, sizeof(path), "%s/uprobe/type", pmc__sysfs_root());
	if ((rc = pmc__read_u64(path, &type)) != 0 && rc != -ENOENT && rc != -EINVAL)
		return pmc__sysfs_error(p, rc, path);
	if (rc)
		return pmc__perr(p, PMC_E_NO_PMU, 0,
			    "calls: needs the uprobe PMU, which this kernel does not offer (CONFIG_UPROBE_EVENTS)");
	rc = pmc_symbol_resolve(name, object, spec->path, sizeof(spec->path),
				&spec->probe_offset, NULL, p->err);
	if (rc) {
		spec->path[0] = '\0';
		if (p->err) {
			char why[PMC_ERROR_MSG_MAX];

			snprintf(why, sizeof(why), "%s", p->err->message);
			return pmc__perr(p, rc, 6, "%s", why);
		}
		return rc;
	}
	spec->type = (uint32_t)type;
	return 0;
}

/* calls:SYMBOL[@OBJECT] */
int pmc__parse_calls(struct pmc__pctx *p, const char *s, size_t len,
		       struct pmc_event_spec *spec)
{
	const char *sym = s + 6, *at = memchr(sym, '@', len - 6);
	char name[PMC_EVENT_NAME_MAX], object[PMC_EVENT_PATH_MAX] = "";
	size_t slen = at ? (size_t)(at - sym) : len - 6;
	int rc;

	if ((rc = lone_colon(sym, slen)) >= 0)
		return pmc__perr(p, PMC_E_SYNTAX, 6 + rc,
			    "calls: takes no modifiers: a uprobe counts every call, in user space (form: calls:SYMBOL[@OBJECT]; a C++ function is calls:ns::cls::fn)");
	if (slen >= sizeof(name))
		return pmc__perr(p, PMC_E_TOO_LONG, 6, "the function name is %zu bytes, longer than %d",
			    slen, PMC_EVENT_NAME_MAX - 1);
	if ((rc = qualified_ident(sym, slen)) >= 0)
		return pmc__perr(p, PMC_E_SYNTAX, 6 + rc,
			    "expected a function name after \"calls:\" (form: calls:SYMBOL[@OBJECT]: a C symbol, a mangled C++ symbol, or a C++ name without its parameters, ns::cls::fn)");
	memcpy(name, sym, slen);
	name[slen] = '\0';
	if (at) {
		size_t olen = len - (size_t)(at - s) - 1;

		if (olen == 0 || olen >= sizeof(object) || memchr(at + 1, ':', olen))
			return pmc__perr(p, PMC_E_SYNTAX, (int)(at - s) + 1,
				    "expected an object name (part of its path) after '@'");
		memcpy(object, at + 1, olen);
		object[olen] = '\0';
	}
	if ((rc = pmc__symbol_clone_check(name, object, p->err)) != 0) {
		char why[PMC_ERROR_MSG_MAX];

		snprintf(why, sizeof(why), "%s", p->err ? p->err->message : "");
		return pmc__perr(p, rc, 6, "%s", why);
	}
	spec->kind = PMC_KIND_UPROBE;
	snprintf(spec->pmu, sizeof(spec->pmu), "uprobe");
	spec->config = 0; /* entry probe: format/retprobe bit clear */
	if (snprintf(spec->name, sizeof(spec->name), "calls:%s%s%s", name, at ? "@" : "",
		     object) >= (int)sizeof(spec->name))
		return pmc__perr(p, PMC_E_TOO_LONG, 0, "canonical name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	/* Deferred: the kind and the name are known now; the object and the
	 * offset when pmc_event_resolve() is called (an empty path says so). */
	if (p->flags & PMC_PARSE_DEFER_SYMBOLS)
		return 0;
	return calls_target(p, name, object, spec);
}

int pmc__calls_resolve(struct pmc__pctx *p, struct pmc_event_spec *spec, const char *object)
{
	char name[PMC_EVENT_NAME_MAX], named[PMC_EVENT_PATH_MAX] = "", canonical[PMC_EVENT_NAME_MAX];
	const char *at = strchr(spec->name + 6, '@');
	int rc;

	snprintf(name, sizeof(name), "%.*s",
		 (int)(at ? (size_t)(at - spec->name - 6) : strlen(spec->name + 6)), spec->name + 6);
	if (at)
		snprintf(named, sizeof(named), "%s", at + 1);
	if (!object || !*object || at)
		return calls_target(p, name, named, spec);
	/* The name says where the function was found, as calls:NAME@OBJECT
	 * would have: the same canonical name, or the same refusal. */
	if (snprintf(canonical, sizeof(canonical), "calls:%s@%s", name, object) >= (int)sizeof(canonical))
		return pmc__perr(p, PMC_E_TOO_LONG, 0, "canonical name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	if ((rc = calls_target(p, name, object, spec)) == 0)
		memcpy(spec->name, canonical, sizeof(canonical));
	return rc;
}

int pmc_event_resolve(struct pmc_event_spec *spec, struct pmc_error *err)
{
	struct pmc__pctx p = { NULL, 0, err, 0 };

	if (!spec)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_event_resolve: NULL argument");
	pmc_error_clear(err);
	if (spec->kind != PMC_KIND_UPROBE || spec->path[0])
		return 0;
	if (strncmp(spec->name, "calls:", 6) != 0)
		return pmc__fail(err, -EINVAL, spec->name, -1,
				 "pmc_event_resolve: \"%s\" is a uprobe without an object path and not a calls: event; parse it with pmc_event_parse",
				 spec->name);
	p.text = spec->name;
	return pmc__calls_resolve(&p, spec, NULL);
}
