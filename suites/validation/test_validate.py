#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""`pmcheck validate` end to end.

usage: test_validate.py CHECK PMCHECK_CLI     (exit 0 pass, 1 fail, 77 skip)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../framework/tests'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CHECK, CLI = sys.argv[1:3]


def t_sim_report():
    """On the simulator every listed event validates exactly; the report is
    complete and names what was validated."""
    if os.environ.get("PMCHECK_TEST_SANITIZED") == "1":
        print("SKIP: sanitizer build: valgrind cannot run it")
        sys.exit(77)
    if shutil.which("valgrind") is None:
        print("SKIP: valgrind is not installed")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "report.json")
        p = subprocess.run([CLI, "validate", "--backend=sim", "--output=" + out],
                           capture_output=True, text=True, timeout=280)
        check(p.returncode == 0, f"exit {p.returncode}: {p.stdout}{p.stderr}")
        check("expected" in p.stdout and "deviation" in p.stdout and "callgrind" in p.stdout,
              f"table: {p.stdout}")
        rep = json.load(open(out))
        rows = {r["case"]: r for r in rep["rows"]}
        check(rep["model"]["id"] == "callgrind" and rep["model"]["listed"], f"model {rep['model']}")
        check(rep["backend"] == "sim" and rep["environment"]["kernel"]["release"], "environment")
        exact = {"validate.instructions_loop": 3, "validate.branches_not_taken": 2,
                 "validate.branches_unconditional": 1, "validate.loads": 1,
                 "validate.stores": 1}
        for name, value in exact.items():
            r = rows.get(name)
            check(r and r["expected_lo"] == r["expected_hi"] == value and r["measured"] == value
                  and r["verdict"] == "PASS", f"{name}: {r}")
        r = rows.get("validate.rep_movsb")
        check(r is None or (r["measured"] == 1 and r["verdict"] == "PASS"), f"rep movsb: {r}")
        r = rows.get("validate.branch_misses_random")
        check(r and 0.4 <= r["measured"] <= 0.6, f"random branches: {r}")
        check(all(row["verdict"] == "PASS" for row in rep["rows"]), "every figure passes")
        skipped = {s["case"]: s["reason"] for s in rep["skipped"]}
        check("on the sim backend" in skipped.get("validate.cycles_loop", ""), f"cycles: {skipped}")


def t_perf_here():
    """On the perf backend: validated where a PMU exists; here, every case is
    listed as not validated with the core's reason, and the exit says so."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "report.json")
        p = subprocess.run([CLI, "validate", "--output=" + out], capture_output=True, text=True,
                           timeout=280)
        rep = json.load(open(out))
        # Validation starts from the kinds' checks, in the probe's words.
        kinds = rep.get("kinds", {})
        check(set(kinds) >= {"breakpoint-write", "page-faults", "instructions"} and
              all(k["status"] in ("available", "opens but does not count", "unavailable")
                  for k in kinds.values()), f"kinds in the report: {kinds}")
        check("counter kinds on this machine, checked on known work:" in p.stdout and
              all(("    %-17s %s: " % (n, k["status"])) in p.stdout for n, k in kinds.items()),
              f"kinds in the table:\n{p.stdout}")
        if rep["rows"]:
            check(p.returncode in (0, 1), f"exit {p.returncode} with {len(rep['rows'])} figures")
            return
        check(p.returncode == 77, f"nothing validated: exit {p.returncode}, want 77")
        check(len(rep["skipped"]) >= 9, f"every case listed: {rep['skipped']}")
        check(all("cannot open" in s["reason"] or "needs" in s["reason"] for s in rep["skipped"]),
              f"reasons: {rep['skipped']}")
    p = subprocess.run([CLI, "validate", "--bogus"], capture_output=True, text=True)
    check(p.returncode == 64 and "--bogus" in p.stderr, f"usage: {p.stderr}")
    p = subprocess.run([CLI, "validate", "--program=/nonexistent"], capture_output=True, text=True)
    check(p.returncode == 2 and "pmcheck-validate" in p.stderr, f"missing program: {p.stderr}")


globals()["t_" + CHECK]()
finish()
