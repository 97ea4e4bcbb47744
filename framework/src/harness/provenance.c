/* SPDX-License-Identifier: MIT */
/*
 * Whose change was it?  The objects the measured process loaded
 * (pmc_objects_loaded: each with its GNU build ID, or a content hash), the program
 * that calibrated a suite's budgets and the pmcheck that measured them,
 * kept beside the budgets in SUITE.calibration.json.  A failed budget then
 * says which library is another build than at calibration, and a program
 * never judges itself by another program's budgets for a suite of the same
 * name.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pmcheck/pmcheck.h>

#include "harness_int.h"
#include "util/util_int.h"

json_t *pmc__objects_json(const struct pmc_object *o, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, json_pack("{s:s, s:s}", "path", o[i].path, "id", o[i].id));
	return arr;
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

		if (!p || !id) {
			snprintf(why, size, "objects[%zu]: expected {\"path\": string, \"id\": string}", i);
			return -EINVAL;
		}
		(*out)[*n].path = strdup(p);
		(*out)[*n].id = strdup(id);
		if (!(*out)[*n].path || !(*out)[*n].id) {
			free((*out)[*n].path);
			free((*out)[*n].id);
			return -ENOMEM;
		}
		(*n)++;
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
	doc = json_load_file(cf->path, 0, NULL);
	if (!json_is_object(doc)) {
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
		json_t *doc = json_load_file(path, 0, NULL);

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
	doc = json_load_file(path, 0, NULL);
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
	was = json_load_file(path, 0, NULL);
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
	doc = json_load_file(path, 0, NULL);
	snprintf(engine, sizeof(engine), "%s",
		 json_is_string(json_object_get(json_object_get(doc, "sim_engines"), test))
			 ? json_string_value(json_object_get(json_object_get(doc, "sim_engines"), test))
			 : "");
	json_decref(doc);
	snprintf(last_path, sizeof(last_path), "%s", path);
	snprintf(last_test, sizeof(last_test), "%s", test);
	return engine;
}
