#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcheck results --format=bencher|github-action-benchmark: the documented
shapes (framework/schema/, written down from each tool's documentation),
one benchmark per case, region and backend with the judged figure and the
sample range, nothing left out silently, one machine per export.
Usage: test_export.py PMCHECK SELFTEST SCHEMA_DIR"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema

sys.path.insert(0, os.path.dirname(__file__))
from checks import check, finish  # noqa: E402

CLI, SELFTEST, SCHEMAS = sys.argv[1:4]
CASES = "pass.*,fail.*,skip.*,error.bad_event,error.crash,repeat.samples"


def schema(name):
    with open(os.path.join(SCHEMAS, name)) as f:
        return json.load(f)


def valid(doc, name, what):
    try:
        jsonschema.validate(doc, schema(name))
        check(True, "")
    except jsonschema.ValidationError as e:
        check(False, f"{what}: {e.message}")


def export(fmt, res, out, schema_name, what):
    """Run one export to `out`; its stderr and the document, checked against the shape."""
    p = subprocess.run([CLI, "results", f"--format={fmt}", f"--output={out}", res],
                       capture_output=True, text=True, timeout=60)
    with open(out) as f:
        doc = json.load(f)
    valid(doc, schema_name, what)
    return p, doc


def slug(label):
    out, dash = "", False
    for ch in label.lower():
        if ch.isalnum() and ch.isascii():
            out += ("-" if dash and out else "") + ch
            dash = False
        else:
            dash = True
    return out


with tempfile.TemporaryDirectory() as d:
    res = os.path.join(d, "results.json")
    subprocess.run([SELFTEST, f"--filter={CASES}", f"--json={res}"], capture_output=True, timeout=240)
    with open(res) as f:
        results = json.load(f)
    cases = results["cases"]
    figures = [(c, g, e, s) for c in cases for g in c["regions"] for e, s in g["events"].items() if s["n"] > 0]
    without = [c for c in cases if not any(s["n"] for g in c["regions"] for s in g["events"].values())]
    check(figures and without, f"the selection has cases with figures and without: {len(figures)}, {len(without)}")

    # Bencher.
    p, bmf = export("bencher", res, os.path.join(d, "bmf.json"), "bencher-metric-format.schema.json",
                    "BMF matches Bencher's documented shape")
    for c, g, e, s in figures:
        bench = bmf.get(f"{c['name']} / {g['name']} [{c['backend']}]", {})
        m = bench.get(slug(e))
        want = {"min": s["min"], "median": s["median"], "max": s["max"]}[c.get("stat", "min")]
        check(m == {"value": want, "lower_value": s["min"], "upper_value": s["max"]},
              f"{c['name']} {g['name']} {e}: {m} (want value {want}, {s['min']}..{s['max']})")
    check(len(without) > 0 and f"not exported: {len(without)} cases without figures" in p.stderr,
          f"the cases without figures are counted on stderr: {p.stderr}")
    check("testbed" in p.stderr and "bencher run" in p.stderr, f"the testbed to give Bencher is named: {p.stderr}")

    # github-action-benchmark.
    p, gab = export("github-action-benchmark", res, os.path.join(d, "gab.json"),
                    "github-action-benchmark.schema.json", "the entries match the action's documented shape")
    names = {x["name"]: x for x in gab}
    check(len(gab) == len(figures) and len(names) == len(gab), f"one entry per case, region and event: {len(gab)} of {len(figures)}")
    for c, g, e, s in figures:
        x = names.get(f"{c['name']} / {g['name']} / {e} [{c['backend']}]", {})
        check(x.get("range") == f"{s['min']}..{s['max']}" and c["verdict"] in x.get("extra", ""),
              f"{c['name']} {e}: range and verdict: {x}")

    # To stdout: the document alone; the summary goes to stderr.
    p = subprocess.run([CLI, "results", "--format=bencher", res], capture_output=True, text=True, timeout=60)
    check(json.loads(p.stdout) == bmf and "cases:" in p.stderr, f"stdout holds the BMF only: {p.stdout[:200]}")

    # Two machines in one export: refused, naming both.
    other = json.loads(json.dumps(results))
    other["environment"]["cpu"]["signature"] = "GenuineIntel-6-55-7"
    res2 = os.path.join(d, "other.json")
    with open(res2, "w") as f:
        json.dump(other, f)
    p = subprocess.run([CLI, "results", "--format=bencher", f"--output={os.path.join(d, 'x.json')}", res, res2],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and "2 machines" in p.stderr and not os.path.exists(os.path.join(d, "x.json")),
          f"results of two machines are refused, nothing written: {p.returncode} {p.stderr}")
    p = subprocess.run([CLI, "results", "--format=csv", res], capture_output=True, text=True, timeout=60)
    check(p.returncode == 64 and "bencher" in p.stderr and "github-action-benchmark" in p.stderr,
          f"an unknown format names the known ones: {p.returncode} {p.stderr}")
finish()
