/* SPDX-License-Identifier: MIT */
/*
 * Events a PMU describes in sysfs or libpfm4 does: pmu/term=value,.../ with
 * the PMU's format fields and aliases, libpfm4 names, and tracepoints
 * (SUBSYSTEM:EVENT, ids from tracefs).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
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

#include "core_int.h"
#include "event_int.h"

/* ---- pmu/terms/ ------------------------------------------------------------ */

/* Deposit `value` into the bit ranges of a sysfs format spec such as
 * "config:0-7,32-35" (low value bits go to the first range). */
static int deposit(const char *format, uint64_t value, struct pmc_event_spec *spec,
		   unsigned *width_out)
{
	const char *colon = strchr(format, ':'), *s;
	uint64_t *target;
	unsigned width = 0;

	if (!colon)
		return -1;
	if (!strncmp(format, "config:", 7))
		target = &spec->config;
	else if (!strncmp(format, "config1:", 8))
		target = &spec->config1;
	else if (!strncmp(format, "config2:", 8))
		target = &spec->config2;
	else
		return -1;
	s = colon + 1;
	while (*s) {
		char *end;
		unsigned long lo = strtoul(s, &end, 10), hi = lo;

		if (end == s || lo > 63)
			return -1;
		if (*end == '-') {
			s = end + 1;
			hi = strtoul(s, &end, 10);
			if (end == s || hi > 63 || hi < lo)
				return -1;
		}
		for (unsigned long b = lo; b <= hi; b++, width++) {
			uint64_t bit = width < 64 ? (value >> width) & 1 : 0;

			*target = (*target & ~(1ull << b)) | (bit << b);
		}
		if (*end == ',')
			end++;
		else if (*end)
			return -1;
		s = end;
	}
	*width_out = width;
	return 0;
}

static int apply_term(struct pmc__pctx *p, int pos, const char *pmu, const char *key,
		      size_t klen, const char *val, size_t vlen, int depth,
		      struct pmc_event_spec *spec, char *name_override);

/* Expand an event alias file (events/<name>) into terms. */
static int apply_alias(struct pmc__pctx *p, int pos, const char *pmu,
		       const char *alias, int depth, struct pmc_event_spec *spec,
		       char *name_override)
{
	const char *s = alias;

	while (*s) {
		const char *end = strchr(s, ','), *eq;
		size_t len;
		int rc;

		if (!end)
			end = s + strlen(s);
		len = (size_t)(end - s);
		eq = memchr(s, '=', len);
		if (eq && eq + 1 < end && eq[1] == '?')
			return pmc__perr(p, PMC_E_SYNTAX, pos,
				    "the %s event alias needs a value for \"%.*s\" (sysfs says %s); write it as a term",
				    pmu, (int)(eq - s), s, alias);
		rc = apply_term(p, pos, pmu, s, eq ? (size_t)(eq - s) : len, eq ? eq + 1 : NULL,
				eq ? (size_t)(end - eq - 1) : 0, depth + 1, spec, name_override);
		if (rc)
			return rc;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int apply_term(struct pmc__pctx *p, int pos, const char *pmu, const char *key,
		      size_t klen, const char *val, size_t vlen, int depth,
		      struct pmc_event_spec *spec, char *name_override)
{
	char path[PMC_EVENT_PATH_MAX], format[256], k[64];
	uint64_t value = 1;
	unsigned width = 0;
	int rc;

	if (klen == 0 || klen >= sizeof(k))
		return pmc__perr(p, PMC_E_SYNTAX, pos, "empty or overlong term in %s/.../", pmu);
	memcpy(k, key, klen);
	k[klen] = '\0';
	if (!strcmp(k, "name")) {
		if (!val || vlen == 0 || vlen >= PMC_EVENT_NAME_MAX)
			return pmc__perr(p, PMC_E_SYNTAX, pos, "name= needs a value of 1..%d characters",
				    PMC_EVENT_NAME_MAX - 1);
		memcpy(name_override, val, vlen);
		name_override[vlen] = '\0';
		return 0;
	}
	if (val && pmc__parse_number(val, vlen, &value))
		return pmc__perr(p, PMC_E_SYNTAX, pos + (int)klen + 1,
			    "value of \"%s\" is not a number (decimal or 0x hex): \"%.*s\"", k,
			    (int)vlen, val);
	if (!strcmp(k, "config")) {
		spec->config = value;
		return 0;
	}
	if (!strcmp(k, "config1")) {
		spec->config1 = value;
		return 0;
	}
	if (!strcmp(k, "config2")) {
		spec->config2 = value;
		return 0;
	}
	pmc__snprintf(path, sizeof(path), "%s/%s/format/%s", pmc__sysfs_root(), pmu, k);
	if ((rc = pmc__read_text(path, format, sizeof(format))) < 0 && rc != -ENOENT)
		return pmc__sysfs_error(p, rc, path);
	if (rc >= 0) {
		if (deposit(format, value, spec, &width))
			return pmc__perr(p, PMC_E_BAD_FIELD, pos,
				    "cannot decode %s (\"%s\"); expected config[12]:lo-hi,...",
				    path, format);
		if (width < 64 && (value >> width) != 0)
			return pmc__perr(p, PMC_E_BAD_FIELD, pos + (int)klen + 1,
				    "value 0x%" PRIx64 " does not fit field \"%s\" of %s (%u bits, %s)",
				    value, k, pmu, width, format);
		return 0;
	}
	/* Not a field: an event alias under events/? */
	pmc__snprintf(path, sizeof(path), "%s/%s/events/%s", pmc__sysfs_root(), pmu, k);
	if (!val && depth < 2 && (rc = pmc__read_text(path, format, sizeof(format))) < 0 &&
	    rc != -ENOENT)
		return pmc__sysfs_error(p, rc, path);
	if (!val && depth < 2 && rc >= 0)
		return apply_alias(p, pos, pmu, format, depth, spec, name_override);
	return pmc__perr(p, PMC_E_BAD_FIELD, pos,
		    "%s has no format field or event named \"%s\"; see %s/%s/format/ and events/",
		    pmu, k, pmc__sysfs_root(), pmu);
}

int pmc__parse_pmu_form(struct pmc__pctx *p, const char *s, size_t len,
			  struct pmc_event_spec *spec)
{
	const char *slash = memchr(s, '/', len), *close, *t;
	char pmu[64], path[PMC_EVENT_PATH_MAX], canon[PMC_EVENT_NAME_MAX];
	char override[PMC_EVENT_NAME_MAX] = "";
	uint64_t type;
	size_t plen = (size_t)(slash - s), cn;
	int rc;

	if (plen == 0 || plen >= sizeof(pmu))
		return pmc__perr(p, PMC_E_SYNTAX, 0, "expected a PMU name before '/'");
	memcpy(pmu, s, plen);
	pmu[plen] = '\0';
	for (size_t i = 0; i < plen; i++)
		if (!(isalnum((unsigned char)pmu[i]) || pmu[i] == '_' || pmu[i] == '-' ||
		      pmu[i] == '.'))
			return pmc__perr(p, PMC_E_SYNTAX, (int)i, "'%c' cannot appear in a PMU name",
				    pmu[i]);
	close = memchr(slash + 1, '/', len - plen - 1);
	if (!close)
		return pmc__perr(p, PMC_E_SYNTAX, (int)len,
			    "missing closing '/' (form: pmu/field=value,.../)");
	pmc__snprintf(path, sizeof(path), "%s/%s/type", pmc__sysfs_root(), pmu);
	if ((rc = pmc__read_u64(path, &type)) != 0) {
		char pmus[256];

		if (rc != -ENOENT && rc != -EINVAL)
			return pmc__sysfs_error(p, rc, path);

		pmc__list_pmus(pmus, sizeof(pmus));
		return pmc__perr(p, PMC_E_NO_PMU, 0,
			    "no PMU named \"%s\" on this machine (PMUs here: %s)", pmu, pmus);
	}
	spec->kind = PMC_KIND_PMU;
	spec->type = (uint32_t)type;
	snprintf(spec->pmu, sizeof(spec->pmu), "%s", pmu);
	spec->uses_hw_counter = (unsigned)pmc__is_core_pmu(pmu);
	if (close == slash + 1)
		return pmc__perr(p, PMC_E_SYNTAX, (int)plen + 1, "empty term list in %s//", pmu);
	/* Terms between the slashes. */
	cn = (size_t)snprintf(canon, sizeof(canon), "%s/", pmu);
	t = slash + 1;
	while (t < close) {
		const char *end = memchr(t, ',', (size_t)(close - t)), *eq;
		size_t tl, kl;

		if (!end)
			end = close;
		tl = (size_t)(end - t);
		if (tl == 0)
			return pmc__perr(p, PMC_E_SYNTAX, (int)(t - s), "empty term");
		eq = memchr(t, '=', tl);
		kl = eq ? (size_t)(eq - t) : tl;
		/* One meaning per input: a field named twice is refused, not
		 * "the last wins". */
		for (const char *u = slash + 1; u < t;) {
			const char *ue = memchr(u, ',', (size_t)(t - u)), *ueq;
			size_t ul;

			ue = ue ? ue : t;
			ueq = memchr(u, '=', (size_t)(ue - u));
			ul = ueq ? (size_t)(ueq - u) : (size_t)(ue - u);
			if (ul == kl && !memcmp(u, t, kl))
				return pmc__perr(p, PMC_E_SYNTAX, (int)(t - s),
					    "\"%.*s\" is given twice in %s/.../ (also at position %d); give each field once",
					    (int)kl, t, pmu, p->base + (int)(u - s));
			u = ue + 1;
		}
		rc = apply_term(p, (int)(t - s), pmu, t, eq ? (size_t)(eq - t) : tl,
				eq ? eq + 1 : NULL, eq ? (size_t)(end - eq - 1) : 0, 0, spec,
				override);
		if (rc)
			return rc;
		if (cn + tl + 2 < sizeof(canon))
			cn += (size_t)snprintf(canon + cn, sizeof(canon) - cn, "%s%.*s",
					       t == slash + 1 ? "" : ",", (int)tl, t);
		if (end < close && end + 1 == close)
			return pmc__perr(p, PMC_E_SYNTAX, (int)(close - s), "empty term before the closing '/'");
		t = end < close ? end + 1 : end;
	}
	/* Modifiers after the closing slash: "/u" or "/:u". */
	{
		const char *m = close + 1;
		size_t mlen = len - (size_t)(m - s);

		if (mlen && *m == ':') {
			m++;
			mlen--;
			if (!mlen)
				return pmc__perr(p, PMC_E_SYNTAX, (int)(m - s),
					    "expected modifiers after ':' (u, k, h, p), or nothing after the closing '/'");
		}
		rc = pmc__apply_modifiers(p, (int)(m - s), m, mlen, spec);
		if (rc)
			return rc;
	}
	if (spec->type == PERF_TYPE_SOFTWARE &&
	    strcmp(pmc__software_name(spec->config), "?") == 0)
		return pmc__perr(p, PMC_E_UNKNOWN_EVENT, (int)plen + 1,
			    "the software PMU has no event with config %" PRIu64
			    " (it counts 0..%d: cpu-clock, task-clock, page-faults, ...); use the event's name",
			    spec->config, PERF_COUNT_SW_CGROUP_SWITCHES);
	if (cn + 2 < sizeof(canon))
		strcat(canon, "/");
	if (override[0])
		return pmc__copy(spec->name, sizeof(spec->name), override) ? PMC_E_TOO_LONG : 0;
	return pmc__set_name(p, spec, canon, "");
}


/* ---- libpfm4 --------------------------------------------------------------- */

/*
 * libpfm4 is opened when a name first reaches it, not linked: its tables
 * carry some 40,000 relocations and 2.7 MB that every process linking
 * libpmcheck would map and relocate at start-up, and on the sim backend
 * valgrind would do so under simulation for every case (tested by
 * test_parse.libpfm_opened_only_when_named).  Its soname is the one the
 * build found; a static libpfm4 (PMCHECK_LIBPFM_LINKED) is linked in.
 */
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static struct {
	__typeof__(pfm_get_os_event_encoding) *encode;
	__typeof__(pfm_strerror) *error;
	char why[256]; /* empty when it is usable */
} pfm;

static void pfm_init_once(void)
{
	__typeof__(pfm_initialize) *init;
	int rc;
#ifdef PMCHECK_LIBPFM_LINKED
	/* A static libpfm4, linked in (a fully static program cannot dlopen). */
	init = pfm_initialize;
	pfm.encode = pfm_get_os_event_encoding;
	pfm.error = pfm_strerror;
#else
	void *h = dlopen(PMCHECK_LIBPFM_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		snprintf(pfm.why, sizeof(pfm.why), "libpfm4 cannot be loaded (%s): install libpfm4", dlerror());
		return;
	}
	init = (__typeof__(pfm_initialize) *)dlsym(h, "pfm_initialize");
	pfm.encode = (__typeof__(pfm_get_os_event_encoding) *)dlsym(h, "pfm_get_os_event_encoding");
	pfm.error = (__typeof__(pfm_strerror) *)dlsym(h, "pfm_strerror");
#endif
	if (!init || !pfm.encode || !pfm.error) {
		snprintf(pfm.why, sizeof(pfm.why), "%s lacks the functions pmcheck calls: reinstall libpfm4",
			 PMCHECK_LIBPFM_SONAME);
		return;
	}
	rc = init();
	if (rc != PFM_SUCCESS)
		snprintf(pfm.why, sizeof(pfm.why), "libpfm4 did not initialise: %s", pfm.error(rc));
}

const char *pmc__libpfm_unusable(void)
{
	pthread_once(&pfm_once, pfm_init_once);
	return pfm.why[0] ? pfm.why : NULL;
}

int pmc__parse_libpfm(struct pmc__pctx *p, const char *s, size_t len,
			struct pmc_event_spec *spec, int *handled)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	char buf[PMC_EVENT_NAME_MAX], *fstr = NULL, canon[PMC_EVENT_NAME_MAX];
	size_t cn = 0;
	int rc;

	*handled = 0;
	if (len >= sizeof(buf))
		return 0;
	if (pmc__libpfm_unusable())
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	rc = pfm.encode(buf, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS) {
		if (rc == PFM_ERR_NOTFOUND)
			return 0;
		*handled = 1;
		return pmc__perr(p, PMC_E_UNKNOWN_EVENT, 0, "libpfm4 rejects it: %s",
			    pfm.error(rc));
	}
	*handled = 1;
	spec->kind = PMC_KIND_LIBPFM;
	spec->type = attr.type;
	spec->config = attr.config;
	spec->config1 = attr.config1;
	spec->config2 = attr.config2;
	spec->uses_hw_counter = attr.type == PERF_TYPE_RAW ||
				attr.type == PERF_TYPE_HARDWARE ||
				attr.type == PERF_TYPE_HW_CACHE;
	/* Canonical: libpfm's full name without its attribute settings (k=v). */
	for (char *tok = fstr ? strtok(fstr, ":") : NULL; tok; tok = strtok(NULL, ":")) {
		if (strchr(tok, '='))
			continue;
		if (cn + strlen(tok) + 2 >= sizeof(canon))
			break;
		cn += (size_t)snprintf(canon + cn, sizeof(canon) - cn, "%s%s",
				       cn ? ":" : "", tok);
	}
	/* fstr spells the PMU as "pmu::EVENT"; strtok split the "::" apart. */
	{
		char *c = strchr(canon, ':');

		if (c && fstr) {
			memmove(c + 2, c + 1, strlen(c + 1) + 1);
			c[1] = ':';
		}
	}
	free(fstr);
	if (!cn)
		snprintf(canon, sizeof(canon), "%s", buf);
	/* The caller appends pmcheck's modifiers. */
	memcpy(spec->name, canon, sizeof(spec->name));
	return 0;
}


/* ---- tracepoints ------------------------------------------------------------ */

/* Where tracefs is: mounted already, or mounted here (root only) at
 * /sys/kernel/tracing.  NULL with *why set when neither works. */
const char *pmc__tracefs_root(const char **why)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];

	for (size_t i = 0; i < PMC__COUNT(roots); i++) {
		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, R_OK) == 0)
			return roots[i];
		if (errno == EACCES) {
			*why = "tracefs is mounted but this user cannot read its ids (run as root, or mount -o remount,mode=755 /sys/kernel/tracing)";
			return NULL;
		}
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0 &&
	    access("/sys/kernel/tracing/events", R_OK) == 0)
		return "/sys/kernel/tracing";
	*why = errno == EPERM || errno == EACCES
		       ? "tracefs is not mounted and only root can mount it (mount -t tracefs nodev /sys/kernel/tracing)"
		       : "tracefs is not mounted and mounting it failed (CONFIG_TRACING off?)";
	return NULL;
}

/*
 * SUBSYSTEM:EVENT[:MODS] when tracefs has the subsystem.  *handled is 0
 * when the text is not a tracepoint at all (then libpfm4 gets it).
 */
int pmc__parse_tracepoint(struct pmc__pctx *p, const char *s, size_t len,
			    struct pmc_event_spec *spec, int *handled)
{
	const char *c1 = memchr(s, ':', len), *c2, *root, *why = NULL;
	char path[PMC_EVENT_PATH_MAX], sub[64], ev[128], idtext[32], base[PMC_EVENT_NAME_MAX];
	size_t slen, elen;
	uint64_t id;
	int rc;

	*handled = 0;
	if (!c1 || c1 == s || !pmc__is_ident(s, (size_t)(c1 - s)) || (size_t)(c1 - s) >= sizeof(sub))
		return 0;
	c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s));
	elen = (size_t)((c2 ? c2 : s + len) - (c1 + 1));
	slen = (size_t)(c1 - s);
	/* Tracepoint names are lower case: keep libpfm4's EVENT:UMASK out. */
	for (size_t i = 0; i < slen; i++)
		if (isupper((unsigned char)s[i]))
			return 0;
	if (elen == 0 || elen >= sizeof(ev) || !pmc__is_ident(c1 + 1, elen))
		return 0;
	memcpy(sub, s, slen);
	sub[slen] = '\0';
	memcpy(ev, c1 + 1, elen);
	ev[elen] = '\0';
	root = pmc__tracefs_root(&why);
	if (!root)
		return 0; /* maybe libpfm4's; the unknown-event message mentions tracefs */
	pmc__snprintf(path, sizeof(path), "%s/events/%s", root, sub);
	if (access(path, R_OK) != 0)
		return 0;
	*handled = 1;
	pmc__snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sub, ev);
	if (pmc__read_text(path, idtext, sizeof(idtext)) < 0 ||
	    pmc__parse_number(idtext, strcspn(idtext, "\n"), &id) != 0)
		return pmc__perr(p, PMC_E_UNKNOWN_EVENT, (int)slen + 1,
			    "no tracepoint \"%s\" in subsystem \"%s\" (see %s/events/%s/)", ev, sub,
			    root, sub);
	if (c2) {
		if (c2 + 1 == s + len)
			return pmc__perr(p, PMC_E_SYNTAX, (int)len, "expected modifiers after ':' (u, k, h, p)");
		rc = pmc__apply_modifiers(p, (int)(c2 + 1 - s), c2 + 1, len - (size_t)(c2 + 1 - s), spec);
		if (rc)
			return rc;
	}
	spec->kind = PMC_KIND_TRACEPOINT;
	spec->type = PERF_TYPE_TRACEPOINT;
	spec->config = id;
	snprintf(spec->pmu, sizeof(spec->pmu), "tracepoint");
	if (slen + 1 + elen >= sizeof(base))
		return pmc__perr(p, PMC_E_TOO_LONG, 0, "tracepoint name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	memcpy(base, s, slen + 1 + elen);
	base[slen + 1 + elen] = '\0';
	return pmc__set_name(p, spec, base, ":");
}

/* Is s[0..len) a generic hardware, software or cache name, or rNNNN? */
