/* SPDX-License-Identifier: MIT */
/*
 * The probes' bottom layer: a fact with its "how", a file's integer, a
 * tool's first line of output, and a tool's --version remembered per build
 * of the tool.  Everything else in probes/ sits on top of this file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/machine.h>

#include "probe_int.h"
#include "util/child.h"
#include "util/util_int.h"

json_t *pmc__probe_fact(json_t *value, const char *how)
{
	return json_pack("{s:o, s:s}", "value", value ? value : json_null(), "how", how);
}

json_t *pmc__probe_file_int(const char *path)
{
	char buf[64], how[256];

	snprintf(how, sizeof(how), "read %s", path);
	if (pmc__read_text(path, buf, sizeof(buf)) < 0) {
		snprintf(how, sizeof(how), "%s: %s", path, strerror(errno));
		return pmc__probe_fact(json_null(), how);
	}
	return pmc__probe_fact(json_integer(strtoll(buf, NULL, 0)), how);
}

/* Run `argv` with a time limit, capture the first line of its output.
 * -ENOENT when the tool is not installed. */
int pmc__probe_run_tool(char *const argv[], char *line, size_t size, unsigned timeout_s)
{
	struct pmc__child c;
	int rc = pmc__child_spawn(&c, argv, NULL, true, 0);

	line[0] = '\0';
	if (rc)
		return rc;
	pmc__child_read(&c, line, size, pmc__child_now() + timeout_s);
	line[strcspn(line, "\n")] = '\0';
	pmc__child_kill(&c);
	return 0;
}

/* ---- a tool's --version, remembered --------------------------------------------- */

static int cache_path(char *out, size_t size)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (xdg && *xdg)
		return snprintf(out, size, "%s/pmcheck/tool-versions", xdg) >= (int)size ? -1 : 0;
	if (home && *home)
		return snprintf(out, size, "%s/.cache/pmcheck/tool-versions", home) >= (int)size ? -1 : 0;
	return -1;
}

/* The cache: one "KEY\tLINE" per line, KEY = "path inode size mtime". */
static char *cache_read(void)
{
	char path[4096];
	char *text = NULL;
	size_t len;

	if (cache_path(path, sizeof(path)) || pmc__read_file(path, &text, &len))
		return NULL;
	return text;
}

static int cache_lookup(const char *text, const char *key, char *line, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, kl) && p[kl] == '\t') {
			const char *v = p + kl + 1;

			snprintf(line, size, "%.*s", (int)strcspn(v, "\n"), v);
			return line[0] ? 0 : -1;
		}
	return -1;
}

/* Keep every other binary's line and this one's new line; written
 * atomically, so two probes at once leave one whole file or the other. */
static void cache_store(const char *path_of_tool, const char *key, const char *line)
{
	char path[4096], dir[4096];
	char *old = cache_read(), *buf = NULL;
	size_t cap = 0, pl = strlen(path_of_tool);
	FILE *f;

	if (cache_path(path, sizeof(path)) || strchr(line, '\n') || strchr(line, '\t'))
		goto out;
	f = open_memstream(&buf, &cap);
	if (!f)
		goto out;
	for (const char *p = old; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		size_t n = strcspn(p, "\n");

		if (!(n > pl && !strncmp(p, path_of_tool, pl) && p[pl] == ' '))
			fprintf(f, "%.*s\n", (int)n, p);
	}
	fprintf(f, "%s\t%s\n", key, line);
	fclose(f);
	snprintf(dir, sizeof(dir), "%s", path);
	*strrchr(dir, '/') = '\0';
	if (!pmc__mkdir_p(dir))
		pmc_write_file_atomic(path, buf, strlen(buf));
out:
	free(buf);
	free(old);
}

void pmc__probe_tool_start(struct pmc__tool_query *q, const char *name, int fresh)
{
	struct stat st;
	char *text;

	memset(q, 0, sizeof(*q));
	q->rc = pmc__find_on_path(name, q->path, sizeof(q->path));
	if (q->rc)
		return;
	if (!realpath(q->path, q->real) || stat(q->real, &st)) {
		q->rc = -ENOENT;
		return;
	}
	snprintf(q->key, sizeof(q->key), "%s %llu %lld %lld.%09ld", q->real, (unsigned long long)st.st_ino,
		 (long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	text = fresh ? NULL : cache_read();
	q->cached = text && !cache_lookup(text, q->key, q->line, sizeof(q->line));
	free(text);
	if (!q->cached) {
		char *argv[] = { q->path, "--version", NULL };

		if (pmc__child_spawn(&q->child, argv, NULL, true, 0)) {
			q->rc = -ENOENT;
			return;
		}
		q->running = 1;
	}
}

int pmc__probe_tool_finish(struct pmc__tool_query *q, unsigned timeout_s)
{
	if (q->rc || !q->running)
		return q->rc;
	q->running = 0;
	pmc__child_read(&q->child, q->line, sizeof(q->line), pmc__child_now() + timeout_s);
	q->line[strcspn(q->line, "\n")] = '\0';
	pmc__child_kill(&q->child);
	if (q->line[0])
		cache_store(q->real, q->key, q->line);
	return 0;
}
