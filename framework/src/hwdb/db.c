/* SPDX-License-Identifier: MIT */
/*
 * The database: its directories, the signature map (map.ini) and the
 * models' facts (models.ini), loaded and checked at open.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
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

/* Does dir hold a hwdb (its map.ini)? */
static bool is_hwdb(const char *dir)
{
	char path[PATH_MAX];
	struct stat st;

	return pmc__snprintf(path, sizeof(path), "%s/map.ini", dir) == 0 && stat(path, &st) == 0 &&
	       S_ISREG(st.st_mode);
}

/*
 * The file this code was loaded from: libpmcheck.so, or the program that
 * linked it statically (dladdr names the main program as it was started,
 * so /proc/self/exe says where it is).  Symbolic links resolved, so that
 * libpmcheck.so.0 -> libpmcheck.so.0.2 and a program run through a link
 * both give the installed directory.
 */
static bool loaded_from(char *out)
{
	Dl_info info;

	if (dladdr((void *)&pmc_hwdb_builtin_dir, &info) && info.dli_fname &&
	    strchr(info.dli_fname, '/') && realpath(info.dli_fname, out))
		return true;
	return realpath("/proc/self/exe", out) != NULL;
}

/* Built outside CMake (the fuzzers): no built-in hwdb. */
#ifndef PMCHECK_HWDB_BUILD_DIR
#define PMCHECK_HWDB_BUILD_DIR "/nonexistent"
#define PMCHECK_HWDB_SOURCE_DIR "/nonexistent"
#define PMCHECK_HWDB_FROM_LIBDIR "/nonexistent"
#define PMCHECK_HWDB_FROM_BINDIR "/nonexistent"
#endif

const char *pmc_hwdb_builtin_dir(void)
{
	static char found[PATH_MAX];
	char self[PATH_MAX], *slash;
	const char *rel[] = { PMCHECK_HWDB_FROM_LIBDIR, PMCHECK_HWDB_FROM_BINDIR };
	size_t n = strlen(PMCHECK_HWDB_BUILD_DIR);

	if (loaded_from(self)) {
		/* A build tree's library or program reads the source tree's. */
		if (!strncmp(self, PMCHECK_HWDB_BUILD_DIR, n) && self[n] == '/')
			return is_hwdb(PMCHECK_HWDB_SOURCE_DIR) ? PMCHECK_HWDB_SOURCE_DIR : NULL;
		slash = strrchr(self, '/');
		*slash = '\0';
		/* Installed: share/pmcheck/hwdb relative to lib/ (the shared
		 * library) or bin/ (a program with the static one). */
		for (size_t i = 0; i < 2; i++) {
			if (pmc__snprintf(found, sizeof(found), "%s/%s", self, rel[i]) == 0 &&
			    is_hwdb(found)) {
				char real[PATH_MAX];

				if (realpath(found, real))
					pmc__copy(found, sizeof(found), real);
				return found;
			}
		}
	}
#ifdef PMCHECK_HWDB_INSTALL_DIR
	/* A static library inside someone else's program, which can be
	 * anywhere: the prefix it was configured for. */
	if (is_hwdb(PMCHECK_HWDB_INSTALL_DIR))
		return PMCHECK_HWDB_INSTALL_DIR;
#endif
	return NULL;
}

struct load_ctx {
	struct pmc_hwdb *db;
	const char *path;
	unsigned seen;      /* facts given in the current model section */
	int section_line;   /* line of the current "[section]" header */
};

static int map_handler(void *user, const char *section, const char *name, const char *value,
		       int line, struct pmc_error *err)
{
	struct load_ctx *c = user;
	struct pmc_hwdb *db = c->db;
	struct map_entry *e, *grown;
	size_t len = strlen(name);
	char ss[PMC__HWDB_SHOWN_MAX * 4 + 32], sn[PMC__HWDB_SHOWN_MAX * 4 + 32];

	if (strcmp(section, "map"))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: entries belong in the [map] section (found [%s])", c->path, line,
				 pmc__hwdb_shown(ss, sizeof(ss), section));
	if (len < 2 || name[0] != '^' || name[len - 1] != '$')
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s\": expected an anchored regular expression (^...$) over a signature",
				 c->path, line, pmc__hwdb_shown(sn, sizeof(sn), name));
	if (!*value || strlen(value) >= sizeof(e->model) || strpbrk(value, " \t/"))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s = ...\": expected a model id after '=' (letters, digits, '-', '_', under 64 bytes)",
				 c->path, line, pmc__hwdb_shown(sn, sizeof(sn), name));
	for (size_t i = 0; i < db->nmap; i++) {
		size_t plen = strlen(c->path);

		if (!strcmp(db->map[i].pattern, name) && !strncmp(db->map[i].where, c->path, plen) &&
		    db->map[i].where[plen] == ':')
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
					 "%s:%d: pattern \"%s\" is already mapped at %s (to %s); first match wins, so this line would never apply: remove one",
					 c->path, line, pmc__hwdb_shown(sn, sizeof(sn), name), db->map[i].where,
					 db->map[i].model);
	}
	grown = realloc(db->map, (db->nmap + 1) * sizeof(*db->map));
	if (!grown)
		return pmc__fail(err, -ENOMEM, c->path, -1, "out of memory");
	db->map = grown;
	e = &db->map[db->nmap];
	memset(e, 0, sizeof(*e));
	{
		char why[160];

		if (pmc__map_pattern_compile(&e->re, name, why, sizeof(why)))
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: \"%s\": %s", c->path,
					 line, pmc__hwdb_shown(sn, sizeof(sn), name), why);
	}
	pmc__copy(e->pattern, sizeof(e->pattern), name);
	pmc__copy(e->model, sizeof(e->model), value);
	pmc__snprintf(e->where, sizeof(e->where), "%s:%d", c->path, line);
	db->nmap++;
	return 0;
}

static int parse_int_fact(const char *path, int line, const char *name, const char *value,
			  int *out, struct pmc_error *err)
{
	/* Counters per PMU, bits per counter, debug registers: what hardware
	 * has ever had, with room. */
	long lo = 0, hi = strstr(name, "width") ? 64 : strstr(name, "slots") ? 16 : 64;
	char *end;
	long v;

	if (strstr(name, "width"))
		lo = 1;
	errno = 0;
	v = strtol(value, &end, 10);
	if (end == value || *end || errno)
		return pmc__fail(err, PMC_E_SYNTAX, path, -1,
				 "%s:%d: %s: expected a whole number", path, line, name);
	if (v < lo || v > hi)
		return pmc__fail(err, PMC_E_SYNTAX, path, -1,
				 "%s:%d: %s = %ld is out of range: expected %ld..%ld%s", path, line, name,
				 v, lo, hi, lo ? " bits" : "");
	*out = (int)v;
	return 0;
}

static void append_line(char *buf, size_t size, const char *text)
{
	size_t used = strlen(buf);

	if (used + strlen(text) + 2 <= size) {
		if (used)
			strcat(buf, "\n");
		strcat(buf, text);
	}
}

static int models_handler(void *user, const char *section, const char *name, const char *value,
			  int line, struct pmc_error *err)
{
	struct load_ctx *c = user;
	struct pmc_hwdb *db = c->db;
	struct pmc_hwdb_model *m = db->nmodels ? &db->models[db->nmodels - 1] : NULL;
	char ss[PMC__HWDB_SHOWN_MAX * 4 + 32], sn[PMC__HWDB_SHOWN_MAX * 4 + 32];

	if (!m || strcmp(m->id, section) || strcmp(m->where, "") == 0 ||
	    strncmp(m->where, c->path, strlen(c->path))) {
		struct pmc_hwdb_model *grown = realloc(db->models, (db->nmodels + 1) * sizeof(*grown));
		int *lines;

		if (!grown)
			return pmc__fail(err, -ENOMEM, c->path, -1, "out of memory");
		db->models = grown;
		lines = realloc(db->deterministic_line, (db->nmodels + 1) * sizeof(*lines));
		if (!lines)
			return pmc__fail(err, -ENOMEM, c->path, -1, "out of memory");
		db->deterministic_line = lines;
		for (size_t i = 0; i < db->nmodels; i++) {
			size_t plen = strlen(c->path);

			if (!strcmp(db->models[i].id, section) &&
			    !strncmp(db->models[i].where, c->path, plen) &&
			    db->models[i].where[plen] == ':')
				return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
						 "%s:%d: model [%s] is defined twice (first at %s); lookups would see only the first: merge them",
						 c->path, line, section, db->models[i].where);
		}
		db->deterministic_line[db->nmodels] = 0;
		m = &db->models[db->nmodels++];
		memset(m, 0, sizeof(*m));
		c->seen = 0;
		m->general_counters = m->general_width = m->fixed_counters = m->fixed_width =
			m->breakpoint_slots = -1;
		if (pmc__copy(m->id, sizeof(m->id), section))
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: model id too long", c->path, line);
		pmc__snprintf(m->where, sizeof(m->where), "%s:%d", c->path,
			      c->section_line ? c->section_line : line);
	}
	{
		static const char *const once[] = { "name", "vendor", "arch", "general_counters",
						     "general_width", "fixed_counters", "fixed_width",
						     "breakpoint_slots", "deterministic" };

		for (unsigned i = 0; i < sizeof(once) / sizeof(once[0]); i++) {
			if (strcmp(name, once[i]))
				continue;
			if (c->seen & (1u << i))
				return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
						 "%s:%d: \"%s\" is given twice in [%s]; keep one (only \"erratum\" may repeat)",
						 c->path, line, name, pmc__hwdb_shown(ss, sizeof(ss), section));
			c->seen |= 1u << i;
		}
	}
	if (!strcmp(name, "name"))
		return pmc__copy(m->name, sizeof(m->name), value) ? pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: name too long", c->path, line) : 0;
	if (!strcmp(name, "vendor"))
		return pmc__copy(m->vendor, sizeof(m->vendor), value) ? pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: vendor too long", c->path, line) : 0;
	if (!strcmp(name, "arch"))
		return pmc__copy(m->arch, sizeof(m->arch), value) ? pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: arch too long", c->path, line) : 0;
	if (!strcmp(name, "general_counters"))
		return parse_int_fact(c->path, line, name, value, &m->general_counters, err);
	if (!strcmp(name, "general_width"))
		return parse_int_fact(c->path, line, name, value, &m->general_width, err);
	if (!strcmp(name, "fixed_counters"))
		return parse_int_fact(c->path, line, name, value, &m->fixed_counters, err);
	if (!strcmp(name, "fixed_width"))
		return parse_int_fact(c->path, line, name, value, &m->fixed_width, err);
	if (!strcmp(name, "breakpoint_slots"))
		return parse_int_fact(c->path, line, name, value, &m->breakpoint_slots, err);
	if (!strcmp(name, "deterministic"))
		db->deterministic_line[db->nmodels - 1] = line;
	if (!strcmp(name, "deterministic"))
		return pmc__copy(m->deterministic, sizeof(m->deterministic), value) ? pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: list too long", c->path, line) : 0;
	if (!strcmp(name, "erratum")) {
		append_line(m->errata, sizeof(m->errata), value);
		return 0;
	}
	return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
			 "%s:%d: unknown fact \"%s\" in [%s]; expected name, vendor, arch, general_counters, general_width, fixed_counters, fixed_width, breakpoint_slots, deterministic or erratum",
			 c->path, line, pmc__hwdb_shown(sn, sizeof(sn), name), pmc__hwdb_shown(ss, sizeof(ss), section));
}

void pmc_hwdb_free(struct pmc_hwdb *db)
{
	size_t i;

	if (!db)
		return;
	for (i = 0; i < db->nmap; i++)
		regfree(&db->map[i].re);
	free(db->map);
	free(db->models);
	free(db->deterministic_line);
	for (i = 0; i < db->ndirs; i++)
		free(db->dirs[i]);
	free(db);
}

static bool is_budget_file(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && !strcmp(name + n - 4, ".ini") && strcmp(name, "map.ini") && strcmp(name, "models.ini");
}

/* A directory given as an hwdb that is a level too deep: the budgets/
 * directory itself (KEY/SUITE.ini below it) or one key's directory
 * (SUITE.ini in it), with neither budgets/ nor map.ini nor models.ini.
 * Every budget would be missing, and a gate run without --strict would
 * pass: the level is named instead.  NULL when it is none of those. */
static const char *wrong_level(const char *dir)
{
	char path[PATH_MAX];
	const char *level = NULL;
	struct stat st;
	struct dirent *e;
	DIR *d;

	for (const char *const *f = (const char *const[]){ "budgets", "map.ini", "models.ini", NULL }; *f; f++)
		if (pmc__snprintf(path, sizeof(path), "%s/%s", dir, *f) != 0 || lstat(path, &st) == 0)
			return NULL;
	d = opendir(dir);
	while (d && !level && (e = readdir(d))) {
		DIR *sub;
		struct dirent *f;

		if (e->d_name[0] == '.')
			continue;
		if (is_budget_file(e->d_name)) {
			level = "one key's directory of an hwdb's budgets/ (it holds SUITE.ini files)";
			break;
		}
		if (pmc__snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) != 0 || !(sub = opendir(path)))
			continue;
		while (!level && (f = readdir(sub)))
			if (is_budget_file(f->d_name))
				level = "the budgets/ directory of an hwdb (it holds KEY/SUITE.ini files)";
		closedir(sub);
	}
	/* Anything else in it (/, /proc/self, a source tree): not an hwdb at
	 * all.  An empty directory is an hwdb with nothing in it yet. */
	if (d && !level) {
		rewinddir(d);
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				level = "no hwdb at all";
				break;
			}
	}
	if (d)
		closedir(d);
	return level;
}

int pmc_hwdb_open(struct pmc_hwdb **out, const char *const *dirs, size_t ndirs,
		  struct pmc_error *err)
{
	struct pmc_hwdb *db = calloc(1, sizeof(*db));
	const char *builtin = pmc_hwdb_builtin_dir(), *level;
	char path[PATH_MAX];
	struct stat st;
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!db)
		return pmc__fail(err, -ENOMEM, "", -1, "out of memory");
	if (ndirs > PMC_HWDB_MAX_DIRS) {
		rc = pmc__fail(err, -E2BIG, "", -1, "more than %d hwdb directories", PMC_HWDB_MAX_DIRS);
		goto out;
	}
	for (i = 0; i < ndirs; i++) {
		if (stat(dirs[i], &st) != 0 || !S_ISDIR(st.st_mode)) {
			char shown[PATH_MAX];
			bool exists = stat(dirs[i], &st) == 0;

			pmc__escape_ctl(shown, sizeof(shown), dirs[i]);
			rc = pmc__fail(err, exists ? -ENOTDIR : -ENOENT, dirs[i], -1,
				       "hwdb directory \"%s\" %s (%s, or fix --hwdb / PMCHECK_HWDB)", shown,
				       exists ? "is not a directory" : "does not exist",
				       exists ? "give the directory that holds map.ini and budgets/" : "create it");
			goto out;
		}
		{
			/* An hwdb that cannot be listed would read as one without
			 * budgets, and every gate would pass unbudgeted. */
			DIR *d = opendir(dirs[i]);
			char shown[PATH_MAX];

			if (!d) {
				rc = -errno;
				pmc__escape_ctl(shown, sizeof(shown), dirs[i]);
				rc = pmc__fail(err, rc, dirs[i], -1,
					       "cannot read hwdb directory \"%s\": %s; every file and directory of an hwdb must be readable by whoever runs pmcheck (fix its mode or owner, or --hwdb / PMCHECK_HWDB)",
					       shown, strerror(-rc));
				goto out;
			}
			closedir(d);
		}
		level = wrong_level(dirs[i]);
		if (level && !strcmp(level, "no hwdb at all")) {
			char shown[PATH_MAX];

			pmc__escape_ctl(shown, sizeof(shown), dirs[i]);
			rc = pmc__fail(err, -ENOENT, dirs[i], -1,
				       "\"%s\" is not an hwdb directory: it holds other files but none of map.ini, models.ini or budgets/ (an hwdb directory holds those, or nothing yet); fix --hwdb / PMCHECK_HWDB",
				       shown);
			goto out;
		}
		if (level) {
			char shown[PATH_MAX];

			pmc__escape_ctl(shown, sizeof(shown), dirs[i]);
			rc = pmc__fail(err, -ENOENT, dirs[i], -1,
				       "hwdb directory \"%s\" has no budgets/, map.ini or models.ini: it looks like %s; give the hwdb's own directory, the one that holds budgets/ (fix --hwdb / PMCHECK_HWDB)",
				       shown, level);
			goto out;
		}
		if (pmc__snprintf(path, sizeof(path), "%s/budgets", dirs[i]) == 0 &&
		    lstat(path, &st) == 0) {
			DIR *d = opendir(path);
			char shown[PATH_MAX];

			pmc__escape_ctl(shown, sizeof(shown), path);
			if (!d) {
				rc = -errno;
				rc = pmc__fail(err, rc, path, -1,
					       "cannot read hwdb directory %s: %s; every file and directory of an hwdb must be readable by whoever runs pmcheck (fix its mode or owner)",
					       shown, strerror(-rc));
				goto out;
			}
			closedir(d);
		}
		db->dirs[db->ndirs++] = strdup(dirs[i]);
	}
	if (builtin)
		db->dirs[db->ndirs++] = strdup(builtin);
	for (i = 0; i < db->ndirs; i++) {
		struct load_ctx c = { db, path, 0, 0 };
		struct pmc__ini_opts opts = { &c.section_line, NULL };

		if (!db->dirs[i]) {
			rc = pmc__fail(err, -ENOMEM, "", -1, "out of memory");
			goto out;
		}
		static const char *const files[] = { "map.ini", "models.ini" };

		for (size_t f = 0; f < 2; f++) {
			/* Absent is fine; anything else there is read as a file,
			 * or refused (pmc__hwdb_read_file). */
			if (pmc__snprintf(path, sizeof(path), "%s/%s", db->dirs[i], files[f]) != 0 ||
			    (lstat(path, &st) != 0 && errno == ENOENT))
				continue;
			c.section_line = 0;
			rc = pmc__ini_parse_path(path, f ? models_handler : map_handler, &c, &opts,
						 err);
			if (rc)
				goto out;
		}
	}
out:
	if (rc) {
		pmc_hwdb_free(db);
		return rc;
	}
	*out = db;
	return 0;
}

size_t pmc_hwdb_ndirs(const struct pmc_hwdb *db)
{
	return db ? db->ndirs : 0;
}

const char *pmc_hwdb_dir(const struct pmc_hwdb *db, size_t i)
{
	return db && i < db->ndirs ? db->dirs[i] : NULL;
}

int pmc_hwdb_model(const struct pmc_hwdb *db, const char *id, struct pmc_hwdb_model *model)
{
	size_t i;

	/* Directories were loaded users' first: the first section wins. */
	for (i = 0; db && i < db->nmodels; i++)
		if (!strcmp(db->models[i].id, id)) {
			*model = db->models[i];
			return 0;
		}
	return -ENOENT;
}

int pmc_hwdb_match(const struct pmc_hwdb *db, const char *signature, struct pmc_hwdb_match *m,
		   struct pmc_hwdb_model *model)
{
	size_t i;

	memset(m, 0, sizeof(*m));
	if (model)
		memset(model, 0, sizeof(*model));
	for (i = 0; db && signature && i < db->nmap; i++) {
		if (regexec(&db->map[i].re, signature, 0, NULL, 0) == 0) {
			pmc__copy(m->model, sizeof(m->model), db->map[i].model);
			pmc__copy(m->pattern, sizeof(m->pattern), db->map[i].pattern);
			pmc__copy(m->where, sizeof(m->where), db->map[i].where);
			if (model && pmc_hwdb_model(db, m->model, model) != 0)
				return -ENOENT;
			return 0;
		}
	}
	return -ENOENT;
}

int pmc_hwdb_model_deterministic(const struct pmc_hwdb_model *model, const char *event)
{
	const char *p = model ? model->deterministic : "";
	size_t n = strlen(event);

	while (*p) {
		size_t len;

		p += strspn(p, ", \t");
		len = strcspn(p, ", \t");
		if (len == n && !strncmp(p, event, n))
			return 1;
		p += len;
	}
	return 0;
}

/* Vendor part of a signature ("GenuineIntel", "ARM"). */
