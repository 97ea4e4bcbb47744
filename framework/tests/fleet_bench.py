#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The fleet benchmark of docs/scale.md: MACHINES machines of 5 CPU models
run a suite of 20 series (5 cases x 4 events) at each of COMMITS commits.
Half the cases count exactly (the same figure on every machine of a model,
moving in steps), half are noisy (1% per machine, with steps of 5% or more).
Every machine's results file is written, then `pmcheck history add` puts them
into a PostgreSQL store (a throw-away cluster with fsync on) and into an
SQLite file, with WRITERS writers at once; then `history changes` and
`history report` run on each store.  Each is timed, and `changes` is checked
against the generated steps.

Usage: [FLEET_KEEP=DIR] fleet_bench.py PMCHECK TEMPLATE.json [MACHINES COMMITS [WRITERS]]
       (default 100 1000 8; TEMPLATE: a results file of one case with 4 events,
       build/pmcheck-results/expat.attrs.sim.json)."""
import datetime
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "history"))
import pgcluster  # noqa: E402

CLI, TEMPLATE = sys.argv[1:3]
MACHINES = int(sys.argv[3]) if len(sys.argv) > 3 else 100
COMMITS = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
WRITERS = int(sys.argv[5]) if len(sys.argv) > 5 else 8
MODELS = ["AuthenticAMD-25-1-1", "AuthenticAMD-25-17-1", "AuthenticAMD-26-2-1",
          "GenuineIntel-6-106-6", "GenuineIntel-6-143-8"]
CASES = 5
START = datetime.datetime(2026, 1, 1)
KEEP = os.environ.get("FLEET_KEEP")  # a directory: keep the stores there

def plan(rng):
    """Per model and series: the commits where it steps, and its levels."""
    out = {}
    for m in MODELS:
        for c in range(CASES):
            for e in range(4):
                steps = sorted(rng.sample(range(10, COMMITS - 10), 3))
                while any(b - a < 10 for a, b in zip(steps, steps[1:])):
                    steps = sorted(rng.sample(range(10, COMMITS - 10), 3))
                level = [1_000_000 * (1 + e)]
                for _ in steps:
                    level.append(level[-1] * (1 + rng.choice([-1, 1]) * rng.uniform(0.05, 0.15)))
                out[(m, c, e)] = (steps, level)
    return out


def level_at(steps, level, i):
    return level[sum(i >= s for s in steps)]


def main():
    with open(TEMPLATE) as f:
        base = json.load(f)
    case0 = base["cases"][0]
    region = case0["regions"][0]
    events = list(region["events"])[:4]
    rng = random.Random(1)
    truth = plan(rng)
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as d:
        dirs = [os.path.join(d, "w%d" % w) for w in range(WRITERS)]
        for x in dirs:
            os.makedirs(x)
        t = time.perf_counter()
        n = 0
        for i in range(COMMITS):
            commit = "%040x" % random.Random(i).getrandbits(160)
            for k in range(MACHINES):
                model = MODELS[k % len(MODELS)]
                doc = {key: base[key] for key in base if key != "cases"}
                env = dict(base["environment"])
                # Commit i runs i hours after the first, each machine a second
                # after the one before: the store orders commits by date.
                when = START + datetime.timedelta(hours=i, seconds=k)
                env.update(git_commit=commit, hostname="ci-%03d" % k, backend="perf",
                           date=when.strftime("%Y-%m-%dT%H:%M:%SZ"),
                           cpu=dict(base["environment"]["cpu"], signature=model))
                doc["environment"] = env
                cases = []
                for c in range(CASES):
                    evs = {}
                    for e, label in enumerate(events):
                        steps, level = truth[(model, c, e)]
                        v = level_at(steps, level, i)
                        if c % 2:  # noisy cases
                            v *= 1 + rng.gauss(0, 0.01)
                        v = int(v)
                        evs[label] = {"n": 1, "min": v, "median": v, "max": v, "mean": v,
                                      "multiplexed": 0, "not_counted": 0, "values": [v]}
                    cases.append(dict(case0, name="fleet.case%d" % c, test="case%d" % c,
                                      regions=[dict(region, events=evs)]))
                doc["cases"] = cases
                with open(os.path.join(dirs[n % WRITERS], "r%07d.json" % n), "w") as f:
                    json.dump(doc, f)
                n += 1
        print(f"{n} results files of {CASES * 4} series each written in {time.perf_counter() - t:.1f} s")

        def add(db):
            t = time.perf_counter()
            ps = [subprocess.Popen([CLI, "history", f"--db={db}", "add", x], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True) for x in dirs]
            outs = [p.communicate() for p in ps]
            dt = time.perf_counter() - t
            if any(p.returncode for p in ps):
                sys.exit(f"add: {[p.returncode for p in ps]} {outs[0][1][-400:]}")
            return dt

        def timed(db, *args):
            t = time.perf_counter()
            p = subprocess.run([CLI, "history", f"--db={db}", *args], capture_output=True, text=True)
            dt = time.perf_counter() - t
            if p.returncode not in (0, 1):
                sys.exit(f"{args[0]}: {p.returncode} {p.stderr[-400:]}")
            return dt, p.stdout

        def model_of(sig):
            """The line name history gives a signature: its hwdb model, or itself."""
            p = subprocess.run([CLI, "hwdb", "lookup", sig], capture_output=True, text=True)
            for line in p.stdout.splitlines():
                if line.strip().startswith("matched") and " = " in line:
                    return line.split(" = ", 1)[1].split()[0]
            return sig
        names = {model_of(m): m for m in MODELS}

        def judge(out):
            """Generated steps found: exact at the commit, noisy within one."""
            doc = json.loads(out)
            order = ["%040x" % random.Random(i).getrandbits(160) for i in range(COMMITS)]
            index = {c: i for i, c in enumerate(order)}
            found = {}
            for ch in doc["changes"]:
                c = int(ch["case"].rsplit("case", 1)[1])
                e = events.index(ch["event"])
                found.setdefault((names.get(ch["cpu_model"], ch["cpu_model"]), c, e), []).append(index[ch["commit"]])
            hit = miss = extra = 0
            for key, (steps, _) in truth.items():
                got = list(found.get(key, []))
                for s in steps:
                    near = [g for g in got if abs(g - s) <= (1 if key[1] % 2 else 0)]
                    if near:
                        hit += 1
                        got.remove(near[0])
                    else:
                        miss += 1
                extra += len(got)
            return hit, miss, extra

        rows = []
        try:
            cluster = pgcluster.Cluster(fsync=True)
            with cluster as pg:
                uri = pg.uri()
                a = add(uri)
                c, out = timed(uri, "changes", "--json")
                r, _ = timed(uri, "report", f"--html={os.path.join(d, 'pg-report')}")
                rows.append(("PostgreSQL 15", a, c, r, judge(out)))
                if KEEP:
                    subprocess.run([os.path.join(pg.bin, "pg_dump"), "-h", pg.dir, "-U", "pmcheck", "-Fc",
                                    "-f", os.path.join(KEEP, "pg.dump"), "pmcheck"], check=True)
        except pgcluster.Unavailable as e:
            print(f"PostgreSQL: {e}")
        lite = os.path.join(KEEP or d, "h.sqlite")
        a = add(lite)
        c, out = timed(lite, "changes", "--json")
        r, _ = timed(lite, "report", f"--html={os.path.join(d, 'lite-report')}")
        rows.append(("SQLite", a, c, r, judge(out)))
        page = os.path.getsize(os.path.join(d, "lite-report", "index.html"))
        print(f"\n{MACHINES} machines x {COMMITS} commits x {CASES * 4} series = {n} files, "
              f"{WRITERS} writers; report page {page / 1e6:.1f} MB\n")
        print("| store | add | files/s | changes | report | steps found | missed | extra |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for name, a, c, r, (hit, miss, extra) in rows:
            print(f"| {name} | {a:.1f} s | {n / a:.0f} | {c:.2f} s | {r:.2f} s | {hit} | {miss} | {extra} |")


main()
