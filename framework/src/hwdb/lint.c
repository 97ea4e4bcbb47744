/* SPDX-License-Identifier: MIT */
/*
 * pmcheck hwdb check: every finding in every file, with file:line and the
 * fix, without stopping at the first.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/event.h>
#include <pmcheck/hwdb.h>
#include <pmcheck/machine.h>

#include "hwdb_int.h"

/* ---- check: every finding, with file:line and the fix ---------------------------------------- */

struct lint {
	const struct pmc_hwdb *db;
	pmc_hwdb_finding_fn fn;
	void *user;
	size_t findings, unchecked, budgets;
	/* Budget keys this machine reads (its events must parse here). */
	char here[PMC_HWDB_MAX_KEYS * 2][PMC_HWDB_KEY_MAX];
	size_t nhere;
};

static void finding(struct lint *l, int code, const char *file, const char *fmt, ...)
	PMC__PRINTF(4, 5);

static void finding(struct lint *l, int code, const char *file, const char *fmt, ...)
{
	struct pmc_error e;
	va_list ap;

	e.code = code;
	e.position = -1;
	pmc__copy(e.input, sizeof(e.input), file);
	va_start(ap, fmt);
	vsnprintf(e.message, sizeof(e.message), fmt, ap);
	va_end(ap);
	l->findings++;
	if (l->fn)
		l->fn(l->user, &e);
}

static bool applies_here(const struct lint *l, const char *key)
{
	for (size_t i = 0; i < l->nhere; i++)
		if (!strcmp(l->here[i], key))
			return true;
	return false;
}

/*
 * An event named by a budget or a model, through the real parser.  Errors
 * of the text itself are findings everywhere.  An event this machine does
 * not know (another CPU's libpfm4 name, a PMU it lacks) is a finding only
 * where the budget applies to this machine, or when it is a bare
 * lower-case word, perf's spelling of generic events; a symbol that only
 * the program under test defines (calls:, mem:) is not checked here.
 */
static void lint_event(struct lint *l, const char *file, int line, const char *event,
		       const char *key, const char *what)
{
	struct pmc_event_spec spec;
	struct pmc_error err;
	int rc = pmc_event_parse(event, &spec, &err);
	bool bare = event[0] && strspn(event, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(event);

	if (rc == 0 || rc == PMC_E_NO_SYMBOL)
		return;
	if ((rc == PMC_E_UNKNOWN_EVENT || rc == PMC_E_NO_PMU) && !bare &&
	    (!key || !applies_here(l, key))) {
		l->unchecked++;
		return;
	}
	finding(l, rc, file, "%s:%d: %s%s", file, line, what, err.message);
}

/* Duplicate detection: (section, region, event) seen per budget file. */
struct check_ctx {
	struct lint *l;
	const char *path, *key;
	char (*seen)[600];
	int *seen_line;
	size_t nseen;
	struct pmc__library_seen libraries; /* the run's rule, pmc__library_seen */
};

static int check_handler(void *user, const char *section, const char *name, const char *value,
			 int line, struct pmc_error *err)
{
	struct check_ctx *c = user;
	struct pmc__budget_ctx b = { c->path, NULL, NULL, false, 0, &c->libraries };
	char event[PMC_HWDB_KEY_MAX * 2], id[600];
	char ss[PMC__HWDB_SHOWN_MAX * 4 + 32], sn[PMC__HWDB_SHOWN_MAX * 4 + 32];
	char se[PMC__HWDB_SHOWN_MAX * 4 + 32];
	const char *bound;
	size_t i;

	bool library = pmc__library_line(name);

	c->l->budgets += !library;
	if (pmc__budget_handler(&b, section, name, value, line, err)) {
		finding(c->l, err->code, c->path, "%s", err->message);
		return 0;
	}
	/* Library lines given twice were refused above, by the run's rule. */
	if (library)
		return 0;
	pmc__split_budget_value(value, event, sizeof(event), &bound);
	lint_event(c->l, c->path, line, event, c->key, "");
	pmc__snprintf(id, sizeof(id), "%s|%s|%s", section, name, event);
	for (i = 0; i < c->nseen; i++)
		if (!strcmp(c->seen[i], id)) {
			finding(c->l, PMC_E_SYNTAX, c->path,
				"%s:%d: second budget for [%s] %s %s (the first is at line %d; lookups use the first: remove one)",
				c->path, line, pmc__hwdb_shown(ss, sizeof(ss), section),
				pmc__hwdb_shown(sn, sizeof(sn), name), pmc__hwdb_shown(se, sizeof(se), event),
				c->seen_line[i]);
			return 0;
		}
	{
		char(*sn)[600] = realloc(c->seen, (c->nseen + 1) * sizeof(*sn));
		int *ln;

		if (!sn)
			return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
		c->seen = sn;
		ln = realloc(c->seen_line, (c->nseen + 1) * sizeof(*ln));
		if (!ln)
			return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
		c->seen_line = ln;
		memcpy(c->seen[c->nseen], id, sizeof(id));
		c->seen_line[c->nseen++] = line;
	}
	return 0;
}

/* A line of a budget file that is not INI: a finding, and the check goes on. */
static void check_syntax(void *user, const struct pmc_error *e)
{
	struct check_ctx *c = user;

	finding(c->l, e->code, c->path, "%s", e->message);
}

static void lint_budget_file(struct lint *l, const char *fpath, const char *key)
{
	struct check_ctx c = { l, fpath, key, NULL, NULL, 0, { 0 } };
	struct pmc__ini_opts opts = { NULL, check_syntax };
	struct pmc_error err;

	/* Read as a run reads it (pmc__hwdb_read_file): a FIFO, a device, a
	 * link to nothing or an unreadable file is a finding naming it. */
	if (pmc__ini_parse_path(fpath, check_handler, &c, &opts, &err))
		finding(l, err.code, fpath, "%s", err.message);
	free(c.seen);
	free(c.seen_line);
	pmc__library_seen_release(&c.libraries);
}

static void lint_budgets(struct lint *l, const char *dir)
{
	char path[PATH_MAX], file[PATH_MAX];
	DIR *keys;
	struct dirent *k;

	pmc__snprintf(path, sizeof(path), "%s/budgets", dir);
	keys = opendir(path);
	if (!keys && errno != ENOENT) {
		char shown[PATH_MAX];

		finding(l, -errno, path,
			"cannot read %s: %s; every file and directory of an hwdb must be readable by whoever runs pmcheck (fix its mode or owner)",
			pmc__escape_ctl(shown, sizeof(shown), path), strerror(errno));
	}
	while (keys && (k = readdir(keys))) {
		DIR *files;
		struct dirent *f;

		if (k->d_name[0] == '.')
			continue;
		pmc__snprintf(file, sizeof(file), "%s/%s", path, k->d_name);
		files = opendir(file);
		if (!files) {
			char shown[PATH_MAX];

			finding(l, PMC_E_SYNTAX, file,
				"%s: expected a directory named by a budget key (budgets/KEY/SUITE.ini), readable by whoever runs pmcheck: %s",
				pmc__escape_ctl(shown, sizeof(shown), file), strerror(errno));
			continue;
		}
		while ((f = readdir(files))) {
			size_t len = strlen(f->d_name);
			char fpath[PATH_MAX];

			if (f->d_name[0] == '.')
				continue;
			if (pmc__snprintf(fpath, sizeof(fpath), "%s/%s", file, f->d_name) < 0)
				continue;
			/* SUITE.functions.json: what calibration measured per
			 * function on the sim backend, for attribution;
			 * SUITE.calibration.json: who calibrated, with which
			 * libraries. */
			if ((len > 15 && !strcmp(f->d_name + len - 15, ".functions.json")) ||
			    (len > 17 && !strcmp(f->d_name + len - 17, ".calibration.json"))) {
				/* Read as a run reads it: a FIFO here held the run
				 * forever, and check said "hwdb OK". */
				struct pmc_error err;
				size_t tlen;
				char *text;

				if (pmc__hwdb_read_file(fpath, &text, &tlen, &err))
					finding(l, err.code, fpath, "%s", err.message);
				else
					free(text);
				continue;
			}
			if (len < 5 || strcmp(f->d_name + len - 4, ".ini")) {
				char shown[PATH_MAX], sk[PMC__HWDB_SHOWN_MAX * 4 + 32];

				finding(l, PMC_E_SYNTAX, fpath,
					"%s: not a budget file (budgets/%s/SUITE.ini, or SUITE.functions.json or SUITE.calibration.json beside it): rename it or remove it",
					pmc__escape_ctl(shown, sizeof(shown), fpath),
					pmc__hwdb_shown(sk, sizeof(sk), k->d_name));
				continue;
			}
			lint_budget_file(l, fpath, k->d_name);
		}
		closedir(files);
	}
	if (keys)
		closedir(keys);
}

/* The file part of a "path:line" place. */
static int where_split(const char *where, char *file, size_t size)
{
	const char *colon = strrchr(where, ':');
	size_t n = colon ? (size_t)(colon - where) : strlen(where);

	snprintf(file, size, "%.*s", (int)(n < size ? n : size - 1), where);
	return colon ? atoi(colon + 1) : 0;
}

static void lint_models(struct lint *l)
{
	const struct pmc_hwdb *db = l->db;
	char file[PATH_MAX];
	int line, det_line;

	for (size_t i = 0; i < db->nmap; i++) {
		struct pmc_hwdb_model m;

		if (pmc_hwdb_model(db, db->map[i].model, &m) != 0) {
			line = where_split(db->map[i].where, file, sizeof(file));
			finding(l, PMC_E_SYNTAX, file,
				"%s:%d: maps to model \"%s\", which no models.ini defines: add a [%s] section or fix the name",
				file, line, db->map[i].model, db->map[i].model);
		}
	}
	for (size_t i = 0; i < db->nmodels; i++) {
		const struct pmc_hwdb_model *m = &db->models[i];
		const char *p = m->deterministic;
		bool mapped = !strcmp(m->arch, "sim"); /* simulators are named, not matched */

		line = where_split(m->where, file, sizeof(file));
		det_line = db->deterministic_line[i] ? db->deterministic_line[i] : line;
		for (size_t j = 0; j < db->nmap && !mapped; j++)
			mapped = !strcmp(db->map[j].model, m->id);
		if (!mapped)
			finding(l, PMC_E_SYNTAX, file,
				"%s:%d: model [%s] is never reached: no map.ini line maps a signature to it (add one, or set arch = sim for a simulator)",
				file, line, m->id);
		while (*p) {
			char ev[PMC_EVENT_NAME_MAX];
			size_t len;

			p += strspn(p, " \t");
			len = strcspn(p, ",");
			while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
				len--;
			if (len == 0 || len >= sizeof(ev)) {
				finding(l, PMC_E_SYNTAX, file,
					"%s:%d: [%s] deterministic: %s item in \"%s\": list events separated by single commas",
					file, det_line, m->id, len ? "an overlong" : "an empty", m->deterministic);
			} else {
				memcpy(ev, p, len);
				ev[len] = '\0';
				char what[PMC_HWDB_KEY_MAX + 32];

				pmc__snprintf(what, sizeof(what), "[%s] deterministic: ", m->id);
				lint_event(l, file, det_line, ev, NULL, what);
			}
			p += strcspn(p, ",");
			p += *p == ',';
		}
	}
}

size_t pmc_hwdb_lint(const struct pmc_hwdb *db, pmc_hwdb_finding_fn fn, void *user,
		     size_t *budgets, size_t *unchecked)
{
	struct lint l = { db, fn, user, 0, 0, 0, { { 0 } }, 0 };
	struct pmc_cpu_id cpu;

	pmc_cpu_identify(&cpu);
	l.nhere = pmc_hwdb_keys(db, "perf", cpu.signature, l.here, PMC_HWDB_MAX_KEYS);
	l.nhere += pmc_hwdb_keys(db, "sim", cpu.signature, l.here + l.nhere, PMC_HWDB_MAX_KEYS);
	for (size_t d = 0; db && d < db->ndirs; d++)
		lint_budgets(&l, db->dirs[d]);
	if (db)
		lint_models(&l);
	if (budgets)
		*budgets = l.budgets;
	if (unchecked)
		*unchecked = l.unchecked;
	return l.findings;
}

static void keep_first(void *user, const struct pmc_error *f)
{
	struct pmc_error *first = user;

	if (first && first->code == 0)
		*first = *f;
}

int pmc_hwdb_check(const struct pmc_hwdb *db, size_t *budgets, struct pmc_error *err)
{
	struct pmc_error first = { 0 };

	if (pmc_hwdb_lint(db, keep_first, &first, budgets, NULL) == 0)
		return 0;
	if (err)
		*err = first;
	return first.code ? first.code : PMC_E_SYNTAX;
}
