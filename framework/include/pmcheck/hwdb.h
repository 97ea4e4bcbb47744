/* SPDX-License-Identifier: MIT */
/*
 * hwdb: the CPU's identity (its signature), signature -> model, model
 * facts, and budgets.
 *
 * A hwdb directory holds (see hwdb/README.md for the formats):
 *   map.ini                     [map] anchored regex over signatures = model id,
 *                               first match wins (most specific lines first)
 *   models.ini                  [<model id>] facts: name, vendor, arch, counters,
 *                               widths, breakpoint slots, deterministic events,
 *                               errata, with their sources in comments
 *   budgets/<key>/<suite>.ini   [<test>] <region> = <event> <bound> [per iteration]
 *
 * Budget keys are tried most specific first: the exact signature, the model,
 * the vendor, the architecture, this system's release ("os-debian-13", from
 * os-release(5): counts that depend on the libraries a release ships rather
 * than the CPU), then "any" (architecture-independent counts such as uprobe
 * calls).  The sim backend uses its profile key alone (and, for calls, the
 * release's key and "any", as perf does).  At
 * each key, directories are tried in the order given (users' first, the
 * built-in one last), so user entries override built-in ones.
 */
#ifndef PMCHECK_HWDB_H
#define PMCHECK_HWDB_H

#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>
#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PMC_SIGNATURE_MAX 64

/* Identity of the CPU the caller runs on. */
struct pmc_cpu_id {
	/*
	 * perf-style signature, the hwdb key:
	 *   x86:   "GenuineIntel-6-CF-2" (vendor-family-model-stepping; family
	 *          in decimal, model and stepping in hex, extended fields
	 *          folded in as CPUID leaf 1 documents);
	 *   arm64: "ARM-0x41-0xd0c" (MIDR implementer and part number).
	 * "unknown" when neither source is available.
	 */
	char signature[PMC_SIGNATURE_MAX];
	char vendor[16];        /* "GenuineIntel", "AuthenticAMD", "ARM", "unknown" */
	char brand[64];         /* CPUID brand string; empty on arm64 */
	char arch[16];          /* "x86_64", "aarch64", ... (uname machine) */
	int family;             /* x86 display family; arm64: MIDR architecture field */
	int model;              /* x86 display model; arm64: MIDR part number */
	int stepping;           /* x86 stepping; arm64: MIDR variant<<4 | revision */
	uint64_t midr;          /* arm64 MIDR_EL1, 0 elsewhere */
	int hypervisor;         /* 1 yes, 0 no, -1 cannot tell (arm64 EL0) */
	const char *how;        /* where the signature came from (static string) */
};

/* Fill *id for the CPU the caller runs on.  Always succeeds; fields it
 * cannot determine read "unknown"/0/-1.  Returns 0. */
PMC_API int pmc_cpu_identify(struct pmc_cpu_id *id);

#define PMC_HWDB_MAX_DIRS 16
#define PMC_HWDB_MAX_KEYS 6
#define PMC_HWDB_KEY_MAX 128
#define PMC_HWDB_WHERE_MAX 512

/* ---- budgets ------------------------------------------------------------------ */

/* Forms of a bound. */
enum pmc_bound_kind {
	PMC_BOUND_LE = 1,   /* "<= 1200" */
	PMC_BOUND_GE,       /* ">= 5" */
	PMC_BOUND_RANGE,    /* "1000..1100" (inclusive), and "1050000 +-0.5%" */
	PMC_BOUND_EQ,       /* "= 600023" */
};

/* A budget: bounds on a count, or on count per iteration. */
struct pmc_budget {
	enum pmc_bound_kind kind;
	double lo, hi;             /* lo unused for LE, hi unused for GE */
	int per_iteration;         /* bounds apply to count / iterations */
	char text[96];             /* the bound as written, e.g. "1050000 +-0.5%" */
	char source[PMC_HWDB_WHERE_MAX]; /* "file:line" it came from */
	char key[PMC_HWDB_KEY_MAX];      /* the budget key that matched */
};

/* What a budget is looked up by. */
struct pmc_budget_key {
	const char *suite, *test, *region;
	const char *event;      /* the event as the budget file spells it */
	const char *backend;    /* "perf" or "sim" */
	const char *signature;  /* perf: CPU signature; sim: the sim profile key */
};

/*
 * Parse a bound: "<= N", ">= N", "= N", "A..B", "N +-T" or "N +-P%", each
 * optionally followed by "per iteration".  Numbers are decimal, fractions
 * allowed (per-iteration budgets).  On error returns PMC_E_SYNTAX and *err
 * says where and what was expected.
 */
PMC_API int pmc_budget_parse(const char *text, struct pmc_budget *out,
			     struct pmc_error *err);

/* Does x satisfy b?  (x is already divided by iterations if per_iteration.) */
PMC_API int pmc_budget_holds(const struct pmc_budget *b, double x);

/* ---- the database ---------------------------------------------------------------- */

struct pmc_hwdb; /* opaque */

/* Model facts from models.ini.  Absent numbers are -1, absent text "". */
struct pmc_hwdb_model {
	char id[64];
	char name[128];
	char vendor[32];
	char arch[16];
	int general_counters, general_width;
	int fixed_counters, fixed_width;
	int breakpoint_slots;
	char deterministic[512];   /* comma-separated canonical event names */
	char errata[2048];         /* one per line */
	char where[PMC_HWDB_WHERE_MAX]; /* models.ini:line of the section */
};

/* How a signature matched. */
struct pmc_hwdb_match {
	char model[64];
	char pattern[256];
	char where[PMC_HWDB_WHERE_MAX]; /* map.ini:line */
};

/*
 * Open the hwdb directories `dirs` (highest priority first; may be NULL /
 * 0) followed by the built-in one (pmc_hwdb_builtin_dir(), unless absent).
 * Every map.ini and models.ini is parsed now: a malformed line is
 * PMC_E_SYNTAX with "file:line: what was expected" in *err.  A directory
 * that does not exist, or that holds other files but none of map.ini,
 * models.ini and budgets/ ("/"), is -ENOENT naming it; one that cannot be
 * read (it or its budgets/) is its -errno (-EACCES), naming it.  Every
 * hwdb file is read only if it is a regular file (or a link to one) of at
 * most 64 MiB: anything else is an error naming the path.
 */
PMC_API int pmc_hwdb_open(struct pmc_hwdb **out, const char *const *dirs, size_t ndirs,
			  struct pmc_error *err);
PMC_API void pmc_hwdb_free(struct pmc_hwdb *db);

/* Where the built-in hwdb is: the source tree's for a library or program
 * in its build tree; otherwise share/pmcheck/hwdb of the prefix the library
 * was loaded from (found relative to it, so a moved prefix still finds its
 * own, and the .deb reads /usr/share/pmcheck/hwdb).  NULL if absent. */
PMC_API const char *pmc_hwdb_builtin_dir(void);

/* Number of directories in use and the i-th one. */
PMC_API size_t pmc_hwdb_ndirs(const struct pmc_hwdb *db);
PMC_API const char *pmc_hwdb_dir(const struct pmc_hwdb *db, size_t i);

/*
 * The model of a signature: first matching map line over all directories
 * (users' first).  Fills *m and, if model is not NULL, its facts.  Returns
 * 0, or -ENOENT when no line matches (or the model has no facts section:
 * then m is filled and model->id is empty).
 */
PMC_API int pmc_hwdb_match(const struct pmc_hwdb *db, const char *signature,
			   struct pmc_hwdb_match *m, struct pmc_hwdb_model *model);

/* Facts of a model by id; -ENOENT when absent. */
PMC_API int pmc_hwdb_model(const struct pmc_hwdb *db, const char *id,
			   struct pmc_hwdb_model *model);

/* The levels of the key chain, most specific first. */
enum pmc_hwdb_level {
	PMC_HWDB_SIGNATURE = 0, /* the CPU signature, or on sim the sim profile key */
	PMC_HWDB_MODEL,         /* the model the map gives the signature */
	PMC_HWDB_VENDOR,        /* the model's vendor, else the signature's */
	PMC_HWDB_ARCH,          /* the model's architecture, else the vendor's */
	PMC_HWDB_ANY,           /* "any" */
	PMC_HWDB_NLEVELS
};

/*
 * The key of one level for a backend and signature, into key[0..size).
 * 0, -ENOENT when this signature has no key at that level (no map line
 * for a model; an unknown vendor; every level but the first on sim), or
 * PMC_E_TOO_LONG.  Levels never shift: a missing model does not make the
 * vendor the second key.
 */
PMC_API int pmc_hwdb_key_at(const struct pmc_hwdb *db, const char *backend,
			    const char *signature, enum pmc_hwdb_level level, char *key,
			    size_t size);

/*
 * Budget keys for a backend and signature, most specific first (see the
 * top of this file), each level once, absent levels left out; on perf this
 * system's release key comes before "any" (it has no level of its own, so
 * pmc_hwdb_key_at never gives it).  Returns how many were stored.
 */
PMC_API size_t pmc_hwdb_keys(const struct pmc_hwdb *db, const char *backend,
			     const char *signature,
			     char keys[][PMC_HWDB_KEY_MAX], size_t max);

/*
 * The keys under which any directory holds budgets for `suite` on this
 * backend ("sim": sim profile keys only; otherwise CPU keys only), so a
 * missing budget can say which exist.  Returns how many were stored.
 */
PMC_API size_t pmc_hwdb_suite_keys(const struct pmc_hwdb *db, const char *backend,
				   const char *suite, char keys[][PMC_HWDB_KEY_MAX], size_t max);

/*
 * Look a budget up.  Returns 0 with *out filled (source names file:line),
 * -ENOENT when no file has one, or PMC_E_SYNTAX when a budget file on the
 * way is malformed (*err says file:line) or is not a regular file (a FIFO,
 * a device, a link to nothing or in a loop), or its -errno when it or a
 * directory on the way cannot be read (never -ENOENT: "unbudgeted").
 */
PMC_API int pmc_hwdb_budget(const struct pmc_hwdb *db, const struct pmc_budget_key *key,
			    struct pmc_budget *out, struct pmc_error *err);

/*
 * Check everything that can be checked, and report every finding (not just
 * the first) through fn: each budget file (a regular file under
 * budgets/KEY/, every line's bound, its event through the real parser, a
 * budget given twice), and the models (each map.ini model defined, each
 * model reached by some map line unless arch = sim, each deterministic
 * event parsed).  A finding's message starts with file:line and says the
 * fix.  Events of other CPUs that this machine cannot parse are counted in
 * *unchecked, not reported.  Returns the number of findings; *budgets is the
 * number of budget lines read.  (Malformed map.ini or models.ini lines, out
 * of range widths, duplicate sections, keys and patterns already fail
 * pmc_hwdb_open.)
 */
typedef void (*pmc_hwdb_finding_fn)(void *user, const struct pmc_error *finding);
PMC_API size_t pmc_hwdb_lint(const struct pmc_hwdb *db, pmc_hwdb_finding_fn fn, void *user,
			     size_t *budgets, size_t *unchecked);

/* pmc_hwdb_lint, returning the first finding's code with *err (0 when none). */
PMC_API int pmc_hwdb_check(const struct pmc_hwdb *db, size_t *budgets,
			   struct pmc_error *err);

/*
 * Is the event deterministic on this model (listed in its facts)?  Events
 * that count program actions (breakpoints, uprobes) are deterministic on
 * every model; callers decide those from the event kind.
 */
PMC_API int pmc_hwdb_model_deterministic(const struct pmc_hwdb_model *model,
					 const char *event);

/*
 * Set (or replace) one budget line in dir/budgets/<key>/<suite>.ini,
 * section [test]: "region = event bound".  Keeps every other line and
 * comment as it was; creates the directories and file as needed; writes
 * atomically.  *old_line receives the replaced line ("" if new).  bound
 * may end in a comment, "= 1200 ; calibrated: 5 equal runs", which stays on
 * the line for reviewers (the reader drops " ;..." from values).
 */
PMC_API int pmc_hwdb_write_budget(const char *dir, const char *key, const char *suite,
				  const char *test, const char *region, const char *event,
				  const char *bound, char *old_line, size_t old_size,
				  struct pmc_error *err);

/* ---- the libraries a case ran with ------------------------------------------- */

/*
 * Who a shared object is, as --calibrate records it in the case's section
 * of each budget file it writes, one line per object the case loaded (the
 * program itself and pmcheck's own libraries aside):
 *
 *   library:libexpat.so.1 = build-id:a2f37366... package:libexpat1=2.5.0-1+deb12u1
 *
 * name: the object's soname, or its file name when it has none; id: its GNU
 * build ID ("build-id:HEX") or, without one, a hash of its content
 * ("fnv1a64:HEX"), as pmc_objects_loaded() gives it; package and version:
 * the Debian package that installed the file, both "" when none did or the
 * system has no dpkg database.
 */
#define PMC_LIBRARY_NAME_MAX 200
struct pmc_library {
	char name[PMC_LIBRARY_NAME_MAX];
	char id[144];
	char package[128];
	char version[128];
	int line;   /* read from a budget file: its line; else 0 */
};

/* The name of each of n objects loaded from paths[i]: the file's DT_SONAME,
 * or its file name when it has none or cannot be read.  Only name is set. */
PMC_API void pmc_libraries_identify(const char *const *paths, struct pmc_library *out,
				    size_t n);

/*
 * The package and version of each of n files, from dpkg's database
 * ($DPKG_ADMINDIR, default /var/lib/dpkg: the owner from info/ *.list, read
 * once for all n, the version from status), without running dpkg.  A file
 * no package owns, or a system without the database, gets "" for both.
 * 0, or -ENOMEM.
 */
PMC_API int pmc_libraries_packages(const char *const *paths, struct pmc_library *out, size_t n);

/*
 * The library lines of section [test] of one budget file, in *out (malloc'd,
 * free() it; NULL and *n 0 when there are none, as in a file calibrated
 * before pmcheck recorded them).  Every line of the file is checked as a
 * lookup checks it: PMC_E_SYNTAX with "file:line: ..." in *err when one is
 * malformed (a library named twice in one section included) or the file
 * is not a regular file, -ENOENT when there is none, else the -errno of
 * reading it.
 */
PMC_API int pmc_hwdb_libraries(const char *budget_file, const char *test,
			       struct pmc_library **out, size_t *n, struct pmc_error *err);

/*
 * Replace the library lines of section [test] of dir/budgets/<key>/<suite>.ini
 * with l[0..n), after its budgets; every other line stays as it was, and the
 * file is written atomically (a file or section that does not exist yet is
 * made).  -EINVAL naming the library when one cannot be written as a line.
 */
PMC_API int pmc_hwdb_write_libraries(const char *dir, const char *key, const char *suite,
				     const char *test, const struct pmc_library *l, size_t n,
				     struct pmc_error *err);

/*
 * Parse an INI text with line numbers (the parser used for every hwdb
 * file): calls handler(user, section, name, value, line) per entry.  For
 * the fuzzer and tests.  Returns 0 or PMC_E_SYNTAX with *err filled
 * ("name:line: ...").
 */
typedef int (*pmc_ini_handler)(void *user, const char *section, const char *name,
			       const char *value, int line, struct pmc_error *err);
PMC_API int pmc_ini_parse_text(const char *name, const char *text, size_t len,
			       pmc_ini_handler handler, void *user, struct pmc_error *err);

#ifdef __cplusplus
}
#endif

#endif
