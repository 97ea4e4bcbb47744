/* SPDX-License-Identifier: MIT */
/*
 * The probes behind `pmcheck probe`.  Each probe_* function fills one JSON
 * object and runs in a forked child (see run_isolated); facts carry a "how"
 * string naming the file, instruction or experiment they come from.
 */
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
#include "util/child.h"
#include "util/util_int.h"


/* ---- small helpers ------------------------------------------------------ */

/* {"value": v, "how": how} */
static json_t *fact(json_t *value, const char *how)
{
	return json_pack("{s:o, s:s}", "value", value ? value : json_null(), "how", how);
}

static json_t *file_int_fact(const char *path)
{
	char buf[64], how[256];

	snprintf(how, sizeof(how), "read %s", path);
	if (pmc__read_text(path, buf, sizeof(buf)) < 0) {
		snprintf(how, sizeof(how), "%s: %s", path, strerror(errno));
		return fact(json_null(), how);
	}
	return fact(json_integer(strtoll(buf, NULL, 0)), how);
}

/* Run `argv` with a time limit, capture the first line of its output.
 * -ENOENT when the tool is not installed. */
static int run_tool(char *const argv[], char *line, size_t size, unsigned timeout_s)
{
	struct pmc__child c;
	int rc = pmc__child_spawn(&c, argv, NULL, true, 0);

	line[0] = '\0';
	if (rc)
		return rc;
	pmc__child_read(&c, line, size, pmc__child_now() + timeout_s);
	line[strcspn(line, "\n")] = '\0';
	pmc__child_kill(&c);
	return 0;
}

/* ---- CPU identity ------------------------------------------------------------- */

static json_t *probe_cpu(void)
{
	json_t *o = json_object();
	struct pmc_cpu_id id;
	int known;

	pmc_cpu_identify(&id);
	known = strcmp(id.signature, "unknown") != 0;
	json_object_set_new(o, "signature",
			    fact(known ? json_string(id.signature) : json_null(), id.how));
	json_object_set_new(o, "vendor", fact(json_string(id.vendor), id.how));
	json_object_set_new(o, "hypervisor",
			    fact(id.hypervisor < 0 ? json_null() : json_boolean(id.hypervisor),
				 id.hypervisor < 0 ? "not determinable from EL0 on arm64"
						   : "CPUID leaf 1 ECX bit 31"));
	if (id.brand[0])
		json_object_set_new(o, "brand", fact(json_string(id.brand),
						     "CPUID leaves 0x80000002-4"));
	if (known) {
		json_object_set_new(o, "family", json_integer(id.family));
		json_object_set_new(o, "model", json_integer(id.model));
		json_object_set_new(o, "stepping", json_integer(id.stepping));
	}
	if (id.midr)
		json_object_set_new(o, "midr", json_integer((json_int_t)id.midr));
#ifdef PMCHECK_HAVE_LIBCPUID
	{
		static const char *const purposes[] = { "general", "performance", "efficiency" };
		struct cpu_raw_data_t raw;
		struct cpu_id_t cpu;
		uint32_t regs[4];

		if (!cpuid_present() || cpuid_get_raw_data(&raw) != 0 ||
		    cpu_identify(&raw, &cpu) != 0)
			return o;
		json_object_set_new(o, "core_type",
				    fact(json_string((unsigned)cpu.purpose < 3 ? purposes[cpu.purpose]
									  : "unknown"),
					 "libcpuid purpose (hybrid CPUs: performance/efficiency)"));
		json_object_set_new(o, "libcpuid_says",
				    fact(json_string(cpu.cpu_codename),
					 "libcpuid codename table; informational, never a key"));
		/* Architectural counters: Intel leaf 0xA; AMD 0x80000022. */
		if (!strcmp(cpu.vendor_str, "GenuineIntel")) {
			cpu_exec_cpuid(0xa, regs);
			json_object_set_new(o, "counters",
				json_pack("{s:i, s:i, s:i, s:i, s:i, s:s}",
					  "version", regs[0] & 0xff, "general", (regs[0] >> 8) & 0xff,
					  "general_width", (regs[0] >> 16) & 0xff,
					  "fixed", regs[3] & 0x1f, "fixed_width", (regs[3] >> 5) & 0xff,
					  "how", "CPUID leaf 0xA"));
		} else if (!strcmp(cpu.vendor_str, "AuthenticAMD") ||
			   !strcmp(cpu.vendor_str, "HygonGenuine")) {
			uint32_t ext[4];

			cpu_exec_cpuid(0x80000000, ext);
			cpu_exec_cpuid(0x80000001, regs);
			if (ext[0] >= 0x80000022) {
				uint32_t pm[4];

				cpu_exec_cpuid(0x80000022, pm);
				json_object_set_new(o, "counters",
					json_pack("{s:i, s:i, s:i, s:s}", "general", pm[1] & 0xf,
						  "general_width", 48, "fixed", 0, "how",
						  "CPUID 0x80000022 EBX[3:0]; AMD counters are 48 bits wide"));
			} else {
				json_object_set_new(o, "counters",
					json_pack("{s:i, s:i, s:i, s:s}", "general",
						  (regs[2] >> 23) & 1 ? 6 : 4, "general_width", 48,
						  "fixed", 0, "how",
						  "CPUID 0x80000001 ECX bit 23 (PerfCtrExtCore: 6, else 4)"));
			}
		}
	}
#endif
	return o;
}

/* ---- kernel ---------------------------------------------------------------- */

static json_t *probe_kernel(void)
{
	json_t *o = json_object();
	struct utsname u;
	char path[1100];

	if (uname(&u) == 0) {
		json_object_set_new(o, "release", fact(json_string(u.release), "uname(2)"));
		json_object_set_new(o, "version", fact(json_string(u.version), "uname(2)"));
		json_object_set_new(o, "machine", fact(json_string(u.machine), "uname(2)"));
	}
	json_object_set_new(o, "perf_event_paranoid",
			    file_int_fact("/proc/sys/kernel/perf_event_paranoid"));
	json_object_set_new(o, "perf_user_access", file_int_fact("/proc/sys/kernel/perf_user_access"));
	snprintf(path, sizeof(path), "%s/cpu/rdpmc", pmc_event_sysfs_root());
	json_object_set_new(o, "rdpmc", file_int_fact(path));
	json_object_set_new(o, "nmi_watchdog", file_int_fact("/proc/sys/kernel/nmi_watchdog"));
	json_object_set_new(o, "perf_event_max_sample_rate",
			    file_int_fact("/proc/sys/kernel/perf_event_max_sample_rate"));
	json_object_set_new(o, "root", fact(json_boolean(geteuid() == 0), "geteuid()"));
	return o;
}

/* ---- PMUs -------------------------------------------------------------------- */

static json_t *dir_files(const char *dir, int with_content)
{
	json_t *o = with_content ? json_object() : json_array();
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char path[1024], buf[256];

		if (e->d_name[0] == '.')
			continue;
		if (!with_content) {
			json_array_append_new(o, json_string(e->d_name));
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (pmc__read_text(path, buf, sizeof(buf)) >= 0)
			json_object_set_new(o, e->d_name, json_string(buf));
	}
	if (d)
		closedir(d);
	return o;
}

/* The core PMUs (one per core type): several make a hybrid CPU, where a
 * generic event is opened on each and summed. */
static json_t *probe_core_pmus(void)
{
	struct pmc_core_pmu core[8];
	size_t n = pmc_machine_core_pmus(core, 8);
	json_t *arr = json_array();

	for (size_t i = 0; i < n && i < 8; i++)
		json_array_append_new(arr, json_pack("{s:s, s:i, s:s}", "name", core[i].name,
						     "type", (json_int_t)core[i].type, "cpus",
						     core[i].cpus));
	return arr;
}

static json_t *probe_pmus(void)
{
	json_t *arr = json_array();
	DIR *d = opendir(pmc_event_sysfs_root());
	struct dirent *e;
	char how[1200];

	while (d && (e = readdir(d))) {
		char path[1024], buf[256];
		json_t *p;

		if (e->d_name[0] == '.')
			continue;
		p = json_object();
		json_object_set_new(p, "name", json_string(e->d_name));
		snprintf(path, sizeof(path), "%s/%s/type", pmc_event_sysfs_root(), e->d_name);
		json_object_set_new(p, "type", pmc__read_text(path, buf, sizeof(buf)) > 0
						       ? json_integer(strtoll(buf, NULL, 0))
						       : json_null());
		snprintf(path, sizeof(path), "%s/%s/format", pmc_event_sysfs_root(), e->d_name);
		json_object_set_new(p, "format", dir_files(path, 1));
		snprintf(path, sizeof(path), "%s/%s/events", pmc_event_sysfs_root(), e->d_name);
		json_object_set_new(p, "events", dir_files(path, 0));
		snprintf(path, sizeof(path), "%s/%s/cpumask", pmc_event_sysfs_root(), e->d_name);
		json_object_set_new(p, "cpumask", pmc__read_text(path, buf, sizeof(buf)) >= 0
							  ? json_string(buf) : json_null());
		json_array_append_new(arr, p);
	}
	if (d)
		closedir(d);
	snprintf(how, sizeof(how), "listed %s; core PMUs: \"cpu\" or a PMU with a cpus file",
		 pmc_event_sysfs_root());
	return json_pack("{s:o, s:o, s:s}", "list", arr, "core", probe_core_pmus(), "how", how);
}

/* ---- counting experiments ------------------------------------------------------ */

/* Open a parsed list; on failure put the library's message in *why. */
static struct pmc_counters *try_open(const char *events, unsigned flags, char *why, size_t size)
{
	struct pmc_event_spec specs[PMC_MAX_EVENTS];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	size_t n;

	if (pmc_event_parse_list(events, specs, PMC_MAX_EVENTS, &n, &err) ||
	    pmc_counters_open(&set, specs, n, flags, &err)) {
		snprintf(why, size, "%s", err.message);
		return NULL;
	}
	pmc_counters_enable(set);
	return set;
}

static __attribute__((noipa)) void probe_loop(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

static json_t *probe_hardware(void)
{
	json_t *o = json_object();
	char why[PMC_ERROR_MSG_MAX], events[512];
	struct pmc_counters *set, *plain;
	size_t general = 0;

	set = try_open("instructions:u", 0, why, sizeof(why));
	json_object_set_new(o, "available", fact(json_boolean(set != NULL),
						 set ? "opened instructions:u" : why));
	if (!set)
		return o;
	/* User-space reads: the same loop through the user page and read(2). */
	plain = try_open("instructions:u", PMC_OPEN_NO_USER_READ, why, sizeof(why));
	if (plain) {
		struct pmc_reading a1, a2, b1, b2;
		struct pmc_measurement mu, mr;
		int user = pmc_counters_path(set) == PMC_PATH_USER;

		pmc_counters_read(set, &a1);
		pmc_counters_read(plain, &b1);
		probe_loop(100000);
		pmc_counters_read(plain, &b2);
		pmc_counters_read(set, &a2);
		pmc_measurement_from(&mu, &a1, &a2);
		pmc_measurement_from(&mr, &b1, &b2);
		json_object_set_new(o, "user_read",
			json_pack("{s:b, s:I, s:I, s:i, s:s}", "works",
				  user && mu.d[0].value >= mr.d[0].value && mr.d[0].value >= 100000,
				  "user_value", (json_int_t)mu.d[0].value, "read_value",
				  (json_int_t)mr.d[0].value, "loop", 100000, "how",
				  user ? "user page + rdpmc/mrs around read(2) of a second counter, same 100000-iteration loop"
				       : "the kernel did not grant user-space reads (cap_user_rdpmc 0); read(2) only"));
		pmc_counters_close(plain);
	}
	pmc_counters_close(set);
	/* General counters: the largest group of instructions events the PMU
	 * schedules as one group (the cycle counter does not take them). */
	events[0] = '\0';
	for (size_t n = 1; n <= 16; n++) {
		strcat(events, n > 1 ? ",instructions:u" : "instructions:u");
		set = try_open(events, 0, why, sizeof(why));
		if (!set)
			break;
		if (pmc_counters_groups(set) != 1) {
			pmc_counters_close(set);
			break;
		}
		pmc_counters_close(set);
		general = n;
	}
	json_object_set_new(o, "general_counters",
			    fact(json_integer((json_int_t)general),
				 "largest group of instructions:u events scheduled together"));
	return o;
}

static volatile long bp_vars[16];

static json_t *probe_breakpoints(void)
{
	struct pmc_event_spec s[16];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	size_t slots = 0;
	int rc = 0;

	int user_only = 0;

	for (size_t i = 0; i < 16; i++)
		pmc_event_breakpoint(&s[i], (const void *)&bp_vars[i], sizeof(long), PMC_BP_W, &err);
	/* Not permitted to watch kernel accesses: user space alone (:u)? */
	if (pmc_counters_open(&set, s, 1, 0, &err) == PMC_E_PRIVILEGE) {
		for (size_t i = 0; i < 16; i++)
			s[i].exclude_kernel = s[i].exclude_hv = 1;
		user_only = 1;
	}
	pmc_counters_close(set);
	set = NULL;
	for (size_t n = 1; n <= 16; n++) {
		rc = pmc_counters_open(&set, s, n, 0, &err);
		if (rc)
			break;
		if (n == 1) {
			struct pmc_reading a, b;

			pmc_counters_enable(set);
			pmc_counters_read(set, &a);
			for (int k = 0; k < 1000; k++)
				bp_vars[0] = k;
			pmc_counters_read(set, &b);
			if (b.c[0].value - a.c[0].value != 1000) {
				pmc_counters_close(set);
				return json_pack("{s:b, s:i, s:s}", "available", 0, "slots", 0, "how",
						 "a write breakpoint miscounted 1000 writes");
			}
		}
		pmc_counters_close(set);
		slots = n;
	}
	if (slots == 0)
		return json_pack("{s:b, s:i, s:s}", "available", 0, "slots", 0, "how", err.message);
	return json_pack("{s:b, s:I, s:b, s:s, s:s}", "available", 1, "slots", (json_int_t)slots,
			 "user_only", user_only, "limit", rc ? err.message : "none below 16", "how",
			 user_only ? "opened write breakpoints with :u (watching kernel accesses was refused) until the kernel refused more; 1000 writes counted exactly"
				   : "opened write breakpoints until the kernel refused more; 1000 writes counted exactly");
}

static __attribute__((noipa)) int probe_uprobe_target(int x)
{
	return x + 1;
}

static json_t *probe_uprobes(void)
{
	char why[PMC_ERROR_MSG_MAX];
	struct pmc_counters *set = try_open("calls:probe_uprobe_target", 0, why, sizeof(why));
	struct pmc_reading a, b;
	int acc = 0;

	if (!set)
		return fact(json_false(), why);
	pmc_counters_read(set, &a);
	for (int i = 0; i < 333; i++)
		acc = probe_uprobe_target(acc);
	pmc_counters_read(set, &b);
	/* Not closed here: a uprobe's close waits for the kernel's grace
	 * periods (~90 ms).  The probe runs in its own process, whose exit
	 * closes it after the answer has been sent. */
	if (b.c[0].value - a.c[0].value != 333 || acc != 333)
		return fact(json_false(), "uprobe opened but miscounted 333 calls");
	return fact(json_true(), "calls:SYMBOL on a function of pmcheck counted 333 calls exactly");
}

static json_t *probe_kprobes(void)
{
	char buf[32], path[1100], how[1200];

	snprintf(path, sizeof(path), "%s/kprobe/type", pmc_event_sysfs_root());
	if (pmc__read_text(path, buf, sizeof(buf)) > 0) {
		snprintf(how, sizeof(how), "%s/kprobe exists", pmc_event_sysfs_root());
		return fact(json_true(), how);
	}
	snprintf(how, sizeof(how), "no kprobe PMU in %s (CONFIG_KPROBE_EVENTS off)",
		 pmc_event_sysfs_root());
	return fact(json_false(), how);
}

static json_t *probe_tracepoints(void)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256], buf[32], how[512];
	const char *root = NULL;
	int mounted = 0;
	json_t *o;

	for (int i = 0; i < 2 && !root; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, R_OK) == 0)
			root = roots[i];
		else if (errno == EACCES || (stat(roots[i], &st) == 0 && access(roots[i], R_OK) != 0 &&
					     errno == EACCES)) {
			snprintf(how, sizeof(how),
				 "tracefs at %s is not readable by this user, so tracepoint names cannot be turned into ids: run as root, or remount it with mode=755 (counting itself then works unprivileged with :u)",
				 roots[i]);
			return json_pack("{s:b, s:s}", "available", 0, "how", how);
		}
	}
	if (!root) {
		if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
			mounted = 1;
			root = "/sys/kernel/tracing";
		} else {
			snprintf(how, sizeof(how), "tracefs not mounted and mount failed: %s (needs root)",
				 strerror(errno));
			return json_pack("{s:b, s:s}", "available", 0, "how", how);
		}
	}
	snprintf(path, sizeof(path), "%s/events/syscalls/sys_enter_getpid/id", root);
	if (pmc__read_text(path, buf, sizeof(buf)) <= 0) {
		snprintf(how, sizeof(how), "tracefs at %s, but no %s", root, path);
		o = json_pack("{s:b, s:s}", "available", 1, "how", how);
	} else {
		struct perf_event_attr attr;
		long long count = -1;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_TRACEPOINT;
		attr.config = strtoull(buf, NULL, 10);
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0) {
			for (int i = 0; i < 100; i++)
				syscall(SYS_getpid);
			if (read(fd, &count, sizeof(count)) != sizeof(count))
				count = -1;
			/* Left open: the probe's process exit closes it after
			 * the answer is sent (a syscall tracepoint's close waits
			 * for the kernel to unregister it). */
		}
		snprintf(how, sizeof(how),
			 "tracefs at %s%s; syscalls:sys_enter_getpid counted %lld of 100 getpid calls",
			 root, mounted ? " (mounted by the probe, unmounted after)" : "", count);
		o = json_pack("{s:b, s:s}", "available", count == 100, "how", how);
	}
	if (mounted)
		umount("/sys/kernel/tracing");
	return o;
}

static json_t *probe_software(void)
{
	static const char *const names[] = {
		"task-clock", "cpu-clock", "page-faults", "minor-faults", "major-faults",
		"context-switches", "cpu-migrations", "alignment-faults", "emulation-faults",
		"dummy", "cgroup-switches",
	};
	json_t *ok = json_array(), *user = json_array(), *bad = json_object();

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char why[PMC_ERROR_MSG_MAX], name[64];
		struct pmc_counters *set = try_open(names[i], 0, why, sizeof(why));

		if (set) {
			json_array_append_new(ok, json_string(names[i]));
		} else {
			/* Not permitted to count the kernel: user space alone? */
			snprintf(name, sizeof(name), "%s:u", names[i]);
			set = try_open(name, 0, NULL, 0);
			if (set)
				json_array_append_new(user, json_string(names[i]));
			else
				json_object_set_new(bad, names[i], json_string(why));
		}
		pmc_counters_close(set);
	}
	return json_pack("{s:o, s:o, s:o, s:s}", "available", ok, "user_only", user, "unavailable",
			 bad, "how", "opened each software event, then with :u where that was refused");
}

static int deep_tools;

static json_t *probe_tools(unsigned timeout_s)
{
	char line[256];
	json_t *o = json_object();
	char *vg[] = { "valgrind", "--version", NULL };
	char *cg[] = { "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "-q",
		       "/bin/true", NULL };
	char *qemu[] = { "qemu-system-aarch64", "--version", NULL };
	int rc;

	rc = run_tool(vg, line, sizeof(line), timeout_s);
	json_object_set_new(o, "valgrind", fact(rc == 0 && line[0] ? json_string(line) : json_null(),
						rc == 0 ? "valgrind --version" : "valgrind not on PATH"));
	if (rc == 0 && deep_tools) {
		int status_ok = run_tool(cg, line, sizeof(line), timeout_s) == 0 && line[0] == '\0';

		json_object_set_new(o, "sim_backend",
				    fact(json_boolean(status_ok),
					 status_ok ? "valgrind --tool=callgrind ran /bin/true cleanly"
						   : line));
	} else if (rc == 0) {
		/* Running a simulation costs ~0.4 s: by default, look for the
		 * tool instead (--deep runs it). */
		static const char *const dirs[] = { "/usr/libexec/valgrind", "/usr/lib/valgrind",
						    "/usr/local/libexec/valgrind" };
		char tool[256];
		struct utsname u;
		int found = 0;

		uname(&u);
		for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]) && !found; i++) {
			snprintf(tool, sizeof(tool), "%s/callgrind-%s-linux", dirs[i],
				 !strcmp(u.machine, "x86_64") ? "amd64" : !strcmp(u.machine, "aarch64") ? "arm64" : u.machine);
			found = access(tool, X_OK) == 0;
		}
		json_object_set_new(o, "sim_backend",
				    fact(json_boolean(found),
					 found ? "valgrind and its callgrind tool are installed (not run; pmcheck probe --deep runs callgrind on /bin/true)"
					       : "valgrind is installed but its callgrind tool is not (looked in /usr/libexec/valgrind, /usr/lib/valgrind)"));
	} else {
		json_object_set_new(o, "sim_backend", fact(json_false(), "needs valgrind"));
	}
	rc = run_tool(qemu, line, sizeof(line), timeout_s);
	json_object_set_new(o, "qemu_system_aarch64",
			    fact(rc == 0 && line[0] ? json_string(line) : json_null(),
				 rc == 0 ? "qemu-system-aarch64 --version"
					 : "qemu-system-aarch64 not on PATH (package qemu-system-arm)"));
	return o;
}

/* ---- isolation -------------------------------------------------------------- */

struct probe_def {
	const char *key;
	json_t *(*fn)(void);
};

static unsigned tool_timeout;
static json_t *probe_tools_default(void)
{
	return probe_tools(tool_timeout);
}

/* One probe running in a child, which sends JSON text down a pipe. */
struct running {
	const struct probe_def *p;
	struct pmc__child c; /* c.fd: the read end; -1 once done */
	char *buf;
	size_t len, cap;
	json_t *result;   /* set when done */
	double ms;        /* wall time until its answer */
};

static void start_probe(struct running *r)
{
	int wfd = -1;
	pid_t pid = pmc__child_fork(&r->c, PMC__CHILD_PIPE, &wfd);

	if (pid < 0) {
		r->result = json_pack("{s:s}", "error", strerror((int)-pid));
		return;
	}
	if (pid == 0) {
		/* Fault injection for the probe tests: PMCHECK_PROBE_FAULT=KEY:hang
		 * or KEY:crash makes that probe misbehave. */
		const char *fault = getenv("PMCHECK_PROBE_FAULT");
		size_t kl = strlen(r->p->key);
		json_t *res;

		if (fault && !strncmp(fault, r->p->key, kl) && fault[kl] == ':') {
			if (!strcmp(fault + kl + 1, "hang"))
				for (;;)
					pause();
			if (!strcmp(fault + kl + 1, "crash")) {
				signal(SIGSEGV, SIG_DFL); /* past sanitizer handlers */
				raise(SIGSEGV);
			}
		}
		res = r->p->fn();
		char *text = res ? json_dumps(res, JSON_COMPACT) : NULL;
		size_t off = 0, tl = text ? strlen(text) : 0;

		while (off < tl) {
			ssize_t w = write(wfd, text + off, tl - off);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
		/* The answer is complete: the parent need not wait for this
		 * process's exit, in which the kernel tears down what the probe
		 * opened (a uprobe's unregistration waits for grace periods). */
		close(wfd);
		_exit(text ? 0 : 1);
	}
}

/* Read what arrived; at end of input, decide the probe's result. */
static void read_probe(struct running *r)
{
	char how[256];
	ssize_t n;
	int status;

	if (r->cap - r->len < 4096) {
		char *nb = realloc(r->buf, r->cap + 65536);

		if (!nb) {
			n = -1;
			goto done;
		}
		r->buf = nb;
		r->cap += 65536;
	}
	n = read(r->c.fd, r->buf + r->len, r->cap - r->len - 1);
	if (n > 0) {
		r->len += (size_t)n;
		return;
	}
done:
	pmc__child_close(&r->c);
	if (r->buf) {
		r->buf[r->len] = '\0';
		r->result = json_loads(r->buf, 0, NULL);
	}
	if (r->result) {
		pmc__child_reap(&r->c, false); /* reaped now, or by init later */
		return;
	}
	/* No complete answer: the exit status says why. */
	pmc__child_reap(&r->c, true);
	status = r->c.status;
	if (WIFSIGNALED(status))
		snprintf(how, sizeof(how), "probe \"%s\" crashed (signal %d)", r->p->key,
			 WTERMSIG(status));
	else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
		snprintf(how, sizeof(how), "probe \"%s\" failed (status %d)", r->p->key,
			 WEXITSTATUS(status));
	else
		snprintf(how, sizeof(how), "probe \"%s\" sent malformed JSON", r->p->key);
	r->result = json_pack("{s:s}", "error", how);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Run every probe at once, each in its own child with the same deadline. */
static void run_all(struct running *r, size_t n, unsigned timeout_s)
{
	struct timespec start;
	size_t left = 0;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (size_t i = 0; i < n; i++) {
		start_probe(&r[i]);
		left += r[i].c.fd >= 0;
	}
	while (left > 0) {
		struct pollfd pf[32];
		size_t map[32], np = 0;
		double waited = ms_since(&start);
		long budget = (long)timeout_s * 1000 - (long)waited;

		for (size_t i = 0; i < n && np < 32; i++)
			if (r[i].c.fd >= 0) {
				pf[np] = (struct pollfd){ r[i].c.fd, POLLIN, 0 };
				map[np++] = i;
			}
		if (budget <= 0 || poll(pf, np, (int)budget) <= 0) {
			for (size_t k = 0; k < np; k++) {
				struct running *x = &r[map[k]];
				char how[160];

				pmc__child_kill(&x->c);
				x->ms = ms_since(&start);
				snprintf(how, sizeof(how), "probe \"%s\" timed out after %u s",
					 x->p->key, timeout_s);
				json_decref(x->result);
				x->result = json_pack("{s:s}", "error", how);
			}
			break;
		}
		for (size_t k = 0; k < np; k++) {
			struct running *x = &r[map[k]];

			if (!(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			read_probe(x);
			if (x->c.fd < 0) {
				x->ms = ms_since(&start);
				left--;
			}
		}
	}
}

json_t *pmc_probe_run(const struct pmc_probe_options *opt)
{
	static const struct probe_def probes[] = {
		{ "cpu", probe_cpu },
		{ "kernel", probe_kernel },
		{ "pmus", probe_pmus },
		{ "hardware", probe_hardware },
		{ "software", probe_software },
		{ "breakpoints", probe_breakpoints },
		{ "uprobes", probe_uprobes },
		{ "kprobes", probe_kprobes },
		{ "tracepoints", probe_tracepoints },
		{ "tools", probe_tools_default },
	};
	enum { N = sizeof(probes) / sizeof(probes[0]) };
	unsigned timeout = opt && opt->timeout_s ? opt->timeout_s : 10;
	struct running run[N];
	json_t *rec = json_object(), *timing = json_object();
	struct timespec t0;
	time_t t = time(NULL);
	char when[64];

	tool_timeout = timeout > 2 ? timeout - 1 : 1;
	deep_tools = opt && opt->deep;
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	json_object_set_new(rec, "schema", json_string("pmcheck-probe/1"));
	json_object_set_new(rec, "generated", json_string(when));
	memset(run, 0, sizeof(run));
	for (size_t i = 0; i < N; i++)
		run[i].p = &probes[i];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_all(run, N, timeout);
	for (size_t i = 0; i < N; i++) {
		json_object_set_new(rec, probes[i].key, run[i].result ? run[i].result
								      : json_pack("{s:s}", "error", "no result"));
		json_object_set_new(timing, probes[i].key, json_real(run[i].ms));
		free(run[i].buf);
	}
	json_object_set_new(timing, "total", json_real(ms_since(&t0)));
	json_object_set_new(rec, "timing_ms", timing);
	return rec;
}

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
		fprintf(out, "  %-13s available: %" JSON_INTEGER_FORMAT " slots%s\n", "Breakpoints",
			json_integer_value(json_object_get(bp, "slots")),
			json_is_true(json_object_get(bp, "user_only"))
				? ", user-space accesses only (:u): watching the kernel's is refused to this user"
				: "");
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
	fprintf(out, "  %-13s %s\n", "QEMU lane",
		(s = json_string_value(value_of(tools, "qemu_system_aarch64"))) ? s
		: (s = how_of(tools, "qemu_system_aarch64")) ? s : "?");
	/* Probes that failed outright. */
	{
		const char *key;
		json_t *val;

		json_object_foreach((json_t *)rec, key, val)
			if (json_is_object(val) && (s = str_at(val, "error")))
				fprintf(out, "  probe %s: %s\n", key, s);
	}
}
