/* SPDX-License-Identifier: MIT */
/*
 * Errors: the code table (from error.h's one list), filling struct
 * pmc_error, and the log callback.
 */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util_int.h"

#define PMC__ERRTAB_ROW(name, value, capability, text) { name, #name, capability, text },
static const struct {
	int code;
	const char *name;
	int capability;
	const char *text;
} pmc_errtab[] = { PMC_ERRORS(PMC__ERRTAB_ROW) };
#undef PMC__ERRTAB_ROW

#define PMC__NERR (sizeof(pmc_errtab) / sizeof(pmc_errtab[0]))

const char *pmc_strerror(int code)
{
	size_t i;

	if (code == 0)
		return "success";
	for (i = 0; i < PMC__NERR; i++)
		if (pmc_errtab[i].code == code)
			return pmc_errtab[i].text;
	if (code < 0 && code > -4096)
		return strerror(-code);
	return "unknown pmcheck error code";
}

const char *pmc_error_name(int code)
{
	for (size_t i = 0; i < PMC__NERR; i++)
		if (pmc_errtab[i].code == code)
			return pmc_errtab[i].name;
	if (code < 0 && code > -4096)
		return strerrorname_np(-code);
	return NULL;
}

int pmc_error_is_capability(int code)
{
	for (size_t i = 0; i < PMC__NERR; i++)
		if (pmc_errtab[i].code == code)
			return pmc_errtab[i].capability;
	return code == -ENOENT || code == -EOPNOTSUPP || code == -EACCES || code == -EPERM;
}

void pmc_error_clear(struct pmc_error *err)
{
	if (!err)
		return;
	err->code = 0;
	err->position = -1;
	err->input[0] = '\0';
	err->message[0] = '\0';
}

int pmc__fail(struct pmc_error *err, int code, const char *input, int position,
	      const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return code;
	err->code = code;
	err->position = position;
	snprintf(err->input, sizeof(err->input), "%s", input ? input : "");
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return code;
}

static pmc_log_fn pmc_log_cb;
static void *pmc_log_ctx;

void pmc_log_set(pmc_log_fn fn, void *ctx)
{
	pmc_log_cb = fn;
	pmc_log_ctx = ctx;
}

void pmc__log(int level, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;

	if (!pmc_log_cb)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pmc_log_cb(level, buf, pmc_log_ctx);
}
