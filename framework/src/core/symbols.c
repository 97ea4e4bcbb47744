/* SPDX-License-Identifier: MIT */
/*
 * Symbol lookup in the objects loaded into this process, for calls:SYMBOL
 * (uprobes need the object's path and the function's *file offset*) and
 * mem:SYMBOL (breakpoints need the run-time address).
 *
 * Order: the main program, then shared objects in the order the dynamic
 * linker loaded them, which is the order it resolves symbols in.  Inside an
 * object, .symtab is preferred to .dynsym (it also holds static functions),
 * and a global definition beats a weak one, which beats a local one.
 *
 * A symbol's file offset is derived from the loaded PT_LOAD segment that
 * contains it: offset = (address - load bias) - p_vaddr + p_offset.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <pmcheck/event.h>

#include "core_int.h"

struct pmc__elf_hit {
	uint64_t value; /* st_value (link-time address) */
	int type;       /* STT_* */
	int rank;       /* 3 global, 2 weak, 1 local */
	/* A C++ name (ns::cls::fn) that several functions answer to --
	 * overloads, const and non-const members, template instances: the
	 * mangled names of two of them, for the error. */
	int ambiguous;
	char first[160], second[160];
	/* A compiler clone of the function (see clone_base) seen while the
	 * function itself was not: for the not-found message. */
	char clone[160];
};

/*
 * gcc names the pieces it makes of a function NAME.WORD[.N]...: a call of
 * the function enters none of them, or not every time, so a calls: event
 * counts the function's own symbol and never one of these.
 */
static const struct {
	const char *word, *what, *why;
} clone_words[] = {
	/* -freorder-blocks-and-partition: the unlikely paths (a throw, an
	 * abort), jumped to from inside the function. */
	{ "cold", "the cold part", "the paths gcc moved out of the function, which a call never enters" },
	/* Partial inlining: callers inline the head and call the rest. */
	{ "part", "the outlined part", "the body gcc split off, which callers that inline the function's head reach only sometimes" },
	{ "isra", "a copy with rewritten parameters (IPA-SRA)", "a copy only some callers call" },
	{ "constprop", "a copy for constant arguments", "a copy only some callers call" },
};

/* The length of the function's name in a clone's symbol ("parse" of
 * "parse.isra.0.cold"), with the piece it is in *what and *why (the cold
 * part wins: it is never an entry); 0 for a name that is no clone. */
static size_t clone_base(const char *name, const char **what, const char **why)
{
	size_t base = 0;

	for (const char *dot = strchr(name, '.'); dot; dot = strchr(dot + 1, '.')) {
		for (size_t i = 0; i < sizeof(clone_words) / sizeof(clone_words[0]); i++) {
			size_t n = strlen(clone_words[i].word);

			if (strncmp(dot + 1, clone_words[i].word, n) != 0 ||
			    (dot[1 + n] != '\0' && dot[1 + n] != '.'))
				continue;
			if (dot == name)
				return 0;
			if (!base || i == 0) {
				if (what)
					*what = clone_words[i].what;
				if (why)
					*why = clone_words[i].why;
			}
			if (!base)
				base = (size_t)(dot - name);
		}
	}
	return base;
}

/* What a user writes after calls: for the function whose symbol is the
 * first n bytes of `symbol`, and how messages show it: a C++ function
 * demangled ("ns::parse" and "ns::parse(char const*)"), a C one as is
 * ("parse" and "parse(...)").  The mangled name when the demangled one is no
 * calls: name (an operator, a lambda). */
static void function_names(const char *symbol, size_t n, char *event, size_t esize, char *shown,
			   size_t ssize)
{
	char base[PMC_EVENT_NAME_MAX];
	char *d;

	snprintf(base, sizeof(base), "%.*s", (int)n, symbol);
	snprintf(event, esize, "%s", base);
	snprintf(shown, ssize, "%s(...)", base);
	if (strncmp(base, "_Z", 2) != 0 || !(d = pmc__demangle(base)))
		return;
	snprintf(shown, ssize, "%s", d);
	{
		size_t start = 0, end = 0, i;
		int depth = 0, ok = 1;

		/* "ns::parse(char const*)", "void ns::fn<int>(int)": the
		 * qualified name ends at the first '(' outside <...>; a template
		 * instance's return type ends at a space outside them. */
		for (i = 0; d[i] && !(d[i] == '(' && depth == 0); i++) {
			if (d[i] == '<')
				depth++;
			else if (d[i] == '>')
				depth--;
			else if (d[i] == ' ' && depth == 0)
				start = i + 1;
		}
		end = i;
		if (end > start && d[end - 1] == '>') {
			for (depth = 0; end > start; end--) {
				depth += d[end - 1] == '>' ? 1 : d[end - 1] == '<' ? -1 : 0;
				if (depth == 0) {
					end--;
					break;
				}
			}
		}
		for (i = start; i < end; i++)
			ok = ok && (d[i] == '_' || d[i] == ':' || (d[i] >= 'a' && d[i] <= 'z') ||
				    (d[i] >= 'A' && d[i] <= 'Z') || (d[i] >= '0' && d[i] <= '9'));
		if (ok && end > start)
			snprintf(event, esize, "%.*s", (int)(end - start), d + start);
	}
	free(d);
}

int pmc__symbol_clone_check(const char *name, const char *object, struct pmc_error *err)
{
	const char *what = NULL, *why = NULL;
	char event[PMC_EVENT_NAME_MAX], shown[256];
	size_t n = clone_base(name, &what, &why);

	if (!n)
		return 0;
	function_names(name, n, event, sizeof(event), shown, sizeof(shown));
	return pmc__fail(err, PMC_E_NO_SYMBOL, name, -1,
			 "\"%s\" names %s of %s, %s; count the function itself: calls:%s%s%s", name,
			 what, shown, why, event, object && *object ? "@" : "",
			 object ? object : "");
}

/* Does the mangled symbol name the C++ function `want` (qualified, without
 * parameters): its demangled form is want followed by the parameter list
 * or template arguments. */
static int cxx_names(const char *mangled, const char *want)
{
	const char *last = strrchr(want, ':') + 1;
	size_t n = strlen(want);
	char *d;
	int hit;

	/* The unqualified name is spelled out in the mangled one. */
	if (strncmp(mangled, "_Z", 2) != 0 || !strstr(mangled, last))
		return 0;
	if (!(d = pmc__demangle(mangled)))
		return 0;
	hit = !strncmp(d, want, n) && (d[n] == '(' || d[n] == '<');
	/* A template instance's demangled form starts with its return type:
	 * "void std::__introsort_loop<...>(...)". */
	for (const char *q = d; !hit && (q = strstr(q, want)) != NULL; q++) {
		if (q > d && q[-1] == ' ' && (q[n] == '(' || q[n] == '<') &&
		    !memchr(d, '(', (size_t)(q - d)))
			hit = 1;
	}
	free(d);
	return hit;
}

struct find_ctx {
	const char *name;
	struct pmc__elf_hit *hit;
};

static int find_cb(void *ctx, const char *nm, const ElfW(Sym) *y)
{
	struct find_ctx *c = ctx;
	int bind = ELF64_ST_BIND(y->st_info), type = ELF64_ST_TYPE(y->st_info), rank;

	if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_OBJECT && type != STT_NOTYPE)
		return 0;
	{
		size_t base = clone_base(nm, NULL, NULL);

		/* A clone is never the function's entry; kept to say that the
		 * function was only cloned, when its own symbol is absent. */
		if (base) {
			char fn[sizeof(c->hit->clone)];

			snprintf(fn, sizeof(fn), "%.*s", (int)base, nm);
			if (!c->hit->clone[0] &&
			    (pmc__is_cxx_name(c->name) ? cxx_names(fn, c->name) : !strcmp(fn, c->name)))
				snprintf(c->hit->clone, sizeof(c->hit->clone), "%s", nm);
			return 0;
		}
	}
	if (pmc__is_cxx_name(c->name)) {
		if (type != STT_FUNC || y->st_value == 0 || !cxx_names(nm, c->name))
			return 0;
		if (c->hit->rank && y->st_value != c->hit->value) {
			if (!c->hit->ambiguous)
				snprintf(c->hit->second, sizeof(c->hit->second), "%s", nm);
			c->hit->ambiguous = 1;
			return 0;
		}
		if (!c->hit->rank)
			snprintf(c->hit->first, sizeof(c->hit->first), "%s", nm);
	} else if (strcmp(nm, c->name) != 0) {
		return 0;
	}
	rank = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
	if (rank > c->hit->rank) {
		c->hit->value = y->st_value;
		c->hit->type = type;
		c->hit->rank = rank;
	}
	return 1;
}

/* Find `name` among the defined symbols of one ELF file. 1 found, 0 not,
 * negative on an unreadable file. */
static int elf_find(const char *path, const char *name, struct pmc__elf_hit *hit)
{
	struct find_ctx c = { name, hit };
	int rc = pmc__elf_symbols(path, find_cb, &c);

	return rc < 0 ? rc : hit->rank > 0;
}

/* The file offset of link-time address vaddr in an ELF file that is not
 * loaded, from its PT_LOAD program headers: 1 found, 0 not, negative on an
 * unreadable file. */
static int file_offset_of(const char *path, uint64_t vaddr, uint64_t *off)
{
	ElfW(Ehdr) eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_phentsize != sizeof(ElfW(Phdr))) {
		close(fd);
		return PMC_E_ELF;
	}
	for (unsigned i = 0; i < eh.e_phnum && !found; i++) {
		ElfW(Phdr) ph;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
			break;
		if (ph.p_type == PT_LOAD && vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_memsz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			found = 1;
		}
	}
	close(fd);
	return found;
}

/* calls:SYMBOL@/path/to/file where the file is not loaded here (another
 * program, as `pmcheck stat` counts): its own symbols and headers. */
static int resolve_in_file(const char *file, const char *symbol, char *path, size_t path_size,
			   uint64_t *file_offset, struct pmc__elf_hit *ambiguous, char *clone,
			   size_t clone_size)
{
	struct pmc__elf_hit hit = { 0 };
	struct stat st;

	if (!strchr(file, '/') || stat(file, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (elf_find(file, symbol, &hit) != 1) {
		if (hit.clone[0] && !clone[0])
			pmc__copy(clone, clone_size, hit.clone);
		return 0;
	}
	if (hit.ambiguous) {
		*ambiguous = hit;
		return 0;
	}
	if (hit.type == STT_GNU_IFUNC || file_offset_of(file, hit.value, file_offset) != 1)
		return 0;
	return pmc__copy(path, path_size, file) == 0;
}

struct pmc__resolve_ctx {
	const char *symbol, *object;
	char *path;
	size_t path_size;
	uint64_t file_offset, address;
	int found, status, ifunc;
	uint64_t want_addr; /* address-to-object mode when nonzero */
	struct pmc__elf_hit ambiguous; /* a C++ name several functions answer to */
	char ambiguous_in[PMC_EVENT_PATH_MAX];
	char clone[160]; /* a clone of the function, when it alone was seen */
};

int pmc__object_path(const struct dl_phdr_info *info, char *buf, size_t size)
{
	ssize_t n;

	if (info->dlpi_name && info->dlpi_name[0])
		return pmc__copy(buf, size, info->dlpi_name);
	n = readlink("/proc/self/exe", buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return PMC_E_TOO_LONG;
	buf[n] = '\0';
	return 0;
}

/* File offset of link-time address `vaddr` inside this object, if mapped. */
static int vaddr_to_offset(const struct dl_phdr_info *info, uint64_t vaddr,
			   uint64_t *off)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && vaddr >= ph->p_vaddr &&
		    vaddr < ph->p_vaddr + ph->p_memsz) {
			*off = vaddr - ph->p_vaddr + ph->p_offset;
			return 1;
		}
	}
	return 0;
}

static int resolve_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pmc__resolve_ctx *c = data;
	struct pmc__elf_hit hit = { 0 };
	char path[PMC_EVENT_PATH_MAX];
	uint64_t off;
	int rc;

	(void)size;
	if (pmc__object_path(info, path, sizeof(path)) != 0)
		return 0;
	if (c->want_addr) {
		/* Map a run-time address back to its object and file offset. */
		if (c->want_addr < info->dlpi_addr ||
		    !vaddr_to_offset(info, c->want_addr - info->dlpi_addr, &off))
			return 0;
		c->status = pmc__copy(c->path, c->path_size, path);
		c->file_offset = off;
		c->found = 1;
		return 1;
	}
	if (c->object && !strstr(path, c->object))
		return 0;
	rc = elf_find(path, c->symbol, &hit);
	if (rc == 0 && hit.clone[0] && !c->clone[0])
		pmc__copy(c->clone, sizeof(c->clone), hit.clone);
	if (rc <= 0)
		return 0; /* unreadable (vdso, deleted file): keep looking */
	if (hit.ambiguous) {
		c->ambiguous = hit;
		pmc__copy(c->ambiguous_in, sizeof(c->ambiguous_in), path);
		return 1;
	}
	if (hit.type == STT_GNU_IFUNC) {
		/* The symbol's value is the resolver, not the code that runs:
		 * ask the dynamic linker what it bound the name to. */
		c->ifunc = 1;
		return 1;
	}
	c->address = info->dlpi_addr + hit.value;
	if (!vaddr_to_offset(info, hit.value, &off))
		return 0;
	c->status = pmc__copy(c->path, c->path_size, path);
	c->file_offset = off;
	c->found = 1;
	return 1;
}

/*
 * calls:F@libz.so.1 before the program dlopen()s libz.so.1: the file the
 * dynamic linker would load, from its search path for this program
 * (LD_LIBRARY_PATH, the program's RUNPATH, the system directories), found
 * without loading it.  A uprobe is set on the file, so it counts the
 * library once it is mapped.  1 found (the path in file), 0 not.
 */
static int search_path_file(const char *name, char *file, size_t size)
{
	Dl_serinfo head, *si = NULL;
	void *self;
	int found = 0;

	if (strchr(name, '/') || !(self = dlopen(NULL, RTLD_LAZY)))
		return 0;
	if (dlinfo(self, RTLD_DI_SERINFOSIZE, &head) == 0 && (si = malloc(head.dls_size)) != NULL) {
		*si = head;
		if (dlinfo(self, RTLD_DI_SERINFOSIZE, si) == 0 && dlinfo(self, RTLD_DI_SERINFO, si) == 0) {
			for (unsigned i = 0; i < si->dls_cnt && !found; i++) {
				struct stat st;

				found = snprintf(file, size, "%s/%s", si->dls_serpath[i].dls_name, name) <
						(int)size &&
					stat(file, &st) == 0 && S_ISREG(st.st_mode);
			}
		}
	}
	free(si);
	dlclose(self);
	return found;
}

int pmc_symbol_resolve(const char *symbol, const char *object, char *path,
		       size_t path_size, uint64_t *file_offset,
		       uint64_t *address, struct pmc_error *err)
{
	struct pmc__resolve_ctx c;

	memset(&c, 0, sizeof(c));
	c.symbol = symbol;
	c.object = object && object[0] ? object : NULL;
	c.path = path;
	c.path_size = path_size;
	dl_iterate_phdr(resolve_cb, &c);
	if (!c.found && !c.ambiguous.ambiguous && c.object &&
	    resolve_in_file(c.object, symbol, path, path_size, &c.file_offset, &c.ambiguous,
			    c.clone, sizeof(c.clone))) {
		c.found = 1;
		c.address = 0; /* not loaded in this process */
	}
	if (!c.found && !c.ambiguous.ambiguous && c.object) {
		char file[PMC_EVENT_PATH_MAX];

		if (search_path_file(c.object, file, sizeof(file)) &&
		    resolve_in_file(file, symbol, path, path_size, &c.file_offset, &c.ambiguous,
				    c.clone, sizeof(c.clone))) {
			c.found = 1;
			c.address = 0; /* not loaded yet */
		}
	}
	if (c.ambiguous.ambiguous && !c.ambiguous_in[0])
		pmc__copy(c.ambiguous_in, sizeof(c.ambiguous_in), c.object);
	if (c.ambiguous.ambiguous) {
		char *d1 = pmc__demangle(c.ambiguous.first), *d2 = pmc__demangle(c.ambiguous.second);
		int rc = pmc__fail(err, PMC_E_NO_SYMBOL, symbol, -1,
				   "\"%s\" names several functions in %s (overloads, const and non-const members, or template instances), e.g. %s (%s) and %s (%s); count one by its mangled name: calls:%s",
				   symbol, c.ambiguous_in, d1 ? d1 : "?", c.ambiguous.first, d2 ? d2 : "?",
				   c.ambiguous.second, c.ambiguous.first);

		free(d1);
		free(d2);
		return rc;
	}
	if (c.ifunc) {
		void *impl = dlsym(RTLD_DEFAULT, symbol);

		if (!impl)
			return pmc__fail(err, PMC_E_NO_SYMBOL, symbol, -1,
					 "\"%s\" is an IFUNC whose implementation the dynamic linker did not bind; name the implementation symbol instead",
					 symbol);
		c.want_addr = (uint64_t)(uintptr_t)impl;
		c.address = c.want_addr;
		dl_iterate_phdr(resolve_cb, &c);
	}
	if (c.status)
		return pmc__fail(err, c.status, symbol, -1,
				 "path of the object defining \"%s\" is longer than %zu bytes",
				 symbol, path_size - 1);
	if (!c.found && c.clone[0]) {
		const char *what = "a copy";

		clone_base(c.clone, &what, NULL);
		return pmc__fail(err, PMC_E_NO_SYMBOL, symbol, -1,
				 "\"%s\" has no symbol of its own: gcc left only %s of it, %s, which a call does not always enter; keep the function whole (__attribute__((noipa)), or build with -fno-ipa-sra -fno-partial-inlining) and count it again",
				 symbol, what, c.clone);
	}
	if (!c.found) {
		if (c.object)
			return pmc__fail(err, PMC_E_NO_SYMBOL, symbol, -1,
					 "symbol \"%s\" is not defined by any loaded object whose path contains \"%s\", nor by a file of that path or of that name in the dynamic linker's search path; check the name with nm -D, or drop @%s",
					 symbol, c.object, c.object);
		return pmc__fail(err, PMC_E_NO_SYMBOL, symbol, -1,
				 "symbol \"%s\" is not defined by the program or any loaded shared object; check the spelling (nm/nm -D%s), and make sure the function is not inlined or stripped",
				 symbol, pmc__is_cxx_name(symbol) ? (pmc__can_demangle() ? " -C" : "; libstdc++ is not here to demangle C++ names, so give the mangled name") : "");
	}
	if (file_offset)
		*file_offset = c.file_offset;
	if (address)
		*address = c.address;
	return 0;
}
