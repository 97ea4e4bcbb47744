/* SPDX-License-Identifier: MIT */
/*
 * A command's objects, for `pmcheck stat`: its interpreter (PT_INTERP),
 * the shared libraries its loader maps (asked of the loader itself, as ldd
 * does, so the command does not run), and its calls: events bound to the
 * object of the command that defines each symbol.  pmcheck is not the
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
 * The event list with each calls:SYMBOL that names no object bound to the
 * object of the command that defines SYMBOL: pmcheck is not the program
 * here, so a bare name means the command's function, else the first of its
 * shared libraries, in the loader's order, that defines it (a C++
 * program's libstdc++, a library pmcheck itself never loads); else it is
 * left for the libraries pmcheck has loaded.  Events are cut as
 * pmc_event_parse_list cuts them.
 */
int pmc__bind_calls(const char *events, const char *program, char *out, size_t size,
		     char (*label)[PMC_EVENT_NAME_MAX])
{
	enum { MAX_LIBS = 256 };
	const char *s = events;
	size_t used = 0, k = 0, nlibs = 0;
	char (*libs)[PMC_EVENT_PATH_MAX] = NULL;
	int listed = 0;

	out[0] = '\0';
	for (;;) {
		const char *e = s + pmc_event_list_token(s);
		struct pmc_event_spec spec;
		char bound[PMC_EVENT_PATH_MAX + PMC_EVENT_NAME_MAX];
		int n, found = 0;

		if (k < PMC_MAX_EVENTS)
			snprintf(label[k++], PMC_EVENT_NAME_MAX, "%.*s", (int)(e - s), s);
		if (!strncmp(s, "calls:", 6) && !memchr(s, '@', (size_t)(e - s)) && *program) {
			/* The program first, then its libraries in the loader's
			 * order: the definition its calls reach. */
			snprintf(bound, sizeof(bound), "%.*s@%s", (int)(e - s), s, program);
			found = pmc_event_parse(bound, &spec, NULL) == 0;
			if (!found && !listed) {
				listed = 1;
				libs = calloc(MAX_LIBS, sizeof(*libs));
				nlibs = libs ? command_libraries(program, libs, MAX_LIBS) : 0;
			}
			for (size_t i = 0; !found && i < nlibs; i++) {
				snprintf(bound, sizeof(bound), "%.*s@%s", (int)(e - s), s, libs[i]);
				found = pmc_event_parse(bound, &spec, NULL) == 0;
			}
		}
		if (found)
			n = snprintf(out + used, size - used, "%s%s", used ? "," : "", bound);
		else
			n = snprintf(out + used, size - used, "%s%.*s", used ? "," : "", (int)(e - s), s);
		if (n < 0 || (size_t)n >= size - used) {
			free(libs);
			return -1;
		}
		used += (size_t)n;
		if (!*e) {
			free(libs);
			return 0;
		}
		s = e + 1;
	}
}
