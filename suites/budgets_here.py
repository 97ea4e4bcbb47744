#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tree's budgets for the libraries installed here.

The tree's committed budgets (the sim ones of hwdb/budgets/sim-*/, and the
calls: ones of any/ and os-debian-13/ that perf's uprobes and sim share)
were recorded against the distribution's libraries as they were that day: libexpat,
libpugixml, libsqlite3, libzstd, liblzma, libc, libstdc++.  A security
update of one of them changes what the cases count, with no change of the
tree's, and the committed budgets then fail, rightly naming the library.
Before a suite's sim tests run (its CTest fixture, <suite>_budgets;
suites/CMakeLists.txt registers it), this runs each PROGRAM once on each
backend (sim, then perf: the cases perf cannot count here skip) against
the committed budgets, and every case whose failed checks all name a
library that changed since calibration is calibrated again, on that
backend, into OVERLAY, a hwdb directory of the build tree that the suite's
tests search first (PMCHECK_HWDB).  Every other case is judged by the committed
budgets as before; a case that fails for another reason is left to fail in
its own test.

usage: budgets_here.py [--filter=GLOBS] OVERLAY PROGRAM...
  --filter=GLOBS   only the cases these globs name (the runner's --filter),
                   in every PROGRAM: the cases the committed budgets judge
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# What pmcheck says of a library whose identity differs from the one
# recorded beside the budget (framework/src/harness/gate/provenance.c).
# Sim first: a calls: budget both backends share (any/) is then recorded
# by perf's uprobes where they count, as the committed ones were.
BACKENDS = ("sim", "perf")

MOVED = re.compile(r"library (\S+) (?:changed since calibration|loaded now, not at calibration)")


def say(msg):
    print(f"budgets_here: {msg}", flush=True)


def die(msg):
    print(f"budgets_here: FAIL: {msg}", file=sys.stderr, flush=True)
    sys.exit(1)


def environment():
    """The caller's, without a hwdb or results directory of its own: the
    committed budgets judge, and these runs are no test's results."""
    return {k: v for k, v in os.environ.items() if k not in ("PMCHECK_HWDB", "PMCHECK_RESULTS_DIR")}


def moved_cases(program, backend, selection, work):
    """{case: [libraries]} of the cases whose failed checks all name a
    library that changed since calibration; and the count of cases run."""
    out = os.path.join(work, f"{os.path.basename(program)}.{backend}.json")
    p = subprocess.run([program, f"--backend={backend}", f"--json={out}", *selection], capture_output=True,
                       text=True, env=environment(), timeout=1800)
    if not os.path.exists(out) and p.returncode == 77:
        # The program cannot run on this backend here (a sanitizer build
        # under sim, say): its own tests skip with the reason; nothing
        # to record for them.
        say(f"{os.path.basename(program)} on {backend}: skipped here, nothing to record "
            f"({(p.stdout.strip() or p.stderr.strip())[:300]})")
        return {}, 0
    if not os.path.exists(out):
        die(f"{program} --backend={backend} {' '.join(selection)} left no results (exit {p.returncode}):\n"
            f"{p.stdout[-1500:]}{p.stderr[-800:]}")
    with open(out) as f:
        doc = json.load(f)
    moved, measured = {}, 0
    for c in doc.get("cases", []):
        if c.get("verdict") in ("SKIP",):
            continue
        measured += 1
        failed = [k for k in c.get("checks", []) if k.get("status") == "fail"]
        if c.get("verdict") == "PASS":
            continue
        names = [MOVED.findall(k.get("message", "")) for k in failed]
        if c.get("verdict") == "FAIL" and failed and all(k.get("kind") == "budget" for k in failed) \
                and all(names):
            moved[c["name"]] = sorted({n for ns in names for n in ns})
            say(f"{c['name']} on {backend}: the committed budgets fail here, and every failed check names "
                f"a library that changed since calibration ({', '.join(moved[c['name']])}); "
                f"first of them: {failed[0].get('message', '')[:600]}")
        else:
            say(f"{c['name']} on {backend}: {c.get('verdict')} for another reason than a library "
                f"({(c.get('reason') or (failed[0].get('message', '') if failed else ''))[:300]}): "
                f"left to the committed budgets, its test says so")
    return moved, measured


def record(program, backend, selection, overlay, work):
    """Calibrate into overlay, on backend, the cases of program whose
    libraries moved; their count."""
    moved, measured = moved_cases(program, backend, selection, work)
    name = os.path.basename(program)
    if measured == 0:
        say(f"{name} on {backend}: no case measured here (all skipped): nothing to record; "
            f"its tests skip as it did")
        return 0
    if not moved:
        say(f"{name} on {backend}: {measured} cases, none with a library moved under its "
            f"committed budgets: all judged by them")
        return 0
    cases = sorted(moved)
    p = subprocess.run([program, f"--backend={backend}", "--calibrate", f"--hwdb={overlay}",
                        "--filter=" + ",".join(cases)], capture_output=True, text=True,
                       env=environment(), timeout=3600)
    if p.returncode != 0:
        die(f"{program} --backend={backend} --calibrate --hwdb={overlay} --filter={','.join(cases)} "
            f"exited {p.returncode}:\n{p.stdout[-2000:]}{p.stderr[-800:]}")
    for c in cases:
        say(f"{c} on {backend}: calibrated here into {overlay} (its libraries moved: "
            f"{', '.join(moved[c])}); its test judges against these")
    return len(cases)


def main():
    args = sys.argv[1:]
    selection = []
    if args and args[0].startswith("--filter="):
        if args[0] == "--filter=":
            die("--filter= names no case: give the globs of the cases the committed budgets judge")
        selection = [args.pop(0)]
    if len(args) < 2 or args[0].startswith("-"):
        die(f"usage: budgets_here.py [--filter=GLOBS] OVERLAY PROGRAM... (given: {' '.join(sys.argv[1:])})")
    overlay, programs = args[0], args[1:]
    if not overlay or any(not p for p in programs):
        die(f"an empty argument where OVERLAY or a PROGRAM belongs (given: {sys.argv[1:]}); "
            f"usage: budgets_here.py [--filter=GLOBS] OVERLAY PROGRAM...")
    # Last run's budgets are no evidence for this one: the overlay starts
    # empty every time (a directory the tests require to exist).
    if os.path.isdir(overlay):
        shutil.rmtree(overlay)
    os.makedirs(overlay)
    total = 0
    with tempfile.TemporaryDirectory(prefix="budgets-here-") as work:
        for program, backend in ((p, b) for p in programs for b in BACKENDS):
            total += record(program, backend, selection, overlay, work)
    say(f"{total} cases calibrated here; the rest judged by the committed budgets")


if __name__ == "__main__":
    main()
