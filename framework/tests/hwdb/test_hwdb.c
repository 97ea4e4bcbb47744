/* SPDX-License-Identifier: MIT */
/*
 * hwdb with the built-in database and fixture directories: signature
 * matching (real signatures, stepping-specific lines, fallbacks, no match),
 * bound expressions, the key chain and override order, INI errors with
 * file:line, and the budget writer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include <pmcheck/pmcheck.h>

#include "../t.h"

T_CASE(signatures_to_models)
{
	static const struct {
		const char *sig, *model;
	} table[] = {
		{ "GenuineIntel-6-5E-3", "skylake" },
		{ "GenuineIntel-6-9E-A", "kabylake" },
		{ "GenuineIntel-6-97-2", "alderlake" },
		{ "GenuineIntel-6-55-4", "skylake-x" },     /* stepping 4: Skylake-SP */
		{ "GenuineIntel-6-55-7", "cascadelake-x" }, /* stepping 7: Cascade Lake */
		{ "GenuineIntel-6-55-B", "cascadelake-x" }, /* Cooper Lake */
		{ "GenuineIntel-6-6A-6", "icelake-x" },
		{ "GenuineIntel-6-8F-8", "sapphirerapids" },
		{ "GenuineIntel-6-CF-2", "emeraldrapids" },
		{ "GenuineIntel-6-AD-1", "graniterapids" },
		{ "AuthenticAMD-23-8-2", "zen1" },
		{ "AuthenticAMD-23-31-0", "zen2" },
		{ "AuthenticAMD-25-1-1", "zen3" },
		{ "AuthenticAMD-25-21-0", "zen3" },
		{ "AuthenticAMD-25-11-1", "zen4" },          /* this project's VMs */
		{ "AuthenticAMD-25-61-2", "zen4" },
		{ "AuthenticAMD-26-2-0", "zen5" },
		{ "ARM-0x41-0xd0c", "neoverse-n1" },
		{ "ARM-0x41-0xd40", "neoverse-v1" },
		{ "ARM-0x41-0xd49", "neoverse-n2" },
		{ "ARM-0x41-0xd4f", "neoverse-v2" },
		{ "ARM-0x0-0x51", "qemu-max" },
		/* no match */
		{ "GenuineIntel-6-1-1", NULL },
		{ "ARM-0x41-0xd0c0", NULL }, /* anchored: no prefix matches */
		{ "xARM-0x41-0xd0c", NULL },
		{ "unknown", NULL },
		{ "", NULL },
	};
	struct pmc_hwdb *db;
	struct pmc_error err;
	size_t i;

	T_CHECK(pmc_hwdb_open(&db, NULL, 0, &err) == 0, "open built-in: %s", err.message);
	T_CHECK(pmc_hwdb_builtin_dir() != NULL, "built-in hwdb found");
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		struct pmc_hwdb_match m;
		struct pmc_hwdb_model model;
		int rc = pmc_hwdb_match(db, table[i].sig, &m, &model);

		if (!table[i].model) {
			T_CHECK(rc == -ENOENT && !m.model[0], "%s must not match (got %s)", table[i].sig,
				m.model);
			continue;
		}
		T_CHECK(rc == 0, "%s: no match", table[i].sig);
		T_EQ_STR(m.model, table[i].model, table[i].sig);
		T_EQ_STR(model.id, table[i].model, "facts found");
		T_CHECK(model.name[0] && model.vendor[0] && model.arch[0] && model.general_counters > 0,
			"%s: facts complete", table[i].model);
		T_CHECK(strstr(m.where, "map.ini:") != NULL, "where: %s", m.where);
	}
	pmc_hwdb_free(db);
}

T_CASE(key_chain)
{
	char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX];
	struct pmc_hwdb *db;
	struct pmc_error err;
	size_t n;

	T_CHECK(pmc_hwdb_open(&db, NULL, 0, &err) == 0, "%s", err.message);
	/* This system's release key ("os-debian-13") sits before "any" where
	 * /etc/os-release has an ID and a VERSION_ID (test_gate.py checks
	 * which key and what it is for). */
	n = pmc_hwdb_keys(db, "perf", "AuthenticAMD-25-11-1", keys, PMC_HWDB_MAX_KEYS);
	T_CHECK(n == 5 || n == 6, "signature, model, vendor, arch, [release,] any: got %zu", n);
	T_EQ_STR(keys[0], "AuthenticAMD-25-11-1", "key 0");
	T_EQ_STR(keys[1], "zen4", "key 1");
	T_EQ_STR(keys[2], "AuthenticAMD", "key 2");
	T_EQ_STR(keys[3], "x86_64", "key 3");
	if (n == 6)
		T_CHECK(!strncmp(keys[4], "os-", 3), "key 4 is the release's: %s", keys[4]);
	T_EQ_STR(keys[n - 1], "any", "the last key");
	n = pmc_hwdb_keys(db, "perf", "GenuineIntel-6-1-1", keys, PMC_HWDB_MAX_KEYS);
	T_CHECK(n == 4 || n == 5, "no model: signature, vendor, arch, [release,] any: got %zu", n);
	T_EQ_STR(keys[1], "GenuineIntel", "vendor from the signature");
	n = pmc_hwdb_keys(db, "perf", "ARM-0x0-0x51", keys, PMC_HWDB_MAX_KEYS);
	T_EQ_STR(keys[1], "qemu-max", "arm model");
	T_EQ_STR(keys[3], "aarch64", "arm arch");
	n = pmc_hwdb_keys(db, "sim", "sim-3.19.0-gcc12", keys, PMC_HWDB_MAX_KEYS);
	T_EQ_U64(n, 1, "sim: its profile only");
	n = pmc_hwdb_keys(db, "perf", "../etc", keys, PMC_HWDB_MAX_KEYS);
	T_CHECK(n >= 1 && n <= 2 && strcmp(keys[0], "../etc") && strcmp(keys[n - 1], "../etc"),
		"a signature with '/' is never a directory key");
	T_EQ_STR(keys[n - 1], "any", "only the release's and the generic key are left");
	n = pmc_hwdb_keys(db, "perf", "any", keys, PMC_HWDB_MAX_KEYS);
	T_CHECK(n >= 1 && n <= 2 && !strcmp(keys[n - 1], "any"),
		"\"any\" as the signature: the release's key, then \"any\" (got %zu)", n);
	pmc_hwdb_free(db);
}

/* One level at a time: an absent level is absent, never the next one. */
T_CASE(key_levels)
{
	static const struct {
		const char *backend, *sig;
		const char *key[PMC_HWDB_NLEVELS]; /* NULL: absent */
	} table[] = {
		{ "perf", "AuthenticAMD-25-11-1", { "AuthenticAMD-25-11-1", "zen4", "AuthenticAMD", "x86_64", "any" } },
		{ "perf", "GenuineIntel-6-1-1", { "GenuineIntel-6-1-1", NULL, "GenuineIntel", "x86_64", "any" } },
		{ "perf", "unknown", { "unknown", NULL, NULL, NULL, "any" } },
		{ "perf", "../etc", { NULL, NULL, NULL, NULL, "any" } },
		{ "sim", "sim-3.19.0-gcc12", { "sim-3.19.0-gcc12", NULL, NULL, NULL, NULL } },
	};
	struct pmc_hwdb *db;
	struct pmc_error err;
	char key[PMC_HWDB_KEY_MAX];

	T_CHECK(pmc_hwdb_open(&db, NULL, 0, &err) == 0, "%s", err.message);
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		for (int l = 0; l < PMC_HWDB_NLEVELS; l++) {
			int rc = pmc_hwdb_key_at(db, table[i].backend, table[i].sig,
						 (enum pmc_hwdb_level)l, key, sizeof(key));

			if (!table[i].key[l]) {
				T_CHECK(rc == -ENOENT, "%s level %d: absent, got %d (%s)", table[i].sig,
					l, rc, rc ? "" : key);
				continue;
			}
			T_CHECK(rc == 0, "%s level %d: %d", table[i].sig, l, rc);
			T_EQ_STR(key, table[i].key[l], table[i].sig);
		}
	T_CHECK(pmc_hwdb_key_at(db, "perf", "unknown", PMC_HWDB_NLEVELS, key, sizeof(key)) == -EINVAL,
		"no such level");
	T_CHECK(pmc_hwdb_key_at(db, "perf", "AuthenticAMD-25-11-1", PMC_HWDB_SIGNATURE, key, 4) ==
			PMC_E_TOO_LONG,
		"a key that does not fit");
	pmc_hwdb_free(db);
}

T_CASE(bounds)
{
	static const struct {
		const char *text;
		int kind;
		double lo, hi;
		int per_iteration;
	} ok[] = {
		{ "<= 1200", PMC_BOUND_LE, 0, 1200, 0 },
		{ "<=1200", PMC_BOUND_LE, 0, 1200, 0 },
		{ ">= 5", PMC_BOUND_GE, 5, 0, 0 },
		{ "= 600023", PMC_BOUND_EQ, 600023, 600023, 0 },
		{ "1000..1100", PMC_BOUND_RANGE, 1000, 1100, 0 },
		{ "1000 .. 1100", PMC_BOUND_RANGE, 1000, 1100, 0 },
		{ "1050000 +-0.5%", PMC_BOUND_RANGE, 1044750, 1055250, 0 },
		{ "100 +- 3", PMC_BOUND_RANGE, 97, 103, 0 },
		{ "2 +-5", PMC_BOUND_RANGE, 0, 7, 0 }, /* clamped at zero */
		{ "<= 2.5 per iteration", PMC_BOUND_LE, 0, 2.5, 1 },
		{ "= 6 per iteration", PMC_BOUND_EQ, 6, 6, 1 },
		{ "  = 0  ", PMC_BOUND_EQ, 0, 0, 0 },
	};
	static const struct {
		const char *text;
		int position;
	} bad[] = {
		{ "", 0 }, { "1200", 4 }, { "<=", 2 }, { "< 5", 0 }, { "<= -5", 3 },
		{ "= 5 apples", 4 }, { "10..5", 2 }, { "10..", 4 }, { "5 +-", 4 },
		{ "<= 1e9", 4 }, { "<= 12 per", 6 }, { "= 0x10", 3 }, { "== 5", 1 },
	};
	struct pmc_budget b;
	struct pmc_error err;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		T_CHECK(pmc_budget_parse(ok[i].text, &b, &err) == 0, "\"%s\": %s", ok[i].text,
			err.message);
		T_CHECK((int)b.kind == ok[i].kind, "\"%s\": kind %d", ok[i].text, b.kind);
		if (ok[i].kind != PMC_BOUND_LE)
			T_CHECK(fabs(b.lo - ok[i].lo) < 1e-9, "\"%s\": lo %g", ok[i].text, b.lo);
		if (ok[i].kind != PMC_BOUND_GE)
			T_CHECK(fabs(b.hi - ok[i].hi) < 1e-9, "\"%s\": hi %g", ok[i].text, b.hi);
		T_CHECK(b.per_iteration == ok[i].per_iteration, "\"%s\": per iteration", ok[i].text);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		T_CHECK(pmc_budget_parse(bad[i].text, &b, &err) == PMC_E_SYNTAX, "\"%s\" must fail",
			bad[i].text);
		T_CHECK(err.position == bad[i].position, "\"%s\": position %d, expected %d (%s)",
			bad[i].text, err.position, bad[i].position, err.message);
		T_CHECK(strstr(err.message, "expected") != NULL, "message says what was expected");
	}
	pmc_budget_parse("1000..1100", &b, NULL);
	T_CHECK(!pmc_budget_holds(&b, 999) && pmc_budget_holds(&b, 1000) &&
			pmc_budget_holds(&b, 1100) && !pmc_budget_holds(&b, 1100.5),
		"range edges inclusive");
	pmc_budget_parse("<= 0", &b, NULL);
	T_CHECK(pmc_budget_holds(&b, 0) && !pmc_budget_holds(&b, 1), "<= 0");
	pmc_budget_parse(">= 3", &b, NULL);
	T_CHECK(!pmc_budget_holds(&b, 2.999) && pmc_budget_holds(&b, 3), ">= 3");
}

T_CASE(override_order_and_sources)
{
	const char *dir = t_tmpdir("hwdb");
	struct pmc_budget_key key = { "s", "t", "r", "calls:f", "perf", "AuthenticAMD-25-11-1" };
	struct pmc_budget b;
	struct pmc_error err;
	struct pmc_hwdb *db;
	const char *dirs[1] = { dir };

	/* Users' generic entry vs a user model entry: the more specific key
	 * wins; at one key the user's directory wins over the built-in. */
	t_write(dir, "budgets/any/s.ini", "[t]\nr = calls:f <= 10\n");
	t_write(dir, "budgets/zen4/s.ini", "; comment\n[t]\n\nr = calls:f = 7\nr = other <= 1\n");
	T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0, "%s", err.message);
	T_CHECK(pmc_hwdb_budget(db, &key, &b, &err) == 0, "found: %s", err.message);
	T_EQ_STR(b.text, "= 7", "model key before any");
	T_EQ_STR(b.key, "zen4", "matched key");
	T_CHECK(strstr(b.source, "budgets/zen4/s.ini:4") != NULL, "source %s", b.source);
	key.signature = "GenuineIntel-6-8F-8";
	T_CHECK(pmc_hwdb_budget(db, &key, &b, &err) == 0 && !strcmp(b.text, "<= 10"),
		"another model falls back to any");
	key.event = "calls:g";
	T_CHECK(pmc_hwdb_budget(db, &key, &b, &err) == -ENOENT, "unbudgeted event");
	key.event = "calls:f";
	key.suite = "../s";
	T_CHECK(pmc_hwdb_budget(db, &key, &b, &err) == -ENOENT, "suite names are not paths");
	pmc_hwdb_free(db);
}

T_CASE(ini_errors_name_file_and_line)
{
	static const struct {
		const char *file, *text, *line, *what;
	} table[] = {
		{ "map.ini", "[map]\n; ok\n^a$ = m\nGenuine = x\n", "map.ini:4", "anchored" },
		{ "map.ini", "[map]\n^a[$ = m\n", "map.ini:2", "^a[$" },
		{ "map.ini", "[map]\n^a$ = two words\n", "map.ini:2", "model id" },
		{ "map.ini", "[map\n", "map.ini:1", "expected" },
		/* Patterns whose compiled form explodes (found by the fuzzer) are
		 * refused before regcomp, with the line. */
		{ "map.ini", "[map]\n^ab++++++++++++++++++++++++++++++++++++++++$ = m\n", "map.ini:2",
		  "follows another" },
		{ "map.ini", "[map]\n^Genuin??????????????????$ = m\n", "map.ini:2", "follows another" },
		{ "map.ini", "[map]\n^a$ = m\n^(a{900}){900}$ = m\n", "map.ini:3", "too large" },
		{ "map.ini", "[map]\n^((((((((((((a+)+)+)+)+)+)+)+)+)+)+)+)+$ = m\n", "map.ini:2",
		  "too large" },
		{ "map.ini", "[map]\n^(a*)*b\\1$ = m\n", "map.ini:2", "back-references" },
		{ "models.ini", "[m]\n\n\nfixed_width = -1\n", "models.ini:4", "out of range" },
		{ "models.ini", "[m]\nfixed_width = x\n", "models.ini:2", "whole number" },
		{ "models.ini", "[m]\n   indented = 1\n", "models.ini:2", "unknown fact" },
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const char *dir = t_tmpdir("hwdb");
		const char *dirs[1] = { dir };
		struct pmc_hwdb *db = NULL;
		struct pmc_error err;

		t_write(dir, table[i].file, table[i].text);
		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == PMC_E_SYNTAX, "%s must fail", table[i].text);
		T_CHECK(strstr(err.message, table[i].line) && strstr(err.message, table[i].what),
			"%s: \"%s\" lacks %s / %s", table[i].text, err.message, table[i].line,
			table[i].what);
		T_CHECK(db == NULL, "nothing returned on error");
	}
	{
		const char *dirs[1] = { "/nonexistent/hwdb" };
		struct pmc_hwdb *db;
		struct pmc_error err;

		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == -ENOENT &&
				strstr(err.message, "/nonexistent/hwdb"),
			"missing directory named: %s", err.message);
	}
}

T_CASE(writer_keeps_everything_else)
{
	const char *dir = t_tmpdir("hwdb");
	char old[256];
	struct pmc_error err;
	const char *text;

	/* New file, new section. */
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t1", "r", "calls:f", "= 5", old,
				      sizeof(old), &err) == 0, "%s", err.message);
	T_EQ_STR(t_read(dir, "budgets/zen4/s.ini"), "[t1]\nr = calls:f = 5\n", "created");
	T_EQ_STR(old, "", "nothing replaced");
	/* Existing file with comments, two sections: replace in place. */
	t_write(dir, "budgets/zen4/s.ini",
		   "; header\n[t1]\n; why 5\nr = calls:f = 5 ; inline\nr = cycles <= 9\n\n[t2]\nx = y <= 1\n");
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t1", "r", "calls:f", "= 6", old,
				      sizeof(old), &err) == 0, "%s", err.message);
	T_EQ_STR(t_read(dir, "budgets/zen4/s.ini"),
		 "; header\n[t1]\n; why 5\nr = calls:f = 6\nr = cycles <= 9\n\n[t2]\nx = y <= 1\n",
		 "replaced in place");
	T_EQ_STR(old, "r = calls:f = 5 ; inline", "old line returned");
	/* A new region in t1 goes after t1's last line, before [t2]. */
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t1", "q", "calls:g", "<= 3", old,
				      sizeof(old), &err) == 0, "%s", err.message);
	text = t_read(dir, "budgets/zen4/s.ini");
	T_EQ_STR(text,
		 "; header\n[t1]\n; why 5\nr = calls:f = 6\nr = cycles <= 9\nq = calls:g <= 3\n\n[t2]\nx = y <= 1\n",
		 "inserted at the end of its section");
	/* A new section goes at the end. */
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t3", "r", "calls:f", "1..2", old,
				      sizeof(old), &err) == 0, "%s", err.message);
	text = t_read(dir, "budgets/zen4/s.ini");
	T_CHECK(strstr(text, "x = y <= 1\n\n[t3]\nr = calls:f 1..2\n") != NULL, "appended: %s", text);
	/* What cannot be written is refused before touching the file. */
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t1", "a:b", "calls:f", "= 1", old,
				      sizeof(old), &err) == -EINVAL, "region with ':'");
	T_CHECK(pmc_hwdb_write_budget(dir, "../x", "s", "t1", "r", "calls:f", "= 1", old,
				      sizeof(old), &err) == -EINVAL, "key with '/'");
	T_CHECK(pmc_hwdb_write_budget(dir, "zen4", "s", "t1", "r", "calls:f", "about 5", old,
				      sizeof(old), &err) == PMC_E_SYNTAX, "bad bound");
	T_CHECK(!strcmp(t_read(dir, "budgets/zen4/s.ini"), text), "file untouched by refusals");
}

/*
 * Broken hwdb trees: each is refused at open or draws a finding from
 * pmc_hwdb_lint, and the message names the file (and line) and the reason.
 * A tree is a valid base (map.ini maps ^X-1$ to model m, which models.ini
 * defines) plus up to two files; the text "DIR" makes a directory instead.
 */
#define BASE_MAP "[map]\n^X-1$ = m\n"
#define BASE_MODELS "[m]\nname = M\narch = x86_64\n"

static const struct broken_tree {
	const char *file[2], *text[2];
	const char *where, *why;
} broken_trees[] = {
	{ { "budgets/any/s.ini" }, { "[t]\nr = calls: = 50\n" }, "s.ini:2", "function name" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = instructions:q <= 5\n" }, "s.ini:2", "unknown modifier 'q'" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = nosuchevent <= 5\n" }, "s.ini:2", "unknown event" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = cpu/ <= 5\n" }, "s.ini:2", "missing closing" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = mem:0x0 = 1\n" }, "s.ini:2", "address 0" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults <== 5\n" }, "s.ini:2", "column" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults\n" }, "s.ini:2", "region = event bound" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults 9..2\n" }, "s.ini:2", "empty" },
	{ { "budgets/any/s.ini" }, { "r = page-faults <= 5\n" }, "s.ini:1", "outside a [test] section" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults <= 5\nr = page-faults <= 6\n" }, "s.ini:3", "second budget" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults <= 5\n[t]\nr = page-faults = 4\n" }, "s.ini:4", "second budget" },
	{ { "budgets/any/s.ini" }, { "DIR" }, "budgets/any/s.ini", "not a regular file" },
	{ { "budgets/any" }, { "a file, not a key directory" }, "budgets/any", "expected a directory" },
	{ { "budgets/any/notes.txt" }, { "hello\n" }, "notes.txt", "not a budget file" },
	{ { "budgets/any/s.ini" }, { "[t]\nthis line has no equals sign\n" }, "s.ini:2", "expected" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults <= 5 per iterations\n" }, "s.ini:2", "column" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = sim:Bogus <= 5\n" }, "s.ini:2", "callgrind event" },
	{ { "map.ini" }, { BASE_MAP "^X-1$ = m\n" }, "map.ini:3", "already mapped" },
	{ { "map.ini" }, { "[map]\n^X-1$ = m\n^X-2$ = nomodel\n" }, "map.ini:3", "no models.ini defines" },
	{ { "map.ini" }, { "DIR" }, "map.ini", "not a regular file" },
	{ { "map.ini" }, { "[map]\nX-1 = m\n" }, "map.ini:2", "anchored" },
	{ { "map.ini" }, { "[map]\n^(x$ = m\n" }, "map.ini:2", "Unmatched" },
	{ { "models.ini" }, { BASE_MODELS "fixed_width = 1000\n" }, "models.ini:4", "out of range" },
	{ { "models.ini" }, { BASE_MODELS "general_width = 0\n" }, "models.ini:4", "out of range" },
	{ { "models.ini" }, { BASE_MODELS "breakpoint_slots = 99\n" }, "models.ini:4", "out of range" },
	{ { "models.ini" }, { BASE_MODELS "general_counters = 65\n" }, "models.ini:4", "out of range" },
	{ { "models.ini" }, { BASE_MODELS "name = again\n" }, "models.ini:4", "given twice" },
	{ { "models.ini" }, { BASE_MODELS "[n]\nname = N\n[m]\nvendor = V\n" }, "models.ini:7", "defined twice" },
	{ { "models.ini" }, { BASE_MODELS "[lonely]\nname = L\narch = x86_64\n" }, "models.ini:4", "never reached" },
	{ { "models.ini" }, { BASE_MODELS "deterministic = nosuchevent, ,,instructions:q\n" }, "models.ini:4", "empty item" },
	{ { "models.ini" }, { BASE_MODELS "deterministic = nosuchevent\n" }, "models.ini:4", "unknown event" },
	{ { "models.ini" }, { BASE_MODELS "deterministic = instructions:q\n" }, "models.ini:4", "unknown modifier" },
	/* Two errors of one model, each at its own line. */
	{ { "models.ini" }, { BASE_MODELS "[lonely]\nname = L\narch = x86_64\ndeterministic = nosuchevent\n" }, "models.ini:4: model [lonely] is never reached", "never reached" },
	{ { "models.ini" }, { BASE_MODELS "[lonely]\nname = L\narch = x86_64\ndeterministic = nosuchevent\n" }, "models.ini:7: [lonely] deterministic", "unknown event" },
	/* Names the gates cannot look up (hwdb/README.md, "Region names"). */
	{ { "budgets/any/s.ini" }, { "[t]\nmy parse = page-faults <= 5\n" }, "s.ini:2", "region name \"my parse\" cannot be budgeted: it contains a blank" },
	{ { "budgets/any/s.ini" }, { "[t]\n = page-faults <= 5\n" }, "s.ini:2", "it is empty" },
	{ { "budgets/any/s.ini" }, { "[t]\nmy\xc2\xa0parse = page-faults <= 5\n" }, "s.ini:2", "non-breaking space" },
	{ { "budgets/any/s.ini" }, { "[t]\nparse\x01 = page-faults <= 5\n" }, "s.ini:2", "control character" },
	{ { "budgets/any/s.ini" }, { "[t]\npar\xffse = page-faults <= 5\n" }, "s.ini:2", "not valid UTF-8" },
	{ { "budgets/any/s.ini" }, { "[my test]\nparse = page-faults <= 5\n" }, "s.ini:2", "test \"my test\" cannot be budgeted" },
	/* The '=' forgotten: not read as region "parse calls", event "malloc". */
	{ { "budgets/any/s.ini" }, { "[t]\nparse calls:malloc <= 20\n" }, "s.ini:2", "region name \"parse calls:malloc <\"" },
	{ { "budgets/any/s.ini" }, { "[t]\nr = page-faults <= 5\n[t\nr = page-faults <= 6\n" }, "s.ini:3", "without its ']'" },
	{ { "budgets/any/s.ini" }, { "[t] x\nr = page-faults <= 5\n" }, "s.ini:1", "text after a section header" },
	{ { "models.ini" }, { "[m]\n\ngeneral_width = x\ngeneral_counters = y\n" }, "models.ini:3", "whole number" },
	{ { "models.ini" }, { "DIR" }, "models.ini", "not a regular file" },
	{ { "models.ini" }, { BASE_MODELS "colour = blue\n" }, "models.ini:4", "unknown fact" },
	{ { "budgets/any/s.ini", "budgets/any/u.ini" },
	  { "[t]\nr = page-faults <= 5\n", "[t]\nr = instructions::u <= 5\n" }, "u.ini:2", "one group" },
};

struct findings {
	char all[8192];
	size_t n;
};

static void collect(void *user, const struct pmc_error *f)
{
	struct findings *c = user;
	size_t used = strlen(c->all);

	snprintf(c->all + used, sizeof(c->all) - used, "%s\n", f->message);
	c->n++;
}

T_CASE(broken_trees_refused)
{
	size_t refused = 0;

	for (size_t i = 0; i < sizeof(broken_trees) / sizeof(broken_trees[0]); i++) {
		const struct broken_tree *t = &broken_trees[i];
		const char *dir = t_tmpdir("hwdb");
		const char *dirs[1] = { dir };
		struct pmc_hwdb *db = NULL;
		struct pmc_error err;
		struct findings f = { "", 0 };
		char path[4200];
		int rc;

		t_write(dir, "map.ini", BASE_MAP);
		t_write(dir, "models.ini", BASE_MODELS);
		for (int k = 0; k < 2 && t->file[k]; k++) {
			snprintf(path, sizeof(path), "%s/%s", dir, t->file[k]);
			if (!strcmp(t->text[k], "DIR")) {
				unlink(path);
				snprintf(path, sizeof(path), "mkdir -p '%s/%s'", dir, t->file[k]);
				T_CHECK(system(path) == 0, "mkdir");
			} else {
				t_write(dir, t->file[k], t->text[k]);
			}
		}
		rc = pmc_hwdb_open(&db, dirs, 1, &err);
		if (rc == 0) {
			pmc_hwdb_lint(db, collect, &f, NULL, NULL);
			pmc_hwdb_free(db);
		} else {
			snprintf(f.all, sizeof(f.all), "%s", err.message);
			f.n = 1;
		}
		T_CHECK(f.n > 0, "tree %zu (%s): accepted", i, t->text[0]);
		T_CHECK(strstr(f.all, t->where) && strstr(f.all, t->why) && strstr(f.all, dir),
			"tree %zu: \"%s\" lacks %s / %s", i, f.all, t->where, t->why);
		refused++;
	}
	printf("%zu broken hwdb trees, %zu refused with file, line and reason\n",
	       sizeof(broken_trees) / sizeof(broken_trees[0]), refused);
	T_CHECK(refused >= 30, "at least 30 trees");
}

T_CASE(check_finds_duplicates_and_counts)
{
	const char *dir = t_tmpdir("hwdb");
	const char *dirs[1] = { dir };
	struct pmc_hwdb *db;
	struct pmc_error err;
	size_t n = 0;

	t_write(dir, "budgets/any/a.ini", "[t]\nr = page-faults <= 1\nr = task-clock <= 1\n");
	t_write(dir, "budgets/zen4/b.ini", "[t]\nr = instructions = 3\n[u]\nr = instructions = 3\n");
	T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0, "%s", err.message);
	T_CHECK(pmc_hwdb_check(db, &n, &err) == 0, "%s", err.message);
	T_CHECK(n >= 4, "counted %zu lines", n);
	pmc_hwdb_free(db);
	t_write(dir, "budgets/any/a.ini", "[t]\nr = page-faults <= 1\n\nr = page-faults <= 2\n");
	T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0, "%s", err.message);
	T_CHECK(pmc_hwdb_check(db, &n, &err) == PMC_E_SYNTAX && strstr(err.message, "a.ini:4") &&
			strstr(err.message, "line 2"),
		"duplicate: %s", err.message);
	pmc_hwdb_free(db);
}

T_CASE(deterministic_list)
{
	struct pmc_hwdb_model m = { .deterministic = "instructions:u, branches:u" };

	T_CHECK(pmc_hwdb_model_deterministic(&m, "instructions:u"), "listed");
	T_CHECK(pmc_hwdb_model_deterministic(&m, "branches:u"), "listed second");
	T_CHECK(!pmc_hwdb_model_deterministic(&m, "instructions"), "no prefix match");
	T_CHECK(!pmc_hwdb_model_deterministic(NULL, "instructions"), "no model");
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
