/* SPDX-License-Identifier: MIT */
/*
 * Expectations: the API that declares them (pmc_test_expect, figures,
 * judged at once), and where a case's budgets come from: the budget
 * source the runner installs (the hwdb, below), looked up under this
 * CPU's signature or, on the sim backend, the sim profile key.  The
 * judging itself is judge.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"
#include "sim/sim_harness.h"

static const struct pmc_budget_source *budget_source;

void pmc_harness_set_budget_source(const struct pmc_budget_source *src)
{
	budget_source = src;
}

const struct pmc_budget_source *pmc__budget_source(void)
{
	return budget_source;
}

/* ---- hwdb as budget source --------------------------------------------------------- */

static struct pmc_hwdb *gate_db;
static struct pmc_budget_source gate_source;
static const char *const *gate_dirs;
static size_t gate_ndirs;

/* The hwdb is opened at the first lookup when setup was lazy. */
static int hwdb_lookup(void *ctx, const struct pmc_budget_key *key, struct pmc_budget *out,
		       struct pmc_error *err)
{
	(void)ctx;
	if (!gate_db) {
		int rc = pmc_hwdb_open(&gate_db, gate_dirs, gate_ndirs, err);

		if (rc)
			return rc;
	}
	return pmc_hwdb_budget(gate_db, key, out, err);
}

static size_t hwdb_suite_keys(void *ctx, const char *backend, const char *suite,
			      char keys[][PMC_HWDB_KEY_MAX], size_t max)
{
	struct pmc_error err;

	(void)ctx;
	if (!gate_db && pmc_hwdb_open(&gate_db, gate_dirs, gate_ndirs, &err))
		return 0;
	return pmc_hwdb_suite_keys(gate_db, backend, suite, keys, max);
}

const char *pmc__hwdb_first_dir(void)
{
	return gate_ndirs ? gate_dirs[0] : NULL;
}

int pmc__hwdb_setup(const char *const *dirs, size_t n, bool lazy, struct pmc_error *err)
{
	gate_dirs = dirs;
	gate_ndirs = n;
	if (!lazy) {
		int rc = pmc_hwdb_open(&gate_db, dirs, n, err);

		if (rc)
			return rc;
	}
	gate_source.lookup = hwdb_lookup;
	gate_source.suite_keys = hwdb_suite_keys;
	gate_source.ctx = NULL;
	if (!pmc__budget_source())
		pmc_harness_set_budget_source(&gate_source);
	return 0;
}

struct pmc_hwdb *pmc__hwdb(void)
{
	return gate_db;
}

void pmc__hwdb_teardown(void)
{
	if (pmc__budget_source() == &gate_source)
		pmc_harness_set_budget_source(NULL);
	pmc_hwdb_free(gate_db);
	gate_db = NULL;
}

/* ---- expectations ------------------------------------------------------------------ */

void pmc_test_expect_figure(struct pmc_test *t, const char *name, const char *event,
			    double measured, double lo, double hi, const char *fmt, ...)
{
	struct pmc__check *c = NULL;
	char why[256], bound[96], meas[48];
	va_list ap;
	size_t i;
	bool ok;

	for (i = 0; i < t->nexpect; i++)
		if (t->check[i].e.kind == PMC_EXPECT_KIND_FIGURE &&
		    !strcmp(t->check[i].figure_name, name) && !strcmp(t->check[i].figure_event, event))
			c = &t->check[i];
	if (!c) {
		if (t->nexpect >= PMC__MAX_EXPECT)
			pmc_test_error(t, "more than %d expectations in one case", PMC__MAX_EXPECT);
		c = &t->check[t->nexpect++];
	}
	memset(c, 0, sizeof(*c));
	pmc__copy_str(c->figure_name, sizeof(c->figure_name), name);
	pmc__copy_str(c->figure_event, sizeof(c->figure_event), event);
	c->e = (struct pmc_expectation){ .kind = PMC_EXPECT_KIND_FIGURE, .region = c->figure_name,
					 .event = c->figure_event, .file = t->def->file,
					 .line = t->def->line };
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	c->measured = measured;
	c->bound_lo = lo;
	c->bound_hi = hi;
	c->samples = 1;
	ok = !(measured < lo) && !(measured > hi) && !isnan(measured);
	c->status = ok ? PMC__CHECK_PASS : PMC__CHECK_FAIL;
	pmc__fmt_bound(bound, sizeof(bound), lo, hi);
	pmc__fmt_num(meas, sizeof(meas), measured);
	pmc__check_msg(c, "%s, %s: measured %s, expected %s (%s)%s", name, event, meas, bound, why,
		ok ? "" : measured > hi ? ": over" : ": under");
}

void pmc_test_expect(struct pmc_test *t, const struct pmc_expectation *e)
{
	size_t i;

	for (i = 0; i < t->nexpect; i++) {
		const struct pmc_expectation *o = &t->check[i].e;

		if (o->line == e->line && !strcmp(o->file, e->file) && !strcmp(o->region, e->region) &&
		    !strcmp(o->event, e->event) &&
		    (o->per == e->per || (o->per && e->per && !strcmp(o->per, e->per))))
			return;
	}
	if (!e->region || !e->event)
		pmc_test_error(t, "%s:%d: expectation without a region or event", e->file, e->line);
	if (t->nexpect >= PMC__MAX_EXPECT)
		pmc_test_error(t, "more than %d expectations in one case", PMC__MAX_EXPECT);
	memset(&t->check[t->nexpect], 0, sizeof(t->check[0]));
	t->check[t->nexpect++].e = *e;
}

static struct pmc__columns columns_of(const struct pmc_test *t)
{
	return (struct pmc__columns){ t->nev, t->spec, (const char (*)[PMC__LABEL_MAX])t->label };
}

int pmc__column_of(struct pmc_test *t, const char *event)
{
	struct pmc__columns cols = columns_of(t);

	return pmc__column_in(&cols, event);
}

void pmc__sim_profile_key(const struct pmc_test_def *def, char *buf, size_t size)
{
	const char *vg = pmc_sim_valgrind_version();
	size_t i;

#if defined(__x86_64__)
	const char *arch = "x86_64";
#elif defined(__aarch64__)
	const char *arch = "aarch64";
#else
	const char *arch = "other";
#endif
	snprintf(buf, size, "sim-%s-%s-%s-%s", arch, *vg ? vg : "valgrind-unknown",
		 PMC_SIM_GEOMETRY, def->build && *def->build ? def->build : "unknown-build");
	/* A key is a directory name: no '/', no blanks. */
	for (i = 0; buf[i]; i++)
		if (buf[i] == '/' || buf[i] == ' ' || buf[i] == '\t')
			buf[i] = '_';
}

/* The signature budgets are looked up under: this CPU's (identified once
 * per process) or, on the sim backend, the case's sim profile key. */
static const char *budget_key_signature(const struct pmc_test *t)
{
	static struct pmc_cpu_id cpu;
	static bool have_cpu;
	static char sim_key[PMC_HWDB_KEY_MAX];
	static const struct pmc_test_def *sim_key_of;

	if (t->backend == PMC_BACKEND_SIM) {
		if (sim_key_of != t->def) {
			pmc__sim_profile_key(t->def, sim_key, sizeof(sim_key));
			sim_key_of = t->def;
		}
		return sim_key;
	}
	if (!have_cpu) {
		pmc_cpu_identify(&cpu);
		have_cpu = true;
	}
	return cpu.signature;
}

/*
 * A budget expectation found no budget.  When the suite has budgets under
 * other keys on this backend (another build, another CPU model), this is a
 * gate that looked in the wrong place: the check fails, naming the key it
 * looked up and the keys that exist.  Otherwise the suite was never
 * calibrated here: the check stays unbudgeted (a failure under --strict).
 */
static void unbudgeted_message(void *ctx, struct pmc__check *c)
{
	struct pmc_test *t = ctx;
	const char *looked_up = budget_key_signature(t);
	char keys[8][PMC_HWDB_KEY_MAX], list[700] = "", meas[48], hint[600], detail[400] = "";
	const char *backend = t->backend == PMC_BACKEND_SIM ? "sim" : "perf";
	const char *dir = pmc__hwdb_first_dir();
	size_t n = 0, i, used = 0;

	if (budget_source && budget_source->suite_keys)
		n = budget_source->suite_keys(budget_source->ctx, backend, t->def->suite, keys, 8);
	for (i = 0; i < n && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
					 keys[i]);
	pmc__fmt_num(meas, sizeof(meas), c->measured);
	snprintf(hint, sizeof(hint), "%s --filter=%s.%s%s --calibrate --hwdb=%s",
		 pmc__program_path ? pmc__program_path : pmc__program ? pmc__program : "<suite>",
		 t->def->suite, t->def->name,
		 t->backend == PMC_BACKEND_SIM ? " --backend=sim" : "", dir ? dir : "DIR");
	if (n == 0) {
		char where[600] = "", shown[512];
		size_t w = 0;

		/* Where it looked: a gate run with no hwdb at all passes every
		 * case unbudgeted, which must not read like a calibrated pass. */
		for (i = 0; i < gate_ndirs && w < sizeof(where); i++)
			w += (size_t)snprintf(where + w, sizeof(where) - w, "%s%s", i ? ", " : " in ",
					      pmc__escape_ctl(shown, sizeof(shown), gate_dirs[i]));
		if (!gate_ndirs)
			snprintf(where, sizeof(where), " in no hwdb: none was given (--hwdb=DIR or PMCHECK_HWDB)");
		pmc__check_msg(c,
			"region \"%s\", %s: unbudgeted: no budget for suite \"%s\" under any key on the %s backend (looked up %s%s; measured %s); record one with: %s",
			c->e.region, c->e.event, t->def->suite, backend, looked_up, where, meas, hint);
		return;
	}
	c->gate = true;
	for (i = 0; i < n && !detail[0]; i++)
		if (!strcmp(keys[i], looked_up))
			snprintf(detail, sizeof(detail),
				 " The suite has budgets under this very key, only not this one: this case, region or event was never calibrated here.");
	if (t->backend == PMC_BACKEND_SIM && !detail[0]) {
		/* Same simulator and compiler, another build type? Say so. */
		const char *dash = strrchr(looked_up, '-');
		size_t stem = dash ? (size_t)(dash - looked_up) : 0;

		for (i = 0; i < n && !detail[0]; i++)
			if (stem && !strncmp(keys[i], looked_up, stem) && keys[i][stem] == '-')
				snprintf(detail, sizeof(detail),
					 " Only another build type's budgets exist (%s; this build is %s): build as calibrated, or calibrate this build type.",
					 keys[i] + stem + 1, dash + 1);
		if (!detail[0])
			snprintf(detail, sizeof(detail),
				 " This binary differs from the calibrated one (compiler, optimisation, build type or valgrind version): build it as calibrated, or calibrate this one.");
	}
	pmc__check_msg(c,
		"region \"%s\", %s: no budget under key %s (measured %s), but suite \"%s\" has budgets under: %s.%s Record one with: %s",
		c->e.region, c->e.event, looked_up, meas, t->def->suite, list, detail, hint);
}

/* The budget of one BUDGET check, from the installed budget source (the
 * hwdb, see gate.c); budget files spell events as the expectations do. */
static int case_budget(void *ctx, const struct pmc__check *c, struct pmc_budget *out,
		       struct pmc_error *err)
{
	struct pmc_test *t = ctx;
	struct pmc_budget_key key = {
		t->def->suite, t->def->name, c->e.region, c->e.event,
		t->backend == PMC_BACKEND_SIM ? "sim" : "perf", budget_key_signature(t),
	};

	char why[PMC_ERROR_MSG_MAX];
	int col = pmc__column_of(t, c->e.event);
	int rc = budget_source->lookup(budget_source->ctx, &key, out, err);

	/* Calls are the program's, not the CPU's or the simulator's: on sim
	 * a calls: event is judged by the budget every backend shares
	 * ("any"), as perf calibrated it, when the sim key has none. */
	if (rc == -ENOENT && t->backend == PMC_BACKEND_SIM && col >= 0 &&
	    t->spec[col].kind == PMC_KIND_UPROBE) {
		key.backend = "perf";
		key.signature = "any";
		rc = budget_source->lookup(budget_source->ctx, &key, out, err);
	}

	if (rc == 0) {
		int crc = pmc__calibration_program_check(out->source, why, sizeof(why));

		if (crc) {
			pmc_error_clear(err);
			err->code = crc;
			snprintf(err->message, sizeof(err->message), "%s", why);
			return crc;
		}
	}
	return rc;
}

void pmc__judge_case(struct pmc_test *t)
{
	struct pmc__judging j = {
		.cols = columns_of(t),
		.regions = t->region,
		.nregions = t->nregions,
		.stat = t->opt.stat,
		.budget = budget_source && budget_source->lookup ? case_budget : NULL,
		.unbudgeted = unbudgeted_message,
		.ctx = t,
	};

	pmc__judge_checks(t->check, t->nexpect, &j);
}
