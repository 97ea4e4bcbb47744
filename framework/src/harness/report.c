/* SPDX-License-Identifier: MIT */
/*
 * Reports of a run: the results document (JSON, schema in
 * framework/schema/results.schema.json), JUnit XML, TAP, the console, CDash
 * measurements, and `pmcheck results` (merge + the all-skipped guard).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"

#define SCHEMA_ID "pmcheck-results/1"

int pmc__verdict_from_name(const char *s)
{
	int v;

	for (v = PMC_PASS; s && v <= PMC_ERROR; v++)
		if (!strcmp(s, pmc_verdict_name((enum pmc_verdict)v)))
			return v;
	return -1;
}

/* ---- environment ----------------------------------------------------------------- */

static json_t *git_commit(void)
{
	static const char *const vars[] = { "PMCHECK_GIT_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA" };
	char line[128] = "";
	size_t i;
	FILE *p;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		if (v && *v)
			return json_string(v);
	}
	/* The working directory's repository, if any; silent when there is
	 * no git or no repository. */
	p = popen("git rev-parse HEAD 2>/dev/null", "re");
	if (!p)
		return json_null();
	if (!fgets(line, sizeof(line), p))
		line[0] = '\0';
	pclose(p);
	line[strcspn(line, "\n")] = '\0';
	return strlen(line) == 40 ? json_string(line) : json_null();
}

json_t *pmc__environment(const char *backend)
{
	struct pmc_cpu_id cpu;
	struct utsname u;
	char pmus[512], host[256] = "", date[64];
	time_t now = time(NULL);
	struct tm tm;
	int paranoid = pmc_machine_paranoid();
	int has_pmu = pmc_machine_has_hw_pmu(pmus, sizeof(pmus));
	json_t *env;

	pmc_cpu_identify(&cpu);
	if (uname(&u) != 0)
		memset(&u, 0, sizeof(u));
	gethostname(host, sizeof(host) - 1);
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", &tm);
	env = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:s}, s:{s:s, s:s, s:s}, s:s, s:o, s:b, s:s, s:s, s:s, s:s, s:s}",
			"pmcheck_version", PMCHECK_VERSION_STRING,
			"cpu", "signature", cpu.signature, "vendor", cpu.vendor, "brand", cpu.brand,
			"arch", cpu.arch, "family", cpu.family, "model", cpu.model, "stepping",
			cpu.stepping, "how", cpu.how,
			"kernel", "release", u.release, "version", u.version, "machine", u.machine,
			"backend", backend,
			"perf_event_paranoid", paranoid == INT32_MIN ? json_null() : json_integer(paranoid),
			"hardware_pmu", has_pmu, "pmus", pmus,
#if defined(__clang__)
			"compiler", "clang " __clang_version__,
#elif defined(__GNUC__)
			"compiler", "gcc " __VERSION__,
#else
			"compiler", "unknown",
#endif
			"hostname", host, "date", date, "uid", geteuid() == 0 ? "root" : "user");
	if (env) {
		json_object_set_new(env, "git_commit", git_commit());
		if (cpu.hypervisor >= 0)
			json_object_set_new(json_object_get(env, "cpu"), "hypervisor",
					    json_boolean(cpu.hypervisor));
		if (!strcmp(backend, "sim")) {
			json_t *pinned = json_array();
			const char *const *e;

			for (e = pmc_sim_pinned_env(); *e; e++)
				json_array_append_new(pinned, json_string(*e));
			json_object_set_new(env, "sim",
					    json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "valgrind",
						      pmc_sim_valgrind_version(), "geometry",
						      PMC_SIM_GEOMETRY, "I1", PMC_SIM_I1, "D1",
						      PMC_SIM_D1, "LL", PMC_SIM_LL, "pinned_env", pinned));
		}
	}
	return env;
}

json_t *pmc__summary(json_t *cases)
{
	size_t counts[PMC_ERROR + 1] = { 0 }, measured = 0, measuring = 0, unbudgeted = 0, i, ci;
	json_t *c, *reasons = json_object(), *o;
	char line[512];
	int v;

	json_array_foreach(cases, i, c) {
		json_t *regions = json_object_get(c, "regions"), *r, *chk;
		const char *reason = json_string_value(json_object_get(c, "reason"));
		size_t ri;
		bool any = false;

		v = pmc__verdict_from_name(json_string_value(json_object_get(c, "verdict")));
		if (v < 0)
			v = PMC_ERROR;
		counts[v]++;
		json_array_foreach(regions, ri, r)
			any = any || json_integer_value(json_object_get(r, "samples")) > 0;
		if (any && v != PMC_SKIP && v != PMC_ERROR)
			measured++;
		/* Results without the flag (crashes, older files) count as measuring. */
		if (!json_is_false(json_object_get(c, "measuring")))
			measuring++;
		json_array_foreach(json_object_get(c, "checks"), ci, chk)
			unbudgeted += !strcmp(json_string_value(json_object_get(chk, "status")) ?: "", "unbudgeted");
		if (v == PMC_SKIP) {
			const char *key = reason ? reason : "(no reason given)";
			json_t *n = json_object_get(reasons, key);

			json_object_set_new(reasons, key,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
	}
	snprintf(line, sizeof(line), "%zu cases: %zu PASS, %zu FAIL, %zu SKIP, %zu ERROR, %zu INCONCLUSIVE, %zu KNOWN-ISSUE; %zu measured",
		 json_array_size(cases), counts[PMC_PASS], counts[PMC_FAIL], counts[PMC_SKIP],
		 counts[PMC_ERROR], counts[PMC_INCONCLUSIVE], counts[PMC_KNOWN_ISSUE], measured);
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:s, s:i}",
		      "total", (json_int_t)json_array_size(cases), "pass", (json_int_t)counts[PMC_PASS],
		      "fail", (json_int_t)counts[PMC_FAIL], "skip", (json_int_t)counts[PMC_SKIP],
		      "error", (json_int_t)counts[PMC_ERROR], "inconclusive",
		      (json_int_t)counts[PMC_INCONCLUSIVE], "known_issue",
		      (json_int_t)counts[PMC_KNOWN_ISSUE], "measured", (json_int_t)measured,
		      "unbudgeted", (json_int_t)unbudgeted, "skip_reasons", reasons, "line", line,
		      "exit_status", pmc__exit_status(counts));
	if (o)
		json_object_set_new(o, "measuring", json_integer((json_int_t)measuring));
	return o;
}

json_t *pmc__results_doc(json_t *cases, const struct pmc__run_info *info)
{
	json_t *argv = json_array(), *env, *sim_cpu;
	int i;

	for (i = 0; i < info->argc; i++)
		json_array_append_new(argv, json_string(info->argv[i]));
	env = pmc__environment(info->backend);
	/* Under sim the environment is the host's; the simulated CPU is
	 * what the cases saw. */
	sim_cpu = json_object_get(json_array_get(cases, 0), "simulated_cpu");
	if (json_is_string(sim_cpu) && json_object_get(env, "sim"))
		json_object_set(json_object_get(env, "sim"), "simulated_cpu", sim_cpu);
	return json_pack("{s:s, s:s, s:o, s:o, s:f, s:o, s:o}", "schema", SCHEMA_ID, "program",
			 info->program, "command", argv, "environment", env, "duration_s",
			 info->duration_s, "summary", pmc__summary(cases), "cases", cases);
}

int pmc__write_json(const char *path, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	size_t len;
	int rc;

	if (!text)
		return -ENOMEM;
	len = strlen(text);
	text[len] = '\0';
	{
		char *t2 = realloc(text, len + 2);

		if (t2) {
			text = t2;
			text[len++] = '\n';
			text[len] = '\0';
		}
	}
	rc = pmc_write_file_atomic(path, text, len);
	free(text);
	return rc;
}

/* ---- JUnit ---------------------------------------------------------------------------- */

struct buf {
	char *p;
	size_t len, cap;
	bool oom;
};

static void bputn(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->cap ? b->cap : 4096);
		char *p;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->oom = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void bputs(struct buf *b, const char *s)
{
	bputn(b, s, strlen(s));
}

static void bprintf(struct buf *b, const char *fmt, ...) PMC__FMT(2, 3);
static void bprintf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		bputn(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* XML-escape; characters XML 1.0 cannot carry at all become '?'. */
static void bxml(struct buf *b, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '<': bputs(b, "&lt;"); break;
		case '>': bputs(b, "&gt;"); break;
		case '&': bputs(b, "&amp;"); break;
		case '"': bputs(b, "&quot;"); break;
		case '\'': bputs(b, "&apos;"); break;
		default:
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
				bputs(b, "?");
			else
				bputn(b, s, 1);
		}
	}
}

static const char *str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

char *pmc__junit(json_t *doc)
{
	json_t *cases = json_object_get(doc, "cases"), *sum = json_object_get(doc, "summary"), *c;
	struct buf b = { 0 };
	size_t i;

	bputs(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	bputs(&b, "<testsuites name=\"");
	bxml(&b, str(doc, "program"));
	bprintf(&b, "\" tests=\"%zu\" failures=\"%" JSON_INTEGER_FORMAT "\" errors=\"%" JSON_INTEGER_FORMAT "\" skipped=\"%" JSON_INTEGER_FORMAT "\" time=\"%.3f\">\n",
		json_array_size(cases),
		json_integer_value(json_object_get(sum, "fail")) +
			json_integer_value(json_object_get(sum, "inconclusive")),
		json_integer_value(json_object_get(sum, "error")),
		json_integer_value(json_object_get(sum, "skip")) +
			json_integer_value(json_object_get(sum, "known_issue")),
		json_real_value(json_object_get(doc, "duration_s")));
	/* One <testsuite> per suite, in first-seen order. */
	{
		json_t *seen = json_object();

		json_array_foreach(cases, i, c) {
			const char *suite = str(c, "suite");
			size_t j, n = 0, f = 0, e = 0, s = 0;
			double secs = 0;
			json_t *d;

			if (json_object_get(seen, suite))
				continue;
			json_object_set_new(seen, suite, json_true());
			json_array_foreach(cases, j, d) {
				int v;

				if (strcmp(str(d, "suite"), suite))
					continue;
				v = pmc__verdict_from_name(str(d, "verdict"));
				n++;
				f += v == PMC_FAIL || v == PMC_INCONCLUSIVE;
				e += v == PMC_ERROR || v < 0;
				s += v == PMC_SKIP || v == PMC_KNOWN_ISSUE;
				secs += json_number_value(json_object_get(d, "duration_s"));
			}
			bputs(&b, "  <testsuite name=\"");
			bxml(&b, suite);
			bprintf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
				n, f, e, s, secs);
			json_array_foreach(cases, j, d) {
				const char *verdict = str(d, "verdict"), *reason = str(d, "reason");
				int v = pmc__verdict_from_name(verdict);

				if (strcmp(str(d, "suite"), suite))
					continue;
				bputs(&b, "    <testcase classname=\"");
				bxml(&b, suite);
				bputs(&b, "\" name=\"");
				bxml(&b, str(d, "test"));
				bprintf(&b, "\" file=\"");
				bxml(&b, str(d, "file"));
				bprintf(&b, "\" line=\"%" JSON_INTEGER_FORMAT "\" time=\"%.3f\">\n",
					json_integer_value(json_object_get(d, "line")),
					json_number_value(json_object_get(d, "duration_s")));
				if (v == PMC_SKIP || v == PMC_KNOWN_ISSUE) {
					bputs(&b, "      <skipped message=\"");
					if (v == PMC_KNOWN_ISSUE)
						bputs(&b, "KNOWN-ISSUE: ");
					bxml(&b, reason);
					bputs(&b, "\"/>\n");
				} else if (v == PMC_FAIL || v == PMC_INCONCLUSIVE || v == PMC_ERROR || v < 0) {
					const char *tag = v == PMC_ERROR || v < 0 ? "error" : "failure";
					json_t *chk;
					size_t k;

					bprintf(&b, "      <%s type=\"%s\" message=\"", tag, verdict);
					bxml(&b, reason);
					bputs(&b, "\">");
					json_array_foreach(json_object_get(d, "checks"), k, chk) {
						bxml(&b, str(chk, "status"));
						bputs(&b, ": ");
						bxml(&b, str(chk, "message"));
						bputs(&b, "\n");
					}
					bprintf(&b, "</%s>\n", tag);
				}
				if (*str(d, "output")) {
					bputs(&b, "      <system-out>");
					bxml(&b, str(d, "output"));
					bputs(&b, "</system-out>\n");
				}
				bputs(&b, "    </testcase>\n");
			}
			bputs(&b, "  </testsuite>\n");
		}
		json_decref(seen);
	}
	bputs(&b, "</testsuites>\n");
	if (b.oom) {
		free(b.p);
		return NULL;
	}
	return b.p;
}

/* ---- console ----------------------------------------------------------------------------- */

static const char *verdict_color(int v)
{
	switch (v) {
	case PMC_PASS: return "\033[32m";
	case PMC_SKIP: return "\033[33m";
	case PMC_KNOWN_ISSUE: return "\033[36m";
	case PMC_INCONCLUSIVE: return "\033[35m";
	default: return "\033[31m";
	}
}

/* "insert: instructions=1200 calls:malloc=0" for the first regions. */
static void key_counts(json_t *res, char *buf, size_t size)
{
	json_t *regions = json_object_get(res, "regions"), *r;
	size_t i, used = 0;

	buf[0] = '\0';
	json_array_foreach(regions, i, r) {
		json_t *evs = json_object_get(r, "events"), *st;
		const char *label;
		int k = 0;

		if (i >= 3 || used + 1 >= size) {
			if (used + 6 < size)
				used += (size_t)snprintf(buf + used, size - used, " ...");
			break;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s:", i ? "  " : "", str(r, "name"));
		json_object_foreach(evs, label, st) {
			json_int_t mn = json_integer_value(json_object_get(st, "min"));
			json_int_t mx = json_integer_value(json_object_get(st, "max"));

			if (used + 1 >= size)
				break;
			if (k++ >= 4) {
				used += (size_t)snprintf(buf + used, size - used, " ...");
				break;
			}
			if (mn == mx)
				used += (size_t)snprintf(buf + used, size - used, " %s=%" JSON_INTEGER_FORMAT, label, mn);
			else
				used += (size_t)snprintf(buf + used, size - used, " %s=%" JSON_INTEGER_FORMAT "..%" JSON_INTEGER_FORMAT, label, mn, mx);
		}
		if (json_integer_value(json_object_get(r, "samples")) > 1 && used + 1 < size)
			used += (size_t)snprintf(buf + used, size - used, " (%" JSON_INTEGER_FORMAT " samples)",
						 json_integer_value(json_object_get(r, "samples")));
	}
}

/* A verdict that came from a check: the check's own line says it (each
 * failure is printed once). */
static bool reason_is_a_check(json_t *res)
{
	const char *reason = str(res, "reason");
	json_t *chk;
	size_t i;

	json_array_foreach(json_object_get(res, "checks"), i, chk)
		if (strcmp(str(chk, "status"), "pass") && *str(chk, "message") &&
		    strstr(reason, str(chk, "message")))
			return true;
	return false;
}

void pmc__print_case_line(FILE *f, json_t *res, size_t idx, size_t total, bool color)
{
	const char *verdict = str(res, "verdict");
	int v = pmc__verdict_from_name(verdict);
	char counts[512];
	int w = total >= 100 ? 3 : total >= 10 ? 2 : 1;

	key_counts(res, counts, sizeof(counts));
	fprintf(f, "[%*zu/%zu] %s%-12s%s %-40s %7.3fs  %s", w, idx, total, color ? verdict_color(v) : "",
		verdict, color ? "\033[0m" : "", str(res, "name"),
		json_number_value(json_object_get(res, "duration_s")), counts);
	if (v != PMC_PASS && *str(res, "reason") && (v == PMC_KNOWN_ISSUE || !reason_is_a_check(res)))
		fprintf(f, "%s%s", counts[0] ? "\n        " : "", str(res, "reason"));
	fputc('\n', f);
}

void pmc__print_case_details(FILE *f, json_t *res, bool verbose)
{
	int v = pmc__verdict_from_name(str(res, "verdict"));
	bool bad = v == PMC_FAIL || v == PMC_ERROR || v == PMC_INCONCLUSIVE || v < 0;
	json_t *chk, *note, *r;
	size_t i;

	json_array_foreach(json_object_get(res, "checks"), i, chk) {
		const char *st = str(chk, "status");

		if (verbose || strcmp(st, "pass"))
			fprintf(f, "        %-12s %s\n", st, str(chk, "message"));
	}
	json_array_foreach(json_object_get(res, "notes"), i, note)
		fprintf(f, "        note: %s\n", json_string_value(note));
	if (verbose) {
		json_array_foreach(json_object_get(res, "regions"), i, r) {
			const char *label;
			json_t *st;

			fprintf(f, "        region %s: %" JSON_INTEGER_FORMAT " samples, %" JSON_INTEGER_FORMAT " iterations each\n",
				str(r, "name"), json_integer_value(json_object_get(r, "samples")),
				json_integer_value(json_object_get(r, "iterations")));
			json_object_foreach(json_object_get(r, "events"), label, st)
				fprintf(f, "          %-28s min %" JSON_INTEGER_FORMAT "  median %g  max %" JSON_INTEGER_FORMAT "  (overhead %" JSON_INTEGER_FORMAT " subtracted)\n",
					label, json_integer_value(json_object_get(st, "min")),
					json_number_value(json_object_get(st, "median")),
					json_integer_value(json_object_get(st, "max")),
					json_integer_value(json_object_get(json_object_get(res, "overhead"), label)));
		}
		if (*str(res, "grouping"))
			fprintf(f, "        groups %s, read path %s\n", str(res, "grouping"), str(res, "read_path"));
	}
	if ((bad || verbose) && *str(res, "output")) {
		const char *out = str(res, "output");
		const char *p = out + strlen(out);
		int lines = 0;

		/* The last 40 lines are what explains a failure. */
		while (p > out && (verbose || lines < 40))
			if (*--p == '\n' && p[1])
				lines++;
		if (*p == '\n')
			p++;
		fprintf(f, "        --- output%s ---\n", p > out ? " (tail)" : "");
		while (*p) {
			size_t n = strcspn(p, "\n");

			fprintf(f, "        | %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
	}
}

void pmc__print_summary(FILE *f, json_t *summary, double seconds)
{
	json_t *reasons = json_object_get(summary, "skip_reasons"), *n;
	const char *reason;

	fprintf(f, "\n%s  (%.2f s)\n", str(summary, "line"), seconds);
	if (json_object_size(reasons)) {
		fprintf(f, "skipped:\n");
		json_object_foreach(reasons, reason, n)
			fprintf(f, "  %3" JSON_INTEGER_FORMAT " x %s\n", json_integer_value(n), reason);
	}
	if (json_integer_value(json_object_get(summary, "unbudgeted")))
		fprintf(f, "%" JSON_INTEGER_FORMAT " expectation(s) without a budget here (each fails where its suite has budgets under other keys, and under --strict)\n",
			json_integer_value(json_object_get(summary, "unbudgeted")));
}

/* TAP 13: a directive's text must not contain '#' or newlines. */
static void tap_text(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '#' ? '%' : *s == '\n' ? ' ' : *s, f);
}

void pmc__print_tap(FILE *f, json_t *res, size_t idx)
{
	int v = pmc__verdict_from_name(str(res, "verdict"));
	json_t *chk;
	size_t i;

	fprintf(f, "%s %zu - %s", v == PMC_PASS || v == PMC_SKIP ? "ok" : "not ok", idx, str(res, "name"));
	if (v == PMC_SKIP) {
		fputs(" # SKIP ", f);
		tap_text(f, str(res, "reason"));
	} else if (v == PMC_KNOWN_ISSUE) {
		fputs(" # TODO ", f);
		tap_text(f, str(res, "reason"));
	}
	fputc('\n', f);
	if (v == PMC_FAIL || v == PMC_ERROR || v == PMC_INCONCLUSIVE || v < 0) {
		fprintf(f, "  ---\n  verdict: %s\n  message: \"", str(res, "verdict"));
		for (const char *p = str(res, "reason"); *p; p++)
			fputs(*p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : (char[]){ *p, 0 }, f);
		fputs("\"\n", f);
		json_array_foreach(json_object_get(res, "checks"), i, chk)
			if (strcmp(str(chk, "status"), "pass")) {
				fputs("  # ", f);
				tap_text(f, str(chk, "message"));
				fputc('\n', f);
			}
		fputs("  ...\n", f);
	}
}

void pmc__print_ctest_measurements(FILE *f, json_t *res)
{
	json_t *r, *st;
	const char *label;
	size_t i;

	json_array_foreach(json_object_get(res, "regions"), i, r)
		json_object_foreach(json_object_get(r, "events"), label, st)
			fprintf(f, "<CTestMeasurement type=\"numeric/double\" name=\"%s.%s\">%" JSON_INTEGER_FORMAT "</CTestMeasurement>\n",
				str(r, "name"), label, json_integer_value(json_object_get(st, "min")));
}

/* ---- pmcheck results --------------------------------------------------------------------- */

static const char *json_type_name(json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER: return "an integer";
	case JSON_REAL: return "a fraction";
	case JSON_TRUE:
	case JSON_FALSE: return "a boolean";
	default: return "null";
	}
}

/* Is o[key] of the wanted type?  Fills why with the field's path if not. */
static bool want(json_t *o, const char *key, json_type type, bool optional, const char *path,
		 const char *at, char *why, size_t size)
{
	json_t *v = json_object_get(o, key);
	static const char *const names[] = { "an object", "an array", "a string",
					     "an integer", "a number", "a boolean" };
	bool ok;

	if (!v || (optional && json_is_null(v))) {
		if (optional)
			return true;
		snprintf(why, size, "%s: %s%s%s: missing", path, at, *at ? "." : "", key);
		return false;
	}
	ok = json_typeof(v) == type || (type == JSON_REAL && json_is_number(v)) ||
	     (type == JSON_TRUE && json_is_boolean(v));
	if (!ok)
		snprintf(why, size, "%s: %s%s%s: expected %s, found %s", path, at, *at ? "." : "",
			 key, names[type == JSON_REAL ? 4 : type == JSON_TRUE ? 5 : type],
			 json_type_name(v));
	return ok;
}

int pmc__results_load(const char *path, json_t **out, char *why, size_t size)
{
	json_error_t jerr;
	json_t *doc = json_load_file(path, 0, &jerr), *c;
	size_t i;

	*out = NULL;
	if (!doc) {
		snprintf(why, size, "%s:%d: not JSON: %s", path, jerr.line, jerr.text);
		return -1;
	}
	if (!json_is_object(doc) || strcmp(str(doc, "schema"), SCHEMA_ID)) {
		snprintf(why, size, "%s: not a pmcheck results file (schema \"%s\", expected \"%s\")",
			 path, json_is_object(doc) ? str(doc, "schema") : "(not an object)", SCHEMA_ID);
		goto bad;
	}
	if (!want(doc, "cases", JSON_ARRAY, false, path, "", why, size) ||
	    !want(doc, "environment", JSON_OBJECT, false, path, "", why, size))
		goto bad;
	json_array_foreach(json_object_get(doc, "cases"), i, c) {
		char at[64], rat[640];
		json_t *r, *st, *chk;
		const char *label;
		size_t j, k;

		snprintf(at, sizeof(at), "cases[%zu]", i);
		if (!json_is_object(c)) {
			snprintf(why, size, "%s: %s: expected an object, found %s", path, at,
				 json_type_name(c));
			goto bad;
		}
		if (!want(c, "name", JSON_STRING, false, path, at, why, size) ||
		    !want(c, "verdict", JSON_STRING, false, path, at, why, size) ||
		    !want(c, "regions", JSON_ARRAY, false, path, at, why, size) ||
		    !want(c, "checks", JSON_ARRAY, false, path, at, why, size) ||
		    !want(c, "reason", JSON_STRING, true, path, at, why, size))
			goto bad;
		if (pmc__verdict_from_name(str(c, "verdict")) < 0) {
			snprintf(why, size, "%s: %s.verdict: unknown verdict \"%s\"", path, at,
				 str(c, "verdict"));
			goto bad;
		}
		json_array_foreach(json_object_get(c, "regions"), j, r) {
			snprintf(rat, sizeof(rat), "%s.regions[%zu]", at, j);
			if (!json_is_object(r) ||
			    !want(r, "name", JSON_STRING, false, path, rat, why, size) ||
			    !want(r, "samples", JSON_INTEGER, false, path, rat, why, size) ||
			    !want(r, "events", JSON_OBJECT, false, path, rat, why, size)) {
				if (!json_is_object(r))
					snprintf(why, size, "%s: %s: expected an object", path, rat);
				goto bad;
			}
			json_object_foreach(json_object_get(r, "events"), label, st) {
				char eat[900];

				snprintf(eat, sizeof(eat), "%s.events[\"%s\"]", rat, label);
				if (!json_is_object(st)) {
					snprintf(why, size, "%s: %s: expected an object", path, eat);
					goto bad;
				}
				if (!want(st, "n", JSON_INTEGER, false, path, eat, why, size) ||
				    !want(st, "min", JSON_INTEGER, false, path, eat, why, size) ||
				    !want(st, "max", JSON_INTEGER, false, path, eat, why, size) ||
				    !want(st, "multiplexed", JSON_INTEGER, true, path, eat, why, size) ||
				    !want(st, "not_counted", JSON_INTEGER, true, path, eat, why, size))
					goto bad;
			}
		}
		json_array_foreach(json_object_get(c, "checks"), k, chk) {
			snprintf(rat, sizeof(rat), "%s.checks[%zu]", at, k);
			if (!json_is_object(chk) ||
			    !want(chk, "status", JSON_STRING, false, path, rat, why, size) ||
			    !want(chk, "message", JSON_STRING, false, path, rat, why, size) ||
			    !want(chk, "measured", JSON_REAL, true, path, rat, why, size)) {
				if (!json_is_object(chk))
					snprintf(why, size, "%s: %s: expected an object", path, rat);
				goto bad;
			}
		}
	}
	*out = doc;
	return 0;
bad:
	json_decref(doc);
	return -1;
}

static int load_into(const char *path, json_t *cases, json_t **env)
{
	char why[1024];
	json_t *doc, *c;
	size_t i;

	if (pmc__results_load(path, &doc, why, sizeof(why))) {
		fprintf(stderr, "pmcheck results: %s\n", why);
		return -1;
	}
	json_array_foreach(json_object_get(doc, "cases"), i, c)
		json_array_append(cases, c);
	if (!*env)
		*env = json_incref(json_object_get(doc, "environment"));
	json_decref(doc);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int load_dir(const char *dir, json_t *cases, json_t **env, size_t *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, i;
	int rc = 0;

	if (!d) {
		fprintf(stderr, "pmcheck results: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char **p;

		if (len < 6 || strcmp(e->d_name + len - 5, ".json"))
			continue;
		p = realloc(names, (n + 1) * sizeof(*names));
		if (!p)
			break;
		names = p;
		if (asprintf(&names[n], "%s/%s", dir, e->d_name) < 0)
			break;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0; i < n; i++) {
		rc |= load_into(names[i], cases, env);
		free(names[i]);
	}
	free(names);
	*files += n;
	return rc;
}

/* Verdict counts per suite (for a conformance suite: per area of the
 * manual), in the order suites first appear. */
static json_t *counts_by_suite(json_t *cases)
{
	static const char *const verdicts[] = { "PASS", "FAIL", "SKIP", "ERROR", "KNOWN-ISSUE",
						"INCONCLUSIVE" };
	json_t *out = json_object(), *c;
	size_t i;

	json_array_foreach(cases, i, c) {
		const char *suite = str(c, "suite"), *v = str(c, "verdict");
		json_t *row = json_object_get(out, suite);

		if (!row) {
			row = json_object();
			for (size_t k = 0; k < sizeof(verdicts) / sizeof(verdicts[0]); k++)
				json_object_set_new(row, verdicts[k], json_integer(0));
			json_object_set_new(out, suite, row);
		}
		if (json_object_get(row, v))
			json_object_set_new(row, v,
					    json_integer(json_integer_value(json_object_get(row, v)) + 1));
	}
	return out;
}

/* The per-suite table, as text or Markdown, headed by what was tested. */
static char *suite_table(json_t *by, json_t *env, bool markdown)
{
	json_t *kernel = json_object_get(env, "kernel"), *cpu = json_object_get(env, "cpu"), *row;
	const char *suite;
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f)
		return NULL;
	fprintf(f, "%sPer-suite results: kernel %s (%s), CPU %s, backend %s\n\n",
		markdown ? "### " : "", str(kernel, "release"), str(kernel, "machine"),
		str(cpu, "signature"), str(env, "backend"));
	if (markdown)
		fprintf(f, "| suite | pass | fail | skip | error | known issue | inconclusive |\n"
			   "| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
	else
		fprintf(f, "  %-14s %5s %5s %5s %5s %6s %6s\n", "suite", "pass", "fail", "skip",
			"error", "known", "inconc");
	json_object_foreach(by, suite, row) {
#define N(v) json_integer_value(json_object_get(row, v))
		if (markdown)
			fprintf(f, "| %s | %lld | %lld | %lld | %lld | %lld | %lld |\n", suite,
				N("PASS"), N("FAIL"), N("SKIP"), N("ERROR"), N("KNOWN-ISSUE"),
				N("INCONCLUSIVE"));
		else
			fprintf(f, "  %-14s %5lld %5lld %5lld %5lld %6lld %6lld\n", suite, N("PASS"),
				N("FAIL"), N("SKIP"), N("ERROR"), N("KNOWN-ISSUE"), N("INCONCLUSIVE"));
#undef N
	}
	fclose(f);
	return buf;
}

int pmc__results_command(int argc, char **argv)
{
	const char *json_path = NULL, *junit_path = NULL, *md_path = NULL;
	bool require_measured = false, clear = false, by_suite = false;
	json_t *cases = json_array(), *env = NULL, *summary, *doc;
	size_t files = 0;
	int i, rc = 0, status;

	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		struct stat st;

		if (!strcmp(a, "--require-measured"))
			require_measured = true;
		else if (!strcmp(a, "--clear"))
			clear = true;
		else if (!strncmp(a, "--json=", 7))
			json_path = a + 7;
		else if (!strncmp(a, "--junit=", 8))
			junit_path = a + 8;
		else if (!strcmp(a, "--by-suite"))
			by_suite = true;
		else if (!strncmp(a, "--markdown=", 11))
			by_suite = true, md_path = a + 11;
		else if (a[0] == '-') {
			fprintf(stderr, "pmcheck results: unknown option '%s'\n", a);
			json_decref(cases);
			return PMC_EXIT_USAGE;
		} else if (clear) {
			/* Start of a run: empty the directory of old results. */
			DIR *d = opendir(a);
			struct dirent *e;

			if (!d) {
				if (mkdir(a, 0755) != 0 && errno != EEXIST) {
					fprintf(stderr, "pmcheck results: cannot create %s: %s\n", a, strerror(errno));
					rc = -1;
				}
				continue;
			}
			while ((e = readdir(d))) {
				size_t len = strlen(e->d_name);
				char *p;

				if (len > 5 && !strcmp(e->d_name + len - 5, ".json") &&
				    asprintf(&p, "%s/%s", a, e->d_name) >= 0) {
					unlink(p);
					free(p);
				}
			}
			closedir(d);
		} else if (stat(a, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc |= load_dir(a, cases, &env, &files);
		} else {
			rc |= load_into(a, cases, &env);
			files++;
		}
	}
	if (clear) {
		json_decref(cases);
		return rc ? PMC_EXIT_ERROR : 0;
	}
	summary = pmc__summary(cases);
	printf("%s (from %zu result files)\n", str(summary, "line"), files);
	{
		json_t *reasons = json_object_get(summary, "skip_reasons"), *n;
		const char *reason;

		json_object_foreach(reasons, reason, n)
			printf("  SKIP %3" JSON_INTEGER_FORMAT " x %s\n", json_integer_value(n), reason);
	}
	if (by_suite) {
		json_t *by = counts_by_suite(cases);
		char *text = suite_table(by, env, false), *md = md_path ? suite_table(by, env, true) : NULL;

		if (text)
			printf("\n%s", text);
		if (md_path && (!md || pmc_write_file_atomic(md_path, md, strlen(md)) != 0)) {
			fprintf(stderr, "pmcheck results: cannot write %s\n", md_path);
			rc = -1;
		}
		free(text);
		free(md);
		json_object_set_new(summary, "by_suite", by);
	}
	status = (int)json_integer_value(json_object_get(summary, "exit_status"));
	if (status == PMC_EXIT_SKIP)
		status = PMC_EXIT_PASS;
	if (require_measured && files > 0 && json_integer_value(json_object_get(summary, "measured")) == 0 &&
	    json_integer_value(json_object_get(summary, "measuring")) == 0) {
		/* e.g. ctest -L conformance: the selection holds no case that
		 * counts events, so there is nothing whose skipping to guard. */
		printf("no measuring case among the selected ones (they check behaviour, not counts): nothing to guard\n");
	} else if (require_measured && json_integer_value(json_object_get(summary, "measured")) == 0) {
		if (files == 0)
			fprintf(stderr, "pmcheck results: no result files: did the tests run with PMCHECK_RESULTS_DIR set?\n");
		else
			fprintf(stderr, "pmcheck results: nothing was measured: every measuring case was skipped or broken (--require-measured)\n");
		status = PMC_EXIT_FAIL;
	}
	if (rc)
		status = PMC_EXIT_ERROR;
	doc = json_pack("{s:s, s:s, s:o, s:o, s:f, s:o, s:o}", "schema", SCHEMA_ID, "program",
			"pmcheck results", "command", json_array(), "environment",
			env ? env : json_object(), "duration_s", 0.0, "summary", summary, "cases",
			cases);
	if (json_path && pmc__write_json(json_path, doc) != 0) {
		fprintf(stderr, "pmcheck results: cannot write %s\n", json_path);
		status = PMC_EXIT_ERROR;
	}
	if (junit_path) {
		char *xml = pmc__junit(doc);

		if (!xml || pmc_write_file_atomic(junit_path, xml, strlen(xml)) != 0) {
			fprintf(stderr, "pmcheck results: cannot write %s\n", junit_path);
			status = PMC_EXIT_ERROR;
		}
		free(xml);
	}
	json_decref(doc);
	return status;
}
