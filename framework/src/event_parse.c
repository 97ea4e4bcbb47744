/* SPDX-License-Identifier: MIT */
/*
 * Event string parser.  The grammar follows perf stat -e where perf has a
 * form (see event.h); every accepted string gets a canonical name, and every
 * rejected one an error with the byte position and the reason.
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

#include "pmcheck_int.h"

/* ---- sysfs root ---------------------------------------------------------- */

static char pmc_sysfs_root_buf[PMC_EVENT_PATH_MAX];

void pmc_event_set_sysfs_root(const char *path)
{
	if (!path || pmc__copy(pmc_sysfs_root_buf, sizeof(pmc_sysfs_root_buf), path))
		pmc_sysfs_root_buf[0] = '\0';
}

const char *pmc__sysfs_root(void)
{
	return pmc_sysfs_root_buf[0] ? pmc_sysfs_root_buf
				     : "/sys/bus/event_source/devices";
}

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

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* Canonical name of the entry with this config (the first in the table). */
static const char *canonical_of(const struct pmc__named *t, size_t n, uint64_t config)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].config == config)
			return t[i].name;
	return "?";
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

/* ---- helpers ------------------------------------------------------------- */

struct pmc__pctx {
	const char *text; /* the whole input handed to the caller's call */
	int base;         /* offset of this event inside text */
	struct pmc_error *err;
};

static int perr(struct pmc__pctx *p, int code, int pos, const char *fmt, ...)
	PMC__PRINTF(4, 5);

/* The input as a message quotes it: whole up to 96 bytes, else its start,
 * an ellipsis and its length, so the reason after it is never cut off. */
static void shown_input(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);

	if (n <= 96)
		snprintf(buf, size, "%s", text);
	else
		snprintf(buf, size, "%.72s... (%zu bytes)", text, n);
}

static int perr(struct pmc__pctx *p, int code, int pos, const char *fmt, ...)
{
	char why[PMC_ERROR_MSG_MAX - 160], shown[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	shown_input(p->text, shown, sizeof(shown));
	if (pos >= 0)
		return pmc__fail(p->err, code, p->text, p->base + pos,
				 "event \"%s\", at position %d: %s", shown, p->base + pos, why);
	return pmc__fail(p->err, code, p->text, -1, "event \"%s\": %s", shown, why);
}

/* A sysfs read that failed for another reason than absence (EMFILE,
 * EACCES, EIO): the parser must not call that "no such PMU or field". */
static int sysfs_error(struct pmc__pctx *p, int rc, const char *path)
{
	if (rc == -EMFILE || rc == -ENFILE)
		return perr(p, rc, 0, "cannot read %s: out of file descriptors (%s); raise the limit (ulimit -n) or close descriptors",
			    path, strerror(-rc));
	return perr(p, rc, 0, "cannot read %s: %s", path, strerror(-rc));
}

static int parse_number(const char *s, size_t len, uint64_t *out)
{
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return (errno || *end) ? -1 : 0;
}

static int is_ident(const char *s, size_t len)
{
	if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '.'))
		return 0;
	for (size_t i = 1; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_' || s[i] == '.'))
			return 0;
	return 1;
}

static int is_core_pmu(const char *pmu);

/* Does sysfs list a CPU PMU (x86 "cpu"/"cpu_core", arm "armv8_*")? */
int pmc__has_hw_pmu(void)
{
	DIR *d = opendir(pmc__sysfs_root());
	struct dirent *e;
	int found = 0;

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		found = is_core_pmu(e->d_name);
	}
	closedir(d);
	return found;
}

static int is_core_pmu(const char *pmu)
{
	char path[PMC_EVENT_PATH_MAX];
	char buf[8];

	if (!strcmp(pmu, "cpu") || !strncmp(pmu, "cpu_", 4) ||
	    !strncmp(pmu, "armv8", 5) || !strncmp(pmu, "armv7", 5))
		return 1;
	/* arm64 PMUs advertise format/rdpmc (config1:1); x86 core PMUs have
	 * an rdpmc mode file at the PMU's top level. */
	pmc__snprintf(path, sizeof(path), "%s/%s/format/rdpmc", pmc__sysfs_root(), pmu);
	if (pmc__read_text(path, buf, sizeof(buf)) >= 0)
		return 1;
	pmc__snprintf(path, sizeof(path), "%s/%s/rdpmc", pmc__sysfs_root(), pmu);
	return pmc__read_text(path, buf, sizeof(buf)) >= 0;
}

size_t pmc_machine_core_pmus(struct pmc_core_pmu *out, size_t max)
{
	DIR *d = opendir(pmc__sysfs_root());
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char path[PMC_EVENT_PATH_MAX], cpus[256], type[32];
		int has_cpus;
		uint64_t t;

		if (e->d_name[0] == '.')
			continue;
		pmc__snprintf(path, sizeof(path), "%s/%s/cpus", pmc__sysfs_root(), e->d_name);
		has_cpus = pmc__read_text(path, cpus, sizeof(cpus)) >= 0;
		if (!has_cpus && strcmp(e->d_name, "cpu") != 0)
			continue;
		pmc__snprintf(path, sizeof(path), "%s/%s/type", pmc__sysfs_root(), e->d_name);
		if (pmc__read_text(path, type, sizeof(type)) < 0 ||
		    parse_number(type, strcspn(type, "\n"), &t) != 0 || t > UINT32_MAX)
			continue;
		if (n < max) {
			/* Insertion by type keeps the list in one order everywhere. */
			size_t at = n;

			while (at > 0 && (out[at - 1].type > (uint32_t)t ||
					  (out[at - 1].type == (uint32_t)t &&
					   strcmp(out[at - 1].name, e->d_name) > 0))) {
				out[at] = out[at - 1];
				at--;
			}
			pmc__copy(out[at].name, sizeof(out[at].name), e->d_name);
			out[at].type = (uint32_t)t;
			cpus[strcspn(cpus, "\n")] = '\0';
			pmc__copy(out[at].cpus, sizeof(out[at].cpus), has_cpus ? cpus : "");
		}
		n++;
	}
	closedir(d);
	return n;
}

/* List of PMU names for messages: "breakpoint, msr, software, ...". */
void pmc__list_pmus(char *buf, size_t size)
{
	DIR *d = opendir(pmc__sysfs_root());
	struct dirent *e;
	size_t used = 0;

	buf[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d))) {
		int n;

		if (e->d_name[0] == '.')
			continue;
		n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", e->d_name);
		if (n < 0 || (size_t)n >= size - used)
			break;
		used += (size_t)n;
	}
	closedir(d);
}

/* ---- modifiers ----------------------------------------------------------- */

/* s[0..len) are modifier letters (after the ':' or the closing '/'). */
static int apply_modifiers(struct pmc__pctx *p, int pos, const char *s, size_t len,
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
				return perr(p, PMC_E_SYNTAX, pos + (int)i,
					    "at most three 'p' modifiers (precise_ip is 0..3)");
			continue;
		case ':':
			return perr(p, PMC_E_SYNTAX, pos + (int)i,
				    "modifiers form one group after a single ':' (for example instructions:uk), not several");
		default:
			if (isprint((unsigned char)s[i]))
				return perr(p, PMC_E_SYNTAX, pos + (int)i,
					    "unknown modifier '%c'; modifiers are u (user), k (kernel), h (hypervisor) and p (precise)",
					    s[i]);
			return perr(p, PMC_E_SYNTAX, pos + (int)i,
				    "unknown modifier (byte 0x%02x); modifiers are u (user), k (kernel), h (hypervisor) and p (precise)",
				    (unsigned char)s[i]);
		}
		if (*flag)
			return perr(p, PMC_E_SYNTAX, pos + (int)i,
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

static int set_name(struct pmc__pctx *p, struct pmc_event_spec *spec,
		    const char *base, const char *sep)
{
	char mods[8];
	int n;

	modifier_suffix(spec, mods, sizeof(mods));
	n = snprintf(spec->name, sizeof(spec->name), "%s%s%s", base,
		     mods[0] ? sep : "", mods);
	if (n < 0 || (size_t)n >= sizeof(spec->name))
		return perr(p, PMC_E_TOO_LONG, -1, "canonical name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	return 0;
}

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
			return perr(p, PMC_E_SYNTAX, pos,
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
		return perr(p, PMC_E_SYNTAX, pos, "empty or overlong term in %s/.../", pmu);
	memcpy(k, key, klen);
	k[klen] = '\0';
	if (!strcmp(k, "name")) {
		if (!val || vlen == 0 || vlen >= PMC_EVENT_NAME_MAX)
			return perr(p, PMC_E_SYNTAX, pos, "name= needs a value of 1..%d characters",
				    PMC_EVENT_NAME_MAX - 1);
		memcpy(name_override, val, vlen);
		name_override[vlen] = '\0';
		return 0;
	}
	if (val && parse_number(val, vlen, &value))
		return perr(p, PMC_E_SYNTAX, pos + (int)klen + 1,
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
		return sysfs_error(p, rc, path);
	if (rc >= 0) {
		if (deposit(format, value, spec, &width))
			return perr(p, PMC_E_BAD_FIELD, pos,
				    "cannot decode %s (\"%s\"); expected config[12]:lo-hi,...",
				    path, format);
		if (width < 64 && (value >> width) != 0)
			return perr(p, PMC_E_BAD_FIELD, pos + (int)klen + 1,
				    "value 0x%" PRIx64 " does not fit field \"%s\" of %s (%u bits, %s)",
				    value, k, pmu, width, format);
		return 0;
	}
	/* Not a field: an event alias under events/? */
	pmc__snprintf(path, sizeof(path), "%s/%s/events/%s", pmc__sysfs_root(), pmu, k);
	if (!val && depth < 2 && (rc = pmc__read_text(path, format, sizeof(format))) < 0 &&
	    rc != -ENOENT)
		return sysfs_error(p, rc, path);
	if (!val && depth < 2 && rc >= 0)
		return apply_alias(p, pos, pmu, format, depth, spec, name_override);
	return perr(p, PMC_E_BAD_FIELD, pos,
		    "%s has no format field or event named \"%s\"; see %s/%s/format/ and events/",
		    pmu, k, pmc__sysfs_root(), pmu);
}

static int parse_pmu_form(struct pmc__pctx *p, const char *s, size_t len,
			  struct pmc_event_spec *spec)
{
	const char *slash = memchr(s, '/', len), *close, *t;
	char pmu[64], path[PMC_EVENT_PATH_MAX], canon[PMC_EVENT_NAME_MAX];
	char override[PMC_EVENT_NAME_MAX] = "";
	uint64_t type;
	size_t plen = (size_t)(slash - s), cn;
	int rc;

	if (plen == 0 || plen >= sizeof(pmu))
		return perr(p, PMC_E_SYNTAX, 0, "expected a PMU name before '/'");
	memcpy(pmu, s, plen);
	pmu[plen] = '\0';
	for (size_t i = 0; i < plen; i++)
		if (!(isalnum((unsigned char)pmu[i]) || pmu[i] == '_' || pmu[i] == '-' ||
		      pmu[i] == '.'))
			return perr(p, PMC_E_SYNTAX, (int)i, "'%c' cannot appear in a PMU name",
				    pmu[i]);
	close = memchr(slash + 1, '/', len - plen - 1);
	if (!close)
		return perr(p, PMC_E_SYNTAX, (int)len,
			    "missing closing '/' (form: pmu/field=value,.../)");
	pmc__snprintf(path, sizeof(path), "%s/%s/type", pmc__sysfs_root(), pmu);
	if ((rc = pmc__read_u64(path, &type)) != 0) {
		char pmus[256];

		if (rc != -ENOENT && rc != -EINVAL)
			return sysfs_error(p, rc, path);

		pmc__list_pmus(pmus, sizeof(pmus));
		return perr(p, PMC_E_NO_PMU, 0,
			    "no PMU named \"%s\" on this machine (PMUs here: %s)", pmu, pmus);
	}
	spec->kind = PMC_KIND_PMU;
	spec->type = (uint32_t)type;
	snprintf(spec->pmu, sizeof(spec->pmu), "%s", pmu);
	spec->uses_hw_counter = (unsigned)is_core_pmu(pmu);
	if (close == slash + 1)
		return perr(p, PMC_E_SYNTAX, (int)plen + 1, "empty term list in %s//", pmu);
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
			return perr(p, PMC_E_SYNTAX, (int)(t - s), "empty term");
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
				return perr(p, PMC_E_SYNTAX, (int)(t - s),
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
			return perr(p, PMC_E_SYNTAX, (int)(close - s), "empty term before the closing '/'");
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
				return perr(p, PMC_E_SYNTAX, (int)(m - s),
					    "expected modifiers after ':' (u, k, h, p), or nothing after the closing '/'");
		}
		rc = apply_modifiers(p, (int)(m - s), m, mlen, spec);
		if (rc)
			return rc;
	}
	if (spec->type == PERF_TYPE_SOFTWARE &&
	    strcmp(canonical_of(sw_events, COUNT(sw_events), spec->config), "?") == 0)
		return perr(p, PMC_E_UNKNOWN_EVENT, (int)plen + 1,
			    "the software PMU has no event with config %" PRIu64
			    " (it counts 0..%d: cpu-clock, task-clock, page-faults, ...); use the event's name",
			    spec->config, PERF_COUNT_SW_CGROUP_SWITCHES);
	if (cn + 2 < sizeof(canon))
		strcat(canon, "/");
	if (override[0])
		return pmc__copy(spec->name, sizeof(spec->name), override) ? PMC_E_TOO_LONG : 0;
	return set_name(p, spec, canon, "");
}

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
static int parse_mem(struct pmc__pctx *p, const char *s, size_t len,
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
		return perr(p, PMC_E_SYNTAX, 4, "expected an address or symbol after \"mem:\"");
	if (isdigit((unsigned char)*a)) {
		if (parse_number(a, (size_t)(q - a), &addr))
			return perr(p, PMC_E_SYNTAX, 4,
				    "breakpoint address \"%.*s\" is not a number", (int)(q - a), a);
	} else {
		if ((size_t)(q - a) >= sizeof(sym))
			return perr(p, PMC_E_TOO_LONG, 4, "the symbol name is %zu bytes, longer than %d",
				    (size_t)(q - a), PMC_EVENT_NAME_MAX - 1);
		if (!is_ident(a, (size_t)(q - a)))
			return perr(p, PMC_E_SYNTAX, 4,
				    "expected a number or a symbol name after \"mem:\"");
		memcpy(sym, a, (size_t)(q - a));
		sym[q - a] = '\0';
		rc = pmc_symbol_resolve(sym, NULL, object, sizeof(object), NULL, &symaddr,
					NULL);
		if (rc)
			return perr(p, PMC_E_NO_SYMBOL, 4,
				    "symbol \"%s\" is not defined by the program or a loaded object",
				    sym);
		addr = symaddr;
	}
	if (q < end && *q == '/') {
		const char *l = ++q;

		while (q < end && *q != ':')
			q++;
		if (parse_number(l, (size_t)(q - l), &blen) ||
		    (blen != 1 && blen != 2 && blen != 4 && blen != 8))
			return perr(p, PMC_E_SYNTAX, (int)(l - s),
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
				return perr(p, PMC_E_SYNTAX, (int)(m - s),
					    "breakpoint access is r, w, rw or x (x cannot combine with r/w)");
			access = x ? PMC_BP_X : (unsigned)((r ? PMC_BP_R : 0) | (w ? PMC_BP_W : 0));
			if (q < end) {
				m = ++q;
				mlen = (size_t)(end - m);
				if (!mlen)
					return perr(p, PMC_E_SYNTAX, (int)(m - s),
						    "expected modifiers after ':'");
			} else {
				mlen = 0;
			}
		} else {
			mlen = (size_t)(end - m);
		}
		rc = apply_modifiers(p, (int)(m - s), m, mlen, spec);
		if (rc)
			return rc;
	}
	if (access == PMC_BP_X) {
		if (len_given && blen != sizeof(long))
			return perr(p, PMC_E_SYNTAX, (int)(memchr(s, '/', len) ? (const char *)memchr(s, '/', len) - s + 1 : 4),
				    "an execute breakpoint covers one instruction: length must be %zu or omitted",
				    sizeof(long));
		blen = sizeof(long);
	} else if (!len_given) {
		blen = 4; /* perf's default for data breakpoints */
	}
	if (addr == 0)
		return perr(p, PMC_E_SYNTAX, 4,
			    "address 0 cannot be watched (nothing is mapped there); give the address of a variable or a symbol name");
	if (access != PMC_BP_X && addr % blen)
		return perr(p, PMC_E_SYNTAX, 4,
			    "address 0x%" PRIx64 " is not aligned to the breakpoint length %" PRIu64
			    "; the debug registers need natural alignment",
			    addr, blen);
	fill_breakpoint(spec, addr, blen, access);
	if (sym[0]) {
		if (snprintf(base, sizeof(base), "mem:%s", sym) >= (int)sizeof(base) - 16)
			return perr(p, PMC_E_TOO_LONG, 4, "symbol name too long");
	} else
		snprintf(base, sizeof(base), "mem:0x%" PRIx64, addr);
	if (access != PMC_BP_X)
		snprintf(base + strlen(base), sizeof(base) - strlen(base), "/%" PRIu64, blen);
	snprintf(base + strlen(base), sizeof(base) - strlen(base), ":%s", access_text(access));
	return set_name(p, spec, base, ":");
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
static int parse_sim(struct pmc__pctx *p, const char *s, size_t len, struct pmc_event_spec *spec)
{
	size_t i = 4;
	unsigned mask = 0;
	int used;

	if (len == 4)
		return perr(p, PMC_E_SYNTAX, 4,
			    "expected a callgrind event after \"sim:\" (Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi, Bim; join with '+')");
	while (i < len) {
		size_t w = i;
		int col;

		while (i < len && s[i] != '+')
			i++;
		col = pmc__sim_column_of(s + w, i - w);
		if (col < 0)
			return perr(p, PMC_E_UNKNOWN_EVENT, (int)w,
				    "unknown callgrind event \"%.*s\": expected Ir, Dr, Dw, I1mr, D1mr, D1mw, ILmr, DLmr, DLmw, Bc, Bcm, Bi or Bim (case matters)",
				    (int)(i - w), s + w);
		if (mask & (1u << col))
			return perr(p, PMC_E_SYNTAX, (int)w, "callgrind event \"%.*s\" named twice",
				    (int)(i - w), s + w);
		mask |= 1u << col;
		if (i < len && ++i == len)
			return perr(p, PMC_E_SYNTAX, (int)len, "expected an event after '+'");
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

/* calls:SYMBOL[@OBJECT] */
static int parse_calls(struct pmc__pctx *p, const char *s, size_t len,
		       struct pmc_event_spec *spec)
{
	const char *sym = s + 6, *at = memchr(sym, '@', len - 6);
	char name[PMC_EVENT_NAME_MAX], object[PMC_EVENT_PATH_MAX] = "", path[128];
	size_t slen = at ? (size_t)(at - sym) : len - 6;
	uint64_t type;
	int rc;

	if (!at && memchr(sym, ':', slen))
		return perr(p, PMC_E_SYNTAX, (int)((const char *)memchr(sym, ':', slen) - s),
			    "calls: takes no modifiers: a uprobe counts every call, in user space (form: calls:SYMBOL[@OBJECT])");
	if (slen >= sizeof(name))
		return perr(p, PMC_E_TOO_LONG, 6, "the function name is %zu bytes, longer than %d",
			    slen, PMC_EVENT_NAME_MAX - 1);
	if (!is_ident(sym, slen))
		return perr(p, PMC_E_SYNTAX, 6,
			    "expected a function name after \"calls:\" (form: calls:SYMBOL[@OBJECT])");
	memcpy(name, sym, slen);
	name[slen] = '\0';
	if (at) {
		size_t olen = len - (size_t)(at - s) - 1;

		if (olen == 0 || olen >= sizeof(object) || memchr(at + 1, ':', olen))
			return perr(p, PMC_E_SYNTAX, (int)(at - s) + 1,
				    "expected an object name (part of its path) after '@'");
		memcpy(object, at + 1, olen);
		object[olen] = '\0';
	}
	pmc__snprintf(path, sizeof(path), "%s/uprobe/type", pmc__sysfs_root());
	if ((rc = pmc__read_u64(path, &type)) != 0 && rc != -ENOENT && rc != -EINVAL)
		return sysfs_error(p, rc, path);
	if (rc)
		return perr(p, PMC_E_NO_PMU, 0,
			    "calls: needs the uprobe PMU, which this kernel does not offer (CONFIG_UPROBE_EVENTS)");
	rc = pmc_symbol_resolve(name, object, spec->path, sizeof(spec->path),
				&spec->probe_offset, NULL, p->err);
	if (rc) {
		if (p->err) {
			char why[PMC_ERROR_MSG_MAX];

			snprintf(why, sizeof(why), "%s", p->err->message);
			return perr(p, rc, 6, "%s", why);
		}
		return rc;
	}
	spec->kind = PMC_KIND_UPROBE;
	spec->type = (uint32_t)type;
	snprintf(spec->pmu, sizeof(spec->pmu), "uprobe");
	spec->config = 0; /* entry probe: format/retprobe bit clear */
	if (snprintf(spec->name, sizeof(spec->name), "calls:%s%s%s", name, at ? "@" : "",
		     object) >= (int)sizeof(spec->name))
		return perr(p, PMC_E_TOO_LONG, 0, "canonical name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	return 0;
}

/* ---- libpfm4 --------------------------------------------------------------- */

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_status;

static void pfm_init_once(void)
{
	pfm_status = pfm_initialize();
}

static int parse_libpfm(struct pmc__pctx *p, const char *s, size_t len,
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
	pthread_once(&pfm_once, pfm_init_once);
	if (pfm_status != PFM_SUCCESS)
		return 0;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	arg.fstr = &fstr;
	rc = pfm_get_os_event_encoding(buf, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (rc != PFM_SUCCESS) {
		if (rc == PFM_ERR_NOTFOUND)
			return 0;
		*handled = 1;
		return perr(p, PMC_E_UNKNOWN_EVENT, 0, "libpfm4 rejects it: %s",
			    pfm_strerror(rc));
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

/* ---- the dispatcher ------------------------------------------------------ */

static int parse_cache(const char *s, size_t len, struct pmc_event_spec *spec)
{
	const struct pmc__named *c, *op, *res = NULL;
	size_t used, rest;
	const char *q;
	char buf[PMC_EVENT_NAME_MAX];

	c = lookup_prefix(cache_ids, COUNT(cache_ids), s, &used);
	if (!c || used >= len || s[used] != '-')
		return 0;
	q = s + used + 1;
	rest = len - used - 1;
	op = lookup_prefix(cache_ops, COUNT(cache_ops), q, &used);
	if (!op)
		return 0;
	if (used < rest) {
		if (q[used] != '-')
			return 0;
		res = lookup(cache_results, COUNT(cache_results), q + used + 1, rest - used - 1);
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
	snprintf(buf, sizeof(buf), "%s-%s", canonical_of(cache_ids, COUNT(cache_ids), c->config),
		 canonical_of(cache_ops, COUNT(cache_ops), op->config));
	if (res && res->config == PERF_COUNT_HW_CACHE_RESULT_MISS)
		strcat(buf, "-misses");
	else /* perf's plural: loads, stores, prefetches (which parse back) */
		strcat(buf, op->config == PERF_COUNT_HW_CACHE_OP_PREFETCH ? "es" : "s");
	memcpy(spec->name, buf, sizeof(buf));
	return 1;
}

/* ---- tracepoints ------------------------------------------------------------ */

/* Where tracefs is: mounted already, or mounted here (root only) at
 * /sys/kernel/tracing.  NULL with *why set when neither works. */
static const char *tracefs_root(const char **why)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[64];

	for (size_t i = 0; i < COUNT(roots); i++) {
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
static int parse_tracepoint(struct pmc__pctx *p, const char *s, size_t len,
			    struct pmc_event_spec *spec, int *handled)
{
	const char *c1 = memchr(s, ':', len), *c2, *root, *why = NULL;
	char path[PMC_EVENT_PATH_MAX], sub[64], ev[128], idtext[32], base[PMC_EVENT_NAME_MAX];
	size_t slen, elen;
	uint64_t id;
	int rc;

	*handled = 0;
	if (!c1 || c1 == s || !is_ident(s, (size_t)(c1 - s)) || (size_t)(c1 - s) >= sizeof(sub))
		return 0;
	c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - s));
	elen = (size_t)((c2 ? c2 : s + len) - (c1 + 1));
	slen = (size_t)(c1 - s);
	/* Tracepoint names are lower case: keep libpfm4's EVENT:UMASK out. */
	for (size_t i = 0; i < slen; i++)
		if (isupper((unsigned char)s[i]))
			return 0;
	if (elen == 0 || elen >= sizeof(ev) || !is_ident(c1 + 1, elen))
		return 0;
	memcpy(sub, s, slen);
	sub[slen] = '\0';
	memcpy(ev, c1 + 1, elen);
	ev[elen] = '\0';
	root = tracefs_root(&why);
	if (!root)
		return 0; /* maybe libpfm4's; the unknown-event message mentions tracefs */
	pmc__snprintf(path, sizeof(path), "%s/events/%s", root, sub);
	if (access(path, R_OK) != 0)
		return 0;
	*handled = 1;
	pmc__snprintf(path, sizeof(path), "%s/events/%s/%s/id", root, sub, ev);
	if (pmc__read_text(path, idtext, sizeof(idtext)) < 0 ||
	    parse_number(idtext, strcspn(idtext, "\n"), &id) != 0)
		return perr(p, PMC_E_UNKNOWN_EVENT, (int)slen + 1,
			    "no tracepoint \"%s\" in subsystem \"%s\" (see %s/events/%s/)", ev, sub,
			    root, sub);
	if (c2) {
		if (c2 + 1 == s + len)
			return perr(p, PMC_E_SYNTAX, (int)len, "expected modifiers after ':' (u, k, h, p)");
		rc = apply_modifiers(p, (int)(c2 + 1 - s), c2 + 1, len - (size_t)(c2 + 1 - s), spec);
		if (rc)
			return rc;
	}
	spec->kind = PMC_KIND_TRACEPOINT;
	spec->type = PERF_TYPE_TRACEPOINT;
	spec->config = id;
	snprintf(spec->pmu, sizeof(spec->pmu), "tracepoint");
	if (slen + 1 + elen >= sizeof(base))
		return perr(p, PMC_E_TOO_LONG, 0, "tracepoint name longer than %d bytes",
			    PMC_EVENT_NAME_MAX - 1);
	memcpy(base, s, slen + 1 + elen);
	base[slen + 1 + elen] = '\0';
	return set_name(p, spec, base, ":");
}

/* Is s[0..len) a generic hardware, software or cache name, or rNNNN? */
static int is_generic_name(const char *s, size_t len)
{
	struct pmc_event_spec scratch;

	if (lookup(hw_events, COUNT(hw_events), s, len) || lookup(sw_events, COUNT(sw_events), s, len))
		return 1;
	if (len >= 2 && s[0] == 'r' && strspn(s + 1, "0123456789abcdefABCDEF") >= len - 1)
		return 1;
	memset(&scratch, 0, sizeof(scratch));
	return len < PMC_EVENT_NAME_MAX && parse_cache(s, len, &scratch);
}

static int parse_one(struct pmc__pctx *p, const char *s, size_t len,
		     struct pmc_event_spec *spec)
{
	const struct pmc__named *e;
	const char *colon;
	size_t blen = len;
	int rc, handled;
	char base[PMC_EVENT_NAME_MAX];

	memset(spec, 0, sizeof(*spec));
	if (len == 0)
		return perr(p, PMC_E_SYNTAX, 0, "empty event name");
	for (size_t i = 0; i < len; i++)
		if (isspace((unsigned char)s[i]))
			return perr(p, PMC_E_SYNTAX, (int)i, "unexpected white space");
	if (len >= 4 && !strncmp(s, "mem:", 4))
		return parse_mem(p, s, len, spec);
	if (len >= 6 && !strncmp(s, "calls:", 6))
		return parse_calls(p, s, len, spec);
	if (len >= 4 && !strncmp(s, "sim:", 4))
		return parse_sim(p, s, len, spec);
	if (memchr(s, '/', len))
		return parse_pmu_form(p, s, len, spec);

	if (len >= 3 && s[0] == 'r' && s[1] == '0' && (s[2] == 'x' || s[2] == 'X'))
		return perr(p, PMC_E_SYNTAX, 1,
			    "a raw event is r and hex digits without 0x (r%.*s)", (int)(len > 3 ? len - 3 : 0), s + 3);
	/* A generic name (hardware, software, cache, rNNNN) is followed by one
	 * group of modifiers after its first ':', and nothing else may follow:
	 * "instructions:q" is a bad modifier, not a libpfm4 name. */
	colon = memchr(s, ':', len);
	if (colon && is_generic_name(s, (size_t)(colon - s))) {
		if (colon + 1 == s + len)
			return perr(p, PMC_E_SYNTAX, (int)len,
				    "expected modifiers after ':' (u, k, h, p)");
		blen = (size_t)(colon - s);
	} else if (colon) {
		/* libpfm4 names hold ':' themselves (pmu::EVENT:UMASK); only
		 * a last segment of modifier letters is pmcheck's. */
		colon = memrchr(s, ':', len);
		if (colon + 1 == s + len)
			return perr(p, PMC_E_SYNTAX, (int)len, "expected modifiers after ':'");
		if (strspn(colon + 1, "ukhp") >= (size_t)(s + len - colon - 1) && colon > s &&
		    colon[-1] != ':')
			blen = (size_t)(colon - s);
	}
	if (blen < len) {
		rc = apply_modifiers(p, (int)blen + 1, s + blen + 1, len - blen - 1, spec);
		if (rc)
			return rc;
	}
	if (blen >= sizeof(base))
		return perr(p, PMC_E_TOO_LONG, PMC_EVENT_NAME_MAX - 1,
			    "the event name is %zu bytes, longer than any event's (at most %d); check for a missing ','",
			    blen, PMC_EVENT_NAME_MAX - 1);
	if ((e = lookup(hw_events, COUNT(hw_events), s, blen))) {
		spec->kind = PMC_KIND_HARDWARE;
		spec->type = PERF_TYPE_HARDWARE;
		spec->config = e->config;
		spec->uses_hw_counter = 1;
		return set_name(p, spec, canonical_of(hw_events, COUNT(hw_events), e->config), ":");
	}
	if ((e = lookup(sw_events, COUNT(sw_events), s, blen))) {
		spec->kind = PMC_KIND_SOFTWARE;
		spec->type = PERF_TYPE_SOFTWARE;
		spec->config = e->config;
		snprintf(spec->pmu, sizeof(spec->pmu), "software");
		return set_name(p, spec, canonical_of(sw_events, COUNT(sw_events), e->config), ":");
	}
	if (parse_cache(s, blen, spec)) {
		memcpy(base, spec->name, sizeof(base));
		return set_name(p, spec, base, ":");
	}
	if (blen >= 2 && s[0] == 'r' && strspn(s + 1, "0123456789abcdefABCDEF") >= blen - 1) {
		char hex[24];

		if (blen - 1 > 16)
			return perr(p, PMC_E_SYNTAX, 1, "raw config has more than 16 hex digits");
		memcpy(hex, s + 1, blen - 1);
		hex[blen - 1] = '\0';
		spec->kind = PMC_KIND_RAW;
		spec->type = PERF_TYPE_RAW;
		spec->config = strtoull(hex, NULL, 16);
		spec->uses_hw_counter = 1;
		snprintf(base, sizeof(base), "r%" PRIx64, spec->config);
		return set_name(p, spec, base, ":");
	}
	if (colon) {
		rc = parse_tracepoint(p, s, len, spec, &handled);
		if (handled)
			return rc;
	}
	{
		struct pmc_event_spec keep = *spec;

		rc = parse_libpfm(p, s, blen, spec, &handled);
		if (handled) {
			if (rc == 0) {
				/* pmcheck's modifiers win over libpfm's defaults. */
				spec->exclude_user = keep.exclude_user;
				spec->exclude_kernel = keep.exclude_kernel;
				spec->exclude_hv = keep.exclude_hv;
				spec->precise_ip = keep.precise_ip;
				memcpy(base, spec->name, sizeof(base));
				rc = set_name(p, spec, base, ":");
			}
			return rc;
		}
	}
	{
		const char *hint = pmc__has_hw_pmu() ? ""
				   : " (no hardware PMU here: libpfm4 knows only the PMUs CPUID shows)";
		const char *why = NULL;

		if (colon && !tracefs_root(&why))
			return perr(p, PMC_E_UNKNOWN_EVENT, 0,
				    "\"%.*s\" is no event pmcheck knows, and if it is a tracepoint: %s",
				    (int)(blen < 64 ? blen : 64), s, why);
		return perr(p, PMC_E_UNKNOWN_EVENT, 0,
			    "unknown event \"%.*s\": not a generic name (instructions, task-clock, L1-dcache-load-misses, ...), rNNNN, tracepoint (SUBSYSTEM:EVENT) or libpfm4 event%s; check the spelling, or write pmu/event=.../ or pfm_pmu::EVENT",
			    (int)(blen < 64 ? blen : 64), s, hint);
	}
}

int pmc_event_parse(const char *text, struct pmc_event_spec *spec, struct pmc_error *err)
{
	struct pmc__pctx p = { text, 0, err };

	if (!text || !spec)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_event_parse: NULL argument");
	pmc_error_clear(err);
	return parse_one(&p, text, strlen(text), spec);
}

int pmc_event_parse_list(const char *text, struct pmc_event_spec *specs, size_t max,
			 size_t *count, struct pmc_error *err)
{
	struct pmc__pctx p = { text, 0, err };
	const char *s = text;
	size_t n = 0;

	if (!text || !count)
		return pmc__fail(err, -EINVAL, "", -1, "pmc_event_parse_list: NULL argument");
	pmc_error_clear(err);
	*count = 0;
	for (;;) {
		const char *e = s;
		int rc;

		/* Commas inside pmu/.../ belong to the event; mem: and calls:
		 * use '/' and '@' differently and end at the next comma. */
		if (!strncmp(s, "mem:", 4) || !strncmp(s, "calls:", 6) || !strncmp(s, "sim:", 4)) {
			e = s + strcspn(s, ",");
		} else {
			const char *slash = s + strcspn(s, ",/");

			if (*slash == '/') {
				const char *close = strchr(slash + 1, '/');

				e = close ? close + strcspn(close, ",") : slash + strlen(slash);
			} else {
				e = slash;
			}
		}
		if (n == max) {
			char shown[128];

			shown_input(text, shown, sizeof(shown));
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
