/* SPDX-License-Identifier: MIT */
/*
 * Whose change was it?  The objects the measured process loaded
 * (pmc_objects_loaded: each with its GNU build ID, or a content hash), the program
 * that calibrated a suite's budgets and the pmcheck that measured them,
 * kept beside the budgets in SUITE.calibration.json.  A failed budget then
 * says which library is another build than at calibration, and a program
 * never judges itself by another program's budgets for a suite of the same
 * name.
 *
 * Over 600 lines because the objects a process loaded,
 * SUITE.calibration.json written and read back with every field checked, and
 * the libraries named that changed since calibration are one file format
 * with its one writer and its one reader.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"
#include "util/util_int.h"

void pmc__jw_objects(struct pmc__jw *w, const struct pmc_object *o, size_t n)
{
	pmc__jw_open(w, '[');
	for (size_t i = 0; i < n; i++) {
		pmc__jw_open(w, '{');
		pmc__jw_key(w, "path");
		pmc__jw_str(w, o[i].path);
		pmc__jw_key(w, "id");
		pmc__jw_str(w, o[i].id);
		pmc__jw_close(w, '}');
	}
	pmc__jw_close(w, ']');
}

json_t *pmc__objects_json(const struct pmc_object *o, size_t n)
{
	struct pmc__jw w = { 0 };

	pmc__jw_objects(&w, o, n);
	return pmc__jw_json(&w);
}

int pmc__object_append(struct pmc_object *out, size_t *n, size_t i, const char *path,
		       const char *id, char *why, size_t size)
{
	if (!path || !id) {
		snprintf(why, size, "objects[%zu]: expected {\"path\": string, \"id\": string}", i);
		return -EINVAL;
	}
	out[*n].path = strdup(path);
	out[*n].id = strdup(id);
	if (!out[*n].path || !out[*n].id) {
		free(out[*n].path);
		free(out[*n].id);
		return -ENOMEM;
	}
	(*n)++;
	return 0;
}

int pmc__objects_from_json(json_t *arr, struct pmc_object **out, size_t *n, char *why,
			   size_t size)
{
	json_t *v;
	size_t i;

	*out = calloc(json_array_size(arr) + 1, sizeof(**out));
	*n = 0;
	if (!*out)
		return -ENOMEM;
	json_array_foreach(arr, i, v) {
		const char *p = json_string_value(json_object_get(v, "path"));
		const char *id = json_string_value(json_object_get(v, "id"));

		int rc = pmc__object_append(*out, n, i, p, id, why, size);

		if (rc)
			return rc;
	}
	return 0;
}

/* pmcheck's own libraries: their change is pmcheck's, said apart. */
static bool is_pmcheck(const char *path)
{
	return !strncmp(pmc__file_part(path), "libpmcheck", 10);
}

/* "build ID 1a2b3c4d5e6f", "content fnv1a64:..": short enough to read. */
static void short_id(const char *id, char *out, size_t size)
{
	if (!strncmp(id, "build-id:", 9))
		snprintf(out, size, "build ID %.12s", id + 9);
	else
		snprintf(out, size, "content %.24s", id);
}

static const struct pmc_object *object_named(const struct pmc_object *o, size_t n,
					      const char *path)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(pmc__file_part(o[i].path), pmc__file_part(path)))
			return &o[i];
	return NULL;
}

size_t pmc__objects_diff(const struct pmc_object *was, size_t nwas, const struct pmc_object *now,
			 size_t nnow, struct pmc__object_change *ch, size_t max)
{
	size_t k = 0;

	/* The program itself (first) is the user's own change: left out. */
	for (size_t i = 1; i < nnow && k < max; i++) {
		const struct pmc_object *o = object_named(was + (nwas > 0), nwas - (nwas > 0),
							   now[i].path);

		if (o && !strcmp(o->id, now[i].id))
			continue;
		ch[k++] = (struct pmc__object_change){ now[i].path, o ? o->id : NULL, now[i].id,
						       is_pmcheck(now[i].path) };
	}
	for (size_t i = 1; i < nwas && k < max; i++)
		if (!object_named(now + (nnow > 0), nnow - (nnow > 0), was[i].path))
			ch[k++] = (struct pmc__object_change){ was[i].path, was[i].id, NULL,
							       is_pmcheck(was[i].path) };
	return k;
}

void pmc__object_change_text(const struct pmc__object_change *c, const char *since, char *out,
			     size_t size)
{
	char a[64] = "", b[64] = "";

	if (c->was)
		short_id(c->was, a, sizeof(a));
	if (c->now)
		short_id(c->now, b, sizeof(b));
	if (c->was && c->now)
		snprintf(out, size, "%s: another build than at %s (%s -> %s)%s", pmc__file_part(c->path),
			 since, a, b, c->pmcheck ? ", pmcheck's own library: pmcheck changed, not your code" : "");
	else if (c->now)
		snprintf(out, size, "%s: loaded now, not at %s (%s)", pmc__file_part(c->path), since, b);
	else
		snprintf(out, size, "%s: loaded at %s, not now (%s)", pmc__file_part(c->path), since, a);
}

/* ---- the libraries a case ran with (budget files' library lines) ---------------- */

int pmc__libraries_of(const struct pmc__result *r, bool packages, struct pmc_library **out,
		      const char ***paths, size_t *n)
{
	struct pmc_library *l = calloc(r->nobjects + 1, sizeof(*l));
	const char **p = calloc(r->nobjects + 1, sizeof(*p));
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	*paths = NULL;
	*n = 0;
	if (!l || !p) {
		free(l);
		free(p);
		return -ENOMEM;
	}
	/* The program itself (first) is the user's own; pmcheck's own
	 * libraries are pmcheck's version, said apart. */
	for (size_t i = 1; i < r->nobjects; i++)
		if (!is_pmcheck(r->objects[i].path)) {
			snprintf(l[k].id, sizeof(l[k].id), "%s", r->objects[i].id);
			p[k++] = r->objects[i].path;
		}
	pmc_libraries_identify(p, l, k);
	if (packages)
		rc = pmc_libraries_packages(p, l, k);
	if (rc) {
		free(l);
		free(p);
		return rc;
	}
	*out = l;
	*paths = p;
	*n = k;
	return 0;
}

/* The libraries recorded beside the budget: its case's library lines, or
 * for a file calibrated before pmcheck wrote them, the objects of
 * SUITE.calibration.json (their file names and build IDs only). */
static int libraries_calibrated(const struct pmc__result *r, const char *budget_source,
				struct pmc_library **out, size_t *n, bool *recorded)
{
	char file[PATH_MAX];
	struct pmc_error err;
	struct pmc__calibration_file cf;
	char *colon;

	*recorded = true;
	snprintf(file, sizeof(file), "%s", budget_source ? budget_source : "");
	colon = strrchr(file, ':');
	if (colon && colon > strrchr(file, '/'))
		*colon = '\0';
	if (pmc_hwdb_libraries(file, r->test, out, n, &err) == 0 && *n)
		return 0;
	*recorded = false;
	if (pmc__calibration_load(budget_source, &cf))
		return -ENOENT;
	*out = calloc(cf.nobjects + 1, sizeof(**out));
	*n = 0;
	for (size_t i = 1; *out && i < cf.nobjects; i++)
		if (!is_pmcheck(cf.objects[i].path)) {
			snprintf((*out)[*n].name, sizeof((*out)[0].name), "%s",
				 pmc__file_part(cf.objects[i].path));
			snprintf((*out)[*n].id, sizeof((*out)[0].id), "%s", cf.objects[i].id);
			(*n)++;
		}
	pmc__calibration_release(&cf);
	return *out ? 0 : -ENOMEM;
}

/* The object loaded now that stands for a library recorded as `name`: the
 * first of that soname (the one symbols bind to), or of that file name. */
static ssize_t now_named(const struct pmc_library *now, const char **paths, size_t n,
			 const char *name)
{
	for (size_t j = 0; j < n; j++)
		if (!strcmp(now[j].name, name) || !strcmp(pmc__file_part(paths[j]), name))
			return (ssize_t)j;
	return -1;
}

size_t pmc__libraries_changed(const struct pmc__result *r, const char *budget_source,
			      struct pmc__library_change *ch, size_t max)
{
	struct pmc_library *was = NULL, *now = NULL, *look;
	const char **paths = NULL, **lpaths;
	size_t nwas = 0, nnow = 0, k = 0, total = 0;
	bool recorded, *used;

	if (libraries_calibrated(r, budget_source, &was, &nwas, &recorded) ||
	    pmc__libraries_of(r, false, &now, &paths, &nnow) || !(used = calloc(nnow + 1, 1))) {
		free(was);
		free(now);
		free(paths);
		return 0;
	}
	for (size_t i = 0; i < nwas; i++) {
		ssize_t j = now_named(now, paths, nnow, was[i].name);

		if (j >= 0) {
			for (size_t o = 0; o < nnow; o++) /* later ones of that name are its company */
				used[o] |= !strcmp(now[o].name, now[j].name);
			used[j] = true;
		}
		if (j >= 0 && !strcmp(now[j].id, was[i].id))
			continue;
		if (k < max) {
			memset(&ch[k], 0, sizeof(ch[k]));
			ch[k].was = was[i];
			if (j >= 0) {
				ch[k].now = now[j];
				ch[k].path = paths[j];
			}
			ch[k++].recorded = recorded;
		}
		total++;
	}
	for (size_t j = 0; j < nnow; j++)
		if (!used[j]) {
			bool named = false;

			for (size_t i = 0; i < nwas && !named; i++)
				named = !strcmp(was[i].name, now[j].name);
			if (named)
				continue;
			if (k < max) {
				memset(&ch[k], 0, sizeof(ch[k]));
				ch[k].now = now[j];
				ch[k].path = paths[j];
				ch[k++].recorded = recorded;
			}
			total++;
		}
	/* The packages of what is loaded now, for the changed ones only: the
	 * database is read once, and only when something changed. */
	look = calloc(k + 1, sizeof(*look));
	lpaths = calloc(k + 1, sizeof(*lpaths));
	if (look && lpaths) {
		size_t m = 0;

		for (size_t i = 0; i < k; i++)
			if (ch[i].path)
				lpaths[m++] = ch[i].path;
		if (pmc_libraries_packages(lpaths, look, m) == 0)
			for (size_t i = 0, q = 0; i < k; i++)
				if (ch[i].path) {
					memcpy(ch[i].now.package, look[q].package, sizeof(look[q].package));
					memcpy(ch[i].now.version, look[q].version, sizeof(look[q].version));
					q++;
				}
	}
	free(look);
	free(lpaths);
	free(used);
	free(was);
	free(now);
	free(paths);
	return total;
}

/* "libexpat1 2.5.0-1+deb12u1, build ID a2f37366bc97[, PATH]" */
static void identity_text(const struct pmc_library *l, bool recorded, const char *path,
			  char *out, size_t size)
{
	char pkg[300], id[64];

	if (l->package[0])
		snprintf(pkg, sizeof(pkg), "%s %s", l->package, l->version);
	else
		snprintf(pkg, sizeof(pkg), "%s", recorded ? "no package" : "its package not recorded");
	short_id(l->id, id, sizeof(id));
	snprintf(out, size, "%s, %s%s%s", pkg, id, path ? ", " : "", path ? path : "");
}

void pmc__library_change_text(const struct pmc__library_change *c, const char *since, char *out,
			      size_t size)
{
	char was[512], now[PATH_MAX + 512];

	if (c->was.name[0])
		identity_text(&c->was, c->recorded, NULL, was, sizeof(was));
	if (c->now.name[0])
		identity_text(&c->now, true, c->path, now, sizeof(now));
	if (c->was.name[0] && c->now.name[0])
		snprintf(out, size, "library %s changed since %s (was %s; now %s)", c->was.name, since,
			 was, now);
	else if (c->now.name[0])
		snprintf(out, size, "library %s loaded now, not at %s (now %s)", c->now.name, since,
			 now);
	else
		snprintf(out, size, "library %s loaded at %s, not now (was %s)", c->was.name, since,
			 was);
}

/* ", +N of the difference (P%) lies in it", where the sim backend measured
 * the functions on both sides. */
static void share_of(FILE *f, const struct pmc__region_rec *old, const struct pmc__region_rec *g,
		     const char *label, const char *name, const char *path)
{
	double total, in;
	char d[48];

	if (!g || !old || !old->nfns || !g->nfns)
		return;
	in = pmc__change_in_library(old, g, label, name, path, &total);
	pmc__fmt_num(d, sizeof(d), fabs(in));
	if (total != 0 && in == 0)
		fprintf(f, ", none of the difference lies in it");
	else if (total != 0)
		fprintf(f, ", %s%s of the difference (%.0f%%) lies in it", in < 0 ? "-" : "+", d,
			100.0 * in / total);
}

/*
 * Whose change was it, first: the libraries that are not those the budget
 * was calibrated with (its case's library lines, or SUITE.calibration.json
 * for a file calibrated before them), each with both identities and its
 * part of the difference.  Malloc'd text to put before the figures, or NULL.
 */
char *pmc__libraries_before(const struct pmc__result *r, const char *budget_source,
			    const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			    const char *label)
{
	struct pmc__library_change ch[8];
	size_t n = pmc__libraries_changed(r, budget_source, ch, PMC__COUNT(ch)), cap = 0;
	char *text = NULL;
	FILE *f = n ? open_memstream(&text, &cap) : NULL;

	if (!f)
		return NULL;
	for (size_t i = 0; i < n && i < PMC__COUNT(ch); i++) {
		char line[PATH_MAX + 1024];

		pmc__library_change_text(&ch[i], "calibration", line, sizeof(line));
		fprintf(f, "%s%s", i ? "; " : "", line);
		share_of(f, old, g, label, ch[i].was.name[0] ? ch[i].was.name : ch[i].now.name,
			 ch[i].path);
	}
	if (n > PMC__COUNT(ch))
		fprintf(f, "; and %zu more libraries", n - PMC__COUNT(ch));
	fclose(f);
	return text;
}

/*
 * Whose change was it, after the figures: pmcheck's own libraries that are
 * another build than when the budget was calibrated (SUITE.calibration.json
 * beside it), and pmcheck's version.  Malloc'd text to append, or NULL.
 */
char *pmc__provenance_after(const struct pmc__result *r, const char *budget_source,
			    const struct pmc__region_rec *old, const struct pmc__region_rec *g,
			    const char *label)
{
	struct pmc__calibration_file cf;
	struct pmc__object_change ch[8];
	char *text = NULL;
	size_t n, k = 0, cap = 0;
	FILE *f;

	if (pmc__calibration_load(budget_source, &cf))
		return NULL;
	n = cf.nobjects ? pmc__objects_diff(cf.objects, cf.nobjects, r->objects, r->nobjects, ch, 8)
			: 0;
	for (size_t i = 0; i < n; i++)
		if (ch[i].pmcheck)
			ch[k++] = ch[i];
	f = k || (cf.pmcheck[0] && strcmp(cf.pmcheck, PMCHECK_VERSION_STRING))
		    ? open_memstream(&text, &cap) : NULL;
	if (f) {
		fprintf(f, " Since calibration (%s beside the budget):",
			strrchr(cf.path, '/') ? strrchr(cf.path, '/') + 1 : cf.path);
		for (size_t i = 0; i < k; i++) {
			char line[400];

			pmc__object_change_text(&ch[i], "calibration", line, sizeof(line));
			fprintf(f, "%s %s", i ? ";" : "", line);
			share_of(f, old, g, label, pmc__file_part(ch[i].path), ch[i].now ? ch[i].path : NULL);
		}
		if (cf.pmcheck[0] && strcmp(cf.pmcheck, PMCHECK_VERSION_STRING))
			fprintf(f, "%s calibrated with pmcheck %s, measured with pmcheck %s", k ? ";" : "",
				cf.pmcheck, PMCHECK_VERSION_STRING);
		fputc('.', f);
		fclose(f);
	}
	pmc__calibration_release(&cf);
	return text;
}

const char *pmc__program_name(void)
{
	static char name[256];

	if (!name[0]) {
		char path[PATH_MAX];
		ssize_t len = readlink("/proc/self/exe", path, sizeof(path) - 1);

		path[len > 0 ? len : 0] = '\0';
		snprintf(name, sizeof(name), "%s", len > 0 ? pmc__file_part(path) : "?");
	}
	return name;
}

/* "DIR/budgets/KEY/SUITE.ini[:LINE]" -> "DIR/budgets/KEY/SUITE<suffix>". */
int pmc__beside_budget(const char *budget_source, const char *suffix, char *path, size_t size)
{
	char *colon, *dot;

	if (!budget_source || strlen(budget_source) + strlen(suffix) >= size)
		return -ENAMETOOLONG;
	strcpy(path, budget_source);
	colon = strrchr(path, ':');
	if (colon && colon > strrchr(path, '/'))
		*colon = '\0';
	dot = strrchr(path, '.');
	if (!dot || strcmp(dot, ".ini"))
		return -EINVAL;
	strcpy(dot, suffix);
	return 0;
}

int pmc__calibration_load(const char *budget_source, struct pmc__calibration_file *cf)
{
	char why[200];
	json_t *doc;

	memset(cf, 0, sizeof(*cf));
	if (pmc__beside_budget(budget_source, PMC__CALIBRATION_SUFFIX, cf->path, sizeof(cf->path)))
		return -ENOENT;
	if (pmc__hwdb_json_load(cf->path, &doc, why, sizeof(why)) || !json_is_object(doc)) {
		json_decref(doc);
		return -ENOENT;
	}
	snprintf(cf->program, sizeof(cf->program), "%s", pmc__jstr(doc, "program"));
	snprintf(cf->pmcheck, sizeof(cf->pmcheck), "%s", pmc__jstr(doc, "pmcheck"));
	if (pmc__objects_from_json(json_object_get(doc, "objects"), &cf->objects, &cf->nobjects, why,
				   sizeof(why))) {
		pmc_objects_free(cf->objects, cf->nobjects);
		cf->objects = NULL;
		cf->nobjects = 0;
	}
	json_decref(doc);
	return 0;
}

void pmc__calibration_release(struct pmc__calibration_file *cf)
{
	pmc_objects_free(cf->objects, cf->nobjects);
	cf->objects = NULL;
	cf->nobjects = 0;
}

int pmc__calibration_program_check(const char *budget_source, char *why, size_t size)
{
	static char last_path[PATH_MAX], last_program[256];
	char path[PATH_MAX];
	const char *me = pmc__program_name();

	if (pmc__beside_budget(budget_source, PMC__CALIBRATION_SUFFIX, path, sizeof(path)))
		return 0;
	if (strcmp(path, last_path)) {
		json_t *doc;
		int rc = pmc__hwdb_json_load(path, &doc, why, size);

		/* A FIFO or device here would have held the run forever. */
		if (rc && rc != -ENOENT) {
			last_path[0] = '\0';
			return rc;
		}
		snprintf(last_path, sizeof(last_path), "%s", path);
		snprintf(last_program, sizeof(last_program), "%s", pmc__jstr(doc, "program"));
		json_decref(doc);
	}
	if (!last_program[0] || !strcmp(last_program, me))
		return 0;
	snprintf(why, size,
		 "these budgets belong to another program: %s says program \"%s\" calibrated them, this is \"%s\". Two programs have a suite of this name; rename one suite, give each program its own --hwdb directory, or, if \"%s\" is \"%s\" renamed, calibrate again",
		 path, last_program, me, me, last_program);
	return -EEXIST;
}

int pmc__calibration_owner(const char *dir, const char *key, const char *suite, FILE *out)
{
	char path[PATH_MAX];
	json_t *doc;

	if (snprintf(path, sizeof(path), "%s/budgets/%s/%s%s", dir, key, suite,
		     PMC__CALIBRATION_SUFFIX) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	{
		char why[PATH_MAX + 256];
		int rc = pmc__hwdb_json_load(path, &doc, why, sizeof(why));

		if (rc && rc != -ENOENT) {
			fprintf(out, "  error: %s\n", why);
			return rc;
		}
	}
	if (json_is_object(doc) && *pmc__jstr(doc, "program") &&
	    strcmp(pmc__jstr(doc, "program"), pmc__program_name())) {
		fprintf(out,
			"  error: %s: suite \"%s\" under this key was calibrated by program \"%s\", this is \"%s\": two programs have a suite of this name. Rename one suite or give each program its own --hwdb directory; if this program is \"%s\" renamed, delete that file and calibrate again\n",
			path, suite, pmc__jstr(doc, "program"), pmc__program_name(),
			pmc__jstr(doc, "program"));
		json_decref(doc);
		return -EEXIST;
	}
	json_decref(doc);
	return 0;
}

int pmc__calibration_write(const char *dir, const char *key, const char *suite, const char *test,
			   const char *engine, const struct pmc_object *o, size_t n)
{
	char path[PATH_MAX], when[32];
	time_t now = time(NULL);
	struct tm tm;
	json_t *doc, *was, *engines;
	int rc;

	if (snprintf(path, sizeof(path), "%s/budgets/%s/%s%s", dir, key, suite,
		     PMC__CALIBRATION_SUFFIX) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	/* The other cases' engines stay: each case is calibrated on its own. */
	{
		char why[PATH_MAX + 256];

		rc = pmc__hwdb_json_load(path, &was, why, sizeof(why));
		if (rc && rc != -ENOENT)
			return rc;
	}
	engines = json_object_get(was, "sim_engines");
	engines = json_is_object(engines) ? json_deep_copy(engines) : json_object();
	if (engine && engines)
		json_object_set_new(engines, test, json_string(engine));
	json_decref(was);
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	doc = json_pack("{s:s, s:s, s:s, s:s, s:o, s:o*}", "schema", "pmcheck-calibration/1", "program",
			pmc__program_name(), "pmcheck", PMCHECK_VERSION_STRING, "calibrated", when,
			"objects", pmc__objects_json(o, n), "sim_engines",
			engines && json_object_size(engines) ? engines : NULL);
	if (engines && !json_object_size(engines))
		json_decref(engines);
	rc = doc ? pmc__write_json(path, doc) : -ENOMEM;
	json_decref(doc);
	return rc;
}

const char *pmc__calibration_engine(const char *budget_source, const char *test)
{
	static char last_path[PATH_MAX], last_test[256], engine[32];
	char path[PATH_MAX];
	json_t *doc;

	if (pmc__beside_budget(budget_source, PMC__CALIBRATION_SUFFIX, path, sizeof(path)))
		return "";
	if (!strcmp(path, last_path) && !strcmp(test, last_test))
		return engine;
	{
		char why[PATH_MAX + 256];

		pmc__hwdb_json_load(path, &doc, why, sizeof(why)); /* said by pmc__calibration_program_check */
	}
	snprintf(engine, sizeof(engine), "%s",
		 json_is_string(json_object_get(json_object_get(doc, "sim_engines"), test))
			 ? json_string_value(json_object_get(json_object_get(doc, "sim_engines"), test))
			 : "");
	json_decref(doc);
	snprintf(last_path, sizeof(last_path), "%s", path);
	snprintf(last_test, sizeof(last_test), "%s", test);
	return engine;
}
