/* SPDX-License-Identifier: MIT */
/*
 * Addresses back to functions, for sampled instruction pointers: which
 * loaded object holds an address (its PT_LOAD segments, from
 * dl_iterate_phdr), then which function symbol of that object's file
 * covers it.  An object's functions are read from its file once, at the
 * first address that falls in it, and kept sorted by address.  A stripped
 * library (Debian's are) keeps only its exported functions; when its
 * separate debug file is installed (found by the object's GNU build ID
 * under /usr/lib/debug/.build-id/, as gdb and perf look), its full symbol
 * table names the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/sampling.h>

#include "core_int.h"

struct sym {
	uint64_t start, size; /* link-time address */
	const char *name;     /* in names */
	int rank;             /* 3 global, 2 weak, 1 local */
};

struct object {
	char *path;
	char build_id[41];       /* hex, or "" */
	uint64_t bias, lo, hi;   /* run-time [lo, hi) of its PT_LOAD segments */
	bool loaded;             /* symbols read (or found unreadable) */
	struct sym *syms;
	size_t nsyms, cap;
	char *names;
	size_t names_len, names_cap;
};

struct pmc_symtab {
	struct object *obj;
	size_t n;
};

/* The GNU build ID of a loaded object, from its PT_NOTE segments in
 * memory, as hex; "" when it has none. */
static void build_id_of(const struct dl_phdr_info *info, char *hex, size_t size)
{
	hex[0] = '\0';
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const unsigned char *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)(const void *)p;
			const unsigned char *name = p + sizeof(*nh);
			const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);

			if (desc + nh->n_descsz > end)
				break;
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && nh->n_descsz * 2 < size &&
			    nh->n_descsz >= 2) {
				for (size_t k = 0; k < nh->n_descsz; k++)
					snprintf(hex + 2 * k, 3, "%02x", desc[k]);
				return;
			}
			p = desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
}

/* ---- the objects loaded, with their identities ---------------------------------- */

void pmc_objects_free(struct pmc_object *o, size_t n)
{
	for (size_t i = 0; o && i < n; i++) {
		free(o[i].path);
		free(o[i].id);
	}
	free(o);
}

/* FNV-1a (64 bits) of a file's content: an identity for an object built
 * without a build ID. */
static int content_hash(const char *path, char *out, size_t size)
{
	unsigned char buf[65536];
	unsigned long long h = 0xcbf29ce484222325ull;
	ssize_t got;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			h = (h ^ buf[i]) * 0x100000001b3ull;
	close(fd);
	snprintf(out, size, "fnv1a64:%016llx", h);
	return got < 0 ? -EIO : 0;
}

struct objects {
	struct pmc_object *v;
	size_t n;
	int rc;
};

static int object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct objects *c = data;
	char path[4096], id[72], ident[96];
	struct pmc_object *grown;

	(void)size;
	if ((c->n > 0 && (!info->dlpi_name || !info->dlpi_name[0])) ||
	    pmc__object_path(info, path, sizeof(path)) != 0)
		return 0;
	if (strstr(path, "vgpreload_") || !strncmp(path, "linux-vdso", 10) ||
	    !strncmp(path, "linux-gate", 10))
		return 0;
	build_id_of(info, id, sizeof(id));
	if (id[0])
		snprintf(ident, sizeof(ident), "build-id:%s", id);
	else if (content_hash(path, ident, sizeof(ident)) != 0)
		return 0; /* nothing to know it by */
	grown = realloc(c->v, (c->n + 1) * sizeof(*grown));
	if (!grown) {
		c->rc = -ENOMEM;
		return 1;
	}
	c->v = grown;
	c->v[c->n].path = strdup(path);
	c->v[c->n].id = strdup(ident);
	if (!c->v[c->n].path || !c->v[c->n].id) {
		free(c->v[c->n].path);
		free(c->v[c->n].id);
		c->rc = -ENOMEM;
		return 1;
	}
	c->n++;
	return 0;
}

int pmc_objects_loaded(struct pmc_object **out, size_t *n)
{
	struct objects c = { 0 };

	dl_iterate_phdr(object_cb, &c);
	if (c.rc) {
		pmc_objects_free(c.v, c.n);
		c.v = NULL;
		c.n = 0;
	}
	*out = c.v;
	*n = c.n;
	return c.rc;
}

static int scan_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct pmc_symtab *t = data;
	char path[4096], id[41];
	uint64_t lo = UINT64_MAX, hi = 0;
	struct object *grown;

	(void)size;
	if (pmc__object_path(info, path, sizeof(path)) != 0)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < lo)
			lo = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
			hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	if (lo >= hi)
		return 0;
	for (size_t i = 0; i < t->n; i++)
		if (t->obj[i].lo == lo && t->obj[i].bias == info->dlpi_addr)
			return 0; /* seen at an earlier scan */
	build_id_of(info, id, sizeof(id));
	grown = realloc(t->obj, (t->n + 1) * sizeof(*t->obj));
	if (!grown)
		return 1;
	t->obj = grown;
	memset(&t->obj[t->n], 0, sizeof(t->obj[0]));
	t->obj[t->n].path = strdup(path);
	t->obj[t->n].bias = info->dlpi_addr;
	t->obj[t->n].lo = lo;
	t->obj[t->n].hi = hi;
	memcpy(t->obj[t->n].build_id, id, sizeof(id));
	if (t->obj[t->n].path)
		t->n++;
	return 0;
}

int pmc_symtab_open(struct pmc_symtab **out, struct pmc_error *err)
{
	struct pmc_symtab *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return pmc__fail(err, -ENOMEM, NULL, -1, "out of memory for the symbol table");
	dl_iterate_phdr(scan_cb, t);
	*out = t;
	return 0;
}

void pmc_symtab_close(struct pmc_symtab *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++) {
		free(t->obj[i].path);
		free(t->obj[i].syms);
		free(t->obj[i].names);
	}
	free(t->obj);
	free(t);
}

/* Function symbols only; names are copied (the file is unmapped after). */
static int collect_cb(void *ctx, const char *name, const ElfW(Sym) *y)
{
	struct object *o = ctx;
	int type = ELF64_ST_TYPE(y->st_info), bind = ELF64_ST_BIND(y->st_info);
	size_t len = strlen(name) + 1;

	if ((type != STT_FUNC && type != STT_GNU_IFUNC) || !*name)
		return 0;
	if (o->nsyms == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 256;
		struct sym *g = realloc(o->syms, cap * sizeof(*g));

		if (!g)
			return 0;
		o->syms = g;
		o->cap = cap;
	}
	if (o->names_len + len > o->names_cap) {
		size_t cap = o->names_cap ? 2 * o->names_cap : 4096;
		char *g;

		while (cap < o->names_len + len)
			cap *= 2;
		g = realloc(o->names, cap);
		if (!g)
			return 0;
		o->names = g;
		o->names_cap = cap;
	}
	memcpy(o->names + o->names_len, name, len);
	/* Offsets until the names stop moving; pointers after the walk. */
	o->syms[o->nsyms].name = (const char *)(uintptr_t)o->names_len;
	o->names_len += len;
	o->syms[o->nsyms].start = y->st_value;
	o->syms[o->nsyms].size = y->st_size;
	o->syms[o->nsyms].rank = bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : 1;
	o->nsyms++;
	return 1; /* .symtab has functions: .dynsym adds nothing */
}

/* By address; at one address the best-ranked name first, then the
 * shortest (an alias like __memcpy_avx_unaligned against memcpy). */
static int by_start(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->rank != y->rank)
		return y->rank - x->rank;
	if (strlen(x->name) != strlen(y->name))
		return strlen(x->name) < strlen(y->name) ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void load_symbols(struct object *o)
{
	size_t n = 0;

	o->loaded = true;
	if (o->build_id[0]) {
		char debug[128];

		snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", o->build_id,
			 o->build_id + 2);
		if (access(debug, R_OK) == 0 && pmc__elf_symbols(debug, collect_cb, o) < 0)
			o->nsyms = 0;
	}
	if (o->nsyms == 0 && pmc__elf_symbols(o->path, collect_cb, o) < 0)
		o->nsyms = 0; /* vdso, a deleted file: addresses stay unnamed */
	for (size_t i = 0; i < o->nsyms; i++)
		o->syms[i].name = o->names + (uintptr_t)o->syms[i].name;
	qsort(o->syms, o->nsyms, sizeof(*o->syms), by_start);
	/* One entry per address: the first (best) name. */
	for (size_t i = 0; i < o->nsyms; i++)
		if (n == 0 || o->syms[n - 1].start != o->syms[i].start)
			o->syms[n++] = o->syms[i];
	o->nsyms = n;
}

static struct object *object_at(struct pmc_symtab *t, uint64_t addr)
{
	for (size_t i = 0; i < t->n; i++)
		if (addr >= t->obj[i].lo && addr < t->obj[i].hi)
			return &t->obj[i];
	return NULL;
}

int pmc_symtab_lookup(struct pmc_symtab *t, uint64_t addr, struct pmc_symbol_at *out)
{
	struct object *o;
	uint64_t link;
	size_t lo = 0, hi;

	memset(out, 0, sizeof(*out));
	if (!t)
		return 0;
	o = object_at(t, addr);
	if (!o) {
		/* Loaded since the table was made (dlopen): look again. */
		dl_iterate_phdr(scan_cb, t);
		o = object_at(t, addr);
	}
	if (!o)
		return 0;
	if (!o->loaded)
		load_symbols(o);
	out->object = o->path;
	link = addr - o->bias;
	out->offset = link;
	/* The last symbol starting at or below the address. */
	hi = o->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].start <= link)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	{
		const struct sym *s = &o->syms[lo - 1];
		/* A size-0 symbol (hand-written assembly) covers up to the next. */
		uint64_t end = s->size ? s->start + s->size
				       : lo < o->nsyms ? o->syms[lo].start : s->start + 1;

		if (link >= end)
			return 0;
		out->function = s->name;
		out->start = o->bias + s->start;
		out->offset = link - s->start;
	}
	return 1;
}
