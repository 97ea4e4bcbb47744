/* SPDX-License-Identifier: MIT */
/*
 * The libraries a case ran with, as budget files record them: the line's
 * form read and written back, a malformed line refused with file:line by
 * every reader (the case's libraries, a budget lookup, hwdb check), the
 * writer keeping every other line, and who a file is (soname, the dpkg
 * package that owns it, from a database made here).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <errno.h>
#include <limits.h>
#include <sys/stat.h>

#include <pmcheck/pmcheck.h>

#include "../t.h"

#define BUILD_ID "build-id:a2f37366bc9782b9306773fd6318838fbae5ad5d"

T_CASE(lines_read_and_written_back)
{
	const char *dir = t_tmpdir("library"), *file = "budgets/any/s.ini";
	char path[PATH_MAX];
	struct pmc_library libs[2] = {
		{ "libexpat.so.1", BUILD_ID, "libexpat1", "2.5.0-1+deb12u1", 0 },
		{ "libplugin.so", "fnv1a64:0123456789abcdef", "", "", 0 },
	}, *got = NULL;
	struct pmc_error err;
	size_t n = 0;
	const char *text;

	snprintf(path, sizeof(path), "%s/budgets/any/s.ini", dir);
	t_write(dir, file, "; kept\n[other]\nwork = calls:f = 1\nlibrary:libc.so.6 = " BUILD_ID "\n\n"
		  "[t]\nparse = calls:malloc = 16 ; calibrated\nlibrary:libold.so.2 = " BUILD_ID
		  "\n; a comment in the case\n\n[last]\nx = calls:g = 2\n");
	T_CHECK(pmc_hwdb_write_libraries(dir, "any", "s", "t", libs, 2, &err) == 0, "%s",
		err.message);
	text = t_read(dir, file);
	T_CHECK(text && !strcmp(text,
				"; kept\n[other]\nwork = calls:f = 1\nlibrary:libc.so.6 = " BUILD_ID "\n\n"
				"[t]\nparse = calls:malloc = 16 ; calibrated\n; a comment in the case\n"
				"library:libexpat.so.1 = " BUILD_ID " package:libexpat1=2.5.0-1+deb12u1\n"
				"library:libplugin.so = fnv1a64:0123456789abcdef\n\n[last]\nx = calls:g = 2\n"),
		"the case's libraries replaced after its lines, the others kept:\n%s", text);
	T_CHECK(pmc_hwdb_libraries(path, "t", &got, &n, &err) == 0 && n == 2, "read back: %zu", n);
	T_CHECK(!strcmp(got[0].name, "libexpat.so.1") && !strcmp(got[0].id, BUILD_ID) &&
			!strcmp(got[0].package, "libexpat1") &&
			!strcmp(got[0].version, "2.5.0-1+deb12u1") && got[0].line == 9,
		"as written: %s %s %s %s :%d", got[0].name, got[0].id, got[0].package,
		got[0].version, got[0].line);
	T_CHECK(!got[1].package[0] && !got[1].version[0] && got[1].line == 10,
		"no package: \"%s\" \"%s\"", got[1].package, got[1].version);
	free(got);
	T_CHECK(pmc_hwdb_libraries(path, "nocase", &got, &n, &err) == 0 && n == 0 && !got,
		"a case without libraries: none");
	/* A case not in the file yet gets a section; a second write is no change. */
	T_CHECK(pmc_hwdb_write_libraries(dir, "any", "s", "new", libs, 1, &err) == 0 &&
			pmc_hwdb_write_libraries(dir, "any", "s", "new", libs, 1, &err) == 0,
		"%s", err.message);
	text = t_read(dir, file);
	T_CHECK(strstr(text, "x = calls:g = 2\n\n[new]\nlibrary:libexpat.so.1 = ") &&
			strstr(text, "[new]") == strrchr(text, '[') - 0 &&
			!strstr(strstr(text, "[new]") + 40, "library:libexpat"),
		"a new section at the end, once:\n%s", text);
	T_CHECK(pmc_hwdb_write_libraries(dir, "any", "s", "t", NULL, 0, &err) == 0 &&
			!strstr(t_read(dir, file), "libplugin"),
		"no libraries: the lines go");
	libs[0].package[0] = 'X'; /* not a package name: refused, the file left */
	T_CHECK(pmc_hwdb_write_libraries(dir, "any", "s", "t", libs, 1, &err) == -EINVAL &&
			strstr(err.message, "libexpat.so.1"),
		"a library that cannot be a line is refused by name: %s", err.message);
}

T_CASE(malformed_lines_named_with_file_and_line)
{
	static const struct {
		const char *line, *what;
	} table[] = {
		{ "library:libexpat.so.1 = a2f37366bc97", "build-id:HEX or fnv1a64:HEX" },
		{ "library:libexpat.so.1 = build-id:XYZ", "hexadecimal" },
		{ "library:libexpat.so.1 = build-id:", "build-id:HEX or fnv1a64:HEX" },
		{ "library:libexpat.so.1 = fnv1a64:0123", "16 lower-case" },
		{ "library:libexpat.so.1 = " BUILD_ID " pkg:libexpat1=2", "package:NAME=VERSION" },
		{ "library:libexpat.so.1 = " BUILD_ID " package:libexpat1", "package:NAME=VERSION" },
		{ "library:libexpat.so.1 = " BUILD_ID " package:LibExpat=2", "lower-case" },
		{ "library:libexpat.so.1 = " BUILD_ID " package:libexpat1=", "lower-case" },
		{ "library:libexpat.so.1 = " BUILD_ID " package:a=1 package:b=2", "second package" },
		{ "library: = " BUILD_ID, "it is empty" },
		{ "library:lib[x].so = " BUILD_ID, "= : ; # [ ]" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const char *dir = t_tmpdir("library"), *dirs[1] = { dir };
		char path[PATH_MAX], text[512], where[PATH_MAX + 16];
		struct pmc_budget_key key = { "s", "t", "parse", "calls:malloc", "perf", "x" };
		struct pmc_library *got = NULL;
		struct pmc_budget b;
		struct pmc_hwdb *db;
		struct pmc_error err;
		size_t n = 0, budgets;

		snprintf(path, sizeof(path), "%s/budgets/any/s.ini", dir);
		snprintf(text, sizeof(text), "[t]\nparse = calls:malloc = 16\n%s\n", table[i].line);
		t_write(dir, "budgets/any/s.ini", text);
		snprintf(where, sizeof(where), "%s:3: ", path);
		T_CHECK(pmc_hwdb_libraries(path, "t", &got, &n, &err) == PMC_E_SYNTAX && !got &&
				strstr(err.message, where) && strstr(err.message, table[i].what) &&
				strstr(err.message, "calibrate again, or delete the line"),
			"%s: reading the case's libraries: \"%s\"", table[i].line, err.message);
		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0, "%s", err.message);
		T_CHECK(pmc_hwdb_budget(db, &key, &b, &err) == PMC_E_SYNTAX &&
				strstr(err.message, where),
			"%s: a budget lookup in that file refuses it too: \"%s\"", table[i].line,
			err.message);
		T_CHECK(pmc_hwdb_check(db, &budgets, &err) != 0 && strstr(err.message, where),
			"%s: hwdb check names it: \"%s\"", table[i].line, err.message);
		pmc_hwdb_free(db);
	}
	{
		const char *dir = t_tmpdir("library"), *dirs[1] = { dir };
		char path[PATH_MAX];
		struct pmc_hwdb *db;
		struct pmc_error err;
		size_t budgets, builtin;

		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0, "%s", err.message);
		pmc_hwdb_check(db, &builtin, &err);
		pmc_hwdb_free(db);
		snprintf(path, sizeof(path), "%s/budgets/any/s.ini", dir);
		t_write(dir, "budgets/any/s.ini", "library:libc.so.6 = " BUILD_ID "\n");
		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0 &&
				pmc_hwdb_check(db, &budgets, &err) != 0 &&
				strstr(err.message, "s.ini:1: ") &&
				strstr(err.message, "library line outside a [test] section") &&
				!strstr(err.message, BUILD_ID),
			"outside a section: %s", err.message);
		pmc_hwdb_free(db);
		t_write(dir, "budgets/any/s.ini", "[t]\nlibrary:libc.so.6 = " BUILD_ID "\nlibrary:libc.so.6 = " BUILD_ID "\n");
		T_CHECK(pmc_hwdb_open(&db, dirs, 1, &err) == 0 &&
				pmc_hwdb_check(db, &budgets, &err) != 0 &&
				strstr(err.message, ":3: [t] library:libc.so.6 is given twice (the first is at line 2") &&
				budgets == builtin,
			"given twice: %s (%zu budgets, %zu without the file: a library line is none)",
			err.message, budgets, builtin);
		pmc_hwdb_free(db);
	}
}

/* A dpkg database of two packages: a multi-arch library recorded under /lib
 * (as Debian 12's are) and a package without an architecture suffix that
 * records /usr/lib; the status file says their versions. */
static const char *fake_dpkg(const char *dir, const char *lib_a, const char *lib_b)
{
	static char admin[PATH_MAX];
	char text[2 * PATH_MAX + 64];

	snprintf(admin, sizeof(admin), "%s/dpkg", dir);
	snprintf(text, sizeof(text), "/.\n/lib\n%s\n", lib_a);
	t_write(dir, "dpkg/info/libfoo1:amd64.list", text);
	snprintf(text, sizeof(text), "/usr/lib/x\n%s\n", lib_b);
	t_write(dir, "dpkg/info/bar.list", text);
	t_write(dir, "dpkg/info/libfoo1:amd64.md5sums", "not a list\n");
	t_write(dir, "dpkg/status",
		"Package: libfoo1\nStatus: install ok installed\nArchitecture: i386\nVersion: 9.9\n\n"
		"Package: libfoo1\nStatus: install ok installed\nArchitecture: amd64\n"
		"Multi-Arch: same\nVersion: 1:2.7.1-1~bpo12+1\n\n"
		"Package: bar\nArchitecture: all\nVersion: 0.1\n");
	return admin;
}

T_CASE(packages_from_the_dpkg_database)
{
	const char *dir = t_tmpdir("library"), *admin;
	char a[PATH_MAX], b[PATH_MAX], link[PATH_MAX], none[PATH_MAX];
	const char *paths[3];
	struct pmc_library out[3];

	snprintf(a, sizeof(a), "%s/lib/libfoo.so.1.2", dir);
	snprintf(b, sizeof(b), "%s/usr/lib/libbar.so", dir);
	snprintf(link, sizeof(link), "%s/lib/libfoo.so.1", dir);
	snprintf(none, sizeof(none), "%s/lib/libnone.so", dir);
	t_write(dir, "lib/libfoo.so.1.2", "x");
	t_write(dir, "lib/libnone.so", "x");
	T_CHECK(symlink(a, link) == 0, "symlink %s", link);
	/* bar's list names its file with /usr before the path it is loaded
	 * by, as Debian 13 records /usr/lib/... loaded as /lib/... */
	{
		char recorded[PATH_MAX + 8];

		snprintf(recorded, sizeof(recorded), "/usr%s", b);
		admin = fake_dpkg(dir, a, recorded);
	}
	setenv("DPKG_ADMINDIR", admin, 1);
	paths[0] = link; /* found by the file it links to */
	paths[1] = b;
	paths[2] = none;
	memset(out, 0, sizeof(out));
	T_CHECK(pmc_libraries_packages(paths, out, 3) == 0, "read");
	T_CHECK(!strcmp(out[0].package, "libfoo1") && !strcmp(out[0].version, "1:2.7.1-1~bpo12+1"),
		"the amd64 stanza's version, through the link: %s %s", out[0].package,
		out[0].version);
	T_CHECK(!strcmp(out[1].package, "bar") && !strcmp(out[1].version, "0.1"),
		"a package without an architecture suffix, the last stanza: %s %s", out[1].package,
		out[1].version);
	T_CHECK(!out[2].package[0] && !out[2].version[0], "no package owns it: %s", out[2].package);
	setenv("DPKG_ADMINDIR", "/nonexistent/dpkg", 1);
	T_CHECK(pmc_libraries_packages(paths, out, 3) == 0 && !out[0].package[0],
		"no database: no package, no error");
	unsetenv("DPKG_ADMINDIR");
}

T_CASE(sonames)
{
	char self[PATH_MAX];
	const char *paths[2] = { NULL, self };
	struct pmc_library out[2];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	Dl_info libc;

	/* The file this process's libc was loaded from, whatever the path: a
	 * function no sanitizer intercepts (ASan's fclose is libasan's). */
	T_CHECK(dladdr((void *)&gnu_get_libc_version, &libc) && libc.dli_fname && len > 0,
		"dladdr(gnu_get_libc_version)");
	self[len] = '\0';
	paths[0] = libc.dli_fname;
	memset(out, 0, sizeof(out));
	pmc_libraries_identify(paths, out, 2);
	T_CHECK(!strcmp(out[0].name, "libc.so.6"), "libc's soname (%s): %s", paths[0], out[0].name);
	T_CHECK(!strcmp(out[1].name, "test_library"), "a program has none: its file name: %s",
		out[1].name);
}

int main(int argc, char **argv)
{
	return t_main(argc, argv);
}
