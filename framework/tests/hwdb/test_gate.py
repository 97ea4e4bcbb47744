#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Gates end to end: calibrate, re-run, change the code, baselines, compare.

usage: test_gate.py CHECK GATE_EXE PMCHECK_CLI      (exit 0 pass, 1 fail)
"""
import copy
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CHECK, EXE, CLI = sys.argv[1:4]


def run(*args, extra=None, env=None):
    e = dict(os.environ)
    # CI would make every run strict: the runs here choose --strict themselves.
    for k in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "GATE_EXTRA", "CI"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    if extra is not None:
        e["GATE_EXTRA"] = str(extra)
    if env:
        e.update(env)
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=e, timeout=120)


def cli(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=60)


def this_model():
    p = cli("hwdb", "lookup")
    m = re.search(r"matched\s+\S+ = (\S+)", p.stdout)
    sig = re.search(r"lookup (\S+)", p.stdout).group(1)
    return (m.group(1) if m else sig), sig


def t_calibrate_round_trip():
    with tempfile.TemporaryDirectory() as d:
        p = run("--filter=gate.budgeted", "--strict", "--hwdb=" + d)
        # Unbudgeted, or (the built-in hwdb has this suite's budgets for
        # other CPU models) no budget under this machine's key: a failure.
        check(p.returncode == 1 and ("unbudgeted" in p.stdout or "no budget under key" in p.stdout)
              and "--calibrate" in p.stdout,
              f"unbudgeted fails under --strict with the command to record it: {p.stdout}")
        p = run("--filter=gate.budgeted", "--calibrate=3", "--calibrate-margin=400", "--hwdb=" + d)
        check(p.returncode == 0, f"calibrate exit {p.returncode}: {p.stdout}{p.stderr}")
        key, sig = this_model()
        path = os.path.join(d, "budgets", key, "gate.ini")
        anypath = os.path.join(d, "budgets", "any", "gate.ini")
        check(os.path.exists(path), f"{path} written ({os.listdir(d)})")
        text = open(path).read()
        # A call count does not depend on the CPU: filed under "any".
        anytext = open(anypath).read() if os.path.exists(anypath) else ""
        check("work = calls:gate_step = 20 ; calibrated: 3 equal runs, exact" in anytext
              and "calls:gate_step" not in text, f"exact call count under any: {anytext} / {text}")
        m = re.search(r"work = task-clock <= (\d+)", text)
        check(m is not None, f"noisy event gets an upper bound with margin: {text}")
        check("+ work = calls:gate_step = 20" in p.stdout, f"diff-like summary: {p.stdout}")
        # The margin policy, written into the line: ceil(max observed * (1 + 400%)).
        observed = re.search(r"\+ work = task-clock <= (\d+) ; calibrated: noisy, 3 runs (\d+)\.\.(\d+), max \+ \d+ \(margin 400%, twice the spread, or 2\)", p.stdout)
        check(observed and int(observed.group(1)) == math.ceil(int(observed.group(3)) * 5),
              f"margin arithmetic: {observed and observed.groups()}")
        # Re-run: everything passes against the recorded budgets.
        p = run("--filter=gate.budgeted", "--strict", "--hwdb=" + d)
        check(p.returncode == 0, f"re-run passes: {p.stdout}")
        # Comments and unrelated entries survive a second calibration.
        path = anypath
        with open(path, "a") as f:
            f.write("; kept comment\n[other_test]\nregion = some-event <= 5 ; unrelated\n")
        with open(path) as f:
            lines = f.read().splitlines()
        lines.insert(0, "; header comment written by a person")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        p = run("--filter=gate.budgeted", "--calibrate=2", "--hwdb=" + d, extra=2)
        text = open(path).read()
        check(text.startswith("; header comment written by a person\n"), "header comment kept")
        check("; kept comment" in text and "region = some-event <= 5 ; unrelated" in text,
              f"unrelated entries kept: {text}")
        check("work = calls:gate_step = 22 ;" in text and "calls:gate_step = 20" not in text,
              f"budget line replaced in place: {text}")
        check("- work = calls:gate_step = 20 ;" in p.stdout and "+ work = calls:gate_step = 22 ;" in p.stdout,
              f"summary shows old and new: {p.stdout}")
        check(text.count("[budgeted]") == 1, "no duplicate section")
        check(not [f for f in os.listdir(os.path.dirname(path)) if ".tmp" in f], "no temporaries")
        # The key is selectable, and a chosen key takes every budget.
        p = run("--filter=gate.budgeted", "--calibrate=1", "--calibrate-key=signature", "--hwdb=" + d)
        sigtext = open(os.path.join(d, "budgets", sig, "gate.ini")).read()
        check("calls:gate_step" in sigtext and "task-clock" in sigtext, f"--calibrate-key=signature: {sigtext}")
        # A tolerance is recorded in the line, with the policy.
        p = run("--filter=gate.budgeted", "--calibrate=2", "--calibrate-tolerance=0.5", "--hwdb=" + d)
        text = open(anypath).read()
        check("work = calls:gate_step 20 +-0.5% ; calibrated: 2 equal runs, tolerance 0.5%" in text,
              f"tolerance recorded: {text}")
        p = run("--filter=gate.budgeted", "--calibrate=1", "--calibrate-key=planet", "--hwdb=" + d)
        check(p.returncode == 64 and "expected signature, model, vendor, arch, os or any" in p.stderr,
              p.stderr)
        p = run("--filter=gate.budgeted", "--calibrate")
        check(p.returncode == 64 and "--hwdb=DIR" in p.stderr, "calibrate needs a target")


def t_regression_message():
    with tempfile.TemporaryDirectory() as d:
        run("--filter=gate.budgeted", "--calibrate=2", "--calibrate-margin=400", "--hwdb=" + d)
        p = run("--filter=gate.budgeted", "--hwdb=" + d, extra=1)
        check(p.returncode == 1, f"one more call fails the gate: exit {p.returncode}")
        path = os.path.join(d, "budgets", "any", "gate.ini")
        line = [i + 1 for i, l in enumerate(open(path).read().splitlines())
                if l.startswith("work = calls:gate_step")][0]
        for part in ('region "work"', "calls:gate_step", "measured 21", "= 20", "over by 1",
                     "+5.00% of the budget", f"{path}:{line}"):
            check(part in p.stdout, f"report lacks {part!r}: {p.stdout}")
        # Each failure is printed once.
        check(p.stdout.count("measured 21") == 1, f"failure printed once: {p.stdout}")
        # Users' directories override the built-in one; PMCHECK_HWDB works too.
        p = run("--filter=gate.budgeted", env={"PMCHECK_HWDB": d})
        check(p.returncode == 0, f"PMCHECK_HWDB: {p.stdout}")
        p = run("--filter=gate.budgeted", "--hwdb=/no/such/dir")
        check(p.returncode == 2 and "/no/such/dir" in p.stderr and "does not exist" in p.stderr,
              p.stderr)
        # A level too deep (budgets/, or one key's directory): refused, not
        # a run where every budget is missing.
        for deep, what in ((os.path.join(d, "budgets"), "the budgets/ directory"),
                           (os.path.join(d, "budgets", "any"), "one key's directory")):
            p = run("--filter=gate.budgeted", "--hwdb=" + deep)
            check(p.returncode == 2 and f'"{deep}"' in p.stderr and what in p.stderr and
                  "the one that holds budgets/" in p.stderr, f"--hwdb={deep}: {p.returncode} {p.stderr}")
        # A budget line with a byte that is not UTF-8: an error that names
        # the file, the line, the region and the column of the bound, in the
        # terminal and in the results, never an ERROR with no reason; the
        # value itself is not shown (a line of a linked file may be a secret).
        with open(path, "rb") as f:
            raw = f.read()
        with open(path, "wb") as f:
            f.write(re.sub(rb"^work = calls:gate_step = 20", b"work = calls:gate_step <= 5\xff", raw,
                           flags=re.M))
        out = os.path.join(d, "bad.json")
        p = run("--filter=gate.budgeted", "--hwdb=" + d, "--json=" + out)
        check(p.returncode == 2 and f"{path}:{line}: [budgeted] work: the bound: trailing text at its column 5" in p.stdout
              and "<= 5" not in p.stdout,
              f"a bound with a byte that is not UTF-8 is an error naming it: {p.stdout}")
        with open(out) as f:
            rec = json.load(f)["cases"][0]
        check(rec["verdict"] == "ERROR" and f"{path}:{line}" in json.dumps(rec),
              f"the results carry the reason: {rec.get('reason')} {rec.get('checks')}")


def t_baseline():
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "base.json")
        p = run("--filter=gate.baseline_only", "--save-baseline=" + base)
        check(p.returncode == 0 and os.path.exists(base), "baseline saved")
        p = run("--filter=gate.baseline_only", "--baseline=" + base)
        check(p.returncode == 0 and "same" in p.stdout, f"unchanged: {p.stdout}")
        md = os.path.join(d, "report.md")
        p = run("--filter=gate.baseline_only", "--baseline=" + base, "--report-md=" + md, extra=5)
        check(p.returncode == 3, f"regression exits 3: {p.returncode}\n{p.stdout}")
        check(re.search(r"gate\.baseline_only\s+work\s+calls:gate_step\s+\| 25\s+\| 20 \(\+25\.00%\)\s+\| regression", p.stdout),
              f"console table: {p.stdout}")
        text = open(md).read()
        check("| `gate.baseline_only` | work | `calls:gate_step` | 25 | 20 (+25.00%) | **regression** |" in text,
              f"markdown row: {text}")
        p = run("--filter=gate.baseline_only", "--baseline=" + base, extra=-5)
        check(p.returncode == 0 and "improvement" in p.stdout and "tightened" in p.stdout,
              f"improvement reported with a hint: {p.stdout}")
        p = run("--filter=gate.baseline_only", "--baseline=" + os.path.join(d, "missing.json"))
        check(p.returncode == 2 and "missing.json" in p.stderr, p.stderr)


def doc(sig="AuthenticAMD-25-11-1", backend="perf", cases=None):
    return {"schema": "pmcheck-results/1", "program": "x", "command": [],
            "environment": {"cpu": {"signature": sig}, "backend": backend,
                            "date": "2026-01-31T12:00:00Z", "git_commit": None},
            "summary": {}, "cases": cases or []}


def case(name, regions):
    return {"name": name, "suite": name.split(".")[0], "test": name.split(".")[1],
            "verdict": "PASS", "checks": [], "regions": [
                {"name": r, "iterations": 1, "samples": len(next(iter(evs.values()))),
                 "events": {e: stats(v) for e, v in evs.items()}} for r, evs in regions.items()]}


def stats(values, mux=0):
    s = sorted(values)
    return {"n": len(s), "min": s[0], "max": s[-1], "median": s[len(s) // 2],
            "mean": sum(s) / len(s), "multiplexed": mux, "not_counted": 0, "values": values}


def compare(old, new, *args):
    with tempfile.TemporaryDirectory() as d:
        a, b, out, md = (os.path.join(d, n) for n in ("a.json", "b.json", "r.json", "r.md"))
        json.dump(old, open(a, "w"))
        json.dump(new, open(b, "w"))
        p = cli("compare", a, b, "--json=" + out, "--markdown=" + md, *args)
        rep = json.load(open(out)) if os.path.exists(out) else None
        mdtext = open(md).read() if os.path.exists(md) else ""
        return p, rep, mdtext


def verdicts(rep):
    return {(r["case"], r["region"], r["event"]): r["verdict"] for r in rep["rows"]}


def t_compare_crafted():
    old = doc(cases=[
        case("s.exact", {"r": {"calls:f": [100] * 3, "calls:g": [7] * 3}}),
        case("s.noisy", {"r": {"cycles": [1000, 1010, 1020], "task-clock": [500, 520, 510]}}),
        case("s.few", {"r": {"cycles": [1000]}}),
        case("s.gone", {"r": {"calls:f": [1] * 3}}),
        case("s.mux", {"r": {"cycles": [10, 10, 10]}}),
    ])
    new = doc(cases=[
        case("s.exact", {"r": {"calls:f": [101] * 3, "calls:g": [6] * 3}}),
        case("s.noisy", {"r": {"cycles": [1200, 1210, 1220], "task-clock": [505, 530, 500]}}),
        case("s.few", {"r": {"cycles": [1500]}}),
        case("s.new", {"r": {"calls:h": [3] * 3}}),
        case("s.mux", {"r": {"cycles": [20, 20, 20]}}),
    ])
    new["cases"][4]["regions"][0]["events"]["cycles"]["multiplexed"] = 3
    p, rep, md = compare(old, new)
    v = verdicts(rep)
    check(v[("s.exact", "r", "calls:f")] == "regression", "deterministic +1 is a regression")
    check(v[("s.exact", "r", "calls:g")] == "improvement", "deterministic -1 is an improvement")
    check(v[("s.noisy", "r", "cycles")] == "regression", "noisy, separated, +19% is a regression")
    check(v[("s.noisy", "r", "task-clock")] == "noise", "overlapping noisy samples are noise")
    check(v[("s.few", "r", "cycles")] == "no-verdict", "one noisy sample gives no verdict")
    check(v[("s.new", "r", "calls:h")] == "new", "new event")
    check(v[("s.gone", "r", "calls:f")] == "gone", "missing event")
    check(v[("s.mux", "r", "cycles")] == "no-verdict", "multiplexed gives no verdict")
    check(p.returncode == 3, f"regression exit 3, got {p.returncode}")
    check(rep["summary"]["regression"] == 2 and rep["summary"]["improvement"] == 1, rep["summary"])
    check("no verdicts" not in p.stdout and "mismatch" not in rep, "no mismatch warning when comparable")
    check("Not comparable" not in md, md)
    check("**regression**" in md and "| --- |" in md, md)
    check("tightened" in p.stdout, "improvement hint on the console")
    # Same data, different CPU: refused unless forced.
    p, rep, md = compare(old, doc(sig="GenuineIntel-6-CF-2", cases=new["cases"]))
    check(p.returncode == 2 and rep["mismatch"].startswith("different CPUs")
          and "not compared" in p.stdout, f"mismatch refused, and not a pass: {p.returncode}")
    check(set(verdicts(rep).values()) <= {"no-verdict", "new", "gone"}, verdicts(rep))
    check("Not comparable" in md and "warning: different CPUs" in p.stdout, "mismatch reported")
    p, rep, md = compare(old, doc(sig="GenuineIntel-6-CF-2", cases=new["cases"]), "--force")
    check(p.returncode == 3, "--force compares anyway")
    p, rep, md = compare(old, doc(backend="sim", cases=new["cases"]))
    check("different backends" in rep["mismatch"], "backend mismatch")
    # Sim results of two toolchains: both named, refused, not a pass.
    gcc, clang = ("sim-x86_64-valgrind-3.19.0-I1-32k-8w-D1-32k-8w-LL-8M-16w-64B-%s-O-RelWithDebInfo" % c
                  for c in ("gcc-12.2.0", "clang-14.0.6"))
    so, sn = copy.deepcopy(old), copy.deepcopy(new)
    for c in so["cases"]:
        c["sim_profile"] = gcc
    for c in sn["cases"]:
        c["sim_profile"] = clang
    p, rep, md = compare(doc(backend="sim", cases=so["cases"]), doc(backend="sim", cases=sn["cases"]))
    check(p.returncode == 2 and rep["mismatch"].startswith("different toolchains") and gcc in rep["mismatch"]
          and clang in rep["mismatch"] and "not compared" in p.stdout and "Not comparable" in md
          and set(verdicts(rep).values()) <= {"no-verdict", "new", "gone"},
          f"two toolchains: named, refused: {p.returncode} {rep.get('mismatch')}\n{p.stdout}")
    for c in sn["cases"]:
        c["sim_profile"] = gcc
    p, rep, md = compare(doc(backend="sim", cases=so["cases"]), doc(backend="sim", cases=sn["cases"]))
    check(p.returncode == 3 and "mismatch" not in rep, f"one toolchain: compared: {p.returncode} {rep.get('mismatch')}")
    # The cases whose counts moved, each once.
    with tempfile.TemporaryDirectory() as d:
        a, b, moved = (os.path.join(d, n) for n in ("a.json", "b.json", "moved"))
        json.dump(old, open(a, "w"))
        json.dump(new, open(b, "w"))
        p = cli("compare", a, b, "--moved-cases=" + moved)
        got = open(moved).read().split() if os.path.exists(moved) else None
        check(p.returncode == 3 and got is not None and sorted(got) == ["s.exact", "s.gone", "s.new", "s.noisy"],
              f"--moved-cases: regression, improvement, new, gone; not noise or no verdict: {got}")
        p = cli("compare", a, a, "--moved-cases=" + moved)
        check(p.returncode == 0 and open(moved).read() == "", "nothing moved: an empty file")
        p = cli("compare", a, b, "--moved-cases=" + d)
        check(p.returncode == 64 and "is a directory, not a regular file" in p.stderr and d in p.stderr,
              f"a directory is refused before any work: {p.returncode} {p.stderr}")
    # A tolerance wide enough turns the noisy regression into noise, and a
    # deterministic +1% into "tolerated"; per event, only that event.
    p, rep, md = compare(old, new, "--tolerance=25")
    check(verdicts(rep)[("s.noisy", "r", "cycles")] == "noise", "tolerance applies to noisy")
    check(verdicts(rep)[("s.exact", "r", "calls:f")] == "tolerated", "and to deterministic")
    p, rep, md = compare(old, new, "--tolerance=calls:f=1")
    check(verdicts(rep)[("s.exact", "r", "calls:f")] == "tolerated"
          and verdicts(rep)[("s.noisy", "r", "cycles")] == "regression", "per-event tolerance")
    p = cli("compare", "only-one.json")
    check(p.returncode == 64, "usage")
    p = cli("compare", "--help")
    check(p.returncode == 0 and "--tolerance=EVENT=PCT" in p.stdout, f"compare --help: {p.stdout}{p.stderr}")
    for command in ("probe", "events", "results", "hwdb", "validate", "sim"):
        p = cli(command, "--help")
        check(p.returncode == 0 and "usage" in p.stdout, f"{command} --help: {p.returncode} {p.stderr}")


def t_gate_holes():
    old = doc(cases=[case("s.a", {"r": {"calls:f": [5] * 3}}), case("s.b", {"r": {"calls:f": [5] * 3}})])
    # A run that lost a case fails the comparison, naming it.
    p, rep, md = compare(old, doc(cases=[case("s.a", {"r": {"calls:f": [5] * 3}})]))
    check(p.returncode == 3 and "s.b" in p.stdout and "did not run" not in p.stderr,
          f"gone case fails: {p.returncode} {p.stdout}")
    p, rep, md = compare(old, doc(cases=[case("s.a", {"r": {"calls:f": [5] * 3}})]), "--allow-missing")
    check(p.returncode == 0, f"--allow-missing: {p.returncode} {p.stdout}")
    p, rep, md = compare(old, doc(cases=[]))
    check(p.returncode == 3, f"no cases at all fails: {p.returncode}")
    # Results files are validated on read, naming the file and the field.
    bad = [({"cases": "x"}, "cases: expected an array, found a string"),
           ({"cases": {}}, "cases: expected an array, found an object"),
           ({"cases": None}, "cases: expected an array"),
           ("drop-cases", "cases: missing"),
           ({"cases": [{"name": "s.a", "verdict": "PASS", "checks": [], "regions": [
               {"name": "r", "samples": 3, "events": {"calls:f": dict(stats([5] * 3), min="5")}}]}]},
            'cases[0].regions[0].events["calls:f"].min: expected an integer, found a string'),
           ({"cases": [{"name": "s.a", "verdict": "MAYBE", "checks": [], "regions": []}]},
            'cases[0].verdict: unknown verdict "MAYBE"')]
    for change, what in bad:
        d2 = doc(cases=[case("s.a", {"r": {"calls:f": [5] * 3}})])
        if change == "drop-cases":
            del d2["cases"]
        else:
            d2.update(change)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "bad.json")
            json.dump(d2, open(path, "w"))
            p = cli("results", path)
            check(p.returncode == 2 and f"{path}: {what}" in p.stderr, f"results {what}: {p.returncode} {p.stderr}")
            good = os.path.join(d, "good.json")
            json.dump(old, open(good, "w"))
            p = cli("compare", good, path)
            check(p.returncode == 2 and what in p.stderr, f"compare {what}: {p.returncode} {p.stderr}")
    d3 = doc(cases=[case("s.a", {"r": {"calls:f": [5] * 3}})])
    d3["schema"] = "pmcheck-results/9"
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "future.json")
        json.dump(d3, open(path, "w"))
        p = cli("results", path)
        check(p.returncode == 2 and 'schema "pmcheck-results/9"' in p.stderr, p.stderr)
    # A filtered run against a full baseline: cases outside the filter are
    # not compared (and not "gone"); a selected case that vanished still fails.
    with tempfile.TemporaryDirectory() as d:
        base = os.path.join(d, "base.json")
        run("--filter=gate.baseline_only,gate.budgeted", "--save-baseline=" + base, "--hwdb=" + d)
        out = os.path.join(d, "run.json")
        p = run("--filter=gate.baseline_only", "--baseline=" + base, "--json=" + out)
        check(p.returncode == 0 and "gone" not in p.stdout.split("compared with")[1].split("\n\n")[0]
              and "outside --filter" in p.stdout, f"filtered run: {p.returncode} {p.stdout}")
        res = json.load(open(out))
        check("comparison" in res and res["comparison"]["summary"]["gone"] == 0,
              "--json carries the comparison")


def t_hwdb_cli():
    p = cli("hwdb", "lookup", "GenuineIntel-6-55-4")
    check("= skylake-x" in p.stdout and "map.ini:" in p.stdout, p.stdout)
    p = cli("hwdb", "lookup", "GenuineIntel-6-55-7")
    check("= cascadelake-x" in p.stdout, "stepping-specific line first")
    p = cli("hwdb", "lookup", "GenuineIntel-6-1-1")
    check("matched       nothing" in p.stdout and "GenuineIntel" in p.stdout and "any" in p.stdout,
          f"no match falls back to generic keys: {p.stdout}")
    p = cli("hwdb", "check")
    check(p.returncode == 0 and "hwdb OK" in p.stdout, p.stdout + p.stderr)
    p = cli("hwdb", "budget", "budget.hash_and_touch", "hash", "calls:example_hash")
    check(p.returncode == 0 and "= 50" in p.stdout and "budgets/any/budget.ini:" in p.stdout,
          f"budget and its source: {p.stdout}{p.stderr}")
    p = cli("hwdb", "budget", "budget.hash_and_touch", "hash", "calls:nothing")
    check(p.returncode == 1 and "unbudgeted" in p.stdout, p.stdout)
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "budgets", "any"))
        with open(os.path.join(d, "map.ini"), "w") as f:
            f.write("[map]\n^AuthenticAMD-25-11-1$ = my-box\n")
        with open(os.path.join(d, "models.ini"), "w") as f:
            f.write("[my-box]\nname = my box\nvendor = AuthenticAMD\narch = x86_64\n")
        with open(os.path.join(d, "budgets", "any", "budget.ini"), "w") as f:
            f.write("[hash_and_touch]\nhash = calls:example_hash <= 60\n")
        p = cli("hwdb", "lookup", "AuthenticAMD-25-11-1", "--hwdb=" + d)
        check(f"= my-box  [{d}/map.ini:2]" in p.stdout, f"user map first: {p.stdout}")
        p = cli("hwdb", "budget", "budget.hash_and_touch", "hash", "calls:example_hash", "--hwdb=" + d)
        check("<= 60" in p.stdout and d in p.stdout, f"user budget overrides built-in: {p.stdout}")


def release_key():
    """This system's release key as os-release(5) gives it, or None."""
    fields = {}
    for path in ("/etc/os-release", "/usr/lib/os-release"):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    k, _, v = line.strip().partition("=")
                    fields[k] = v.strip("\"'")
            break
    if fields.get("ID") and fields.get("VERSION_ID"):
        return "os-%s-%s" % (fields["ID"], fields["VERSION_ID"])
    return None


def t_release_key():
    """Counts that depend on a release's libraries (calls of free in libexpat
    2.5 and 2.9) are kept under the release's key, read before "any"; a
    calibration files them there once the suite keeps budgets there."""
    key = release_key()
    if not key:
        print("SKIP: /etc/os-release has no ID and VERSION_ID (a rolling release): no release key here")
        sys.exit(77)
    p = cli("hwdb", "lookup")
    keys = re.findall(r"^    (\S+)", p.stdout, re.M)
    check(keys[-2:] == [key, "any"], f"hwdb lookup: {key} just before any: {keys}")
    with tempfile.TemporaryDirectory() as d:
        anypath = os.path.join(d, "budgets", "any", "gate.ini")
        relpath = os.path.join(d, "budgets", key, "gate.ini")
        p = run("--filter=gate.budgeted", "--calibrate=1", "--calibrate-margin=400", "--hwdb=" + d)
        check(os.path.exists(anypath) and not os.path.exists(relpath),
              f"by default a call count goes under any: {os.listdir(os.path.join(d, 'budgets'))}")
        p = run("--filter=gate.budgeted", "--calibrate=1", "--calibrate-margin=400", "--calibrate-key=os",
                "--hwdb=" + d, extra=2)
        rel = open(relpath).read() if os.path.exists(relpath) else ""
        check(p.returncode == 0 and "work = calls:gate_step = 22 ;" in rel,
              f"--calibrate-key=os files under {key}: {rel}{p.stdout}{p.stderr}")
        # "any" holds 20 calls, the release's key 22: the release's wins.
        p = run("--filter=gate.budgeted", "--hwdb=" + d, extra=2)
        check(p.returncode == 0, f"the release's budget is read before any: {p.stdout}")
        p = run("--filter=gate.budgeted", "--hwdb=" + d)
        check(p.returncode == 1 and f"budgets/{key}/gate.ini" in p.stdout,
              f"and judged by it, named: {p.stdout}")
        # Kept there once, a call count is recalibrated there, any untouched.
        before = open(anypath).read()
        p = run("--filter=gate.budgeted", "--calibrate=1", "--calibrate-margin=400", "--hwdb=" + d, extra=3)
        check("work = calls:gate_step = 23 ;" in open(relpath).read() and open(anypath).read() == before,
              f"recalibrated under {key}, any kept: {p.stdout}")


def t_malformed():
    cases = [
        ("map.ini", "[map]\nGenuineIntel-6-55 = x\n", "map.ini:2", "anchored"),
        ("map.ini", "[map]\n^(unclosed$ = x\n", "map.ini:2", "Unmatched"),
        ("map.ini", "[other]\n^a$ = x\n", "map.ini:2", "[map]"),
        ("models.ini", "[m]\nname = x\ncolour = blue\n", "models.ini:3", "unknown fact"),
        ("models.ini", "[m]\ngeneral_counters = six\n", "models.ini:2", "whole number"),
        ("models.ini", "[m]\nthis line has no equals sign\n", "models.ini:2", "expected"),
        ("models.ini", "[m]\nname = " + "x" * 300 + "\n", "models.ini:2", "too long"),
    ]
    for name, text, where, what in cases:
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, name), "w") as f:
                f.write(text)
            p = cli("hwdb", "lookup", "--hwdb=" + d)
            check(p.returncode == 2 and where in p.stderr and what in p.stderr,
                  f"{name} {text[:30]!r}: {p.returncode} {p.stderr}")
    budget_cases = [
        ("[t]\nr = calls:f <== 5\n", "gate.ini:2", "column"),
        ("[t]\nr = calls:f\n", "gate.ini:2", "region = event bound"),
        ("[t]\nr = calls:f 10..5\n", "gate.ini:2", "empty"),
        ("r = calls:f <= 5\n", "gate.ini:1", "outside a [test] section"),
        ("[t]\nr = calls:f <= 5\nr = calls:f <= 6\n", "gate.ini:3", "second budget"),
    ]
    for text, where, what in budget_cases:
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "budgets", "any"))
            with open(os.path.join(d, "budgets", "any", "gate.ini"), "w") as f:
                f.write(text)
            p = cli("hwdb", "check", "--hwdb=" + d)
            check(p.returncode == 2 and where in p.stderr and what in p.stderr,
                  f"budget {text!r}: {p.returncode} {p.stderr}")
            if "second" in what:
                continue
            # The gate reports the same error as an ERROR, naming file:line.
            with open(os.path.join(d, "budgets", "any", "gate.ini"), "w") as f:
                f.write(text.replace("[t]", "[budgeted]").replace("r = calls:f", "work = calls:gate_step"))
            p = run("--filter=gate.budgeted", "--hwdb=" + d)
            check(p.returncode == 2 and where in p.stdout, f"gate ERROR names {where}: {p.stdout}")


def t_broken_results():
    """Gutted results files: each is refused by `pmcheck results` and by
    `pmcheck compare`, naming the file, the field and what was expected."""
    with tempfile.TemporaryDirectory() as d:
        good = os.path.join(d, "good.json")
        p = run("--filter=gate.baseline_only", "--json=" + good)
        check(p.returncode == 0, f"a results file to break: {p.stdout}")
        with open(good) as f:
            base = json.load(f)

        def case0(doc):
            return doc["cases"][0]

        def ev0(doc):
            return case0(doc)["regions"][0]["events"]["calls:gate_step"]

        def setp(getter, key, value):
            def mutate(doc):
                getter(doc)[key] = value
            return mutate

        def delp(getter, key):
            def mutate(doc):
                del getter(doc)[key]
            return mutate

        top = lambda doc: doc  # noqa: E731
        region0 = lambda doc: case0(doc)["regions"][0]  # noqa: E731
        event_rec0 = lambda doc: case0(doc)["events"][0]  # noqa: E731
        mutations = [
            ("no cases", delp(top, "cases"), "cases: missing"),
            ("cases an object", setp(top, "cases", {}), "cases: expected an array"),
            ("cases a string", setp(top, "cases", "x"), "cases: expected an array"),
            ("no environment", delp(top, "environment"), "environment: missing"),
            ("environment a list", setp(top, "environment", []), "environment: expected an object"),
            ("no schema", delp(top, "schema"), "not a pmcheck results file"),
            ("other schema", setp(top, "schema", "other/1"), "not a pmcheck results file"),
            ("a case a number", setp(top, "cases", [7]), "cases[0]: expected an object"),
            ("case without name", delp(case0, "name"), "cases[0].name"),
            ("name a number", setp(case0, "name", 5), "cases[0].name"),
            ("verdict unknown", setp(case0, "verdict", "MAYBE"), "unknown verdict"),
            ("verdict missing", delp(case0, "verdict"), "cases[0].verdict"),
            ("line a string", setp(case0, "line", "12"), "cases[0].line"),
            ("reps negative", setp(case0, "reps", -1), "cases[0].reps"),
            ("reps a string", setp(case0, "reps", "5"), "cases[0].reps"),
            ("regions missing", delp(case0, "regions"), "cases[0].regions"),
            ("regions an object", setp(case0, "regions", {}), "cases[0].regions"),
            ("region without name", delp(region0, "name"), "regions[0].name"),
            ("region samples a string", setp(region0, "samples", "5"), "regions[0].samples"),
            ("region events a list", setp(region0, "events", []), "regions[0].events"),
            ("stats a number", setp(lambda doc: region0(doc)["events"], "calls:gate_step", 3), "expected an object"),
            ("n a string", setp(ev0, "n", "5"), ".n"),
            ("min negative", setp(ev0, "min", -3), ".min"),
            ("min a string", setp(ev0, "min", "20"), ".min"),
            ("max a float", setp(ev0, "max", 2.5), ".max"),
            ("median a string", setp(ev0, "median", "20"), ".median"),
            ("mean missing", delp(ev0, "mean"), ".mean"),
            ("values a string", setp(ev0, "values", "20,20"), ".values"),
            ("a value a string", setp(ev0, "values", [20, "20"]), ".values[1]"),
            ("a value negative", setp(ev0, "values", [20, -1]), ".values[1]"),
            ("events an object", setp(case0, "events", {}), "cases[0].events"),
            ("event label missing", delp(event_rec0, "label"), "events[0].label"),
            ("checks an object", setp(case0, "checks", {}), "cases[0].checks"),
            ("check a string", setp(case0, "checks", ["x"]), "checks[0]"),
            # What the history and the gates key and order runs by (issue 45).
            ("no cpu", delp(lambda doc: doc["environment"], "cpu"), "environment.cpu: missing"),
            ("no signature", delp(lambda doc: doc["environment"]["cpu"], "signature"),
             "environment.cpu.signature: missing"),
            ("signature empty", setp(lambda doc: doc["environment"]["cpu"], "signature", ""),
             "environment.cpu.signature: \"\" is not a CPU signature"),
            ("signature a number", setp(lambda doc: doc["environment"]["cpu"], "signature", 6),
             "environment.cpu.signature: expected a CPU signature"),
            ("commit a number", setp(lambda doc: doc["environment"], "git_commit", 12345),
             "environment.git_commit: expected a commit"),
            ("commit not hex", setp(lambda doc: doc["environment"], "git_commit", "main\x1b[2J"),
             "environment.git_commit: \"main\\x1b[2J\" is not a commit"),
            ("date missing", delp(lambda doc: doc["environment"], "date"), "environment.date: missing"),
            ("date yesterday", setp(lambda doc: doc["environment"], "date", "yesterday"),
             "environment.date: \"yesterday\" is not an RFC 3339 date-time"),
            ("date month 13", setp(lambda doc: doc["environment"], "date", "2026-13-01T00:00:00Z"),
             "environment.date"),
            ("date no zone", setp(lambda doc: doc["environment"], "date", "2026-01-01T00:00:00"),
             "environment.date"),
            ("min above max", setp(ev0, "min", 10 ** 9), "min 1000000000 is above max 20"),
            ("median above max", setp(ev0, "median", 10 ** 9), ".median: 1e+09 is outside min..max"),
            ("n not the values", setp(ev0, "n", 99), ".n: 99, but values has"),
        ]
        tried = refused = 0
        for what, mutate, phrase in mutations:
            doc = copy.deepcopy(base)
            mutate(doc)
            path = os.path.join(d, "broken.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            tried += 1
            for cmd in (("results", path), ("compare", path, path)):
                p = cli(*cmd)
                ok = p.returncode != 0 and path in p.stderr and phrase in p.stderr
                check(ok, f"{what}: pmcheck {cmd[0]} rc {p.returncode}: {p.stderr.strip()[:300]}")
            refused += ok
        for what, text, phrase in [("not JSON", "{ \"schema\": ", "not JSON"),
                                   ("empty file", "", "not JSON"),
                                   ("a JSON list", "[]", "not a pmcheck results file")]:
            path = os.path.join(d, "broken.json")
            with open(path, "w") as f:
                f.write(text)
            tried += 1
            p = cli("results", path)
            ok = p.returncode != 0 and path in p.stderr and phrase in p.stderr
            check(ok, f"{what}: rc {p.returncode}: {p.stderr.strip()[:300]}")
            refused += ok
        print(f"{tried} broken results files, {refused} refused with file, field and reason, "
              f"{tried - refused} not")
        check(tried >= 30, "at least 30 broken results files")


def t_resources():
    """Out of descriptors, a full disk, an unreadable hwdb file: a clear
    error and a failing exit status, never a skip, a partial file or lost
    budgets."""
    import resource
    import shutil

    def low_fds():
        resource.setrlimit(resource.RLIMIT_NOFILE, (5, 5))

    # LeakSanitizer (sanitizer builds) needs a descriptor of its own at exit.
    e = dict(os.environ, NO_COLOR="1",
             ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0")
    p = subprocess.run([EXE, "--filter=gate.baseline_only"], capture_output=True, text=True,
                       timeout=60, preexec_fn=low_fds, env=e)
    check(p.returncode == 2 and "ERROR" in p.stdout and "out of file descriptors" in p.stdout
          and "ulimit -n" in p.stdout, f"ulimit -n 5: rc {p.returncode}: {p.stdout[:400]}")
    if os.geteuid() != 0 or not shutil.which("runuser"):
        print("SKIP the full-disk and unreadable-file parts: need root (mount, runuser)")
        return
    with tempfile.TemporaryDirectory() as d:
        full = os.path.join(d, "full")
        os.makedirs(full)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", full]).returncode:
            print("SKIP the full-disk part: cannot mount a tmpfs here")
        else:
            try:
                os.makedirs(os.path.join(full, "budgets", "any"))
                kept = "[budgeted]\nwork = calls:gate_step <= 99 ; kept\n"
                with open(os.path.join(full, "budgets", "any", "gate.ini"), "w") as f:
                    f.write(kept)
                with open(os.path.join(full, "fill"), "wb") as f:
                    try:
                        f.write(b"\0" * 200000)
                    except OSError:
                        pass
                out = os.path.join(full, "r.json")
                p = run("--filter=gate.baseline_only", "--json=" + out)
                check(p.returncode == 2 and "No space left on device" in p.stderr + p.stdout
                      and not os.path.exists(out),
                      f"results on a full disk: rc {p.returncode}: {p.stderr[:300]}")
                p = run("--filter=gate.budgeted", "--calibrate=3", "--hwdb=" + full)
                with open(os.path.join(full, "budgets", "any", "gate.ini")) as f:
                    now = f.read()
                check(p.returncode == 2 and "No space left on device" in p.stdout and now == kept,
                      f"calibrate on a full disk: rc {p.returncode}, file {now!r}: {p.stdout[-300:]}")
                check(not [n for n in os.listdir(os.path.join(full, "budgets", "any")) if ".tmp" in n],
                      "no temporary file left on the full disk")
            finally:
                subprocess.run(["umount", full])
        hw = os.path.join(d, "hw")
        os.makedirs(hw)
        os.chmod(d, 0o755)
        os.chmod(hw, 0o755)
        with open(os.path.join(hw, "models.ini"), "w") as f:
            f.write("[m]\nname = M\n")
        os.chmod(os.path.join(hw, "models.ini"), 0)
        p = subprocess.run(["runuser", "-u", "nobody", "--", CLI, "hwdb", "check", "--hwdb=" + hw],
                           capture_output=True, text=True, timeout=60, cwd="/")
        check(p.returncode == 2 and "models.ini" in p.stderr and "Permission denied" in p.stderr,
              f"unreadable models.ini: rc {p.returncode}: {p.stderr[:300]}")


CHECKS = {n[2:]: f for n, f in globals().items() if n.startswith("t_")}

if __name__ == "__main__":
    try:
        CHECKS[CHECK]()
    except Exception as e:  # noqa: BLE001 - any exception is a failure here
        fail(f"{type(e).__name__}: {e}")
    finish()
