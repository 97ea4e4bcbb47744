/* SPDX-License-Identifier: MIT */
/*
 * The history store's PostgreSQL engine where the build found no libpq
 * (db_engine.h): a connection string is refused, saying why.
 */
#include <stdio.h>

#include "../cli.h"
#include "db_engine.h"

static int pg_absent(struct hdb *db, const char *conn, enum hdb_mode mode)
{
	(void)conn;
	(void)mode;
	fprintf(stderr, "pmcheck history: %s: this pmcheck was built without libpq (libpq-dev), so it cannot use PostgreSQL; install it and rebuild, or give an SQLite file\n",
		db->name);
	return PMC_EXIT_ERROR;
}

const struct hdb_engine hdb_pg_engine = { .connect = pg_absent };
