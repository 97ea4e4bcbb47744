#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""realcode stays judged when a library under it moves, and the committed
budgets still name the library.

Another libzstd.so.1 (the shim: the same soname, from no package, its
ZSTD_decompress doing more work) comes first through LD_LIBRARY_PATH, as a
distribution's update of libzstd would.  Then:
  1. against the committed budgets, realcode.zstd FAILs, and each failed
     check names libzstd.so.1 as changed since calibration, with the shim's
     path (what a user's gate says);
  2. budgets_here.py (the realcode_budgets fixture) calibrates realcode.zstd
     into an overlay hwdb, whose library line names the shim's build ID;
  3. against the overlay, realcode.zstd PASSes with the shim ...
  4. ... and FAILs without it (the installed libzstd), naming libzstd.so.1:
     the overlay's budgets judge the library's work, they do not pass on
     nothing.

usage: library_moved.py BUDGETS_HERE PROGRAM SHIM
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "framework", "tests"))
from checks import check, finish, guarded  # noqa: E402

SCRIPT, PROGRAM, SHIM = sys.argv[1:4]
SHIM_DIR = os.path.dirname(SHIM)
CASE = "realcode.zstd"


def env(shim, hwdb=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("PMCHECK_HWDB", "PMCHECK_RESULTS_DIR", "LD_LIBRARY_PATH", "PMCHECK_SIM_ENV")}
    e["NO_COLOR"] = "1"
    if shim:
        e["LD_LIBRARY_PATH"] = SHIM_DIR
        e["PMCHECK_SIM_ENV"] = "LD_LIBRARY_PATH"
    if hwdb:
        e["PMCHECK_HWDB"] = hwdb
    return e


def gate(d, name, shim, hwdb=None):
    out = os.path.join(d, name + ".json")
    p = subprocess.run([PROGRAM, "--backend=sim", f"--filter={CASE}", f"--json={out}"],
                       capture_output=True, text=True, env=env(shim, hwdb), timeout=600)
    if not os.path.exists(out):
        check(False, f"{name}: no results (exit {p.returncode}): {p.stdout[-800:]}{p.stderr[-400:]}")
        return None, []
    with open(out) as f:
        c = json.load(f)["cases"][0]
    return c["verdict"], [k["message"] for k in c["checks"] if k["status"] == "fail"]


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def main():
    with tempfile.TemporaryDirectory(prefix="realcode-library-moved-") as d:
        steps(d)


def steps(d):
    overlay = os.path.join(d, "hwdb")
    changed = re.compile(r"library libzstd\.so\.1 changed since calibration \(was [^;]*; now no package, "
                         r"build ID [0-9a-f]+, " + re.escape(SHIM) + r"\)")

    # 1. The committed budgets, another libzstd.so.1: named.
    verdict, failed = gate(d, "committed", shim=True)
    check(verdict == "FAIL" and failed and all(changed.search(m) for m in failed),
          f"{CASE} against the committed budgets with the shim: FAIL, every failed check naming "
          f"libzstd.so.1 changed (now {SHIM}): {verdict} {failed[:1]}")

    # 2. The fixture: realcode.zstd calibrated here.
    p = subprocess.run([sys.executable, SCRIPT, overlay, PROGRAM], capture_output=True, text=True,
                       env=env(shim=True), timeout=1800)
    print(p.stdout[-3000:], p.stderr[-1000:])
    check(p.returncode == 0, f"budgets_here.py with the shim: exit {p.returncode}")
    check(re.search(rf"{re.escape(CASE)}: calibrated here into .*libzstd\.so\.1", p.stdout),
          f"budgets_here.py says {CASE} was calibrated here, for libzstd.so.1")
    lines = []
    for root, _, files in os.walk(overlay):
        for f in files:
            if f == "realcode.ini" and os.path.basename(root).startswith("sim-"):
                with open(os.path.join(root, f)) as fh:
                    lines = fh.read().splitlines()
    sid = build_id(SHIM)
    check(sid and any(re.match(rf"library:libzstd\.so\.1 = build-id:{sid}\b", x) for x in lines),
          f"the overlay's realcode.ini records the shim (build-id:{sid}): "
          f"{[x for x in lines if x.startswith('library:libzstd')]}")
    check("[zstd]" in lines and "[signals]" not in lines,
          "the overlay holds realcode.zstd, not the cases no library moved under (realcode.signals)")

    # 3. Against the overlay, with the shim: PASS.
    verdict, failed = gate(d, "overlay-shim", shim=True, hwdb=overlay)
    check(verdict == "PASS", f"{CASE} against the overlay with the shim: PASS, not {verdict} {failed[:1]}")

    # 4. Against the overlay, without the shim: the installed libzstd named.
    verdict, failed = gate(d, "overlay-installed", shim=False, hwdb=overlay)
    check(verdict == "FAIL" and failed and all("library libzstd.so.1 changed since calibration" in m
                                               for m in failed),
          f"{CASE} against the overlay with the installed libzstd: FAIL naming libzstd.so.1, "
          f"not {verdict} {failed[:1]}")


if __name__ == "__main__":
    guarded(main)
    finish("realcode.library_moved")
