/* SPDX-License-Identifier: MIT */
/*
 * The sim backend's pure parts: callgrind dump parsing (column order by
 * name, omitted trailing zeros, summary over totals, broken files), the
 * generic-event -> callgrind mapping table, and the sim: event syntax.
 */
#include <pmcheck/pmcheck.h>

#include "../t.h"

#define HEADER                                                                 \
	"version: 1\ncreator: callgrind-3.19.0\npid: 42\ncmd:  ./x\npart: 3\n\n" \
	"desc: I1 cache: 32768 B, 64 B, 8-way associative\n"                   \
	"desc: D1 cache: 32768 B, 64 B, 8-way associative\n"                   \
	"desc: LL cache: 8388608 B, 64 B, 16-way associative\n"                \
	"desc: Timerange: Basic block 30500 - 33759\n"                          \
	"desc: Trigger: Client Request: pmcheck-42-3\n\n"

static int parse(const char *text, struct pmc_sim_dump *d, struct pmc_error *err)
{
	return pmc_sim_dump_parse("dump", text, strlen(text), d, err);
}

T_CASE(dump_all_columns)
{
	struct pmc_sim_dump d;
	struct pmc_error err;
	const char *text = HEADER
		"events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
		"fl= (1) x.c\nfn= (1) main\n0 5 1 1\n"
		"summary: 19588 507 284 24 14 0 22 12 0 3189 37 10 8\n"
		"totals: 1 2 3 4 5 6 7 8 9 10 11 12 13\n";
	static const uint64_t want[] = { 19588, 507, 284, 24, 14, 0, 22, 12, 0, 3189, 37, 10, 8 };

	T_CHECK(parse(text, &d, &err) == 0, "parse: %s", err.message);
	for (unsigned c = 0; c < PMC_SIM_NCOLUMNS; c++)
		T_CHECK(d.totals[c] == want[c], "%s: %" PRIu64 " != %" PRIu64,
			pmc_sim_column_name(c), d.totals[c], want[c]);
	T_CHECK(!strcmp(d.trigger, "Client Request: pmcheck-42-3"), "trigger \"%s\"", d.trigger);
	T_CHECK(strstr(d.caches, "LL cache: 8388608 B") != NULL, "caches \"%s\"", d.caches);
	T_CHECK(d.present == (1u << PMC_SIM_NCOLUMNS) - 1, "present %#x", d.present);
}

/* callgrind drops trailing zero columns from totals: they read as 0. */
T_CASE(dump_trailing_zeros_omitted)
{
	struct pmc_sim_dump d;
	struct pmc_error err;
	const char *text = HEADER
		"events: Ir Dr Dw I1mr D1mr D1mw ILmr DLmr DLmw Bc Bcm Bi Bim\n"
		"totals: 6019 2 9 2 0 0 2 0 0 1000 10\n";

	T_CHECK(parse(text, &d, &err) == 0, "parse: %s", err.message);
	T_CHECK(d.totals[PMC_SIM_IR] == 6019 && d.totals[PMC_SIM_BC] == 1000 &&
			d.totals[PMC_SIM_BCM] == 10 && d.totals[PMC_SIM_BI] == 0 &&
			d.totals[PMC_SIM_BIM] == 0,
		"Ir %" PRIu64 " Bc %" PRIu64 " Bcm %" PRIu64 " Bi %" PRIu64, d.totals[PMC_SIM_IR],
		d.totals[PMC_SIM_BC], d.totals[PMC_SIM_BCM], d.totals[PMC_SIM_BI]);
}

/* Columns are found by name, whatever the order and whatever else is there;
 * summary: wins over totals: (which misses costs; docs/backends.md). */
T_CASE(dump_columns_by_name)
{
	struct pmc_sim_dump d;
	struct pmc_error err;
	const char *text = "events: Bc Ir sysTime Dr\nsummary: 70 1000 55 300\ntotals: 9 9 9 9\n";

	T_CHECK(parse(text, &d, &err) == 0, "parse: %s", err.message);
	T_CHECK(d.totals[PMC_SIM_IR] == 1000 && d.totals[PMC_SIM_BC] == 70 &&
			d.totals[PMC_SIM_DR] == 300 && d.totals[PMC_SIM_DW] == 0,
		"Ir %" PRIu64 " Bc %" PRIu64 " Dr %" PRIu64, d.totals[PMC_SIM_IR],
		d.totals[PMC_SIM_BC], d.totals[PMC_SIM_DR]);
	T_CHECK(d.present == (1u << PMC_SIM_IR | 1u << PMC_SIM_BC | 1u << PMC_SIM_DR),
		"present %#x", d.present);
}

/* A dump without summary: (another writer of the format): totals: counts. */
T_CASE(dump_totals_without_summary)
{
	struct pmc_sim_dump d;
	struct pmc_error err;
	const char *text = "events: Ir Dr\ntotals: 1000 300\n";

	T_CHECK(parse(text, &d, &err) == 0, "parse: %s", err.message);
	T_CHECK(d.totals[PMC_SIM_IR] == 1000 && d.totals[PMC_SIM_DR] == 300, "Ir %" PRIu64 " Dr %" PRIu64,
		d.totals[PMC_SIM_IR], d.totals[PMC_SIM_DR]);
}

T_CASE(dump_broken_files)
{
	static const struct {
		const char *text, *want;
	} table[] = {
		{ "", "no events: line" },
		{ "events: Ir\n", "no totals: line" },
		{ "totals: 5\nevents: Ir\n", "dump:1: totals: before the events: line" },
		{ "events: Ir Dr\ntotals: 1 2 3\n", "dump:2: totals: has more figures" },
		{ "events: Ir\ntotals: 12x\n", "dump:2: expected a count" },
		{ "events: Ir\ntotals: 99999999999999999999999\n", "dump:2: count out of range" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct pmc_sim_dump d;
		struct pmc_error err;

		T_CHECK(parse(table[i].text, &d, &err) == PMC_E_SYNTAX, "\"%s\" must fail",
			table[i].text);
		T_CHECK(strstr(err.message, table[i].want) != NULL, "\"%s\": \"%s\" lacks \"%s\"",
			table[i].text, err.message, table[i].want);
	}
}

static unsigned mask_of(const char *event, int *rc, struct pmc_error *err)
{
	struct pmc_event_spec s;
	unsigned m = 0;

	*rc = pmc_event_parse(event, &s, err);
	if (*rc == 0)
		*rc = pmc_sim_columns(&s, &m, err);
	return m;
}

#define C(x) (1u << PMC_SIM_##x)

T_CASE(mapping_table)
{
	static const struct {
		const char *event;
		unsigned mask;
	} table[] = {
		{ "instructions", C(IR) },
		{ "instructions:u", C(IR) },
		{ "branches", C(BC) | C(BI) },
		{ "branch-misses", C(BCM) | C(BIM) },
		{ "cache-references", C(I1MR) | C(D1MR) | C(D1MW) },
		{ "cache-misses", C(ILMR) | C(DLMR) | C(DLMW) },
		{ "L1-dcache-loads", C(DR) },
		{ "L1-dcache-load-misses", C(D1MR) },
		{ "L1-dcache-stores", C(DW) },
		{ "L1-dcache-store-misses", C(D1MW) },
		{ "L1-icache-loads", C(IR) },
		{ "L1-icache-load-misses", C(I1MR) },
		{ "LLC-loads", C(I1MR) | C(D1MR) },
		{ "LLC-load-misses", C(ILMR) | C(DLMR) },
		{ "LLC-stores", C(D1MW) },
		{ "LLC-store-misses", C(DLMW) },
		{ "branch-loads", C(BC) | C(BI) },
		{ "branch-load-misses", C(BCM) | C(BIM) },
		{ "sim:Bc", C(BC) },
		{ "sim:Bim+Bcm", C(BCM) | C(BIM) },
		{ "sim:Ir+Dr+Dw", C(IR) | C(DR) | C(DW) },
		/* not a column: the calls callgrind counts to the function */
		{ "calls:malloc", PMC_SIM_CALLS_MASK },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct pmc_error err;
		int rc;
		unsigned m = mask_of(table[i].event, &rc, &err);

		T_CHECK(rc == 0 && m == table[i].mask, "%s: rc %d mask %#x, want %#x (%s)",
			table[i].event, rc, m, table[i].mask, rc ? err.message : "");
	}
}

/* No simulated equivalent: refused with the reason, never mapped to zero. */
T_CASE(mapping_unsupported)
{
	static const struct {
		const char *event, *why;
	} table[] = {
		{ "cycles", "not cycles" },
		{ "ref-cycles", "not cycles" },
		{ "dTLB-load-misses", "TLBs" },
		{ "L1-dcache-prefetches", "prefetches" },
		{ "task-clock", "valgrind's own activity" },
		{ "page-faults", "valgrind's own activity" },
		{ "instructions:k", "kernel-only" },
		{ "r1c4", "real PMU" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct pmc_error err;
		int rc;

		mask_of(table[i].event, &rc, &err);
		if (rc == PMC_E_NO_PMU || rc == PMC_E_NO_SYMBOL)
			continue; /* not parseable on this machine at all */
		T_CHECK(rc == PMC_E_UNSUPPORTED, "%s: rc %d, want PMC_E_UNSUPPORTED", table[i].event, rc);
		/* The message names the event (its canonical spelling begins
		 * like the input) and the remedy. */
		T_CHECK(strstr(err.message, table[i].why) && strstr(err.message, "--backend=perf") &&
				!strncmp(strchr(err.message, '"') + 1, table[i].event,
					 strlen(table[i].event) < 8 ? strlen(table[i].event) : 8),
			"%s: \"%s\" lacks \"%s\", the event or the remedy", table[i].event,
			err.message, table[i].why);
	}
	{
		static int watched;
		struct pmc_event_spec s;
		struct pmc_error err;

		T_CHECK(pmc_event_breakpoint(&s, &watched, 4, PMC_BP_W, &err) == 0, "breakpoint spec");
		T_CHECK(pmc_sim_columns(&s, &(unsigned){ 0 }, &err) == PMC_E_UNSUPPORTED &&
				strstr(err.message, "translated"),
			"breakpoint on sim: %s", err.message);
	}
}

T_CASE(sim_syntax)
{
	static const struct {
		const char *text;
		int rc;
		const char *name_or_msg;
	} table[] = {
		{ "sim:Ir", 0, "sim:Ir" },
		{ "sim:Bim+Bc", 0, "sim:Bc+Bim" }, /* canonical: callgrind's column order */
		{ "sim:", PMC_E_SYNTAX, "expected a callgrind event" },
		{ "sim:ir", PMC_E_UNKNOWN_EVENT, "case matters" },
		{ "sim:Ir+", PMC_E_SYNTAX, "after '+'" },
		{ "sim:Ir+Ir", PMC_E_SYNTAX, "named twice" },
		{ "sim:Cycles", PMC_E_UNKNOWN_EVENT, "unknown callgrind event \"Cycles\"" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct pmc_event_spec s;
		struct pmc_error err;
		int rc = pmc_event_parse(table[i].text, &s, &err);

		T_CHECK(rc == table[i].rc, "%s: rc %d want %d (%s)", table[i].text, rc, table[i].rc,
			rc ? err.message : s.name);
		if (rc == 0)
			T_CHECK(!strcmp(s.name, table[i].name_or_msg) && s.kind == PMC_KIND_SIM,
				"%s: name \"%s\"", table[i].text, s.name);
		else if (rc == table[i].rc)
			T_CHECK(strstr(err.message, table[i].name_or_msg) != NULL, "%s: \"%s\"",
				table[i].text, err.message);
	}
	{
		/* In a list, sim: ends at the comma. */
		struct pmc_event_spec s[4];
		struct pmc_error err;
		size_t n;

		T_CHECK(pmc_event_parse_list("sim:Bc+Bi,instructions", s, 4, &n, &err) == 0 && n == 2 &&
				!strcmp(s[0].name, "sim:Bc+Bi"),
			"list: %s", err.message);
	}
}

/* A sim: event is refused by the perf backend with the remedy. */
T_CASE(sim_event_on_perf)
{
	struct pmc_event_spec s;
	struct pmc_counters *set;
	struct pmc_error err;

	T_CHECK(pmc_event_parse("sim:Ir", &s, &err) == 0, "parse");
	T_CHECK(pmc_counters_open(&set, &s, 1, 0, &err) == PMC_E_UNSUPPORTED &&
			strstr(err.message, "--backend=sim"),
		"perf open of sim:Ir: %s", err.message);
}

/* Outside valgrind a sim set cannot open, and says how to get one. */
T_CASE(sim_open_outside_valgrind)
{
	struct pmc_event_spec s;
	struct pmc_counters *set;
	struct pmc_error err;

	T_CHECK(pmc_event_parse("instructions", &s, &err) == 0, "parse");
	T_CHECK(pmc_sim_active() == 0, "not under the simulator");
	T_CHECK(pmc_counters_open(&set, &s, 1, PMC_OPEN_SIM, &err) == PMC_E_NO_SIM &&
			strstr(err.message, "--backend=sim") && strstr(err.message, "pmcheck sim"),
		"sim open outside valgrind: %s", err.message);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
