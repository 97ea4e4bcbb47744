/* SPDX-License-Identifier: MIT */
/*
 * Budget lookup: the key chain from the most specific level (the model)
 * to the least (the backend), and the budget files read for one key.
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

static void signature_vendor(const char *sig, char *buf, size_t size)
{
	size_t len = strcspn(sig, "-");

	if (len >= size)
		len = size - 1;
	memcpy(buf, sig, len);
	buf[len] = '\0';
}

/* The candidate key of each level (NULL where the level has none), in
 * level order; vendor and arch are the buffers behind those levels. */
static void key_levels(const struct pmc_hwdb *db, const char *backend, const char *signature,
		       const char *cand[PMC_HWDB_NLEVELS], char *vendor, size_t vsize,
		       char *arch, size_t asize, char *model, size_t msize)
{
	struct pmc_hwdb_match m;
	struct pmc_hwdb_model facts;

	for (int i = 0; i < PMC_HWDB_NLEVELS; i++)
		cand[i] = NULL;
	vendor[0] = arch[0] = model[0] = '\0';
	if (!signature || !*signature)
		return;
	cand[PMC_HWDB_SIGNATURE] = signature;
	if (backend && !strcmp(backend, "sim"))
		return; /* a sim profile key stands alone */
	if (pmc_hwdb_match(db, signature, &m, &facts) == 0 || m.model[0]) {
		pmc__copy(model, msize, m.model);
		cand[PMC_HWDB_MODEL] = model;
		if (facts.vendor[0])
			pmc__copy(vendor, vsize, facts.vendor);
		if (facts.arch[0])
			pmc__copy(arch, asize, facts.arch);
	}
	if (!vendor[0] && strcmp(signature, "unknown"))
		signature_vendor(signature, vendor, vsize);
	if (!arch[0]) {
		if (!strcmp(vendor, "GenuineIntel") || !strcmp(vendor, "AuthenticAMD") ||
		    !strcmp(vendor, "HygonGenuine"))
			pmc__copy(arch, asize, "x86_64");
		else if (!strcmp(vendor, "ARM"))
			pmc__copy(arch, asize, "aarch64");
	}
	cand[PMC_HWDB_VENDOR] = vendor[0] ? vendor : NULL;
	cand[PMC_HWDB_ARCH] = arch[0] ? arch : NULL;
	cand[PMC_HWDB_ANY] = "any";
	/* A key is a directory name. */
	for (int i = 0; i < PMC_HWDB_NLEVELS; i++)
		if (cand[i] && (!*cand[i] || strchr(cand[i], '/') || cand[i][0] == '.'))
			cand[i] = NULL;
}

/* Append key to keys[] unless it is there already. */
static void add_key(char keys[][PMC_HWDB_KEY_MAX], size_t *n, const char *key)
{
	for (size_t j = 0; j < *n; j++)
		if (!strcmp(keys[j], key))
			return;
	if (pmc__copy(keys[*n], PMC_HWDB_KEY_MAX, key) == 0)
		(*n)++;
}

size_t pmc_hwdb_keys(const struct pmc_hwdb *db, const char *backend, const char *signature,
		     char keys[][PMC_HWDB_KEY_MAX], size_t max)
{
	const char *cand[PMC_HWDB_NLEVELS];
	char vendor[64], arch[32], model[PMC_HWDB_KEY_MAX], os[PMC_OS_KEY_MAX];
	size_t n = 0;

	if (max == 0)
		return 0;
	key_levels(db, backend, signature, cand, vendor, sizeof(vendor), arch, sizeof(arch), model,
		   sizeof(model));
	/* "any" given as the signature (calls on sim, judged by the budgets
	 * every backend shares) is the "any" level, this release's first. */
	if (cand[PMC_HWDB_SIGNATURE] && !strcmp(cand[PMC_HWDB_SIGNATURE], "any"))
		for (int i = 0; i < PMC_HWDB_ANY; i++)
			cand[i] = NULL;
	for (int i = 0; i < PMC_HWDB_NLEVELS && n < max; i++) {
		/* Between the CPU's keys and "any": this release's, for counts
		 * that depend on the libraries it ships rather than the CPU. */
		if (i == PMC_HWDB_ANY && cand[i] && pmc__os_key(os, sizeof(os)) == 0 &&
		    strlen(os) < PMC_HWDB_KEY_MAX)
			add_key(keys, &n, os);
		if (cand[i] && n < max)
			add_key(keys, &n, cand[i]);
	}
	return n;
}

int pmc_hwdb_key_at(const struct pmc_hwdb *db, const char *backend, const char *signature,
		    enum pmc_hwdb_level level, char *key, size_t size)
{
	const char *cand[PMC_HWDB_NLEVELS];
	char vendor[64], arch[32], model[PMC_HWDB_KEY_MAX];

	if ((int)level < 0 || level >= PMC_HWDB_NLEVELS)
		return -EINVAL;
	key_levels(db, backend, signature, cand, vendor, sizeof(vendor), arch, sizeof(arch), model,
		   sizeof(model));
	if (!cand[level])
		return -ENOENT;
	return pmc__copy(key, size, cand[level]);
}

size_t pmc_hwdb_suite_keys(const struct pmc_hwdb *db, const char *backend, const char *suite,
			   char keys[][PMC_HWDB_KEY_MAX], size_t max)
{
	bool sim = backend && !strcmp(backend, "sim");
	char path[PATH_MAX];
	size_t n = 0, d;

	if (!db || !suite || !*suite || strchr(suite, '/'))
		return 0;
	for (d = 0; d < db->ndirs; d++) {
		struct dirent *e;
		DIR *dh;

		if (pmc__snprintf(path, sizeof(path), "%s/budgets", db->dirs[d]) < 0 ||
		    !(dh = opendir(path)))
			continue;
		while ((e = readdir(dh)) && n < max) {
			struct stat st;
			bool dup = false;

			/* Sim profiles and CPU keys are separate worlds. */
			if (e->d_name[0] == '.' || sim != !strncmp(e->d_name, "sim-", 4))
				continue;
			if (pmc__snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", db->dirs[d],
					  e->d_name, suite) < 0 ||
			    stat(path, &st) != 0 || !S_ISREG(st.st_mode))
				continue;
			for (size_t j = 0; j < n; j++)
				dup = dup || !strcmp(keys[j], e->d_name);
			if (!dup && pmc__copy(keys[n], PMC_HWDB_KEY_MAX, e->d_name) == 0)
				n++;
		}
		closedir(dh);
	}
	return n;
}

/* ---- budget files ------------------------------------------------------------------------- */

/* "event bound..." -> event (first token) and the bound text. */
int pmc__split_budget_value(const char *value, char *event, size_t size, const char **bound)
{
	size_t len = strcspn(value, " \t");

	if (len == 0 || len >= size || !value[len])
		return -1;
	memcpy(event, value, len);
	event[len] = '\0';
	*bound = pmc__skip_blank(value + len);
	return 0;
}

int pmc__library_seen(struct pmc__library_seen *s, const char *path, const char *section,
		      const char *name, int line, struct pmc_error *err)
{
	char *id, shown_s[PMC__HWDB_SHOWN_MAX * 4 + 32], shown_n[PMC__HWDB_SHOWN_MAX * 4 + 32];
	char **ids;
	int *lines;

	if (asprintf(&id, "%s|%s", section, name) < 0)
		return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->ids[i], id)) {
			free(id);
			return pmc__fail(err, PMC_E_SYNTAX, path, -1,
					 "%s:%d: [%s] %s is given twice (the first is at line %d; a case loads one library of a name: remove one, or calibrate again)",
					 path, line, pmc__hwdb_shown(shown_s, sizeof(shown_s), section),
					 pmc__hwdb_shown(shown_n, sizeof(shown_n), name), s->lines[i]);
		}
	ids = realloc(s->ids, (s->n + 1) * sizeof(*ids));
	if (ids)
		s->ids = ids;
	lines = ids ? realloc(s->lines, (s->n + 1) * sizeof(*lines)) : NULL;
	if (!lines) {
		free(id);
		return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	s->lines = lines;
	s->ids[s->n] = id;
	s->lines[s->n++] = line;
	return 0;
}

void pmc__library_seen_release(struct pmc__library_seen *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->ids[i]);
	free(s->ids);
	free(s->lines);
	memset(s, 0, sizeof(*s));
}

/*
 * Messages name the file, the line, the section and the name, escaped and
 * shortened (pmc__hwdb_shown), never the value: a budget file that is a
 * link to another file (a credentials file's "key = secret") must not have
 * its values printed.
 */
int pmc__budget_handler(void *user, const char *section, const char *name, const char *value,
			  int line, struct pmc_error *err)
{
	struct pmc__budget_ctx *c = user;
	char event[PMC_HWDB_KEY_MAX * 2], where[PATH_MAX + 512];
	char ss[PMC__HWDB_SHOWN_MAX * 4 + 32], sn[PMC__HWDB_SHOWN_MAX * 4 + 32];
	struct pmc_budget b;
	const char *bound, *why;
	int rc;

	c->lines++;
	pmc__hwdb_shown(ss, sizeof(ss), section);
	pmc__hwdb_shown(sn, sizeof(sn), name);
	if (!*section)
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s = ...\": %s outside a [test] section", c->path, line, sn,
				 pmc__library_line(name) ? "library line" : "budget");
	if ((why = pmc__budget_name_why(section)))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: test \"%s\" cannot be budgeted: %s; a test name in a budget file has no blank, control character or any of = : ; # [ ]",
				 c->path, line, ss, why);
	if (pmc__library_line(name)) {
		struct pmc_library lib;
		char what[300];

		if (pmc__library_parse(name, value, &lib, what, sizeof(what)))
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
					 "%s:%d: [%s] %s: %s; expected \"" PMC__LIBRARY_FORM "\" as --calibrate writes it (calibrate again, or delete the line)",
					 c->path, line, ss, sn, what);
		return c->seen ? pmc__library_seen(c->seen, c->path, section, name, line, err) : 0;
	}
	if ((why = pmc__budget_name_why(name)))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: [%s] region name \"%s\" cannot be budgeted: %s; expected \"region = event bound\" with a region name without blanks, control characters or any of = : ; # [ ] (rename the region)",
				 c->path, line, ss, sn, why);
	if (pmc__split_budget_value(value, event, sizeof(event), &bound))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: [%s] %s: the value is not \"event bound\"; expected \"region = event bound\", e.g. \"insert = instructions:u <= 1200\"",
				 c->path, line, ss, sn);
	snprintf(where, sizeof(where), "%s:%d: [%s] %s", c->path, line, ss, sn);
	rc = pmc__budget_parse_line(bound, &b, where, err);
	if (rc)
		return rc;
	if (c->want && !c->found && !strcmp(section, c->want->test) &&
	    !strcmp(name, c->want->region) && !strcmp(event, c->want->event)) {
		b.source[0] = '\0';
		*c->out = b;
		pmc__snprintf(c->out->source, sizeof(c->out->source), "%s:%d", c->path, line);
		c->found = true;
	}
	return 0;
}

int pmc_hwdb_budget(const struct pmc_hwdb *db, const struct pmc_budget_key *key,
		    struct pmc_budget *out, struct pmc_error *err)
{
	char keys[PMC_HWDB_MAX_KEYS][PMC_HWDB_KEY_MAX];
	size_t nkeys = pmc_hwdb_keys(db, key->backend, key->signature, keys, PMC_HWDB_MAX_KEYS);
	char path[PATH_MAX];
	size_t k, d;

	if (!key->suite || strchr(key->suite, '/'))
		return -ENOENT;
	for (k = 0; k < nkeys; k++) {
		for (d = 0; db && d < db->ndirs; d++) {
			struct pmc__library_seen seen = { 0 };
			struct pmc__budget_ctx c = { path, key, out, false, 0, &seen };
			struct stat st;
			int rc;

			/* Only a file that is not there is skipped: one that
			 * cannot be read (a link to nothing, a FIFO, a directory
			 * of mode 000 on the way) is an error, never "unbudgeted". */
			if (pmc__snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", db->dirs[d],
					  keys[k], key->suite) < 0 ||
			    (lstat(path, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)))
				continue;
			rc = pmc__ini_parse_path(path, pmc__budget_handler, &c, NULL, err);
			pmc__library_seen_release(&seen);
			if (rc)
				return rc;
			if (c.found) {
				pmc__copy(out->key, sizeof(out->key), keys[k]);
				return 0;
			}
		}
	}
	return -ENOENT;
}

/* ---- reading a case's libraries ---------------------------------------------------------- */

struct read_ctx {
	const char *path, *test;
	struct pmc_library *v;
	size_t n;
	struct pmc__library_seen seen;
};

static int read_handler(void *user, const char *section, const char *name, const char *value,
			int line, struct pmc_error *err)
{
	struct read_ctx *c = user;
	struct pmc__budget_ctx b = { c->path, NULL, NULL, false, 0, &c->seen };
	struct pmc_library *grown;
	char why[8];
	int rc;

	/* Every line is checked, as a lookup checks it. */
	if ((rc = pmc__budget_handler(&b, section, name, value, line, err)))
		return rc;
	if (!pmc__library_line(name) || strcmp(section, c->test))
		return 0;
	grown = realloc(c->v, (c->n + 1) * sizeof(*grown));
	if (!grown)
		return pmc__fail(err, -ENOMEM, c->path, -1, "out of memory");
	c->v = grown;
	pmc__library_parse(name, value, &c->v[c->n], why, sizeof(why));
	c->v[c->n++].line = line;
	return 0;
}

int pmc_hwdb_libraries(const char *budget_file, const char *test, struct pmc_library **out,
		       size_t *n, struct pmc_error *err)
{
	struct read_ctx c = { budget_file, test, NULL, 0, { 0 } };
	int rc = pmc__ini_parse_path(budget_file, read_handler, &c, NULL, err);

	pmc__library_seen_release(&c.seen);
	if (rc) {
		free(c.v);
		c.v = NULL;
		c.n = 0;
	}
	*out = c.v;
	*n = c.n;
	return rc;
}
