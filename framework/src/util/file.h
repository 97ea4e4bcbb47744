/* SPDX-License-Identifier: MIT */
/*
 * Files for the layers above util and for the pmcheck command (file.c):
 * exported from libpmcheck, not public API (this header is not installed).
 */
#ifndef PMCHECK_UTIL_FILE_H
#define PMCHECK_UTIL_FILE_H

#include <stdbool.h>
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

/*
 * May a command write its output (--json=, --junit=, -o ...) to path?  0
 * for "-" and /dev/stdout (the standard output, written as it is: see
 * pmc_write_file_atomic), a path that does not exist, and a regular file (or
 * a link to one).  Anything else -- a directory, device, FIFO, socket, a
 * link to one of them such as /proc/self/fd/1 -- would be replaced by the
 * rename: -EISDIR or -EINVAL, and a stat(2) failure other than ENOENT as its
 * -errno; a path whose directory no file can be made in (missing, read-only,
 * /proc) as the -errno of a probe file made there and removed at once; with
 * *why a sentence naming the path (control characters escaped) and the fix.  Callers check each output before any work, so that a run is
 * not spent on a file it cannot write.
 */
PMC_API int pmc__output_check(const char *path, char *why, size_t size);

/* Do two outputs name one file (the same path, two spellings of one
 * existing file, or both the standard output)?  Two such options would
 * have the second overwrite the first: callers refuse them, naming both. */
PMC_API bool pmc__output_same(const char *a, const char *b);

/*
 * A number as a person writes one on a command line: decimal digits, and
 * a fraction after one '.' ("30", "0.5"), nothing else.  strtod(3) also
 * takes leading spaces, a sign, exponents ("1e2"), hexadecimal ("0x10" is
 * 16, "0x1p3" is 8), "inf" and "nan": as an option's value each is a
 * mistake read as some other number.  0 with *out and *end after the
 * number (the caller checks what follows: nothing, or '%'); -EINVAL when
 * s does not begin with one.
 */
PMC_API int pmc__parse_decimal(const char *s, char **end, double *out);

/* mkdir -p with mode 0755: 0 or -errno. */
PMC_API int pmc__mkdir_p(const char *path);

/*
 * in, for a message: each control character (below 0x20, and 0x7f) as a C
 * escape ("\n", "\x1b") and a backslash doubled, so that what a user typed
 * or a file held cannot move the cursor or forge a line of output.  Cut to
 * fit size (NUL-terminated, never in the middle of an escape); returns out.
 */
PMC_API char *pmc__escape_ctl(char *out, size_t size, const char *in);
/* in copied to out (size bytes, always terminated) with each byte that is
 * not part of valid UTF-8 written as \xHH: text from a file (an hwdb line)
 * that goes into a message JSON must carry, which refuses invalid UTF-8. */
PMC_API char *pmc__escape_utf8(char *out, size_t size, const char *in);
/* The length of the valid UTF-8 sequence at p (1 to 4; 1 for ASCII), or 0. */
PMC_API size_t pmc__utf8_length(const unsigned char *p);

#ifdef __cplusplus
}
#endif

#endif
