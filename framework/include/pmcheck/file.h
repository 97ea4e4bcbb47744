/* SPDX-License-Identifier: MIT */
/*
 * Files written so that a reader never sees half of one.
 */
#ifndef PMCHECK_FILE_H
#define PMCHECK_FILE_H

#include <stddef.h>

#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Write `len` bytes to `path` atomically: a temporary file in the same
 * directory, fsync, rename(2).  Readers see the old file or the new one,
 * never a torn one; on failure the old file is untouched and no temporary
 * is left behind.  The temporary gets a random name and is created
 * exclusively, never through a link: a file or link planted at that name is
 * left alone and another name is tried.  A path that exists and is not a
 * regular file (a directory, device, FIFO or socket, or a link to one) is
 * never replaced: -EISDIR for a directory, else -EINVAL.  "-" and
 * "/dev/stdout" name the standard output, which is written as it is (a
 * terminal, pipe or file), not replaced.  Returns 0 or a negative errno
 * (-ENOSPC on a full disk or /dev/full as the standard output), errno
 * set to the same on failure.
 */
PMC_API int pmc_write_file_atomic(const char *path, const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif
