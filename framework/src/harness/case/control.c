/* SPDX-License-Identifier: MIT */
/*
 * A case's controls, for its body and for the harness's own files: the
 * immediate endings (skip, fail, error, a failed check: a longjmp back to
 * case.c's run), notes and known issues, what a case may ask of itself,
 * and the process-wide settings (the program's name, the layout rule).
 * It calls nothing of the harness but the records layer's helpers.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_int.h"

const char *pmc__program;
const char *pmc__program_path;

/* Bounded copy (labels and names are cut at their buffer's size). */
void pmc__copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (n >= size)
		n = size - 1;
	memmove(dst, src, n);
	dst[n] = '\0';
}

double pmc__layout_per_call = PMC__LAYOUT_PER_CALL;

/* ---- immediate endings --------------------------------------------------------- */

static __attribute__((noreturn)) void end_case(struct pmc_test *t, enum pmc_verdict v,
					       const char *prefix, const char *fmt, va_list ap)
{
	size_t len;

	snprintf(t->reason, sizeof(t->reason), "%s", prefix);
	len = strlen(t->reason);
	vsnprintf(t->reason + len, sizeof(t->reason) - len, fmt, ap);
	t->verdict = v;
	if (!t->jump_armed) {
		/* Called outside a running case (a bug in the caller): there is
		 * nowhere to return to. */
		fprintf(stderr, "pmcheck: %s outside a running case: %s\n", pmc_verdict_name(v),
			t->reason);
		abort();
	}
	longjmp(t->jump, 1);
}

/* End the case now with verdict v (INCONCLUSIVE, which has no public
 * function: a case says it through its expectations). */
void pmc__test_end_now(struct pmc_test *t, enum pmc_verdict v, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, v, "", fmt, ap);
}

void pmc_test_skip(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_SKIP, "", fmt, ap);
}

void pmc_test_fail(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_FAIL, "", fmt, ap);
}

void pmc_test_error(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	end_case(t, PMC_ERROR, "", fmt, ap);
}

void pmc__check_failed(struct pmc_test *t, const char *file, int line, const char *fmt, ...)
{
	char prefix[512];
	va_list ap;

	snprintf(prefix, sizeof(prefix), "%s:%d: ", pmc__file_part(file), line);
	va_start(ap, fmt);
	end_case(t, PMC_FAIL, prefix, fmt, ap);
}

void pmc_test_known_issue(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->known_issue, sizeof(t->known_issue), fmt, ap);
	va_end(ap);
}

void pmc_test_note(struct pmc_test *t, const char *fmt, ...)
{
	va_list ap;

	if (t->nnotes >= PMC__MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(t->notes[t->nnotes++], sizeof(t->notes[0]), fmt, ap);
	va_end(ap);
}

void *pmc_test_data(struct pmc_test *t)
{
	return t->data;
}

int pmc_test_rep(const struct pmc_test *t)
{
	return t->rep;
}

enum pmc_backend pmc_test_backend(const struct pmc_test *t)
{
	return t->backend;
}
