/* SPDX-License-Identifier: MIT */
/*
 * hwdb: INI files (libinih) with line numbers, the signature map, model
 * facts, budget lookup, validation and the budget-line writer.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <ini.h>
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

#include "pmcheck_int.h"

/* ---- INI with line numbers ---------------------------------------------------------- */

struct ini_ctx {
	const char *name;      /* for messages */
	const char *p, *end;   /* remaining text */
	int line;              /* line number of the line last handed to inih */
	bool too_long;
	pmc_ini_handler handler;
	void *user;
	struct pmc_error *err;
	bool failed;           /* the handler reported an error (err filled) */
};

/*
 * inih reads through this: one line per call, so the line number is exact.
 * Leading blanks are dropped, so indentation never turns a line into a
 * continuation of the previous value (inih's multi-line syntax).
 */
static char *ini_read_line(char *str, int num, void *stream)
{
	struct ini_ctx *c = stream;
	const char *nl;
	size_t len;

	if (c->p >= c->end)
		return NULL;
	nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
	len = nl ? (size_t)(nl - c->p) : (size_t)(c->end - c->p);
	c->line++;
	while (len > 0 && (*c->p == ' ' || *c->p == '\t')) {
		c->p++;
		len--;
	}
	if (len + 2 > (size_t)num) {
		c->too_long = true;
		return NULL;
	}
	memcpy(str, c->p, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	/* A NUL inside the line would end it early for inih: refuse it. */
	if (memchr(c->p, '\0', len))
		str[0] = '\0', c->too_long = true;
	c->p += len + (nl ? 1 : 0);
	return c->too_long ? NULL : str;
}

static int ini_handle(void *user, const char *section, const char *name, const char *value)
{
	struct ini_ctx *c = user;

	/* inih goes on after a handler's error; the first one is reported. */
	if (c->failed)
		return 0;
	if (c->handler(c->user, section, name, value, c->line, c->err) != 0) {
		c->failed = true;
		return 0;
	}
	return 1;
}

int pmc_ini_parse_text(const char *name, const char *text, size_t len, pmc_ini_handler handler,
		       void *user, struct pmc_error *err)
{
	struct ini_ctx c = { name, text, text + len, 0, false, handler, user, err, false };
	int rc = ini_parse_stream(ini_read_line, &c, ini_handle, &c);

	if (c.too_long)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s:%d: line too long or contains a NUL byte (at most 190 characters per line)",
				 name, c.line);
	if (c.failed)
		return err ? err->code : PMC_E_SYNTAX;
	if (rc > 0)
		return pmc__fail(err, PMC_E_SYNTAX, name, -1,
				 "%s:%d: expected \"[section]\", \"name = value\" or a ; comment",
				 name, rc);
	if (rc < 0)
		return pmc__fail(err, -ENOMEM, name, -1, "%s: out of memory while parsing", name);
	return 0;
}

/* Read a whole file; NULL with errno set on failure. */
static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t cap = 0, n = 0;

	if (!f)
		return NULL;
	for (;;) {
		size_t got;

		if (n + 4096 + 1 > cap) {
			char *p = realloc(buf, cap = cap ? cap * 2 : 8192);

			if (!p) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = p;
		}
		got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int ini_parse_path(const char *path, pmc_ini_handler handler, void *user,
			  struct pmc_error *err)
{
	size_t len = 0;
	char *text = slurp(path, &len);
	int rc;

	if (!text)
		return pmc__fail(err, -errno, path, -1, "cannot read %s: %s", path, strerror(errno));
	rc = pmc_ini_parse_text(path, text, len, handler, user, err);
	free(text);
	return rc;
}

/* ---- bounds ------------------------------------------------------------------------------- */

static const char *skip_blank(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A non-negative decimal number (digits, optional fraction). */
static const char *parse_number(const char *p, double *out)
{
	const char *s = p;
	char *end;

	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.' && isdigit((unsigned char)p[1])) {
		p++;
		while (isdigit((unsigned char)*p))
			p++;
	}
	{
		char buf[64];
		size_t len = (size_t)(p - s);

		if (len >= sizeof(buf))
			return NULL;
		memcpy(buf, s, len);
		buf[len] = '\0';
		*out = strtod(buf, &end);
		if (*end || !isfinite(*out))
			return NULL;
	}
	return p;
}

static int bound_error(struct pmc_error *err, const char *text, const char *at, const char *what)
{
	return pmc__fail(err, PMC_E_SYNTAX, text, (int)(at - text),
			 "bound \"%s\": %s at column %d; expected \"<= N\", \">= N\", \"= N\", \"A..B\" or \"N +-T[%%]\", optionally followed by \"per iteration\"",
			 text, what, (int)(at - text) + 1);
}

int pmc_budget_parse(const char *text, struct pmc_budget *out, struct pmc_error *err)
{
	const char *p = skip_blank(text), *q;
	double a, b;

	memset(out, 0, sizeof(*out));
	if ((p[0] == '<' || p[0] == '>') && p[1] == '=') {
		out->kind = p[0] == '<' ? PMC_BOUND_LE : PMC_BOUND_GE;
		q = parse_number(skip_blank(p + 2), &a);
		if (!q)
			return bound_error(err, text, skip_blank(p + 2), "a number is missing");
		if (out->kind == PMC_BOUND_LE)
			out->hi = a;
		else
			out->lo = a;
		p = q;
	} else if (p[0] == '=') {
		out->kind = PMC_BOUND_EQ;
		q = parse_number(skip_blank(p + 1), &a);
		if (!q)
			return bound_error(err, text, skip_blank(p + 1), "a number is missing");
		out->lo = out->hi = a;
		p = q;
	} else {
		q = parse_number(p, &a);
		if (!q)
			return bound_error(err, text, p, "unexpected text");
		p = skip_blank(q);
		if (p[0] == '.' && p[1] == '.') {
			q = parse_number(skip_blank(p + 2), &b);
			if (!q)
				return bound_error(err, text, skip_blank(p + 2), "the upper end of the range is missing");
			if (b < a)
				return bound_error(err, text, p, "the range is empty (upper end below lower end)");
			out->kind = PMC_BOUND_RANGE;
			out->lo = a;
			out->hi = b;
			p = q;
		} else if (p[0] == '+' && p[1] == '-') {
			q = parse_number(skip_blank(p + 2), &b);
			if (!q)
				return bound_error(err, text, skip_blank(p + 2), "the tolerance is missing");
			if (*q == '%') {
				b = a * b / 100.0;
				q++;
			}
			out->kind = PMC_BOUND_RANGE;
			out->lo = a - b < 0 ? 0 : a - b;
			out->hi = a + b;
			p = q;
		} else {
			return bound_error(err, text, p, "a bare number");
		}
	}
	p = skip_blank(p);
	if (!strncmp(p, "per iteration", 13)) {
		out->per_iteration = 1;
		p = skip_blank(p + 13);
	}
	if (*p)
		return bound_error(err, text, p, "trailing text");
	/* Keep the text as written (trimmed), for reports. */
	{
		size_t len = strlen(skip_blank(text));

		while (len > 0 && isspace((unsigned char)skip_blank(text)[len - 1]))
			len--;
		if (len >= sizeof(out->text))
			len = sizeof(out->text) - 1;
		memcpy(out->text, skip_blank(text), len);
		out->text[len] = '\0';
	}
	return 0;
}

int pmc_budget_holds(const struct pmc_budget *b, double x)
{
	switch (b->kind) {
	case PMC_BOUND_LE:
		return x <= b->hi;
	case PMC_BOUND_GE:
		return x >= b->lo;
	case PMC_BOUND_EQ:
	case PMC_BOUND_RANGE:
		return x >= b->lo && x <= b->hi;
	}
	return 0;
}

/* ---- the database ---------------------------------------------------------------------- */

struct map_entry {
	regex_t re;
	char pattern[256];
	char model[64];
	char where[PMC_HWDB_WHERE_MAX];
};

struct pmc_hwdb {
	size_t ndirs;
	char *dirs[PMC_HWDB_MAX_DIRS + 1];
	size_t nmap;
	struct map_entry *map;
	size_t nmodels;
	struct pmc_hwdb_model *models;
};

const char *pmc_hwdb_builtin_dir(void)
{
	struct stat st;

#ifdef PMCHECK_HWDB_SOURCE_DIR
	if (stat(PMCHECK_HWDB_SOURCE_DIR "/map.ini", &st) == 0)
		return PMCHECK_HWDB_SOURCE_DIR;
#endif
#ifdef PMCHECK_HWDB_INSTALL_DIR
	if (stat(PMCHECK_HWDB_INSTALL_DIR "/map.ini", &st) == 0)
		return PMCHECK_HWDB_INSTALL_DIR;
#endif
	(void)st;
	return NULL;
}

/*
 * glibc's regcomp copies the subtree under "x+" once and under "x{n,m}" up
 * to m times, and the copies multiply when repetitions stack or nest: while
 * fuzzing, "n++++...+" (80 pluses) and "(a{900}){900}" each asked for more
 * than 2 GB.  A signature is a few dozen characters, so a map pattern is
 * refused when its estimated compiled size (atoms, each multiplied by the
 * repetitions applied to it and to the groups around it) is above
 * MAP_PATTERN_COST, before regcomp sees it.
 */
#define MAP_PATTERN_MAX 255
#define MAP_PATTERN_COST 4096
#define MAP_GROUP_DEPTH 16

static uint64_t cost_mul(uint64_t a, uint64_t b)
{
	return a > MAP_PATTERN_COST || b > MAP_PATTERN_COST ? MAP_PATTERN_COST + 1 : a * b;
}

/* Estimated number of nodes regcomp builds for `pattern` (saturates). */
static uint64_t map_pattern_cost(const char *pattern)
{
	/* Per open group: the cost so far and the cost of its last item. */
	uint64_t total[MAP_GROUP_DEPTH + 1] = { 0 }, last[MAP_GROUP_DEPTH + 1] = { 0 };
	bool quantified = false; /* the previous item was a repetition operator */
	int depth = 0;

	for (const char *p = pattern; *p; p++) {
		uint64_t mul = 0;

		switch (*p) {
		case '(':
			if (depth == MAP_GROUP_DEPTH)
				return MAP_PATTERN_COST + 1;
			depth++;
			total[depth] = last[depth] = 0;
			quantified = false;
			continue;
		case ')':
			if (depth == 0)
				break; /* regcomp reports the unbalanced parenthesis */
			last[depth - 1] = total[depth] + 1;
			total[depth - 1] += last[depth - 1];
			depth--;
			quantified = false;
			continue;
		case '+':
			mul = 2;
			break;
		case '*':
		case '?':
			/* No copies, but each adds alternatives to every epsilon closure. */
			mul = 2;
			break;
		case '{': {
			char *end;
			uint64_t lo = strtoull(p + 1, &end, 10), hi = lo;

			if (*end == ',')
				hi = end[1] == '}' ? lo + 1 : strtoull(end + 1, &end, 10);
			mul = (hi > lo ? hi : lo) + 1;
			if (*end == '}')
				p = end;
			break;
		}
		case '[':
			/* A bracket expression is one atom; "[]...]" and "[^]...]" start with a
			 * literal ']'. */
			p++;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']')
				p++;
			if (!*p)
				p--; /* regcomp reports the unbalanced bracket */
			last[depth] = 1;
			total[depth] += 1;
			quantified = false;
			continue;
		case '\\':
			/* glibc accepts back-references in EREs; matching them is
			 * exponential and a signature never needs one. */
			if (p[1] >= '1' && p[1] <= '9')
				return UINT64_MAX;
			if (p[1])
				p++;
			break;
		default:
			break;
		}
		if (mul && quantified)
			return UINT64_MAX - 1; /* stacked repetition: undefined in POSIX EREs */
		quantified = mul != 0;
		if (mul) {
			uint64_t grown = cost_mul(last[depth] ? last[depth] : 1, mul);

			total[depth] = total[depth] - last[depth] + grown;
			last[depth] = grown;
		} else {
			last[depth] = 1;
			total[depth] += 1;
		}
		if (total[depth] > MAP_PATTERN_COST)
			return MAP_PATTERN_COST + 1;
	}
	while (depth > 0) {
		total[depth - 1] += total[depth];
		depth--;
	}
	return total[0];
}

int pmc__map_pattern_compile(regex_t *re, const char *pattern, char *why, size_t why_size)
{
	size_t len = strlen(pattern);
	int rc;

	if (len > MAP_PATTERN_MAX) {
		pmc__snprintf(why, why_size, "pattern is %zu characters; at most %d allowed", len,
			      MAP_PATTERN_MAX);
		return -1;
	}
	if (map_pattern_cost(pattern) == UINT64_MAX - 1) {
		pmc__snprintf(why, why_size,
			      "a repetition operator follows another (\"+?\", \"*+\", ...): undefined in "
			      "POSIX EREs; write one operator");
		return -1;
	}
	if (map_pattern_cost(pattern) == UINT64_MAX) {
		pmc__snprintf(why, why_size, "back-references (\\1..\\9) are not allowed in map patterns");
		return -1;
	}
	if (map_pattern_cost(pattern) > MAP_PATTERN_COST) {
		pmc__snprintf(why, why_size,
			      "repetitions make this pattern too large to compile (stacked or nested "
			      "'+' and {n,m}); write the alternatives out, e.g. (8E|9E)");
		return -1;
	}
	rc = regcomp(re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc) {
		regerror(rc, re, why, why_size);
		return -1;
	}
	return 0;
}

struct load_ctx {
	struct pmc_hwdb *db;
	const char *path;
	unsigned seen;      /* facts given in the current model section */
};

static int map_handler(void *user, const char *section, const char *name, const char *value,
		       int line, struct pmc_error *err)
{
	struct load_ctx *c = user;
	struct pmc_hwdb *db = c->db;
	struct map_entry *e, *grown;
	size_t len = strlen(name);

	if (strcmp(section, "map"))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: entries belong in the [map] section (found [%s])", c->path, line, section);
	if (len < 2 || name[0] != '^' || name[len - 1] != '$')
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s\": expected an anchored regular expression (^...$) over a signature",
				 c->path, line, name);
	if (!*value || strlen(value) >= sizeof(e->model) || strpbrk(value, " \t/"))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s\": expected a model id after '=' (letters, digits, '-', '_')",
				 c->path, line, value);
	for (size_t i = 0; i < db->nmap; i++) {
		size_t plen = strlen(c->path);

		if (!strcmp(db->map[i].pattern, name) && !strncmp(db->map[i].where, c->path, plen) &&
		    db->map[i].where[plen] == ':')
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
					 "%s:%d: pattern \"%s\" is already mapped at %s (to %s); first match wins, so this line would never apply: remove one",
					 c->path, line, name, db->map[i].where, db->map[i].model);
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
					 line, name, why);
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
				 "%s:%d: %s = \"%s\": expected a whole number", path, line, name, value);
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

	if (!m || strcmp(m->id, section) || strcmp(m->where, "") == 0 ||
	    strncmp(m->where, c->path, strlen(c->path))) {
		struct pmc_hwdb_model *grown = realloc(db->models, (db->nmodels + 1) * sizeof(*grown));

		if (!grown)
			return pmc__fail(err, -ENOMEM, c->path, -1, "out of memory");
		db->models = grown;
		for (size_t i = 0; i < db->nmodels; i++) {
			size_t plen = strlen(c->path);

			if (!strcmp(db->models[i].id, section) &&
			    !strncmp(db->models[i].where, c->path, plen) &&
			    db->models[i].where[plen] == ':')
				return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
						 "%s:%d: model [%s] is defined twice (first at %s); lookups would see only the first: merge them",
						 c->path, line, section, db->models[i].where);
		}
		m = &db->models[db->nmodels++];
		memset(m, 0, sizeof(*m));
		c->seen = 0;
		m->general_counters = m->general_width = m->fixed_counters = m->fixed_width =
			m->breakpoint_slots = -1;
		if (pmc__copy(m->id, sizeof(m->id), section))
			return pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: model id too long", c->path, line);
		pmc__snprintf(m->where, sizeof(m->where), "%s:%d", c->path, line);
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
						 c->path, line, name, section);
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
		return pmc__copy(m->deterministic, sizeof(m->deterministic), value) ? pmc__fail(err, PMC_E_SYNTAX, c->path, -1, "%s:%d: list too long", c->path, line) : 0;
	if (!strcmp(name, "erratum")) {
		append_line(m->errata, sizeof(m->errata), value);
		return 0;
	}
	return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
			 "%s:%d: unknown fact \"%s\" in [%s]; expected name, vendor, arch, general_counters, general_width, fixed_counters, fixed_width, breakpoint_slots, deterministic or erratum",
			 c->path, line, name, section);
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
	for (i = 0; i < db->ndirs; i++)
		free(db->dirs[i]);
	free(db);
}

int pmc_hwdb_open(struct pmc_hwdb **out, const char *const *dirs, size_t ndirs,
		  struct pmc_error *err)
{
	struct pmc_hwdb *db = calloc(1, sizeof(*db));
	const char *builtin = pmc_hwdb_builtin_dir();
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
			rc = pmc__fail(err, -ENOENT, dirs[i], -1,
				       "hwdb directory \"%s\" does not exist (create it, or fix --hwdb / PMCHECK_HWDB)",
				       dirs[i]);
			goto out;
		}
		db->dirs[db->ndirs++] = strdup(dirs[i]);
	}
	if (builtin)
		db->dirs[db->ndirs++] = strdup(builtin);
	for (i = 0; i < db->ndirs; i++) {
		struct load_ctx c = { db, path, 0 };

		if (!db->dirs[i]) {
			rc = pmc__fail(err, -ENOMEM, "", -1, "out of memory");
			goto out;
		}
		static const char *const files[] = { "map.ini", "models.ini" };

		for (size_t f = 0; f < 2; f++) {
			if (pmc__snprintf(path, sizeof(path), "%s/%s", db->dirs[i], files[f]) != 0 ||
			    stat(path, &st) != 0)
				continue;
			if (!S_ISREG(st.st_mode)) {
				rc = pmc__fail(err, PMC_E_SYNTAX, path, -1,
					       "%s is not a regular file; hwdb reads %s as a file: remove or replace it",
					       path, files[f]);
				goto out;
			}
			rc = ini_parse_path(path, f ? models_handler : map_handler, &c, err);
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

size_t pmc_hwdb_keys(const struct pmc_hwdb *db, const char *backend, const char *signature,
		     char keys[][PMC_HWDB_KEY_MAX], size_t max)
{
	const char *cand[PMC_HWDB_NLEVELS];
	char vendor[64], arch[32], model[PMC_HWDB_KEY_MAX];
	size_t n = 0;

	if (max == 0)
		return 0;
	key_levels(db, backend, signature, cand, vendor, sizeof(vendor), arch, sizeof(arch), model,
		   sizeof(model));
	for (int i = 0; i < PMC_HWDB_NLEVELS && n < max; i++) {
		bool dup = false;

		if (!cand[i])
			continue;
		for (size_t j = 0; j < n; j++)
			dup = dup || !strcmp(keys[j], cand[i]);
		if (!dup && pmc__copy(keys[n], PMC_HWDB_KEY_MAX, cand[i]) == 0)
			n++;
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

struct budget_ctx {
	const char *path;
	const struct pmc_budget_key *want; /* NULL: validate only */
	struct pmc_budget *out;
	bool found;
	size_t lines;
};

/* "event bound..." -> event (first token) and the bound text. */
static int split_budget_value(const char *value, char *event, size_t size, const char **bound)
{
	size_t len = strcspn(value, " \t");

	if (len == 0 || len >= size || !value[len])
		return -1;
	memcpy(event, value, len);
	event[len] = '\0';
	*bound = skip_blank(value + len);
	return 0;
}

static int budget_handler(void *user, const char *section, const char *name, const char *value,
			  int line, struct pmc_error *err)
{
	struct budget_ctx *c = user;
	char event[PMC_HWDB_KEY_MAX * 2];
	struct pmc_budget b;
	const char *bound;
	int rc;

	c->lines++;
	if (!*section)
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: budget outside a [test] section", c->path, line);
	if (split_budget_value(value, event, sizeof(event), &bound))
		return pmc__fail(err, PMC_E_SYNTAX, c->path, -1,
				 "%s:%d: \"%s = %s\": expected \"region = event bound\", e.g. \"insert = instructions:u <= 1200\"",
				 c->path, line, name, value);
	rc = pmc_budget_parse(bound, &b, err);
	if (rc) {
		char msg[PMC_ERROR_MSG_MAX];

		pmc__copy(msg, sizeof(msg), err ? err->message : "bad bound");
		return pmc__fail(err, rc, c->path, -1, "%s:%d: %s", c->path, line, msg);
	}
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
			struct budget_ctx c = { path, key, out, false, 0 };
			struct stat st;
			int rc;

			if (pmc__snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", db->dirs[d],
					  keys[k], key->suite) < 0 || stat(path, &st) != 0)
				continue;
			rc = ini_parse_path(path, budget_handler, &c, err);
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
};

static int check_handler(void *user, const char *section, const char *name, const char *value,
			 int line, struct pmc_error *err)
{
	struct check_ctx *c = user;
	struct budget_ctx b = { c->path, NULL, NULL, false, 0 };
	char event[PMC_HWDB_KEY_MAX * 2], id[600];
	const char *bound;
	size_t i;

	c->l->budgets++;
	if (budget_handler(&b, section, name, value, line, err)) {
		finding(c->l, err->code, c->path, "%s", err->message);
		return 0;
	}
	split_budget_value(value, event, sizeof(event), &bound);
	lint_event(c->l, c->path, line, event, c->key, "");
	pmc__snprintf(id, sizeof(id), "%s|%s|%s", section, name, event);
	for (i = 0; i < c->nseen; i++)
		if (!strcmp(c->seen[i], id)) {
			finding(c->l, PMC_E_SYNTAX, c->path,
				"%s:%d: second budget for [%s] %s %s (the first is at line %d; lookups use the first: remove one)",
				c->path, line, section, name, event, c->seen_line[i]);
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

static void lint_budget_file(struct lint *l, const char *fpath, const char *key)
{
	struct check_ctx c = { l, fpath, key, NULL, NULL, 0 };
	struct pmc_error err;
	struct stat st;

	if (stat(fpath, &st) != 0 || !S_ISREG(st.st_mode)) {
		finding(l, PMC_E_SYNTAX, fpath,
			"%s is not a regular file, so no budget in it would ever be read: remove or replace it",
			fpath);
		return;
	}
	if (ini_parse_path(fpath, check_handler, &c, &err))
		finding(l, err.code, fpath, "%s", err.message);
	free(c.seen);
	free(c.seen_line);
}

static void lint_budgets(struct lint *l, const char *dir)
{
	char path[PATH_MAX], file[PATH_MAX];
	DIR *keys;
	struct dirent *k;

	pmc__snprintf(path, sizeof(path), "%s/budgets", dir);
	keys = opendir(path);
	while (keys && (k = readdir(keys))) {
		DIR *files;
		struct dirent *f;

		if (k->d_name[0] == '.')
			continue;
		pmc__snprintf(file, sizeof(file), "%s/%s", path, k->d_name);
		files = opendir(file);
		if (!files) {
			finding(l, PMC_E_SYNTAX, file,
				"%s: expected a directory named by a budget key (budgets/KEY/SUITE.ini): %s",
				file, strerror(errno));
			continue;
		}
		while ((f = readdir(files))) {
			size_t len = strlen(f->d_name);
			char fpath[PATH_MAX];

			if (f->d_name[0] == '.')
				continue;
			if (pmc__snprintf(fpath, sizeof(fpath), "%s/%s", file, f->d_name) < 0)
				continue;
			if (len < 5 || strcmp(f->d_name + len - 4, ".ini")) {
				finding(l, PMC_E_SYNTAX, fpath,
					"%s: not a budget file (budgets/%s/SUITE.ini): rename it or remove it",
					fpath, k->d_name);
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
	int line;

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
					"%s: [%s] deterministic: %s item in \"%s\": list events separated by single commas",
					file, m->id, len ? "an overlong" : "an empty", m->deterministic);
			} else {
				memcpy(ev, p, len);
				ev[len] = '\0';
				char what[PMC_HWDB_KEY_MAX + 32];

				pmc__snprintf(what, sizeof(what), "[%s] deterministic: ", m->id);
				lint_event(l, file, line, ev, NULL, what);
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

/* ---- writing budget lines ------------------------------------------------------------------ */

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (pmc__copy(buf, sizeof(buf), path))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* Is this line "[section]" (after blanks)?  Copies the name. */
static bool line_section(const char *line, size_t len, char *name, size_t size)
{
	const char *p = line, *end = line + len;
	const char *close;

	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p >= end || *p != '[')
		return false;
	close = memchr(p, ']', (size_t)(end - p));
	if (!close || (size_t)(close - p - 1) >= size)
		return false;
	memcpy(name, p + 1, (size_t)(close - p - 1));
	name[close - p - 1] = '\0';
	return true;
}

/* Does this line set `region = event ...`? */
static bool line_is_budget(const char *line, size_t len, const char *region, const char *event)
{
	char buf[1024], ev[512];
	const char *eq, *p, *bound;
	size_t rlen;

	if (len >= sizeof(buf))
		return false;
	memcpy(buf, line, len);
	buf[len] = '\0';
	p = skip_blank(buf);
	if (*p == ';' || *p == '#' || *p == '[')
		return false;
	eq = strpbrk(p, "=:");
	if (!eq)
		return false;
	rlen = (size_t)(eq - p);
	while (rlen > 0 && isspace((unsigned char)p[rlen - 1]))
		rlen--;
	if (rlen != strlen(region) || strncmp(p, region, rlen))
		return false;
	return split_budget_value(skip_blank(eq + 1), ev, sizeof(ev), &bound) == 0 &&
	       !strcmp(ev, event);
}

static bool name_ok(const char *s)
{
	return *s && !strpbrk(s, "=:;#[]\n\r\t ") && strlen(s) < 200;
}

int pmc_hwdb_write_budget(const char *dir, const char *key, const char *suite, const char *test,
			  const char *region, const char *event, const char *bound,
			  char *old_line, size_t old_size, struct pmc_error *err)
{
	char path[PATH_MAX], sect[256], newline[1024];
	struct pmc_budget check;
	char *text = NULL, *out = NULL;
	size_t len = 0, outlen = 0, cap;
	const char *p, *end;
	bool in_section = false, done = false;
	int rc;

	if (old_line && old_size)
		old_line[0] = '\0';
	if (!name_ok(key) || !name_ok(suite) || !name_ok(test) || !name_ok(region) ||
	    strchr(key, '/') || strchr(suite, '/') || !*event || strpbrk(event, " \t;\n"))
		return pmc__fail(err, -EINVAL, region, -1,
				 "cannot write a budget for key \"%s\", suite \"%s\", test \"%s\", region \"%s\", event \"%s\": names in budget files must not contain blanks or any of = : ; # [ ] (and keys and suites no '/')",
				 key, suite, test, region, event);
	{
		/* The bound may carry a comment (" ; why"), as any INI line. */
		const char *semi = strstr(bound, " ;");
		char only[sizeof(check.text)];

		pmc__snprintf(only, sizeof(only), "%.*s",
			      (int)(semi ? (size_t)(semi - bound) : strlen(bound)), bound);
		if (strchr(only, ';') || strchr(bound, '\n'))
			return pmc__fail(err, -EINVAL, bound, -1,
					 "bound \"%s\": a comment must follow the bound after \" ;\"", bound);
		if ((rc = pmc_budget_parse(only, &check, err)))
			return rc;
	}
	if (pmc__snprintf(path, sizeof(path), "%s/budgets/%s", dir, key) < 0 ||
	    (rc = mkdir_p(path)) != 0)
		return pmc__fail(err, rc ? rc : -ENAMETOOLONG, path, -1, "cannot create %s: %s", path,
				 strerror(rc ? -rc : ENAMETOOLONG));
	pmc__snprintf(path, sizeof(path), "%s/budgets/%s/%s.ini", dir, key, suite);
	text = slurp(path, &len);
	if (!text) {
		if (errno != ENOENT)
			return pmc__fail(err, -errno, path, -1, "cannot read %s: %s", path, strerror(errno));
		text = strdup("");
		len = 0;
		if (!text)
			return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	pmc__snprintf(newline, sizeof(newline), "%s = %s %s", region, event, bound);
	cap = len + strlen(newline) + strlen(test) + 64;
	out = malloc(cap);
	if (!out) {
		free(text);
		return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
	}
	/* First pass: copy lines, replacing the budget's line in place if it
	 * exists in the test's section. */
	for (p = text, end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (line_section(p, l, sect, sizeof(sect))) {
			in_section = !strcmp(sect, test);
		} else if (in_section && !done && line_is_budget(p, l, region, event)) {
			if (old_line && old_size)
				pmc__snprintf(old_line, old_size, "%.*s", (int)l, p);
			memcpy(out + outlen, newline, strlen(newline));
			outlen += strlen(newline);
			out[outlen++] = '\n';
			done = true;
			p += l + (nl ? 1 : 0);
			continue;
		}
		memcpy(out + outlen, p, l);
		outlen += l;
		out[outlen++] = '\n';
		p += l + (nl ? 1 : 0);
	}
	if (!done) {
		/* Rebuild with the new line at the end of the test's section, or a
		 * new section at the end of the file. */
		char *out2 = malloc(cap + 64);
		size_t o2 = 0;
		bool placed = false;

		if (!out2) {
			free(text);
			free(out);
			return pmc__fail(err, -ENOMEM, path, -1, "out of memory");
		}
		in_section = false;
		for (p = out, end = out + outlen; p < end;) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			const char *q = nl ? nl + 1 : end;

			memcpy(out2 + o2, p, l);
			o2 += l;
			out2[o2++] = '\n';
			if (line_section(p, l, sect, sizeof(sect)))
				in_section = !strcmp(sect, test);
			if (in_section && !placed) {
				/* Last non-blank line of the section: the next line
				 * starts another section, or only blanks follow. */
				const char *r = q;
				bool last = true;

				while (r < end) {
					const char *rn = memchr(r, '\n', (size_t)(end - r));
					size_t rl = rn ? (size_t)(rn - r) : (size_t)(end - r);
					const char *s = skip_blank(r);

					if (line_section(r, rl, sect, sizeof(sect)))
						break;
					if ((size_t)(s - r) < rl) {
						last = false;
						break;
					}
					r = rn ? rn + 1 : end;
				}
				if (last) {
					memcpy(out2 + o2, newline, strlen(newline));
					o2 += strlen(newline);
					out2[o2++] = '\n';
					placed = true;
				}
			}
			p = q;
		}
		if (!placed) {
			if (o2 > 0 && out2[o2 - 1] == '\n' && o2 > 1 && out2[o2 - 2] != '\n')
				out2[o2++] = '\n';
			o2 += (size_t)sprintf(out2 + o2, "[%s]\n%s\n", test, newline);
		}
		free(out);
		out = out2;
		outlen = o2;
	}
	rc = pmc_write_file_atomic(path, out, outlen);
	free(text);
	free(out);
	if (rc)
		return pmc__fail(err, rc, path, -1, "cannot write %s: %s", path, strerror(-rc));
	return 0;
}
