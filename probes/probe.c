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
#include "probe_int.h"
#include "util/child.h"
#include "util/util_int.h"

/* ---- CPU identity ------------------------------------------------------------- */

static json_t *probe_cpu(void)
{
	json_t *o = json_object();
	struct pmc_cpu_id id;
	int known;

	pmc_cpu_identify(&id);
	known = strcmp(id.signature, "unknown") != 0;
	json_object_set_new(o, "signature",
			    pmc__probe_fact(known ? json_string(id.signature) : json_null(), id.how));
	json_object_set_new(o, "vendor", pmc__probe_fact(json_string(id.vendor), id.how));
	json_object_set_new(o, "hypervisor",
			    pmc__probe_fact(id.hypervisor < 0 ? json_null() : json_boolean(id.hypervisor),
				 id.hypervisor < 0 ? "not determinable from EL0 on arm64"
						   : "CPUID leaf 1 ECX bit 31"));
	if (id.brand[0])
		json_object_set_new(o, "brand", pmc__probe_fact(json_string(id.brand),
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
				    pmc__probe_fact(json_string((unsigned)cpu.purpose < 3 ? purposes[cpu.purpose]
									  : "unknown"),
					 "libcpuid purpose (hybrid CPUs: performance/efficiency)"));
		json_object_set_new(o, "libcpuid_says",
				    pmc__probe_fact(json_string(cpu.cpu_codename),
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
		json_object_set_new(o, "release", pmc__probe_fact(json_string(u.release), "uname(2)"));
		json_object_set_new(o, "version", pmc__probe_fact(json_string(u.version), "uname(2)"));
		json_object_set_new(o, "machine", pmc__probe_fact(json_string(u.machine), "uname(2)"));
	}
	json_object_set_new(o, "perf_event_paranoid",
			    pmc__probe_file_int("/proc/sys/kernel/perf_event_paranoid"));
	json_object_set_new(o, "perf_user_access", pmc__probe_file_int("/proc/sys/kernel/perf_user_access"));
	snprintf(path, sizeof(path), "%s/cpu/rdpmc", pmc_event_sysfs_root());
	json_object_set_new(o, "rdpmc", pmc__probe_file_int(path));
	json_object_set_new(o, "nmi_watchdog", pmc__probe_file_int("/proc/sys/kernel/nmi_watchdog"));
	json_object_set_new(o, "perf_event_max_sample_rate",
			    pmc__probe_file_int("/proc/sys/kernel/perf_event_max_sample_rate"));
	json_object_set_new(o, "root", pmc__probe_fact(json_boolean(geteuid() == 0), "geteuid()"));
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

/* ---- isolation -------------------------------------------------------------- */

struct probe_def {
	const char *key;
	json_t *(*fn)(void);
	/* More keys of the record this probe answers: its result is then an
	 * object holding key and each of these, split by the parent. */
	const char *const *also;
};

static unsigned tool_timeout;
static int deep_tools;
static json_t *probe_tools_default(void)
{
	return pmc__probe_tools(tool_timeout, deep_tools);
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

/* Whether the probe answers the record's key (the first len bytes of key). */
static int answers(const struct probe_def *p, const char *key, size_t len)
{
	if (strlen(p->key) == len && !strncmp(p->key, key, len))
		return 1;
	for (const char *const *k = p->also; k && *k; k++)
		if (strlen(*k) == len && !strncmp(*k, key, len))
			return 1;
	return 0;
}

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
		const char *what = fault ? strchr(fault, ':') : NULL;
		json_t *res;

		if (what && answers(r->p, fault, (size_t)(what - fault))) {
			if (!strcmp(what + 1, "hang"))
				for (;;)
					pause();
			if (!strcmp(what + 1, "crash")) {
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
	static const char *const kinds_also[] = { "uprobes", "tracepoints", NULL };
	static const struct probe_def probes[] = {
		{ "cpu", probe_cpu, NULL },
		{ "kernel", probe_kernel, NULL },
		{ "pmus", probe_pmus, NULL },
		{ "hardware", pmc__probe_hardware, NULL },
		{ "software", pmc__probe_software, NULL },
		{ "breakpoints", pmc__probe_breakpoints, NULL },
		{ "kinds", pmc__probe_kinds_and_events, kinds_also },
		{ "kprobes", pmc__probe_kprobes, NULL },
		{ "tools", probe_tools_default, NULL },
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
		json_t *res = run[i].result ? run[i].result : json_pack("{s:s}", "error", "no result");
		const char *const *k = probes[i].also;

		/* A probe that answers several keys: each its part, or each the
		 * probe's error. */
		for (; k && *k; k++) {
			json_t *part = json_object_get(res, "error") ? NULL : json_object_get(res, *k);

			json_object_set_new(rec, *k, part ? json_incref(part) : json_deep_copy(res));
			json_object_set_new(timing, *k, json_real(run[i].ms));
		}
		if (probes[i].also && !json_object_get(res, "error")) {
			json_t *own = json_incref(json_object_get(res, probes[i].key));

			json_decref(res);
			res = own ? own : json_pack("{s:s}", "error", "no result");
		}
		json_object_set_new(rec, probes[i].key, res);
		json_object_set_new(timing, probes[i].key, json_real(run[i].ms));
		free(run[i].buf);
	}
	json_object_set_new(timing, "total", json_real(ms_since(&t0)));
	json_object_set_new(rec, "timing_ms", timing);
	return rec;
}
