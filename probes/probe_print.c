/* SPDX-License-Identifier: MIT */
/* The probe record as the table `pmcheck probe` prints. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifdef PMCHECK_HAVE_LIBCPUID
#include <libcpuid/libcpuid.h>
#endif

#include <pmcheck/pmcheck.h>

#include "probe.h"
#include "probe_int.h"
#include "util/child.h"
#include "util/util_int.h"

/* ---- the table ---------------------------------------------------------------- */

static const char *str_at(const json_t *rec, const char *path)
{
	json_t *v = json_object_get(rec, path);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

static const json_t *value_of(const json_t *obj, const char *key)
{
	const json_t *f = json_object_get(obj, key);

	return json_is_object(f) && json_object_get(f, "value") ? json_object_get(f, "value") : f;
}

static const char *how_of(const json_t *obj, const char *key)
{
	const json_t *f = json_object_get(obj, key);

	return f ? str_at(f, "how") : NULL;
}

void pmc_probe_print(const json_t *rec, FILE *out)
{
	const json_t *cpu = json_object_get(rec, "cpu"), *k = json_object_get(rec, "kernel");
	const json_t *hw = json_object_get(rec, "hardware"), *bp = json_object_get(rec, "breakpoints");
	const json_t *tools = json_object_get(rec, "tools"), *sw = json_object_get(rec, "software");
	const json_t *pmus = json_object_get(json_object_get(rec, "pmus"), "list"), *v;
	const char *s;
	int have_cpu_pmu = 0;
	size_t i;

	fprintf(out, "pmcheck probe: what this machine can measure\n");
	fprintf(out, "  %-13s %s", "CPU", (s = json_string_value(value_of(cpu, "signature"))) ? s : "unknown");
	if ((s = json_string_value(value_of(cpu, "brand"))))
		fprintf(out, "  %s", s);
	if ((s = json_string_value(value_of(cpu, "libcpuid_says"))))
		fprintf(out, "  (libcpuid says: %s)", s);
	v = value_of(cpu, "hypervisor");
	fprintf(out, "%s\n", json_is_true(v) ? "  [under a hypervisor]" : "");
	fprintf(out, "  %-13s %s  perf_event_paranoid=%" JSON_INTEGER_FORMAT, "Kernel",
		(s = json_string_value(value_of(k, "release"))) ? s : "?",
		json_integer_value(value_of(k, "perf_event_paranoid")));
	if (json_is_integer(value_of(k, "perf_user_access")))
		fprintf(out, "  perf_user_access=%" JSON_INTEGER_FORMAT,
			json_integer_value(value_of(k, "perf_user_access")));
	if (json_is_integer(value_of(k, "rdpmc")))
		fprintf(out, "  rdpmc=%" JSON_INTEGER_FORMAT, json_integer_value(value_of(k, "rdpmc")));
	if (json_is_integer(value_of(k, "nmi_watchdog")))
		fprintf(out, "  nmi_watchdog=%" JSON_INTEGER_FORMAT,
			json_integer_value(value_of(k, "nmi_watchdog")));
	fprintf(out, "\n  %-13s", "PMUs");
	json_array_foreach(pmus, i, v) {
		const char *name = str_at(v, "name");

		fprintf(out, " %s(%" JSON_INTEGER_FORMAT ")", name,
			json_integer_value(json_object_get(v, "type")));
		if (name && (!strcmp(name, "cpu") || !strncmp(name, "cpu_", 4) ||
			     !strncmp(name, "armv8", 5)))
			have_cpu_pmu = 1;
	}
	fprintf(out, "\n");
	v = json_object_get(json_object_get(rec, "pmus"), "core");
	if (json_array_size(v) > 0) {
		const json_t *c;

		fprintf(out, "  %-13s", "Core PMUs");
		json_array_foreach(v, i, c)
			fprintf(out, " %s (CPUs %s)", str_at(c, "name"),
				str_at(c, "cpus") && *str_at(c, "cpus") ? str_at(c, "cpus") : "all");
		fprintf(out, "%s\n", json_array_size(v) > 1
					    ? "; hybrid: generic events are opened on each core PMU and summed, read with read(2)"
					    : "");
	}
	if (json_is_true(value_of(hw, "available"))) {
		const json_t *ur = json_object_get(hw, "user_read");

		fprintf(out, "  %-13s available; %" JSON_INTEGER_FORMAT " general counters schedule together\n",
			"Hardware PMU", json_integer_value(value_of(hw, "general_counters")));
		fprintf(out, "  %-13s %s (user %" JSON_INTEGER_FORMAT ", read(2) %" JSON_INTEGER_FORMAT
			" instructions for a 100000-iteration loop)\n", "User reads",
			json_is_true(json_object_get(ur, "works")) ? "work" : "do NOT work",
			json_integer_value(json_object_get(ur, "user_value")),
			json_integer_value(json_object_get(ur, "read_value")));
	} else {
		if (have_cpu_pmu)
			fprintf(out, "  %-13s NONE: %s\n", "Hardware PMU",
				(s = how_of(hw, "available")) ? s : "?");
		else
			fprintf(out, "  %-13s NONE: no CPU PMU in %s; hardware and cache events fail with ENOENT (use --backend=sim)\n",
				"Hardware PMU", pmc_event_sysfs_root());
	}
	if (json_is_object(cpu) && json_object_get(cpu, "counters")) {
		const json_t *c = json_object_get(cpu, "counters");

		fprintf(out, "  %-13s CPUID reports %" JSON_INTEGER_FORMAT " general (%" JSON_INTEGER_FORMAT
			" bits) and %" JSON_INTEGER_FORMAT " fixed counters%s\n", "Counters",
			json_integer_value(json_object_get(c, "general")),
			json_integer_value(json_object_get(c, "general_width")),
			json_integer_value(json_object_get(c, "fixed")),
			have_cpu_pmu ? "" : " (not exposed by this kernel/hypervisor)");
	}
	{
		size_t all = json_array_size(json_object_get(sw, "available")),
		       user = json_array_size(json_object_get(sw, "user_only")),
		       none = json_object_size(json_object_get(sw, "unavailable"));
		const char *first = NULL, *name;
		json_t *why;

		json_object_foreach(json_object_get(sw, "unavailable"), name, why)
			if (!first)
				first = json_string_value(why);
		fprintf(out, "  %-13s %s: %zu of %zu software events open", "Software",
			all + user ? "available" : "UNAVAILABLE", all + user, all + user + none);
		if (user)
			fprintf(out, ", %zu of them for user space only (:u): counting the kernel is refused (perf_event_paranoid=%" JSON_INTEGER_FORMAT "; root or CAP_PERFMON lifts it)",
				user, json_integer_value(value_of(k, "perf_event_paranoid")));
		fprintf(out, "\n");
		if (none && first)
			fprintf(out, "  %-13s %s\n", "", first);
	}
	if (json_is_true(json_object_get(bp, "available")))
		fprintf(out, "  %-13s available: %" JSON_INTEGER_FORMAT " slots%s; %s\n", "Breakpoints",
			json_integer_value(json_object_get(bp, "slots")),
			json_is_true(json_object_get(bp, "user_only"))
				? ", user-space accesses only (:u): watching the kernel's is refused to this user"
				: "",
			(s = str_at(bp, "how")) ? s : "?");
	else if ((s = str_at(bp, "status")) && !strcmp(s, pmc_kind_status_name(PMC_KIND_NOT_COUNTING)))
		fprintf(out, "  %-13s OPEN BUT DO NOT COUNT (%" JSON_INTEGER_FORMAT " slots): %s\n",
			"Breakpoints", json_integer_value(json_object_get(bp, "slots")),
			(s = str_at(bp, "how")) ? s : "?");
	else
		fprintf(out, "  %-13s UNAVAILABLE: %s\n", "Breakpoints",
			(s = str_at(bp, "how")) ? s : (s = str_at(bp, "error")) ? s : "?");
	v = json_object_get(rec, "uprobes");
	fprintf(out, "  %-13s %s: %s\n", "uprobes", json_is_true(value_of(rec, "uprobes")) ? "available" : "UNAVAILABLE",
		(s = str_at(v, "how")) ? s : (s = str_at(v, "error")) ? s : "?");
	v = json_object_get(rec, "kprobes");
	fprintf(out, "  %-13s %s: %s\n", "kprobes", json_is_true(value_of(rec, "kprobes")) ? "available" : "unavailable",
		(s = str_at(v, "how")) ? s : "?");
	v = json_object_get(rec, "tracepoints");
	fprintf(out, "  %-13s %s: %s\n", "Tracepoints",
		json_is_true(json_object_get(v, "available")) ? "available" : "UNAVAILABLE",
		(s = str_at(v, "how")) ? s : (s = str_at(v, "error")) ? s : "?");
	fprintf(out, "  %-13s %s (%s)\n", "sim backend",
		json_is_true(value_of(tools, "sim_backend")) ? "available" : "UNAVAILABLE",
		(s = json_string_value(value_of(tools, "valgrind"))) ? s : (s = how_of(tools, "sim_backend")) ? s : "?");
	if (json_is_true(value_of(tools, "sim_backend"))) {
		const char *engine = json_string_value(value_of(tools, "sim_engine"));
		const char *how = how_of(tools, "sim_engine");

		fprintf(out, "  %-13s %s: %s\n", "sim engine",
			engine ? engine : "none", how ? how : "?");
	}
	fprintf(out, "  %-13s %s\n", "QEMU lane",
		(s = json_string_value(value_of(tools, "qemu_system_aarch64"))) ? s
		: (s = how_of(tools, "qemu_system_aarch64")) ? s : "?");
	/* Every kind a verdict may rest on, checked on known work. */
	v = json_object_get(rec, "kinds");
	if (json_is_object(v) && !str_at(v, "error")) {
		fprintf(out, "  Checked on known work (a verdict rests only on what is available):\n");
		pmc_probe_print_kinds(v, out);
	}
	/* Probes that failed outright. */
	{
		const char *key;
		json_t *val;

		json_object_foreach((json_t *)rec, key, val)
			if (json_is_object(val) && (s = str_at(val, "error")))
				fprintf(out, "  probe %s: %s\n", key, s);
	}
}

void pmc_probe_print_kinds(const json_t *kinds, FILE *out)
{
	const char *key;
	json_t *k;

	json_object_foreach((json_t *)kinds, key, k) {
		const char *status = str_at(k, "status"), *how = str_at(k, "how");

		fprintf(out, "    %-17s %s: %s\n", key, status ? status : "?", how ? how : "?");
	}
}
