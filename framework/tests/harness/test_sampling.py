#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Attribution on the perf backend: sample_work built twice, calibrated on
the first build, run on the second.  The failed case is run again with the
failing event sampled inside its region; page faults sampled at every fault
make the rows exact, so they are asserted to the fault."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CLI, BEFORE, AFTER = sys.argv[1:4]
# The two builds are one program rebuilt: the same file name, as a project's
# target keeps its name (budgets are the calibrating program's own).
_builds = tempfile.mkdtemp(prefix="pmcheck-builds-")
for _side in ("before", "after"):
    os.mkdir(os.path.join(_builds, _side))
    shutil.copy2(BEFORE if _side == "before" else AFTER, os.path.join(_builds, _side, "sample_work"))
BEFORE, AFTER = (os.path.join(_builds, s, "sample_work") for s in ("before", "after"))
SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schema",
                      "results.schema.json")


def run(args, timeout=120):
    # Outside CI: the --baseline run has no budget on purpose (UNBUDGETED),
    # which CI set would turn into a failure.
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)


with tempfile.TemporaryDirectory() as d:
    hw = os.path.join(d, "hwdb")
    p = run([BEFORE, "--calibrate=3", f"--hwdb={hw}", "--filter=sample.faults"])
    check(p.returncode == 0, f"calibrate: {p.returncode}\n{p.stdout}{p.stderr}")

    # The first build against its own budget passes: nothing is sampled.
    same = os.path.join(d, "same.json")
    p = run([BEFORE, f"--hwdb={hw}", "--filter=sample.faults", f"--json={same}"])
    check(p.returncode == 0, f"the calibrated build passes: {p.returncode}\n{p.stdout}")
    with open(same) as f:
        case = json.load(f)["cases"][0]
    check("functions" not in case["regions"][0] and
          not any(n.startswith("sampling:") for n in case.get("notes", [])),
          f"a passing case is not sampled: {case['regions'][0].keys()} {case.get('notes')}")

    # The second build: 40 more faults in sample_touch_middle per execution.
    out, junit = os.path.join(d, "after.json"), os.path.join(d, "after.xml")
    p = run([AFTER, f"--hwdb={hw}", "--filter=sample.faults", f"--json={out}",
             f"--junit={junit}"])
    check(p.returncode == 1, f"the second build fails its budget: {p.returncode}\n{p.stdout}")
    with open(out) as f:
        doc = json.load(f)
    case = doc["cases"][0]
    g = case["regions"][0]
    measured = g["events"]["page-faults:u"]
    check(measured["min"] == measured["max"] == 180, f"180 faults per execution: {measured}")
    sampled = g.get("sampling", [])
    check(len(sampled) == 1 and sampled[0] == {"event": "page-faults:u", "period": 1,
                                               "samples": 540, "lost": 0, "executions": 3},
          f"every fault of 3 executions sampled: {sampled}")
    rows = g.get("functions", [])
    names = [r["function"] for r in rows]
    check(names == ["sample_touch_middle", "sample_touch_first", "sample_touch_last"],
          f"rows, the most sampled first: {names}")
    if len(rows) == 3:
        check([r["samples"]["page-faults:u"] for r in rows] == [360, 120, 60] and
              [r["costs"]["page-faults:u"] for r in rows] == [120, 40, 20],
              f"samples and estimates per function: {rows}")
        check(all(os.path.basename(r["object"]) == os.path.basename(AFTER) for r in rows),
              f"the program's own functions: {[r['object'] for r in rows]}")
    chk = [c for c in case["checks"] if c["status"] == "fail"]
    msg = chk[0]["message"] if chk else ""
    check("Where the samples fell (perf sampling, every event sampled, exact: 540 samples of page-faults:u over 3 executions): sample_touch_middle 360 (67%, ~120 per execution)" in msg,
          f"the failed check names the function: {msg}")
    check(msg in case["reason"] or "sample_touch_middle 360" in case["reason"],
          f"the case's reason carries it: {case['reason']}")
    check("sample_touch_middle 360" in p.stdout, f"console:\n{p.stdout}")
    check(any(n.startswith("sampling: the case was run once more") for n in case["notes"]),
          f"a note says the case ran again: {case['notes']}")
    text = "".join(e.get("message", "") + (e.text or "")
                   for e in ET.parse(junit).getroot().iter("failure"))
    check("sample_touch_middle 360" in text, f"JUnit failure text: {text}")
    try:
        import jsonschema
        with open(SCHEMA) as f:
            jsonschema.validate(doc, json.load(f))
    except ImportError:
        pass
    except Exception as e:  # jsonschema.ValidationError and the like
        check(False, f"results file against the schema: {e}")

    # A stored result, read back (exit 1: it holds a failed case).
    p = run([CLI, "results", "--top=2", out])
    lines = [l.split() for l in p.stdout.splitlines() if l.startswith("  sample_touch")]
    check(p.returncode == 1 and lines == [["sample_touch_middle", "sample_work", "120", "360"],
                                          ["sample_touch_first", "sample_work", "40", "120"]],
          f"results --top=2: {lines}\n{p.stdout}")
    check("from perf samples" in p.stdout and "540 samples, one every 1, 3 executions" in p.stdout,
          f"results --top says the rows are samples:\n{p.stdout}")

    # --no-sampling: the failure alone.
    quiet = os.path.join(d, "quiet.json")
    p = run([AFTER, f"--hwdb={hw}", "--filter=sample.faults", "--no-sampling", f"--json={quiet}"])
    with open(quiet) as f:
        case = json.load(f)["cases"][0]
    check(p.returncode == 1 and "functions" not in case["regions"][0] and
          "Where the samples fell" not in p.stdout,
          f"--no-sampling: {p.returncode} {case['regions'][0].keys()}\n{p.stdout}")

    # --baseline: the second build regresses against the first's results
    # (no budget involved); the regressed case is sampled the same way.
    base, cur = os.path.join(d, "base.json"), os.path.join(d, "cur.json")
    md, junit2 = os.path.join(d, "cmp.md"), os.path.join(d, "cmp.xml")
    # With its budget: a case without one is UNBUDGETED (exit 5), not a pass.
    p = run([BEFORE, "--filter=sample.faults", f"--hwdb={hw}", f"--save-baseline={base}"])
    check(p.returncode == 0, f"baseline: {p.returncode}\n{p.stdout}")
    p = run([AFTER, "--filter=sample.faults", f"--baseline={base}", f"--json={cur}",
             f"--report-md={md}", f"--junit={junit2}"])
    check(p.returncode == 3, f"--baseline: exit 3 on the regression: {p.returncode}\n{p.stdout}")
    check("where this run's samples fell" in p.stdout and
          "sample_touch_middle                  sample_work                 360 samples  66.7%  ~120 per execution" in p.stdout,
          f"console comparison:\n{p.stdout}")
    with open(cur) as f:
        rows = json.load(f)["comparison"]["rows"]
    smp = rows[0].get("samples", []) if rows else []
    check(rows and rows[0]["verdict"] == "regression" and
          [(r["function"], r["samples"]) for r in smp] ==
          [("sample_touch_middle", 360), ("sample_touch_first", 120), ("sample_touch_last", 60)],
          f"the comparison row carries the samples: {rows}")
    with open(md) as f:
        text = f.read()
    check("where this run's samples fell" in text and "| `sample_touch_middle` | sample_work | 360 |" in text,
          f"Markdown:\n{text}")
    fails = list(ET.parse(junit2).getroot().iter("failure"))
    check(len(fails) == 1 and fails[0].get("type") == "REGRESSION" and
          "sample_touch_middle" in (fails[0].text or ""),
          f"JUnit: {[(f.get('type'), f.text) for f in fails]}")

    # Instructions need a hardware PMU: skipped here with the kernel's
    # reason, run in the emulated lane (ci/lane/commands: sampling).
    p = run([AFTER, "--filter=sample.instructions"])
    print(p.stdout.strip().splitlines()[0] if p.stdout.strip() else p.stderr)

finish("harness.sampling")
