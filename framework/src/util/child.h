/* SPDX-License-Identifier: MIT */
/*
 * Child processes with a pipe and a deadline: the one fork/pipe/wait helper
 * of the runner (a case per process), the probes (each probe in a process)
 * and the sim backend (valgrind).  It lives in libpmcheck and is exported
 * for the harness library and the CLI, but it is not public API: this
 * header is not installed and may change with any release.
 */
#ifndef PMCHECK_UTIL_CHILD_H
#define PMCHECK_UTIL_CHILD_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <pmcheck/export.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pmc__child {
	pid_t pid;   /* > 0 while it may run; 0 once reaped */
	int fd;      /* the parent's end of the pipe, or -1 */
	int status;  /* wait status, once reaped */
	bool group;  /* leads its own process group: kills take the group */
};

/* Flags of pmc__child_fork and pmc__child_spawn. */
#define PMC__CHILD_GROUP 1u /* own process group (its children die with it) */
#define PMC__CHILD_PIPE 2u  /* a pipe from the child (its write end: *wfd) */
#define PMC__CHILD_NO_ASLR 4u /* spawn: address-space randomisation off */
#define PMC__CHILD_CLEAR_ENV 8u /* spawn: an empty environment, then `env` */

/*
 * fork(2) after flushing stdio.  In the child returns 0, with the pipe's
 * write end in *wfd when PMC__CHILD_PIPE is given (close-on-exec, like
 * the read end, which the child does not have).  In the parent returns the
 * pid, c->fd being the read end (or -1).  -errno when fork or pipe fails.
 */
PMC_API pid_t pmc__child_fork(struct pmc__child *c, unsigned flags, int *wfd);

/*
 * Run argv (argv[0] looked up on PATH unless it holds a '/').  With
 * `capture` its stdout and stderr go into the pipe c->fd and its stdin
 * comes from /dev/null; without, it inherits all three.  `env` (NULL-
 * terminated, may be NULL) changes its environment: NAME=VALUE is set, a
 * bare NAME removed.  0, or -errno: from fork, or from execvp in
 * the child (reported back through a close-on-exec pipe, so "not found" is
 * -ENOENT here and not an exit status).
 */
PMC_API int pmc__child_spawn(struct pmc__child *c, char *const argv[], char *const env[],
			     bool capture, unsigned flags);

/* Monotonic seconds, for deadlines. */
PMC_API double pmc__child_now(void);

/*
 * Wait until the pipe is readable (data or end of file) or the child has
 * exited, at most until `deadline` (pmc__child_now() seconds).  Returns
 * PMC__CHILD_READY, PMC__CHILD_EXITED (reaped, c->status set), or 0 when
 * the deadline passed.  Without a pipe (c->fd < 0) only the exit counts.
 */
#define PMC__CHILD_READY 1
#define PMC__CHILD_EXITED 2
PMC_API int pmc__child_wait(struct pmc__child *c, double deadline);

/*
 * Read the pipe into buf (NUL-terminated, at most size - 1 bytes kept) until
 * end of file or the deadline.  Returns the bytes kept, or -ETIMEDOUT (buf
 * then holds what came before the deadline).
 */
PMC_API long pmc__child_read(struct pmc__child *c, char *buf, size_t size, double deadline);

/* Reap: blocking, or not.  1 when reaped (c->status set), 0 if it runs. */
PMC_API int pmc__child_reap(struct pmc__child *c, bool block);

/* SIGKILL the child (its process group too when it leads one) and reap
 * it; closes the pipe. */
PMC_API void pmc__child_kill(struct pmc__child *c);

/* Close the pipe (when open). */
PMC_API void pmc__child_close(struct pmc__child *c);

#ifdef __cplusplus
}
#endif

#endif
