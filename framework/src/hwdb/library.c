/* SPDX-License-Identifier: MIT */
/*
 * The libraries a case ran with, as calibration records them in the
 * case's section of a budget file, one line per shared object (lookup.c
 * reads them, writer.c writes them):
 *
 *   library:libexpat.so.1 = build-id:a2f37366... package:libexpat1=2.5.0-1+deb12u1
 *
 * Who an object is: its soname (DT_SONAME of the file; the file name when it
 * has none), its build ID (or a hash of its content), and the Debian
 * package that installed the file, read from dpkg's database without
 * running dpkg: the owner from info/PACKAGE.list, the version from status.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pmcheck/hwdb.h>

#include "hwdb_int.h"

/* ---- one line ------------------------------------------------------------------------ */

bool pmc__library_line(const char *name)
{
	return !strncmp(name, PMC__LIBRARY_PREFIX, strlen(PMC__LIBRARY_PREFIX));
}

static bool all_of(const char *s, size_t len, const char *set)
{
	for (size_t i = 0; i < len; i++)
		if (!s[i] || !strchr(set, s[i]))
			return false;
	return true;
}

#define HEX "0123456789abcdef"
/* Debian's package names and versions (deb-version(7)), lower and upper case. */
#define PACKAGE_CHARS "abcdefghijklmnopqrstuvwxyz0123456789+-."
#define VERSION_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.+~:-"

/* "build-id:HEX" (2 to 128 hex digits) or "fnv1a64:HEX" (16). */
static const char *id_why(const char *id, size_t len)
{
	if (len > 9 && !strncmp(id, "build-id:", 9))
		return len - 9 > 128 || !all_of(id + 9, len - 9, HEX)
			       ? "the build ID is not 2 to 128 lower-case hexadecimal digits"
			       : NULL;
	if (len > 8 && !strncmp(id, "fnv1a64:", 8))
		return len - 8 != 16 || !all_of(id + 8, len - 8, HEX)
			       ? "the content hash is not 16 lower-case hexadecimal digits"
			       : NULL;
	return "it does not start with the identity, build-id:HEX or fnv1a64:HEX";
}

int pmc__library_parse(const char *name, const char *value, struct pmc_library *out, char *why,
		       size_t size)
{
	const char *soname = name + strlen(PMC__LIBRARY_PREFIX), *p = value, *what;
	size_t len;

	memset(out, 0, sizeof(*out));
	if ((what = pmc__budget_name_why(soname))) {
		char shown[PMC__HWDB_SHOWN_MAX * 4 + 32];

		snprintf(why, size, "library name \"%s\" %s", pmc__hwdb_shown(shown, sizeof(shown), soname), what);
		return -1;
	}
	snprintf(out->name, sizeof(out->name), "%s", soname);
	len = strcspn(p, " \t");
	if ((what = id_why(p, len))) {
		snprintf(why, size, "%s", what);
		return -1;
	}
	if (len >= sizeof(out->id)) {
		snprintf(why, size, "the identity is longer than %zu characters", sizeof(out->id) - 1);
		return -1;
	}
	memcpy(out->id, p, len);
	for (p = pmc__skip_blank(p + len); *p; p = pmc__skip_blank(p + len)) {
		const char *eq;

		len = strcspn(p, " \t");
		eq = memchr(p, '=', len);
		if (strncmp(p, "package:", 8) || !eq) {
			snprintf(why, size, "the field after the identity is not package:NAME=VERSION");
			return -1;
		}
		if (out->package[0]) {
			snprintf(why, size, "a second package: field");
			return -1;
		}
		if (eq == p + 8 || (size_t)(eq - p - 8) >= sizeof(out->package) ||
		    !all_of(p + 8, (size_t)(eq - p - 8), PACKAGE_CHARS) || eq + 1 == p + len ||
		    (size_t)(p + len - eq - 1) >= sizeof(out->version) ||
		    !all_of(eq + 1, (size_t)(p + len - eq - 1), VERSION_CHARS)) {
			snprintf(why, size,
				 "the package field: a package name is lower-case letters, digits and + - . and a version letters, digits and . + ~ : -");
			return -1;
		}
		snprintf(out->package, sizeof(out->package), "%.*s", (int)(eq - p - 8), p + 8);
		snprintf(out->version, sizeof(out->version), "%.*s", (int)(p + len - eq - 1), eq + 1);
	}
	return 0;
}

int pmc__library_format(const struct pmc_library *l, char *buf, size_t size)
{
	char why[200];
	struct pmc_library back;
	char name[PMC_LIBRARY_NAME_MAX + 16], value[512];

	if (l->package[0])
		snprintf(value, sizeof(value), "%s package:%s=%s", l->id, l->package, l->version);
	else
		snprintf(value, sizeof(value), "%s", l->id);
	snprintf(name, sizeof(name), PMC__LIBRARY_PREFIX "%s", l->name);
	/* What is written must read back as it was. */
	if (pmc__library_parse(name, value, &back, why, sizeof(why)))
		return -EINVAL;
	return snprintf(buf, size, "%s = %s", name, value) < (int)size ? 0 : -ENAMETOOLONG;
}

/* ---- identifying loaded objects --------------------------------------------------------- */

static const char *file_part(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

void pmc_libraries_identify(const char *const *paths, struct pmc_library *out, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (pmc__elf_soname(paths[i], out[i].name, sizeof(out[i].name)) != 1)
			snprintf(out[i].name, sizeof(out[i].name), "%s", file_part(paths[i]));
}

/* The names dpkg may have recorded for a loaded file: the path, the file it
 * links to, and each with /usr added or taken away (Debian 12 records
 * /lib/x86_64-linux-gnu/..., 13 /usr/lib/...; both are one file since
 * merged /usr). */
#define NCAND 4
struct wanted {
	char cand[NCAND][PATH_MAX];
	size_t len[NCAND];
	int n;
	char *owner;    /* "libexpat1:amd64": its .list file's name */
};

static void add_cand(struct wanted *w, const char *p)
{
	for (int pass = 0; pass < 2 && w->n < NCAND; pass++) {
		char alt[PATH_MAX];
		const char *c = p;

		if (pass == 1) {
			if (!strncmp(p, "/usr/", 5))
				c = p + 4;
			else if (snprintf(alt, sizeof(alt), "/usr%s", p) < (int)sizeof(alt))
				c = alt;
			else
				continue;
		}
		if (*c != '/' || strlen(c) >= PATH_MAX)
			continue;
		strcpy(w->cand[w->n], c);
		w->len[w->n] = strlen(c);
		w->n++;
	}
}

/* One package's file list against every object still without an owner. */
static void scan_list(const char *text, size_t len, const char *pkg, struct wanted *w, size_t n,
		      size_t *left)
{
	for (const char *p = text, *end = text + len; p < end && *left;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		for (size_t i = 0; i < n; i++)
			for (int k = 0; !w[i].owner && k < w[i].n; k++)
				if (w[i].len[k] == l && !memcmp(w[i].cand[k], p, l)) {
					w[i].owner = strdup(pkg);
					--*left;
					break;
				}
		p += l + 1;
	}
}

/* A stanza of dpkg's status file has ended: its version goes to each
 * object that package (of that architecture) owns. */
static void stanza_end(const char *pkg, const char *arch, const char *version,
		       const struct wanted *w, struct pmc_library *out, size_t n)
{
	for (size_t i = 0; pkg[0] && version[0] && i < n; i++) {
		const char *colon = w[i].owner ? strchr(w[i].owner, ':') : NULL;
		size_t plen = !w[i].owner ? 0 : colon ? (size_t)(colon - w[i].owner) : strlen(w[i].owner);

		if (w[i].owner && strlen(pkg) == plen && !strncmp(w[i].owner, pkg, plen) &&
		    (!colon || !strcmp(colon + 1, arch)) && !out[i].version[0]) {
			snprintf(out[i].package, sizeof(out[i].package), "%s", pkg);
			snprintf(out[i].version, sizeof(out[i].version), "%s", version);
		}
	}
}

/* The Version of each owner from dpkg's status file. */
static void versions(const char *admin, const struct wanted *w, struct pmc_library *out, size_t n)
{
	char path[PATH_MAX], *text = NULL, pkg[128] = "", arch[64] = "", version[128] = "";
	size_t len;

	if (pmc__snprintf(path, sizeof(path), "%s/status", admin) < 0 ||
	    pmc__read_file(path, &text, &len))
		return;
	for (char *p = text, *end = text + len; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l == 0) {
			stanza_end(pkg, arch, version, w, out, n);
			pkg[0] = arch[0] = version[0] = '\0';
		} else if (l > 9 && !strncmp(p, "Package: ", 9)) {
			snprintf(pkg, sizeof(pkg), "%.*s", (int)(l - 9), p + 9);
		} else if (l > 14 && !strncmp(p, "Architecture: ", 14)) {
			snprintf(arch, sizeof(arch), "%.*s", (int)(l - 14), p + 14);
		} else if (l > 9 && !strncmp(p, "Version: ", 9)) {
			snprintf(version, sizeof(version), "%.*s", (int)(l - 9), p + 9);
		}
		p += l + 1;
	}
	stanza_end(pkg, arch, version, w, out, n); /* the last, without a blank line after it */
	free(text);
}

int pmc_libraries_packages(const char *const *paths, struct pmc_library *out, size_t n)
{
	const char *admin = getenv("DPKG_ADMINDIR");
	char info[PATH_MAX];
	struct wanted *w;
	struct dirent *e;
	size_t left = n;
	DIR *d;

	if (!admin || !*admin)
		admin = "/var/lib/dpkg";
	for (size_t i = 0; i < n; i++)
		out[i].package[0] = out[i].version[0] = '\0';
	if (n == 0 || pmc__snprintf(info, sizeof(info), "%s/info", admin) < 0 ||
	    !(d = opendir(info)))
		return 0; /* no dpkg here: no package owns anything */
	w = calloc(n, sizeof(*w));
	if (!w) {
		closedir(d);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		char real[PATH_MAX];

		add_cand(&w[i], paths[i]);
		if (realpath(paths[i], real) && strcmp(real, paths[i]))
			add_cand(&w[i], real);
	}
	/* One pass over every package's file list, for all n at once. */
	while (left && (e = readdir(d))) {
		size_t nl = strlen(e->d_name);
		char path[PATH_MAX], pkg[256], *text;
		size_t len;

		if (nl <= 5 || strcmp(e->d_name + nl - 5, ".list") || nl - 5 >= sizeof(pkg) ||
		    pmc__snprintf(path, sizeof(path), "%s/%s", info, e->d_name) < 0 ||
		    pmc__read_file(path, &text, &len))
			continue;
		snprintf(pkg, sizeof(pkg), "%.*s", (int)(nl - 5), e->d_name);
		scan_list(text, len, pkg, w, n, &left);
		free(text);
	}
	closedir(d);
	if (left < n)
		versions(admin, w, out, n);
	for (size_t i = 0; i < n; i++)
		free(w[i].owner);
	free(w);
	return 0;
}
