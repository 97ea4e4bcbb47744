#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcheck history report, end to end: a small project whose one source
file changes over 28 commits, built and run on the sim backend at each
commit (real runs: the commit comes from the project's git), its results
filed for three machines of two CPU models (hwdb's map: zen4 twice,
cascadelake-x), added to a history, rendered as a page, and
the page opened in headless Chromium: the plots its script draws are
counted in the DOM (series paths, points, marked changes, failing runs,
budget lines), and the failing case comes first.  At a window 1,400 pixels
wide a script the test adds to a copy of the page measures what a reviewer
sees: no horizontal scroll, the change table inside the page, plots the
page's width, every legend inside its plot, the x axis naming the commits;
and the ~90-character sim key is printed once."""
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401


def page_css(dom):
    return "".join(re.findall(r"<style[^>]*>(.*?)</style>", dom, re.S))

CLI, INCLUDES, LIBDIR, MAIN_LIB = sys.argv[1:5]
INCLUDE_FLAGS = ["-I" + d for d in INCLUDES.split(os.pathsep)]
SHOT = os.environ.get("PMCHECK_REPORT_SCREENSHOT")


if os.environ.get("PMCHECK_TEST_SANITIZED") == "1":
    print("SKIP: the sim backend does not run sanitized builds")
    sys.exit(77)
browser = shutil.which("chromium") or shutil.which("chromium-browser")
if not browser:
    print("SKIP: no chromium on PATH (ci/setup installs Debian's chromium)")
    sys.exit(77)

# Iterations of the loop at each commit: steps up (regressions) and down
# (improvements); the last three exceed the bound (FAIL).  Every level but
# the first and the newest lasts --min-size commits (5), so the series is
# exact and each step is a change point (docs/history.md).
SIZES = [1000] * 5 + [1100] * 5 + [1000] * 5 + [1200] * 5 + [900] * 5 + [1500] * 3
BOUND = 12000
SOURCE = """/* revision %d */
#include <pmcheck/harness.h>

__attribute__((noinline, used)) unsigned spin(unsigned n)
{
	unsigned s = 0;

	for (unsigned i = 0; i < n; i++) {
		s += i ^ (s >> 3);
		PMC_DO_NOT_OPTIMIZE(s);
	}
	return s;
}

PMC_TEST(trend, loop, .events = "instructions:u", .reps = 1)
{
	unsigned s = 0;

	PMC_REGION(t, "loop") {
		s += spin(%d);
	}
	PMC_REGION(t, "setup") {
		s += spin(300);
	}
	PMC_DO_NOT_OPTIMIZE(s);
	PMC_EXPECT_LE(t, "loop", "instructions:u", %d);
	PMC_EXPECT_LE(t, "setup", "instructions:u", %d);
}

PMC_TEST(trend, steady, .events = "instructions:u", .reps = 1)
{
	unsigned s = 0;

	PMC_REGION(t, "fixed") {
		s += spin(500);
	}
	PMC_DO_NOT_OPTIMIZE(s);
}
"""


def git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                   env=dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t",
                            GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t"))


with tempfile.TemporaryDirectory() as d:
    proj, res = os.path.join(d, "proj"), os.path.join(d, "results")
    os.makedirs(proj)
    os.makedirs(res)
    git("init", "-q", cwd=proj)
    values = []
    # Per commit and case: (instructions, engine); the profile of the runs.
    figures = {"trend.loop": [], "trend.steady": []}
    profiles = set()
    for i, n in enumerate(SIZES):
        with open(os.path.join(proj, "work.c"), "w") as f:
            f.write(SOURCE % (i, n, BOUND, BOUND))
        git("add", "work.c", cwd=proj)
        git("commit", "-q", "-m", f"loop of {n}", cwd=proj)
        exe = os.path.join(proj, "work")
        p = subprocess.run(["cc", "-O1", "-o", exe, "work.c", *INCLUDE_FLAGS, MAIN_LIB, f"-L{LIBDIR}",
                            "-lpmcheck_harness", "-lpmcheck", f"-Wl,-rpath,{LIBDIR}"], cwd=proj,
                           capture_output=True, text=True)
        if p.returncode:
            print("FAIL: build:", p.stderr)
            sys.exit(1)
        out = os.path.join(res, "run-%02d.json" % i)
        p = subprocess.run([exe, "--backend=sim", f"--json={out}"], cwd=proj, capture_output=True,
                           text=True, timeout=120)
        check(p.returncode in (0, 1), f"commit {i}: {p.returncode} {p.stdout[-300:]}")
        with open(out) as f:
            doc = json.load(f)
        case = [c for c in doc["cases"] if c["name"] == "trend.loop"][0]
        values.append(case["regions"][0]["events"]["instructions:u"]["min"])
        for c in doc["cases"]:
            figures[c["name"]].append((c["regions"][0]["events"]["instructions:u"]["min"], c.get("sim_engine")))
            profiles.add(c.get("sim_profile"))
        check(re.fullmatch(r"[0-9a-f]{40}", doc["environment"]["git_commit"] or ""),
              f"commit {i}: the project's commit recorded: {doc['environment']['git_commit']}")
        # The same figures as three machines: two of one model (zen4, the
        # second at every other commit) and one of another.
        for name, sig, every in (("run", "AuthenticAMD-25-11-1", 1), ("zen4b", "AuthenticAMD-25-11-2", 2),
                                 ("intel", "GenuineIntel-6-55-7", 1)):
            if i % every:
                continue
            doc["environment"]["cpu"]["signature"] = sig
            doc["environment"]["hostname"] = name
            with open(os.path.join(res, "%s-%02d.json" % (name, i)), "w") as f:
                json.dump(doc, f)
    print("instructions per commit:", values)

    db, html_dir = os.path.join(d, "h.sqlite"), os.path.join(d, "report")
    p = subprocess.run([CLI, "history", f"--db={db}", "add", res], capture_output=True, text=True)
    nfiles = 2 * len(SIZES) + (len(SIZES) + 1) // 2
    check(p.returncode == 0 and f"{nfiles} results file(s) added" in p.stdout, p.stdout + p.stderr)
    p = subprocess.run([CLI, "history", f"--db={db}", "report", f"--html={html_dir}"], capture_output=True,
                       text=True)
    check(p.returncode == 0, p.stdout + p.stderr)
    page = os.path.join(html_dir, "index.html")
    with open(page) as f:
        text = f.read()
    check("http://" not in text.replace("http://www.w3.org/2000/svg", "") and "https://" not in text
          and "<script src" not in text and "<link" not in text, "everything inline, no network")

    # What the page must show, from the figures themselves.  Sim counts do
    # not depend on the host: a line is a sim profile and engine, pooling
    # all three machines, so a point is every machine's run at one commit
    # ("run" and "intel" at every commit, zen4b at even ones).  The pmcheck
    # tool and callgrind would be separate lines (one series per sim profile
    # and engine); a failing case is reported as the tool counted it (the
    # callgrind re-run only names the functions), so every commit, failing
    # or not, is on the tool's line.  Each line is exact: every change is a
    # change point at its commit, marked once.
    engines = {name: {e for _, e in f} for name, f in figures.items()}
    check(engines == {"trend.loop": {"pmcheck"}, "trend.steady": {"pmcheck"}},
          f"every commit counted by the tool, failing ones too: {engines}")
    check(len(profiles) == 1 and None not in profiles, f"one sim profile: {profiles}")
    profile = sorted(p or "" for p in profiles)[0]
    up = down = changes = 0
    for f in figures.values():
        for e in {e for _, e in f}:
            line = [v for v, en in f if en == e]
            up += sum(b > a for a, b in zip(line, line[1:]))
            down += sum(b < a for a, b in zip(line, line[1:]))
            changes += sum(a != b for a, b in zip(line, line[1:]))
    fails = sum(v > BOUND for v in values)
    check(up >= 2 and down >= 2 and fails == 3, f"the project has regressions, improvements, failures: {up} {down} {fails}")

    p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                        "file://" + page], capture_output=True, text=True, timeout=120)
    dom = p.stdout
    check(p.returncode == 0 and "<svg" in dom, f"chromium rendered the page: {p.returncode} {p.stderr[-300:]}")
    n_plots = len(re.findall(r'<svg[^>]*class="plot"', dom))
    n_series = len(re.findall(r'<path[^>]*class="series"', dom))
    n_points = len(re.findall(r'<circle[^>]*class="point', dom))
    n_up = len(re.findall(r'class="point regression', dom))
    n_down = len(re.findall(r'class="point improvement', dom))
    n_fail = len(re.findall(r'class="point[^"]* fail"', dom))
    n_budget = len(re.findall(r'<line[^>]*class="budget"', dom))
    print(f"DOM: {n_plots} plots, {n_series} series, {n_points} points, {n_up} regressions, "
          f"{n_down} improvements, {n_fail} failing, {n_budget} budget lines")
    # trend.loop has two regions, each judged: "setup" passes at every
    # commit, "loop" fails at the last three.
    check(n_plots == 3, f"a plot per case, region and event: {n_plots}")
    n_lines = 2 * len(engines["trend.loop"]) + len(engines["trend.steady"])  # loop's two regions
    check(n_series == n_lines, f"a line per sim engine in each plot, the machines pooled: {n_series}, expected {n_lines}")
    legends = sorted(set(html.unescape(t) for t in re.findall(r'class="legend"[^>]*>([^<]+)<', dom)))
    expected = ["<key> pmcheck \u00b7 sim"]
    check(legends == expected, f"lines named by sim profile and engine, no CPU model: {legends}, expected {expected}")
    # The key whole once, in the page's header (not in each label, row or
    # the page's data), and the name the labels give it said there.
    check(dom.count(profile) == 1 and re.search(r'Sim key, written &lt;key&gt; below: <code>' + re.escape(profile)
                                                 + '</code>', dom) is not None,
          f"the sim key printed once, in the header: {dom.count(profile)} times")
    check(n_points == 3 * len(SIZES), f"a point per plot and commit, on one line: {n_points}")
    medians = re.findall(r"\(median of (\d+) runs\)", dom)
    even = (len(SIZES) + 1) // 2
    check(sorted(medians) == sorted(["3"] * 3 * even + ["2"] * 3 * (len(SIZES) - even)),
          f"a point is the median of every machine's runs (3 at even commits, 2 at odd): "
          f"{len(medians)} {sorted(set(medians))}")
    # Both machines' runs of one commit share an x position.
    xs = {}
    for m in re.finditer(r'<circle cx="([0-9.]+)"[^>]*>\s*<title>[^ ]+ ([0-9a-f]{12})', dom):
        xs.setdefault(m.group(2), set()).add(m.group(1))
    check(len(xs) == len(SIZES) and all(len(v) == 1 for v in xs.values()),
          f"one x position per commit: {len(xs)} commits, {sorted(len(v) for v in xs.values())[-3:]}")
    check(n_up == up and n_down == down, f"change points marked at their commits: {n_up}/{up} up, {n_down}/{down} down")
    rows = re.findall(r'<tr class="(regression|improvement)"><td><code title="([0-9a-f]{40})">[0-9a-f]{12}</code>', dom)
    check(len(rows) == changes and len({c for _, c in rows}) == changes,
          f"the change points listed first, one row per line and commit: {len(rows)}, expected {changes}")
    check(f"Change points ({changes})" in dom, "the list's heading counts them")
    # A figure's own verdict: at a failing commit "loop" is ringed and
    # "setup", which passed in the same failing case, is not.
    check(n_fail == fails, f"a line's point at a failing commit ringed, that figure's only: {n_fail}, expected {fails}")
    # The ring is a circle of its own: a failed regression keeps its red stroke.
    n_ring = len(re.findall(r'<circle[^>]*class="ring"', dom))
    check(n_ring == n_fail and ".point.fail{" not in page_css(dom),
          f"each failing point has its own ring ({n_ring} of {n_fail}), no rule restrokes the point")
    check(n_budget == 2 * len(engines["trend.loop"]),
          f"the bound drawn once per series of each bounded region: {n_budget}, expected {2 * len(engines['trend.loop'])}")
    h2 = re.findall(r"<h2>([^<]*)</h2>", dom)
    check(h2 and h2[0].startswith("trend.loop") and "failing" in h2[0] and len(h2) == 2,
          f"the failing case first: {h2}")

    # What a reviewer sees at 1,400 pixels: a copy of the page with a
    # script of the test's, run after the page's own, which writes what
    # the browser laid out into the DOM.
    commits = subprocess.run(["git", "rev-list", "--reverse", "HEAD"], cwd=proj, capture_output=True,
                             text=True, check=True).stdout.split()
    probe = """<script>(function(){
function box(e){var r=e.getBoundingClientRect();return [r.left,r.top,r.right,r.bottom];}
var out={inner:window.innerWidth,scroll:document.documentElement.scrollWidth,plots:[]};
var t=document.querySelector('table.changes');out.table=t?{scroll:t.scrollWidth,box:box(t)}:null;
out.container=document.getElementById('plots').clientWidth;
document.querySelectorAll('svg.plot').forEach(function(s){
 var p={box:box(s),legends:[],xticks:[]};
 s.querySelectorAll('text.legend').forEach(function(e){p.legends.push({text:e.textContent,box:box(e)});});
 s.querySelectorAll('text.xtick').forEach(function(e){p.xticks.push({text:e.textContent,box:box(e)});});
 out.plots.push(p);});
var pre=document.createElement('pre');pre.id='measured';pre.textContent=JSON.stringify(out);document.body.appendChild(pre);
})();</script>"""

    def measured(page_text, name):
        """The page laid out at 1,400 pixels, as the probe saw it."""
        path = os.path.join(html_dir, name)
        with open(path, "w") as f:
            f.write(page_text.replace("</body>", probe + "</body>"))
        p = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                            "--window-size=1400,1000", "--dump-dom", "file://" + path],
                           capture_output=True, text=True, timeout=120)
        m = re.search(r'<pre id="measured">(.*?)</pre>', p.stdout, re.S)
        return p, json.loads(html.unescape(m.group(1))) if m else None

    p, got = measured(text, "measure.html")
    check(got is not None, f"the page measured at 1,400 pixels: {p.returncode} {p.stderr[-300:]}")
    if got:
        print(f"at {got['inner']} px: page {got['scroll']} px wide, table {got['table'] and got['table']['scroll']}, "
              f"plots {sorted({round(q['box'][2] - q['box'][0]) for q in got['plots']})} of {got['container']}")
        check(got["inner"] == 1400, f"the window is 1,400 pixels wide: {got['inner']}")
        check(got["scroll"] <= 1400, f"nothing scrolls sideways: the page is {got['scroll']} pixels wide")
        check(got["table"] and got["table"]["scroll"] <= 1400 and got["table"]["box"][2] <= 1400,
              f"the change table fits 1,400 pixels: {got['table']}")
        check(len(got["plots"]) == 3 and all(q["box"][2] - q["box"][0] >= got["container"] - 1
                                             and q["box"][2] <= 1400 for q in got["plots"])
              and got["container"] >= 1400 - 2 * 24 - 20,
              f"the plots take the page's width ({got['container']} px): "
              f"{[round(q['box'][2] - q['box'][0]) for q in got['plots']]}")

        def inside(b, o):
            return b[0] >= o[0] - 0.5 and b[1] >= o[1] - 0.5 and b[2] <= o[2] + 0.5 and b[3] <= o[3] + 0.5

        clipped = [(lg["text"], lg["box"], q["box"]) for q in got["plots"] for lg in q["legends"]
                   if not inside(lg["box"], q["box"])]
        check(all(q["legends"] for q in got["plots"]) and not clipped,
              f"every legend whole, inside its plot: {clipped}")
        short = [c[:7] for c in commits]
        for q in got["plots"]:
            names = [x["text"] for x in q["xticks"]]
            out = [x["text"] for x in q["xticks"] if not inside(x["box"], q["box"])]
            check(names == short and not out,
                  f"the x axis names every commit, in order, inside the plot: {names} (outside: {out}), "
                  f"expected {short}")
        # A label wider than the plot (a long CPU model's name, say) is
        # narrowed to fit, whole: the page's data with its label 12 times over.
        label = "<key> pmcheck \u00b7 sim"
        long_label = " ".join([label] * 12)
        data = json.dumps(label, ensure_ascii=False)[1:-1]
        _, got = measured(text.replace('"label":"%s"' % data, '"label":"%s"' % json.dumps(long_label, ensure_ascii=False)[1:-1]),
                          "long.html")
        legends = [(lg["text"], lg["box"], q["box"]) for q in (got or {"plots": []})["plots"] for lg in q["legends"]]
        check(len(legends) == 3 and all(t == long_label and inside(b, o) for t, b, o in legends),
              f"a legend wider than its plot narrowed to fit, whole: {[(len(t), b, o) for t, b, o in legends]}")
    if SHOT:
        subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--window-size=1400,1000", f"--screenshot={SHOT}", "file://" + page],
                       capture_output=True, timeout=120)

finish("report")
