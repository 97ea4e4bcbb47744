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
#include <sys/types.h>
#include <unistd.h>

#include <pmcheck/reading.h>
#include <pmcheck/sim.h>

#include "sim_api.h"
#include "sim_harness.h"

#define MAX_ALIASES 16
#define MAX_TARGETS (2 * PMC_MAX_EVENTS)

struct pmc__cg_target {
	char object[PATH_MAX]; /* the object's real path */
	uint64_t offset;
	char names[MAX_ALIASES][256]; /* C++: demangled, as callgrind names them */
	int nnames;
	uint64_t total; /* calls in every dump since it was watched */
};

static struct pmc__cg_target targets[MAX_TARGETS];
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

static void add_alias(struct pmc__cg_target *t, const char *name)
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
	struct pmc__cg_target *t;
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
			/* callgrind runs with --demangle=no: C++ names are
			 * matched mangled, as the symbol tables give them,
			 * with nothing allocated to demangle them. */
			add_alias(a->t, name);
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
static void find_aliases(struct pmc__cg_target *t)
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

static int target_of(const struct pmc_event_spec *s, struct pmc__cg_target *t, struct pmc_error *err)
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
	struct pmc__cg_target t;
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

/*
 * Counting a dump's calls allocates nothing: this runs in the measured
 * process between two readings, and anything it left on the heap would
 * change the allocations the program makes next (measured: SQLite, zstd and
 * xz regions 1,000-12,000 instructions apart from pmcheck's tool when this
 * built a function table with realloc and strdup; and with the pid's
 * digits in the names, a different count for another pid).  Names are
 * compressed in a dump ("(id) name" once, "(id)" after), so what each id
 * matches is kept in static tables: for a function name, the targets that
 * have it as an alias; for an object, the targets that live in it.
 */
#define MAX_FN_IDS (1u << 17)
#define MAX_OB_IDS 4096u

static uint64_t fn_mask[MAX_FN_IDS], ob_mask[MAX_OB_IDS];

struct call_scan {
	struct pmc__cg_target *ts;
	size_t nts;
	uint32_t fn_used, ob_used; /* ids seen (tables cleared up to these) */
};

/* The targets whose aliases include name (n bytes, versions and recursion
 * levels set aside). */
static uint64_t name_mask(const struct call_scan *c, const char *name, size_t n)
{
	char copy[512];
	uint64_t m = 0;

	if (n >= sizeof(copy))
		return 0;
	memcpy(copy, name, n);
	copy[n] = '\0';
	n = base_length(copy);
	for (size_t k = 0; k < c->nts; k++)
		for (int i = 0; i < c->ts[k].nnames; i++)
			if (strlen(c->ts[k].names[i]) == n && !strncmp(c->ts[k].names[i], copy, n)) {
				m |= 1ull << k;
				break;
			}
	return m;
}

/* The targets that live in the object a dump names (n bytes). */
static uint64_t object_mask(const struct call_scan *c, const char *name, size_t n)
{
	char copy[PATH_MAX];
	const char *real;
	uint64_t m = 0;

	if (n >= sizeof(copy))
		return 0;
	memcpy(copy, name, n);
	copy[n] = '\0';
	real = real_object(copy);
	for (size_t k = 0; k < c->nts; k++)
		if (!strcmp(real, c->ts[k].object))
			m |= 1ull << k;
	return m;
}

/*
 * A compressed name after "fn=", "cfn=", "ob=" or "cob=": "(id) name"
 * defines id, "(id)" refers to it, a bare name has none.  *mask gets what
 * the name matches; 0, or -1 on a malformed or out-of-range id.
 */
static int scan_name(struct call_scan *c, const char *p, const char *e, int object, uint64_t *mask)
{
	uint64_t *table = object ? ob_mask : fn_mask;
	uint32_t limit = object ? MAX_OB_IDS : MAX_FN_IDS, *used = object ? &c->ob_used : &c->fn_used;
	unsigned long id = 0;

	while (p < e && *p == ' ')
		p++;
	if (p >= e || *p != '(') {
		*mask = object ? object_mask(c, p, (size_t)(e - p)) : name_mask(c, p, (size_t)(e - p));
		return 0;
	}
	for (p++; p < e && *p >= '0' && *p <= '9'; p++)
		id = id * 10 + (unsigned long)(*p - '0');
	if (p >= e || *p != ')' || id >= limit)
		return -1;
	for (p++; p < e && *p == ' '; p++)
		;
	if (id >= *used) {
		memset(table + *used, 0, (id + 1 - *used) * sizeof(*table));
		*used = (uint32_t)id + 1;
	}
	if (p < e)
		table[id] = object ? object_mask(c, p, (size_t)(e - p)) : name_mask(c, p, (size_t)(e - p));
	*mask = table[id];
	return 0;
}

/* The calls of each target in a dump's text, added to its total: every
 * calls= line whose callee (cfn=, in cob= or else the current ob=) is one. */
static int count_calls(const char *file, const char *text, size_t len, struct pmc__cg_target *ts,
		       size_t nts, struct pmc_error *err)
{
	struct call_scan c = { ts, nts, 0, 0 };
	const char *p = text, *end = text + len;
	uint64_t object = 0, callee_object = 0, callee = 0, m;
	int have_cob = 0, line = 0;

	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t l;
		int bad = 0;

		e = e ? e : end;
		l = (size_t)(e - p);
		line++;
		if (l >= 3 && !strncmp(p, "ob=", 3)) {
			bad = scan_name(&c, p + 3, e, 1, &object);
		} else if (l >= 4 && !strncmp(p, "cob=", 4)) {
			bad = scan_name(&c, p + 4, e, 1, &callee_object);
			have_cob = 1;
		} else if (l >= 3 && !strncmp(p, "fn=", 3)) {
			/* Defines the id for later cfn=(id) references. */
			bad = scan_name(&c, p + 3, e, 0, &m);
			have_cob = 0;
		} else if (l >= 4 && !strncmp(p, "cfn=", 4)) {
			bad = scan_name(&c, p + 4, e, 0, &m);
			callee = m & (have_cob ? callee_object : object);
			have_cob = 0;
		} else if (l >= 6 && !strncmp(p, "calls=", 6) && callee) {
			uint64_t n = 0;
			const char *q = p + 6;

			for (; q < e && *q >= '0' && *q <= '9'; q++)
				n = n * 10 + (uint64_t)(*q - '0');
			if (q == p + 6)
				bad = 1;
			for (size_t k = 0; k < nts; k++)
				if (callee & (1ull << k))
					ts[k].total += n;
		}
		if (bad)
			return pmc__fail(err, PMC_E_SYNTAX, file, line,
					 "%s:%d: cannot read \"%.*s\" (a malformed callgrind dump, or more than %u functions in one dump)",
					 file, line, (int)(l > 80 ? 80 : l), p, MAX_FN_IDS);
		p = e < end ? e + 1 : end;
	}
	return 0;
}

/*
 * Functions that ran in a dump's interval and that nothing called: a
 * signal handler entered by delivery.  callgrind leaves such a handler's
 * cost out of its summary: line (6,213 against 126,913 for one run) and
 * records no call for it, so no figure of that interval is what the
 * program executed.  A function on the stack when the interval began
 * still has a calls=0 line from its caller, and a new thread's functions
 * are called from its start, so neither is taken for one.  Per function
 * id: 1 ran (its own cost lines), 2 called (a cfn= names it).  The name of
 * the first such function goes to name; their number is returned.
 */
static unsigned char fn_seen[MAX_FN_IDS];

/*
 * The functions on the stack when callgrind began instrumenting (the
 * runner starts it at the first sim set, deep inside the case) were never
 * seen being called, and run in every interval: the process's first dump
 * names them, and they are not taken for handlers later.
 */
static struct {
	pid_t pid;
	char name[16][256];
	int n;
} roots;

/* The name given to function id at its definition "fn=(id) name" or
 * "cfn=(id) name". */
static void name_of_id(const char *text, const char *end, long id, char *name, size_t size)
{
	char want[32];
	int w = snprintf(want, sizeof(want), "(%ld) ", id);

	name[0] = '\0';
	for (const char *p = text; p < end;) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		int at = !strncmp(p, "fn=", 3) ? 3 : !strncmp(p, "cfn=", 4) ? 4 : 0;

		e = e ? e : end;
		if (at && e - p > at + w && !strncmp(p + at, want, (size_t)w)) {
			snprintf(name, size, "%.*s", (int)(e - p - at - w), p + at + w);
			return;
		}
		p = e < end ? e + 1 : end;
	}
}

int pmc__cg_uncalled(const char *text, size_t len, int first_dump, char *name, size_t size)
{
	const char *p = text, *end = text + len;
	uint32_t used = 0;
	long cur = -1;
	int after_calls = 0, found = 0;

	name[0] = '\0';
	if (roots.pid != getpid()) {
		roots.pid = getpid();
		roots.n = 0;
	}
	while (p < end) {
		const char *e = memchr(p, '\n', (size_t)(end - p));
		long id = -1;

		e = e ? e : end;
		if ((e - p > 3 && !strncmp(p, "fn=(", 4)) || (e - p > 4 && !strncmp(p, "cfn=(", 5))) {
			const char *q = p + (p[0] == 'f' ? 4 : 5);

			for (id = 0; q < e && *q >= '0' && *q <= '9' && id < (long)MAX_FN_IDS; q++)
				id = id * 10 + (*q - '0');
			if (id >= (long)MAX_FN_IDS)
				id = -1;
			if (id >= (long)used) {
				memset(fn_seen + used, 0, (size_t)id + 1 - used);
				used = (uint32_t)id + 1;
			}
			if (p[0] == 'f') {
				cur = id;
				after_calls = 0;
			} else if (id >= 0) {
				fn_seen[id] |= 2;
			}
		} else if (e - p >= 6 && !strncmp(p, "calls=", 6)) {
			after_calls = 1;
		} else if (p < e && ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*')) {
			/* The line after calls= is the callee's inclusive cost. */
			if (after_calls)
				after_calls = 0;
			else if (cur >= 0)
				fn_seen[cur] |= 1;
		} else if (e - p >= 3 && !strncmp(p, "fn=", 3)) {
			cur = -1; /* an uncompressed name: not tracked */
		}
		p = e < end ? e + 1 : end;
	}
	for (uint32_t i = 0; i < used; i++) {
		char fn[256];
		int k;

		if (fn_seen[i] != 1)
			continue;
		name_of_id(text, end, (long)i, fn, sizeof(fn));
		for (k = 0; k < roots.n && strcmp(roots.name[k], fn); k++)
			;
		if (k < roots.n)
			continue;
		if (first_dump) {
			if (roots.n < 16)
				snprintf(roots.name[roots.n++], sizeof(roots.name[0]), "%s", fn);
			continue;
		}
		if (found++ == 0)
			snprintf(name, size, "%s", fn);
	}
	return found;
}

int pmc__cg_calls_count(const char *file, const char *text, size_t len, struct pmc_error *err)
{
	return ntargets ? count_calls(file, text, len, targets, ntargets, err) : 0;
}

int pmc_sim_dump_calls(const char *file, const char *text, size_t len,
		       const struct pmc_event_spec *s, uint64_t *calls, struct pmc_error *err)
{
	struct pmc__cg_target t;
	int rc = target_of(s, &t, err);

	*calls = 0;
	if (rc == 0)
		rc = count_calls(file, text, len, &t, 1, err);
	*calls = t.total;
	return rc;
}

int pmc__cg_target_new(const struct pmc_event_spec *s, struct pmc__cg_target **out,
		       struct pmc_error *err)
{
	struct pmc__cg_target *t = malloc(sizeof(*t));
	int rc;

	*out = NULL;
	if (!t)
		return pmc__fail(err, -ENOMEM, s->name, -1, "\"%s\": out of memory", s->name);
	rc = target_of(s, t, err);
	if (rc) {
		free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int pmc__cg_target_is(const struct pmc__cg_target *t, const char *name, const char *object)
{
	size_t n = base_length(name);

	if (strcmp(real_object(object), t->object))
		return 0;
	for (int i = 0; i < t->nnames; i++)
		if (strlen(t->names[i]) == n && !strncmp(t->names[i], name, n))
			return 1;
	return 0;
}
