/* SPDX-License-Identifier: MIT */
/*
 * The PMUs sysfs lists: the directory root in use, which of them are CPU
 * (core) PMUs, the list for messages, and the machine queries built on them.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <pmcheck/event.h>
#include <pmcheck/machine.h>

#include "core_int.h"

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

const char *pmc_event_sysfs_root(void)
{
	return pmc__sysfs_root();
}


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
		found = pmc__is_core_pmu(e->d_name);
	}
	closedir(d);
	return found;
}

int pmc__is_core_pmu(const char *pmu)
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
		    pmc__parse_number(type, strcspn(type, "\n"), &t) != 0 || t > UINT32_MAX)
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

int pmc_machine_has_hw_pmu(char *pmus, size_t size)
{
	if (pmus && size)
		pmc__list_pmus(pmus, size);
	return pmc__has_hw_pmu();
}

int pmc_machine_has_pmu(const char *pmu)
{
	char path[PMC_EVENT_PATH_MAX];
	struct stat st;

	if (!pmu || !*pmu || strchr(pmu, '/'))
		return 0;
	if (pmc__snprintf(path, sizeof(path), "%s/%s", pmc__sysfs_root(), pmu) < 0)
		return 0;
	return stat(path, &st) == 0;
}

int pmc_machine_paranoid(void)
{
	char buf[32];
	char *end;
	long v;

	if (pmc__read_text("/proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf)) <= 0)
		return INT32_MIN;
	v = strtol(buf, &end, 10);
	return end == buf ? INT32_MIN : (int)v;
}
