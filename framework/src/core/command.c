/* SPDX-License-Identifier: MIT */
/*
 * A command's objects, for `pmcheck stat`: its interpreter (PT_INTERP),
 * the shared libraries its loader maps (asked of the loader itself, as ldd
 * does, so the command does not run), and its calls: events resolved in
 * the object of the command that defines each symbol.  pmcheck is not the
 * program there, so the objects pmcheck itself has loaded are the last
 * place to look, not the first (symbols.c resolves within this process).
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pmcheck/counters.h>
#include <pmcheck/event.h>

#include "core_int.h"
#include "command.h"
#include "event_int.h"
#include "util/child.h"

/* The program's interpreter (PT_INTERP) when it is a dynamic ELF of this
 * machine's word size: 0, or -1 (a static program, a script, not ELF). */
static int elf_interp(const char *program, char *out, size_t size)
{
	Elf64_Ehdr eh;
	int fd = open(program, O_RDONLY | O_CLOEXEC), rc = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_phentsize == sizeof(Elf64_Phdr))
		for (unsigned i = 0; i < eh.e_phnum && rc; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != (ssize_t)sizeof(ph))
				break;
			if (ph.p_type == PT_INTERP && ph.p_filesz > 1 && ph.p_filesz < size &&
			    pread(fd, out, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz) {
				out[ph.p_filesz - 1] = '\0';
				rc = 0;
			}
		}
	close(fd);
	return rc;
}

/*
 * The shared libraries the command loads, in the dynamic loader's order
 * (its search order for symbols): its own interpreter asked with --list,
 * as ldd does, so the program itself does not run.  Up to max paths into
 * lib; 0 for a static program.
 */
static size_t command_libraries(const char *program, char (*lib)[PMC_EVENT_PATH_MAX], size_t max)
{
	char interp[PMC_EVENT_PATH_MAX], *out = malloc(65536), *line, *save = NULL;
	char *argv[] = { interp, (char *)"--list", (char *)program, NULL };
	struct pmc__child c;
	size_t n = 0;

	if (!out || elf_interp(program, interp, sizeof(interp)) || pmc__child_spawn(&c, argv, NULL, true, 0)) {
		free(out);
		return 0;
	}
	if (pmc__child_read(&c, out, 65536, pmc__child_now() + 10) < 0)
		out[0] = '\0';
	pmc__child_kill(&c);
	/* "\tlibexpat.so.1 => /lib/x86_64-linux-gnu/libexpat.so.1 (0x...)" */
	for (line = strtok_r(out, "\n", &save); line && n < max; line = strtok_r(NULL, "\n", &save)) {
		char *arrow = strstr(line, " => "), *end;

		if (!arrow || arrow[4] != '/')
			continue;
		end = strstr(arrow + 4, " (");
		if (end)
			*end = '\0';
		snprintf(lib[n++], PMC_EVENT_PATH_MAX, "%s", arrow + 4);
	}
	free(out);
	return n;
}

/*
 * The list's bare calls:SYMBOL events, parsed once with their functions
 * deferred, resolved in place in the object of the command that defines
 * SYMBOL: pmcheck is not the program here, so a bare name means the
 * command's function, else the first of its shared libraries, in the
 * loader's order, that defines it (a C++ program's libstdc++, a library
 * pmcheck itself never loads); else the libraries pmcheck has loaded.  An
 * error quotes the list as written, at the event's own position (each
 * event's place is where pmc_event_list_token cuts it).
 */
int pmc__command_resolve(const char *events, const char *program, struct pmc_event_spec *specs,
			 size_t n, char (*label)[PMC_EVENT_NAME_MAX], struct pmc_error *err)
{
	enum { MAX_LIBS = 256 };
	const char *s = events;
	size_t nlibs = 0;
	char (*libs)[PMC_EVENT_PATH_MAX] = NULL;
	int listed = 0, rc = 0;

	pmc_error_clear(err);
	for (size_t k = 0; k < n && !rc; k++) {
		const char *e = s + pmc_event_list_token(s);
		struct pmc__pctx quiet = { events, (int)(s - events), NULL, 0 };
		struct pmc__pctx p = { events, (int)(s - events), err, 0 };
		struct pmc_event_spec *spec = &specs[k];
		int found = 0;

		snprintf(label[k], PMC_EVENT_NAME_MAX, "%.*s", (int)(e - s), s);
		s = *e ? e + 1 : e;
		if (spec->kind != PMC_KIND_UPROBE || spec->path[0] || strncmp(spec->name, "calls:", 6))
			continue;
		if (!strchr(spec->name, '@') && *program) {
			/* The program first, then its libraries in the loader's
			 * order: the definition its calls reach. */
			found = pmc__calls_resolve(&quiet, spec, program) == 0;
			if (!found && !listed) {
				listed = 1;
				libs = calloc(MAX_LIBS, sizeof(*libs));
				nlibs = libs ? command_libraries(program, libs, MAX_LIBS) : 0;
			}
			for (size_t i = 0; !found && i < nlibs; i++)
				found = pmc__calls_resolve(&quiet, spec, libs[i]) == 0;
		}
		if (!found)
			rc = pmc__calls_resolve(&p, spec, NULL);
	}
	free(libs);
	return rc;
}
