/* SPDX-License-Identifier: MIT */
/*
 * Event parser table tests.  PMU-qualified forms run against a fixture sysfs
 * tree built in a temporary directory (pure parsing, no kernel); calls: and
 * mem:SYMBOL resolve against this very program and its libc.
 *
 * Over 600 lines on purpose: tables of accepted and refused spellings, one
 * per form of the grammar (the refused ones in bad_events.inc), each
 * entry a line.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "t.h"

struct row {
	const char *text;
	const char *canonical;
	enum pmc_event_kind kind;
	uint32_t type;
	uint64_t config;
};

static int check_rows(const struct row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct pmc_event_spec s;
		struct pmc_error err;
		int rc = pmc_event_parse(rows[i].text, &s, &err);

		if (rc) {
			t_fail_at(__FILE__, __LINE__, "\"%s\" rejected: %s", rows[i].text,
				  err.message);
			return 0;
		}
		if (strcmp(s.name, rows[i].canonical) || s.kind != rows[i].kind ||
		    s.type != rows[i].type || s.config != rows[i].config) {
			t_fail_at(__FILE__, __LINE__,
				  "\"%s\": got name \"%s\" kind %d type %u config 0x%" PRIx64
				  "; expected \"%s\" kind %d type %u config 0x%" PRIx64,
				  rows[i].text, s.name, s.kind, s.type, s.config,
				  rows[i].canonical, rows[i].kind, rows[i].type, rows[i].config);
			return 0;
		}
	}
	return 1;
}

#define ROWS(r) check_rows(r, sizeof(r) / sizeof(r[0]))

T_CASE(generic_hardware)
{
	static const struct row rows[] = {
		{ "instructions", "instructions", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cycles", "cycles", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_CPU_CYCLES },
		{ "cpu-cycles", "cycles", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_CPU_CYCLES },
		{ "branches", "branches", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-instructions", "branches", PMC_KIND_HARDWARE, 0,
		  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
		{ "branch-misses", "branch-misses", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_BRANCH_MISSES },
		{ "cache-references", "cache-references", PMC_KIND_HARDWARE, 0,
		  PERF_COUNT_HW_CACHE_REFERENCES },
		{ "cache-misses", "cache-misses", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_CACHE_MISSES },
		{ "ref-cycles", "ref-cycles", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_REF_CPU_CYCLES },
		{ "bus-cycles", "bus-cycles", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_BUS_CYCLES },
		{ "stalled-cycles-frontend", "stalled-cycles-frontend", PMC_KIND_HARDWARE, 0,
		  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND },
		{ "idle-cycles-backend", "stalled-cycles-backend", PMC_KIND_HARDWARE, 0,
		  PERF_COUNT_HW_STALLED_CYCLES_BACKEND },
		{ "instructions:u", "instructions:u", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_INSTRUCTIONS },
		{ "cycles:ku", "cycles:uk", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_CPU_CYCLES },
		{ "cycles:pp", "cycles:pp", PMC_KIND_HARDWARE, 0, PERF_COUNT_HW_CPU_CYCLES },
	};

	if (!ROWS(rows))
		return;
}

T_CASE(modifiers)
{
	struct pmc_event_spec s;
	struct pmc_error err;

	T_CHECK(pmc_event_parse("instructions", &s, &err) == 0, "%s", err.message);
	T_CHECK(!s.exclude_user && !s.exclude_kernel && !s.exclude_hv,
		"no modifier must exclude nothing");
	T_CHECK(pmc_event_parse("instructions:u", &s, &err) == 0, "%s", err.message);
	T_CHECK(!s.exclude_user && s.exclude_kernel && s.exclude_hv, ":u excludes k and h");
	T_CHECK(pmc_event_parse("instructions:k", &s, &err) == 0, "%s", err.message);
	T_CHECK(s.exclude_user && !s.exclude_kernel && s.exclude_hv, ":k excludes u and h");
	T_CHECK(pmc_event_parse("cycles:uh", &s, &err) == 0, "%s", err.message);
	T_CHECK(!s.exclude_user && s.exclude_kernel && !s.exclude_hv, ":uh excludes k");
	T_CHECK(pmc_event_parse("cycles:ppp", &s, &err) == 0, "%s", err.message);
	T_EQ_U64(s.precise_ip, 3, "precise_ip of :ppp");
	T_CHECK(pmc_event_parse("cycles:pppp", &s, &err) == PMC_E_SYNTAX, "4 p's accepted");
	T_CHECK(pmc_event_parse("task-clock:u", &s, &err) == 0, "%s", err.message);
	T_EQ_STR(s.name, "task-clock:u", "canonical");
}

T_CASE(modifier_errors)
{
	static const struct {
		const char *text;
		int code, position;
	} bad[] = {
		{ "cycles:uu", PMC_E_SYNTAX, 8 },
		{ "cycles:", PMC_E_SYNTAX, 7 },
		{ "cpu-clock:uq", PMC_E_SYNTAX, 11 }, /* a generic name: modifiers after its first colon */
		{ "", PMC_E_SYNTAX, 0 },
		{ "cycles u", PMC_E_SYNTAX, 6 },
		{ "instructionz", PMC_E_UNKNOWN_EVENT, 0 },
		{ "L1-dcache-bogus", PMC_E_UNKNOWN_EVENT, 0 },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmc_event_spec s;
		struct pmc_error err;
		int rc = pmc_event_parse(bad[i].text, &s, &err);

		T_CHECK(rc == bad[i].code, "\"%s\": got %d (%s) expected %d", bad[i].text, rc,
			err.message, bad[i].code);
		T_CHECK(err.position == bad[i].position, "\"%s\": error position %d expected %d (%s)",
			bad[i].text, err.position, bad[i].position, err.message);
		T_CHECK(strstr(err.message, bad[i].text) != NULL,
			"message must quote the input \"%s\": %s", bad[i].text, err.message);
	}
	{
		struct pmc_event_spec s;
		struct pmc_error err;

		pmc_event_parse("cycles:x", &s, &err);
		/* After a generic name, what follows ':' is modifiers. */
		T_CHECK(err.code == PMC_E_SYNTAX && strstr(err.message, "unknown modifier 'x'"),
			"cycles:x -> %d %s", err.code, err.message);
		pmc_event_parse("cycles:uu", &s, &err);
		T_CHECK(strstr(err.message, "given twice"), "reason missing: %s", err.message);
	}
}

/* Every cache x operation x result parses, and its canonical name parses
 * back to the same config (the fuzzer found "node-prefetchs", which did
 * not: fuzz/corpus/event/crash-29550aab). */
T_CASE(cache_names_round_trip)
{
	static const char *const caches[] = { "L1-dcache", "L1-icache", "LLC", "dTLB", "iTLB",
					      "branch", "node" };
	static const char *const ops[] = { "load", "loads", "store", "stores", "prefetch",
					   "prefetches" };
	static const char *const results[] = { "", "-refs", "-misses" };
	size_t n = 0;

	for (size_t c = 0; c < sizeof(caches) / sizeof(caches[0]); c++)
		for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++)
			for (size_t r = 0; r < sizeof(results) / sizeof(results[0]); r++) {
				struct pmc_event_spec a, b;
				struct pmc_error err;
				char text[64];

				snprintf(text, sizeof(text), "%s-%s%s", caches[c], ops[o], results[r]);
				T_CHECK(pmc_event_parse(text, &a, &err) == 0, "%s: %s", text, err.message);
				T_CHECK(pmc_event_parse(a.name, &b, &err) == 0,
					"%s is canonically \"%s\", which does not parse: %s", text,
					a.name, err.message);
				T_EQ_U64(b.config, a.config, a.name);
				n++;
			}
	printf("%zu cache names round-trip\n", n);
}

T_CASE(cache_events)
{
	static const struct row rows[] = {
		{ "L1-dcache-load-misses", "L1-dcache-load-misses", PMC_KIND_CACHE, 3,
		  0 | (0 << 8) | (1 << 16) },
		{ "L1-dcache-loads", "L1-dcache-loads", PMC_KIND_CACHE, 3, 0 },
		{ "L1-dcache-stores", "L1-dcache-stores", PMC_KIND_CACHE, 3, 1 << 8 },
		{ "L1-dcache-prefetch-misses", "L1-dcache-prefetch-misses", PMC_KIND_CACHE, 3,
		  (2 << 8) | (1 << 16) },
		{ "L1-icache-load-misses", "L1-icache-load-misses", PMC_KIND_CACHE, 3,
		  1 | (1 << 16) },
		{ "LLC-loads", "LLC-loads", PMC_KIND_CACHE, 3, 2 },
		{ "LLC-store-misses", "LLC-store-misses", PMC_KIND_CACHE, 3,
		  2 | (1 << 8) | (1 << 16) },
		{ "dTLB-load-misses", "dTLB-load-misses", PMC_KIND_CACHE, 3, 3 | (1 << 16) },
		{ "iTLB-loads", "iTLB-loads", PMC_KIND_CACHE, 3, 4 },
		{ "branch-loads", "branch-loads", PMC_KIND_CACHE, 3, 5 },
		{ "branch-load-misses", "branch-load-misses", PMC_KIND_CACHE, 3, 5 | (1 << 16) },
		{ "node-loads", "node-loads", PMC_KIND_CACHE, 3, 6 },
		/* aliases and case normalise to perf's canonical names */
		{ "l1-d-load-miss", "L1-dcache-load-misses", PMC_KIND_CACHE, 3, 1 << 16 },
		{ "L1-dcache-read-refs", "L1-dcache-loads", PMC_KIND_CACHE, 3, 0 },
		{ "llc-loads:u", "LLC-loads:u", PMC_KIND_CACHE, 3, 2 },
	};

	if (!ROWS(rows))
		return;
}

T_CASE(software_events)
{
	static const struct row rows[] = {
		{ "task-clock", "task-clock", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_TASK_CLOCK },
		{ "cpu-clock", "cpu-clock", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_CPU_CLOCK },
		{ "page-faults", "page-faults", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_PAGE_FAULTS },
		{ "faults", "page-faults", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_PAGE_FAULTS },
		{ "context-switches", "context-switches", PMC_KIND_SOFTWARE, 1,
		  PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cs", "context-switches", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_CONTEXT_SWITCHES },
		{ "cpu-migrations", "cpu-migrations", PMC_KIND_SOFTWARE, 1,
		  PERF_COUNT_SW_CPU_MIGRATIONS },
		{ "minor-faults", "minor-faults", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_PAGE_FAULTS_MIN },
		{ "major-faults", "major-faults", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
		{ "alignment-faults", "alignment-faults", PMC_KIND_SOFTWARE, 1,
		  PERF_COUNT_SW_ALIGNMENT_FAULTS },
		{ "emulation-faults", "emulation-faults", PMC_KIND_SOFTWARE, 1,
		  PERF_COUNT_SW_EMULATION_FAULTS },
		{ "dummy", "dummy", PMC_KIND_SOFTWARE, 1, PERF_COUNT_SW_DUMMY },
	};

	if (!ROWS(rows))
		return;
}

T_CASE(raw_events)
{
	static const struct row rows[] = {
		{ "r01c4", "r1c4", PMC_KIND_RAW, PERF_TYPE_RAW, 0x1c4 },
		{ "r0", "r0", PMC_KIND_RAW, PERF_TYPE_RAW, 0 },
		{ "rFFFFFFFFFFFFFFFF", "rffffffffffffffff", PMC_KIND_RAW, PERF_TYPE_RAW, UINT64_MAX },
		{ "r53003c:k", "r53003c:k", PMC_KIND_RAW, PERF_TYPE_RAW, 0x53003c },
	};
	struct pmc_event_spec s;
	struct pmc_error err;

	if (!ROWS(rows))
		return;
	T_CHECK(pmc_event_parse("r1FFFFFFFFFFFFFFFF", &s, &err) == PMC_E_SYNTAX,
		"17 hex digits accepted");
	T_EQ_U64(err.position, 1, "position of the overlong raw config");
}

/* ---- PMU-qualified form against a fixture sysfs -------------------------- */

static char fixture[256];

static void put(const char *rel, const char *content)
{
	t_put(fixture, rel, content);
}

static void make_fixture(void)
{
	snprintf(fixture, sizeof(fixture), "/tmp/pmc-sysfs-XXXXXX");
	if (!mkdtemp(fixture)) {
		perror("mkdtemp");
		exit(2);
	}
	/* An x86 core PMU. */
	put("cpu/type", "4");
	put("cpu/rdpmc", "1");
	put("cpu/format/event", "config:0-7");
	put("cpu/format/umask", "config:8-15");
	put("cpu/format/edge", "config:18");
	put("cpu/format/inv", "config:23");
	put("cpu/format/cmask", "config:24-31");
	put("cpu/format/split", "config:0-3,32-35"); /* non-contiguous field */
	put("cpu/format/ldlat", "config1:0-15");
	put("cpu/events/instructions", "event=0xc0");
	put("cpu/events/mem-loads", "event=0xcd,umask=0x1,ldlat=3");
	put("cpu/events/needs-param", "event=0x3c,umask=?");
	/* An arm64 PMUv3, as the QEMU virt machine names it. */
	put("armv8_pmuv3/type", "8");
	put("armv8_pmuv3/format/event", "config:0-15");
	put("armv8_pmuv3/format/long", "config1:0");
	put("armv8_pmuv3/format/rdpmc", "config1:1");
	put("armv8_pmuv3/events/inst_retired", "event=0x0008");
	/* Non-core PMUs. */
	put("software/type", "1");
	put("breakpoint/type", "5");
	put("uprobe/type", "8");
	put("uprobe/format/retprobe", "config:0");
	put("msr/type", "9");
	put("msr/format/event", "config:0-63");
	put("msr/events/tsc", "event=0x00");
	put("bad/type", "10");
	put("bad/format/event", "config0-7"); /* malformed format file */
	pmc_event_set_sysfs_root(fixture);
}

static void drop_fixture(void)
{
	char cmd[300];

	pmc_event_set_sysfs_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", fixture);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", fixture);
}

/* The input as a message shows it: control characters and the backslash
 * as C escapes, so that nothing raw reaches a terminal. */
static void shown(char *out, size_t size, const char *in, size_t max)
{
	size_t used = 0;

	for (size_t i = 0; i < max && in[i] && used + 5 < size; i++) {
		unsigned char c = (unsigned char)in[i];

		if (c == '\n' || c == '\t' || c == '\r' || c == '\\')
			used += (size_t)snprintf(out + used, size - used, "\\%c",
						 c == '\n' ? 'n' : c == '\t' ? 't' : c == '\r' ? 'r' : '\\');
		else if (c < 0x20 || c == 0x7f)
			used += (size_t)snprintf(out + used, size - used, "\\x%02x", c);
		else
			out[used++] = (char)c;
	}
	out[used] = '\0';
}

/*
 * Every malformed string in bad_events.inc is refused, and its message
 * quotes the input (its first 72 bytes when long), gives the position the
 * error names, and states the reason.  Runs against the fixture sysfs tree,
 * so the PMU forms reach their terms.
 */
T_CASE(malformed_table)
{
	static const struct {
		const char *text;
		int list, position;
		const char *why;
	} bad[] = {
#include "bad_events.inc"
	};
	size_t refused = 0, wrong = 0;

	make_fixture();
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmc_event_spec specs[PMC_MAX_EVENTS];
		struct pmc_error err;
		char quoted[310], text[300], at[32];
		size_t n;
		int rc = bad[i].list ? pmc_event_parse_list(bad[i].text, specs, PMC_MAX_EVENTS, &n, &err)
				     : pmc_event_parse(bad[i].text, specs, &err);
		int ok = rc != 0;

		shown(text, sizeof(text), bad[i].text, 72);
		snprintf(quoted, sizeof(quoted), "\"%s", text);
		snprintf(at, sizeof(at), "position %d", err.position);
		ok = ok && strstr(err.message, quoted) != NULL;
		ok = ok && err.position >= 0 && (size_t)err.position <= strlen(bad[i].text) &&
		     strstr(err.message, at) != NULL;
		ok = ok && (bad[i].position == -99 || err.position == bad[i].position);
		ok = ok && strstr(err.message, bad[i].why) != NULL;
		refused += rc != 0;
		if (getenv("PMC_T_DUMP"))
			printf("ROW %zu %d\n", i, err.position);
		if (!ok) {
			wrong++;
			printf("row %zu \"%.40s\": rc %d position %d (want %d): %s\n", i, bad[i].text,
			       rc, err.position, bad[i].position, rc ? err.message : "ACCEPTED");
		}
	}
	drop_fixture();
	printf("%zu malformed strings, %zu refused, %zu accepted, %zu with a message that misses the input, position or reason\n",
	       sizeof(bad) / sizeof(bad[0]), refused, sizeof(bad) / sizeof(bad[0]) - refused, wrong);
	T_EQ_U64(wrong, 0, "every malformed string refused clearly");
	T_CHECK(sizeof(bad) / sizeof(bad[0]) >= 150, "the table holds at least 150 strings");
}

T_CASE(pmu_form)
{
	static const struct row rows[] = {
		{ "cpu/event=0xc4,umask=0x11/", "cpu/event=0xc4,umask=0x11/", PMC_KIND_PMU, 4, 0x11c4 },
		{ "cpu/event=0xc4,umask=0x11/u", "cpu/event=0xc4,umask=0x11/u", PMC_KIND_PMU, 4, 0x11c4 },
		{ "cpu/event=0xc4,umask=0x11/:k", "cpu/event=0xc4,umask=0x11/k", PMC_KIND_PMU, 4, 0x11c4 },
		{ "cpu/event=0x3c,cmask=1,inv,edge/", "cpu/event=0x3c,cmask=1,inv,edge/", PMC_KIND_PMU, 4,
		  0x3c | (1u << 24) | (1u << 23) | (1u << 18) },
		{ "cpu/instructions/", "cpu/instructions/", PMC_KIND_PMU, 4, 0xc0 },
		{ "cpu/config=0x1234/", "cpu/config=0x1234/", PMC_KIND_PMU, 4, 0x1234 },
		{ "cpu/split=0xab/", "cpu/split=0xab/", PMC_KIND_PMU, 4, 0xb | (0xaull << 32) },
		{ "cpu/event=0xc0,name=retired/", "retired", PMC_KIND_PMU, 4, 0xc0 },
		{ "armv8_pmuv3/event=0x08/", "armv8_pmuv3/event=0x08/", PMC_KIND_PMU, 8, 0x08 },
		{ "armv8_pmuv3/inst_retired/", "armv8_pmuv3/inst_retired/", PMC_KIND_PMU, 8, 0x08 },
		{ "msr/tsc/", "msr/tsc/", PMC_KIND_PMU, 9, 0 },
	};
	struct pmc_event_spec s;
	struct pmc_error err;
	int ok;

	make_fixture();
	ok = ROWS(rows);
	if (ok) {
		pmc_event_parse("cpu/mem-loads/", &s, &err);
		ok = s.config == 0x1cd && s.config1 == 3 && s.uses_hw_counter;
		if (!ok)
			t_fail_at(__FILE__, __LINE__, "alias with config1 field: config 0x%" PRIx64
				  " config1 0x%" PRIx64, s.config, s.config1);
	}
	if (ok) {
		pmc_event_parse("msr/tsc/", &s, &err);
		ok = !s.uses_hw_counter && !strcmp(s.pmu, "msr");
		if (!ok)
			t_fail_at(__FILE__, __LINE__, "msr is not a core PMU");
	}
	drop_fixture();
}

T_CASE(pmu_form_errors)
{
	static const struct {
		const char *text;
		int code, position;
		const char *reason;
	} bad[] = {
		{ "nopmu/event=1/", PMC_E_NO_PMU, 0, "no PMU named \"nopmu\"" },
		{ "cpu/event=0xc4", PMC_E_SYNTAX, 14, "missing closing '/'" },
		{ "cpu/event=0x1ff/", PMC_E_BAD_FIELD, 10, "does not fit field \"event\"" },
		{ "cpu/foo=1/", PMC_E_BAD_FIELD, 4, "no format field or event named \"foo\"" },
		{ "cpu/event=zz/", PMC_E_SYNTAX, 10, "not a number" },
		{ "cpu//", PMC_E_SYNTAX, 4, "empty term list" },
		{ "cpu/event=1,,umask=1/", PMC_E_SYNTAX, 12, "empty term" },
		{ "cpu/event=1/q", PMC_E_SYNTAX, 12, "unknown modifier 'q'" },
		{ "cpu/needs-param/", PMC_E_SYNTAX, 4, "needs a value for \"umask\"" },
		{ "bad/event=1/", PMC_E_BAD_FIELD, 4, "cannot decode" },
		{ "c?u/event=1/", PMC_E_SYNTAX, 1, "cannot appear in a PMU name" },
	};
	int ok = 1;

	make_fixture();
	for (size_t i = 0; ok && i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmc_event_spec s;
		struct pmc_error err;
		int rc = pmc_event_parse(bad[i].text, &s, &err);

		if (rc != bad[i].code || err.position != bad[i].position ||
		    !strstr(err.message, bad[i].reason)) {
			t_fail_at(__FILE__, __LINE__,
				  "\"%s\": got code %d position %d message \"%s\"; expected code %d position %d reason \"%s\"",
				  bad[i].text, rc, err.position, err.message, bad[i].code,
				  bad[i].position, bad[i].reason);
			ok = 0;
		}
	}
	drop_fixture();
}

/* ---- libpfm4 ---------------------------------------------------------------- */

T_CASE(libpfm_names)
{
#if defined(__x86_64__)
	struct pmc_event_spec s;
	struct pmc_error err;
	int rc;

	/* libpfm4 encodes only PMUs it detects; force Sapphire Rapids so the
	 * Intel names resolve on any x86 host (the result is a pure encoding). */
	setenv("LIBPFM_FORCE_PMU", "spr", 1);
	rc = pmc_event_parse("INST_RETIRED:ANY_P", &s, &err);
	T_CHECK(rc == 0, "INST_RETIRED:ANY_P: %s", err.message);
	T_EQ_U64(s.kind, PMC_KIND_LIBPFM, "kind");
	T_EQ_U64(s.type, PERF_TYPE_RAW, "type");
	T_EQ_U64(s.config & 0xffff, 0x00c0, "event/umask of INST_RETIRED:ANY_P");
	T_EQ_STR(s.name, "spr::INST_RETIRED:ANY_P", "canonical");
	T_CHECK(s.uses_hw_counter, "libpfm raw events use a PMU counter");
	rc = pmc_event_parse("spr::BR_MISP_RETIRED:ALL_BRANCHES:u", &s, &err);
	T_CHECK(rc == 0, "spr::BR_MISP_RETIRED:ALL_BRANCHES:u: %s", err.message);
	T_EQ_U64(s.config & 0xffff, 0x00c5, "event/umask of BR_MISP_RETIRED:ALL_BRANCHES");
	T_CHECK(!s.exclude_user && s.exclude_kernel, ":u applied to a libpfm4 event");
	T_EQ_STR(s.name, "spr::BR_MISP_RETIRED:ALL_BRANCHES:u", "canonical");
	rc = pmc_event_parse("NOT_AN_EVENT:ANY", &s, &err);
	T_CHECK(rc == PMC_E_UNKNOWN_EVENT, "NOT_AN_EVENT:ANY -> %d", rc);
	rc = pmc_event_parse("INST_RETIRED:NO_SUCH_UMASK", &s, &err);
	T_CHECK(rc == PMC_E_UNKNOWN_EVENT && strstr(err.message, "libpfm4"),
		"bad umask -> %d %s", rc, err.message);
#else
	T_SKIP("the Intel PMU tables of libpfm4 are built only into x86 libpfm4");
#endif
}

/* Is an object whose name holds text mapped in this process? */
static int mapped(const char *text)
{
	char line[1024];
	int found = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, text) != NULL;
	fclose(f);
	return found;
}

/* libpfm4 is opened by the first name that reaches it, not at start-up:
 * a process counting generic, software or tracepoint events never maps it. */
T_CASE(libpfm_opened_only_when_named)
{
	static const char *const before[] = { "instructions", "task-clock:u", "branch-misses",
					      "L1-dcache-load-misses", "mem:0x1000/8:w", "r00c0" };
	struct pmc_event_spec s;
	struct pmc_error err;

#ifdef PMC_T_LIBPFM_LINKED
	T_SKIP("this build links a static libpfm4 in (a cross build's sysroot): nothing is opened");
#endif
	T_CHECK(mapped("libpfm") == 0, "libpfm4 mapped at start-up");
	for (size_t i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		T_CHECK(pmc_event_parse(before[i], &s, &err) == 0, "%s: %s", before[i], err.message);
		T_CHECK(mapped("libpfm") == 0, "libpfm4 mapped after %s", before[i]);
	}
#if defined(__x86_64__)
	setenv("LIBPFM_FORCE_PMU", "spr", 1);
	T_CHECK(pmc_event_parse("INST_RETIRED:ANY_P", &s, &err) == 0, "INST_RETIRED:ANY_P: %s", err.message);
	T_CHECK(mapped("libpfm") == 1, "libpfm4 not mapped after a libpfm4 name");
#else
	T_SKIP("generic names leave libpfm4 unmapped; the Intel PMU tables used to map it are built only into x86 libpfm4");
#endif
}

/* A libpfm4 that cannot be loaded (here: a file of its soname that is not
 * a library, found first through LD_LIBRARY_PATH): a libpfm4 name is an
 * unknown event whose message says why and what to install; generic
 * names still parse. */
T_CASE(libpfm_unloadable)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	char dir[] = "/tmp/pmcheck-nopfm.XXXXXX", path[4096], self[2048];
	ssize_t n;
	FILE *f;

#ifdef PMC_T_LIBPFM_LINKED
	T_SKIP("this build links a static libpfm4 in (a cross build's sysroot): nothing is loaded");
#endif
	if (getenv("PMC_T_NOPFM")) {
		T_CHECK(pmc_event_parse("instructions:u", &s, &err) == 0, "instructions:u: %s", err.message);
		T_CHECK(pmc_event_parse("INST_RETIRED:ANY_P", &s, &err) == PMC_E_UNKNOWN_EVENT,
			"INST_RETIRED:ANY_P parsed without libpfm4");
		T_CHECK(strstr(err.message, "INST_RETIRED:ANY_P") && strstr(err.message, "libpfm4 cannot be loaded") &&
				strstr(err.message, "install libpfm4"),
			"message names the event, the cause and the fix: %s", err.message);
		printf("%s\n", err.message);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_CHECK(n > 0 && mkdtemp(dir), "set-up");
	self[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, PMC_T_LIBPFM_SONAME);
	f = fopen(path, "w");
	T_CHECK(f && fputs("not a library\n", f) >= 0 && fclose(f) == 0, "write %s", path);
	setenv("LD_LIBRARY_PATH", dir, 1);
	setenv("PMC_T_NOPFM", "1", 1);
	snprintf(path, sizeof(path), "'%s' libpfm_unloadable", self);
	n = system(path);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	T_CHECK(system(path) == 0, "clean up");
	T_CHECK(n == 0, "the run without libpfm4 failed (%zd)", n);
}

/* ---- breakpoints ------------------------------------------------------------ */

long t_watched_global = 1;

T_CASE(breakpoint_forms)
{
	static const struct {
		const char *text, *canonical;
		uint64_t addr, len;
		uint32_t type;
	} rows[] = {
		{ "mem:0x1000", "mem:0x1000/4:rw", 0x1000, 4, HW_BREAKPOINT_RW },
		{ "mem:0x1000/8:w", "mem:0x1000/8:w", 0x1000, 8, HW_BREAKPOINT_W },
		{ "mem:4096/2:r", "mem:0x1000/2:r", 0x1000, 2, HW_BREAKPOINT_R },
		{ "mem:0x1000:rw", "mem:0x1000/4:rw", 0x1000, 4, HW_BREAKPOINT_RW },
		{ "mem:0x1000:wr", "mem:0x1000/4:rw", 0x1000, 4, HW_BREAKPOINT_RW },
		{ "mem:0x1001/1:w", "mem:0x1001/1:w", 0x1001, 1, HW_BREAKPOINT_W },
		{ "mem:0x1000:x", "mem:0x1000:x", 0x1000, sizeof(long), HW_BREAKPOINT_X },
		{ "mem:0x1000/8:w:u", "mem:0x1000/8:w:u", 0x1000, 8, HW_BREAKPOINT_W },
		{ "mem:0x1000:k", "mem:0x1000/4:rw:k", 0x1000, 4, HW_BREAKPOINT_RW },
		{ "mem:0x1003:x", "mem:0x1003:x", 0x1003, sizeof(long), HW_BREAKPOINT_X },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct pmc_event_spec s;
		struct pmc_error err;

		T_CHECK(pmc_event_parse(rows[i].text, &s, &err) == 0, "%s: %s", rows[i].text,
			err.message);
		T_EQ_STR(s.name, rows[i].canonical, rows[i].text);
		T_EQ_U64(s.kind, PMC_KIND_BREAKPOINT, rows[i].text);
		T_EQ_U64(s.type, PERF_TYPE_BREAKPOINT, rows[i].text);
		T_EQ_U64(s.bp_addr, rows[i].addr, rows[i].text);
		T_EQ_U64(s.bp_len, rows[i].len, rows[i].text);
		T_EQ_U64(s.bp_type, rows[i].type, rows[i].text);
	}
	{
		struct pmc_event_spec s;
		struct pmc_error err;

		T_CHECK(pmc_event_parse("mem:t_watched_global/8:w", &s, &err) == 0, "%s",
			err.message);
		T_EQ_U64(s.bp_addr, (uintptr_t)&t_watched_global, "address of a symbol");
		T_EQ_STR(s.name, "mem:t_watched_global/8:w", "symbolic canonical name");
		T_CHECK(pmc_event_breakpoint(&s, &t_watched_global, sizeof(long), PMC_BP_W, &err) == 0,
			"%s", err.message);
		T_EQ_U64(s.bp_addr, (uintptr_t)&t_watched_global, "API form address");
		T_EQ_U64(s.bp_type, HW_BREAKPOINT_W, "API form type");
		T_CHECK(pmc_event_breakpoint(&s, (char *)&t_watched_global + 1, 4, PMC_BP_R, &err) ==
				-EINVAL && strstr(err.message, "aligned"),
			"misaligned API breakpoint: %s", err.message);
		T_CHECK(pmc_event_breakpoint(&s, &t_watched_global, 3, PMC_BP_R, &err) == -EINVAL,
			"length 3 accepted");
		T_CHECK(pmc_event_breakpoint(&s, &t_watched_global, 4, 9, &err) == -EINVAL,
			"access 9 accepted");
	}
}

T_CASE(breakpoint_errors)
{
	static const struct {
		const char *text;
		int code, position;
		const char *reason;
	} bad[] = {
		{ "mem:", PMC_E_SYNTAX, 4, "address or symbol" },
		{ "mem:0x1001/4", PMC_E_SYNTAX, 4, "not aligned" },
		{ "mem:0x1000/3", PMC_E_SYNTAX, 11, "1, 2, 4 or 8" },
		{ "mem:0x1000:rwx", PMC_E_SYNTAX, 11, "x cannot combine" },
		{ "mem:0x1000/2:x", PMC_E_SYNTAX, 11, "execute breakpoint" },
		{ "mem:0x1000:w:q", PMC_E_SYNTAX, 13, "unknown modifier 'q'" },
		{ "mem:0x1000:w:", PMC_E_SYNTAX, 13, "expected modifiers" },
		{ "mem:zz_no_such_symbol", PMC_E_NO_SYMBOL, 4, "zz_no_such_symbol" },
		{ "mem:0xZZ", PMC_E_SYNTAX, 4, "not a number" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmc_event_spec s;
		struct pmc_error err;
		int rc = pmc_event_parse(bad[i].text, &s, &err);

		T_CHECK(rc == bad[i].code && err.position == bad[i].position &&
				strstr(err.message, bad[i].reason),
			"\"%s\": got code %d position %d message \"%s\"; expected code %d position %d reason \"%s\"",
			bad[i].text, rc, err.position, err.message, bad[i].code, bad[i].position,
			bad[i].reason);
	}
}

/* ---- calls: ---------------------------------------------------------------- */

PMC__NOIPA int t_probe_target(int x)
{
	return x * 3 + 1;
}

T_CASE(calls_forms)
{
	struct pmc_event_spec s;
	struct pmc_error err;
	char exe[PMC_EVENT_PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	T_CHECK(n > 0, "readlink /proc/self/exe");
	exe[n] = '\0';
	T_CHECK(pmc_event_parse("calls:t_probe_target", &s, &err) == 0, "%s", err.message);
	T_EQ_U64(s.kind, PMC_KIND_UPROBE, "kind");
	T_EQ_STR(s.path, exe, "object of a function in the program");
	T_CHECK(s.probe_offset > 0, "file offset of t_probe_target is 0");
	T_EQ_STR(s.name, "calls:t_probe_target", "canonical");
	T_CHECK(pmc_event_parse("calls:malloc", &s, &err) == 0, "%s", err.message);
	/* The first object in load order that defines malloc is the one the
	 * dynamic linker binds calls to: libc, or the ASan runtime under ASan. */
#ifdef T_ASAN
	T_CHECK(strstr(s.path, "libasan") != NULL, "malloc resolved to %s, expected libasan", s.path);
#else
	T_CHECK(strstr(s.path, "/libc.so") != NULL, "malloc resolved to %s, expected libc", s.path);
#endif
	T_CHECK(pmc_event_parse("calls:malloc@libc.so", &s, &err) == 0, "%s", err.message);
	T_CHECK(strstr(s.path, "/libc.so") != NULL, "@libc.so restricts the search: %s", s.path);
	T_EQ_STR(s.name, "calls:malloc@libc.so", "canonical with object");
	/* memcpy is an IFUNC in glibc: the resolved implementation is probed. */
	T_CHECK(pmc_event_parse("calls:memcpy", &s, &err) == 0, "%s", err.message);
	{
		/* Independent check: the object the dynamic linker bound memcpy to. */
		Dl_info info;
		void *impl = dlsym(RTLD_DEFAULT, "memcpy");

		T_CHECK(impl && dladdr(impl, &info) && info.dli_fname, "dladdr(memcpy)");
		T_EQ_STR(s.path, info.dli_fname, "object of memcpy's implementation");
	}

	T_CHECK(pmc_event_parse("calls:zz_no_such_function", &s, &err) == PMC_E_NO_SYMBOL,
		"missing symbol accepted");
	T_CHECK(strstr(err.message, "zz_no_such_function") && err.position == 6,
		"message/position: %d %s", err.position, err.message);
	T_CHECK(pmc_event_parse("calls:malloc@zz_no_object", &s, &err) == PMC_E_NO_SYMBOL,
		"malloc@zz_no_object accepted");
	T_CHECK(pmc_event_parse("calls:", &s, &err) == PMC_E_SYNTAX, "calls: accepted");
	T_CHECK(pmc_event_parse("calls:1abc", &s, &err) == PMC_E_SYNTAX, "calls:1abc accepted");
	T_CHECK(pmc_event_parse("calls:malloc@", &s, &err) == PMC_E_SYNTAX, "calls:malloc@");
	T_EQ_U64(t_probe_target(1), 4, "target works");

	/* Deferred: the kind and the name now, whether or not the function
	 * can be found; the object and the offset from pmc_event_resolve. */
	{
		struct pmc_event_spec d[3];
		struct pmc_counters *set = NULL;
		uint64_t offset = 0;
		size_t nd = 0;

		T_CHECK(pmc_event_parse("calls:t_probe_target", &s, &err) == 0, "%s", err.message);
		offset = s.probe_offset;
		T_CHECK(pmc_event_parse_list_flags("calls:zz_not_yet@libzz_not_loaded.so,calls:t_probe_target,instructions",
						   PMC_PARSE_DEFER_SYMBOLS, d, 3, &nd, &err) == 0,
			"deferred list refused: %s", err.message);
		T_EQ_U64(nd, 3, "deferred list length");
		T_EQ_U64(d[0].kind, PMC_KIND_UPROBE, "deferred kind");
		T_EQ_STR(d[0].name, "calls:zz_not_yet@libzz_not_loaded.so", "deferred canonical name");
		T_EQ_STR(d[0].path, "", "deferred: no object yet");
		T_CHECK(pmc_counters_open(&set, d, 2, 0, &err) == -EINVAL && set == NULL &&
				strstr(err.message, "pmc_event_resolve"),
			"an unresolved spec opened: %s", err.message);
		T_CHECK(pmc_event_resolve(&d[1], &err) == 0, "%s", err.message);
		T_EQ_STR(d[1].path, exe, "resolved object");
		T_EQ_U64(d[1].probe_offset, offset, "resolved offset as parsing finds it");
		T_CHECK(pmc_event_resolve(&d[2], &err) == 0, "another kind is left as it is: %s",
			err.message);
		T_CHECK(pmc_event_resolve(&d[0], &err) == PMC_E_NO_SYMBOL && err.position == 6 &&
				strstr(err.message, "\"calls:zz_not_yet@libzz_not_loaded.so\", at position 6: ") &&
				strstr(err.message, "symbol \"zz_not_yet\" is not defined") &&
				strstr(err.message, "nm -D"),
			"unresolvable, at the function's name: %d %s", err.position, err.message);
		T_CHECK(pmc_event_parse_list_flags("instructions", 0x80, d, 3, &nd, &err) == -EINVAL &&
				strstr(err.message, "0x80"),
			"unknown flag: %s", err.message);
		/* A clone's name is refused by its form, deferred or not. */
		T_CHECK(pmc_event_parse_list_flags("calls:zz_f.cold", PMC_PARSE_DEFER_SYMBOLS, d, 3,
						   &nd, &err) == PMC_E_NO_SYMBOL &&
				strstr(err.message, "count the function itself: calls:zz_f"),
			"clone deferred: %s", err.message);
	}
	/* A library not loaded, named as the dynamic linker finds it: the
	 * file in its search path answers (libz is dlopen()ed by no one here). */
	if (access("/lib/x86_64-linux-gnu/libz.so.1", R_OK) == 0 ||
	    access("/usr/lib/x86_64-linux-gnu/libz.so.1", R_OK) == 0 ||
	    access("/lib/aarch64-linux-gnu/libz.so.1", R_OK) == 0 ||
	    access("/usr/lib/aarch64-linux-gnu/libz.so.1", R_OK) == 0) {
		T_CHECK(dlopen("libz.so.1", RTLD_LAZY | RTLD_NOLOAD) == NULL, "libz is loaded already");
		T_CHECK(pmc_event_parse("calls:crc32@libz.so.1", &s, &err) == 0, "%s", err.message);
		T_CHECK(strstr(s.path, "/libz.so.1") && s.probe_offset > 0, "crc32@libz.so.1: %s %llu",
			s.path, (unsigned long long)s.probe_offset);
	}
}

T_CASE(lists)
{
	struct pmc_event_spec s[8];
	struct pmc_error err;
	size_t n = 0;
	int rc;

	make_fixture();
	rc = pmc_event_parse_list("instructions:u,cpu/event=0xc4,umask=0x11/,mem:0x1000/8:w,"
				  "calls:t_probe_target,task-clock",
				  s, 8, &n, &err);
	drop_fixture();
	T_CHECK(rc == 0, "%s", err.message);
	T_EQ_U64(n, 5, "events in list");
	T_EQ_STR(s[0].name, "instructions:u", "0");
	T_EQ_STR(s[1].name, "cpu/event=0xc4,umask=0x11/", "1");
	T_EQ_STR(s[2].name, "mem:0x1000/8:w", "2");
	T_EQ_STR(s[3].name, "calls:t_probe_target", "3");
	T_EQ_STR(s[4].name, "task-clock", "4");
	rc = pmc_event_parse_list("cycles,bogus-event,task-clock", s, 8, &n, &err);
	T_CHECK(rc == PMC_E_UNKNOWN_EVENT && err.position == 7,
		"error position in a list: rc %d position %d", rc, err.position);
	rc = pmc_event_parse_list("cycles,task-clock:uu", s, 8, &n, &err);
	T_CHECK(rc == PMC_E_SYNTAX && err.position == 19, "modifier position in list: %d",
		err.position);
	rc = pmc_event_parse_list("cycles,,task-clock", s, 8, &n, &err);
	T_CHECK(rc == PMC_E_SYNTAX && err.position == 7, "empty element: %d", err.position);
	rc = pmc_event_parse_list("cycles,cycles,cycles", s, 2, &n, &err);
	T_CHECK(rc == PMC_E_TOO_MANY, "over max: %d", rc);
}

T_CASE(strerror_table)
{
	T_EQ_STR(pmc_strerror(0), "success", "0");
	T_EQ_STR(pmc_strerror(PMC_E_NO_HW_PMU), "no hardware PMU on this machine", "NO_HW_PMU");
	T_EQ_STR(pmc_strerror(-ENOENT), strerror(ENOENT), "-ENOENT");
	T_EQ_STR(pmc_strerror(-99999), "unknown pmcheck error code", "unknown");
	for (int c = PMC_E_TOO_LONG; c <= PMC_E_SYNTAX; c++)
		T_CHECK(strcmp(pmc_strerror(c), "unknown pmcheck error code") != 0,
			"code %d has no text", c);
}

/* The error list: every code has its name, its text, and its class. */
T_CASE(error_table)
{
#define CHECK_CODE(name, value, capability, text)                                         \
	T_CHECK(strcmp(pmc_error_name(name), #name) == 0, "name of %d", value);            \
	T_CHECK(strcmp(pmc_strerror(name), text) == 0, "text of " #name);                 \
	T_EQ_U64((uint64_t)pmc_error_is_capability(name), capability, "class of " #name);
	PMC_ERRORS(CHECK_CODE)
#undef CHECK_CODE
	T_CHECK(strcmp(pmc_error_name(-ENOENT), "ENOENT") == 0, "errno names");
	T_CHECK(pmc_error_is_capability(-ENOENT) && pmc_error_is_capability(-EACCES) &&
			pmc_error_is_capability(-EPERM) && pmc_error_is_capability(-EOPNOTSUPP),
		"the kernel's refusals for a missing event, PMU or privilege");
	T_CHECK(!pmc_error_is_capability(-EINVAL) && !pmc_error_is_capability(0) &&
			!pmc_error_is_capability(PMC_E_SYNTAX),
		"a wrong request is not the machine's limit");
	T_CHECK(pmc_error_name(-20000) == NULL, "an unknown code has no name");
	T_CHECK(strcmp(pmc_strerror(-20000), "unknown pmcheck error code") == 0, "unknown code text");
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
