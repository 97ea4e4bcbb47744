/* SPDX-License-Identifier: MIT */
/*
 * Hybrid CPUs (several core PMUs): finding the core PMUs in sysfs, spreading
 * a generic event over them (the PMU type in config bits 32-63), summing the
 * parts and judging whether the sum is complete.  White-box on the pure
 * parts, fixture sysfs trees for discovery and for the open, which on this
 * machine reaches the real kernel.  The emulated lane opens the spread event
 * for real (test_hw: hybrid_spread_counts).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/pmcheck.h>

#include "core/hybrid_int.h"
#include "t.h"

static const struct pmc_core_pmu alder[2] = {
	{ "cpu_core", 4, "0-15" },
	{ "cpu_atom", 10, "16-23" },
};

static struct pmc_event_spec parsed(const char *text)
{
	struct pmc_event_spec s;
	struct pmc_error err;

	if (pmc_event_parse(text, &s, &err) != 0) {
		fprintf(stderr, "parse %s: %s\n", text, err.message);
		exit(2);
	}
	return s;
}

T_CASE(spread_encoding)
{
	struct pmc_event_spec s = parsed("instructions:u"), out[2];

	T_EQ_U64(pmc__spread(&s, alder, 2, out), 2, "one part per core PMU");
	T_EQ_U64(out[0].type, PERF_TYPE_HARDWARE, "still a generic hardware event");
	T_EQ_U64(out[0].config, (4ull << 32) | PERF_COUNT_HW_INSTRUCTIONS, "cpu_core's type on top");
	T_EQ_U64(out[1].config, (10ull << 32) | PERF_COUNT_HW_INSTRUCTIONS, "cpu_atom's type on top");
	T_STR_EQ(out[0].name, "cpu_core/instructions/u", "perf's spelling, modifiers after");
	T_STR_EQ(out[1].pmu, "cpu_atom", "the part's PMU");
	T_EQ_U64(out[1].exclude_kernel, 1, "modifiers kept");

	s = parsed("L1-dcache-load-misses");
	T_EQ_U64(pmc__spread(&s, alder, 2, out), 2, "cache events spread too");
	T_EQ_U64(out[1].config, (10ull << 32) | s.config, "cache config keeps its low bits");
	T_STR_EQ(out[1].name, "cpu_atom/L1-dcache-load-misses/", "no modifiers, none added");
}

T_CASE(spread_leaves_the_rest)
{
	static const char *const alone[] = { "page-faults", "task-clock:u", "r01c4", "msr/tsc/" };
	struct pmc_event_spec s, out[2];

	for (size_t i = 0; i < sizeof(alone) / sizeof(alone[0]); i++) {
		if (strchr(alone[i], '/') && !pmc_machine_has_pmu("msr"))
			continue;
		s = parsed(alone[i]);
		T_EQ_U64(pmc__spread(&s, alder, 2, out), 1, "not a generic hardware event: one part");
		T_STR_EQ(out[0].name, s.name, "unchanged");
		T_EQ_U64(out[0].config, s.config, "unchanged config");
	}
	s = parsed("instructions");
	T_EQ_U64(pmc__spread(&s, alder, 1, out), 1, "one core PMU: nothing to spread");
	T_EQ_U64(out[0].config, PERF_COUNT_HW_INSTRUCTIONS, "no type added");
	s.config |= 4ull << 32;
	T_EQ_U64(pmc__spread(&s, alder, 2, out), 1, "a PMU type already given: kept");
}

static struct pmc_delta part(uint64_t value, uint64_t enabled, uint64_t running)
{
	struct pmc_delta d = { value, enabled, running, 0 };

	return d;
}

T_CASE(fold_sums_and_judges)
{
	struct pmc_delta p[2], d;

	/* The whole region on a P-core, then on an E-core. */
	p[0] = part(700, 1000000, 1000000);
	p[1] = part(0, 1000000, 0);
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.value, 700, "sum");
	T_EQ_U64(d.flags, 0, "one part ran all the time: complete");
	/* Migrated half way: the parts' running times add up. */
	p[0] = part(400, 1000000, 600000);
	p[1] = part(300, 1000000, 400000);
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.value, 700, "sum across core types");
	T_EQ_U64(d.running_ns, 1000000, "running covers enabled");
	T_EQ_U64(d.flags, 0, "complete");
	/* Read 3 us apart: the second part's window is shifted. */
	p[0] = part(400, 1000000, 600000);
	p[1] = part(300, 1003000, 397500);
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.flags, 0, "a read skew is not multiplexing");
	/* A part multiplexed out for a tenth of the region. */
	p[0] = part(400, 1000000, 500000);
	p[1] = part(300, 1000000, 400000);
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.flags, PMC_DELTA_MULTIPLEXED, "100 us uncovered: partial");
	p[0] = part(0, 1000000, 0);
	p[1] = part(0, 1000000, 0);
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.flags, PMC_DELTA_NOT_COUNTED, "never on a counter");
	p[0] = part(5, 10, 10);
	p[1] = part(0, 10, 0);
	p[1].flags = PMC_DELTA_NEGATIVE;
	pmc__fold(&d, p, 2);
	T_EQ_U64(d.flags & PMC_DELTA_NEGATIVE, PMC_DELTA_NEGATIVE, "a negative part is reported");
}

T_CASE(cpulist)
{
	cpu_set_t set;

	T_EQ_U64(pmc__parse_cpulist("0-3,8,10-11\n", &set), 0, "valid");
	T_EQ_U64((uint64_t)CPU_COUNT(&set), 7, "seven CPUs");
	T_CHECK(CPU_ISSET(8, &set) && !CPU_ISSET(9, &set) && CPU_ISSET(11, &set), "members");
	T_EQ_U64(pmc__parse_cpulist("", &set), 0, "empty: every CPU");
	T_EQ_U64((uint64_t)CPU_COUNT(&set), CPU_SETSIZE, "every CPU");
	T_EQ_U64((uint64_t)-pmc__parse_cpulist("3-1", &set), 1, "reversed range");
	T_EQ_U64((uint64_t)-pmc__parse_cpulist("0,,1", &set), 1, "empty item");
	T_EQ_U64((uint64_t)-pmc__parse_cpulist("0-", &set), 1, "open range");
	T_EQ_U64((uint64_t)-pmc__parse_cpulist("a", &set), 1, "not a number");
	T_EQ_U64((uint64_t)-pmc__parse_cpulist("99999", &set), 1, "beyond CPU_SETSIZE");
}

/* ---- fixture sysfs ------------------------------------------------------- */

static char root[64];

static void hybrid_tree(void)
{
	snprintf(root, sizeof(root), "/tmp/pmc-hybrid-XXXXXX");
	if (!mkdtemp(root)) {
		perror("mkdtemp");
		exit(2);
	}
	t_put(root, "cpu_atom/type", "10");
	t_put(root, "cpu_atom/cpus", "16-23");
	t_put(root, "cpu_core/type", "4");
	t_put(root, "cpu_core/cpus", "0-15");
	t_put(root, "cpu_core/format/event", "config:0-7");
	t_put(root, "software/type", "1");
	t_put(root, "breakpoint/type", "5");
	t_put(root, "uncore_imc_0/type", "12");
	t_put(root, "uncore_imc_0/cpumask", "0"); /* cpumask, not cpus: not a core PMU */
	t_put(root, "broken/type", "x");
	t_put(root, "broken/cpus", "0");
	pmc_event_set_sysfs_root(root);
}

static void drop_tree(void)
{
	char cmd[128];

	pmc_event_set_sysfs_root(NULL);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", root);
}

T_CASE(core_pmus_found)
{
	struct pmc_core_pmu core[4];
	size_t n;

	hybrid_tree();
	n = pmc_machine_core_pmus(core, 4);
	drop_tree();
	T_EQ_U64(n, 2, "cpu_core and cpu_atom; not the uncore PMU, not the broken one");
	T_STR_EQ(core[0].name, "cpu_core", "sorted by type");
	T_EQ_U64(core[0].type, 4, "type");
	T_STR_EQ(core[0].cpus, "0-15", "cpus, without the newline");
	T_STR_EQ(core[1].name, "cpu_atom", "second");
	n = pmc_machine_core_pmus(core, 4);
	T_CHECK(n <= 1, "this machine (and the lane) has at most one core PMU: %zu", n);
}

/*
 * On the fixture tree the open reaches the real kernel with the spread
 * events.  Here (no hardware PMU) the kernel refuses them; the error must
 * name the part and what the kernel needs.  Software events beside them are
 * not spread.
 */
T_CASE(open_spread_reaches_kernel)
{
	struct pmc_event_spec specs[2];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	size_t n;
	int rc;

	T_EQ_U64(pmc_event_parse_list("page-faults,instructions:u", specs, 2, &n, &err), 0,
		 "parse");
	hybrid_tree();
	rc = pmc_counters_open(&set, specs, n, 0, &err);
	drop_tree();
	if (rc == 0) {
		/* A machine with a core PMU whose type is 4 or 10 took it. */
		T_EQ_U64(pmc_counters_count(set), 2, "two events for the caller");
		T_STR_EQ(pmc_counters_part_pmu(set, 1), "cpu_core", "part 1 on cpu_core");
		pmc_counters_close(set);
		return;
	}
	printf("refused: %s\n", err.message);
	T_CHECK(strstr(err.message, "cpu_core/instructions/u") != NULL, "names the part: %s",
		err.message);
	T_CHECK(strstr(err.message, "hardware PMU") || strstr(err.message, "config bits 32-63"),
		"says why: %s", err.message);
}

T_CASE(too_many_after_spreading)
{
	struct pmc_event_spec specs[20];
	struct pmc_counters *set = NULL;
	struct pmc_error err;
	int rc;

	for (int i = 0; i < 20; i++)
		specs[i] = parsed("instructions");
	hybrid_tree();
	rc = pmc_counters_open(&set, specs, 20, 0, &err);
	drop_tree();
	T_EQ_U64((uint64_t)-rc, (uint64_t)-PMC_E_TOO_MANY, "20 events x 2 core PMUs > 32");
	T_CHECK(strstr(err.message, "2 core PMUs") != NULL, "says why: %s", err.message);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
