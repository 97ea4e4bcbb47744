/* SPDX-License-Identifier: MIT */
/*
 * Files, paths and numbers: bounded formatting and copies, strict numbers, small sysfs/procfs reads,
 * whole-file reads, directories, and the atomic write every file pmcheck
 * produces goes through.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/file.h>

#include "util_int.h"

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

/* Unsigned decimal or 0x hex, the whole of s[0..len): 0 or -1. */
int pmc__parse_number(const char *s, size_t len, uint64_t *out)
{
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf) || s[0] == '-' || s[0] == '+')
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	errno = 0;
	*out = strtoull(buf, &end, 0);
	return (errno || *end) ? -1 : 0;
}

/* The whole file, NUL-terminated, in a malloc'd buffer: 0 or -errno. */
int pmc__read_file(const char *path, char **text, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 16384, used = 0;
	char *buf = NULL;
	int rc = 0;

	if (fd < 0)
		return -errno;
	buf = malloc(cap);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (used + 1 >= cap) {
			char *grown = realloc(buf, cap * 2);

			if (!grown) {
				rc = -ENOMEM;
				goto out;
			}
			buf = grown;
			cap *= 2;
		}
		n = read(fd, buf + used, cap - used - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
	}
	buf[used] = '\0';
	*text = buf;
	*len = used;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return rc;
}

int pmc__parse_decimal(const char *s, char **end, double *out)
{
	size_t n = strspn(s, "0123456789");

	if (n == 0)
		return -EINVAL;
	if (s[n] == '.') {
		size_t f = strspn(s + n + 1, "0123456789");

		if (f == 0)
			return -EINVAL;
		n += 1 + f;
	}
	*out = strtod(s, NULL); /* only digits and one '.': a plain decimal */
	*end = (char *)s + n;
	return 0;
}

int pmc__mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	if (pmc__copy(buf, sizeof(buf), path))
		return -ENAMETOOLONG;
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) != 0 && errno != EEXIST)
		return -errno;
	return 0;
}

/* "-" and /dev/stdout name the command's standard output: written there
 * as it is (a terminal, a pipe, a file the shell opened), never replaced. */
static bool names_stdout(const char *path)
{
	return !strcmp(path, "-") || !strcmp(path, "/dev/stdout");
}

static const char *file_kind(mode_t mode)
{
	return S_ISDIR(mode)	? "a directory"
	       : S_ISCHR(mode)	? "a character device"
	       : S_ISBLK(mode)	? "a block device"
	       : S_ISFIFO(mode) ? "a FIFO"
	       : S_ISSOCK(mode) ? "a socket"
				: "not a regular file";
}

/* A temporary name no one can have planted: random, and created
 * exclusively without following a link (O_EXCL fails on any existing name,
 * a link included; O_NOFOLLOW says so twice).  An existing name is a
 * collision or a trap: another name is tried, and nothing is written
 * through what is there.  The name is the directory's and a fixed-length
 * one of its own, never the target's name with more after it: a target
 * whose name is near NAME_MAX (255 bytes) is written, not refused with
 * ENAMETOOLONG after the run. */
static int create_temporary(const char *path, char *tmp, size_t size)
{
	static unsigned counter;
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;

	for (int tries = 0; tries < 100; tries++) {
		uint32_t r;
		int fd;

		if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
			struct timespec ts;

			clock_gettime(CLOCK_MONOTONIC, &ts);
			r = (uint32_t)ts.tv_nsec ^ (uint32_t)ts.tv_sec * 2654435761u ^
			    __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED) * 40503u;
		}
		if (pmc__snprintf(tmp, size, "%.*s.pmcheck-%d-%08x.tmp", dirlen, path, (int)getpid(), r) < 0)
			return -ENAMETOOLONG;
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : -errno;
	}
	return -EEXIST;
}

/* Can a file be made beside path, as the writer makes its temporary?  A
 * directory that does not exist, is read-only (a read-only mount, /proc,
 * /sys), is not writable or is full of names is said before the run, not
 * after it.  The probe is removed at once. */
static int probe_directory(const char *path)
{
	char tmp[PATH_MAX];
	int fd = create_temporary(path, tmp, sizeof(tmp));

	if (fd < 0)
		return fd;
	close(fd);
	unlink(tmp);
	return 0;
}

int pmc__output_check(const char *path, char *why, size_t size)
{
	char shown[256], unused[8];
	struct stat st;
	int rc = 0, found;

	if (!why || !size)
		why = unused, size = sizeof(unused);
	why[0] = '\0';
	if (!*path) {
		snprintf(why, size, "an empty path; name a file, or \"-\" for standard output");
		return -EINVAL;
	}
	if (names_stdout(path))
		return 0;
	pmc__escape_ctl(shown, sizeof(shown), path);
	/* stat, not lstat: a link is judged by what it reaches (a link to
	 * /dev/null or /proc/self/fd/1 is refused); a link that dangles is
	 * replaced, as a regular file is, and nothing is written through it. */
	found = stat(path, &st) == 0 ? 0 : -errno;
	if (found && found != -ENOENT) {
		rc = found;
		snprintf(why, size, "\"%s\": %s; name a file in a directory pmcheck can write, or \"-\" for standard output",
			 shown, strerror(-rc));
		return rc;
	}
	if (found == -ENOENT || S_ISREG(st.st_mode)) {
		rc = probe_directory(path);
		if (rc)
			snprintf(why, size, "\"%s\": no file can be made in its directory (%s), so it cannot be written; name a file in a directory that exists and pmcheck can write, or \"-\" for standard output",
				 shown, strerror(-rc));
		return rc;
	}
	snprintf(why, size, "\"%s\" is %s, not a regular file, and pmcheck replaces the file it writes; name a new or regular file, or \"-\" for standard output",
		 shown, file_kind(st.st_mode));
	return S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* stat(2) of path's directory. */
static int dir_of(const char *path, struct stat *st)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');

	if (!slash)
		return stat(".", st);
	if (pmc__snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path) < 0)
		return -1;
	return stat(dir, st);
}

bool pmc__output_same(const char *a, const char *b)
{
	struct stat sa, sb;

	if (!a || !b)
		return false;
	if (names_stdout(a) || names_stdout(b))
		return names_stdout(a) && names_stdout(b);
	if (!strcmp(a, b))
		return true;
	/* Two spellings of one file: "x.json" and "./x.json", or a link;
	 * a file not made yet by its directory and name. */
	if (stat(a, &sa) == 0 && stat(b, &sb) == 0)
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	return !strcmp(base_name(a), base_name(b)) && dir_of(a, &sa) == 0 && dir_of(b, &sb) == 0 &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int pmc_write_file_atomic(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if (names_stdout(path)) {
		rc = write_all(STDOUT_FILENO, data, len);
		/* A pipe or terminal has nothing to sync; a file the shell
		 * opened reports a full disk here if not at write. */
		if (rc == 0 && fsync(STDOUT_FILENO) != 0 && errno != EINVAL && errno != EROFS)
			rc = -errno;
		goto out;
	}
	rc = pmc__output_check(path, NULL, 0);
	if (rc)
		goto out;
	fd = create_temporary(path, tmp, sizeof(tmp));
	if (fd < 0) {
		rc = fd;
		goto out;
	}
	rc = write_all(fd, data, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	/* Checked again: the target may have become a device or FIFO since
	 * the caller's check, and rename would replace it. */
	if (rc == 0)
		rc = pmc__output_check(path, NULL, 0);
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc != 0)
		unlink(tmp);
out:
	/* errno too, for a caller whose message follows a chain of calls. */
	if (rc)
		errno = -rc;
	return rc;
}

int pmc__find_on_path(const char *name, char *out, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, size, "%s", name);
		return access(out, X_OK) == 0 ? 0 : -errno;
	}
	if (!path || !*path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(out, size, "%.*s/%s", (int)len, len ? path : ".", name);
		if (access(out, X_OK) == 0)
			return 0;
		path += len;
		if (*path == ':')
			path++;
	}
	return -ENOENT;
}

char *pmc__escape_ctl(char *out, size_t size, const char *in)
{
	size_t used = 0;

	if (!size)
		return out;
	for (; in && *in; in++) {
		unsigned char c = (unsigned char)*in;
		char piece[8];
		size_t n;

		if (c == '\n')
			n = (size_t)snprintf(piece, sizeof(piece), "\\n");
		else if (c == '\t')
			n = (size_t)snprintf(piece, sizeof(piece), "\\t");
		else if (c == '\r')
			n = (size_t)snprintf(piece, sizeof(piece), "\\r");
		else if (c == '\\')
			n = (size_t)snprintf(piece, sizeof(piece), "\\\\");
		else if (c < 0x20 || c == 0x7f)
			n = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", c);
		else
			piece[0] = (char)c, piece[1] = '\0', n = 1;
		if (used + n >= size)
			break;
		memcpy(out + used, piece, n);
		used += n;
	}
	out[used] = '\0';
	return out;
}

/* One os-release(5) field: the value after NAME=, unquoted, in out. */
static int os_release_field(const char *text, const char *name, char *out, size_t size)
{
	size_t nlen = strlen(name);
	const char *line = text;

	while (line && *line) {
		const char *v = line + nlen + 1;
		size_t len = strcspn(line, "\n");

		if (!strncmp(line, name, nlen) && line[nlen] == '=') {
			len -= nlen + 1;
			if (len >= 2 && (v[0] == '"' || v[0] == '\'') && v[len - 1] == v[0]) {
				v++;
				len -= 2;
			}
			if (len == 0 || len >= size)
				return -EINVAL;
			memcpy(out, v, len);
			out[len] = '\0';
			return 0;
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return -ENOENT;
}

static char os_key[PMC_OS_KEY_MAX];
static int os_key_rc;

static void os_key_read(void)
{
	static const char *const files[] = { "/etc/os-release", "/usr/lib/os-release" };
	static const char allowed[] = "abcdefghijklmnopqrstuvwxyz0123456789._-";
	char id[64], version[64];
	char *text = NULL;
	size_t len;

	os_key_rc = -ENOENT;
	for (size_t i = 0; i < PMC__COUNT(files) && !text; i++)
		if (pmc__read_file(files[i], &text, &len))
			text = NULL;
	if (!text)
		return;
	if (os_release_field(text, "ID", id, sizeof(id)) == 0 &&
	    os_release_field(text, "VERSION_ID", version, sizeof(version)) == 0) {
		/* Both are lower-case letters, digits, '.', '_' and '-' by the
		 * manual page; anything else makes no directory name. */
		os_key_rc = -EINVAL;
		if (strspn(id, allowed) == strlen(id) && strspn(version, allowed) == strlen(version) &&
		    pmc__snprintf(os_key, sizeof(os_key), "os-%s-%s", id, version) == 0)
			os_key_rc = 0;
	}
	free(text);
}

int pmc__os_key(char *key, size_t size)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, os_key_read);
	return os_key_rc ? os_key_rc : pmc__copy(key, size, os_key);
}

size_t pmc__utf8_length(const unsigned char *p)
{
	unsigned c = p[0], n, cp;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2, cp = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3, cp = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4, cp = c & 0x07;
	else
		return 0;
	for (unsigned i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	/* Overlong forms, surrogates, beyond U+10FFFF. */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xd800 && cp <= 0xdfff) ||
	    cp > 0x10ffff)
		return 0;
	return n;
}

char *pmc__escape_utf8(char *out, size_t size, const char *in)
{
	size_t used = 0;

	if (!size)
		return out;
	while (in && *in) {
		size_t len = pmc__utf8_length((const unsigned char *)in), n = len;
		char piece[8];

		if (len)
			memcpy(piece, in, len);
		else
			n = (size_t)snprintf(piece, sizeof(piece), "\\x%02x", (unsigned char)*in);
		if (used + n >= size)
			break;
		memcpy(out + used, piece, n);
		used += n;
		in += len ? len : 1;
	}
	out[used] = '\0';
	return out;
}
