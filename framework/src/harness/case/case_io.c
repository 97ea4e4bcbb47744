/* SPDX-License-Identifier: MIT */
/*
 * A case's side of the runner's pipes: the memory files its output and its
 * result go through, reading one back, the result written as JSON, and the
 * record of a case that ended without writing one, and the library's
 * messages on its stderr.  Beneath process.c
 * (the runner's side) and sim_case.c (the process valgrind runs).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "runner_int.h"

/* The library's messages on a case's stderr (its output file). */
void pmc__log_stderr(int level, const char *message, void *ctx)
{
	const int *min_level = ctx;

	if (!min_level || level >= *min_level)
		fprintf(stderr, "%s\n", message);
}

int pmc__case_memfd(const char *name)
{
	int fd = (int)syscall(SYS_memfd_create, name, 1u /* MFD_CLOEXEC */);

	if (fd < 0) {
		char tmpl[] = "/tmp/pmcheck-XXXXXX";

		fd = mkostemp(tmpl, O_CLOEXEC);
		if (fd >= 0)
			unlink(tmpl);
	}
	return fd;
}

char *pmc__case_slurp(int fd, size_t keep, size_t *total)
{
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from;
	char *buf;
	ssize_t n;

	*total = size > 0 ? (size_t)size : 0;
	if (size <= 0)
		return NULL;
	from = (size_t)size > keep ? size - (off_t)keep : 0;
	buf = malloc((size_t)(size - from) + 1);
	if (!buf)
		return NULL;
	n = pread(fd, buf, (size_t)(size - from), from);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

/* The record of a case that ended without reporting one. */
void pmc__case_error_result(const struct pmc_test_def *d, const char *reason, struct pmc__result *r)
{
	char name[256];

	pmc__full_name(d, name, sizeof(name));
	memset(r, 0, sizeof(*r));
	r->name = strdup(name);
	r->suite = strdup(d->suite);
	r->test = strdup(d->name);
	r->file = strdup(d->file);
	r->line = d->line;
	r->verdict = PMC_ERROR;
	r->reason = malloc(4 * strlen(reason) + 1); /* each byte at most \xHH */
	if (r->reason)
		pmc__escape_utf8(r->reason, 4 * strlen(reason) + 1, reason);
	r->measuring = true;
}

/* Write a case's result for the runner; returns 0 when all of it went out. */
int pmc__case_write_result(int fd, const struct pmc__result *res)
{
	/* Text written directly: the case process runs none of jansson. */
	char *text = pmc__result_to_text(res);
	size_t len = text ? strlen(text) : 0, off = 0;

	while (off < len) {
		ssize_t n = write(fd, text + off, len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	free(text);
	return text && off == len ? 0 : -1;
}
