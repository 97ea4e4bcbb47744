/* SPDX-License-Identifier: MIT */
/*
 * The bottom layer of libpmcheck: errors and the log callback (error.c),
 * files and paths (file.c), child processes with a deadline (child.c).  It
 * includes nothing of pmcheck but the public error header; every other
 * layer may use it.
 */
#ifndef PMCHECK_UTIL_INT_H
#define PMCHECK_UTIL_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <pmcheck/error.h>

#if defined(__GNUC__)
#define PMC__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define PMC__PRINTF(a, b)
#endif

#define PMC__COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* error.c: fill *err (if not NULL) and return code. */
int pmc__fail(struct pmc_error *err, int code, const char *input, int position,
	      const char *fmt, ...) PMC__PRINTF(5, 6);

/* error.c: send a message to the installed log callback, if any. */
void pmc__log(int level, const char *fmt, ...) PMC__PRINTF(2, 3);

/* vsnprintf for paths: -ENAMETOOLONG when truncated (the truncated path
 * then simply fails to open), else 0. */
int pmc__snprintf(char *buf, size_t size, const char *fmt, ...) PMC__PRINTF(3, 4);

/* Copy with truncation check: 0, or PMC_E_TOO_LONG when src does not fit. */
int pmc__copy(char *dst, size_t size, const char *src);

/* Unsigned decimal or 0x hex, the whole of s[0..len) (no sign, no
 * blanks): 0, or -1. */
int pmc__parse_number(const char *s, size_t len, uint64_t *out);

/* Read a small sysfs/procfs file into buf (trailing newline and blanks
 * stripped).  Returns the length, or a negative errno.  Exported for the
 * probes (not public API). */
PMC_API int pmc__read_text(const char *path, char *buf, size_t size);

/* Read a file holding one integer (decimal or 0x hex): 0 or -errno. */
int pmc__read_u64(const char *path, uint64_t *out);

/* This system's release as a budget key, "os-<ID>-<VERSION_ID>" from
 * os-release(5) (os-debian-13): budgets of counts that do not depend on the
 * CPU but on the libraries a release ships.  0, -ENOENT when the release
 * file or either field is missing (a rolling release has no VERSION_ID),
 * -EINVAL when they make no directory name.  Exported for the harness's
 * calibration (not public API). */
#define PMC_OS_KEY_MAX 96
PMC_API int pmc__os_key(char *key, size_t size);

/* pmc__read_file, pmc__mkdir_p: exported for the harness and the CLI. */
#include "file.h"

/* elf.c: each defined symbol of an ELF file (.symtab, then .dynsym unless
 * fn returned 1 for one of .symtab); 0, or negative when the file cannot be
 * read as ELF (PMC_E_ELF) or opened (-errno). */
#include <elf.h>
#include <link.h>
typedef int (*pmc__elf_sym_fn)(void *ctx, const char *name, const ElfW(Sym) *sym);
int pmc__elf_symbols(const char *path, pmc__elf_sym_fn fn, void *ctx);
/* elf.c: an ELF file's DT_SONAME into out: 1, 0 without one, or negative
 * when the file cannot be read as ELF. */
int pmc__elf_soname(const char *path, char *out, size_t size);
/* C++: the demangled form of a mangled name (malloc'd; NULL when it is not
 * one or no demangler is at hand), and whether a name is qualified (ns::f). */
char *pmc__demangle(const char *mangled);
int pmc__can_demangle(void);
int pmc__is_cxx_name(const char *name);

#endif
