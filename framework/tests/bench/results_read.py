#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Benchmark of the results readers (issue 59): a results file of SIZE MB
(default 16) is generated as a run writes one -- many cases, each with its
events, regions, statistics, attribution rows and checks -- and read by
`pmcheck results`, `pmcheck compare` (the file against itself) and
`pmcheck history add` (into a new SQLite store each time).  Each is timed
over RUNS runs (the best is printed) beside references measured in the
same run on the same file: `cat` (reading the bytes) and Python's
json.load (parsing them); the figures are printed as seconds and as
ratios to the references, so a slower or faster machine shifts both.

Nothing is asserted on time: the goal (under 0.2 s for 16 MB) is read off
the printout; each reader must still accept the file (exit 0 or 1), and
the file must have the cases it was generated with.

usage: results_read.py PMCHECK [SIZE_MB [RUNS]]   (ctest -L bench)"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

CLI = sys.argv[1]
SIZE_MB = float(sys.argv[2]) if len(sys.argv) > 2 else 16
RUNS = int(sys.argv[3]) if len(sys.argv) > 3 else 3

EVENTS = [("instructions:u", "hardware", "Ir"), ("L1-dcache-loads", "cache", "Dr"),
          ("L1-dcache-stores", "cache", "Dw"), ("branches", "hardware", "Bc+Bi")]


def stats(base, k, n):
    values = [base + (k * 7919 + j * 104729) % 97 for j in range(n)]
    s = sorted(values)
    return {"n": n, "min": s[0], "median": s[n // 2], "max": s[-1], "mean": sum(s) / n,
            "multiplexed": 0, "not_counted": 0, "values": values}


def case(i, src):
    """One case as the runner writes it: 4 events, 2 regions of 5 samples,
    20 functions of attribution per region, a budget check per figure."""
    suite, test = f"suite{i % 37}", f"case{i}"
    labels = [e[0] for e in EVENTS]
    regions, checks = [], []
    for g, region in enumerate(("setup", "parse")):
        evs = {lab: stats(1_000_000 * (e + 1) + i * 13 + g, i + e, 5) for e, lab in enumerate(labels)}
        fns = [{"function": f"fn_{i}_{g}_{f}", "object": f"/usr/lib/x86_64-linux-gnu/lib{suite}.so.1",
                "costs": {lab: 1000 * (f + 1) + e for e, lab in enumerate(labels)}, "calls": 10 * f + 1}
               for f in range(20)]
        regions.append({"name": region, "iterations": 1, "samples": 5, "events": evs, "functions": fns})
        for lab in labels:
            m = evs[lab]["min"]
            checks.append({"kind": "budget", "region": region, "event": lab, "status": "pass",
                           "file": src, "line": 100 + i % 900,
                           "message": f'region "{region}", {lab}: {m} (min of 5) within = {m}',
                           "measured": m, "lo": m, "hi": m, "statistic": "min", "samples": 5,
                           "budget_source": f"/src/hwdb/budgets/sim-x86_64/{suite}.ini:{i % 500 + 1}"})
    return {"name": f"{suite}.{test}", "suite": suite, "test": test, "file": src, "line": 100 + i % 900,
            "verdict": "PASS", "backend": "sim", "reps": 5, "warmup": 1, "stat": "min", "measuring": True,
            "events": [{"label": lab, "name": lab, "group": 0, "hardware": True, "kind": kind,
                        "sim_columns": col, "sim_engine": "pmcheck"} for lab, kind, col in EVENTS],
            "grouping": "{" + ",".join(labels) + "}", "read_path": "sim",
            "overhead": {lab: 100 + e for e, lab in enumerate(labels)},
            "sim_profile": "sim-x86_64-valgrind-3.19.0-gcc-12.2.0-O-RelWithDebInfo",
            "simulated_cpu": "GenuineIntel-6-3C-3", "sim_engine": "pmcheck",
            "regions": regions, "checks": checks, "notes": [], "duration_s": 0.5, "timeout_s": 60}


def document(size):
    env = {"pmcheck_version": "0.2.0",
           "cpu": {"signature": "AuthenticAMD-25-1-1", "vendor": "AuthenticAMD", "brand": "AMD EPYC",
                   "arch": "x86_64", "family": 25, "model": 1, "stepping": 1,
                   "how": "CPUID leaves 0 and 1", "hypervisor": True},
           "kernel": {"release": "6.1.0", "version": "#1 SMP", "machine": "x86_64"},
           "backend": "sim", "perf_event_paranoid": 2, "hardware_pmu": False, "pmus": "software",
           "compiler": "gcc 12.2.0", "hostname": "bench", "date": "2026-01-31T12:00:00Z",
           "uid": "user", "git_commit": "0123456789abcdef0123456789abcdef01234567"}
    # The size of a case as written, indented inside the document.
    one = len(json.dumps({"cases": [case(0, "/src/suites/suite0/suite0.c")] * 2}, indent=2)) / 2
    n = max(1, int(size / one))
    cases = [case(i, f"/src/suites/suite{i % 37}/suite{i % 37}.c") for i in range(n)]
    summary = {"total": n, "pass": n, "fail": 0, "skip": 0, "error": 0, "inconclusive": 0,
               "known_issue": 0, "measured": n, "measuring": n, "unbudgeted": 0, "unbudgeted_cases": 0,
               "skip_reasons": {}, "line": f"{n} cases: {n} PASS", "exit_status": 0}
    return {"schema": "pmcheck-results/1", "program": "bench", "command": ["bench"], "environment": env,
            "duration_s": 1.0, "summary": summary, "cases": cases}


def best(argv, runs, ok=(0,), before=None):
    """The least wall and the least CPU (user + system) seconds of runs:
    on a shared machine the CPU seconds move less than the wall's."""
    walls, cpus = [], []
    for _ in range(runs):
        if before:
            before()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        walls.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        if p.returncode not in ok:
            sys.exit(f"{argv[:4]}: exit {p.returncode}: {p.stderr[-500:]}")
    return min(walls), min(cpus)


def main():
    with tempfile.TemporaryDirectory() as d:
        f = os.path.join(d, "results.json")
        doc = document(SIZE_MB * 1e6)
        with open(f, "w") as h:
            json.dump(doc, h, indent=2)  # as the runner writes it: indented
        size = os.path.getsize(f)
        db = os.path.join(d, "h.sqlite")

        def fresh_db():
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(db + suffix):
                    os.unlink(db + suffix)

        ref_cat = best(["cat", f], RUNS)
        ref_py = best([sys.executable, "-c", "import json,sys; json.load(open(sys.argv[1]))", f], RUNS)
        rows = [("results", best([CLI, "results", f], RUNS, ok=(0, 1))),
                ("compare", best([CLI, "compare", f, f], RUNS, ok=(0, 1))),
                ("history add", best([CLI, "history", "--db=" + db, "add", f], RUNS, before=fresh_db))]
        print(f"results file: {size / 1e6:.1f} MB, {len(doc['cases'])} cases; best of {RUNS} runs, "
              "wall and CPU (user + system) seconds")
        print(f"  {'reference cat':<24} {ref_cat[0]:7.3f} s wall {ref_cat[1]:7.3f} s CPU")
        print(f"  {'reference python json':<24} {ref_py[0]:7.3f} s wall {ref_py[1]:7.3f} s CPU")
        for what, (wall, cpu) in rows:
            print(f"  pmcheck {what:<16} {wall:7.3f} s wall {cpu:7.3f} s CPU  "
                  f"{wall / ref_py[0]:5.2f} x python json.load (wall), {cpu / max(ref_py[1], 1e-3):5.2f} (CPU)")
        print("goal (issue 59): 16 MB read in under 0.2 s")


main()
