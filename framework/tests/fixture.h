/* SPDX-License-Identifier: MIT */
/* Fixture files for tests and fuzz targets (sysfs trees, hwdb trees). */
#ifndef PMC_FIXTURE_H
#define PMC_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* A fresh directory /tmp/pmcheck-WHAT-XXXXXX (a static buffer, until the
 * next call). */
static inline const char *t_tmpdir(const char *what)
{
	static char dir[128];

	snprintf(dir, sizeof(dir), "/tmp/pmcheck-%s-XXXXXX", what);
	if (!mkdtemp(dir)) {
		perror(dir);
		exit(2);
	}
	return dir;
}

/* dir/rel (making its directories) holding text, then `end`. */
static inline void t_write_end(const char *dir, const char *rel, const char *text, const char *end)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + strlen(dir) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(path, 0755);
			*p = '/';
		}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fprintf(f, "%s%s", text, end);
	fclose(f);
}

/* root/rel holding `content` and a newline: fixture sysfs trees. */
static inline void t_put(const char *root, const char *rel, const char *content)
{
	t_write_end(root, rel, content, "\n");
}

/* dir/rel holding exactly text: hwdb trees. */
static inline void t_write(const char *dir, const char *rel, const char *text)
{
	t_write_end(dir, rel, text, "");
}

/* The text of dir/rel (at most 16 KiB, in a static buffer), or NULL. */
static inline char *t_read(const char *dir, const char *rel)
{
	static char buf[16384];
	char path[4096];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if (!(f = fopen(path, "r")))
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

#endif
