/* SPDX-License-Identifier: MIT */
/*
 * The CPU's identity: vendor, family, model, stepping and a signature
 * hwdb's map matches (the CPUID instruction on x86, MIDR or /proc/cpuinfo
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

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define PMC_X86 1
#endif

#include <pmcheck/event.h>
#include <pmcheck/hwdb.h>

#include "util/util_int.h"

static void set_unknown(struct pmc_cpu_id *id)
{
	memset(id, 0, sizeof(*id));
	strcpy(id->signature, "unknown");
	strcpy(id->vendor, "unknown");
	id->hypervisor = -1;
	id->how = "no CPUID and no MIDR: unknown CPU";
}

#ifdef PMC_X86
/*
 * x86: the CPUID instruction itself, not libcpuid.  Only leaves 0, 1 and
 * the brand string's are read, so a process on the sim backend maps no
 * library for it and valgrind translates no identification code (the
 * probe, which wants libcpuid's codename, still links it).  The display
 * family and model follow the SDM's rule, as perf's signature does: the
 * extended family is added to family 0xF, the extended model prefixed to
 * family 6 and above.  test_cpuid compares the result with libcpuid's.
 */
static int identify_x86(struct pmc_cpu_id *id)
{
	unsigned a, b, c, d, top, base_family;
	char brand[49] = "", *p;

	if (!__get_cpuid(0, &top, &b, &c, &d))
		return -1;
	memcpy(id->vendor, &b, 4);
	memcpy(id->vendor + 4, &d, 4);
	memcpy(id->vendor + 8, &c, 4);
	id->vendor[12] = '\0';
	if (top < 1 || !__get_cpuid(1, &a, &b, &c, &d))
		return -1;
	base_family = (a >> 8) & 0xf;
	id->family = (int)base_family + (base_family == 0xf ? (int)((a >> 20) & 0xff) : 0);
	id->model = (int)((a >> 4) & 0xf) | (id->family >= 6 ? (int)((a >> 16) & 0xf) << 4 : 0);
	id->stepping = (int)(a & 0xf);
	id->hypervisor = (int)((c >> 31) & 1);
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) >= 0x80000004u) {
		for (unsigned leaf = 0; leaf < 3; leaf++) {
			__cpuid(0x80000002 + leaf, a, b, c, d);
			memcpy(brand + 16 * leaf, &a, 4);
			memcpy(brand + 16 * leaf + 4, &b, 4);
			memcpy(brand + 16 * leaf + 8, &c, 4);
			memcpy(brand + 16 * leaf + 12, &d, 4);
		}
		brand[48] = '\0';
	}
	/* Some CPUs pad the brand string with leading spaces. */
	for (p = brand; *p == ' '; p++)
		;
	pmc__copy(id->brand, sizeof(id->brand), p);
	pmc__snprintf(id->signature, sizeof(id->signature), "%s-%d-%X-%X", id->vendor, id->family,
		      (unsigned)id->model, (unsigned)id->stepping);
	id->how = "CPUID leaves 0 and 1";
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
#ifdef PMC_X86
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
