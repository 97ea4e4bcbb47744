/* SPDX-License-Identifier: MIT */
/*
 * The probes' counting experiments: each opens real events and counts a
 * known amount of work (a loop, breakpoint hits, calls, syscalls, page
 * faults) or asks a tool, and says what worked and how it was found out.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sched.h>
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

static PMC__NOIPA void probe_loop(unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		__asm__ __volatile__("" ::: "memory");
}

json_t *pmc__probe_hardware(void)
{
	json_t *o = json_object();
	char why[PMC_ERROR_MSG_MAX], events[512];
	struct pmc_counters *set, *plain;
	size_t general = 0;

	set = try_open("instructions:u", 0, why, sizeof(why));
	json_object_set_new(o, "available", pmc__probe_fact(json_boolean(set != NULL),
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
			    pmc__probe_fact(json_integer((json_int_t)general),
				 "largest group of instructions:u events scheduled together"));
	return o;
}

/* One kind's check as the probe record has it. */
static json_t *kind_json(const struct pmc_kind_check *c)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:b, s:s}", "status", pmc_kind_status_name(c->status),
			 "work", (json_int_t)c->work, "counted", (json_int_t)c->counted, "cost_us",
			 c->cost_ns / 1e3, "injected", c->injected, "how", c->summary);
}

json_t *pmc_probe_kinds(void)
{
	json_t *o = json_object();
	struct pmc_event_spec spec;
	struct pmc_error err;

	/* The tracepoint check needs tracefs: mounted in this probe's own
	 * mount namespace when nobody has (root only), so nothing outlives it. */
	if (pmc_event_parse("syscalls:sys_enter_getppid", &spec, &err) != 0 && geteuid() == 0 &&
	    unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	for (int id = 0; id < PMC_KIND_CHECKS; id++) {
		struct pmc_kind_check c;

		pmc_kind_check((enum pmc_kind_check_id)id, &c);
		json_object_set_new(o, pmc_kind_check_name((enum pmc_kind_check_id)id), kind_json(&c));
	}
	return o;
}

static volatile long bp_vars[16];

/* Debug registers free for this process: write breakpoints opened with the
 * raw system call (whether they count is the checks' business) until the
 * kernel refuses one. */
static size_t breakpoint_slots(int *user_only, char *limit, size_t size)
{
	int fds[16];
	size_t n = 0;

	*user_only = 0;
	snprintf(limit, size, "none below 16");
	for (; n < 16; n++) {
		struct perf_event_attr a;

		memset(&a, 0, sizeof(a));
		a.type = PERF_TYPE_BREAKPOINT;
		a.size = sizeof(a);
		a.bp_type = HW_BREAKPOINT_W;
		a.bp_addr = (uintptr_t)&bp_vars[n];
		a.bp_len = sizeof(long);
		a.disabled = 1;
		a.exclude_kernel = a.exclude_hv = *user_only;
		fds[n] = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
		if (fds[n] < 0 && n == 0 && (errno == EACCES || errno == EPERM) && !*user_only) {
			*user_only = 1;
			n--;
			continue;
		}
		if (fds[n] < 0) {
			snprintf(limit, size, "breakpoint %zu refused: %s%s", n + 1, strerror(errno),
				 errno == ENOSPC ? " (no free breakpoint slot)" : "");
			break;
		}
	}
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return n;
}

json_t *pmc__probe_breakpoints(void)
{
	static const enum pmc_kind_check_id ids[] = { PMC_KIND_CHECK_BP_WRITE, PMC_KIND_CHECK_BP_RW,
						      PMC_KIND_CHECK_BP_EXEC };
	struct pmc_kind_check c[3];
	char limit[256];
	int user_only;
	size_t slots;

	for (int i = 0; i < 3; i++)
		pmc_kind_check(ids[i], &c[i]);
	slots = breakpoint_slots(&user_only, limit, sizeof(limit));
	return json_pack("{s:b, s:s, s:I, s:b, s:s, s:s}", "available", c[0].status == PMC_KIND_COUNTS,
			 "status", pmc_kind_status_name(c[0].status), "slots", (json_int_t)slots,
			 "user_only", user_only, "limit", limit, "how", c[0].summary);
}

json_t *pmc__probe_kprobes(void)
{
	char buf[32], path[1100], how[1200];

	snprintf(path, sizeof(path), "%s/kprobe/type", pmc_event_sysfs_root());
	if (pmc__read_text(path, buf, sizeof(buf)) > 0) {
		snprintf(how, sizeof(how), "%s/kprobe exists", pmc_event_sysfs_root());
		return pmc__probe_fact(json_true(), how);
	}
	snprintf(how, sizeof(how), "no kprobe PMU in %s (CONFIG_KPROBE_EVENTS off)",
		 pmc_event_sysfs_root());
	return pmc__probe_fact(json_false(), how);
}

/* Where tracefs is, mounted here (root only) when nobody has: 0 and *root,
 * or -1 with the reason in how. */
static int tracefs_find(const char **root, int *mounted, char *how, size_t size)
{
	static const char *const roots[] = { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" };
	char path[256];

	*root = NULL;
	*mounted = 0;
	for (int i = 0; i < 2; i++) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (access(path, R_OK) == 0) {
			*root = roots[i];
			return 0;
		}
		if (errno == EACCES ||
		    (stat(roots[i], &st) == 0 && access(roots[i], R_OK) != 0 && errno == EACCES)) {
			snprintf(how, size,
				 "tracefs at %s is not readable by this user, so tracepoint names cannot be turned into ids: run as root, or remount it with mode=755 (counting itself then works unprivileged with :u)",
				 roots[i]);
			return -1;
		}
	}
	if (mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) == 0) {
		*mounted = 1;
		*root = "/sys/kernel/tracing";
		return 0;
	}
	snprintf(how, size, "tracefs not mounted and mount failed: %s (needs root)", strerror(errno));
	return -1;
}

/*
 * The kinds' checks, and the uprobes and tracepoints records from the same
 * checks: one uprobe and one tracepoint registered per run.  Each
 * registration and removal waits for the kernel's grace periods, with
 * every other trace event's open queued behind it, so a second pair cost
 * a back-to-back probe 30 to 100 ms.
 */
json_t *pmc__probe_kinds_and_events(void)
{
	char how[1024];
	const char *root;
	int mounted, found;
	json_t *kinds, *o;
	json_t *up, *tp;

	/* A private mount namespace: tracefs mounted here goes with this
	 * process (root only; elsewhere tracefs is found or not). */
	if (geteuid() == 0 && access("/sys/kernel/tracing/events", R_OK) != 0 &&
	    unshare(CLONE_NEWNS) == 0)
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	found = tracefs_find(&root, &mounted, how, sizeof(how)) == 0;
	kinds = pmc_probe_kinds();
	up = json_object_get(json_object_get(kinds, "uprobe"), "status");
	o = json_object_get(kinds, "uprobe");
	up = pmc__probe_fact(json_boolean(up && !strcmp(json_string_value(up), "available")),
			     json_string_value(json_object_get(o, "how")));
	o = json_object_get(kinds, "tracepoint");
	if (found)
		snprintf(how, sizeof(how), "tracefs at %s%s; %s", root,
			 mounted ? " (mounted by the probe, in its own mount namespace)" : "",
			 json_string_value(json_object_get(o, "how")));
	tp = json_pack("{s:b, s:s}", "available",
		       found && !strcmp(json_string_value(json_object_get(o, "status")), "available"),
		       "how", how);
	if (mounted)
		umount("/sys/kernel/tracing");
	return json_pack("{s:o, s:o, s:o}", "kinds", kinds, "uprobes", up, "tracepoints", tp);
}

json_t *pmc__probe_software(void)
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

json_t *pmc__probe_tools(unsigned timeout_s, int deep)
{
	char line[256], how[4400];
	json_t *o = json_object();
	char *cg[] = { "valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", "-q",
		       "/bin/true", NULL };
	struct pmc__tool_query vq, qq;
	int rc;

	/* Both --version runs at once, and each only once per build of its
	 * tool (QEMU's alone costs 57 ms of CPU): --deep asks again. */
	pmc__probe_tool_start(&qq, "qemu-system-aarch64", deep);
	pmc__probe_tool_start(&vq, "valgrind", deep);
	rc = pmc__probe_tool_finish(&vq, timeout_s);
	snprintf(line, sizeof(line), "%s", vq.line);
	snprintf(how, sizeof(how), rc ? "valgrind not on PATH"
			       : vq.cached ? "valgrind --version, remembered for this build of %s (pmcheck probe --deep asks again)"
					   : "valgrind --version (%s)",
		 vq.path);
	json_object_set_new(o, "valgrind", pmc__probe_fact(rc == 0 && line[0] ? json_string(line) : json_null(),
						how));
	if (rc == 0 && deep) {
		int status_ok = pmc__probe_run_tool(cg, line, sizeof(line), timeout_s) == 0 && line[0] == '\0';

		json_object_set_new(o, "sim_backend",
				    pmc__probe_fact(json_boolean(status_ok),
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
				    pmc__probe_fact(json_boolean(found),
					 found ? "valgrind and its callgrind tool are installed (not run; pmcheck probe --deep runs callgrind on /bin/true)"
					       : "valgrind is installed but its callgrind tool is not (looked in /usr/libexec/valgrind, /usr/lib/valgrind)"));
	} else {
		json_object_set_new(o, "sim_backend", pmc__probe_fact(json_false(),
					 "valgrind is not on PATH: install it (Debian: apt-get install valgrind) to count with --backend=sim"));
	}
	/* Which engine counts instructions, loads, stores, branches and
	 * calls: on sim (misses are always callgrind's). */
	{
		char why[PMC_ERROR_MSG_MAX];
		const char *engine = pmc_sim_engine_for(1u << PMC_SIM_IR, why, sizeof(why));

		json_object_set_new(o, "sim_engine",
				    pmc__probe_fact(engine ? json_string(engine) : json_null(), why));
	}
	rc = pmc__probe_tool_finish(&qq, timeout_s);
	snprintf(how, sizeof(how), rc ? "qemu-system-aarch64 not on PATH (package qemu-system-arm)"
			       : qq.cached ? "qemu-system-aarch64 --version, remembered for this build of %s (pmcheck probe --deep asks again)"
					   : "qemu-system-aarch64 --version (%s)",
		 qq.path);
	json_object_set_new(o, "qemu_system_aarch64",
			    pmc__probe_fact(rc == 0 && qq.line[0] ? json_string(qq.line) : json_null(), how));
	return o;
}
