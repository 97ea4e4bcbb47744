/* SPDX-License-Identifier: MIT */
/*
 * calls:FUNC on the sim backend.  A uprobe counts entries to a function's
 * first instruction; callgrind counts every call (and every jump into
 * another function) exactly, per callee, in each dump's calls= lines.  The
 * event is resolved as on perf (pmc_symbol_resolve: the object's path and
 * the function's file offset, IFUNCs bound), and the dump's callees are
 * matched to it by object and by name: callgrind names a function by one
 * of the symbols at its address, so every symbol there is an alias, with
 * glibc's versions ("memcpy@GLIBC_2.2.5") and callgrind's recursion levels
 * ("msort'2") set aside.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/counters.h>
#include <pmcheck/event.h>
#include <pmcheck/sim.h>

#include "sim_int.h"

#define MAX_ALIASES 16
#define MAX_TARGETS (2 * PMC_MAX_EVENTS)

struct call_target {
	char object[PATH_MAX]; /* the object's real path */
	uint64_t offset;
	char names[MAX_ALIASES][256]; /* C++: demangled, as callgrind names them */
	int nnames;
	uint64_t total; /* calls in every dump since it was watched */
};

static struct call_target targets[MAX_TARGETS];
static size_t ntargets;

/* "memcpy@GLIBC_2.2.5" -> "memcpy"; "msort'2" -> "msort". */
static size_t base_length(const char *name)
{
	size_t n = strcspn(name, "@");
	const char *q = memchr(name, '\'', n);

	if (q && q[1] >= '0' && q[1] <= '9' && strspn(q + 1, "0123456789") == (size_t)(name + n - q - 1))
		n = (size_t)(q - name);
	return n;
}

static void add_alias(struct call_target *t, const char *name)
{
	size_t n = base_length(name);

	if (n == 0 || n >= sizeof(t->names[0]) || t->nnames == MAX_ALIASES)
		return;
	for (int i = 0; i < t->nnames; i++)
		if (strlen(t->names[i]) == n && !strncmp(t->names[i], name, n))
			return;
	memcpy(t->names[t->nnames], name, n);
	t->names[t->nnames++][n] = '\0';
}

struct alias_ctx {
	struct call_target *t;
	ElfW(Phdr) ph[32];
	int nph;
};

static int alias_cb(void *ctx, const char *name, const ElfW(Sym) *y)
{
	struct alias_ctx *a = ctx;
	int type = ELF64_ST_TYPE(y->st_info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return 0;
	for (int i = 0; i < a->nph; i++)
		if (y->st_value >= a->ph[i].p_vaddr && y->st_value < a->ph[i].p_vaddr + a->ph[i].p_memsz &&
		    y->st_value - a->ph[i].p_vaddr + a->ph[i].p_offset == a->t->offset) {
			char *demangled = pmc__demangle(name);

			add_alias(a->t, name);
			/* callgrind demangles C++ names: "pugi::xml_node::
			 * append_attribute(char const*)". */
			if (demangled)
				add_alias(a->t, demangled);
			free(demangled);
			break;
		}
	return 0; /* every table: .symtab and .dynsym name it differently */
}

/* The GNU build ID of an ELF file, from its PT_NOTE segments, as hex. */
static int file_build_id(int fd, const ElfW(Ehdr) *eh, char *hex, size_t size)
{
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		ElfW(Phdr) ph;
		unsigned char note[512];
		size_t at = 0, len;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh->e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph) ||
		    ph.p_type != PT_NOTE)
			continue;
		len = ph.p_filesz < sizeof(note) ? ph.p_filesz : sizeof(note);
		if (pread(fd, note, len, (off_t)ph.p_offset) != (ssize_t)len)
			continue;
		while (at + sizeof(ElfW(Nhdr)) <= len) {
			ElfW(Nhdr) nh;
			size_t name = at + sizeof(nh), desc;

			memcpy(&nh, note + at, sizeof(nh));
			desc = name + ((nh.n_namesz + 3) & ~3u);
			if (desc + nh.n_descsz > len)
				break;
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(note + name, "GNU", 4) && nh.n_descsz * 2 + 1 <= size) {
				for (unsigned k = 0; k < nh.n_descsz; k++)
					sprintf(hex + 2 * k, "%02x", note[desc + k]);
				return 0;
			}
			at = desc + ((nh.n_descsz + 3) & ~3u);
		}
	}
	return -ENOENT;
}

/*
 * Every name callgrind may give the function at the target's file offset:
 * the object's symbols there (.symtab, .dynsym), those of its separate
 * debug file (/usr/lib/debug/.build-id/, which valgrind reads too: glibc's
 * __strlen_sse2 is named only there), and, for a function no symbol
 * names, callgrind's "0x<link-time address>".
 */
static void find_aliases(struct call_target *t)
{
	struct alias_ctx a = { t, { { 0 } }, 0 };
	char id[130] = "", debug[PATH_MAX], at[32];
	ElfW(Ehdr) eh;
	int fd = open(t->object, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    !memcmp(eh.e_ident, ELFMAG, SELFMAG) && eh.e_phentsize == sizeof(ElfW(Phdr))) {
		for (unsigned i = 0; i < eh.e_phnum && a.nph < 32; i++)
			if (pread(fd, &a.ph[a.nph], sizeof(a.ph[0]),
				  (off_t)(eh.e_phoff + i * sizeof(a.ph[0]))) == (ssize_t)sizeof(a.ph[0]) &&
			    a.ph[a.nph].p_type == PT_LOAD)
				a.nph++;
		file_build_id(fd, &eh, id, sizeof(id));
	}
	close(fd);
	pmc__elf_symbols(t->object, alias_cb, &a);
	if (strlen(id) > 2) {
		snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
		if (access(debug, R_OK) == 0)
			pmc__elf_symbols(debug, alias_cb, &a);
	}
	for (int i = 0; i < a.nph; i++)
		if (t->offset >= a.ph[i].p_offset && t->offset < a.ph[i].p_offset + a.ph[i].p_filesz) {
			snprintf(at, sizeof(at), "0x%016llx",
				 (unsigned long long)(t->offset - a.ph[i].p_offset + a.ph[i].p_vaddr));
			add_alias(t, at);
			break;
		}
}

/* The symbol the event names: "calls:malloc@libc" -> "malloc". */
static void requested_name(const struct pmc_event_spec *s, char *out, size_t size)
{
	const char *p = strncmp(s->name, "calls:", 6) ? s->name : s->name + 6;

	snprintf(out, size, "%.*s", (int)strcspn(p, "@"), p);
}

static int target_of(const struct pmc_event_spec *s, struct call_target *t, struct pmc_error *err)
{
	char wanted[128];

	memset(t, 0, sizeof(*t));
	if (!realpath(s->path, t->object))
		return pmc__fail(err, -errno, s->name, -1,
				 "\"%s\": cannot find %s, the object the function lives in: %s", s->name,
				 s->path, strerror(errno));
	t->offset = s->probe_offset;
	requested_name(s, wanted, sizeof(wanted));
	add_alias(t, wanted);
	find_aliases(t);
	return 0;
}

int pmc__cg_calls_watch(const struct pmc_event_spec *s, unsigned *slot, struct pmc_error *err)
{
	struct call_target t;
	int rc = target_of(s, &t, err);

	if (rc)
		return rc;
	for (size_t i = 0; i < ntargets; i++)
		if (targets[i].offset == t.offset && !strcmp(targets[i].object, t.object)) {
			*slot = (unsigned)i;
			return 0;
		}
	if (ntargets == MAX_TARGETS)
		return pmc__fail(err, PMC_E_TOO_MANY, s->name, -1,
				 "\"%s\": more than %d functions counted with calls: in one process on the sim backend",
				 s->name, MAX_TARGETS);
	targets[ntargets] = t;
	*slot = (unsigned)ntargets++;
	return 0;
}

uint64_t pmc__cg_calls_total(unsigned slot)
{
	return slot < ntargets ? targets[slot].total : 0;
}

/* Callgrind's object paths, resolved once each. */
static const char *real_object(const char *path)
{
	static struct {
		char path[PATH_MAX], real[PATH_MAX];
	} seen[32];
	static size_t nseen, next;
	size_t i;

	for (i = 0; i < nseen; i++)
		if (!strcmp(seen[i].path, path))
			return seen[i].real;
	i = nseen < 32 ? nseen++ : next++ % 32;
	snprintf(seen[i].path, sizeof(seen[i].path), "%s", path);
	if (!realpath(path, seen[i].real))
		snprintf(seen[i].real, sizeof(seen[i].real), "%s", path);
	return seen[i].real;
}

static int matches(const struct call_target *t, const struct pmc_sim_fn_cost *f)
{
	size_t n = base_length(f->name);

	if (strcmp(real_object(f->object), t->object))
		return 0;
	for (int i = 0; i < t->nnames; i++)
		if (strlen(t->names[i]) == n && !strncmp(t->names[i], f->name, n))
			return 1;
	return 0;
}

/* The calls of each target in a dump's text, added to totals[slot]. */
static int count_calls(const char *file, const char *text, size_t len, struct call_target *ts,
		       size_t nts, struct pmc_error *err)
{
	struct pmc_sim_fn_cost *f = NULL;
	size_t n = 0;
	int rc = pmc_sim_dump_functions(file, text, len, &f, &n, err);

	for (size_t i = 0; rc == 0 && i < n; i++)
		for (size_t k = 0; f[i].calls && k < nts; k++)
			if (matches(&ts[k], &f[i]))
				ts[k].total += f[i].calls;
	pmc_sim_functions_free(f, n);
	return rc;
}

int pmc__cg_calls_count(const char *file, const char *text, size_t len, struct pmc_error *err)
{
	return ntargets ? count_calls(file, text, len, targets, ntargets, err) : 0;
}

int pmc_sim_dump_calls(const char *file, const char *text, size_t len,
		       const struct pmc_event_spec *s, uint64_t *calls, struct pmc_error *err)
{
	struct call_target t;
	int rc = target_of(s, &t, err);

	*calls = 0;
	if (rc == 0)
		rc = count_calls(file, text, len, &t, 1, err);
	*calls = t.total;
	return rc;
}
