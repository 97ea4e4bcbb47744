/* SPDX-License-Identifier: MIT */
/*
 * pmcheck history: results files across commits and machines, in an
 * SQLite database.
 *
 *   history add [--db=FILE] FILE|DIR...   each results file once (by content)
 *   history show [--db=FILE] CASE [EVENT] the series of a case, oldest first
 *
 * The database is versioned (PRAGMA user_version); a newer one is refused
 * rather than misread.  Writers wait for each other (busy timeout, one
 * IMMEDIATE transaction per file, WAL journal), so CI jobs may add at once:
 * a file is either wholly in or not at all, and a file already in (the
 * same bytes) is skipped.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "harness_int.h"
#include "util/util_int.h"

#if PMCHECK_HAVE_SQLITE
#include <sqlite3.h>

#define HISTORY_SCHEMA 1
#define HISTORY_DEFAULT "pmcheck-history.sqlite"

static const char schema_sql[] =
	"CREATE TABLE files (id INTEGER PRIMARY KEY, digest TEXT NOT NULL UNIQUE,"
	"  path TEXT NOT NULL, added TEXT NOT NULL);"
	"CREATE TABLE runs (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL REFERENCES files(id),"
	"  date TEXT, git_commit TEXT, cpu_signature TEXT, cpu_model TEXT, kernel TEXT,"
	"  backend TEXT, compiler TEXT, hostname TEXT, pmcheck_version TEXT);"
	"CREATE TABLE figures (run_id INTEGER NOT NULL REFERENCES runs(id),"
	"  case_name TEXT NOT NULL, verdict TEXT NOT NULL, region TEXT NOT NULL,"
	"  event TEXT NOT NULL, samples INTEGER NOT NULL, min INTEGER, median REAL,"
	"  max INTEGER, mean REAL, partial INTEGER NOT NULL, budget_lo REAL, budget_hi REAL);"
	"CREATE INDEX figures_case ON figures(case_name, event);"
	"PRAGMA user_version = 1;";

static int db_fail(sqlite3 *db, const char *path, const char *what)
{
	fprintf(stderr, "pmcheck history: %s: %s: %s\n", path, what, db ? sqlite3_errmsg(db) : "");
	return PMC_EXIT_ERROR;
}

/* Open (creating when new) and check the schema version. */
static int db_open(const char *path, sqlite3 **out)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *st;
	int version = -1;

	*out = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK)
		return db_fail(db, path, "cannot open the history database");
	sqlite3_busy_timeout(db, 120000);
	/* WAL: readers do not block the writer; set once, kept in the file. */
	sqlite3_exec(db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(db, path, "cannot lock the history database");
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
	}
	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version == 0) {
		/* New, or a file that is not a history database. */
		int tables = 0;

		if (sqlite3_prepare_v2(db, "SELECT count(*) FROM sqlite_master", -1, &st, NULL) ==
			    SQLITE_OK &&
		    sqlite3_step(st) == SQLITE_ROW)
			tables = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		if (tables) {
			fprintf(stderr, "pmcheck history: %s: an SQLite database, but not a pmcheck history (no schema version); give another --db\n",
				path);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			sqlite3_close(db);
			return PMC_EXIT_ERROR;
		}
		if (sqlite3_exec(db, schema_sql, NULL, NULL, NULL) != SQLITE_OK) {
			db_fail(db, path, "cannot create the history tables");
			sqlite3_close(db);
			return PMC_EXIT_ERROR;
		}
	} else if (version != HISTORY_SCHEMA) {
		fprintf(stderr, "pmcheck history: %s: schema version %d, and this pmcheck knows %d: %s\n",
			path, version, HISTORY_SCHEMA,
			version > HISTORY_SCHEMA ? "a newer pmcheck made it; use that one"
						 : "not a pmcheck history");
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
	}
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
		db_fail(db, path, "cannot create the history tables");
		sqlite3_close(db);
		return PMC_EXIT_ERROR;
	}
	*out = db;
	return 0;
}

/* The file's identity: its length and two 64-bit FNV-1a hashes of its
 * bytes (different offsets), as hex. */
static void digest_of(const char *text, size_t len, char *out, size_t size)
{
	uint64_t a = 0xcbf29ce484222325ull, b = 0x84222325cbf29ce4ull;

	for (size_t i = 0; i < len; i++) {
		a = (a ^ (unsigned char)text[i]) * 0x100000001b3ull;
		b = (b ^ (unsigned char)text[len - 1 - i]) * 0x100000001b3ull;
	}
	snprintf(out, size, "%zx-%016" PRIx64 "%016" PRIx64, len, a, b);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s)
{
	if (s && *s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static const char *env_str(json_t *env, const char *obj, const char *key)
{
	json_t *o = obj ? json_object_get(env, obj) : env;

	return json_string_value(json_object_get(o, key));
}

/* The bounds a case judged (region, event) by: its budget, or an explicit
 * bound (=, <=, >=, range) when it has no budget; NAN when none. */
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
			*lo = cr->lo;
			*hi = cr->hi;
		}
	}
}

static void bind_real(sqlite3_stmt *st, int i, double v)
{
	if (isnan(v))
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_double(st, i, v);
}

/* One results file, in one transaction: 1 added, 0 already there, or an
 * exit status. */
static int add_file(sqlite3 *db, const char *dbpath, const char *path)
{
	struct pmc__results rs;
	char *text = NULL, digest[64], why[1024];
	size_t len = 0;
	sqlite3_stmt *st = NULL;
	sqlite3_int64 file_id, run_id;
	int rc = pmc__read_file(path, &text, &len), status = PMC_EXIT_ERROR, exists = 0;
	json_t *env;

	if (rc) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(-rc));
		return PMC_EXIT_ERROR;
	}
	digest_of(text, len, digest, sizeof(digest));
	free(text);
	if (pmc__results_load(path, &rs, why, sizeof(why))) {
		fprintf(stderr, "pmcheck history: %s\n", why);
		return PMC_EXIT_ERROR;
	}
	env = rs.environment;
	if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
		pmc__results_release(&rs);
		return db_fail(db, dbpath, "cannot lock the history database");
	}
	if (sqlite3_prepare_v2(db, "SELECT 1 FROM files WHERE digest = ?", -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
	exists = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	st = NULL;
	if (exists) {
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
		pmc__results_release(&rs);
		return 0;
	}
	if (sqlite3_prepare_v2(db, "INSERT INTO files (digest, path, added) VALUES (?, ?, datetime('now'))",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_text(st, 1, digest, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	file_id = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO runs (file_id, date, git_commit, cpu_signature, cpu_model,"
			       " kernel, backend, compiler, hostname, pmcheck_version)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	sqlite3_bind_int64(st, 1, file_id);
	bind_text(st, 2, env_str(env, NULL, "date"));
	bind_text(st, 3, env_str(env, NULL, "git_commit"));
	bind_text(st, 4, pmc__results_signature(&rs));
	bind_text(st, 5, env_str(env, "cpu", "brand"));
	bind_text(st, 6, env_str(env, "kernel", "release"));
	bind_text(st, 7, pmc__results_backend(&rs));
	bind_text(st, 8, env_str(env, NULL, "compiler"));
	bind_text(st, 9, env_str(env, NULL, "hostname"));
	bind_text(st, 10, env_str(env, NULL, "pmcheck_version"));
	if (sqlite3_step(st) != SQLITE_DONE)
		goto fail;
	sqlite3_finalize(st);
	run_id = sqlite3_last_insert_rowid(db);
	if (sqlite3_prepare_v2(db,
			       "INSERT INTO figures (run_id, case_name, verdict, region, event, samples,"
			       " min, median, max, mean, partial, budget_lo, budget_hi)"
			       " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL) != SQLITE_OK)
		goto fail;
	for (size_t i = 0; i < rs.n; i++) {
		const struct pmc__result *c = &rs.cases[i];

		for (size_t g = 0; g < c->nregions; g++)
			for (size_t e = 0; e < c->regions[g].nev; e++) {
				const struct pmc__stat_rec *s = &c->regions[g].ev[e];
				double lo, hi;

				budget_of(c, c->regions[g].name, s->label, &lo, &hi);
				sqlite3_reset(st);
				sqlite3_bind_int64(st, 1, run_id);
				sqlite3_bind_text(st, 2, c->name, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 3, pmc_verdict_name(c->verdict), -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 4, c->regions[g].name, -1, SQLITE_STATIC);
				sqlite3_bind_text(st, 5, s->label, -1, SQLITE_STATIC);
				sqlite3_bind_int64(st, 6, (sqlite3_int64)s->n);
				if (s->n) {
					sqlite3_bind_int64(st, 7, (sqlite3_int64)s->min);
					sqlite3_bind_double(st, 8, s->median);
					sqlite3_bind_int64(st, 9, (sqlite3_int64)s->max);
					sqlite3_bind_double(st, 10, s->mean);
				} else {
					for (int k = 7; k <= 10; k++)
						sqlite3_bind_null(st, k);
				}
				sqlite3_bind_int(st, 11, s->multiplexed || s->not_counted ||
								 s->other_threads);
				bind_real(st, 12, lo);
				bind_real(st, 13, hi);
				if (sqlite3_step(st) != SQLITE_DONE)
					goto fail;
			}
	}
	sqlite3_finalize(st);
	st = NULL;
	if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	pmc__results_release(&rs);
	return 1;
fail:
	status = db_fail(db, dbpath, path);
	sqlite3_finalize(st);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	pmc__results_release(&rs);
	return status;
}

/* FILE, or every *.json of DIR (sorted). */
static int add_path(sqlite3 *db, const char *dbpath, const char *path, size_t *added,
		    size_t *present)
{
	struct stat sb;
	struct dirent **names;
	int n, rc = 0;

	if (stat(path, &sb) != 0) {
		fprintf(stderr, "pmcheck history: %s: %s\n", path, strerror(errno));
		return PMC_EXIT_ERROR;
	}
	if (!S_ISDIR(sb.st_mode)) {
		rc = add_file(db, dbpath, path);
		if (rc == 1)
			(*added)++;
		else if (rc == 0)
			(*present)++;
		return rc > 1 ? rc : 0;
	}
	n = scandir(path, &names, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		size_t len = strlen(names[i]->d_name);
		char *full = NULL;

		if (len > 5 && !strcmp(names[i]->d_name + len - 5, ".json") &&
		    asprintf(&full, "%s/%s", path, names[i]->d_name) >= 0) {
			int r = add_path(db, dbpath, full, added, present);

			rc = rc ? rc : r;
			free(full);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	return rc;
}

static int show(sqlite3 *db, const char *dbpath, const char *name, const char *event)
{
	sqlite3_stmt *st;
	int rows = 0;

	if (sqlite3_prepare_v2(db,
			       "SELECT r.date, r.git_commit, r.cpu_signature, r.backend, f.region, f.event,"
			       " f.min, f.median, f.max, f.verdict, f.partial, f.budget_lo, f.budget_hi"
			       " FROM figures f JOIN runs r ON r.id = f.run_id"
			       " WHERE f.case_name = ?1 AND (?2 IS NULL OR f.event = ?2)"
			       " ORDER BY f.region, f.event, r.cpu_signature, r.backend, r.date, r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, dbpath, "cannot read the history");
	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	if (event)
		sqlite3_bind_text(st, 2, event, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, 2);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *commit = (const char *)sqlite3_column_text(st, 1);
		char bounds[64] = "";

		if (rows++ == 0)
			printf("%-20s %-12s %-22s %-5s %-12s %-22s %12s %12s %12s %-8s %s\n", "date",
			       "commit", "cpu", "backend", "region", "event", "min", "median", "max",
			       "verdict", "budget");
		{
			bool has_lo = sqlite3_column_type(st, 11) != SQLITE_NULL;
			bool has_hi = sqlite3_column_type(st, 12) != SQLITE_NULL;
			double lo = sqlite3_column_double(st, 11), hi = sqlite3_column_double(st, 12);

			if (has_lo && has_hi && lo == hi)
				snprintf(bounds, sizeof(bounds), "= %.0f", lo);
			else if (has_lo && has_hi)
				snprintf(bounds, sizeof(bounds), "%.0f..%.0f", lo, hi);
			else if (has_hi)
				snprintf(bounds, sizeof(bounds), "<= %.0f", hi);
			else if (has_lo)
				snprintf(bounds, sizeof(bounds), ">= %.0f", lo);
		}
		printf("%-20.20s %-12.12s %-22.22s %-5.5s %-12.12s %-22.22s %12lld %12.1f %12lld %-8s %s%s\n",
		       (const char *)sqlite3_column_text(st, 0), commit ? commit : "-",
		       (const char *)sqlite3_column_text(st, 2), (const char *)sqlite3_column_text(st, 3),
		       (const char *)sqlite3_column_text(st, 4), (const char *)sqlite3_column_text(st, 5),
		       sqlite3_column_int64(st, 6), sqlite3_column_double(st, 7),
		       sqlite3_column_int64(st, 8), (const char *)sqlite3_column_text(st, 9), bounds,
		       sqlite3_column_int(st, 10) ? " (partial)" : "");
	}
	sqlite3_finalize(st);
	if (!rows) {
		fprintf(stderr, "pmcheck history: %s: no figures of case %s%s%s\n", dbpath, name,
			event ? ", event " : "", event ? event : "");
		return PMC_EXIT_FAIL;
	}
	return 0;
}

/* ---- history report: a static page, plots drawn by its own script ---------------- */

/* The page's script: every plot from the embedded data, as SVG; nothing
 * fetched.  Marks: regression (up), improvement (down), FAIL (ringed). */
static const char report_js[] =
	"(function(){\n"
	"var data=JSON.parse(document.getElementById('pmcheck-data').textContent);\n"
	"var NS='http://www.w3.org/2000/svg',W=720,H=240,L=70,R=180,T=14,B=34;\n"
	"var colors=['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2'];\n"
	"function el(n,a,p){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}\n"
	"function fmt(v){return Math.abs(v)>=1e6?(v/1e6).toFixed(2)+'M':Math.abs(v)>=1e4?(v/1e3).toFixed(1)+'k':String(Math.round(v*10)/10);}\n"
	"var root=document.getElementById('plots');\n"
	"data.cases.forEach(function(c){\n"
	" var sec=document.createElement('section');sec.className='case'+(c.failing?' failing':'');\n"
	" var h=document.createElement('h2');h.textContent=c.name+(c.failing?' \\u2014 failing':'');sec.appendChild(h);\n"
	" c.plots.forEach(function(p){\n"
	"  var h3=document.createElement('h3');h3.textContent=p.region+' / '+p.event;sec.appendChild(h3);\n"
	"  var xs=[];p.series.forEach(function(s){s.points.forEach(function(q){if(xs.indexOf(q.date)<0)xs.push(q.date);});});xs.sort();\n"
	"  var ys=[];p.series.forEach(function(s){s.points.forEach(function(q){ys.push(q.value);if(q.lo!==null)ys.push(q.lo);if(q.hi!==null)ys.push(q.hi);});});\n"
	"  var y0=Math.min.apply(null,ys),y1=Math.max.apply(null,ys);if(y0===y1){y0-=1;y1+=1;}var pad=(y1-y0)*0.08;y0-=pad;y1+=pad;\n"
	"  function X(d){return L+(xs.length>1?xs.indexOf(d)*(W-L-R)/(xs.length-1):(W-L-R)/2);}\n"
	"  function Y(v){return T+(y1-v)*(H-T-B)/(y1-y0);}\n"
	"  var svg=el('svg',{width:W,height:H,'class':'plot',viewBox:'0 0 '+W+' '+H});\n"
	"  el('line',{x1:L,y1:H-B,x2:W-R,y2:H-B,'class':'axis'},svg);el('line',{x1:L,y1:T,x2:L,y2:H-B,'class':'axis'},svg);\n"
	"  [y0+pad,(y0+y1)/2,y1-pad].forEach(function(v){var t=el('text',{x:L-6,y:Y(v)+4,'text-anchor':'end','class':'tick'},svg);t.textContent=fmt(v);});\n"
	"  var t0=el('text',{x:L,y:H-12,'class':'tick'},svg);t0.textContent=xs[0].slice(0,10);\n"
	"  var t1=el('text',{x:W-R,y:H-12,'text-anchor':'end','class':'tick'},svg);t1.textContent=xs[xs.length-1].slice(0,10)+' ('+xs.length+' commits or runs, in the order they first ran)';\n"
	"  p.series.forEach(function(s,i){\n"
	"   var col=colors[i%colors.length],last=s.points[s.points.length-1];\n"
	"   if(last.hi!==null)el('line',{x1:L,x2:W-R,y1:Y(last.hi),y2:Y(last.hi),stroke:col,'class':'budget'},svg);\n"
	"   if(last.lo!==null&&last.lo!==last.hi)el('line',{x1:L,x2:W-R,y1:Y(last.lo),y2:Y(last.lo),stroke:col,'class':'budget'},svg);\n"
	"   var d=s.points.map(function(q,k){return (k?'L':'M')+X(q.date).toFixed(1)+' '+Y(q.value).toFixed(1);}).join(' ');\n"
	"   el('path',{d:d,stroke:col,'class':'series'},svg);\n"
	"   s.points.forEach(function(q){var cl='point'+(q.mark?' '+q.mark:'')+(q.verdict==='FAIL'?' fail':'');\n"
	"    var pt=el('circle',{cx:X(q.date),cy:Y(q.value),r:q.mark||q.verdict==='FAIL'?5:3,fill:col,'class':cl},svg);\n"
	"    var ti=el('title',{},pt);ti.textContent=q.date.split('#')[0]+' '+(q.commit||'').slice(0,12)+' '+q.cpu+': '+q.value+' '+q.verdict+(q.mark?' ('+q.mark+')':'');});\n"
	"   var lg=el('text',{x:W-R+8,y:T+14+i*16,fill:col,'class':'legend'},svg);lg.textContent=s.label;\n"
	"  });\n"
	"  sec.appendChild(svg);\n"
	" });\n"
	" root.appendChild(sec);\n"
	"});\n"
	"document.getElementById('status').textContent='Drawn '+new Date().toISOString()+'.';\n"
	"})();\n";

static const char report_css[] =
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
	"h2{margin:28px 0 4px}section.failing h2{color:#b00}h3{margin:10px 0 2px;font-weight:500}"
	".axis{stroke:#888}.tick{font-size:11px;fill:#555}.legend{font-size:12px}"
	".series{fill:none;stroke-width:1.6}.budget{stroke-dasharray:5 4;stroke-width:1}"
	".point.regression{stroke:#b00;stroke-width:2}.point.improvement{stroke:#080;stroke-width:2}"
	".point.fail{stroke:#000;stroke-width:2}";

/* A point changed against the previous one of its series: more than 0.5%,
 * or at all where the series had not moved before. */
static const char *mark_of(double prev, double v, bool steady)
{
	double d = v - prev;

	if (d == 0 || (!steady && fabs(d) <= 0.005 * fabs(prev)))
		return NULL;
	return d > 0 ? "regression" : "improvement";
}

/* Write text with </ escaped, so embedded JSON cannot close the script. */
static void put_json_inline(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (s[0] == '<' && s[1] == '/')
			fputs("<\\", f);
		else
			fputc(*s, f);
	}
}

/* A case fails when the latest point of any of its series is a FAIL. */
static void mark_failing(json_t *cases)
{
	size_t i, j, k;
	json_t *c, *p, *sr;

	json_array_foreach(cases, i, c) {
		bool failing = false;

		json_array_foreach(json_object_get(c, "plots"), j, p)
			json_array_foreach(json_object_get(p, "series"), k, sr) {
				json_t *pts = json_object_get(sr, "points");
				json_t *last = json_array_get(pts, json_array_size(pts) - 1);

				failing = failing || !strcmp(pmc__jstr(last, "verdict"), "FAIL");
			}
		json_object_set_new(c, "failing", json_boolean(failing));
	}
}

/* Failing cases first, then by name (a stable order). */
static int by_failing(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	int fx = json_is_true(json_object_get(x, "failing")), fy = json_is_true(json_object_get(y, "failing"));

	return fx != fy ? fy - fx : strcmp(pmc__jstr(x, "name"), pmc__jstr(y, "name"));
}

/*
 * A line per CPU model and backend: each signature the history holds is
 * mapped to its hwdb model (the built-in map and PMCHECK_HWDB's), into a
 * temporary table the report's query joins; a signature no model matches
 * stands for itself.
 */
static int map_models(sqlite3 *db)
{
	const char *dirs[PMC_HWDB_MAX_DIRS];
	char *env = getenv("PMCHECK_HWDB") ? strdup(getenv("PMCHECK_HWDB")) : NULL, *save = NULL, *d;
	size_t ndirs = 0;
	struct pmc_hwdb *hw = NULL;
	struct pmc_error err;
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc = 0;

	for (d = env ? strtok_r(env, ":", &save) : NULL; d && ndirs < PMC_HWDB_MAX_DIRS;
	     d = strtok_r(NULL, ":", &save))
		dirs[ndirs++] = d;
	if (pmc_hwdb_open(&hw, dirs, ndirs, &err))
		fprintf(stderr, "pmcheck history: lines per signature, not per model: %s\n", err.message);
	if (sqlite3_exec(db, "CREATE TEMP TABLE models (signature TEXT PRIMARY KEY, model TEXT)", NULL,
			 NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT DISTINCT cpu_signature FROM runs WHERE cpu_signature IS NOT NULL",
			       -1, &sel, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO models VALUES (?, ?)", -1, &ins, NULL) != SQLITE_OK)
		rc = -1;
	while (rc == 0 && sqlite3_step(sel) == SQLITE_ROW) {
		const char *sig = (const char *)sqlite3_column_text(sel, 0);
		struct pmc_hwdb_match m;
		struct pmc_hwdb_model model;

		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, sig, -1, SQLITE_TRANSIENT);
		if (hw && pmc_hwdb_match(hw, sig, &m, &model) == 0)
			sqlite3_bind_text(ins, 2, m.model, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_text(ins, 2, sig, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(ins) != SQLITE_DONE)
			rc = -1;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	pmc_hwdb_free(hw);
	free(env);
	return rc;
}

static int report(sqlite3 *db, const char *dbpath, const char *dir)
{
	sqlite3_stmt *st;
	json_t *cases = json_array(), *sorted = json_array(), *doc;
	json_t *c = NULL, *plot = NULL, *series = NULL, **order;
	char lc[256] = "", lr[256] = "", le[256] = "", ls[256] = "", path[4096];
	char *text;
	size_t npoints = 0, nmarks = 0, n;
	double prev = 0;
	bool steady = true;
	FILE *f;
	int rc;

	if (map_models(db))
		return db_fail(db, dbpath, "cannot map CPU signatures to models");
	if (sqlite3_prepare_v2(db,
			       /* Each commit's first run, once (a subquery per figure
				* made the report quadratic: 14.6 s for 10,000 files). */
			       "WITH firsts AS (SELECT git_commit,"
			       "  min(date || '#' || printf('%08d', id)) AS first FROM runs"
			       "  WHERE git_commit IS NOT NULL GROUP BY git_commit)"
			       " SELECT f.case_name, f.region, f.event,"
			       " coalesce(m.model, r.cpu_signature, '?') || ' \u00b7 ' || r.backend AS line,"
			       /* The x position: the commit (ordered by its first run), so
				* every machine's run of one commit lines up; without a commit,
				* the run itself. */
			       " CASE WHEN r.git_commit IS NULL THEN r.date || '#' || printf('%08d', r.id)"
			       " ELSE fc.first || ' ' || r.git_commit END,"
			       " r.git_commit, f.min, f.verdict,"
			       " f.budget_lo, f.budget_hi, r.cpu_signature"
			       " FROM figures f JOIN runs r ON r.id = f.run_id"
			       " LEFT JOIN firsts fc ON fc.git_commit = r.git_commit"
			       " LEFT JOIN models m ON m.signature = r.cpu_signature WHERE f.min IS NOT NULL"
			       " ORDER BY f.case_name, f.region, f.event, line, 5, r.id",
			       -1, &st, NULL) != SQLITE_OK)
		return db_fail(db, dbpath, "cannot read the history");
	while (sqlite3_step(st) == SQLITE_ROW) {
#define COL(i) (sqlite3_column_text(st, (i)) ? (const char *)sqlite3_column_text(st, (i)) : "")
		double v = (double)sqlite3_column_int64(st, 6);
		const char *mark = NULL;
		bool new_case = strcmp(COL(0), lc) != 0;
		bool new_plot = new_case || strcmp(COL(1), lr) || strcmp(COL(2), le);
		bool new_series = new_plot || strcmp(COL(3), ls);

		if (new_case) {
			c = json_pack("{s:s, s:b, s:[]}", "name", COL(0), "failing", 0, "plots");
			json_array_append_new(cases, c);
		}
		if (new_plot) {
			plot = json_pack("{s:s, s:s, s:[]}", "region", COL(1), "event", COL(2), "series");
			json_array_append_new(json_object_get(c, "plots"), plot);
		}
		if (new_series) {
			series = json_pack("{s:s, s:[]}", "label", COL(3), "points");
			json_array_append_new(json_object_get(plot, "series"), series);
			steady = true;
		} else {
			mark = mark_of(prev, v, steady);
			steady = steady && v == prev;
		}
		json_array_append_new(
			json_object_get(series, "points"),
			json_pack("{s:s, s:s, s:s, s:f, s:s, s:o, s:o, s:s?}", "date", COL(4), "commit",
				  COL(5), "cpu", COL(10), "value", v, "verdict", COL(7), "lo",
				  sqlite3_column_type(st, 8) == SQLITE_NULL
					  ? json_null()
					  : json_real(sqlite3_column_double(st, 8)),
				  "hi",
				  sqlite3_column_type(st, 9) == SQLITE_NULL
					  ? json_null()
					  : json_real(sqlite3_column_double(st, 9)),
				  "mark", mark));
		npoints++;
		nmarks += mark != NULL;
		prev = v;
		snprintf(lc, sizeof(lc), "%s", COL(0));
		snprintf(lr, sizeof(lr), "%s", COL(1));
		snprintf(le, sizeof(le), "%s", COL(2));
		snprintf(ls, sizeof(ls), "%s", COL(3));
#undef COL
	}
	sqlite3_finalize(st);
	mark_failing(cases);
	n = json_array_size(cases);
	order = calloc(n + 1, sizeof(*order));
	for (size_t i = 0; order && i < n; i++)
		order[i] = json_array_get(cases, i);
	if (order)
		qsort(order, n, sizeof(*order), by_failing);
	for (size_t i = 0; order && i < n; i++)
		json_array_append(sorted, order[i]);
	free(order);
	json_decref(cases);
	doc = json_pack("{s:o}", "cases", sorted);
	text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	if (!text || (rc = pmc__mkdir_p(dir)) != 0) {
		free(text);
		fprintf(stderr, "pmcheck history: cannot make %s\n", dir);
		return PMC_EXIT_ERROR;
	}
	{
		char *page = NULL;
		size_t cap = 0;

		f = open_memstream(&page, &cap);
		if (!f) {
			free(text);
			return PMC_EXIT_ERROR;
		}
		fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			   "<title>pmcheck history</title>\n<style>%s</style></head>\n<body>\n"
			   "<h1>pmcheck history</h1>\n<p>%s: %zu cases, %zu runs' figures, %zu changes marked "
			   "(<span style=\"color:#b00\">regression</span>, <span style=\"color:#080\">improvement</span>; "
			   "ringed: FAIL; dashed: the latest budget). Failing cases first. <span id=\"status\"></span></p>\n"
			   "<noscript>The plots are drawn by the page's own script; enable JavaScript.</noscript>\n"
			   "<div id=\"plots\"></div>\n<script type=\"application/json\" id=\"pmcheck-data\">",
			report_css, dbpath, n, npoints, nmarks);
		put_json_inline(f, text);
		fprintf(f, "</script>\n<script>\n%s</script>\n</body></html>\n", report_js);
		fclose(f);
		free(text);
		snprintf(path, sizeof(path), "%s/index.html", dir);
		rc = page ? pmc_write_file_atomic(path, page, strlen(page)) : -ENOMEM;
		free(page);
	}
	if (rc) {
		fprintf(stderr, "pmcheck history: cannot write %s: %s\n", path, strerror(-rc));
		return PMC_EXIT_ERROR;
	}
	printf("%s: %zu cases, %zu points, %zu changes marked\n", path, n, npoints, nmarks);
	return 0;
}

int cmd_history(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "html", required_argument, NULL, 'H' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dbpath = getenv("PMCHECK_HISTORY_DB"), *sub, *html = NULL;
	int c, status = 0;
	sqlite3 *db;

	if (!dbpath || !*dbpath)
		dbpath = HISTORY_DEFAULT;
	while ((c = cli_next("history", argc, argv, "+h", opts, &status)) != -1) {
		if (c == -2)
			return status;
		if (c == 'd')
			dbpath = optarg;
		if (c == 'H')
			html = optarg;
	}
	if (optind >= argc)
		return cli_usage("history", "say what to do: add FILE|DIR... or show CASE [EVENT]");
	sub = argv[optind++];
	/* Options may follow the subcommand too. */
	while ((c = cli_next("history", argc, argv, "h", opts, &status)) != -1) {
		if (c == -2)
			return status;
		if (c == 'd')
			dbpath = optarg;
		if (c == 'H')
			html = optarg;
	}
	if (!strcmp(sub, "add")) {
		size_t added = 0, present = 0;
		int rc = 0;

		if (optind >= argc)
			return cli_usage("history", "add needs results files or directories");
		if ((status = db_open(dbpath, &db)) != 0)
			return status;
		for (int i = optind; i < argc; i++) {
			int r = add_path(db, dbpath, argv[i], &added, &present);

			rc = rc ? rc : r;
		}
		sqlite3_close(db);
		printf("%s: %zu results file(s) added, %zu already there\n", dbpath, added, present);
		return rc;
	}
	if (!strcmp(sub, "show")) {
		if (optind >= argc || argc - optind > 2)
			return cli_usage("history", "show takes a case name and, optionally, an event");
		if ((status = db_open(dbpath, &db)) != 0)
			return status;
		status = show(db, dbpath, argv[optind], optind + 1 < argc ? argv[optind + 1] : NULL);
		sqlite3_close(db);
		return status;
	}
	if (!strcmp(sub, "report")) {
		if (!html)
			return cli_usage("history", "report needs --html=DIR");
		if (optind != argc)
			return cli_usage("history", "report takes no operands");
		if ((status = db_open(dbpath, &db)) != 0)
			return status;
		status = report(db, dbpath, html);
		sqlite3_close(db);
		return status;
	}
	return cli_usage("history", "unknown subcommand \"%s\" (add, show, report)", sub);
}

#else

int cmd_history(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "pmcheck history: this pmcheck was built without SQLite (libsqlite3-dev); install it and rebuild\n");
	return PMC_EXIT_ERROR;
}

#endif
