/* SPDX-License-Identifier: MIT */
/*
 * Runs a fuzz target's entry point over files and directories of inputs,
 * without libFuzzer: the kept corpora (and every crash once found) become
 * regression tests in the ordinary builds, the sanitizer build included.
 * usage: fuzz_X_replay PATH...   (exit 0 when every input ran)
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static size_t ran;

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf;
	long n;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		if (f)
			fclose(f);
		return -1;
	}
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		perror(path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	ran++;
	return 0;
}

static int run_path(const char *path)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int rc = 0;

	if (stat(path, &st) != 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return run_file(path);
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char sub[4096];

		if (e->d_name[0] == '.')
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		rc |= run_path(sub);
	}
	if (d)
		closedir(d);
	return rc;
}

int main(int argc, char **argv)
{
	int rc = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i]);
	printf("%zu inputs replayed\n", ran);
	return rc || ran == 0 ? 1 : 0;
}
