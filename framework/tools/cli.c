/* SPDX-License-Identifier: MIT */
/*
 * The command line's common parts: the command table's lookup and help,
 * option parsing with one message and exit status for every usage error.
 * Every cmd_*.c calls down into this file; pmcheck.c holds the table and
 * main().
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "tools.h"

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

static void print_summary(FILE *f, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\n");

		fprintf(f, "      %.*s\n", (int)n, text);
		text += n + (text[n] == '\n');
	}
}

void cli_print_overview(FILE *f)
{
	fputs("usage: pmcheck COMMAND [options]   (pmcheck COMMAND --help for its options)\n\n"
	      "commands:\n", f);
	for (size_t i = 0; i < ncommands; i++) {
		fprintf(f, "  %s\n", commands[i].synopsis);
		print_summary(f, commands[i].summary);
	}
}

int cli_print_help(const struct cli_command *c)
{
	printf("usage: pmcheck %s\n\n", c->synopsis);
	print_summary(stdout, c->summary);
	if (c->help)
		printf("\n%s", c->help);
	return 0;
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
