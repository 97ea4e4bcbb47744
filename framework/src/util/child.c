/* SPDX-License-Identifier: MIT */
/* Child processes with a pipe and a deadline (see child.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/valgrind.h>

#include "child.h"
#include "arith.h"

double pmc__child_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

pid_t pmc__child_fork(struct pmc__child *c, unsigned flags, int *wfd)
{
	int fds[2] = { -1, -1 };
	pid_t pid;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	if ((flags & PMC__CHILD_PIPE) && pipe2(fds, O_CLOEXEC) != 0)
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int saved = errno;

		if (fds[0] >= 0) {
			close(fds[0]);
			close(fds[1]);
		}
		return -saved;
	}
	if (pid == 0) {
		if (flags & PMC__CHILD_GROUP)
			setpgid(0, 0);
		if (fds[0] >= 0)
			close(fds[0]);
		if (wfd)
			*wfd = fds[1];
		return 0;
	}
	/* Both sides set the group, so it exists whichever runs first. */
	if (flags & PMC__CHILD_GROUP) {
		setpgid(pid, pid);
		c->group = true;
	}
	if (fds[1] >= 0)
		close(fds[1]);
	c->pid = pid;
	c->fd = fds[0];
	return pid;
}

int pmc__child_spawn(struct pmc__child *c, char *const argv[], char *const env[],
		     bool capture, unsigned flags)
{
	int report[2], out = -1, err = 0;
	pid_t pid;
	ssize_t n;

	/* The exec's errno comes back here; a successful exec closes it. */
	if (pipe2(report, O_CLOEXEC) != 0)
		return -errno;
	pid = pmc__child_fork(c, (flags & ~PMC__CHILD_PIPE) | (capture ? PMC__CHILD_PIPE : 0),
			      &out);
	if (pid < 0) {
		close(report[0]);
		close(report[1]);
		return (int)pid;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);

		close(report[0]);
		if (capture) {
			if (null >= 0)
				dup2(null, STDIN_FILENO);
			dup2(out, STDOUT_FILENO);
			dup2(out, STDERR_FILENO);
		}
		if (flags & PMC__CHILD_CLEAR_ENV)
			clearenv();
		for (size_t i = 0; env && env[i]; i++)
			if (strchr(env[i], '='))
				putenv(env[i]);
			else
				unsetenv(env[i]);
		if (flags & PMC__CHILD_NO_ASLR)
			personality(ADDR_NO_RANDOMIZE);
		execvp(argv[0], argv);
		err = errno;
		while (write(report[1], &err, sizeof(err)) < 0 && errno == EINTR)
			;
		_exit(127);
	}
	close(report[1]);
	do
		n = read(report[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n == (ssize_t)sizeof(err)) {
		pmc__child_reap(c, true);
		pmc__child_close(c);
		return -err;
	}
	return 0;
}

int pmc__child_reap(struct pmc__child *c, bool block)
{
	pid_t w;

	if (c->pid <= 0)
		return 1;
	do
		w = waitpid(c->pid, &c->status, block ? 0 : WNOHANG);
	while (w < 0 && errno == EINTR);
	if (w == 0)
		return 0;
	if (w < 0)
		c->status = 0; /* not ours any more (reaped elsewhere) */
	c->pid = 0;
	return 1;
}

int pmc__child_wait(struct pmc__child *c, double deadline)
{
	/* valgrind 3.19 does not know pidfd_open and warns on every call:
	 * under it, the exit is polled every 5 ms instead. */
	int pidfd = RUNNING_ON_VALGRIND || c->pid <= 0
			    ? -1 : (int)syscall(SYS_pidfd_open, c->pid, 0);
	int rc = 0;

	for (;;) {
		struct pollfd p[2];
		nfds_t np = 0;
		double left;
		int ms;

		if (pmc__child_reap(c, false)) {
			rc = PMC__CHILD_EXITED;
			break;
		}
		left = deadline - pmc__child_now();
		if (left <= 0)
			break;
		ms = left > 3600 ? 3600 * 1000 : (int)pmc__ceil(left * 1000);
		if (c->fd >= 0)
			p[np++] = (struct pollfd){ .fd = c->fd, .events = POLLIN };
		if (pidfd >= 0)
			p[np++] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		else if (ms > 5)
			ms = 5; /* no pidfd (kernels before 5.3, valgrind): poll */
		if (np == 0) {
			struct timespec ts = { 0, (long)ms * 1000 * 1000 };

			nanosleep(&ts, NULL);
			continue;
		}
		if (poll(p, np, ms) > 0 && c->fd >= 0 && (p[0].revents & (POLLIN | POLLHUP | POLLERR))) {
			rc = PMC__CHILD_READY;
			break;
		}
	}
	if (pidfd >= 0)
		close(pidfd);
	return rc;
}

long pmc__child_read(struct pmc__child *c, char *buf, size_t size, double deadline)
{
	size_t used = 0;

	if (size == 0)
		return -EINVAL;
	buf[0] = '\0';
	while (c->fd >= 0) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		double left = deadline - pmc__child_now();
		char sink[4096];
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)pmc__ceil(left * 1000)) == 0)
			return -ETIMEDOUT;
		/* Past the buffer's room the rest is drained, not kept. */
		if (used + 1 < size)
			n = read(c->fd, buf + used, size - 1 - used);
		else
			n = read(c->fd, sink, sizeof(sink));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (used + 1 < size)
			used += (size_t)n;
		buf[used] = '\0';
	}
	return (long)used;
}

void pmc__child_close(struct pmc__child *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

void pmc__child_kill(struct pmc__child *c)
{
	pmc__child_close(c);
	if (c->pid <= 0)
		return;
	if (c->group)
		kill(-c->pid, SIGKILL);
	kill(c->pid, SIGKILL);
	pmc__child_reap(c, true);
}
