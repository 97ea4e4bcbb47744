/* SPDX-License-Identifier: MIT */
#define _GNU_SOURCE /* strerrorname_np */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmcheck_int.h"

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
	char buf[512];
	va_list ap;

	if (!pmc_log_cb)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pmc_log_cb(level, buf, pmc_log_ctx);
}

int pmc__snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int pmc__copy(char *dst, size_t size, const char *src)
{
	size_t len = strlen(src);

	if (len >= size)
		return PMC_E_TOO_LONG;
	memcpy(dst, src, len + 1);
	return 0;
}

int pmc__read_text(const char *path, char *buf, size_t size)
{
	int fd, saved;
	ssize_t n;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	saved = errno;
	close(fd);
	if (n < 0)
		return -saved;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = '\0';
	return (int)n;
}

int pmc__read_u64(const char *path, uint64_t *out)
{
	char buf[64], *end;
	int rc = pmc__read_text(path, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	errno = 0;
	*out = strtoull(buf, &end, 0);
	if (errno || end == buf)
		return -EINVAL;
	return 0;
}
