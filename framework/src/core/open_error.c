/* SPDX-License-Identifier: MIT */
/*
 * Why perf_event_open refused an event, in words that name the event, the
 * cause on this machine and the fix (paranoid level, missing PMU, breakpoint
 * slots, exclusive PMU, ...).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <dirent.h>
#include <pthread.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <time.h>

#include <valgrind/valgrind.h>

#include <pmcheck/counters.h>
#include <pmcheck/sampling.h>
#include <pmcheck/sim.h>

#include <pmcheck/machine.h>
#include <pmcheck/region.h>
#include <pmcheck/userpage.h>

#include "core_int.h"
#include "counters_int.h"
#include "hybrid_int.h"
#include "sim/sim_api.h"

static int read_paranoid(void)
{
	uint64_t v;

	return pmc__read_u64("/proc/sys/kernel/perf_event_paranoid", &v) == 0 ? (int)v : -99;
}

/* What turns the canonical name into its user-space-only form: a modifier
 * group gets a 'u', a name without one gets ":u" (mem:X/4:w has its access
 * segment, then the modifiers; sub:event likewise). */
static const char *user_suffix(const struct pmc_event_spec *s)
{
	size_t colons = 0;

	for (const char *p = s->name; *p; p++)
		colons += *p == ':';
	if (s->kind == PMC_KIND_PMU)
		return "u";
	if (s->kind == PMC_KIND_BREAKPOINT)
		return colons >= 3 ? "u" : ":u";
	if (s->kind == PMC_KIND_TRACEPOINT)
		return colons >= 2 ? "u" : ":u";
	return colons ? "u" : ":u";
}

int pmc__open_error(int rc, const struct pmc_counters *set,
				const struct pmc_event_spec *s, struct pmc_error *err)
{
	size_t bps = 0;

	/* Breakpoints opened before this one (s is the last event tried). */
	for (size_t i = 0; set && i < set->n; i++)
		bps += set->ev[i].spec.kind == PMC_KIND_BREAKPOINT && &set->ev[i].spec != s;
	/* A generic event with a PMU type in config's upper bits: kernels
	 * before the extension refuse it, with ENOENT (arm64 6.1) or EINVAL
	 * (arm64 5.10, measured in the lane). */
	if ((rc == -ENOENT || rc == -ENODEV || rc == -EINVAL) &&
	    (s->kind == PMC_KIND_HARDWARE || s->kind == PMC_KIND_CACHE) &&
	    (s->config >> PERF_PMU_TYPE_SHIFT) != 0)
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot open \"%s\": this CPU has several core PMUs, so a generic event is opened on each with the PMU's type (%u) in config bits 32-63, and this kernel's %s PMU refuses that (%s; x86 takes it from Linux 5.13, arm64 from Linux 6.6); name one core PMU's own event (%s/event=.../) and pin the task to its CPUs",
				 s->name, (unsigned)(s->config >> PERF_PMU_TYPE_SHIFT), s->pmu,
				 strerror(-rc), s->pmu);
	switch (rc) {
	case -ENOENT:
	case -ENODEV:
		if (s->uses_hw_counter && !s->pmu[0] && !pmc__has_hw_pmu()) {
			char pmus[256];

			pmc__list_pmus(pmus, sizeof(pmus));
			return pmc__fail(err, PMC_E_NO_HW_PMU, s->name, -1,
					 "cannot open \"%s\": no hardware PMU on this machine (%s; PMUs here: %s); run with --backend=sim or skip",
					 s->name, strerror(-rc), pmus);
		}
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot open \"%s\": this machine's %s PMU does not provide it (%s); check the event name for this CPU model",
				 s->name, s->pmu[0] ? s->pmu : "CPU", strerror(-rc));
	case -EACCES:
	case -EPERM: {
		int paranoid = read_paranoid();
		char user_only[PMC_EVENT_NAME_MAX + 64] = "";

		/* Level 3 (a Debian and Android patch) refuses every unprivileged
		 * event, user-only ones too: then ":u" is no remedy. */
		if (paranoid >= 3)
			return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
					 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d forbids all unprivileged perf_event use on this kernel); run as root, grant CAP_PERFMON, or lower perf_event_paranoid to 2 or less",
					 s->name, paranoid);
		/* The uprobe PMU takes root or CAP_PERFMON whatever the sysctl. */
		if (s->kind == PMC_KIND_UPROBE)
			return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
					 "cannot open \"%s\": the uprobe PMU needs root or CAP_PERFMON (perf_event_paranoid does not change that); run as root, or grant CAP_PERFMON, or count the function with an execute breakpoint (mem:SYMBOL:x:u)",
					 s->name);
		/* Uncore-style PMUs (msr, power, cstate) count machine state and
		 * refuse :u; everything else can leave the kernel out. */
		if (!s->exclude_kernel && !s->exclude_user &&
		    (s->kind != PMC_KIND_PMU || s->uses_hw_counter))
			snprintf(user_only, sizeof(user_only), ", or count user space only with :u (%s%s)",
				 s->name, user_suffix(s));
		return pmc__fail(err, PMC_E_PRIVILEGE, s->name, -1,
				 "cannot open \"%s\": not permitted (kernel.perf_event_paranoid = %d%s); run as root, grant CAP_PERFMON, lower perf_event_paranoid%s",
				 s->name, paranoid,
				 paranoid >= 2 ? ": unprivileged users may not count the kernel" : "",
				 user_only);
	}
	case -ENOSPC:
		if (s->kind == PMC_KIND_BREAKPOINT)
			return pmc__fail(err, PMC_E_NO_SLOTS, s->name, -1,
					 "cannot open \"%s\": no free breakpoint slot (this set already holds %zu breakpoint%s; the CPU's debug registers are shared with debuggers and other sets of this thread); use fewer breakpoints per set",
					 s->name, bps, bps == 1 ? "" : "s");
		return pmc__fail(err, PMC_E_UNSCHEDULABLE, s->name, -1,
				 "cannot open \"%s\": the PMU has no free counter for it (%s); close other counter users or split the set",
				 s->name, strerror(-rc));
	case -EMFILE:
	case -ENFILE:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": out of file descriptors (%s); raise the limit (ulimit -n) or open fewer events",
				 s->name, strerror(-rc));
	case -EOPNOTSUPP:
		return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
				 "cannot open \"%s\": the PMU cannot apply these attributes (%s); drop :u/:k/:h or :p modifiers it cannot honour",
				 s->name, strerror(-rc));
	case -EINVAL:
#if defined(__x86_64__) || defined(__i386__)
		if (s->kind == PMC_KIND_BREAKPOINT && s->bp_type == HW_BREAKPOINT_R)
			return pmc__fail(err, PMC_E_UNSUPPORTED, s->name, -1,
					 "cannot open \"%s\": x86 debug registers cannot watch reads alone; use :rw, which counts reads and writes",
					 s->name);
#endif
		return pmc__fail(err, -EINVAL, s->name, -1,
				 "cannot open \"%s\": the kernel rejected the attributes (type %u, config 0x%" PRIx64
				 ", config1 0x%" PRIx64 "): invalid for this PMU; check the event's fields against its sysfs format/",
				 s->name, s->type, s->config, s->config1);
	case -E2BIG:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": this kernel uses a different perf_event_attr size (E2BIG); rebuild pmcheck against this kernel's headers",
				 s->name);
	case -EBUSY:
		return pmc__fail(err, rc, s->name, -1,
				 "cannot open \"%s\": the PMU is held exclusively by another user (EBUSY)",
				 s->name);
	default:
		return pmc__fail(err, rc, s->name, -1, "cannot open \"%s\": %s", s->name,
				 strerror(-rc));
	}
}
