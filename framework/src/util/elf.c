/* SPDX-License-Identifier: MIT */
/*
 * ELF files and C++ names: each symbol of an ELF file, and libstdc++'s
 * demangler.  The bottom of the library: the counting core resolves
 * calls:/mem: events with these, and the sim backend's callgrind engine
 * names a function's every alias with them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util_int.h"

/*
 * C++ names.  The symbol tables hold mangled names (_ZN4pugi12xml_document
 * 11load_stringEPKcj); a user writes pugi::xml_document::load_string.  The
 * demangler is libstdc++'s __cxa_demangle, taken from the process when it
 * has one (every C++ program) or loaded once otherwise; without libstdc++
 * a qualified name finds nothing and the error says to use the mangled one.
 */
typedef char *(*pmc__demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static pmc__demangle_fn demangler(void)
{
	static pmc__demangle_fn fn;
	static int tried;
	void *sym;

	if (!tried) {
		void *h;

		tried = 1;
		sym = dlsym(RTLD_DEFAULT, "__cxa_demangle");
		if (!sym && (h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL)) != NULL)
			sym = dlsym(h, "__cxa_demangle");
		if (sym)
			memcpy(&fn, &sym, sizeof(fn));
	}
	return fn;
}

char *pmc__demangle(const char *mangled)
{
	pmc__demangle_fn fn;
	int status = -1;
	char *out;

	if (strncmp(mangled, "_Z", 2) != 0 || !(fn = demangler()))
		return NULL;
	out = fn(mangled, NULL, NULL, &status);
	if (status != 0) {
		free(out);
		return NULL;
	}
	return out;
}

int pmc__can_demangle(void)
{
	return demangler() != NULL;
}

int pmc__is_cxx_name(const char *name)
{
	return strstr(name, "::") != NULL;
}

/*
 * Call fn for each defined symbol of one ELF file: .symtab first, then
 * .dynsym unless fn returned 1 for a symbol of .symtab (found what it
 * wanted there).  0 walked, negative on an unreadable or non-ELF file.
 */
int pmc__elf_symbols(const char *path, pmc__elf_sym_fn fn, void *ctx)
{
	int fd, done = 0;
	struct stat st;
	unsigned char *map;
	const ElfW(Ehdr) *eh;
	size_t size, i;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return PMC_E_ELF;
	}
	size = (size_t)st.st_size;
	map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -ENOMEM;
	eh = (const ElfW(Ehdr) *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 ||
	    eh->e_shoff > size ||
	    (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum) {
		munmap(map, size);
		return PMC_E_ELF;
	}
	const ElfW(Shdr) *sh = (const ElfW(Shdr) *)(map + eh->e_shoff);
	for (int pass = 0; pass < 2 && !done; pass++) {
		unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;

		for (i = 0; i < eh->e_shnum; i++) {
			const ElfW(Shdr) *s = &sh[i], *strs;
			const ElfW(Sym) *syms;
			size_t nsyms, k;

			if (s->sh_type != want || s->sh_link >= eh->e_shnum ||
			    s->sh_entsize != sizeof(ElfW(Sym)) ||
			    s->sh_offset > size || s->sh_size > size - s->sh_offset)
				continue;
			strs = &sh[s->sh_link];
			if (strs->sh_offset > size || strs->sh_size > size - strs->sh_offset)
				continue;
			syms = (const ElfW(Sym) *)(map + s->sh_offset);
			nsyms = s->sh_size / sizeof(ElfW(Sym));
			for (k = 0; k < nsyms; k++) {
				const ElfW(Sym) *y = &syms[k];
				const char *nm;

				if (y->st_shndx == SHN_UNDEF || y->st_value == 0 ||
				    y->st_name >= strs->sh_size)
					continue;
				nm = (const char *)map + strs->sh_offset + y->st_name;
				if (strnlen(nm, strs->sh_size - y->st_name) == strs->sh_size - y->st_name)
					continue;
				if (fn(ctx, nm, y) == 1)
					done = 1;
			}
		}
	}
	munmap(map, size);
	return 0;
}

