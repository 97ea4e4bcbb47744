/* SPDX-License-Identifier: MIT */
/* Another libzstd.so.1 for realcode.library_moved (library_moved.py): the
 * same soname, from no package, doing other work.  Its ZSTD_* functions are
 * the installed library's (opened by its path, REALCODE_ZSTD), and its
 * ZSTD_decompress reads its input once more first: the counts of realcode's
 * zstd case move as a library update would move them. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *real_symbol(const char *name)
{
	static void *real;
	void *f;

	if (!real)
		real = dlopen(REALCODE_ZSTD, RTLD_NOW | RTLD_LOCAL);
	f = real ? dlsym(real, name) : NULL;
	if (!f) {
		fprintf(stderr, "zstd shim: %s from %s: %s (rebuild the shim against the installed libzstd)\n",
			name, REALCODE_ZSTD, dlerror());
		abort();
	}
	return f;
}

/* A function pointer from dlsym's object pointer, as POSIX allows. */
#define REAL(type, name, var)                   \
	type var;                               \
	do {                                    \
		void *p_ = real_symbol(name);   \
		memcpy(&var, &p_, sizeof(var)); \
	} while (0)

typedef size_t (*bound_fn)(size_t);
typedef unsigned (*is_error_fn)(size_t);
typedef size_t (*compress_fn)(void *, size_t, const void *, size_t, int);
typedef size_t (*decompress_fn)(void *, size_t, const void *, size_t);

size_t ZSTD_compressBound(size_t n);
unsigned ZSTD_isError(size_t code);
size_t ZSTD_compress(void *dst, size_t cap, const void *src, size_t n, int level);
size_t ZSTD_decompress(void *dst, size_t cap, const void *src, size_t n);

size_t ZSTD_compressBound(size_t n)
{
	REAL(bound_fn, "ZSTD_compressBound", f);
	return f(n);
}

unsigned ZSTD_isError(size_t code)
{
	REAL(is_error_fn, "ZSTD_isError", f);
	return f(code);
}

size_t ZSTD_compress(void *dst, size_t cap, const void *src, size_t n, int level)
{
	REAL(compress_fn, "ZSTD_compress", f);
	return f(dst, cap, src, n, level);
}

/* Where the extra read's sum goes, so that it is done. */
volatile unsigned realcode_zstd_shim_sink;

size_t ZSTD_decompress(void *dst, size_t cap, const void *src, size_t n)
{
	unsigned sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += ((const unsigned char *)src)[i];
	realcode_zstd_shim_sink = sum;
	REAL(decompress_fn, "ZSTD_decompress", f);
	return f(dst, cap, src, n);
}
