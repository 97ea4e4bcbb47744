/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target for how `pmcheck history --db=TARGET` reads a
 * connection string (framework/tools/history/target.c): the URI and
 * keyword forms, percent-decoding, and the scrubbing of passwords from
 * messages.  Its promises, checked on every input:
 * - a string read (0) has a printable form, and a password that occurs
 *   once in the input as read (a URI's scheme in lower case), as a token of 4 bytes or more without the
 *   separators the printed form joins its pieces with, is not in it;
 * - a message quoting the input, scrubbed, holds none of the passwords
 *   found (those without '*', which the replacement itself is made of);
 * - a string refused (-1) or not a connection string (1) sets nothing.
 * A crash, a sanitizer report or a broken promise is a finding.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/history/target.h"

static size_t occurrences(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static int plain_token(const char *s)
{
	if (strlen(s) < 4)
		return 0;
	for (; *s; s++)
		if (strchr(" \t\n*?&@/=", *s)) /* separators: the printed form joins pieces with them */
			return 0;
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hdb_target t;
	char *text, msg[600];
	int rc;

	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rc = hdb_target_parse(text, &t);
	if (rc == 0) {
		if (!t.shown || (t.uri && !t.conn))
			abort();
		/* Where no password was percent-encoded, each is as written (a
		 * decoded one may equal other text of the input).  A URI is
		 * counted in as read, its scheme in lower case: the printed form
		 * spells it so, and a password may be part of "postgresql://". */
		const char *read = t.uri ? t.conn : text;
		bool encoded = false;

		for (size_t i = 0; i < t.nsecrets; i++)
			encoded |= strchr(t.secrets[i], '%') != NULL;
		for (size_t i = 0; i < t.nsecrets && !encoded; i++)
			if (plain_token(t.secrets[i]) && occurrences(read, t.secrets[i]) == 1 &&
			    strstr(t.shown, t.secrets[i]))
				abort();
	} else if (rc == 1 || rc == -1) {
		if ((rc == 1 && (t.shown || t.conn || t.nsecrets)) || (rc == -1 && t.shown))
			abort();
	} else if (rc != -2) {
		abort();
	}
	/* A message that quotes the input (as libpq's may), then scrubbed. */
	snprintf(msg, sizeof(msg), "could not connect: \"%s\"", text);
	hdb_target_scrub(&t, msg, sizeof(msg));
	if (strlen(msg) >= sizeof(msg))
		abort();
	for (size_t i = 0; i < t.nsecrets; i++)
		if (!strchr(t.secrets[i], '*') && strstr(msg, t.secrets[i]))
			abort();
	hdb_target_release(&t);
	free(text);
	return 0;
}
