/* SPDX-License-Identifier: MIT */
/*
 * Files for the layers above util and for the pmcheck command (file.c):
 * exported from libpmcheck, not public API (this header is not installed).
 */
#ifndef PMCHECK_UTIL_FILE_H
#define PMCHECK_UTIL_FILE_H

#include <stddef.h>

#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The whole file, NUL-terminated, in a malloc'd *text: 0 or -errno. */
PMC_API int pmc__read_file(const char *path, char **text, size_t *len);

/* The executable `name` as the shell finds it on PATH (a name with a '/'
 * is taken as it is), in out: 0, or -ENOENT when there is none. */
PMC_API int pmc__find_on_path(const char *name, char *out, size_t size);

/* mkdir -p with mode 0755: 0 or -errno. */
PMC_API int pmc__mkdir_p(const char *path);

#ifdef __cplusplus
}
#endif

#endif
