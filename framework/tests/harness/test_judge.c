/* SPDX-License-Identifier: MIT */
/*
 * The harness's pure logic with synthetic samples: statistics, every
 * expectation kind at and beyond its edges, multiplexed and never-counted
 * samples (inconclusive, never pass), budgets (unbudgeted, per iteration),
 * the case verdict and the run's exit status.
 */
#include <inttypes.h>
#include <math.h>

#include "../t.h"
#include "harness_int.h"
#include "runner_int.h"
#include "summary_int.h"
#include "../../src/util/arith.h"

/* A region of one or two events from value arrays; flags/times optional. */
static void region_of(struct pmc__region *r, size_t nev, size_t n, const uint64_t *a,
		      const uint64_t *b, const unsigned *flags_a)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->name = "r";
	r->iterations = 1;
	r->nev = nev;
	for (i = 0; i < n; i++) {
		struct pmc_measurement m = { .n = nev };

		m.d[0] = (struct pmc_delta){ a[i], 1000, 1000, flags_a ? flags_a[i] : 0 };
		if (flags_a && (flags_a[i] & PMC_DELTA_MULTIPLEXED))
			m.d[0].running_ns = 250;
		if (flags_a && (flags_a[i] & PMC_DELTA_NOT_COUNTED))
			m.d[0].running_ns = 0;
		if (nev > 1)
			m.d[1] = (struct pmc_delta){ b[i], 1000, 1000, 0 };
		pmc__region_append(r, &m);
	}
}

static struct pmc__check expect(enum pmc_expect_kind k, uint64_t lo, uint64_t hi)
{
	struct pmc__check c;

	memset(&c, 0, sizeof(c));
	c.e = (struct pmc_expectation){ .kind = k, .region = "r", .event = "ev", .lo = lo,
					.hi = hi, .file = "x.c", .line = 1 };
	return c;
}

T_CASE(stats_odd_even_and_large)
{
	static const uint64_t odd[] = { 5, 1, 3 }, even[] = { 4, 1, 3, 2 };
	uint64_t many[200];
	struct pmc__region r;
	struct pmc__stats s;

	region_of(&r, 1, 3, odd, NULL, NULL);
	pmc__stats_of(&r, 0, &s);
	T_EQ_U64(s.min, 1, "min");
	T_EQ_U64(s.max, 5, "max");
	T_CHECK(s.median == 3 && s.mean == 3, "median %g mean %g", s.median, s.mean);
	pmc__region_release(&r);
	region_of(&r, 1, 4, even, NULL, NULL);
	pmc__stats_of(&r, 0, &s);
	T_CHECK(s.median == 2.5, "even median %g", s.median);
	pmc__region_release(&r);
	/* More samples than the on-stack sort buffer holds. */
	for (size_t i = 0; i < 200; i++)
		many[i] = 1000 - i;
	region_of(&r, 1, 200, many, NULL, NULL);
	pmc__stats_of(&r, 0, &s);
	T_EQ_U64(s.min, 801, "min of 200");
	T_CHECK(s.median == 900.5, "median of 200: %g", s.median);
	pmc__region_release(&r);
	/* An empty region has n = 0 and no figure. */
	memset(&r, 0, sizeof(r));
	r.nev = 1;
	pmc__stats_of(&r, 0, &s);
	T_EQ_U64(s.n, 0, "empty n");
}

T_CASE(bounds_at_and_past_the_edges)
{
	static const uint64_t v[] = { 1000, 1010, 1200 };
	struct pmc__region r;
	struct pmc__check c;

	region_of(&r, 1, 3, v, NULL, NULL);
	/* min is the judged figure by default: 1000. */
	c = expect(PMC_EXPECT_KIND_LE, 0, 1000);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS, "LE at the edge passes: %s", c.message);
	c = expect(PMC_EXPECT_KIND_LE, 0, 999);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL, "LE one past fails");
	T_CHECK(strstr(c.message, "measured 1000") && strstr(c.message, "<= 999") &&
			strstr(c.message, "over by 1") && strstr(c.message, "region \"r\"") &&
			strstr(c.message, "ev"),
		"message has region, event, bound, value, delta: %s", c.message);
	c = expect(PMC_EXPECT_KIND_LE, 0, 1100);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MAX, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL && c.measured == 1200, "max judged: %g", c.measured);
	c = expect(PMC_EXPECT_KIND_GE, 1001, 0);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "under by 1"), "%s", c.message);
	c = expect(PMC_EXPECT_KIND_GE, 1010, 0);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MEDIAN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS, "GE median at the edge: %s", c.message);
	c = expect(PMC_EXPECT_KIND_RANGE, 990, 1000);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS, "RANGE inclusive");
	c = expect(PMC_EXPECT_KIND_EQ, 1001, 1001);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "= 1001"), "%s", c.message);
	/* A zero bound: no percentage (division by zero), still a delta. */
	c = expect(PMC_EXPECT_KIND_LE, 0, 0);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "over by 1000") &&
			!strstr(c.message, "inf"),
		"%s", c.message);
	pmc__region_release(&r);
}

T_CASE(large_counts_stay_exact)
{
	/* 2^53 + 1 is not a double; the judged figure is, so bounds up to 2^53
	 * are exact and the counts in samples stay integers. */
	static const uint64_t v[] = { 1ULL << 40, (1ULL << 40) + 1 };
	struct pmc__region r;
	struct pmc__check c;

	region_of(&r, 1, 2, v, NULL, NULL);
	c = expect(PMC_EXPECT_KIND_EQ, 1ULL << 40, 1ULL << 40);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS, "%s", c.message);
	c = expect(PMC_EXPECT_KIND_EQ, 1ULL << 40, 1ULL << 40);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MAX, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL, "one count off at 2^40 is seen");
	pmc__region_release(&r);
}

T_CASE(ratios)
{
	static const uint64_t miss[] = { 10, 30 }, inst[] = { 1000, 1000 }, zero[] = { 0, 0 };
	struct pmc__region r;
	struct pmc__check c;

	region_of(&r, 2, 2, miss, inst, NULL);
	c = expect(PMC_EXPECT_KIND_RATIO_LE, 0, 0);
	c.e.per = "inst";
	c.e.rhi = 0.01;
	pmc__judge(&c, &r, 0, 1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS && c.measured == 0.01, "min ratio %g", c.measured);
	pmc__judge(&c, &r, 0, 1, PMC_STAT_MAX, NULL);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "ev per inst"), "%s", c.message);
	c = expect(PMC_EXPECT_KIND_RATIO_RANGE, 0, 0);
	c.e.per = "inst";
	c.e.rlo = 0.015;
	c.e.rhi = 0.025;
	pmc__judge(&c, &r, 0, 1, PMC_STAT_MEDIAN, NULL);
	T_CHECK(c.status == PMC__CHECK_PASS && fabs(c.measured - 0.02) < 1e-12, "median ratio %g",
		c.measured);
	pmc__region_release(&r);
	region_of(&r, 2, 2, miss, zero, NULL);
	c = expect(PMC_EXPECT_KIND_RATIO_GE, 0, 0);
	c.e.per = "inst";
	pmc__judge(&c, &r, 0, 1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_ERROR && strstr(c.message, "denominator"), "%s", c.message);
	pmc__region_release(&r);
}

T_CASE(multiplexed_and_never_counted_are_inconclusive)
{
	static const uint64_t v[] = { 100, 100, 100 };
	static const unsigned mux[] = { 0, PMC_DELTA_MULTIPLEXED, 0 };
	static const unsigned never[] = { PMC_DELTA_NOT_COUNTED, 0, 0 };
	struct pmc__region r;
	struct pmc__check c;

	/* Even a value that is within bounds must not pass. */
	region_of(&r, 1, 3, v, NULL, mux);
	c = expect(PMC_EXPECT_KIND_EQ, 100, 100);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_INCONCLUSIVE, "multiplexed: %s", c.message);
	T_CHECK(strstr(c.message, "1 multiplexed") && strstr(c.message, "25%"), "%s", c.message);
	pmc__region_release(&r);
	region_of(&r, 1, 3, v, NULL, never);
	c = expect(PMC_EXPECT_KIND_LE, 0, 1000);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_INCONCLUSIVE && strstr(c.message, "1 of 3 samples never counted"),
		"never counted: %s", c.message);
	T_CHECK(pmc__verdict_from_checks(&c, 1, false, NULL, 0) == PMC_INCONCLUSIVE, "verdict");
	pmc__region_release(&r);
}

T_CASE(budgets)
{
	static const uint64_t v[] = { 6000, 6000 };
	struct pmc_budget b = { .kind = PMC_BOUND_RANGE, .lo = 550, .hi = 600,
				.per_iteration = 1, .source = "hwdb/x.ini:12" };
	struct pmc__region r;
	struct pmc__check c;

	region_of(&r, 1, 2, v, NULL, NULL);
	c = expect(PMC_EXPECT_KIND_BUDGET, 0, 0);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, NULL);
	T_CHECK(c.status == PMC__CHECK_UNBUDGETED && strstr(c.message, "unbudgeted"), "%s",
		c.message);
	T_CHECK(pmc__verdict_from_checks(&c, 1, false, NULL, 0) == PMC_UNBUDGETED,
		"unbudgeted is never a pass");
	T_CHECK(pmc__verdict_from_checks(&c, 1, true, NULL, 0) == PMC_FAIL, "--strict fails");
	r.iterations = 10; /* 600 per iteration */
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, &b);
	T_CHECK(c.status == PMC__CHECK_PASS && c.measured == 600, "per iteration: %s", c.message);
	b.hi = 599;
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, &b);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "hwdb/x.ini:12"),
		"budget source named: %s", c.message);
	pmc__region_release(&r);
}

T_CASE(verdict_and_exit_status)
{
	struct pmc__check c[3];
	size_t counts[PMC__NVERDICTS] = { 0 };
	char reason[600];

	memset(c, 0, sizeof(c));
	c[0].status = PMC__CHECK_PASS;
	c[1].status = PMC__CHECK_INCONCLUSIVE;
	c[2].status = PMC__CHECK_FAIL;
	strcpy(c[2].message, "the failing one");
	T_CHECK(pmc__verdict_from_checks(c, 3, false, reason, sizeof(reason)) == PMC_FAIL, "fail wins");
	T_EQ_STR(reason, "the failing one", "reason is the worst check");
	c[2].status = PMC__CHECK_ERROR;
	T_CHECK(pmc__verdict_from_checks(c, 3, false, NULL, 0) == PMC_ERROR, "error wins");
	T_CHECK(pmc__verdict_from_checks(c, 0, false, NULL, 0) == PMC_PASS, "no checks: pass");
	/* Unbudgeted ranks below inconclusive, above a pass, though numbered last. */
	c[2].status = PMC__CHECK_UNBUDGETED;
	T_CHECK(pmc__verdict_from_checks(c, 3, false, NULL, 0) == PMC_INCONCLUSIVE, "inconclusive wins");
	c[1].status = PMC__CHECK_PASS;
	T_CHECK(pmc__verdict_from_checks(c, 3, false, NULL, 0) == PMC_UNBUDGETED, "unbudgeted");
	T_CHECK(pmc__verdict_rank(PMC_UNBUDGETED) > pmc__verdict_rank(PMC_KNOWN_ISSUE) &&
			pmc__verdict_rank(PMC_UNBUDGETED) < pmc__verdict_rank(PMC_INCONCLUSIVE) &&
			pmc__verdict_rank(PMC_FAIL) > pmc__verdict_rank(PMC_INCONCLUSIVE),
		"ranks");

	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_PASS, "empty run");
	counts[PMC_SKIP] = 2;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_SKIP, "only skips");
	counts[PMC_PASS] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_PASS, "pass + skip");
	counts[PMC_KNOWN_ISSUE] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_PASS, "known issues pass");
	counts[PMC_UNBUDGETED] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_UNBUDGETED, "unbudgeted is not a pass");
	counts[PMC_INCONCLUSIVE] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_INCONCLUSIVE, "inconclusive");
	counts[PMC_FAIL] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_FAIL, "fail");
	counts[PMC_ERROR] = 1;
	T_EQ_U64(pmc__exit_status(counts), PMC_EXIT_ERROR, "error");
}

T_CASE(filters)
{
	T_CHECK(pmc__filter_match(NULL, "a.b"), "no filter");
	T_CHECK(pmc__filter_match("a.*", "a.b"), "glob");
	T_CHECK(!pmc__filter_match("a.*", "b.a"), "glob miss");
	T_CHECK(pmc__filter_match("x.y,a.b", "a.b"), "list");
	T_CHECK(!pmc__filter_match("*,-a.b", "a.b"), "exclusion");
	T_CHECK(pmc__filter_match("-a.b", "c.d"), "only exclusions include the rest");
	T_CHECK(!pmc__filter_match("-a.*", "a.z"), "exclusion glob");
	T_CHECK(pmc__filter_match("a.b,", "a.b"), "trailing comma");
}

T_CASE(numbers_in_messages)
{
	static const uint64_t v[] = { 3000000, 3000000 };
	struct pmc_budget b = { .kind = PMC_BOUND_RANGE, .lo = 100, .hi = 240034,
				.source = "hwdb/x.ini:3" };
	struct pmc__region r;
	struct pmc__check c;
	char buf[64];

	pmc__fmt_num(buf, sizeof(buf), 2759660.0);
	T_EQ_STR(buf, "2759660", "a count is an integer");
	pmc__fmt_num(buf, sizeof(buf), 2759660.5);
	T_EQ_STR(buf, "2759660.5", "a large fraction keeps its digits");
	pmc__fmt_num(buf, sizeof(buf), 0.125);
	T_EQ_STR(buf, "0.125", "a small fraction");
	pmc__fmt_num(buf, sizeof(buf), NAN);
	T_EQ_STR(buf, "-", "no figure");
	region_of(&r, 1, 2, v, NULL, NULL);
	c = expect(PMC_EXPECT_KIND_BUDGET, 0, 0);
	pmc__judge(&c, &r, 0, -1, PMC_STAT_MIN, &b);
	T_CHECK(c.status == PMC__CHECK_FAIL && strstr(c.message, "over by 2759966 (") &&
			!strstr(c.message, "e+") && strstr(c.message, "% of the budget)"),
		"range bound, integers, one percentage against the budget: %s", c.message);
	/* Unbudgeted where the suite has budgets under other keys: a failure. */
	c.status = PMC__CHECK_UNBUDGETED;
	c.gate = true;
	T_CHECK(pmc__verdict_from_checks(&c, 1, false, NULL, 0) == PMC_FAIL, "gate fails unbudgeted");
	pmc__region_release(&r);
}

/* A result record survives JSON both ways; a broken one is refused with
 * the field named. */
T_CASE(result_record_round_trip)
{
	static uint64_t vals[] = { 7, 9 };
	struct pmc__stat_rec st = { .label = (char *)"calls:f", .n = 2, .min = 7, .max = 9,
				    .median = 8, .mean = 8, .values = vals, .nvalues = 2 };
	struct pmc__region_rec g = { .name = (char *)"r", .iterations = 1, .samples = 2, .nev = 1,
				     .ev = &st };
	struct pmc__check_rec chk = { .kind = PMC_EXPECT_KIND_BUDGET, .status = PMC__CHECK_UNBUDGETED,
				      .region = (char *)"r", .event = (char *)"calls:f",
				      .file = (char *)"x.c", .line = 3, .message = (char *)"m",
				      .measured = 7, .lo = NAN, .hi = NAN, .samples = 2, .gate = true };
	struct pmc__result in = { .name = (char *)"s.t", .suite = (char *)"s", .test = (char *)"t",
				  .file = (char *)"x.c", .line = 1, .verdict = PMC_FAIL,
				  .reason = (char *)"why", .backend = "sim", .measuring = true,
				  .nregions = 1, .regions = &g, .nchecks = 1, .checks = &chk };
	struct pmc__result out;
	json_t *o = pmc__result_to_json(&in);
	char why[512];

	T_CHECK(o && pmc__result_from_json(o, &out, "x", why, sizeof(why)) == 0, "read back: %s", why);
	T_CHECK(out.verdict == PMC_FAIL && !strcmp(out.reason, "why") && out.measuring &&
			!strcmp(out.backend, "sim"), "case fields");
	T_CHECK(out.nregions == 1 && out.regions[0].nev == 1 && out.regions[0].ev[0].nvalues == 2 &&
			out.regions[0].ev[0].values[1] == 9, "samples");
	T_CHECK(out.nchecks == 1 && out.checks[0].kind == PMC_EXPECT_KIND_BUDGET &&
			out.checks[0].status == PMC__CHECK_UNBUDGETED && out.checks[0].gate &&
			isnan(out.checks[0].lo) && out.checks[0].measured == 7, "check fields");
	pmc__result_release(&out);
	json_object_set_new(json_array_get(json_object_get(o, "checks"), 0), "status",
			    json_string("maybe"));
	T_CHECK(pmc__result_from_json(o, &out, "f.json: cases[0]", why, sizeof(why)) != 0 &&
			!strcmp(why, "f.json: cases[0].checks[0].status: unknown status \"maybe\""),
		"%s", why);
	json_object_set_new(o, "regions", json_string("none"));
	T_CHECK(pmc__result_from_json(o, &out, "f.json: cases[0]", why, sizeof(why)) != 0 &&
			!strcmp(why, "f.json: cases[0].regions: expected an array, found a string"),
		"%s", why);
	json_object_del(o, "name");
	T_CHECK(pmc__result_from_json(o, &out, "f.json: cases[0]", why, sizeof(why)) != 0 &&
			!strcmp(why, "f.json: cases[0].name: missing"), "%s", why);
	json_decref(o);
}

/* The text a case writes for its runner (pmc__jw, no jansson): what JSON
 * must escape, invalid UTF-8 kept as the text \xHH (jansson refused such a
 * string, and the key it was under was lost), figures read back exactly,
 * non-finite ones as null, and a result that is the one its tree gives. */
/* What a case wrote (a reason, a check's message, a note, a region's
 * name) reaches a terminal with its control characters shown, never sent:
 * an escape sequence in a note must not drive the terminal. */
T_CASE(terminal_shows_control_characters)
{
	char *notes[] = { (char *)"clear \x1b[2J then\nsecond line" };
	uint64_t vals[] = { 5 };
	struct pmc__stat_rec st = { .label = (char *)"instructions:u", .n = 1, .min = 5, .max = 5, .median = 5,
				    .values = vals, .nvalues = 1 };
	struct pmc__region_rec g = { .name = (char *)"r\x1b]0;t\x07", .iterations = 1, .samples = 1, .nev = 1, .ev = &st };
	struct pmc__check_rec chk = { .kind = PMC_EXPECT_KIND_BUDGET, .status = PMC__CHECK_FAIL,
				      .region = g.name, .event = (char *)"instructions:u", .file = (char *)"x.c",
				      .line = 3, .message = (char *)"bell \a del \x7f tab \t", .samples = 1 };
	struct pmc__result in = { .name = (char *)"s.t", .suite = (char *)"s", .test = (char *)"t",
				  .verdict = PMC_ERROR, .reason = (char *)"crashed \x1b[31mred",
				  .nregions = 1, .regions = &g, .nchecks = 1, .checks = &chk,
				  .nnotes = 1, .notes = notes };
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	T_CHECK(f, "a memory stream");
	pmc__print_case_line(f, &in, 1, 1, false, NULL);
	pmc__print_case_details(f, &in, true, NULL);
	fclose(f);
	for (size_t i = 0; i < size; i++)
		T_CHECK(buf[i] == '\n' || buf[i] == '\t' || ((unsigned char)buf[i] >= 0x20 && buf[i] != 0x7f),
			"byte %zu (0x%02x) of the report is a control character: %s", i, (unsigned char)buf[i], buf);
	T_CHECK(strstr(buf, "crashed \\x1b[31mred"), "the reason, shown: %s", buf);
	T_CHECK(strstr(buf, "r\\x1b]0;t\\x07"), "the region's name, shown: %s", buf);
	T_CHECK(strstr(buf, "bell \\x07 del \\x7f tab \t"), "the check's message, shown: %s", buf);
	T_CHECK(strstr(buf, "note: clear \\x1b[2J then\n              second line"),
		"the note, its second line under the indent: %s", buf);
	free(buf);
}

/* The run's header names the sim key once; a case of that key writes it
 * "<key>" in its lines, and a case of another key keeps its own whole. */
T_CASE(case_lines_write_the_run_key_short)
{
	static const char key[] = "sim-x86_64-valgrind-3.19.0-I1-32k-8w-D1-32k-8w-LL-8M-16w-64B-gcc-12.2.0-O";
	char msg[512], *notes[1];
	struct pmc__check_rec chk = { .kind = PMC_EXPECT_KIND_BUDGET, .status = PMC__CHECK_FAIL,
				      .region = (char *)"loop", .event = (char *)"instructions:u",
				      .message = msg, .samples = 1 };
	struct pmc__result in = { .name = (char *)"s.t", .suite = (char *)"s", .test = (char *)"t",
				  .verdict = PMC_FAIL, .reason = msg, .nchecks = 1, .checks = &chk,
				  .nnotes = 1, .notes = notes, .sim_profile = (char *)key };
	const char *other[] = { key, "sim-x86_64-valgrind-3.25.0-other" };

	snprintf(msg, sizeof(msg), "over by 900; budget from hw/budgets/%s/s.ini:2", key);
	notes[0] = msg;
	for (size_t k = 0; k < 2; k++) {
		char *buf = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&buf, &size);
		const char *at;
		size_t seen = 0;

		T_CHECK(f, "a memory stream");
		pmc__print_case_line(f, &in, 1, 1, false, other[k]);
		pmc__print_case_details(f, &in, false, other[k]);
		fclose(f);
		for (at = buf; (at = strstr(at, key)) != NULL; at++)
			seen++;
		if (k == 0)
			T_CHECK(seen == 0 && strstr(buf, "budget from hw/budgets/<key>/s.ini:2"),
				"the run's key written <key> (%zu whole): %s", seen, buf);
		else
			T_CHECK(seen == 2 && !strstr(buf, "<key>"),
				"a case of another key than the run's keeps its own (%zu of 2): %s", seen, buf);
		free(buf);
	}
}

T_CASE(result_text_reads_back)
{
	static const char note[] = "quote \" backslash \\ tab \t nl \n bell \a bad \xff\xfe ok \xc3\xa9 \xf0\x9f\x98\x80";
	static uint64_t vals[] = { 1, UINT64_C(9007199254740993) };
	char *notes[] = { (char *)note };
	struct pmc__stat_rec st = { .label = (char *)"instructions:u", .n = 2, .min = 1,
				    .max = UINT64_C(9007199254740993), .median = 2.5,
				    .mean = 0.1, .values = vals, .nvalues = 2, .median_error = 1e-300 };
	struct pmc__region_rec g = { .name = (char *)"r\x01", .iterations = 3, .samples = 2, .nev = 1, .ev = &st };
	struct pmc__check_rec chk = { .kind = PMC_EXPECT_KIND_BUDGET, .status = PMC__CHECK_FAIL,
				      .region = (char *)"r\x01", .event = (char *)"instructions:u",
				      .file = (char *)"x.c", .line = 3, .message = (char *)"m",
				      .measured = INFINITY, .lo = 1e20, .hi = -0.5, .samples = 2 };
	struct pmc__result in = { .name = (char *)"s.t", .suite = (char *)"s", .test = (char *)"t",
				  .file = (char *)"x.c", .line = 1, .verdict = PMC_FAIL, .backend = "sim",
				  .measuring = true, .nregions = 1, .regions = &g, .nchecks = 1,
				  .checks = &chk, .nnotes = 1, .notes = notes, .has_duration = true,
				  .duration_s = 1.0 / 3 };
	char *text = pmc__result_to_text(&in);
	json_error_t jerr;
	json_t *o = text ? json_loads(text, JSON_REJECT_DUPLICATES, &jerr) : NULL, *tree = pmc__result_to_json(&in);
	json_t *c, *ev;

	T_CHECK(o, "the text parses: %s (%s)", text ? jerr.text : "no text", text ? text : "");
	T_CHECK(tree && json_equal(o, tree), "the tree is the text parsed");
	T_EQ_STR(json_string_value(json_array_get(json_object_get(o, "notes"), 0)),
		 "quote \" backslash \\ tab \t nl \n bell \a bad \\xff\\xfe ok \xc3\xa9 \xf0\x9f\x98\x80", "the note");
	ev = json_object_get(json_object_get(json_array_get(json_object_get(o, "regions"), 0), "events"),
			     "instructions:u");
	T_EQ_STR(json_string_value(json_object_get(json_array_get(json_object_get(o, "regions"), 0), "name")),
		 "r\x01", "a control character");
	T_CHECK(json_integer_value(json_array_get(json_object_get(ev, "values"), 1)) == 9007199254740993LL,
		"a count past 2^53 stays exact");
	T_CHECK(json_is_real(json_object_get(ev, "median")) && json_real_value(json_object_get(ev, "median")) == 2.5 &&
			json_real_value(json_object_get(ev, "mean")) == 0.1 &&
			json_real_value(json_object_get(ev, "median_error")) == 1e-300,
		"reals read back exactly");
	T_CHECK(json_real_value(json_object_get(json_object_get(ev, "per_iteration"), "median")) == 2.5 / 3,
		"per iteration");
	T_CHECK(json_real_value(json_object_get(o, "duration_s")) == 1.0 / 3, "duration");
	c = json_array_get(json_object_get(o, "checks"), 0);
	T_CHECK(json_is_null(json_object_get(c, "measured")), "infinity is null");
	T_CHECK(json_is_real(json_object_get(c, "lo")) && json_real_value(json_object_get(c, "lo")) == 1e20 &&
			json_real_value(json_object_get(c, "hi")) == -0.5,
		"bounds: 1e20 a real (past 9e15 a count is written as one), -0.5");
	json_decref(o);
	json_decref(tree);
	free(text);
}

/* Raw rows from PMC_REGION's inline path, settled as the general path
 * would have stored them; a general row appended after raw ones settles
 * them first and stays as stored. */
T_CASE(raw_rows_settle)
{
	struct pmc__region r = { .name = "r", .nev = 2 };
	struct pmc_measurement ovh = { .n = 2 }, m = { .n = 2 };
	struct pmc__stats st;

	T_EQ_U64(pmc__region_reserve(&r, 4), 0, "reserve");
	T_EQ_U64(r.flags[7], 0, "reserved rows zeroed");
	ovh.d[0].value = 10;
	ovh.d[1].value = 3;
	/* row 0: counted throughout; event 1 ran backwards */
	r.value[0] = 110;
	r.value[1] = (uint64_t)-5;
	r.enabled_ns[0] = r.running_ns[0] = 1000;
	/* row 1: multiplexed, and another thread appeared */
	r.value[2] = 50;
	r.value[3] = 2;
	r.enabled_ns[2] = 1000;
	r.running_ns[2] = 400;
	r.flags[2] = PMC_DELTA_OTHER_THREADS;
	r.n = 2;
	pmc__region_settle(&r, &ovh);
	T_EQ_U64(r.settled, 2, "settled");
	T_EQ_U64(r.value[0], 100, "overhead subtracted");
	T_EQ_U64(r.flags[0], 0, "counted throughout");
	T_EQ_U64(r.value[1], 0, "backwards reads 0");
	T_EQ_U64(r.flags[1], PMC_DELTA_NEGATIVE, "backwards flagged");
	T_EQ_U64(r.enabled_ns[1], 1000, "the group's times on every event");
	T_EQ_U64(r.value[3], 0, "clamped at zero");
	T_EQ_U64(r.flags[3], PMC_DELTA_MULTIPLEXED | PMC_DELTA_OTHER_THREADS,
		 "multiplexed, other threads");
	T_EQ_U64(r.running_ns[3], 400, "running");
	/* Settling again changes nothing. */
	pmc__region_settle(&r, &ovh);
	T_EQ_U64(r.value[0], 100, "idempotent");
	/* row 2 raw (never counted), then a general row */
	r.value[4] = 7;
	r.value[5] = 7;
	r.enabled_ns[4] = 500;
	r.running_ns[4] = 0;
	r.n = 3;
	pmc__region_settle(&r, &ovh);
	m.d[0] = (struct pmc_delta){ .value = 42, .enabled_ns = 9, .running_ns = 9 };
	m.d[1] = (struct pmc_delta){ .value = 43, .enabled_ns = 9, .running_ns = 9 };
	T_EQ_U64(pmc__region_append(&r, &m), 0, "append");
	T_EQ_U64(r.settled, 4, "an appended row is final");
	T_EQ_U64(r.flags[4], PMC_DELTA_NOT_COUNTED, "never counted");
	T_EQ_U64(r.value[6], 42, "general row as stored");
	pmc__region_settle(&r, &ovh);
	T_EQ_U64(r.value[6], 42, "not settled twice");
	pmc__stats_of(&r, 0, &st);
	T_EQ_U64(st.n, 4, "four samples");
	T_EQ_U64(st.multiplexed, 1, "one multiplexed");
	T_EQ_U64(st.not_counted, 1, "one never counted");
	pmc__region_release(&r);
}

/* Statistics are computed once per region and column, and again only when
 * the rows change: appended, or settled. */
T_CASE(stats_kept_until_rows_change)
{
	static const uint64_t a[] = { 9, 4, 6 }, b[] = { 1, 2, 3 };
	struct pmc_measurement m = { .n = 2 };
	const struct pmc__stats *s0, *s1;
	struct pmc__region r;
	struct pmc__stats fresh;

	region_of(&r, 2, 3, a, b, NULL);
	s0 = pmc__region_stats(&r, 0);
	pmc__stats_of(&r, 0, &fresh);
	T_CHECK(s0->min == fresh.min && s0->max == fresh.max && s0->median == fresh.median &&
			s0->n == 3,
		"kept = computed: min %" PRIu64 " max %" PRIu64 " median %g", s0->min, s0->max,
		s0->median);
	s1 = pmc__region_stats(&r, 1);
	T_CHECK(s1->max == 3 && pmc__region_stats(&r, 0) == s0, "one computation for both columns");
	T_EQ_U64(pmc__region_stats(&r, 7)->n, 0, "a column past nev has no samples");
	m.d[0] = (struct pmc_delta){ 1, 10, 10, 0 };
	m.d[1] = (struct pmc_delta){ 100, 10, 10, 0 };
	pmc__region_append(&r, &m);
	T_EQ_U64(pmc__region_stats(&r, 0)->min, 1, "a new row is seen");
	T_EQ_U64(pmc__region_stats(&r, 1)->max, 100, "in every column");
	T_EQ_U64(pmc__region_stats(&r, 0)->n, 4, "four samples");
	pmc__region_release(&r);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}

/* ---- layout.c: is a sim miss layout alone? ---------------------------------------- */

static struct pmc__stat_rec layout_ev[1] = { { .label = "instructions:u" } };

static void fns_of(struct pmc__region_rec *g, struct pmc__fn_rec *f, double *costs, size_t n)
{
	memset(g, 0, sizeof(*g));
	g->name = "work";
	g->nev = 1;
	g->ev = layout_ev;
	g->nfns = n;
	g->fns = f;
	for (size_t i = 0; i < n; i++)
		f[i].cost = &costs[i];
}

T_CASE(layout_names)
{
	static const char *const yes[] = { "memcpy", "memcpy@GLIBC_2.2.5", "__memmove_sse2_unaligned_erms",
					   "__strlen_avx2", "strcmp", "wcslen", "stpcpy", "bzero",
					   "__memset_chk", "rawmemchr", "wmemset" };
	static const char *const no[] = { "mem", "str", "Memcpy", "my_memcpy", "strange_Thing",
					  "malloc", "_int_free", "(other)", "0x0000000000016a00",
					  "bzeroed", "stream", "m" };

	/* "strange_Thing" and "stream" begin with str and a lowercase letter:
	 * names C reserves, treated as string functions. */
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		T_CHECK(pmc__layout_function(yes[i]), "%s is a string or memory function", yes[i]);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		if (strcmp(no[i], "strange_Thing") && strcmp(no[i], "stream"))
			T_CHECK(!pmc__layout_function(no[i]), "%s is not", no[i]);
	T_CHECK(pmc__layout_function("strange_Thing") && pmc__layout_function("stream"),
		"reserved names count as string functions");
}

T_CASE(layout_review)
{
	struct pmc__fn_rec cf[3] = { { .name = "memcpy", .object = "/lib/libc.so.6", .calls = 10 },
				     { .name = "work", .object = "/x/prog", .calls = 1 },
				     { .name = "strlen", .object = "/lib/libc.so.6", .calls = 4 } };
	struct pmc__fn_rec nf[3] = { { .name = "memcpy", .object = "/lib/libc.so.6", .calls = 10 },
				     { .name = "work", .object = "/y/prog", .calls = 1 },
				     { .name = "strlen", .object = "/lib/libc.so.6", .calls = 4 } };
	double cc[3] = { 1000, 5000, 200 }, nc[3] = { 994, 5000, 230 };
	struct pmc__region_rec cal, now;
	struct pmc__layout l;

	fns_of(&cal, cf, cc, 3);
	fns_of(&now, nf, nc, 3);
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && l.layout &&
		l.functions == 2 && l.up == 30 && l.down == -6 && strstr(l.why, "memcpy -6 over 10 calls"),
		"memcpy -6 and strlen +30, calls unchanged: layout (%s)", l.why);
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 0, &l) == 0 && !l.layout,
		"a bound of 0 (--exact-layout): never layout");
	T_CHECK(pmc__layout_review(&cal, &now, "branches", 48, &l) == 0 && !l.layout,
		"an event the rows lack: nothing said");
	nc[2] = 200 + 4 * 48 + 1; /* past the bound for 4 calls */
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout &&
		l.others == 1, "beyond the bound a call: not layout");
	nc[2] = 230;
	nf[0].calls = 11;
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout,
		"a call more: not layout");
	nf[0].calls = 10;
	nc[1] = 5001;
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout &&
		l.others == 1, "the program's own function moved by one: not layout");
	nc[1] = 5000;
	nf[2].calls = NAN;
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout,
		"calls unknown (an older file): not layout");
	nf[2].calls = 4;
	nc[0] = 1000;
	nc[2] = 200;
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout &&
		l.functions == 0, "nothing moved: nothing to excuse");
	/* A function only on one side (renamed, new): not layout. */
	nf[2].name = "strnlen";
	nc[2] = 30;
	T_CHECK(pmc__layout_review(&cal, &now, "instructions:u", 48, &l) == 0 && !l.layout,
		"a string function that appeared: its calls are new, not layout");
}

T_CASE(objects_changed)
{
	struct pmc_object was[4] = { { "/a/prog", "build-id:aa" }, { "/usr/lib/libexpat.so.1", "build-id:1111" },
				      { "/b/libpmcheck.so.0", "build-id:22" }, { "/lib/libgone.so", "fnv1a64:33" } };
	struct pmc_object now[4] = { { "/other/prog", "build-id:bb" }, { "/opt/libexpat.so.1", "build-id:4444" },
				      { "/c/libpmcheck.so.0", "build-id:22" }, { "/lib/libnew.so", "build-id:55" } };
	struct pmc__object_change ch[8];
	char text[400];
	size_t n = pmc__objects_diff(was, 4, now, 4, ch, 8);

	T_CHECK(n == 3, "libexpat another build, libnew loaded, libgone not: %zu changes", n);
	pmc__object_change_text(&ch[0], "calibration", text, sizeof(text));
	T_CHECK(!strcmp(text, "libexpat.so.1: another build than at calibration (build ID 1111 -> build ID 4444)"),
		"%s", text);
	pmc__object_change_text(&ch[1], "calibration", text, sizeof(text));
	T_CHECK(strstr(text, "libnew.so: loaded now, not at calibration"), "%s", text);
	pmc__object_change_text(&ch[2], "calibration", text, sizeof(text));
	T_CHECK(strstr(text, "libgone.so: loaded at calibration, not now (content fnv1a64:33)"), "%s",
		text);
	now[2].id = "build-id:23";
	n = pmc__objects_diff(was, 4, now, 4, ch, 8);
	pmc__object_change_text(&ch[1], "calibration", text, sizeof(text));
	T_CHECK(n == 4 && ch[1].pmcheck && strstr(text, "pmcheck changed, not your code"), "%s", text);
	T_CHECK(pmc__objects_diff(was, 1, now, 1, ch, 8) == 0, "the program itself is left out");
}

/* ---- summaries: regions run more times than a window holds ---------------------- */

static void empty_region(struct pmc__region *r, size_t nev)
{
	memset(r, 0, sizeof(*r));
	r->name = "r";
	r->iterations = 1;
	r->nev = nev;
}

/* n samples of a deterministic-looking pattern (few distinct values), one
 * of them flagged: statistics exact against a direct computation. */
T_CASE(summary_exact_beyond_the_window)
{
	const size_t n = 3 * PMC__WINDOW_ROWS + 123;
	struct pmc__region r;
	uint64_t min = UINT64_MAX, max = 0, *all = malloc(n * sizeof(*all));
	const uint64_t *kept;
	long double sum = 0;
	size_t nkept;

	empty_region(&r, 2);
	for (size_t i = 0; i < n; i++) {
		struct pmc_measurement m = { .n = 2 };
		uint64_t v = 1000 + (i * 7919) % 13; /* 13 distinct values */

		m.d[0] = (struct pmc_delta){ v, 1000, 1000, i == n / 2 ? PMC_DELTA_MULTIPLEXED : 0u };
		if (i == n / 2)
			m.d[0].running_ns = 250;
		m.d[1] = (struct pmc_delta){ i, 1000, 1000, 0 };
		T_EQ_U64(pmc__region_append(&r, &m), 0, "append");
		all[i] = v;
		sum += v;
		min = v < min ? v : min;
		max = v > max ? v : max;
	}
	T_CHECK(r.cap <= PMC__WINDOW_ROWS && pmc__region_folded(&r) == 3 * PMC__WINDOW_ROWS,
		"a window of %zu rows at most, %zu folded", r.cap, pmc__region_folded(&r));
	{
		const struct pmc__stats *s = pmc__region_stats(&r, 0), *c = pmc__region_stats(&r, 1);
		double median;

		{
			size_t cnt[13] = { 0 }, seen = 0, k;

			for (size_t i = 0; i < n; i++)
				cnt[all[i] - 1000]++;
			for (k = 0; k < 13 && seen + cnt[k] <= (n - 1) / 2; k++)
				seen += cnt[k];
			median = 1000.0 + (double)k; /* n odd: one middle value */
		}
		T_EQ_U64(s->n, n, "every sample counted");
		T_EQ_U64(s->min, min, "exact minimum");
		T_EQ_U64(s->max, max, "exact maximum");
		T_CHECK(s->median == median && s->median_error == 0, "exact median %g (want %g), error %g",
			s->median, median, s->median_error);
		T_CHECK(fabs(s->mean - (double)(sum / n)) < 1e-9, "mean %g want %g", s->mean,
			(double)(sum / n));
		T_EQ_U64(s->multiplexed, 1, "the one multiplexed sample among them is kept");
		T_CHECK(s->running_share == 0.25, "its running share %g", s->running_share);
		T_EQ_U64(c->max, n - 1, "second column: exact maximum");
		T_CHECK(fabs(c->median - (double)((n - 1) / 2)) <= PMC__SKETCH_ALPHA * (double)((n - 1) / 2) &&
				c->median_error == PMC__SKETCH_ALPHA,
			"%zu distinct values: the median of 0..n-1 estimated %g (error %g)", n, c->median,
			c->median_error);
	}
	nkept = pmc__region_kept(&r, &kept);
	T_EQ_U64(nkept, PMC__KEPT_VALUES, "the first samples are kept for the record");
	T_CHECK(kept[0] == all[0] && kept[(PMC__KEPT_VALUES - 1) * 2] == all[PMC__KEPT_VALUES - 1] &&
			kept[(PMC__KEPT_VALUES - 1) * 2 + 1] == PMC__KEPT_VALUES - 1,
		"in order, every column");
	free(all);
	pmc__region_release(&r);
}

/* Many distinct values: the median becomes an estimate, within the stated
 * relative error of the true one. */
T_CASE(summary_sketch_median_within_its_error)
{
	const size_t n = 4 * PMC__WINDOW_ROWS + 1;
	struct pmc__region r;
	uint64_t x = 88172645463325252ull;
	uint64_t *all = malloc(n * sizeof(*all));

	empty_region(&r, 1);
	for (size_t i = 0; i < n; i++) {
		struct pmc_measurement m = { .n = 1 };

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		all[i] = 100000 + x % 9000000;
		m.d[0] = (struct pmc_delta){ all[i], 1000, 1000, 0 };
		pmc__region_append(&r, &m);
	}
	{
		const struct pmc__stats *s = pmc__region_stats(&r, 0);
		size_t below = 0, above = 0;

		/* The true median m has (n-1)/2 values below-or-equal on
		 * each side; the estimate e is within alpha: the values
		 * below e*(1-alpha) are at most half, those above
		 * e*(1+alpha) at most half. */
		for (size_t i = 0; i < n; i++) {
			below += (double)all[i] < s->median * (1 - PMC__SKETCH_ALPHA);
			above += (double)all[i] > s->median * (1 + PMC__SKETCH_ALPHA);
		}
		T_CHECK(s->median_error == PMC__SKETCH_ALPHA, "an estimate, saying so: %g", s->median_error);
		T_CHECK(below <= n / 2 && above <= n / 2,
			"median %g within %g: %zu values below the band, %zu above, of %zu", s->median,
			PMC__SKETCH_ALPHA, below, above, n);
		T_EQ_U64(s->n, n, "count exact");
	}
	free(all);
	pmc__region_release(&r);
}

/* A ratio asked for before the first fold is tracked sample by sample:
 * exact extremes, a median within its error; one asked for later cannot be
 * judged and says why. */
T_CASE(summary_ratios)
{
	const size_t n = 2 * PMC__WINDOW_ROWS + 7;
	struct pmc__region r;
	bool div0;
	double err, x;
	size_t missed;

	empty_region(&r, 2);
	T_EQ_U64(pmc__region_want_ratio(&r, 0, 1), 0, "ratio 0/1 wanted");
	for (size_t i = 0; i < n; i++) {
		struct pmc_measurement m = { .n = 2 };

		/* 0/1 is (i % 4 + 1) / 4: 0.25 .. 1; row 5's denominator 0 */
		m.d[0] = (struct pmc_delta){ i % 4 + 1, 1000, 1000, 0 };
		m.d[1] = (struct pmc_delta){ i == 5 ? 0 : 4, 1000, 1000, 0 };
		pmc__region_append(&r, &m);
	}
	x = pmc__region_ratio(&r, 0, 1, PMC_STAT_MIN, &div0, &err, &missed);
	T_CHECK(x == 0.25 && err == 0 && missed == 0 && div0, "min %g exact, div0 %d", x, div0);
	x = pmc__region_ratio(&r, 0, 1, PMC_STAT_MAX, &div0, &err, &missed);
	T_CHECK(x == 1.0 && err == 0, "max %g exact", x);
	x = pmc__region_ratio(&r, 0, 1, PMC_STAT_MEDIAN, &div0, &err, &missed);
	T_CHECK(err == PMC__SKETCH_ALPHA && fabs(x - 0.625) <= 0.625 * 0.4 + 1e-9,
		"median %g between the two middle values 0.5 and 0.75, estimated (error %g)", x, err);
	x = pmc__region_ratio(&r, 1, 0, PMC_STAT_MIN, &div0, &err, &missed);
	T_CHECK(missed == 2 * PMC__WINDOW_ROWS, "1/0 was never asked for: %zu rows missed", missed);
	pmc__region_release(&r);
}

/* A result of one region "r" whose event "ev" has samples n, smallest min. */
static void result_of(struct pmc__result *res, struct pmc__region_rec *g, struct pmc__stat_rec *e,
		      enum pmc_verdict v, uint64_t min, uint64_t max, size_t n)
{
	memset(res, 0, sizeof(*res));
	memset(g, 0, sizeof(*g));
	memset(e, 0, sizeof(*e));
	e->label = "ev";
	e->min = min;
	e->max = max;
	e->n = n;
	g->name = "r";
	g->nev = 1;
	g->ev = e;
	res->verdict = v;
	res->nregions = 1;
	res->regions = g;
}

T_CASE(rerun_never_turns_a_failure_into_a_pass)
{
	struct pmc__result a, b;
	struct pmc__region_rec ga, gb;
	struct pmc__stat_rec ea, eb;

	/* Counted alike: the re-run's judgement stands, whatever it is. */
	result_of(&a, &ga, &ea, PMC_FAIL, 100, 100, 3);
	result_of(&b, &gb, &eb, PMC_FAIL, 100, 100, 3);
	T_CHECK(pmc__rerun_adoptable(&a, &b, ""), "alike, both failed: adoptable");
	/* Only the spread differs and the verdict is the same. */
	result_of(&b, &gb, &eb, PMC_FAIL, 100, 140, 3);
	T_CHECK(pmc__rerun_adoptable(&a, &b, "ev max 100 -> 140"), "same verdict, wider spread: adoptable");
	/* The spread differs and the re-run passed (a check on the median
	 * would): never. */
	result_of(&b, &gb, &eb, PMC_PASS, 100, 140, 3);
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "ev max 100 -> 140"), "a failure must not turn into a pass");
	/* ... nor a pass into a failure. */
	result_of(&a, &ga, &ea, PMC_PASS, 100, 100, 3);
	result_of(&b, &gb, &eb, PMC_FAIL, 100, 140, 3);
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "ev max 100 -> 140"), "a pass must not turn into a failure");
	/* Another smallest sample, or another number of samples: never. */
	result_of(&a, &ga, &ea, PMC_FAIL, 100, 100, 3);
	result_of(&b, &gb, &eb, PMC_FAIL, 99, 100, 3);
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "ev min 100 -> 99"), "another minimum");
	result_of(&b, &gb, &eb, PMC_FAIL, 100, 100, 2);
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "ev n 3 -> 2"), "another number of samples");
	/* A region or an event the re-run lacks: never. */
	result_of(&b, &gb, &eb, PMC_FAIL, 100, 100, 3);
	gb.name = "other";
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "region r missing"), "a region missing");
	gb.name = "r";
	eb.label = "other";
	T_CHECK(!pmc__rerun_adoptable(&a, &b, "event ev missing"), "an event missing");
}

/* The library's own floor, ceil, round, trunc, fmax and fmin (no libm in
 * the measured process): libm's results, edges included. */
T_CASE(arith_gives_what_libm_gives)
{
	const double v[] = { 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999999999999994,
			     -0.49999999999999994, 1e-300, -1e-300, 0.999999999999, 123456.789, -123456.789,
			     4503599627370495.5, -4503599627370495.5, 4503599627370497.0, 9.3e18, -9.3e18,
			     1e300, -1e300, INFINITY, -INFINITY, NAN };
	size_t n = sizeof(v) / sizeof(v[0]), bad = 0;

	for (size_t i = 0; i < n; i++) {
		double x = v[i];
		double got[4] = { pmc__floor(x), pmc__ceil(x), pmc__round(x), pmc__trunc(x) };
		double want[4] = { floor(x), ceil(x), round(x), trunc(x) };

		for (int k = 0; k < 4; k++)
			if (!(got[k] == want[k] || (isnan(got[k]) && isnan(want[k])))) {
				bad++;
				T_CHECK(0, "operation %d of %.17g: %.17g, libm %.17g", k, x, got[k], want[k]);
			}
		for (size_t j = 0; j < n; j++) {
			double a = pmc__fmax(x, v[j]), b = fmax(x, v[j]), c = pmc__fmin(x, v[j]),
			       d = fmin(x, v[j]);

			if (!((a == b || (isnan(a) && isnan(b))) && (c == d || (isnan(c) && isnan(d))))) {
				bad++;
				T_CHECK(0, "fmax/fmin of %g and %g: %g %g, libm %g %g", x, v[j], a, c, b, d);
			}
		}
	}
	T_EQ_U64(bad, 0, "every result as libm's");
}

/* The sketch's table of powers against the logarithms it replaces: the
 * same number of buckets, every value in the bucket log(v) / log(gamma)
 * names (a value within 1e-9 of a boundary may fall either side), and
 * estimates within 1e-11 of 2 gamma^i / (gamma + 1). */
T_CASE(sketch_table_agrees_with_the_logarithms)
{
	const double g = (1.0 + PMC__SKETCH_ALPHA) / (1.0 - PMC__SKETCH_ALPHA), lg = log(g);
	size_t nb = pmc__sketch_buckets(), bad = 0, tried = 0;
	struct pmc__dist d = { 0 };
	uint64_t x = 88172645463325252ull;

	T_EQ_U64(nb, (uint64_t)ceil(64.0 * log(2.0) / lg) + 2, "buckets: ceil(64 log 2 / log gamma) + 2");
	d.bucket = calloc(nb, sizeof(*d.bucket));
	for (int k = 0; k < 64 * 4 + 20000; k++) {
		uint64_t v;
		double e;
		size_t want, got = nb;

		if (k < 64 * 4) /* around each power of two */
			v = (1ull << (k / 4)) + (uint64_t)(k % 4) - 1;
		else {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			v = x >> (x % 64);
		}
		if (v == 0)
			continue;
		e = log((double)v) / lg;
		want = (size_t)ceil(e) < nb ? (size_t)ceil(e) : nb - 1;
		memset(d.bucket, 0, nb * sizeof(*d.bucket));
		pmc__sketch_add(&d, v, 1);
		for (size_t i = 0; i < nb; i++)
			if (d.bucket[i])
				got = i;
		tried++;
		if (got != want && fabs(e - round(e)) > 1e-9) {
			bad++;
			T_CHECK(0, "%" PRIu64 ": bucket %zu, the logarithm says %zu (%.12f)", v, got, want, e);
		}
	}
	for (size_t i = 0; i < nb; i += 97) {
		double want = 2.0 * pow(g, (double)i) / (g + 1.0);

		if (fabs(pmc__sketch_value(i) - want) > 1e-11 * want) {
			bad++;
			T_CHECK(0, "estimate of bucket %zu: %.17g, pow says %.17g", i, pmc__sketch_value(i), want);
		}
	}
	for (double q = 1e-21; q < 1e21; q *= 1.7) {
		double e = log(q) / lg;
		long i = lround(ceil(e)) + (long)nb;
		size_t want = i < 0 ? 0 : (size_t)i >= 2 * nb ? 2 * nb - 1 : (size_t)i;
		double est = 2.0 * pow(g, (double)want - (double)nb) / (g + 1.0);

		tried++;
		if ((pmc__ratio_index(q) != want && fabs(e - round(e)) > 1e-9) ||
		    fabs(pmc__ratio_value(want) - est) > 1e-11 * est) {
			bad++;
			T_CHECK(0, "ratio %g: bucket %zu (estimate %g), the logarithm says %zu (%g)", q,
				pmc__ratio_index(q), pmc__ratio_value(want), want, est);
		}
	}
	T_CHECK(pmc__ratio_index(0.0) == 0 && pmc__ratio_index(-1.0) == 0 && pmc__ratio_index(NAN) == 0 &&
			pmc__ratio_index(INFINITY) == 2 * nb - 1,
		"0, negatives and NaN in the first ratio bucket, infinity in the last");
	T_EQ_U64(bad, 0, "every value in its bucket");
	T_CHECK(tried > 20000, "%zu values tried", tried);
	free(d.bucket);
}
