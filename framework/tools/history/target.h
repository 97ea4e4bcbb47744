/* SPDX-License-Identifier: MIT */
/*
 * A history store's TARGET as libpq is to read it and as it may be printed,
 * apart from any connection (target.c).  A TARGET is a PostgreSQL
 * connection string by its form: a URI whose scheme is postgresql:// or
 * postgres:// in any case, or a libpq keyword string ("host=... dbname=...");
 * anything else is an SQLite file.
 */
#ifndef PMCHECK_TOOLS_HISTORY_TARGET_H
#define PMCHECK_TOOLS_HISTORY_TARGET_H

#include <stdbool.h>
#include <stddef.h>

struct hdb_target {
	char *conn;       /* what libpq reads (a URI's scheme in lower case), or NULL: TARGET itself */
	char *shown;      /* what may be printed: every password left out */
	char *secrets[8]; /* the passwords, as written and as decoded: never printed */
	size_t nsecrets;
	bool uri; /* the URI form, not keywords */
};

bool hdb_target_is_pg(const char *target);
/* 0: a connection string, read; 1: not one (an SQLite file: nothing set);
 * -1: a connection string that cannot be read safely (nothing of it may be
 * printed); -2: out of memory.  hdb_target_release() it in every case. */
int hdb_target_parse(const char *target, struct hdb_target *t);
/* MSG (of SIZE bytes) with every secret of T replaced by "***". */
void hdb_target_scrub(const struct hdb_target *t, char *msg, size_t size);
/* An engine's message MSG as the store shows it, in OUT (of SIZE bytes):
 * scrubbed, on one line (libpq's newlines and tabs as spaces, no trailing
 * blank); "unknown error" for none. */
void hdb_target_message(const struct hdb_target *t, const char *msg, char *out, size_t size);
void hdb_target_release(struct hdb_target *t);

#endif
