/* SPDX-License-Identifier: MIT */
/*
 * A results file as rows of the history store (history_int.h): its
 * identity (a digest of its bytes), its figures and its budget checks,
 * inserted in batches.  Beneath both adding (add.c) and migrating an older
 * store (store.c), which fills a schema-1 store's budget checks from the
 * files themselves.
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli.h"
#include "history_int.h"

/* The file's identity: its length and two 64-bit FNV-1a hashes of its
 * bytes (different offsets), as hex. */
void history_digest(const char *text, size_t len, char *out, size_t size)
{
	uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;

	for (size_t i = 0; i < len; i++) {
		a = (a ^ (unsigned char)text[i]) * 0x100000001b3ull;
		b = (b ^ (unsigned char)text[len - 1 - i]) * 0x100000001b3ull;
	}
	snprintf(out, size, "%zx-%016" PRIx64 "%016" PRIx64, len, a, b);
}

/* The bounds a case judged (region, event) by: its budget, or an explicit
 * bound (=, <=, >=, range) when it has no budget; NAN when none.  A bound
 * per iteration is stored for the whole region, as the figures beside it
 * are. */
static void budget_of(const struct pmc__result *c, const char *region, const char *label,
		      double *lo, double *hi)
{
	*lo = *hi = NAN;
	for (size_t k = 0; k < c->nchecks; k++) {
		const struct pmc__check_rec *cr = &c->checks[k];
		const struct pmc__event_rec *e = pmc__result_event(c, cr->event);

		bool bound = cr->kind == PMC_EXPECT_KIND_BUDGET || cr->kind == PMC_EXPECT_KIND_LE ||
			     cr->kind == PMC_EXPECT_KIND_GE || cr->kind == PMC_EXPECT_KIND_RANGE ||
			     cr->kind == PMC_EXPECT_KIND_EQ;

		if (bound && !cr->per && !strcmp(cr->region, region) && e && !strcmp(e->label, label) &&
		    (cr->kind == PMC_EXPECT_KIND_BUDGET || (isnan(*lo) && isnan(*hi)))) {
			const struct pmc__region_rec *g = pmc__result_region(c, region);
			double per = cr->per_iteration && g && g->iterations > 1 ? (double)g->iterations : 1;

			*lo = cr->lo * per;
			*hi = cr->hi * per;
		}
	}
}

/*
 * A figure's own verdict: the worst of the checks on its region and event,
 * so that a figure that passed in a failing case is not shown as FAIL (nor
 * ringed as failing in the report).  A figure no check judged: the case's
 * verdict, but "-" where the case failed on another figure.
 */
static const char *figure_verdict(const struct pmc__result *c, const char *region, const char *label)
{
	static const char *const names[] = { "PASS", "UNBUDGETED", "INCONCLUSIVE", "FAIL", "ERROR" };
	int worst = -1;

	for (size_t k = 0; k < c->nchecks; k++) {
		const struct pmc__check_rec *cr = &c->checks[k];
		const struct pmc__event_rec *e = pmc__result_event(c, cr->event);

		if (cr->region && !strcmp(cr->region, region) && e && e->label && !strcmp(e->label, label) &&
		    (int)cr->status > worst && (size_t)cr->status < sizeof(names) / sizeof(names[0]))
			worst = (int)cr->status;
	}
	if (worst >= 0)
		return names[worst];
	return c->verdict == PMC_FAIL ? "-" : pmc_verdict_name(c->verdict);
}

/*
 * Rows in batches: on PostgreSQL, one INSERT of up to BATCH_ROWS rows
 * ("VALUES ($1, $2), ($3, $4) ..."), so that a file's figures are one round
 * trip to the server, not one per row; on SQLite, which has no round trips
 * and parses SQL slower than it inserts a row, one row at a time.  The batch
 * keeps the values (strings copied) until it runs; each statement is
 * prepared once per store (hdb_prepare_cached).
 */
#define BATCH_ROWS 64
#define BATCH_COLUMNS 14

struct cell {
	enum { CELL_NULL, CELL_INT, CELL_REAL, CELL_TEXT } type;
	int64_t i;
	double d;
	char *s;
};

struct batch {
	struct hdb *db;
	const char *head; /* "INSERT INTO t (a, b) VALUES" */
	int columns;
	int rows; /* rows per statement */
	size_t n; /* cells filled */
	struct cell cells[BATCH_ROWS * BATCH_COLUMNS];
	int status;
};

static struct hdb_stmt *batch_prepare(struct batch *b, int rows)
{
	size_t cap = strlen(b->head) + (size_t)rows * (size_t)b->columns * 10 + 16;
	char *sql = malloc(cap), *o = sql;
	struct hdb_stmt *st;

	if (!sql)
		return NULL;
	o = stpcpy(o, b->head);
	for (int r = 0; r < rows; r++) {
		*o++ = r ? ',' : ' ';
		*o++ = '(';
		for (int c = 0; c < b->columns; c++)
			o += sprintf(o, "%s$%d", c ? ", " : "", r * b->columns + c + 1);
		*o++ = ')';
	}
	*o = '\0';
	st = hdb_prepare_cached(b->db, sql);
	free(sql);
	return st;
}

/* Run the rows kept. */
static int batch_flush(struct batch *b)
{
	int rows = (int)(b->n / (size_t)b->columns);
	struct hdb_stmt *st = NULL;

	if (rows && b->status == 0) {
		st = batch_prepare(b, rows);
		if (st) {
			for (size_t i = 0; i < b->n; i++) {
				const struct cell *c = &b->cells[i];

				if (c->type == CELL_INT)
					hdb_bind_int(st, (int)i + 1, c->i);
				else if (c->type == CELL_REAL)
					hdb_bind_real(st, (int)i + 1, c->d);
				else if (c->type == CELL_TEXT)
					hdb_bind_text(st, (int)i + 1, c->s);
				else
					hdb_bind_null(st, (int)i + 1);
			}
		}
		b->status = st && hdb_step(st) >= 0 ? 0 : -1;
	}
	for (size_t i = 0; i < b->n; i++)
		free(b->cells[i].s);
	b->n = 0;
	return b->status;
}

static void cell_int(struct batch *b, int64_t v)
{
	b->cells[b->n++] = (struct cell){ .type = CELL_INT, .i = v };
}

static void cell_real(struct batch *b, double v)
{
	b->cells[b->n++] = (struct cell){ .type = isnan(v) ? CELL_NULL : CELL_REAL, .d = v };
}

static void cell_text(struct batch *b, const char *s)
{
	char *copy = s && *s ? strdup(s) : NULL;

	if (s && *s && !copy)
		b->status = -1;
	b->cells[b->n++] = (struct cell){ .type = copy ? CELL_TEXT : CELL_NULL, .s = copy };
}

/* A row is complete: run the batch when it is full. */
static void batch_row_done(struct batch *b)
{
	if (b->n == (size_t)b->rows * (size_t)b->columns)
		batch_flush(b);
}

static struct batch *batch_new(struct hdb *db, int columns, const char *head)
{
	struct batch *b = calloc(1, sizeof(*b));

	if (b) {
		b->db = db;
		b->columns = columns;
		b->head = head;
		b->rows = hdb_is_pg(db) ? BATCH_ROWS : 1;
	}
	return b;
}

/* Run what is left, and free the batch. */
static int batch_finish(struct batch *b)
{
	int rc = batch_flush(b);

	free(b);
	return rc;
}

/* A sim case's line: its sim profile and engine ("" off the sim backend). */
static void sim_line_of(const struct pmc__result *c, char *out, size_t size)
{
	out[0] = '\0';
	if (c->sim_profile && *c->sim_profile)
		snprintf(out, size, "%s %s", c->sim_profile,
			 c->sim_engine && *c->sim_engine ? c->sim_engine : "pmcheck");
}

/* A file's figures: every region and event of every case. */
int history_insert_figures(struct hdb *db, int64_t run_id, const struct pmc__results *rs)
{
	struct batch *bp = batch_new(db, 14, "INSERT INTO figures (run_id, case_name, verdict, region,"
					     " event, samples, min, median, max, mean, partial, budget_lo,"
					     " budget_hi, sim_line) VALUES");
	char line[512];

	if (!bp)
		return -1;
	for (size_t i = 0; i < rs->n; i++) {
		const struct pmc__result *c = &rs->cases[i];

		sim_line_of(c, line, sizeof(line));
		for (size_t g = 0; g < c->nregions; g++)
			for (size_t e = 0; e < c->regions[g].nev; e++) {
				const struct pmc__stat_rec *s = &c->regions[g].ev[e];
				double lo, hi;

				budget_of(c, c->regions[g].name, s->label, &lo, &hi);
				cell_int(bp, run_id);
				cell_text(bp, c->name);
				cell_text(bp, figure_verdict(c, c->regions[g].name, s->label));
				cell_text(bp, c->regions[g].name);
				cell_text(bp, s->label);
				cell_int(bp, (int64_t)s->n);
				if (s->n) {
					cell_int(bp, (int64_t)s->min);
					cell_real(bp, s->median);
					cell_int(bp, (int64_t)s->max);
					cell_real(bp, s->mean);
				} else {
					for (int j = 0; j < 4; j++)
						cell_real(bp, NAN);
				}
				cell_int(bp, s->multiplexed || s->not_counted || s->other_threads);
				cell_real(bp, lo);
				cell_real(bp, hi);
				cell_text(bp, line);
				batch_row_done(bp);
			}
	}
	return batch_finish(bp);
}

/* Every budget check of a file's cases that has a figure to pool. */
int history_insert_budget_checks(struct hdb *db, int64_t run_id, const struct pmc__results *rs,
				 const char *path)
{
	struct batch *bp = batch_new(db, 11, "INSERT INTO budget_checks (run_id, suite, test, region,"
					     " event, kind, name, sim_columns, sim_profile, backend,"
					     " value) VALUES");

	if (!bp)
		return -1;
	for (size_t i = 0; i < rs->n; i++)
		for (size_t k = 0; k < rs->cases[i].nchecks; k++) {
			struct pmc__merge_obs o;

			if (!pmc__merge_obs_of(rs, &rs->cases[i], &rs->cases[i].checks[k], path, &o))
				continue;
			cell_int(bp, run_id);
			cell_text(bp, o.suite);
			cell_text(bp, o.test);
			cell_text(bp, o.region);
			cell_text(bp, o.event);
			cell_text(bp, o.kind);
			cell_text(bp, o.name);
			cell_text(bp, o.sim_columns);
			cell_text(bp, o.sim_profile);
			cell_text(bp, o.backend);
			cell_real(bp, o.value);
			batch_row_done(bp);
		}
	return batch_finish(bp);
}
