#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A tree suite stays judged when a library under it moves, and the
committed budgets still name the library (budgets_here.py's proof).

LIBRARY, another object of a soname the case loads (a shim built here, or
a copy of another distribution's), named by its soname, comes first
through LD_LIBRARY_PATH (its directory), as a distribution's update of that
library would.  Then:
  1. budgets_here.py (the suite's fixture), asked for CASE only, finds the
     committed budgets FAIL with every failed check naming the soname, and
     only it, as changed since calibration, the first with LIBRARY's path
     and "no package" (what a user's gate says), and calibrates CASE into an
     overlay hwdb, whose library line names LIBRARY's build ID and which
     holds CASE alone;
  2. against the overlay, CASE PASSes with LIBRARY ...
  3. ... and FAILs without it (the installed library), naming the soname:
     the overlay's budgets judge the library's work, they do not pass on
     nothing.
Three runs of the one case and its calibration, nothing else.

usage: library_moved.py BUDGETS_HERE PROGRAM CASE LIBRARY
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "framework", "tests"))
from checks import check, finish, guarded  # noqa: E402

SCRIPT, PROGRAM, CASE, LIBRARY = sys.argv[1:5]
LIBRARY = os.path.abspath(LIBRARY)
SUITE, SECTION = CASE.split(".", 1)


def readelf(*args):
    return subprocess.run(["readelf", *args, LIBRARY], capture_output=True, text=True).stdout


def soname():
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^]]+)\]", readelf("-d"))
    return m.group(1) if m else None


def build_id():
    m = re.search(r"Build ID: ([0-9a-f]+)", readelf("-n"))
    return m.group(1) if m else None


def env(moved, hwdb=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("PMCHECK_HWDB", "PMCHECK_RESULTS_DIR", "LD_LIBRARY_PATH", "PMCHECK_SIM_ENV")}
    e["NO_COLOR"] = "1"
    if moved:
        e["LD_LIBRARY_PATH"] = os.path.dirname(LIBRARY)
        e["PMCHECK_SIM_ENV"] = "LD_LIBRARY_PATH"
    if hwdb:
        e["PMCHECK_HWDB"] = hwdb
    return e


def gate(d, name, moved, hwdb):
    out = os.path.join(d, name + ".json")
    p = subprocess.run([PROGRAM, "--backend=sim", f"--filter={CASE}", f"--json={out}"],
                       capture_output=True, text=True, env=env(moved, hwdb), timeout=600)
    if not os.path.exists(out):
        check(False, f"{name}: no results (exit {p.returncode}): {p.stdout[-800:]}{p.stderr[-400:]}")
        return None, []
    with open(out) as f:
        c = json.load(f)["cases"][0]
    return c["verdict"], [k["message"] for k in c["checks"] if k["status"] == "fail"]


def main():
    name, sid = soname(), build_id()
    if not check(name and sid, f"{LIBRARY}: a soname and a build ID (readelf): {name} {sid}"):
        return
    # The loader finds it by its soname in its directory.
    if not check(os.path.basename(LIBRARY) == name,
                 f"{LIBRARY}: named by its soname {name} (copy it to DIR/{name})"):
        return
    with tempfile.TemporaryDirectory(prefix="library-moved-") as d:
        steps(d, name, sid)


def steps(d, name, sid):
    overlay = os.path.join(d, "hwdb")
    changed = re.compile(rf"library {re.escape(name)} changed since calibration \(was [^;]*; now no package, "
                         rf"build ID {sid[:12]}[0-9a-f]*, {re.escape(LIBRARY)}\)")

    # 1. The fixture, for CASE alone: named, then calibrated here.
    p = subprocess.run([sys.executable, SCRIPT, f"--filter={CASE}", overlay, PROGRAM],
                       capture_output=True, text=True, env=env(moved=True), timeout=1800)
    print(p.stdout[-3000:], p.stderr[-1000:])
    check(p.returncode == 0, f"budgets_here.py with {LIBRARY}: exit {p.returncode}")
    m = re.search(rf"^budgets_here: {re.escape(CASE)} on sim: the committed budgets fail here, and every failed "
                  rf"check names a library that changed since calibration \(([^)]*)\); first of them: (.*)$",
                  p.stdout, re.M)
    check(m and m.group(1) == name and changed.search(m.group(2)),
          f"{CASE} against the committed budgets with {LIBRARY}: FAIL, every failed check naming "
          f"{name} alone, changed (now {LIBRARY}, no package): {m.group(0) if m else p.stdout[-600:]}")
    check(re.search(rf"^budgets_here: {re.escape(CASE)} on sim: calibrated here into .*\(its libraries moved: "
                    rf"{re.escape(name)}\)", p.stdout, re.M),
          f"budgets_here.py says {CASE} was calibrated here, for {name}")
    lines = []
    for root, _, files in os.walk(overlay):
        for f in files:
            if f == f"{SUITE}.ini" and os.path.basename(root).startswith("sim-"):
                with open(os.path.join(root, f)) as fh:
                    lines = fh.read().splitlines()
    check(any(re.match(rf"library:{re.escape(name)} = build-id:{sid}\b", x) for x in lines),
          f"the overlay's {SUITE}.ini records {LIBRARY} (build-id:{sid}): "
          f"{[x for x in lines if x.startswith('library:' + name)]}")
    sections = [x for x in lines if x.startswith("[")]
    check(sections == [f"[{SECTION}]"],
          f"the overlay holds {CASE} alone, not the cases it was not asked for: {sections}")

    # 2. Against the overlay, with LIBRARY: PASS.
    verdict, failed = gate(d, "overlay-moved", moved=True, hwdb=overlay)
    check(verdict == "PASS", f"{CASE} against the overlay with {LIBRARY}: PASS, not {verdict} {failed[:1]}")

    # 3. Against the overlay, with the installed library: it is named.
    verdict, failed = gate(d, "overlay-installed", moved=False, hwdb=overlay)
    check(verdict == "FAIL" and failed and all(f"library {name} changed since calibration" in m
                                               for m in failed),
          f"{CASE} against the overlay with the installed {name}: FAIL naming it, "
          f"not {verdict} {failed[:1]}")


if __name__ == "__main__":
    if len(sys.argv) != 5:
        print("usage: library_moved.py BUDGETS_HERE PROGRAM CASE LIBRARY", file=sys.stderr)
        sys.exit(2)
    guarded(main)
    finish(f"library_moved {CASE}")
