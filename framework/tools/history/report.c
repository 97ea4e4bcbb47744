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

#include "../cli.h"
#include "changepoint.h"
#include "history.h"

/* The page's script: every plot from the embedded data, as SVG; nothing
 * fetched.  Marks: regression (up), improvement (down), FAIL (ringed). */
static const char report_js[] =
	"(function(){\n"
	"var data=JSON.parse(document.getElementById('pmcheck-data').textContent);\n"
	"var root=document.getElementById('plots');\n"
	/* The plots take the page's width (the container's, drawn again when
	 * it changes); the legend goes under the axis, a row per line, so a
	 * long label is shown whole. */
	"var NS='http://www.w3.org/2000/svg',H=260,L=70,R=16,T=14,B=58,LG=17;\n"
	"var colors=['#1f77b4','#d62728','#2ca02c','#9467bd','#ff7f0e','#17becf','#8c564b','#e377c2'];\n"
	"var MARKS=['','regression','improvement'];\n"
	"function el(n,a,p){var e=document.createElementNS(NS,n);for(var k in a)e.setAttribute(k,a[k]);if(p)p.appendChild(e);return e;}\n"
	"function fmt(v){return Math.abs(v)>=1e6?(v/1e6).toFixed(2)+'M':Math.abs(v)>=1e4?(v/1e3).toFixed(1)+'k':String(Math.round(v*10)/10);}\n"
	/* A commit as the x axis names it: its short hash (a run of no commit: its date). */
	"function short(i){var c=data.commits[i];return c[2]?c[1].slice(0,7):c[1].slice(0,16);}\n"
	"function draw(){\n"
	"var W=Math.max(480,Math.floor(root.clientWidth));\n"
	"root.textContent='';\n"
	"data.cases.forEach(function(c){\n"
	/* In the page before its plots: a label's width is measured there. */
	" var sec=document.createElement('section');sec.className='case'+(c.failing?' failing':'');root.appendChild(sec);\n"
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
	"  var HT=H+p.series.length*LG;\n"
	"  var svg=el('svg',{width:W,height:HT,'class':'plot',viewBox:'0 0 '+W+' '+HT},sec);\n"
	"  el('line',{x1:L,y1:H-B,x2:W-R,y2:H-B,'class':'axis'},svg);el('line',{x1:L,y1:T,x2:L,y2:H-B,'class':'axis'},svg);\n"
	"  [y0+pad,(y0+y1)/2,y1-pad].forEach(function(v){var t=el('text',{x:L-6,y:Y(v)+4,'text-anchor':'end','class':'tick'},svg);t.textContent=fmt(v);});\n"
	/* Commits on the x axis, turned, as many as fit 14 px apart. */
	"  var every=Math.max(1,Math.ceil(14*xs.length/(W-L-R)));\n"
	"  xs.forEach(function(x,i){if(i%every&&i!==xs.length-1)return;var px=X(x),py=H-B+6;\n"
	"   el('line',{x1:px,y1:H-B,x2:px,y2:H-B+4,'class':'axis'},svg);\n"
	"   var t=el('text',{x:px,y:py,'text-anchor':'end','class':'tick xtick',transform:'rotate(-60 '+px+' '+(py+3)+')'},svg);t.textContent=short(x);});\n"
	"  p.series.forEach(function(s,i){\n"
	"   var col=colors[i%colors.length];\n"
	"   if(s.hi!==null)el('line',{x1:L,x2:W-R,y1:Y(s.hi),y2:Y(s.hi),stroke:col,'class':'budget'},svg);\n"
	"   if(s.lo!==null&&s.lo!==s.hi)el('line',{x1:L,x2:W-R,y1:Y(s.lo),y2:Y(s.lo),stroke:col,'class':'budget'},svg);\n"
	"   var d=s.points.map(function(q,k){return (k?'L':'M')+X(q[0]).toFixed(1)+' '+Y(q[1]).toFixed(1);}).join(' ');\n"
	"   el('path',{d:d,stroke:col,'class':'series'},svg);\n"
	"   s.points.forEach(function(q){var mark=MARKS[q[4]],cl='point'+(mark?' '+mark:'')+(q[3]?' fail':'');\n"
	"    if(q[3])el('circle',{cx:X(q[0]),cy:Y(q[1]),r:8,'class':'ring'},svg);\n"
	"    var pt=el('circle',{cx:X(q[0]),cy:Y(q[1]),r:mark||q[3]?5:3,fill:col,'class':cl},svg);\n"
	"    var cm=data.commits[q[0]];\n"
	"    var ti=el('title',{},pt);ti.textContent=cm[0]+' '+cm[1].slice(0,12)+' '+s.label+': '+q[1]+(q[2]>1?' (median of '+q[2]+' runs)':'')+(q[3]?' FAIL':'')+(mark?' ('+mark+')':'');});\n"
	"   el('line',{x1:L,x2:L+18,y1:H+i*LG+5,y2:H+i*LG+5,stroke:col,'class':'series'},svg);\n"
	"   var lg=el('text',{x:L+24,y:H+i*LG+9,fill:col,'class':'legend'},svg);lg.textContent=s.label;\n"
	/* A label wider than the plot is narrowed to fit, never cut. */
	"   var room=W-L-24-4;if(lg.getComputedTextLength&&lg.getComputedTextLength()>room){lg.setAttribute('textLength',room);lg.setAttribute('lengthAdjust','spacingAndGlyphs');}\n"
	"  });\n"
	" });\n"
	"});\n"
	"}\n"
	"draw();\n"
	"var drawnAt=root.clientWidth,again=null;\n"
	"window.addEventListener('resize',function(){clearTimeout(again);again=setTimeout(function(){if(root.clientWidth!==drawnAt){drawnAt=root.clientWidth;draw();}},150);});\n"
	"document.getElementById('status').textContent='Drawn '+new Date().toISOString()+'.';\n"
	"})();\n";

static const char report_css[] =
	"body{font:14px system-ui,sans-serif;margin:24px;color:#222}"
	"h2{margin:28px 0 4px}section.failing h2{color:#b00}h3{margin:10px 0 2px;font-weight:500}"
	".axis{stroke:#888}.tick{font-size:11px;fill:#555}.legend{font-size:12px}svg.plot{display:block}"
	".series{fill:none;stroke-width:1.6}.budget{stroke-dasharray:5 4;stroke-width:1}"
	".point.regression{stroke:#b00;stroke-width:2}.point.improvement{stroke:#080;stroke-width:2}"
	/* A failed run's ring is a circle of its own around the point, so a
	 * point both failed and a regression keeps its red stroke. */
	".ring{fill:none;stroke:#000;stroke-width:1.5}"
	/* Figures on one line; a long name wraps, so the table fits the page. */
	"table.changes{border-collapse:collapse;margin:6px 0 18px;max-width:100%}"
	"table.changes td,table.changes th{padding:2px 10px;text-align:left;white-space:nowrap;vertical-align:top}"
	"table.changes td.name{white-space:normal;overflow-wrap:anywhere}"
	"p.keys code{overflow-wrap:anywhere}"
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

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The change points, newest first, as the page's first table. */
static int by_newest(const void *a, const void *b)
{
	const struct history_change *x = a, *y = b;

	if (x->rank != y->rank)
		return (y->rank > x->rank) - (y->rank < x->rank);
	return y->regression - x->regression;
}

/*
 * The sim keys of the page's lines (a sim line is "KEY ENGINE"), each
 * printed whole once, in the page's header, and written "<key>" (or
 * "<key 2>" where there are several) in every label and row: the key is
 * about 90 characters, and in each row it pushed the figures off the page.
 */
struct sim_keys {
	char **full;
	size_t n;
};

/* The length of a sim line's key: its model up to the engine, or 0. */
static size_t sim_key_len(const char *model, const char *backend)
{
	if (!model || !backend || strcmp(backend, "sim") || strncmp(model, "sim-", 4))
		return 0;
	return strcspn(model, " ");
}

static int sim_keys_collect(struct sim_keys *k, const struct history_data *d)
{
	for (size_t i = 0; i < d->nlines; i++) {
		size_t len = sim_key_len(d->lines[i].model, d->lines[i].backend), j;
		char **grown;

		if (!len)
			continue;
		for (j = 0; j < k->n; j++)
			if (strlen(k->full[j]) == len && !strncmp(k->full[j], d->lines[i].model, len))
				break;
		if (j < k->n)
			continue;
		grown = realloc(k->full, (k->n + 1) * sizeof(*grown));
		if (!grown)
			return -1;
		k->full = grown;
		if (!(k->full[k->n] = strndup(d->lines[i].model, len)))
			return -1;
		k->n++;
	}
	return 0;
}

static void sim_keys_release(struct sim_keys *k)
{
	for (size_t i = 0; i < k->n; i++)
		free(k->full[i]);
	free(k->full);
}

/* The short name of key i. */
static void sim_key_short(const struct sim_keys *k, size_t i, char *buf, size_t size)
{
	if (k->n == 1)
		snprintf(buf, size, "<key>");
	else
		snprintf(buf, size, "<key %zu>", i + 1);
}

/* A line's label, "MODEL · BACKEND", its sim key written short. */
static void line_label(const struct sim_keys *k, const char *model, const char *backend, char *buf,
		       size_t size)
{
	size_t len = sim_key_len(model, backend);

	for (size_t i = 0; len && i < k->n; i++)
		if (strlen(k->full[i]) == len && !strncmp(k->full[i], model, len)) {
			char name[32];

			sim_key_short(k, i, name, sizeof(name));
			snprintf(buf, size, "%s%s \u00b7 %s", name, model + len, backend);
			return;
		}
	snprintf(buf, size, "%s \u00b7 %s", model, backend);
}

/* The page's header line of the keys, each whole once. */
static void put_sim_keys(FILE *f, const struct sim_keys *k)
{
	if (!k->n)
		return;
	fprintf(f, "<p class=\"keys\">Sim key%s, written ", k->n > 1 ? "s" : "");
	for (size_t i = 0; i < k->n; i++) {
		char name[32];

		sim_key_short(k, i, name, sizeof(name));
		fputs(i ? "; " : "", f);
		put_html(f, name);
		fputs(" below: <code>", f);
		put_html(f, k->full[i]);
		fputs("</code>", f);
	}
	fputs(".</p>\n", f);
}

/* The page lists the newest this many; `pmcheck history changes` has all. */
#define REPORT_CHANGES 100

static void put_changes(FILE *f, struct history_change *ch, size_t n, const struct sim_keys *keys)
{
	if (n > 1) /* qsort's array may be NULL when empty */
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
		char label[512];

		fprintf(f, "<tr class=\"%s\"><td><code title=\"", c->regression ? "regression" : "improvement");
		put_html(f, c->commit);
		fprintf(f, "\">%.12s</code></td><td class=\"name\">", c->commit);
		put_html(f, c->case_name);
		fputs(" / ", f);
		put_html(f, c->region);
		fputs(" / ", f);
		put_html(f, c->event);
		fputs("</td><td class=\"name\">", f);
		line_label(keys, c->model, c->backend, label, sizeof(label));
		put_html(f, label);
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

/* A change's point, as a key: series and commit rank. */
static char *point_key(const char *c, const char *region, const char *event, const char *model,
		       const char *backend, size_t rank)
{
	char *k = NULL;

	if (asprintf(&k, "%s\x1f%s\x1f%s\x1f%s\x1f%s\x1f%zu", c, region, event, model, backend, rank) < 0)
		return NULL;
	return k;
}

/* Each change point's key, with its kind after a last \x1f (sorted). */
static char **change_keys(const struct history_change *ch, size_t n)
{
	char **keys = calloc(n + 1, sizeof(*keys));

	for (size_t i = 0; keys && i < n; i++) {
		char *k = point_key(ch[i].case_name, ch[i].region, ch[i].event, ch[i].model, ch[i].backend,
				    ch[i].rank);

		if (k && asprintf(&keys[i], "%s\x1f%d", k, ch[i].regression ? 1 : 2) < 0)
			keys[i] = NULL;
		free(k);
		if (!keys[i])
			keys[i] = strdup("");
	}
	if (keys)
		if (n > 1) /* qsort's array may be NULL when empty */
			qsort(keys, n, sizeof(*keys), cmp_str);
	return keys;
}

/* 1 regression, 2 improvement, 0 none: the mark of a series' point. */
static int mark_of(char **keys, size_t n, const char *key)
{
	size_t lo = 0, hi = n, len = strlen(key);

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strncmp(keys[mid], key, len);

		if (c == 0 && keys[mid][len] == '\x1f')
			return atoi(keys[mid] + len + 1);
		if (c < 0 || (c == 0 && keys[mid][len] < '\x1f'))
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

static json_t *real_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

int history_report(struct hdb *db, const char *dir)
{
	struct history_changes_options copt = {
		.cp = { CP_DEFAULT_SIGNIFICANCE, CP_DEFAULT_PERMUTATIONS, CP_DEFAULT_MIN_SIZE, 1 },
		.min_change = HISTORY_DEFAULT_MIN_CHANGE,
	};
	struct history_filter all = { 0 };
	struct history_data d;
	struct history_change *changes = NULL;
	struct sim_keys skeys = { 0 };
	size_t nchanges = 0, nseries = 0, nruns = 0, npoints = 0, n;
	char **keys;
	json_t *cases = json_array(), *sorted = json_array(), *commits = json_array(), *doc;
	json_t *c = NULL, *plot = NULL, **order;
	char path[4096];
	char *text;
	FILE *f;
	int rc;

	if ((rc = history_load(db, &all, &d)) != 0)
		return rc;
	if (sim_keys_collect(&skeys, &d) ||
	    history_changes_of(&d, &copt, &changes, &nchanges, &nseries)) {
		sim_keys_release(&skeys);
		history_data_release(&d);
		fprintf(stderr, "pmcheck history report: out of memory\n");
		return PMC_EXIT_ERROR;
	}
	keys = change_keys(changes, nchanges);
	for (size_t i = 0; i < d.ncommits; i++)
		json_array_append_new(commits, json_pack("[s, s, b]", d.commits[i].date, d.commits[i].name,
							 d.commits[i].has_commit));
	for (size_t i = 0; i < d.nseries; i++) {
		const struct history_series *s = &d.series[i];
		const struct history_line *l = &d.lines[s->line];
		const struct history_series *prev = i ? &d.series[i - 1] : NULL;
		bool new_case = !prev || strcmp(prev->case_name, s->case_name);
		bool new_plot = new_case || strcmp(prev->region, s->region) || strcmp(prev->event, s->event);
		char label[512];
		json_t *series, *points = json_array();

		if (new_case) {
			c = json_pack("{s:s, s:b, s:[]}", "name", s->case_name, "failing", 0, "plots");
			json_array_append_new(cases, c);
		}
		if (new_plot) {
			plot = json_pack("{s:s, s:s, s:[]}", "region", s->region, "event", s->event, "series");
			json_array_append_new(json_object_get(c, "plots"), plot);
		}
		line_label(&skeys, l->model, l->backend, label, sizeof(label));
		for (size_t k = 0; k < s->npoints; k++) {
			const struct history_point *p = &s->points[k];
			char *key = point_key(s->case_name, s->region, s->event, l->model, l->backend, p->commit);
			int mark = key && keys ? mark_of(keys, nchanges, key) : 0;

			free(key);
			json_array_append_new(points, json_pack("[I, f, I, i, i]", (json_int_t)p->commit, p->value,
								(json_int_t)p->runs, p->failed ? 1 : 0, mark));
			nruns += p->runs;
			npoints++;
		}
		series = json_pack("{s:s, s:o, s:o, s:o}", "label", label, "lo", real_or_null(s->lo), "hi",
				   real_or_null(s->hi), "points", points);
		json_array_append_new(json_object_get(plot, "series"), series);
	}
	for (size_t i = 0; keys && i < nchanges; i++)
		free(keys[i]);
	free(keys);
	history_data_release(&d);
	mark_failing(cases);
	n = json_array_size(cases);
	order = calloc(n + 1, sizeof(*order));
	for (size_t i = 0; order && i < n; i++)
		order[i] = json_array_get(cases, i);
	if (order)
		if (n > 1) /* qsort's array may be NULL when empty */
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
		sim_keys_release(&skeys);
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
			sim_keys_release(&skeys);
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
			   "ringed: the figure failed in a run at that commit; dashed: the latest budget). A point "
			   "is the median of a line's runs at one commit; the x axis names the commits. Failing "
			   "cases first. <span id=\"status\"></span></p>\n",
			n, nruns, nseries, nchanges);
		put_sim_keys(f, &skeys);
		put_changes(f, changes, nchanges, &skeys);
		fputs("<noscript>The plots are drawn by the page's own script; enable JavaScript.</noscript>\n"
		      "<div id=\"plots\"></div>\n<script type=\"application/json\" id=\"pmcheck-data\">", f);
		put_json_inline(f, text);
		fprintf(f, "</script>\n<script>\n%s</script>\n</body></html>\n", report_js);
		fclose(f);
		free(text);
		snprintf(path, sizeof(path), "%s/index.html", dir);
		rc = page ? pmc_write_file_atomic(path, page, strlen(page)) : -ENOMEM;
		free(page);
		sim_keys_release(&skeys);
		history_changes_free(changes, nchanges);
	}
	if (rc) {
		fprintf(stderr, "pmcheck history: cannot write %s: %s\n", path, strerror(-rc));
		return PMC_EXIT_ERROR;
	}
	printf("%s: %zu cases, %zu figures, %zu points, %zu series, %zu change points marked\n", path, n,
	       nruns, npoints, nseries, nchanges);
	return 0;
}
