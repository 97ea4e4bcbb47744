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

/* An ELF file of this process's class mapped whole, with its section
 * headers checked to lie inside it: 0, or negative (PMC_E_ELF, -errno). */
struct elf_file {
	unsigned char *map;
	size_t size;
	const ElfW(Ehdr) *eh;
	const ElfW(Shdr) *sh;
};

static int elf_open(const char *path, struct elf_file *f)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
		close(fd);
		return PMC_E_ELF;
	}
	f->size = (size_t)st.st_size;
	f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (f->map == MAP_FAILED)
		return -ENOMEM;
	f->eh = (const ElfW(Ehdr) *)f->map;
	if (memcmp(f->eh->e_ident, ELFMAG, SELFMAG) != 0 ||
	    f->eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
	    f->eh->e_shentsize != sizeof(ElfW(Shdr)) || f->eh->e_shoff == 0 ||
	    f->eh->e_shoff > f->size ||
	    (f->size - f->eh->e_shoff) / sizeof(ElfW(Shdr)) < f->eh->e_shnum) {
		munmap(f->map, f->size);
		return PMC_E_ELF;
	}
	f->sh = (const ElfW(Shdr) *)(f->map + f->eh->e_shoff);
	return 0;
}

/* Section i's bytes lie inside the file. */
static int elf_section_ok(const struct elf_file *f, size_t i)
{
	return i < f->eh->e_shnum && f->sh[i].sh_offset <= f->size &&
	       f->sh[i].sh_size <= f->size - f->sh[i].sh_offset;
}

/*
 * Call fn for each defined symbol of one ELF file: .symtab first, then
 * .dynsym unless fn returned 1 for a symbol of .symtab (found what it
 * wanted there).  0 walked, negative on an unreadable or non-ELF file.
 */
int pmc__elf_symbols(const char *path, pmc__elf_sym_fn fn, void *ctx)
{
	struct elf_file f;
	int done = 0, rc = elf_open(path, &f);

	if (rc)
		return rc;
	for (int pass = 0; pass < 2 && !done; pass++) {
		unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;

		for (size_t i = 0; i < f.eh->e_shnum; i++) {
			const ElfW(Shdr) *s = &f.sh[i], *strs;
			const ElfW(Sym) *syms;
			size_t nsyms, k;

			if (s->sh_type != want || s->sh_entsize != sizeof(ElfW(Sym)) ||
			    !elf_section_ok(&f, i) || !elf_section_ok(&f, s->sh_link))
				continue;
			strs = &f.sh[s->sh_link];
			syms = (const ElfW(Sym) *)(f.map + s->sh_offset);
			nsyms = s->sh_size / sizeof(ElfW(Sym));
			for (k = 0; k < nsyms; k++) {
				const ElfW(Sym) *y = &syms[k];
				const char *nm;

				if (y->st_shndx == SHN_UNDEF || y->st_value == 0 ||
				    y->st_name >= strs->sh_size)
					continue;
				nm = (const char *)f.map + strs->sh_offset + y->st_name;
				if (strnlen(nm, strs->sh_size - y->st_name) == strs->sh_size - y->st_name)
					continue;
				if (fn(ctx, nm, y) == 1)
					done = 1;
			}
		}
	}
	munmap(f.map, f.size);
	return 0;
}

/*
 * The DT_SONAME of an ELF file: the .dynamic section's entry, an offset
 * into the string table the section links to (sh_link), which is how a
 * file on disk names it; the in-memory copy of .dynamic holds addresses
 * that glibc relocates on some architectures and not on others.  1 with
 * out filled, 0 when the file has none (a program, a plugin linked without
 * -soname), negative when it cannot be read as ELF.
 */
int pmc__elf_soname(const char *path, char *out, size_t size)
{
	struct elf_file f;
	int found = 0, rc = elf_open(path, &f);

	if (rc)
		return rc;
	for (size_t i = 0; i < f.eh->e_shnum && !found; i++) {
		const ElfW(Shdr) *s = &f.sh[i], *strs;
		const ElfW(Dyn) *d;

		if (s->sh_type != SHT_DYNAMIC || !elf_section_ok(&f, i) ||
		    !elf_section_ok(&f, s->sh_link))
			continue;
		strs = &f.sh[s->sh_link];
		d = (const ElfW(Dyn) *)(f.map + s->sh_offset);
		for (size_t k = 0; k < s->sh_size / sizeof(*d) && d[k].d_tag != DT_NULL; k++) {
			const char *name;

			if (d[k].d_tag != DT_SONAME || d[k].d_un.d_val >= strs->sh_size)
				continue;
			name = (const char *)f.map + strs->sh_offset + d[k].d_un.d_val;
			if (strnlen(name, strs->sh_size - d[k].d_un.d_val) < strs->sh_size - d[k].d_un.d_val &&
			    strlen(name) < size) {
				strcpy(out, name);
				found = 1;
			}
			break;
		}
	}
	munmap(f.map, f.size);
	return found;
}
