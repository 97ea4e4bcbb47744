#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A region executed 1,000,000 times (5 repetitions of 200,000): the record
keeps exact statistics over every execution, lists the first samples only,
and stays small; one flagged sample among the million still makes an upper
bound INCONCLUSIVE.  Usage: test_scale.py PMCHECK_SCALE PMCHECK_CLI"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import check, finish  # noqa: E402

PROG, CLI = sys.argv[1], sys.argv[2]
N = 200000 * 5

if os.environ.get("PMCHECK_TEST_SANITIZED") == "1":
    print("SKIP: a sanitizer build runs a million regions too slowly to be a test of scale")
    sys.exit(77)

with tempfile.TemporaryDirectory() as d:
    path = os.path.join(d, "scale.json")
    p = subprocess.run([PROG, "--filter=scale.million,scale.one_flagged", f"--json={path}"],
                       capture_output=True, text=True, timeout=560)
    if p.returncode == 77:
        print(f"SKIP: {p.stdout.strip()[-300:]}")
        sys.exit(77)
    size = os.path.getsize(path) if os.path.exists(path) else -1
    check(0 < size < 1_000_000, f"the results file of 2 million executions is {size} bytes, under 1 MB")
    with open(path) as f:
        cases = {c["name"]: c for c in json.load(f)["cases"]}
    for name in ("scale.million", "scale.one_flagged"):
        c = cases.get(name, {})
        ev = (c.get("regions") or [{}])[0].get("events", {}).get("calls:scale_callee", {})
        # i % 3 over 0..199999, five times: 66667 zeros, 66667 ones, 66666 twos.
        check(ev.get("n") == N and ev.get("min") == 0 and ev.get("max") == 2,
              f"{name}: count, minimum and maximum exact over every execution: "
              f"n={ev.get('n')} min={ev.get('min')} max={ev.get('max')}")
        mean = 5 * (66667 * 0 + 66667 * 1 + 66666 * 2) / N
        check(abs(ev.get("mean", -1) - mean) < 1e-9 and ev.get("median") == 1 and "median_error" not in ev,
              f"{name}: mean {ev.get('mean')} (want {mean}) and median {ev.get('median')} exact")
        check(len(ev.get("values", [])) == 1000 and ev.get("summarised") == N - 1000 and
              ev.get("values", [])[:6] == [0, 1, 2, 0, 1, 2],
              f"{name}: the first 1000 samples listed in order, {ev.get('summarised')} summarised")
    c = cases.get("scale.million", {})
    check(c.get("verdict") == "PASS", f"scale.million passes: {c.get('verdict')} {c.get('reason')}")
    c = cases.get("scale.one_flagged", {})
    ev = c["regions"][0]["events"]["calls:scale_callee"] if c.get("regions") else {}
    check(ev.get("other_threads") == 1,
          f"one_flagged: exactly one of {N} samples flagged as missing other threads' counts: {ev.get('other_threads')}")
    msg = " ".join(k.get("message", "") for k in c.get("checks", []))
    check(f"during 1 of {N} samples" in msg, f"one_flagged: the message counts every sample: {msg}")
    check(c.get("verdict") == "INCONCLUSIVE" and any(k.get("status") == "inconclusive" for k in c.get("checks", [])),
          f"one_flagged: the upper bound is INCONCLUSIVE: {c.get('verdict')} {c.get('checks')}")
    check(p.returncode == 4, f"the run exits 4 (inconclusive): {p.returncode}")
    # The file reads back: pmcheck results and the schema's shape.
    r = subprocess.run([CLI, "results", path], capture_output=True, text=True, timeout=60)
    check(r.returncode in (0, 4) and "1 PASS" in r.stdout and "1 INCONCLUSIVE" in r.stdout,
          f"pmcheck results reads it back: {r.returncode} {r.stdout[-400:]} {r.stderr[-300:]}")
    print(f"results file: {size} bytes for {2 * N} executions")
finish()
