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
#include "changepoint.h"
#include "history.h"

/* The page's script: every plot from the embedded data, as SVG; nothing
 * fetched.  Marks: regression (up), improvement (down), FAIL (ringed). */
static const char report_js[] =
	"(function(){\n"
	"var data=JSON.parse(document.getElementById('pmcheck-data').textContent);\n"
	"var NS='http://www.w3.org/2000/svg',W=720,H=240,L=70,R=180,T=14,B=34;\n"
	"var colors=['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2'];\n"
	"var MARKS=['','regression','improvement'];\n"
	"function el(n,a,p){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}\n"
	"function fmt(v){return Math.abs(v)>=1e6?(v/1e6).toFixed(2)+'M':Math.abs(v)>=1e4?(v/1e3).toFixed(1)+'k':String(Math.round(v*10)/10);}\n"
	"var root=document.getElementById('plots');\n"
	"data.cases.forEach(function(c){\n"
	" var sec=document.createElement('section');sec.className='case'+(c.failing?' failing':'');\n"
	" var h=document.createElement('h2');h.textContent=c.name+(c.failing?' \\u2014 failing':'');sec.appendChild(h);\n"
	" c.plots.forEach(function(p){\n"
	"  var h3=document.createElement('h3');h3.textContent=p.region+' / '+p.event;sec.appendChild(h3);\n"
	/* A point: [commit index, value, runs, failed, mark]. */
	"  var seen={},xs=[];p.series.forEach(function(s){s.points.forEach(function(q){if(!seen[q[0]]){seen[q[0]]=1;xs.push(q[0]);}});});xs.sort(function(a,b){return a-b;});\n"
	"  var at={};xs.forEach(function(x,i){at[x]=i;});\n"
	"  var ys=[];p.series.forEach(function(s){s.points.forEach(function(q){ys.push(q[1]);});if(s.lo!==null)ys.push(s.lo);if(s.hi!==null)ys.push(s.hi);});\n"
	"  var y0=Math.min.apply(null,ys),y1=Math.max.apply(null,ys);if(y0===y1){y0-=1;y1+=1;}var pad=(y1-y0)*0.08;y0-=pad;y1+=pad;\n"
	"  function X(x){return L+(xs.length>1?at[x]*(W-L-R)/(xs.length-1):(W-L-R)/2);}\n"
	"  function Y(v){return T+(y1-v)*(H-T-B)/(y1-y0);}\n"
	"  var svg=el('svg',{width:W,height:H,'class':'plot',viewBox:'0 0 '+W+' '+H});\n"
	"  el('line',{x1:L,y1:H-B,x2:W-R,y2:H-B,'class':'axis'},svg);el('line',{x1:L,y1:T,x2:L,y2:H-B,'class':'axis'},svg);\n"
	"  [y0+pad,(y0+y1)/2,y1-pad].forEach(function(v){var t=el('text',{x:L-6,y:Y(v)+4,'text-anchor':'end','class':'tick'},svg);t.textContent=fmt(v);});\n"
	"  var t0=el('text',{x:L,y:H-12,'class':'tick'},svg);t0.textContent=data.commits[xs[0]][0].slice(0,10);\n"
	"  var t1=el('text',{x:W-R,y:H-12,'text-anchor':'end','class':'tick'},svg);t1.textContent=data.commits[xs[xs.length-1]][0].slice(0,10)+' ('+xs.length+' commits or runs, in the order they first ran)';\n"
	"  p.series.forEach(function(s,i){\n"
	"   var col=colors[i%colors.length];\n"
	"   if(s.hi!==null)el('line',{x1:L,x2:W-R,y1:Y(s.hi),y2:Y(s.hi),stroke:col,'class':'budget'},svg);\n"
	"   if(s.lo!==null&&s.lo!==s.hi)el('line',{x1:L,x2:W-R,y1:Y(s.lo),y2:Y(s.lo),stroke:col,'class':'budget'},svg);\n"
	"   var d=s.points.map(function(q,k){return (k?'L':'M')+X(q[0]).toFixed(1)+' '+Y(q[1]).toFixed(1);}).join(' ');\n"
	"   el('path',{d:d,stroke:col,'class':'series'},svg);\n"
	"   s.points.forEach(function(q){var mark=MARKS[q[4]],cl='point'+(mark?' '+mark:'')+(q[3]?' fail':'');\n"
	"    var pt=el('circle',{cx:X(q[0]),cy:Y(q[1]),r:mark||q[3]?5:3,fill:col,'class':cl},svg);\n"
	"    var cm=data.commits[q[0]];\n"
	"    var ti=el('title',{},pt);ti.textContent=cm[0]+' '+cm[1].slice(0,12)+' '+s.label+': '+q[1]+(q[2]>1?' (median of '+q[2]+' runs)':'')+(q[3]?' FAIL':'')+(mark?' ('+mark+')':'');});\n"
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
	".point.fail{stroke:#000;stroke-width:2}"
	"table.changes{border-collapse:collapse;margin:6px 0 18px}table.changes td,table.changes th{padding:2px 10px;text-align:left;white-space:nowrap}"
	"tr.regression td:last-child{color:#b00}tr.improvement td:last-child{color:#080}";

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

/* A case fails when the latest point of any of its series failed. */
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

				failing = failing || json_is_true(json_array_get(last, 3)) ||
					  json_integer_value(json_array_get(last, 3)) == 1;
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

/* Text for HTML. */
static void put_html(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* A change's point, as a key the plot's rows are looked up by. */
static char *mark_key(const char *c, const char *region, const char *event, const char *model,
		      const char *backend, const char *commit)
{
	char *k = NULL;

	if (asprintf(&k, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%s", c, region, event, model, backend,
		     commit ? commit : "") < 0)
		return NULL;
	return k;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The change points, newest first, as the page's first table. */
static int by_newest(const void *a, const void *b)
{
	const struct history_change *x = a, *y = b;
	int o = strcmp(y->order, x->order);

	return o ? o : (y->regression - x->regression);
}

/* The page lists the newest this many; `pmcheck history changes` has all. */
#define REPORT_CHANGES 100

static void put_changes(FILE *f, struct history_change *ch, size_t n)
{
	qsort(ch, n, sizeof(*ch), by_newest);
	fprintf(f, "<h2 id=\"changes\">Change points (%zu)</h2>\n", n);
	if (!n) {
		fputs("<p>No series moved.</p>\n", f);
		return;
	}
	if (n > REPORT_CHANGES)
		fprintf(f, "<p>The newest %d; <code>pmcheck history changes</code> lists all %zu.</p>\n",
			REPORT_CHANGES, n);
	fputs("<table class=\"changes\"><tr><th>commit</th><th>case / region / event</th><th>line</th>"
	      "<th>before</th><th>after</th><th>change</th><th>significance</th><th></th></tr>\n", f);
	for (size_t i = 0; i < n && i < REPORT_CHANGES; i++) {
		const struct history_change *c = &ch[i];

		fprintf(f, "<tr class=\"%s\"><td><code title=\"", c->regression ? "regression" : "improvement");
		put_html(f, c->commit);
		fprintf(f, "\">%.12s</code></td><td>", c->commit);
		put_html(f, c->case_name);
		fputs(" / ", f);
		put_html(f, c->region);
		fputs(" / ", f);
		put_html(f, c->event);
		fputs("</td><td>", f);
		put_html(f, c->model);
		fputs(" \u00b7 ", f);
		put_html(f, c->backend);
		fprintf(f, "</td><td>%.0f</td><td>%.0f</td><td>%+.2f%%</td><td>", c->before, c->after,
			100 * c->change);
		if (c->exact)
			fputs("exact", f);
		else
			fprintf(f, "p = %.4f", c->p_value);
		fprintf(f, "</td><td>%s</td></tr>\n", c->regression ? "regression" : "improvement");
	}
	fputs("</table>\n", f);
}

/* The runs of one line at one commit, as they are read. */
struct pending {
	double *v;
	size_t n, cap;
	bool failed;
	char *x;     /* the commit's place ("DATE#ID COMMIT") */
	int mark;    /* 0, 1 regression, 2 improvement */
};

static int pending_add(struct pending *p, double v)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		double *nv = realloc(p->v, cap * sizeof(*nv));

		if (!nv)
			return -1;
		p->v = nv;
		p->cap = cap;
	}
	p->v[p->n++] = v;
	return 0;
}

/* The point of the runs read: [x, median, runs, failed, mark]; x is the
 * commit's key for now, its index once every commit is known. */
static void pending_emit(struct pending *p, json_t *series, json_t *xkeys, size_t *npoints)
{
	if (!p->n)
		return;
	json_array_append_new(json_object_get(series, "points"),
			      json_pack("[s, f, I, i, i]", p->x, cp_median(p->v, p->n), (json_int_t)p->n,
					p->failed ? 1 : 0, p->mark));
	json_object_set_new(xkeys, p->x, json_true());
	(*npoints)++;
	p->n = 0;
	p->failed = false;
	p->mark = 0;
}

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every commit in order: [[date, commit], ...], and each point's key
 * replaced by its index there. */
static json_t *index_commits(json_t *cases, json_t *xkeys)
{
	size_t n = json_object_size(xkeys), i = 0, ci, pi, si, qi;
	const char **keys = calloc(n + 1, sizeof(*keys)), *k;
	json_t *v, *commits = json_array(), *index = json_object(), *c, *p, *sr, *q;

	json_object_foreach(xkeys, k, v)
		keys[i++] = k;
	qsort(keys, n, sizeof(*keys), cmp_cstr);
	for (i = 0; i < n; i++) {
		const char *hash = strchr(keys[i], '#'), *space = hash ? strchr(hash, ' ') : NULL;
		char *date = strndup(keys[i], hash ? (size_t)(hash - keys[i]) : strlen(keys[i]));

		json_array_append_new(commits, json_pack("[s, s]", date ? date : "", space ? space + 1 : ""));
		free(date);
		json_object_set_new(index, keys[i], json_integer((json_int_t)i));
	}
	json_array_foreach(cases, ci, c)
		json_array_foreach(json_object_get(c, "plots"), pi, p)
			json_array_foreach(json_object_get(p, "series"), si, sr)
				json_array_foreach(json_object_get(sr, "points"), qi, q)
					json_array_set(q, 0, json_object_get(index, json_string_value(json_array_get(q, 0))));
	free(keys);
	json_decref(index);
	return commits;
}

int history_report(struct hdb *db, const char *dir)
{
	struct hdb_stmt *st;
	struct history_changes_options copt = {
		.cp = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS, CP_DEFAULT_MIN_SIZE, 1 },
		.min_change = HISTORY_DEFAULT_MIN_CHANGE,
	};
	struct history_change *changes = NULL;
	struct pending pt = { 0 };
	size_t nchanges = 0, nseries = 0, nruns = 0;
	char **marks = NULL;
	json_t *cases = json_array(), *sorted = json_array(), *xkeys = json_object(), *doc, *commits;
	json_t *c = NULL, *plot = NULL, *series = NULL, **order;
	char lc[256] = "", lr[256] = "", le[256] = "", ls[512] = "", path[4096];
	char *text;
	size_t npoints = 0, nmarks = 0, n;
	FILE *f;
	int rc;

	if ((rc = history_changes(db, &copt, &changes, &nchanges, &nseries)) != 0)
		return rc;
	marks = calloc(nchanges + 1, sizeof(*marks));
	for (size_t i = 0; marks && i < nchanges; i++)
		marks[i] = mark_key(changes[i].case_name, changes[i].region, changes[i].event,
				    changes[i].model, changes[i].backend, changes[i].commit);
	if (marks)
		qsort(marks, nchanges, sizeof(*marks), cmp_str);
	st = hdb_prepare(db,
		/* Each commit's first run, once (a subquery per figure made the
		 * report quadratic: 14.6 s for 10,000 files). */
		"WITH firsts AS (SELECT git_commit, min(date) AS d, min(id) AS i FROM runs"
		"  WHERE git_commit IS NOT NULL GROUP BY git_commit)"
		" SELECT f.case_name, f.region, f.event, coalesce(m.model, r.cpu_signature, '?'),"
		" coalesce(r.backend, '?'), coalesce(fc.d, r.date, ''), coalesce(fc.i, r.id),"
		" coalesce(r.git_commit, r.date, ''), f.min, f.verdict, f.budget_lo, f.budget_hi,"
		" r.git_commit"
		" FROM figures f JOIN runs r ON r.id = f.run_id"
		" LEFT JOIN firsts fc ON fc.git_commit = r.git_commit"
		" LEFT JOIN models m ON m.signature = r.cpu_signature WHERE f.min IS NOT NULL"
		" ORDER BY 1, 2, 3, 4, 5, 6, 7, r.id");
	if (!st) {
		history_changes_free(changes, nchanges);
		return history_fail(db, "cannot read the history");
	}
	while (hdb_step(st) == 1) {
#define COL(i) (hdb_col_text(st, (i)) ? hdb_col_text(st, (i)) : "")
		char line[512], *x = NULL;
		bool new_case, new_plot, new_series;

		snprintf(line, sizeof(line), "%s \u00b7 %s", COL(3), COL(4));
		new_case = strcmp(COL(0), lc) != 0;
		new_plot = new_case || strcmp(COL(1), lr) || strcmp(COL(2), le);
		new_series = new_plot || strcmp(line, ls);
		/* The x position: the commit, ordered by its first run, so every
		 * machine's run of one commit lines up; without a commit, the run. */
		if (asprintf(&x, "%s#%020lld %s", COL(5), (long long)hdb_col_int(st, 6), COL(12)) < 0)
			break;
		if (new_series || !pt.x || strcmp(x, pt.x)) {
			pending_emit(&pt, series, xkeys, &npoints);
			free(pt.x);
			pt.x = x;
			x = NULL;
			if (marks && nchanges) {
				char *key = mark_key(COL(0), COL(1), COL(2), COL(3), COL(4), COL(7));

				if (key && bsearch(&key, marks, nchanges, sizeof(*marks), cmp_str))
					for (size_t i = 0; i < nchanges; i++)
						if (!strcmp(changes[i].case_name, COL(0)) &&
						    !strcmp(changes[i].region, COL(1)) &&
						    !strcmp(changes[i].event, COL(2)) &&
						    !strcmp(changes[i].model, COL(3)) &&
						    !strcmp(changes[i].backend, COL(4)) &&
						    !strcmp(changes[i].commit, COL(7)))
							pt.mark = changes[i].regression ? 1 : 2;
				free(key);
			}
		}
		free(x);
		if (new_case) {
			c = json_pack("{s:s, s:b, s:[]}", "name", COL(0), "failing", 0, "plots");
			json_array_append_new(cases, c);
		}
		if (new_plot) {
			plot = json_pack("{s:s, s:s, s:[]}", "region", COL(1), "event", COL(2), "series");
			json_array_append_new(json_object_get(c, "plots"), plot);
		}
		if (new_series) {
			series = json_pack("{s:s, s:[]}", "label", line, "points");
			json_array_append_new(json_object_get(plot, "series"), series);
		}
		/* The series' budget: the latest run's. */
		json_object_set_new(series, "lo", hdb_col_null(st, 10) ? json_null() : json_real(hdb_col_real(st, 10)));
		json_object_set_new(series, "hi", hdb_col_null(st, 11) ? json_null() : json_real(hdb_col_real(st, 11)));
		pending_add(&pt, (double)hdb_col_int(st, 8));
		pt.failed = pt.failed || !strcmp(COL(9), "FAIL");
		nruns++;
		snprintf(lc, sizeof(lc), "%s", COL(0));
		snprintf(lr, sizeof(lr), "%s", COL(1));
		snprintf(le, sizeof(le), "%s", COL(2));
		snprintf(ls, sizeof(ls), "%s", line);
#undef COL
	}
	pending_emit(&pt, series, xkeys, &npoints);
	hdb_finalize(st);
	free(pt.x);
	free(pt.v);
	for (size_t i = 0; marks && i < nchanges; i++)
		free(marks[i]);
	free(marks);
	/* Marks drawn: one per line and commit of each change point. */
	nmarks = nchanges;
	mark_failing(cases);
	commits = index_commits(cases, xkeys);
	json_decref(xkeys);
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
	doc = json_pack("{s:o, s:o}", "commits", commits, "cases", sorted);
	text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
	json_decref(doc);
	if (!text || (rc = pmc__mkdir_p(dir)) != 0) {
		free(text);
		history_changes_free(changes, nchanges);
		fprintf(stderr, "pmcheck history: cannot make %s\n", dir);
		return PMC_EXIT_ERROR;
	}
	{
		char *page = NULL;
		size_t cap = 0;

		f = open_memstream(&page, &cap);
		if (!f) {
			free(text);
			history_changes_free(changes, nchanges);
			return PMC_EXIT_ERROR;
		}
		fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
			   "<title>pmcheck history</title>\n<style>%s</style></head>\n<body>\n"
			   "<h1>pmcheck history</h1>\n<p>",
			report_css);
		put_html(f, hdb_name(db));
		fprintf(f, ": %zu cases, %zu runs' figures, %zu series, %zu change points marked "
			   "(<span style=\"color:#b00\">regression</span>, <span style=\"color:#080\">improvement</span>; "
			   "ringed: a run failed; dashed: the latest budget). A point is the median of a line's "
			   "runs at one commit. Failing cases first. <span id=\"status\"></span></p>\n",
			n, nruns, nseries, nmarks);
		put_changes(f, changes, nchanges);
		fputs("<noscript>The plots are drawn by the page's own script; enable JavaScript.</noscript>\n"
		      "<div id=\"plots\"></div>\n<script type=\"application/json\" id=\"pmcheck-data\">", f);
		put_json_inline(f, text);
		fprintf(f, "</script>\n<script>\n%s</script>\n</body></html>\n", report_js);
		fclose(f);
		free(text);
		snprintf(path, sizeof(path), "%s/index.html", dir);
		rc = page ? pmc_write_file_atomic(path, page, strlen(page)) : -ENOMEM;
		free(page);
		history_changes_free(changes, nchanges);
	}
	if (rc) {
		fprintf(stderr, "pmcheck history: cannot write %s: %s\n", path, strerror(-rc));
		return PMC_EXIT_ERROR;
	}
	printf("%s: %zu cases, %zu runs, %zu points, %zu series, %zu change points marked\n", path, n,
	       nruns, npoints, nseries, nmarks);
	return 0;
}
