/* SPDX-License-Identifier: MIT */
/*
 * The CPU's identity: vendor, family, model, stepping and a signature
 * hwdb's map matches (libcpuid on x86 when present, /proc/cpuinfo and MIDR
 * on arm64).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifdef PMCHECK_HAVE_LIBCPUID
#include <libcpuid/libcpuid.h>
/* libcpuid 0.7 moved the x86 identity into cpu_id_t's x86 member and
 * deprecated the old top-level fields (the build says which it has). */
#ifdef PMCHECK_LIBCPUID_X86_MEMBER
#define X86_ID(cpu) ((cpu).x86)
#else
#define X86_ID(cpu) (cpu)
#endif
#endif

#include <pmcheck/event.h>
#include <pmcheck/machine.h>

#include "util/util_int.h"

static void set_unknown(struct pmc_cpu_id *id)
{
	memset(id, 0, sizeof(*id));
	strcpy(id->signature, "unknown");
	strcpy(id->vendor, "unknown");
	id->hypervisor = -1;
	id->how = "no CPUID and no MIDR: unknown CPU";
}

#ifdef PMCHECK_HAVE_LIBCPUID
static int identify_x86(struct pmc_cpu_id *id)
{
	struct cpu_raw_data_t raw;
	struct cpu_id_t cpu;

	if (!cpuid_present() || cpuid_get_raw_data(&raw) != 0 || cpu_identify(&raw, &cpu) != 0)
		return -1;
	/* ext_family/ext_model are the display values: CPUID leaf 1 with the
	 * extended family added (family 0xF) and the extended model prefixed
	 * (family 6 or 0xF), which is what perf's signature uses. */
	id->family = X86_ID(cpu).ext_family;
	id->model = X86_ID(cpu).ext_model;
	id->stepping = X86_ID(cpu).stepping;
	pmc__copy(id->vendor, sizeof(id->vendor), cpu.vendor_str);
	pmc__copy(id->brand, sizeof(id->brand), cpu.brand_str);
	pmc__snprintf(id->signature, sizeof(id->signature), "%s-%d-%X-%X", cpu.vendor_str,
		      id->family, (unsigned)id->model, (unsigned)id->stepping);
	id->hypervisor = cpu.flags[CPU_FEATURE_HYPERVISOR] ? 1 : 0;
	id->how = "CPUID leaves 0 and 1 via libcpuid";
	return 0;
}
#endif

/* arm64: MIDR_EL1 from sysfs (exact), else implementer/part from cpuinfo. */
static int identify_arm(struct pmc_cpu_id *id)
{
	uint64_t midr;
	FILE *f;
	char line[256];
	unsigned impl = 0, part = 0, variant = 0, rev = 0, arch = 0;
	int have = 0;

	if (pmc__read_u64("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1",
			  &midr) == 0) {
		id->midr = midr;
		impl = (midr >> 24) & 0xff;
		variant = (midr >> 20) & 0xf;
		arch = (midr >> 16) & 0xf;
		part = (midr >> 4) & 0xfff;
		rev = midr & 0xf;
		id->how = "MIDR_EL1 from /sys/devices/system/cpu/cpu0/regs/identification/midr_el1";
		have = 3;
	} else if ((f = fopen("/proc/cpuinfo", "re"))) {
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "CPU implementer : %x", &impl) == 1)
				have |= 1;
			else if (sscanf(line, "CPU part : %x", &part) == 1)
				have |= 2;
			else if (sscanf(line, "CPU variant : %x", &variant) == 1)
				continue;
			else if (sscanf(line, "CPU revision : %u", &rev) == 1)
				continue;
		}
		fclose(f);
		id->how = "CPU implementer/part in /proc/cpuinfo";
	}
	if (have != 3)
		return -1;
	pmc__snprintf(id->signature, sizeof(id->signature), "ARM-0x%x-0x%x", impl, part);
	strcpy(id->vendor, "ARM");
	id->family = (int)arch;
	id->model = (int)part;
	id->stepping = (int)(variant << 4 | rev);
	id->hypervisor = -1; /* not observable from EL0 */
	return 0;
}

int pmc_cpu_identify(struct pmc_cpu_id *id)
{
	struct utsname u;
	int rc = -1;

	set_unknown(id);
	if (uname(&u) == 0)
		pmc__copy(id->arch, sizeof(id->arch), u.machine);
#ifdef PMCHECK_HAVE_LIBCPUID
	rc = identify_x86(id);
#endif
	if (rc != 0)
		rc = identify_arm(id);
	if (rc != 0) {
		char arch[sizeof(id->arch)];

		memcpy(arch, id->arch, sizeof(arch));
		set_unknown(id);
		memcpy(id->arch, arch, sizeof(arch));
	}
	return 0;
}
