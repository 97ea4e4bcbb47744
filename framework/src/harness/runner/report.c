/* SPDX-License-Identifier: MIT */
/*
 * Reports of a run: the results document (JSON, schema in
 * framework/schema/results.schema.json), JUnit XML, TAP, the console, CDash
 * measurements.  `pmcheck results` (merge + the all-skipped guard) is
 * framework/tools/cmd_results.c.
 *
 * Over 600 lines because every report of a run (the results document, JUnit,
 * TAP, the console, CDash measurements) shows the same records; in one file
 * a record is shown, and its words escaped, one way.
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
#include "sim/sim_harness.h"

/* ---- environment ----------------------------------------------------------------- */

static json_t *git_commit(void)
{
	static const char *const vars[] = { "PMCHECK_GIT_COMMIT", "GITHUB_SHA", "CI_COMMIT_SHA" };
	char line[128] = "";
	size_t i;
	FILE *p;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = getenv(vars[i]);

		/* A value that is no commit would make the file unreadable
		 * (result_read.c checks it): the next source is asked. */
		if (v && pmc__commit_ok(v))
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

json_t *pmc__summary(const struct pmc__results *rs)
{
	size_t counts[PMC__NVERDICTS] = { 0 }, measured = 0, measuring = 0, unbudgeted = 0, i, k;
	json_t *reasons = json_object(), *o;
	char line[512];

	for (i = 0; i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];
		bool any = false;

		counts[c->verdict]++;
		for (k = 0; k < c->nregions; k++)
			any = any || c->regions[k].samples > 0;
		if (any && c->verdict != PMC_SKIP && c->verdict != PMC_ERROR)
			measured++;
		measuring += c->measuring;
		for (k = 0; k < c->nchecks; k++)
			unbudgeted += c->checks[k].status == PMC__CHECK_UNBUDGETED;
		if (c->verdict == PMC_SKIP) {
			const char *key = c->reason ? c->reason : "(no reason given)";
			json_t *n = json_object_get(reasons, key);

			json_object_set_new(reasons, key,
					    json_integer(n ? json_integer_value(n) + 1 : 1));
		}
	}
	snprintf(line, sizeof(line), "%zu cases: %zu PASS, %zu FAIL, %zu SKIP, %zu ERROR, %zu INCONCLUSIVE, %zu KNOWN-ISSUE, %zu UNBUDGETED; %zu measured",
		 rs->n, counts[PMC_PASS], counts[PMC_FAIL], counts[PMC_SKIP], counts[PMC_ERROR],
		 counts[PMC_INCONCLUSIVE], counts[PMC_KNOWN_ISSUE], counts[PMC_UNBUDGETED], measured);
	o = json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:s, s:i}",
		      "total", (json_int_t)rs->n, "pass", (json_int_t)counts[PMC_PASS], "fail",
		      (json_int_t)counts[PMC_FAIL], "skip", (json_int_t)counts[PMC_SKIP], "error",
		      (json_int_t)counts[PMC_ERROR], "inconclusive",
		      (json_int_t)counts[PMC_INCONCLUSIVE], "known_issue",
		      (json_int_t)counts[PMC_KNOWN_ISSUE], "measured", (json_int_t)measured,
		      "measuring", (json_int_t)measuring, "unbudgeted", (json_int_t)unbudgeted,
		      "unbudgeted_cases", (json_int_t)counts[PMC_UNBUDGETED],
		      "skip_reasons", reasons, "line", line, "exit_status", pmc__exit_status(counts));
	return o;
}

json_t *pmc__results_doc(const struct pmc__results *rs, const struct pmc__run_info *info)
{
	json_t *argv = json_array(), *env, *cases = json_array(), *doc;
	size_t i;

	for (i = 0; i < (size_t)info->argc; i++)
		json_array_append_new(argv, json_string(info->argv[i]));
	env = rs->environment ? json_deep_copy(rs->environment) : pmc__environment(info->backend);
	/* Under sim the environment is the host's; the simulated CPU is
	 * what the cases saw. */
	if (rs->n && rs->cases[0].simulated_cpu && json_object_get(env, "sim"))
		json_object_set_new(json_object_get(env, "sim"), "simulated_cpu",
				    json_string(rs->cases[0].simulated_cpu));
	for (i = 0; i < rs->n; i++)
		json_array_append_new(cases, pmc__result_to_json(&rs->cases[i]));
	/* The objects every case's process loaded, once: a case lists its own
	 * only where they differ (a library it opened itself). */
	{
		json_t *first = NULL, *c;

		json_array_foreach(cases, i, c)
			if (json_object_get(c, "objects") && !first)
				first = json_object_get(c, "objects");
		if (first) {
			json_object_set_new(env, "objects", json_deep_copy(first));
			json_array_foreach(cases, i, c)
				if (json_equal(json_object_get(c, "objects"), json_object_get(env, "objects")))
					json_object_del(c, "objects");
		}
	}
	doc = json_pack("{s:s, s:s, s:o, s:o, s:f, s:o, s:o}", "schema", PMC__RESULTS_SCHEMA,
			"program", info->program, "command", argv, "environment", env,
			"duration_s", info->duration_s, "summary", pmc__summary(rs), "cases", cases);
	if (doc && rs->comparison)
		json_object_set(doc, "comparison", rs->comparison);
	return doc;
}

/* ---- JUnit ---------------------------------------------------------------------------- */

static void bputs(struct pmc__text *b, const char *s)
{
	pmc__text_put(b, s, strlen(s));
}

static void bprintf(struct pmc__text *b, const char *fmt, ...) PMC__FMT(2, 3);
static void bprintf(struct pmc__text *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		pmc__text_put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/* XML-escape; characters XML 1.0 cannot carry at all become '?'. */
static void bxml(struct pmc__text *b, const char *s)
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
				pmc__text_put(b, s, 1);
		}
	}
}

static bool junit_failed(enum pmc_verdict v)
{
	return v == PMC_FAIL || v == PMC_INCONCLUSIVE || v == PMC_ERROR;
}

char *pmc__junit(const struct pmc__results *rs, const char *program, double seconds)
{
	size_t counts[PMC__NVERDICTS] = { 0 }, i, j, k, regressed = 0, unbudgeted_regressed = 0;
	struct pmc__text b = { 0 };
	char **reg = calloc(rs->n + 1, sizeof(*reg));

	if (!reg)
		return NULL;
	/* --baseline: a case that regressed fails in JUnit too, whatever its
	 * own checks said, with the comparison's rows and functions. */
	for (i = 0; i < rs->n; i++) {
		counts[rs->cases[i].verdict]++;
		reg[i] = rs->comparison ? pmc__compare_case_text(rs->comparison, rs->cases[i].name)
					: NULL;
		regressed += reg[i] && !junit_failed(rs->cases[i].verdict);
		unbudgeted_regressed += reg[i] && rs->cases[i].verdict == PMC_UNBUDGETED;
	}
	bputs(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	bputs(&b, "<testsuites name=\"");
	bxml(&b, program);
	bprintf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
		rs->n, counts[PMC_FAIL] + counts[PMC_INCONCLUSIVE] + regressed, counts[PMC_ERROR],
		counts[PMC_SKIP] + counts[PMC_KNOWN_ISSUE] + counts[PMC_UNBUDGETED] - unbudgeted_regressed,
		seconds);
	/* One <testsuite> per suite, in first-seen order. */
	for (i = 0; i < rs->n; i++) {
		const char *suite = rs->cases[i].suite;
		size_t n = 0, f = 0, e = 0, sk = 0;
		double secs = 0;
		bool seen = false;

		for (j = 0; j < i && !seen; j++)
			seen = !strcmp(rs->cases[j].suite, suite);
		if (seen)
			continue;
		for (j = i; j < rs->n; j++) {
			const struct pmc__result *d = &rs->cases[j];

			if (strcmp(d->suite, suite))
				continue;
			n++;
			f += d->verdict == PMC_FAIL || d->verdict == PMC_INCONCLUSIVE ||
			     (reg[j] && !junit_failed(d->verdict));
			e += d->verdict == PMC_ERROR;
			sk += d->verdict == PMC_SKIP || d->verdict == PMC_KNOWN_ISSUE ||
			      (d->verdict == PMC_UNBUDGETED && !reg[j]);
			secs += d->duration_s;
		}
		bputs(&b, "  <testsuite name=\"");
		bxml(&b, suite);
		bprintf(&b, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"%zu\" time=\"%.3f\">\n",
			n, f, e, sk, secs);
		for (j = i; j < rs->n; j++) {
			const struct pmc__result *d = &rs->cases[j];
			const char *reason = d->reason ? d->reason : "";

			if (strcmp(d->suite, suite))
				continue;
			bputs(&b, "    <testcase classname=\"");
			bxml(&b, suite);
			bputs(&b, "\" name=\"");
			bxml(&b, d->test);
			bprintf(&b, "\" file=\"");
			bxml(&b, d->file ? d->file : "");
			bprintf(&b, "\" line=\"%d\" time=\"%.3f\">\n", d->line, d->duration_s);
			/* Unbudgeted: measured, not judged, so not a pass; JUnit
			 * has no such outcome, and a skip with the command that
			 * records the budget is the nearest. */
			if (d->verdict == PMC_SKIP || d->verdict == PMC_KNOWN_ISSUE ||
			    (d->verdict == PMC_UNBUDGETED && !reg[j])) {
				bputs(&b, "      <skipped message=\"");
				if (d->verdict == PMC_KNOWN_ISSUE)
					bputs(&b, "KNOWN-ISSUE: ");
				if (d->verdict == PMC_UNBUDGETED)
					bputs(&b, "UNBUDGETED: ");
				bxml(&b, reason);
				bputs(&b, "\"/>\n");
			} else if (junit_failed(d->verdict) || reg[j]) {
				const char *tag = d->verdict == PMC_ERROR ? "error" : "failure";

				if (junit_failed(d->verdict)) {
					bprintf(&b, "      <%s type=\"%s\" message=\"", tag,
						pmc_verdict_name(d->verdict));
					bxml(&b, reason);
				} else {
					char *first = strndup(reg[j], strcspn(reg[j], "\n"));

					bputs(&b, "      <failure type=\"REGRESSION\" message=\"");
					bxml(&b, first ? first : "regression against the baseline");
					free(first);
				}
				bputs(&b, "\">");
				for (k = 0; junit_failed(d->verdict) && k < d->nchecks; k++) {
					if (d->checks[k].status == PMC__CHECK_PASS)
						continue;
					bxml(&b, pmc__check_status_name(d->checks[k].status));
					bputs(&b, ": ");
					bxml(&b, d->checks[k].message);
					bputs(&b, "\n");
				}
				if (reg[j])
					bxml(&b, reg[j]);
				bprintf(&b, "</%s>\n", tag);
			}
			if (d->output && *d->output) {
				bputs(&b, "      <system-out>");
				bxml(&b, d->output);
				bputs(&b, "</system-out>\n");
			}
			bputs(&b, "    </testcase>\n");
		}
		bputs(&b, "  </testsuite>\n");
	}
	bputs(&b, "</testsuites>\n");
	for (i = 0; i < rs->n; i++)
		free(reg[i]);
	free(reg);
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
	case PMC_UNBUDGETED: return "\033[33m";
	default: return "\033[31m";
	}
}

/* A control character other than tab and newline: written as \xHH where a
 * case's text reaches a terminal (an escape sequence would drive it). */
static bool shown_as_hex(unsigned char c)
{
	return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7f;
}

/* Text a case made (a reason, a check's message, a note, a region's name)
 * for a terminal: control characters shown, a newline goes on under the
 * indent. */
void pmc__term_text(FILE *f, const char *s, const char *indent)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (shown_as_hex(c))
			fprintf(f, "\\x%02x", c);
		else if (c == '\n')
			fprintf(f, "\n%s", indent);
		else
			fputc(c, f);
	}
}

/* "insert: instructions=1200 calls:malloc=0" for the first regions. */
static void key_counts(const struct pmc__result *res, char *buf, size_t size)
{
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < res->nregions; i++) {
		const struct pmc__region_rec *r = &res->regions[i];

		if (i >= 3 || used + 1 >= size) {
			if (used + 6 < size)
				used += (size_t)snprintf(buf + used, size - used, " ...");
			break;
		}
		used += (size_t)snprintf(buf + used, size - used, "%s%s:", i ? "  " : "", r->name);
		if (r->samples == 0) { /* nothing was counted: no figures to show */
			used += (size_t)snprintf(buf + used, size - used, " no samples");
			continue;
		}
		for (size_t k = 0; k < r->nev && used + 1 < size; k++) {
			const struct pmc__stat_rec *st = &r->ev[k];

			if (k >= 4) {
				used += (size_t)snprintf(buf + used, size - used, " ...");
				break;
			}
			if (st->min == st->max)
				used += (size_t)snprintf(buf + used, size - used, " %s=%" PRIu64, st->label,
							 st->min);
			else
				used += (size_t)snprintf(buf + used, size - used,
							 " %s=%" PRIu64 "..%" PRIu64, st->label, st->min,
							 st->max);
		}
		if (r->samples > 1 && used + 1 < size)
			used += (size_t)snprintf(buf + used, size - used, " (%zu samples)", r->samples);
	}
}

/* A verdict that came from a check: the check's own line says it (each
 * failure is printed once). */
static bool reason_is_a_check(const struct pmc__result *res)
{
	static const char more[] = " (and more, see checks)";
	size_t len = res->reason ? strlen(res->reason) : 0;

	/* The reason quotes a check, or the start of one that was explained
	 * after the verdict was given (layout, another engine's budget). */
	if (len >= sizeof(more) - 1 && !strcmp(res->reason + len - (sizeof(more) - 1), more))
		len -= sizeof(more) - 1;
	for (size_t i = 0; res->reason && i < res->nchecks; i++)
		if (res->checks[i].status != PMC__CHECK_PASS && *res->checks[i].message &&
		    (strstr(res->reason, res->checks[i].message) ||
		     (len && !strncmp(res->checks[i].message, res->reason, len))))
			return true;
	return false;
}

/*
 * A case's text with the run's sim key written "<key>": the run's header
 * names the key (about 90 characters) once, so a line that quotes a
 * budget's path keeps its verdict in view.  Only a case of that very key:
 * another's is printed whole.
 */
static void case_text(FILE *f, const struct pmc__result *res, const char *s, const char *indent,
		      const char *run_key)
{
	size_t klen = run_key ? strlen(run_key) : 0;
	const char *at;

	if (!klen || !s || !res->sim_profile || strcmp(res->sim_profile, run_key)) {
		pmc__term_text(f, s, indent);
		return;
	}
	while ((at = strstr(s, run_key)) != NULL) {
		char *head = strndup(s, (size_t)(at - s));

		pmc__term_text(f, head ? head : "", indent);
		free(head);
		fputs("<key>", f);
		s = at + klen;
	}
	pmc__term_text(f, s, indent);
}

void pmc__put_keyed(FILE *f, const char *text, const char *key)
{
	size_t klen = key ? strlen(key) : 0;
	const char *at;

	while (klen && (at = strstr(text, key)) != NULL) {
		fwrite(text, 1, (size_t)(at - text), f);
		fputs("<key>", f);
		text = at + klen;
	}
	fputs(text, f);
}

/*
 * A failed case's cause, for its first line: the checks that failed, each
 * as "event +P% in "region"" (past its bound; or "(check)"), three at most.
 * The lines below give each one whole.
 */
static void failed_checks(const struct pmc__result *res, char *buf, size_t size)
{
	size_t used = 0, n = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < res->nchecks; i++)
		n += res->checks[i].status == PMC__CHECK_FAIL;
	for (size_t i = 0; i < res->nchecks && used + 1 < size; i++) {
		const struct pmc__check_rec *c = &res->checks[i];
		double edge = c->measured > c->hi ? c->hi : c->lo;
		char how[64] = "";

		if (c->status != PMC__CHECK_FAIL)
			continue;
		if (shown == 3) {
			snprintf(buf + used, size - used, ", and %zu more", n - shown);
			break;
		}
		if (!isnan(c->measured) && !isnan(edge) && edge != 0 &&
		    (c->measured > c->hi || c->measured < c->lo))
			snprintf(how, sizeof(how), " %s%.2f%%", c->measured > edge ? "+" : "-",
				 100.0 * (c->measured > edge ? c->measured - edge : edge - c->measured) /
					 (edge > 0 ? edge : -edge));
		used += (size_t)snprintf(buf + used, size - used, "%s%s%s%s%s%s%s%s", shown ? ", " : "failed: ",
					 c->event ? c->event : "", c->per ? " per " : "", c->per ? c->per : "",
					 how[0] ? how : " (check)", c->region ? " in \"" : "",
					 c->region ? c->region : "", c->region ? "\"" : "");
		shown++;
	}
	if (used >= size && size > 4)
		memcpy(buf + size - 4, "...", 4);
}

void pmc__print_case_line(FILE *f, const struct pmc__result *res, size_t idx, size_t total,
			  bool color, const char *run_key)
{
	enum pmc_verdict v = res->verdict;
	char counts[512], cause[512];
	int w = total >= 100 ? 3 : total >= 10 ? 2 : 1;

	key_counts(res, counts, sizeof(counts));
	fprintf(f, "[%*zu/%zu] %s%-12s%s %-40s %7.3fs  ", w, idx, total,
		color ? verdict_color(v) : "", pmc_verdict_name(v), color ? "\033[0m" : "",
		res->name, res->duration_s);
	/* A failure's first line names its cause, before the figures. */
	failed_checks(res, cause, sizeof(cause));
	if (v == PMC_FAIL && cause[0]) {
		pmc__term_text(f, cause, "        ");
		fputs(counts[0] ? "; " : "", f);
	}
	pmc__term_text(f, counts, "        ");
	if (v != PMC_PASS && res->reason && *res->reason &&
	    (v == PMC_KNOWN_ISSUE || !reason_is_a_check(res))) {
		fputs(counts[0] ? "\n        " : "", f);
		case_text(f, res, res->reason, "        ", run_key);
	}
	fputc('\n', f);
}

void pmc__print_case_details(FILE *f, const struct pmc__result *res, bool verbose, const char *run_key)
{
	enum pmc_verdict v = res->verdict;
	bool bad = v == PMC_FAIL || v == PMC_ERROR || v == PMC_INCONCLUSIVE;
	size_t i, k;

	for (i = 0; i < res->nchecks; i++)
		if (verbose || res->checks[i].status != PMC__CHECK_PASS) {
			fprintf(f, "        %-12s ", pmc__check_status_name(res->checks[i].status));
			case_text(f, res, res->checks[i].message, "                     ", run_key);
			fputc('\n', f);
		}
	for (i = 0; i < res->nnotes; i++) {
		fputs("        note: ", f);
		case_text(f, res, res->notes[i], "              ", run_key);
		fputc('\n', f);
	}
	if (verbose) {
		for (i = 0; i < res->nregions; i++) {
			const struct pmc__region_rec *r = &res->regions[i];

			fputs("        region ", f);
			pmc__term_text(f, r->name, "        ");
			fprintf(f, ": %zu samples, %" PRIu64 " iterations each\n", r->samples, r->iterations);
			for (k = 0; k < r->nev; k++) {
				const struct pmc__stat_rec *st = &r->ev[k];
				uint64_t overhead = 0;

				for (size_t e = 0; e < res->nevents; e++)
					if (!strcmp(res->events[e].label, st->label))
						overhead = res->events[e].overhead;
				fprintf(f, "          %-28s min %" PRIu64 "  median %.1f  max %" PRIu64 "  (overhead %" PRIu64 " subtracted)\n",
					st->label, st->min, st->median, st->max, overhead);
			}
		}
		if (res->grouping)
			fprintf(f, "        groups %s, read path %s\n", res->grouping,
				res->read_path ? res->read_path : "?");
	}
	if ((bad || verbose) && res->output && *res->output) {
		const char *out = res->output;
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

	fprintf(f, "\n%s  (%.2f s)\n", pmc__jstr(summary, "line"), seconds);
	if (json_object_size(reasons)) {
		fprintf(f, "skipped:\n");
		json_object_foreach(reasons, reason, n)
			fprintf(f, "  %3" JSON_INTEGER_FORMAT " x %s\n", json_integer_value(n), reason);
	}
	if (json_integer_value(json_object_get(summary, "unbudgeted")))
		fprintf(f, "%" JSON_INTEGER_FORMAT " expectation(s) without a budget here: measured, not judged (UNBUDGETED, never PASS; each fails where its suite has budgets under other keys, under --strict, and with CI set)\n",
			json_integer_value(json_object_get(summary, "unbudgeted")));
}

/* TAP 13: a directive's text must not contain '#' or newlines (nor, for
 * the terminal it may reach, control characters). */
static void tap_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (shown_as_hex(c))
			fprintf(f, "\\x%02x", c);
		else
			fputc(c == '#' ? '%' : c == '\n' ? ' ' : c, f);
	}
}

void pmc__print_tap(FILE *f, const struct pmc__result *res, size_t idx)
{
	enum pmc_verdict v = res->verdict;
	const char *reason = res->reason ? res->reason : "";

	fprintf(f, "%s %zu - %s",
		v == PMC_PASS || v == PMC_SKIP || v == PMC_UNBUDGETED ? "ok" : "not ok", idx,
		res->name);
	if (v == PMC_SKIP) {
		fputs(" # SKIP ", f);
		tap_text(f, reason);
	} else if (v == PMC_UNBUDGETED) {
		/* Not judged: TAP's skip, said as such. */
		fputs(" # SKIP unbudgeted: ", f);
		tap_text(f, reason);
	} else if (v == PMC_KNOWN_ISSUE) {
		fputs(" # TODO ", f);
		tap_text(f, reason);
	}
	fputc('\n', f);
	if (v == PMC_FAIL || v == PMC_ERROR || v == PMC_INCONCLUSIVE) {
		fprintf(f, "  ---\n  verdict: %s\n  message: \"", pmc_verdict_name(v));
		for (const char *p = reason; *p; p++)
			fputs(*p == '"' ? "\\\"" : *p == '\\' ? "\\\\" : *p == '\n' ? "\\n" : (char[]){ *p, 0 }, f);
		fputs("\"\n", f);
		for (size_t i = 0; i < res->nchecks; i++)
			if (res->checks[i].status != PMC__CHECK_PASS) {
				fputs("  # ", f);
				tap_text(f, res->checks[i].message);
				fputc('\n', f);
			}
		fputs("  ...\n", f);
	}
}

void pmc__print_ctest_measurements(FILE *f, const struct pmc__result *res)
{
	for (size_t i = 0; i < res->nregions; i++)
		for (size_t k = 0; res->regions[i].samples && k < res->regions[i].nev; k++)
			fprintf(f, "<CTestMeasurement type=\"numeric/double\" name=\"%s.%s\">%" PRIu64 "</CTestMeasurement>\n",
				res->regions[i].name, res->regions[i].ev[k].label,
				res->regions[i].ev[k].min);
}
