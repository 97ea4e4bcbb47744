#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcheck hwdb merge: real runs of the gate suite, filed as machines of
two CPU models (their signatures and host names set in the results, as
a fleet's files would carry them).  Agreeing machines give an exact
budget with its provenance; a machine that counts differently is named,
not averaged; noisy counts get the range seen, widened.  The same files
added to a history store and merged --from-history give the same budgets,
commit by commit, and a schema-1 store is migrated from the files' paths."""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

SUITE, CLI = sys.argv[1:3]


def machine(d, name, signature, extra=None):
    path = os.path.join(d, name + ".json")
    env = dict(os.environ)
    env.pop("GATE_EXTRA", None)
    if extra:
        env["GATE_EXTRA"] = extra
    p = subprocess.run([SUITE, "--filter=gate.budgeted", f"--json={path}"], env=env,
                       capture_output=True, text=True, timeout=120)
    if "uprobe" in p.stdout and "SKIP" in p.stdout:
        print("SKIP: the gate suite's calls: event needs uprobes:", p.stdout.strip())
        sys.exit(77)
    with open(path) as f:
        doc = json.load(f)
    doc["environment"]["hostname"] = name
    doc["environment"]["cpu"]["signature"] = signature
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def recommit(path, name, commit, date):
    """A copy of a results file as another commit's run."""
    with open(path) as f:
        doc = json.load(f)
    doc["environment"]["git_commit"] = commit
    doc["environment"]["date"] = date
    out = os.path.join(os.path.dirname(path), name + ".json")
    with open(out, "w") as f:
        json.dump(doc, f)
    return out


def budgets(d):
    """{key/file: text} of a merged hwdb."""
    out = {}
    for root, _, names in os.walk(os.path.join(d, "budgets")):
        for n in names:
            with open(os.path.join(root, n)) as f:
                out[os.path.relpath(os.path.join(root, n), d)] = f.read()
    return out


def history(db, *args):
    return subprocess.run([CLI, "history", f"--db={db}", *args], capture_output=True, text=True,
                          timeout=60)


def merge(d, *files, args=()):
    return subprocess.run([CLI, "hwdb", "merge", f"--hwdb={d}", *args, *files], capture_output=True,
                          text=True, timeout=60)


def line(d, key, name):
    path = os.path.join(d, "budgets", key, "gate.ini")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        for l in f:
            if l.startswith("work = " + name):
                return l.strip()
    return None


with tempfile.TemporaryDirectory() as d:
    a = machine(d, "a", "AuthenticAMD-25-11-1")    # zen4
    b = machine(d, "b", "AuthenticAMD-25-11-2")    # zen4, another stepping
    c = machine(d, "c", "GenuineIntel-6-55-7")     # cascadelake-x
    odd = machine(d, "odd", "AuthenticAMD-25-11-1", extra="1")  # one more call

    agree = os.path.join(d, "agree")
    p = merge(agree, a, b, c)
    check(p.returncode == 0, f"agreeing machines merge: {p.returncode}\n{p.stdout}{p.stderr}")
    calls = line(agree, "any", "calls:gate_step")
    check(calls and re.search(r"= 20 ; merged: exact, 3 runs on 3 machines \(a, b, c\), kernel", calls),
          f"calls (any CPU): exact with provenance: {calls}")
    zen4 = line(agree, "zen4", "task-clock")
    check(zen4 and re.search(r"= task-clock \d+\.\.\d+ ; merged: noisy, 2 runs on 2 machines \(a, b\) saw \d+\.\.\d+, widened by 10%", zen4),
          f"task-clock on zen4: the range of a and b: {zen4}")
    cl = line(agree, "cascadelake-x", "task-clock")
    check(cl and "1 runs on 1 machine (c)" in cl, f"task-clock on cascadelake-x: machine c alone: {cl}")
    if zen4:
        lo, hi, seen_lo, seen_hi = map(int, re.search(r"(\d+)\.\.(\d+) ; .* saw (\d+)\.\.(\d+)", zen4).groups())
        check(lo <= seen_lo * 0.9 + 1 and hi >= seen_hi * 1.1 - 1 and lo <= seen_lo <= seen_hi <= hi,
              f"the range covers what was seen, widened: {zen4}")
    p = subprocess.run([CLI, "hwdb", "check", f"--hwdb={agree}"], capture_output=True, text=True)
    check(p.returncode == 0, f"the merged hwdb parses: {p.stdout}{p.stderr}")

    # A fleet round trip: twelve machines with long host names (one with a
    # newline, one in UTF-8) give one long provenance comment; hwdb check
    # and the gate read it back, and merging again replaces the line.
    fleet_files = []
    for i in range(12):
        host = f"ci-runner-{i:02d}.build-farm.eu-west-1.compute.internal.example.org"
        host += "\nevil = x" if i == 3 else ("-\u00e9t\u00e9" if i == 4 else "")
        with open(a) as f:
            doc = json.load(f)
        doc["environment"]["hostname"] = host
        fleet_files.append(os.path.join(d, f"fleet{i}.json"))
        with open(fleet_files[-1], "w") as f:
            json.dump(doc, f)
    fleet = os.path.join(d, "fleet")
    for attempt in (1, 2):
        p = merge(fleet, *fleet_files)
        check(p.returncode == 0, f"fleet merge {attempt}: {p.returncode}\n{p.stdout}{p.stderr}")
    text = open(os.path.join(fleet, "budgets", "any", "gate.ini")).read()
    calls = [l for l in text.splitlines() if l.startswith("work = calls:gate_step")]
    check(len(calls) == 1 and len(calls[0]) > 700 and "12 runs on 12 machines" in calls[0] and
          "internal.example.org?evil = x" in calls[0] and "\nevil" not in text,
          f"one long provenance line, the newline shown as '?': {calls}")
    p = subprocess.run([CLI, "hwdb", "check", f"--hwdb={fleet}"], capture_output=True, text=True)
    check(p.returncode == 0 and "too long" not in p.stdout + p.stderr,
          f"hwdb check reads the fleet's lines back: {p.stdout}{p.stderr}")
    out = os.path.join(d, "fleet-run.json")
    p = subprocess.run([SUITE, "--filter=gate.budgeted", f"--hwdb={fleet}", f"--json={out}"],
                       capture_output=True, text=True, timeout=120)
    with open(out) as f:
        chk = [c for c in json.load(f)["cases"][0]["checks"] if c["event"] == "calls:gate_step"]
    check(chk and chk[0]["status"] == "pass" and
          chk[0]["budget_source"].startswith(os.path.join(fleet, "budgets", "any", "gate.ini")),
          f"the gate reads the fleet's budget: {chk}\n{p.stdout}{p.stderr}")

    split = os.path.join(d, "split")
    p = merge(split, a, b, odd)
    check(p.returncode == 1, f"a machine that disagrees fails the merge: {p.returncode}\n{p.stdout}")
    check("NOT MERGED any gate.budgeted work calls:gate_step" in p.stdout and
          re.search(r"\n +20 +a, kernel .*, perf, ", p.stdout) and re.search(r"\n +21 +odd, kernel", p.stdout),
          f"the disagreeing machines are listed with their figures:\n{p.stdout}")
    check(line(split, "any", "calls:gate_step") is None, "no averaged budget is written for it")
    check(line(split, "zen4", "task-clock") is not None, "the other budgets are still written")

    p = merge(os.path.join(d, "x"), a, args=("--tolerance=abc",))
    check(p.returncode == 64, f"a bad tolerance is a usage error: {p.stderr}")
    p = subprocess.run([CLI, "hwdb", "merge", a], capture_output=True, text=True)
    check(p.returncode == 64 and "--hwdb" in p.stderr, f"merge needs a target: {p.stderr}")
    # Results without a measured budget expectation: nothing to merge is an error.
    none = os.path.join(d, "none.json")
    subprocess.run([SUITE, "--filter=gate.baseline_only", f"--json={none}"], capture_output=True, timeout=120)
    p = merge(os.path.join(d, "z"), none)
    check(p.returncode == 1 and "nothing to merge" in p.stderr, f"an empty merge fails: {p.returncode} {p.stderr}")
    bad = os.path.join(d, "bad.json")
    with open(bad, "w") as f:
        f.write("[]")
    p = merge(os.path.join(d, "y"), a, bad)
    check(p.returncode == 2 and "bad.json" in p.stderr, f"a bad results file is named: {p.stderr}")
    print(open(os.path.join(agree, "budgets", "any", "gate.ini")).read())

    # Calls counted by the simulator go where calibration files them: under
    # "any" with the kernel's, one budget for both backends.
    with open(a) as f:
        doc = json.load(f)
    doc["environment"]["backend"] = "sim"
    doc["environment"]["hostname"] = "s"
    for case in doc["cases"]:
        case["backend"] = "sim"
        case["sim_profile"] = "sim-test-profile"
    simfile = os.path.join(d, "s.json")
    with open(simfile, "w") as f:
        json.dump(doc, f)
    both = os.path.join(d, "both")
    p = merge(both, a, simfile)
    calls = line(both, "any", "calls:gate_step")
    check(p.returncode == 0 and calls and "2 runs on 2 machines (a, s), backends perf, sim" in calls and
          line(both, "sim-test-profile", "task-clock") is not None,
          f"sim calls pooled under any, its other counts under its profile: {calls}\n{p.stdout}{p.stderr}")

    # The history store: commit 1 is machines a, b, c; commit 2 (newer) is a,
    # b and the odd one.  Merged from the store, each commit gives exactly the
    # budgets its files give.
    c1, c2 = "abc1" + "0" * 36, "abc2" + "0" * 36
    first = [recommit(f, n + "1", c1, "2026-01-01T00:00:00Z") for f, n in ((a, "a"), (b, "b"), (c, "c"))]
    second = [recommit(f, n + "2", c2, "2026-02-01T00:00:00Z") for f, n in ((a, "a"), (b, "b"), (odd, "odd"))]
    db = os.path.join(d, "h.sqlite")
    p = history(db, "add", *first, *second)
    check(p.returncode == 0 and "6 results file(s) added" in p.stdout, f"history add: {p.stdout}{p.stderr}")
    hist1 = os.path.join(d, "hist1")
    p = merge(hist1, args=(f"--from-history={db}", "--commit=abc1"))
    check(p.returncode == 0 and "commit abc100000000: 3 run(s)" in p.stdout,
          f"merge --from-history --commit=abc1: {p.returncode}\n{p.stdout}{p.stderr}")
    check(budgets(hist1) == budgets(agree),
          f"commit 1 from the store = its files: {budgets(hist1)} vs {budgets(agree)}")
    hist2 = os.path.join(d, "hist2")
    p = merge(hist2, args=(f"--from-history={db}",))
    check(p.returncode == 1 and "commit abc200000000" in p.stdout and
          "NOT MERGED any gate.budgeted work calls:gate_step" in p.stdout and
          re.search(r"\n +21 +odd, kernel .*odd2.json", p.stdout),
          f"the newest commit by default, its disagreement listed with the files: {p.returncode}\n{p.stdout}")
    check(budgets(hist2) == budgets(split), "commit 2 from the store = its files")
    for commit, why in (("abc", "more than one"), ("fff", "no")):
        p = merge(os.path.join(d, "w"), args=(f"--from-history={db}", f"--commit={commit}"))
        check(p.returncode == 64 and f"names {why} commit" in p.stderr, f"--commit={commit}: {p.stderr}")
    p = merge(os.path.join(d, "w"), a, args=(f"--from-history={db}",))
    check(p.returncode == 64 and "takes no results files" in p.stderr, f"files and a store: {p.stderr}")
    p = merge(os.path.join(d, "w"), a, args=("--commit=abc1",))
    check(p.returncode == 64 and "add --from-history" in p.stderr, f"--commit alone: {p.stderr}")
    p = merge(os.path.join(d, "w"), args=(f"--from-history={d}/missing.sqlite",))
    check(p.returncode == 2 and "missing.sqlite" in p.stderr and not os.path.exists(f"{d}/missing.sqlite"),
          f"a missing store is named, not created: {p.stderr}")

    # A schema-1 store (before budget figures were kept) is migrated from the
    # files' paths; a file that moved is counted, its run left out of merging.
    old = os.path.join(d, "old.sqlite")
    shutil.copy(db, old)
    con = sqlite3.connect(old)
    con.execute("DROP TABLE budget_checks")
    con.execute("ALTER TABLE figures DROP COLUMN sim_line")  # schema 3's
    con.execute("PRAGMA user_version = 1")
    con.commit()
    con.close()
    os.rename(first[2], first[2] + ".moved")
    # Reading never migrates: it says how to; add (of a file it holds) does.
    p = history(old, "show", "gate.budgeted")
    check(p.returncode == 2 and "history add" in p.stderr, f"show refuses an old store: {p.returncode} {p.stderr}")
    p = history(old, "add", first[0])
    check(p.returncode == 0 and "schema 1 -> 2: budget figures of 5 of 6 results file(s)" in p.stderr
          and "1 moved, changed or gone" in p.stderr, f"migration: {p.returncode} {p.stderr}")
    con = sqlite3.connect(old)
    check(con.execute("PRAGMA user_version").fetchone()[0] == 3, "migrated to schema 3")
    con.close()
    p = merge(os.path.join(d, "mig"), args=(f"--from-history={old}", "--commit=abc1"))
    check(p.returncode == 0 and "2 run(s)" in p.stdout and "(a, b)" in p.stdout and "(a, b, c)" not in p.stdout,
          f"the migrated store merges the runs it could fill: {p.stdout}{p.stderr}")

finish("merge")
