/* SPDX-License-Identifier: MIT */
/*
 * hwdb's private interface.  The files: ini.c (INI with line numbers),
 * budget.c (bounds, names in budget files), pattern.c (the map's regex
 * guard), db.c (open, map, models), lookup.c (key chain, budget files and
 * their library lines read), lint.c (check), writer.c (budget and library
 * lines written), library.c (a library line's form; who a loaded object
 * is: soname, dpkg package), cpuid.c (the CPU's identity).
 */
#ifndef PMCHECK_HWDB_INT_H
#define PMCHECK_HWDB_INT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include <pmcheck/hwdb.h>

#include "util/util_int.h"

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
	int *deterministic_line;   /* per model: its "deterministic =" line, or 0 */
};

/* ini.c: how a parse reports beyond the handler.  section_line, when set,
 * holds the line of the current "[section]" header whenever the handler
 * runs; syntax, when set, receives each line that is not INI and the parse
 * goes on (hwdb check reports every line), instead of stopping there. */
struct pmc__ini_opts {
	int *section_line;
	void (*syntax)(void *user, const struct pmc_error *e);
};
/* ini.c: parse an INI text or file, handing each "name = value" to handler
 * with its line number; errors name path:line.  opts may be NULL. */
int pmc__ini_parse(const char *name, const char *text, size_t len, pmc_ini_handler handler,
		   void *user, const struct pmc__ini_opts *opts, struct pmc_error *err);
int pmc__ini_parse_path(const char *path, pmc_ini_handler handler, void *user,
			const struct pmc__ini_opts *opts, struct pmc_error *err);

/* ini.c: an hwdb file's whole text, NUL-terminated and malloc'd, with the
 * one rule every reader of hwdb files follows, in a run as in check: a
 * regular file (or a link to one), readable, of at most
 * PMC__HWDB_FILE_MAX bytes.  0; -ENOENT when nothing is at path; or the
 * error naming the path and what it is (a FIFO, a device, a link to
 * nothing or in a loop, unreadable, too large). */
#define PMC__HWDB_FILE_MAX ((size_t)64 << 20)
int pmc__hwdb_read_file(const char *path, char **text, size_t *len, struct pmc_error *err);
/* ini.c: a name or section of an hwdb file as messages show it: control
 * characters escaped, and one longer than PMC__HWDB_SHOWN_MAX bytes by its
 * start and its length, so that the reason after it always fits. */
#define PMC__HWDB_SHOWN_MAX 80
const char *pmc__hwdb_shown(char *buf, size_t size, const char *s);

/* budget.c: can a budget file name this test, region or library?  Not empty, no
 * blank (ASCII or Unicode: a non-breaking space looks like a blank), no
 * control character, none of = : ; # [ ], valid UTF-8, under 200 bytes.
 * NULL when it can, else the reason. */
const char *pmc__budget_name_why(const char *name);

/* pattern.c: compile a map pattern (POSIX ERE) after refusing patterns
 * whose compiled form could explode.  0, or -1 with *why filled. */
int pmc__map_pattern_compile(regex_t *re, const char *pattern, char *why, size_t why_size);

/* budget.c: p past blanks and tabs. */
const char *pmc__skip_blank(const char *p);

/* lookup.c: the library lines seen in one budget file, by section and
 * name.  One rule everywhere (a run's lookup, its libraries read, hwdb
 * check): a library named twice in one section is refused with both lines. */
struct pmc__library_seen {
	char **ids;
	int *lines;
	size_t n;
};
int pmc__library_seen(struct pmc__library_seen *s, const char *path, const char *section,
		      const char *name, int line, struct pmc_error *err);
void pmc__library_seen_release(struct pmc__library_seen *s);

/* lookup.c: one budget file's reading state. */
struct pmc__budget_ctx {
	const char *path;
	const struct pmc_budget_key *want; /* NULL: validate only */
	struct pmc_budget *out;
	bool found;
	size_t lines;
	struct pmc__library_seen *seen; /* NULL: library lines not compared */
};

/* budget.c: a budget line's bound, with an error that says where
 * ("FILE:LINE: [test] region") and what is wrong, but not the text: a
 * line of a file that is not a budget file (a link to a credentials
 * file) may hold a secret. */
int pmc__budget_parse_line(const char *text, struct pmc_budget *out, const char *where,
			   struct pmc_error *err);
/* lookup.c: the INI handler of budget files (validates every line; with
 * want set, keeps the matching budget). */
int pmc__budget_handler(void *user, const char *section, const char *name, const char *value,
			int line, struct pmc_error *err);
/* lookup.c: "event bound..." -> the event (first token) and the bound. */
int pmc__split_budget_value(const char *value, char *event, size_t size, const char **bound);

/* library.c: the library lines of a case's section ("library:SONAME = ID
 * [package:NAME=VERSION]").  Is this line's name one; its parse (0, or -1
 * with why: what is wrong, for a message that adds file:line and the fix);
 * the line as written for l (0, or -EINVAL when it would not read back). */
#define PMC__LIBRARY_PREFIX "library:"
#define PMC__LIBRARY_FORM "library:SONAME = build-id:HEX [package:NAME=VERSION]"
bool pmc__library_line(const char *name);
int pmc__library_parse(const char *name, const char *value, struct pmc_library *out, char *why,
		       size_t size);
int pmc__library_format(const struct pmc_library *l, char *buf, size_t size);

#endif
