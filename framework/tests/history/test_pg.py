#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""pmcheck history on PostgreSQL, in a throw-away cluster (pgcluster.py):

- 8 writers add 120 results files at once, with overlaps, while a ninth is
  killed with SIGKILL in the middle and run again: every file once, every
  run whole;
- the same files give the same `show`, `changes` and merged budgets on
  SQLite and on PostgreSQL;
- an unreachable server, a wrong password, a store of a newer schema, a
  database whose pmcheck schema is not a history, and a file that is not
  pmcheck's each give a clear error, exit 2, and no password is printed;
- `changes --since` is a CI step: 1 after a regression, 0 after none, 64 for
  a commit the store does not hold or holds more than one of."""
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
sys.path.insert(0, HERE)
from checks import check, fail, finish, guarded  # noqa: E402,F401
import pgcluster  # noqa: E402

CLI, SUITE = sys.argv[1:3]
COMMITS = 40
FILLER = 1500
MACHINES = (("zen-a", "AuthenticAMD-25-1-1"), ("zen-b", "AuthenticAMD-25-1-1"), ("icx", "GenuineIntel-6-106-6"))



def at(stats, v):
    """Every sample of a figure v: results files are checked for
    min <= median <= max and n equal to the number of values."""
    stats.update(min=v, max=v, median=v, mean=v, values=[v] * len(stats.get("values", [v])))
    stats["n"] = len(stats["values"]) + stats.get("summarised", 0)

def hist(db, *args, env=None, **kw):
    return subprocess.run([CLI, "history", f"--db={db}", *args], capture_output=True, text=True,
                          timeout=300, env=env, **kw)


def commit(i):
    return hashlib.sha1(b"commit %d" % i).hexdigest()


def calls_at(i):
    """The exact series: 20 calls, 24 from commit 15, 22 from commit 30."""
    return 20 if i < 15 else 24 if i < 30 else 22


def make_files(d):
    real = os.path.join(d, "real.json")
    p = subprocess.run([SUITE, "--filter=gate.budgeted", f"--json={real}"], capture_output=True,
                       text=True, timeout=120)
    if "SKIP" in p.stdout and "uprobe" in p.stdout:
        print("SKIP: the gate suite's calls: event needs uprobes:", p.stdout.strip())
        sys.exit(77)
    with open(real) as f:
        base = json.load(f)
    rng = random.Random(7)
    files = []
    for i in range(COMMITS):
        for host, sig in MACHINES:
            doc = json.loads(json.dumps(base))
            env = doc["environment"]
            env["git_commit"] = commit(i)
            env["date"] = "2026-03-%02dT%02d:%02d:00Z" % (1 + i // 24, i % 24, MACHINES.index((host, sig)))
            env["hostname"] = host
            env["cpu"]["signature"] = sig
            ev = doc["cases"][0]["regions"][0]["events"]
            at(ev["calls:gate_step"], calls_at(i))
            # The noisy series: task-clock, 1% noise, 10% slower from commit 20.
            at(ev["task-clock"], int(400000 * (1.10 if i >= 20 else 1.0) * (1 + rng.gauss(0, 0.01))))
            path = os.path.join(d, "r-%02d-%s.json" % (i, host))
            with open(path, "w") as f:
                json.dump(doc, f)
            files.append(path)
    # Filler for the writer that is killed: enough files that it is still
    # adding when the kill comes, of a case of their own, a year older.
    filler = []
    for i in range(FILLER):
        doc = json.loads(json.dumps(base))
        doc["environment"]["git_commit"] = hashlib.sha1(b"filler %d" % i).hexdigest()
        doc["environment"]["date"] = "2025-01-01T%02d:%02d:%02dZ" % (i // 3600, i // 60 % 60, i % 60)
        doc["cases"][0]["name"] = "filler.case"
        if i == 0:  # one run whose counts were multiplexed: its points are partial
            for ev in doc["cases"][0]["regions"][0]["events"].values():
                ev["multiplexed"] = ev["n"]
        path = os.path.join(d, "f-%04d.json" % i)
        with open(path, "w") as f:
            json.dump(doc, f)
        filler.append(path)
    return files, filler


def counts(pg, db="pmcheck"):
    return pg.psql("SELECT (SELECT count(*) FROM pmcheck.files), (SELECT count(*) FROM pmcheck.runs),"
                   " (SELECT count(*) FROM pmcheck.figures), (SELECT count(*) FROM pmcheck.budget_checks)",
                   db=db)


def budgets(d):
    out = {}
    for root, _, names in os.walk(os.path.join(d, "budgets")):
        for n in names:
            with open(os.path.join(root, n)) as f:
                # The comment names the store; the budget lines must agree.
                out[n] = [l for l in f.read().splitlines() if not l.startswith("#")]
    return out


def main():
    try:
        cluster = pgcluster.Cluster()
    except pgcluster.Unavailable as e:
        print(f"SKIP: {e}")
        sys.exit(77)
    with tempfile.TemporaryDirectory() as d, cluster as pg:
        files, filler = make_files(d)
        victim_list = filler + list(reversed(files))
        uri = pg.uri()
        # One writer, killed in the middle of adding everything.
        victim = subprocess.Popen([CLI, "history", f"--db={uri}", "add", *victim_list],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        seen = 0
        while time.time() < deadline and victim.poll() is None:
            try:
                seen = int(pg.psql("SELECT count(*) FROM pmcheck.files"))
            except RuntimeError:
                seen = 0
            if seen >= 10:
                break
            time.sleep(0.02)
        check(victim.poll() is None, f"the victim was still adding when killed ({seen} files in)")
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        partial = counts(pg).split("|")
        check(int(partial[1]) < len(victim_list), f"killed before the end: {partial}")
        # Every run the killed writer left is whole.
        broken = pg.psql("SELECT count(*) FROM pmcheck.runs r WHERE"
                         " (SELECT count(*) FROM pmcheck.figures f WHERE f.run_id = r.id) <> 2"
                         " OR (SELECT count(*) FROM pmcheck.budget_checks b WHERE b.run_id = r.id) = 0"
                         " OR NOT EXISTS (SELECT 1 FROM pmcheck.files f WHERE f.id = r.file_id)")
        check(broken == "0" and partial[0] == partial[1], f"no half-added file after SIGKILL: {partial}, {broken} broken")
        # 8 writers at once, each 30 files, every file in two of them; the
        # victim's list again, the fourth through PMCHECK_HISTORY_DB.
        writers = []
        for w in range(8):
            chunk = files[w * 15:w * 15 + 30] + files[:max(0, w * 15 + 30 - len(files))]
            env = None
            argv = [CLI, "history", f"--db={uri}", "add", *chunk]
            if w == 3:
                env = dict(os.environ, PMCHECK_HISTORY_DB=uri)
                argv = [CLI, "history", "add", *chunk]
            writers.append(subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
        writers.append(subprocess.Popen([CLI, "history", f"--db={uri}", "add", *victim_list],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        outs = [w.communicate(timeout=300) for w in writers]
        check(all(w.returncode == 0 for w in writers),
              f"every writer succeeds: {[w.returncode for w in writers]} {[o[1][-200:] for o in outs if o[1]]}")
        added = sum(int(o[0].split(": ")[-1].split()[0]) for o in outs)
        total = len(victim_list)
        check(added + int(partial[0]) == total, f"each file added once in all: {added} + {partial[0]}")
        n = counts(pg)
        bc = int(n.split("|")[3]) // total
        check(n == f"{total}|{total}|{2 * total}|{bc * total}" and bc >= 1,
              f"nothing lost, nothing twice: files|runs|figures|budget checks = {n}")
        check(pg.psql("SELECT schema_version FROM pmcheck.meta") == "3", "schema version 3 in pmcheck.meta")

        # The same files in SQLite: the same answers.
        lite = os.path.join(d, "h.sqlite")
        p = hist(lite, "add", *victim_list)
        check(p.returncode == 0 and f"{total} results file(s) added" in p.stdout, p.stdout + p.stderr)
        shows = [hist(db, "show", "gate.budgeted") for db in (lite, uri)]
        if shows[0].stdout != shows[1].stdout:
            import difflib
            print("".join(list(difflib.unified_diff(shows[0].stdout.splitlines(True), shows[1].stdout.splitlines(True)))[:20]))
        check(shows[0].returncode == 0 and shows[0].stdout == shows[1].stdout and
              len(shows[0].stdout.splitlines()) == 2 * len(files) + 1,
              f"show: the same {len(shows[0].stdout.splitlines())} lines on both\n{shows[0].stdout[:300]}\n{shows[1].stdout[:300]}")
        ch = []
        for db in (lite, uri):
            p = hist(db, "changes", "--json")
            check(p.returncode == 0, f"changes --json on {db}: {p.returncode} {p.stderr}")
            doc = json.loads(p.stdout or "{}")
            doc.pop("store", None)
            ch.append(doc)
        check(all(c.get("partial_points_left_out") == 2 for c in ch),
              f"the multiplexed run's 2 points left out and counted: {[c.get('partial_points_left_out') for c in ch]}")
        check(ch[0] == ch[1], f"changes: the same on both\n{json.dumps(ch[0])[:600]}\n{json.dumps(ch[1])[:600]}")
        index = {commit(i): i for i in range(COMMITS)}
        got = sorted((c["cpu_model"], c["event"], index.get(c["commit"]), c["kind"], c["exact"])
                     for c in ch[0].get("changes", []))
        models = sorted({c[0] for c in got})
        want = sorted([(m, "calls:gate_step", 15, "regression", True) for m in models] +
                      [(m, "calls:gate_step", 30, "improvement", True) for m in models])
        noisy = [c for c in got if c[1] == "task-clock"]
        check(len(models) == 2 and [c for c in got if c[1] == "calls:gate_step"] == want,
              f"the exact series' changes at their commits, on both models: {got}")
        check(len(noisy) == 2 and all(c[3] == "regression" and not c[4] and abs(c[2] - 20) <= 1
                                       for c in noisy),
              f"the noisy series' step found within one commit on both models, and nothing else: {noisy}")
        # The text form, and --since as a CI step.
        p = hist(uri, "changes", "gate.budgeted", "calls:gate_step")
        check(p.returncode == 0 and "REGRESSION" in p.stdout and "exact" in p.stdout and
              "4 change point(s)" in p.stdout, f"changes CASE EVENT: {p.stdout}{p.stderr}")
        p = hist(uri, "changes", f"--since={commit(25)[:10]}")
        check(p.returncode == 0 and "2 change point(s) after" in p.stdout and "0 regression(s)" in p.stdout,
              f"--since after the regressions: exit 0, the improvements listed: {p.returncode} {p.stdout}{p.stderr}")
        p = hist(lite, "changes", "gate.budgeted", f"--since={commit(10)[:10]}")
        check(p.returncode == 1 and "REGRESSION" in p.stdout and f"after {commit(10)[:12]}" in p.stdout,
              f"--since (after the case) before a regression: exit 1: {p.returncode} {p.stdout}{p.stderr}")
        every = [commit(i) for i in range(COMMITS)] + \
            [hashlib.sha1(b"filler %d" % i).hexdigest() for i in range(FILLER)]
        shared = next(c[:2] for c in every if sum(x.startswith(c[:2]) for x in every) > 1)
        absent = next(c + "0" * 7 for c in "0123456789abcdef"
                      if not any(x.startswith(c + "0" * 7) for x in every))
        for rev, why in ((shared, "more than one"), (absent, "no")):
            p = hist(uri, "changes", f"--since={rev}")
            check(p.returncode == 64 and f"--since={rev} names {why} commit" in p.stderr,
                  f"--since={rev}: {p.returncode} {p.stderr}")
        # Merged budgets, newest commit, from either store.
        merged = []
        for i, db in enumerate((lite, uri)):
            out = os.path.join(d, f"hwdb{i}")
            p = subprocess.run([CLI, "hwdb", "merge", f"--hwdb={out}", f"--from-history={db}"],
                               capture_output=True, text=True, timeout=120)
            check(p.returncode in (0, 1) and "3 run(s)" in p.stdout, f"merge --from-history={db}: {p.returncode} {p.stdout}{p.stderr}")
            merged.append(budgets(out))
        check(merged[0] and merged[0] == merged[1], f"the same merged budgets: {merged}")

        # Errors: each names the store without a password, exit 2.
        # libpq is loaded only for a PostgreSQL store: one that cannot be
        # loaded (here a file that is no library, found first) is named,
        # with the package that brings it; SQLite needs none.
        with tempfile.TemporaryDirectory() as libdir:
            with open(os.path.join(libdir, "libpq.so.5"), "w") as f:
                f.write("not a library\n")
            env = dict(os.environ, LD_LIBRARY_PATH=libdir)
            p = hist(uri, "show", "x", env=env)
            check(p.returncode == 2 and "needs libpq, which cannot be loaded" in p.stderr and
                  "apt-get install libpq5" in p.stderr and "libpq.so.5" in p.stderr,
                  f"libpq that cannot be loaded: {p.returncode} {p.stderr}")
            # (a missing SQLite store is exit 2, and no libpq is loaded for it)
            p = hist(os.path.join(d, "lite.db"), "show", "x", env=env)
            check(p.returncode == 2 and "no such history store" in p.stderr and "libpq" not in p.stderr,
                  f"SQLite without a loadable libpq: {p.returncode} {p.stderr}")
        p = hist("postgresql://pmcheck@/pmcheck?host=/nonexistent-pmcheck-dir", "show", "x")
        check(p.returncode == 2 and "cannot connect" in p.stderr and "nonexistent-pmcheck-dir" in p.stderr,
              f"an unreachable server: {p.returncode} {p.stderr}")
        pg.psql("CREATE DATABASE secretdb OWNER secret", db="postgres")
        bad_pw = "wr0ng-pw-5e1d"
        p = hist(pg.uri("secretdb", "secret", bad_pw), "add", files[0])
        check(p.returncode == 2 and "password authentication failed" in p.stderr and
              "postgresql://secret@/secretdb" in p.stderr and bad_pw not in p.stdout + p.stderr,
              f"a wrong password: exit 2, the URI shown without it: {p.returncode} {p.stderr}")
        good = pg.uri("secretdb", "secret", pgcluster.PASSWORD)
        p = hist(good, "add", files[0])
        q = hist(good + "&password=" + pgcluster.PASSWORD, "show", "gate.budgeted")
        check(p.returncode == 0 and q.returncode == 0 and
              pgcluster.PASSWORD not in p.stdout + p.stderr + q.stdout + q.stderr and
              "postgresql://secret@/secretdb" in p.stdout,
              f"the right password: added, and never printed: {p.stdout}{p.stderr} {q.returncode} {q.stderr}")
        pg.psql("UPDATE pmcheck.meta SET schema_version = 9", db="secretdb")
        p = hist(good, "show", "gate.budgeted")
        check(p.returncode == 2 and "schema version 9, and this pmcheck knows 3" in p.stderr and
              pgcluster.PASSWORD not in p.stderr, f"a newer schema: {p.returncode} {p.stderr}")
        pg.psql("CREATE DATABASE other", db="postgres")
        pg.psql("CREATE SCHEMA pmcheck; CREATE TABLE pmcheck.t (x int)", db="other")
        p = hist(pg.uri("other"), "add", files[0])
        check(p.returncode == 2 and "not a pmcheck history" in p.stderr, f"a foreign pmcheck schema: {p.stderr}")
        foreign = os.path.join(d, "foreign.json")
        with open(foreign, "w") as f:
            json.dump({"results": [1, 2, 3]}, f)
        before = counts(pg)
        p = hist(uri, "add", files[0], foreign)
        check(p.returncode == 2 and "foreign.json" in p.stderr and counts(pg) == before,
              f"a file that is not pmcheck's: named, nothing added: {p.returncode} {p.stderr}")
        p = hist(lite, "add", foreign)
        check(p.returncode == 2 and "foreign.json" in p.stderr, f"the same on SQLite: {p.stderr}")
        con = sqlite3.connect(lite)
        check(con.execute("SELECT count(*) FROM files").fetchone()[0] == total, "SQLite: nothing of it added")
        con.close()


guarded(main)
finish("history_pg")
