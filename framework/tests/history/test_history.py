#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcheck history: a real results file, copied as 200 runs (dates,
commits and two CPU signatures), added by two processes at once with an
overlap; nothing lost, nothing twice; re-adding is a no-op; the series comes
back oldest first; a newer or foreign database is refused."""
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CLI, SUITE = sys.argv[1:3]


def run(*args, **kw):
    return subprocess.run([CLI, "history", *args], capture_output=True, text=True, timeout=300, **kw)


with tempfile.TemporaryDirectory() as d:
    real = os.path.join(d, "real.json")
    p = subprocess.run([SUITE, "--filter=pass.two_regions", f"--json={real}"], capture_output=True,
                       text=True, timeout=120)
    check(p.returncode == 0, f"a real run: {p.returncode} {p.stdout}")
    with open(real) as f:
        doc = json.load(f)
    figures = sum(len(g["events"]) for c in doc["cases"] for g in c["regions"])
    # Two CPUs of the made-up runs, neither of them this machine's: the real
    # run joins its own series, not theirs (an AMD Milan guest is 25-1-1).
    here = doc["environment"]["cpu"].get("signature")
    cpu_b, cpu_a = [s for s in ("GenuineIntel-6-85-4", "AuthenticAMD-25-1-1", "AuthenticAMD-23-49-0")
                      if s != here][:2]
    files = []
    for i in range(200):
        doc["environment"]["date"] = "2026-01-01T00:%02d:%02dZ" % (i // 60, i % 60)
        doc["environment"]["git_commit"] = "%040x" % (i + 1)
        doc["environment"]["cpu"]["signature"] = cpu_b if i % 2 else cpu_a
        path = os.path.join(d, "run-%03d.json" % i)
        with open(path, "w") as f:
            json.dump(doc, f)
        files.append(path)
    db = os.path.join(d, "h.sqlite")
    # Two writers at once, 20 files in common.
    a = subprocess.Popen([CLI, "history", f"--db={db}", "add", *files[:110]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    b = subprocess.Popen([CLI, "history", f"--db={db}", "add", *files[90:]],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    outs = [x.communicate(timeout=300) for x in (a, b)]
    check(a.returncode == 0 and b.returncode == 0,
          f"both writers succeed: {a.returncode} {b.returncode} {outs}")
    added = [int(o[0].split(": ")[1].split()[0]) for o in outs]
    check(sum(added) == 200, f"each file added once between them: {added} {outs}")
    con = sqlite3.connect(db)
    n = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("files", "runs", "figures")}
    check(n == {"files": 200, "runs": 200, "figures": 200 * figures}, f"nothing lost, nothing twice: {n}")
    check(con.execute("SELECT count(DISTINCT git_commit) FROM runs").fetchone()[0] == 200, "200 commits")
    check(con.execute("PRAGMA user_version").fetchone()[0] == 3, "schema version 3")
    con.close()
    p = run(f"--db={db}", "add", d)
    check(p.returncode == 0 and "1 results file(s) added, 200 already there" in p.stdout,
          f"re-adding the directory adds nothing new but the real run: {p.stdout}{p.stderr}")
    p = run(f"--db={db}", "show", "pass.two_regions", "calls:selftest_fn")
    rows = [l.split() for l in p.stdout.splitlines()[1:]]
    check(p.returncode == 0 and len(rows) == 2 * 201, f"show: {len(rows)} rows\n{p.stdout[:600]}")
    amd = [r[0] for r in rows if r[2] == cpu_a and r[4] == "hundred"]
    check(len(amd) == 100 and amd == sorted(amd), f"one series per CPU, oldest first: {amd[:3]}")
    check(all(r[6] == "100" for r in rows if r[4] == "hundred"), "the figures read back")
    p = run(f"--db={db}", "show", "no.such_case")
    check(p.returncode == 1 and "no such series: case \"no.such_case\"" in p.stderr and "nearest" in p.stderr, p.stderr)

    # A database a newer pmcheck made, and one that is not a history.
    con = sqlite3.connect(db)
    con.execute("PRAGMA user_version = 7")
    con.commit()
    con.close()
    p = run(f"--db={db}", "show", "pass.two_regions")
    check(p.returncode == 2 and "schema version 7, and this pmcheck knows 3" in p.stderr, p.stderr)
    other = os.path.join(d, "other.sqlite")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    p = run(f"--db={other}", "add", real)
    check(p.returncode == 2 and "not a pmcheck history" in p.stderr, p.stderr)
    # A broken results file adds nothing and says which.
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write("{")
    p = run(f"--db={os.path.join(d, 'new.sqlite')}", "add", bad)
    check(p.returncode == 2 and "bad.json" in p.stderr, p.stderr)
    p = run("frobnicate")
    check(p.returncode == 64, p.stderr)

    # Each figure its own verdict: in a case that failed on region "one",
    # region "hundred" passed and says so; a figure no check judged says
    # "-" (it is not the figure that failed).
    with open(real) as f:
        doc = json.load(f)
    case = doc["cases"][0]
    case["verdict"] = "FAIL"
    case["reason"] = "region one failed"
    for c in case["checks"]:
        if c["region"] == "one":
            c["status"] = "fail"
    failed = os.path.join(d, "failed.json")
    with open(failed, "w") as f:
        json.dump(doc, f)
    db2 = os.path.join(d, "verdicts.sqlite")
    p = run(f"--db={db2}", "add", failed)
    check(p.returncode == 0, f"add: {p.returncode} {p.stderr}")
    con = sqlite3.connect(db2)
    got = dict(((r, e), v) for r, e, v in con.execute("SELECT region, event, verdict FROM figures"))
    check(got.get(("one", "calls:selftest_fn")) == "FAIL" and got.get(("hundred", "calls:selftest_fn")) == "PASS"
          and got.get(("hundred", "context-switches")) == "-",
          f"per-figure verdicts: {got}")
    con.close()

finish("history")
