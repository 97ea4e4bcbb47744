/* SPDX-License-Identifier: MIT */
/*
 * The history store's SQLite engine where the build found no SQLite
 * (db_engine.h): an SQLite file is refused, saying why.
 */
#include <stdio.h>

#include "../cli.h"
#include "db_engine.h"

static int sqlite_absent(struct hdb *db, const char *file, enum hdb_mode mode)
{
	(void)file;
	(void)mode;
	fprintf(stderr, "pmcheck history: %s: this pmcheck was built without SQLite (libsqlite3-dev), so it cannot use an SQLite file; install it and rebuild, or give a postgresql:// URI\n",
		db->name);
	return PMC_EXIT_ERROR;
}

const struct hdb_engine hdb_sqlite_engine = { .connect = sqlite_absent };
