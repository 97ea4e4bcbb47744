/* SPDX-License-Identifier: MIT */
/*
 * pmc_cpu_identify on x86 reads CPUID itself (src/hwdb/cpuid.c); libcpuid,
 * which the probe still links, is the reference it is held to: on the
 * machine's own CPU, and on the CPU valgrind shows a program (another
 * vendor, family and model string on most hosts), which is what a case
 * on the sim backend identifies.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include <pmcheck/pmcheck.h>

#include "t.h"

#if defined(PMCHECK_HAVE_LIBCPUID) && (defined(__x86_64__) || defined(__i386__))
#include <libcpuid/libcpuid.h>
#ifdef PMCHECK_LIBCPUID_X86_MEMBER
#define X86_ID(cpu) ((cpu).x86)
#else
#define X86_ID(cpu) (cpu)
#endif


#define REFERENCE 1
#endif

#ifdef REFERENCE
static const char *trimmed(const char *s)
{
	static char out[64];
	size_t n;

	while (*s == ' ')
		s++;
	snprintf(out, sizeof(out), "%s", s);
	for (n = strlen(out); n && out[n - 1] == ' '; n--)
		out[n - 1] = '\0';
	return out;
}
#else
/* Not x86, or no libcpuid: nothing to compare with. */
static void no_reference(void)
{
	T_SKIP("not x86, or libcpuid was not found: no reference to compare with");
}
#endif

T_CASE(agrees_with_libcpuid)
{
#ifndef REFERENCE
	no_reference();
#else
	struct cpu_raw_data_t raw;
	struct cpu_id_t cpu;
	struct pmc_cpu_id id;
	char want[64], brand[64];

	T_CHECK(cpuid_present() && cpuid_get_raw_data(&raw) == 0 && cpu_identify(&raw, &cpu) == 0,
		"libcpuid identifies this CPU: %s", cpuid_error());
	pmc_cpu_identify(&id);
	snprintf(want, sizeof(want), "%s-%d-%X-%X", cpu.vendor_str, X86_ID(cpu).ext_family,
		 (unsigned)X86_ID(cpu).ext_model, (unsigned)X86_ID(cpu).stepping);
	T_CHECK(!strcmp(id.signature, want), "signature %s, libcpuid's %s", id.signature, want);
	T_CHECK(!strcmp(id.vendor, cpu.vendor_str), "vendor %s, libcpuid's %s", id.vendor, cpu.vendor_str);
	T_CHECK(id.family == X86_ID(cpu).ext_family && id.model == X86_ID(cpu).ext_model &&
			id.stepping == X86_ID(cpu).stepping,
		"family %d model %d stepping %d, libcpuid's %d %d %d", id.family, id.model, id.stepping,
		X86_ID(cpu).ext_family, X86_ID(cpu).ext_model, X86_ID(cpu).stepping);
	snprintf(brand, sizeof(brand), "%s", trimmed(cpu.brand_str));
	T_CHECK(!strcmp(trimmed(id.brand), brand), "brand \"%s\", libcpuid's \"%s\"", id.brand, brand);
	T_CHECK(id.hypervisor == (cpu.flags[CPU_FEATURE_HYPERVISOR] ? 1 : 0), "hypervisor %d, libcpuid's %d",
		id.hypervisor, cpu.flags[CPU_FEATURE_HYPERVISOR]);
	printf("%s (%s)\n", id.signature, id.brand);
#endif
}

/* The same comparison on the CPU valgrind synthesises. */
T_CASE(agrees_under_valgrind)
{
#ifndef REFERENCE
	no_reference();
#else
	char cmd[4096], self[2048];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int rc;

#ifdef T_ASAN
	T_SKIP("valgrind cannot run a program built with AddressSanitizer");
#endif
	if (system("valgrind --version >/dev/null 2>&1") != 0)
		T_SKIP("valgrind is not installed");
	T_CHECK(n > 0, "/proc/self/exe");
	self[n] = '\0';
	snprintf(cmd, sizeof(cmd), "valgrind --tool=none -q %s agrees_with_libcpuid", self);
	rc = system(cmd);
	T_CHECK(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "%s: status %d", cmd, rc);
#endif
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
