/* SPDX-License-Identifier: MIT */
/* Fixture files for tests and fuzz targets (sysfs trees, hwdb trees). */
#ifndef PMC_FIXTURE_H
#define PMC_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Write root/rel (making its directories) holding `content` and a newline:
 * fixture sysfs trees. */
static inline void t_put(const char *root, const char *rel, const char *content)
{
	char path[512], dir[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	snprintf(dir, sizeof(dir), "%s", path);
	for (char *p = dir + strlen(root) + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fprintf(f, "%s\n", content);
	fclose(f);
}

#endif
