/* SPDX-License-Identifier: MIT */
/*
 * The command line's common parts: the command table's lookup and help,
 * a command's subcommands picked from its table, option parsing with one
 * message and exit status for every usage error.
 * Every cmd_*.c calls down into this file; pmcheck.c holds the table and
 * main().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The command table, given by main (pmcheck.c): this file sits under the
 * commands, and the table above them. */
static const struct cli_command *commands;
static size_t ncommands;

void cli_commands(const struct cli_command *table, size_t n)
{
	commands = table;
	ncommands = n;
}

const struct cli_command *cli_find(const char *name)
{
	for (size_t i = 0; i < ncommands; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* TEXT's lines, the first after FIRST, the others indented by INDENT. */
static void print_lines(FILE *f, const char *first, const char *indent, const char *text)
{
	for (const char *lead = first; *text; lead = indent) {
		size_t n = strcspn(text, "\n");

		fprintf(f, "%s%.*s\n", lead, (int)n, text);
		text += n + (text[n] == '\n');
	}
}

/* The command line: the command's, then each subcommand's, joined by "|". */
static void print_synopsis(FILE *f, const struct cli_command *c)
{
	fputs(c->synopsis, f);
	for (const struct cli_subcommand *s = c->subcommands; s && s->name; s++)
		fprintf(f, "%s%s%s%s", s == c->subcommands ? " " : " | ", s->name,
			*s->operands ? " " : "", s->operands);
	fputs("\n", f);
}

/* TEXT after FIRST, its words wrapped at 79 columns onto lines indented by
 * INDENT. */
static void print_wrapped(FILE *f, const char *first, const char *indent, const char *text)
{
	size_t column = strlen(first);

	fputs(first, f);
	for (const char *p = text + strspn(text, " "); *p; p += strspn(p, " ")) {
		size_t n = strcspn(p, " ");

		if (column > strlen(indent) && column + 1 + n > 79) {
			fprintf(f, "\n%s", indent);
			column = strlen(indent);
		} else if (p != text + strspn(text, " ")) {
			fputc(' ', f);
			column++;
		}
		fprintf(f, "%.*s", (int)n, p);
		column += n;
		p += n;
	}
	fputc('\n', f);
}

/* What it does, then what each subcommand does. */
static void print_about(FILE *f, const struct cli_command *c)
{
	print_lines(f, "      ", "      ", c->summary);
	for (const struct cli_subcommand *s = c->subcommands; s && s->name; s++) {
		char first[64];

		snprintf(first, sizeof(first), "      %s: ", s->name);
		print_wrapped(f, first, "        ", s->summary);
	}
}

void cli_print_overview(FILE *f)
{
	fputs("usage: pmcheck COMMAND [options]   (pmcheck COMMAND --help for its options)\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < ncommands; i++) {
		fputs("  ", f);
		print_synopsis(f, &commands[i]);
		print_about(f, &commands[i]);
	}
}

int cli_print_help(const struct cli_command *c)
{
	fputs("usage: pmcheck ", stdout);
	print_synopsis(stdout, c);
	fputs("\n", stdout);
	print_about(stdout, c);
	if (c->help)
		printf("\n%s", c->help);
	return 0;
}

/* The long options given to this process's command (cli_next), for
 * cli_subcommand: an option that belongs to another subcommand is refused. */
static const char *given[32];
static size_t ngiven;

static void note_given(const struct option *longopts, int c)
{
	for (const struct option *o = longopts; o->name; o++)
		if (!o->flag && o->val == c) {
			for (size_t i = 0; i < ngiven; i++)
				if (!strcmp(given[i], o->name))
					return;
			if (ngiven < sizeof(given) / sizeof(given[0]))
				given[ngiven++] = o->name;
			return;
		}
}

/* NAME is a word of the space-separated LIST. */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p; p += strcspn(p, " "), p += *p == ' ')
		if (strcspn(p, " ") == n && !strncmp(p, name, n))
			return true;
	return false;
}

/* "add FILE|DIR..., show CASE [EVENT] or report --html=DIR". */
static void list_subcommands(const struct cli_subcommand *table, char *out, size_t size)
{
	size_t used = 0;

	out[0] = '\0';
	for (const struct cli_subcommand *s = table; s->name && used < size; s++)
		used += (size_t)snprintf(out + used, size - used, "%s%s%s%s",
					 s == table ? "" : s[1].name ? ", " : " or ", s->name,
					 *s->operands ? " " : "", s->operands);
}

/* "--a belongs to NAME", "--a and --b belong to NAME": the options given
 * that belong to S; 0 when none was. */
static int foreign_options(const char *command, const struct cli_subcommand *s)
{
	char names[512];
	size_t used = 0, k = 0, n = 0;

	for (size_t i = 0; i < ngiven; i++)
		n += listed(s->options, given[i]);
	if (!n)
		return 0;
	names[0] = '\0';
	for (size_t i = 0; i < ngiven && used < sizeof(names); i++)
		if (listed(s->options, given[i])) {
			k++;
			used += (size_t)snprintf(names + used, sizeof(names) - used, "%s--%s",
						 k == 1 ? "" : k == n ? " and " : ", ", given[i]);
		}
	return cli_usage(command, "%s belong%s to %s", names, n == 1 ? "s" : "", s->name);
}

const struct cli_subcommand *cli_subcommand(const char *command, char **operands, int n,
					    int *status)
{
	const struct cli_command *c = cli_find(command);
	const struct cli_subcommand *sub = NULL;
	char list[1024];

	list_subcommands(c->subcommands, list, sizeof(list));
	if (n < 1) {
		*status = cli_usage(command, "say what to do: %s", list);
		return NULL;
	}
	for (const struct cli_subcommand *s = c->subcommands; s->name && !sub; s++)
		if (!strcmp(s->name, operands[0]))
			sub = s;
	if (!sub) {
		*status = cli_usage(command, "unknown subcommand \"%s\" (%s)", operands[0], list);
		return NULL;
	}
	for (const struct cli_subcommand *s = c->subcommands; s->name; s++)
		if (s != sub && (*status = foreign_options(command, s)) != 0)
			return NULL;
	n--;
	if (n < sub->min) {
		*status = cli_usage(command, "%s needs %s", sub->name, sub->operands);
		return NULL;
	}
	if (sub->max >= 0 && n > sub->max) {
		if (sub->max == 0)
			*status = cli_usage(command, "%s takes no operands", sub->name);
		else
			*status = cli_usage(command, "%s takes %s, not %d operands", sub->name,
					    sub->operands, n);
		return NULL;
	}
	return sub;
}

int cli_usage(const char *name, const char *fmt, ...)
{
	char msg[2048], shown[4096];
	va_list ap;

	/* What the user typed is quoted in the message: control characters
	 * in it are shown escaped, never sent to the terminal. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pmcheck %s: %s (see pmcheck %s --help)\n", name,
		pmc__escape_ctl(shown, sizeof(shown), msg), name);
	return PMC_EXIT_USAGE;
}

int cli_outputs(const char *name, const char *const *options, const char *const *paths, size_t n)
{
	char why[1024];

	for (size_t i = 0; i < n; i++)
		if (paths[i] && pmc__output_check(paths[i], why, sizeof(why))) {
			/* why has the path's control characters escaped already. */
			fprintf(stderr, "pmcheck %s: %s: %s\n", name, options[i], why);
			return PMC_EXIT_USAGE;
		}
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			if (pmc__output_same(paths[i], paths[j]))
				return cli_usage(name, "%s=%s and %s=%s name one file, and the second would overwrite the first: give each its own file",
						 options[i], paths[i], options[j], paths[j]);
	return 0;
}

void cli_caret(const char *text, int position)
{
	char shown[4096], before[4096];
	size_t at = position > 0 ? (size_t)position : 0;

	if (at > strlen(text))
		at = strlen(text);
	snprintf(before, sizeof(before), "%.*s", (int)at, text);
	pmc__escape_ctl(shown, sizeof(shown), before);
	at = strlen(shown);
	fprintf(stderr, "  %s\n  %*s^\n", pmc__escape_ctl(shown, sizeof(shown), text), (int)at, "");
}

int cli_next(const char *name, int argc, char **argv, const char *shortopts,
	     const struct option *longopts, int *status)
{
	char opts[32];
	int c;

	/* A leading ':' (after '+') makes a missing value ':', not '?'. */
	snprintf(opts, sizeof(opts), "%s:%s", shortopts[0] == '+' ? "+" : "",
		 shortopts + (shortopts[0] == '+'));
	opterr = 0;
	c = getopt_long(argc, argv, opts, longopts, NULL);
	if (c >= 0 && c != 'h' && c != '?' && c != ':')
		note_given(longopts, c);
	if (c == 'h') {
		*status = cli_print_help(cli_find(name));
		return -2;
	}
	if (c == '?' || c == ':') {
		const char *arg = argv[optind - 1];

		if (c == ':')
			*status = cli_usage(name, "option \"%s\" needs a value", arg);
		else if (optopt && arg[0] == '-' && arg[1] != '-')
			*status = cli_usage(name, "unknown option \"-%c\"", optopt);
		else
			*status = cli_usage(name, "unknown option \"%s\"", arg);
		return -2;
	}
	return c;
}

int cli_positive(const char *name, const char *option, const char *arg, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || end == arg || *end || v == 0 || v > 1000000 || arg[0] == '-')
		return cli_usage(name, "%s=%s: expected a whole number from 1 to 1000000", option, arg);
	*out = (unsigned)v;
	return 0;
}
