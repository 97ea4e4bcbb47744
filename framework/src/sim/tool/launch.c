/* SPDX-License-Identifier: MIT */
/*
 * The launcher of pmcheck's valgrind tool: what valgrind's own launcher
 * does for a tool in its library directory, for the tool beside this
 * program.  It sets VALGRIND_LAUNCHER (the core requires it, and removes
 * it from the program's environment) and runs the tool with the same
 * arguments and environment.  Not VALGRIND_LIB: the program would see it,
 * and an environment of another size moves the counts of code that reads
 * its environment (glibc's tunables, getenv).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static const char name[] = "/pmcheck-amd64-linux";
	char tool[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", tool, sizeof(tool) - sizeof(name));
	char *slash;

	(void)argc;
	if (n <= 0) {
		perror("pmcheck's valgrind launcher: /proc/self/exe");
		return 127;
	}
	tool[n] = '\0';
	slash = strrchr(tool, '/');
	if (!slash)
		return 127;
	memcpy(slash, name, sizeof(name));
	if (setenv("VALGRIND_LAUNCHER", PMCHECK_STOCK_LAUNCHER, 1)) {
		perror("pmcheck's valgrind launcher: setenv");
		return 127;
	}
	argv[0] = tool;
	execv(tool, argv);
	fprintf(stderr, "pmcheck's valgrind launcher: cannot run %s: %s\n", tool, strerror(errno));
	return 127;
}
