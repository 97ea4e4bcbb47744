/* SPDX-License-Identifier: MIT */
/* pmcheck history report: one static page of the store's trends (history.h). */
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
#include "tools.h"
#include "history.h"

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

int history_report(sqlite3 *db, const char *dbpath, const char *dir)
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
		return history_fail(db, dbpath, "cannot map CPU signatures to models");
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
		return history_fail(db, dbpath, "cannot read the history");
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
