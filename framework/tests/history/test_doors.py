#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile input through every door of the history store, as a table: input
class x command (history add, show, changes, report, hwdb merge
--from-history), on SQLite and on PostgreSQL (a throw-away cluster,
pgcluster.py; that half is skipped, with its reason, where there is no
server).  Each row asserts four things: the exit status, a message naming
the input, no file created or changed (and on PostgreSQL no schema made),
and no password printed.

Then the faults: a full disk in the middle of an add (RLIMIT_FSIZE) and a
server stopped in the middle of one are each one message and a stop, exit
2, and the store holds whole files only."""
import glob
import hashlib
import json
import os
import re
import resource
import shutil
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
SECRET = pgcluster.PASSWORD
CASE = "pass.two_regions"


def run(args, env=None):
    e = dict(os.environ, PMCHECK_HISTORY_DB="")
    e.update(env or {})
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120, env=e)


def tree(root):
    """Every file under ROOT with its size and digest: what a door must not change."""
    out = {}
    for dirpath, dirs, names in os.walk(root):
        for n in dirs + names:
            p = os.path.join(dirpath, n)
            if os.path.isfile(p) and not os.path.islink(p):
                with open(p, "rb") as f:
                    out[os.path.relpath(p, root)] = hashlib.sha1(f.read()).hexdigest()
            elif not os.path.isfile(p):
                out[os.path.relpath(p, root)] = "special" if not os.path.isdir(p) else "dir"
    return out


def make_files(d):
    real = os.path.join(d, "real.json")
    p = subprocess.run([SUITE, f"--filter={CASE}", f"--json={real}"], capture_output=True, text=True,
                       timeout=120)
    check(p.returncode == 0, f"a real run: {p.returncode} {p.stdout}")
    with open(real) as f:
        doc = json.load(f)
    os.unlink(real)
    good = os.path.join(d, "good")
    os.mkdir(good)
    for i in range(40):
        doc["environment"]["date"] = "2026-02-01T00:%02d:00Z" % i
        doc["environment"]["git_commit"] = "%040x" % (i + 1)
        with open(os.path.join(good, "r-%02d.json" % i), "w") as f:
            json.dump(doc, f)
    return good


def row(label, args, status, names, work, pg=None, env=None, secret=SECRET):
    """One row of the table: run ARGS, then the four checks."""
    before = tree(work)
    pg_before = pg_state(pg) if pg else None
    p = run(args, env)
    out = p.stdout + p.stderr
    check(p.returncode == status, f"{label}: exit {p.returncode}, expected {status}: {out.strip()[:600]}")
    for n in names:
        check(n in out, f"{label}: the message names {n!r}: {out.strip()[:600]}")
    check(secret not in out, f"{label}: the password is printed: {out.strip()[:600]}")
    after = tree(work)
    if status:
        check(after == before, f"{label}: files created or changed: "
              f"{sorted(set(after.items()) ^ set(before.items()))[:6]}")
    if pg and status:
        check(pg_state(pg) == pg_before, f"{label}: the PostgreSQL store changed: {pg_before} -> {pg_state(pg)}")
    # Nothing the command wrote holds the password either.
    for path, digest in after.items():
        full = os.path.join(work, path)
        if digest not in ("dir", "special") and path not in before:
            with open(full, "rb") as f:
                check(SECRET.encode() not in f.read(), f"{label}: {path} holds the password")
    return p


def pg_state(pg):
    return pg.psql("SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database", db="postgres") + "|" + \
        pg.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'pmcheck'") + "|" + \
        pg.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'pmcheck'", db="bare") + "|" + \
        (pg.psql("SELECT (SELECT count(*) FROM pmcheck.files), (SELECT count(*) FROM pmcheck.figures)")
         if pg.psql("SELECT count(*) FROM pg_namespace WHERE nspname = 'pmcheck'") == "1" else "-")


def doors(store, work, out_dir):
    """The reading doors of a store, each with the words it must print."""
    html = os.path.join(out_dir, "page")
    hw = os.path.join(out_dir, "hwdb")
    return [
        ("show", ["history", f"--db={store}", "show", CASE]),
        ("changes", ["history", f"--db={store}", "changes"]),
        ("changes CASE", ["history", f"--db={store}", "changes", CASE]),
        ("report", ["history", f"--db={store}", "report", f"--html={html}"]),
        ("hwdb merge", ["hwdb", f"--hwdb={hw}", "merge", f"--from-history={store}"]),
    ]


def selections(store, work, label, pg=None):
    """Selections on a whole store: that do not parse (64), that match nothing (1)."""
    for what, args, status, names in [
            ("an event that does not parse", ["changes", CASE, "instructions:uu"], 64, ["instructions:uu"]),
            ("an event list", ["show", CASE, "instructions:u,cycles"], 64, ["one event"]),
            ("an empty case", ["show", ""], 64, ["empty"]),
            ("a control character", ["show", "pass\x01x"], 64, ["control character"]),
            ("a case that is not there", ["show", "pass.two_regionz"], 1, ["no such series", "pass.two_regionz", CASE]),
            ("a case that is not there (changes)", ["changes", "pass.nothing"], 1, ["no such series", "pass.nothing"]),
            ("an event that is not there", ["changes", CASE, "instructions:k"], 1, ["no such series", "instructions:k"]),
            ("--since of no commit", ["changes", "--since=abcdef"], 64, ["abcdef"]),
    ]:
        row(f"{label}: {what}", ["history", f"--db={store}", *args], status, names, work, pg)


def sqlite_half(d, good):
    work = os.path.join(d, "lite")
    os.mkdir(work)
    store = os.path.join(work, "h.sqlite")
    p = run(["history", f"--db={store}", "add", good])
    check(p.returncode == 0 and "40 results file(s) added" in p.stdout, f"the store: {p.returncode} {p.stderr}")
    out = os.path.join(work, "out")
    empty = os.path.join(work, "empty.sqlite")
    open(empty, "w").close()
    foreign = os.path.join(work, "foreign.sqlite")
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE runs (x)")
    con.commit()
    con.close()
    text = os.path.join(work, "notes.txt")
    with open(text, "w") as f:
        f.write("not a database, " * 400)
    damaged = os.path.join(work, "damaged.sqlite")
    shutil.copy(store, damaged)
    with open(damaged, "r+b") as f:  # pages 3.. overwritten, the header kept
        size = os.path.getsize(damaged)
        f.seek(2 * 4096)
        f.write(b"\xa5" * min(8 * 4096, size - 2 * 4096))
    stores = [
        ("a missing store", os.path.join(work, "typo.sqlite"), 2, ["typo.sqlite", "no such history store"]),
        ("an empty file", empty, 2, ["empty.sqlite", "empty"]),
        ("a foreign SQLite file", foreign, 2, ["foreign.sqlite", "not a pmcheck history"]),
        ("a file that is not SQLite", text, 2, ["notes.txt"]),
        ("a damaged store", damaged, 2, ["damaged.sqlite", "damaged"]),
        ("an empty --db=", "", 64, ["--db"]),
        ("an upper-case URI with a password", f"POSTGRESQL://secret:{SECRET}@/x?host={work}/nowhere", 2,
         ["postgresql://secret@/x", "cannot connect"]),
        ("a keyword string with a password", f"host={work}/nowhere password={SECRET} dbname=x", 2,
         ["host=", "dbname=x", "cannot connect"]),
        ("an unescaped @ in the password", f"postgresql://secret:ab@{SECRET}@/x?host={work}", 64,
         ["percent-encode"]),
        ("a password in the query", f"postgresql://secret@/x?host={work}/nowhere&password={SECRET}", 2,
         ["postgresql://secret@/x?host=", "cannot connect"]),
    ]
    os.mkdir(out)
    for what, target, status, names in stores:
        for door, args in doors(target, work, out):
            if door == "hwdb merge" and not target:
                continue  # an empty --from-history= is the default store
            row(f"SQLite: {what}: {door}", args, status, names, work)
    # add refuses a damaged store, and writes nothing to it.
    row("SQLite: a damaged store: add", ["history", f"--db={damaged}", "add", good], 2,
        ["damaged.sqlite", "damaged", "nothing was added"], work)
    # A digest index out of step with its rows (every page whole, so
    # quick_check passes) would let add file the same results twice: add
    # refuses it; reading it is still allowed (reads never use the index
    # to decide what to write).
    index = os.path.join(work, "index.sqlite")
    shutil.copy(store, index)
    con = sqlite3.connect(index)
    con.execute("CREATE TABLE spare (digest TEXT)")
    con.execute("CREATE INDEX spare_digest ON spare (digest)")
    # As many entries as the files' index: SQLite counts each index's
    # entries in quick_check since 3.4x (Debian 13's 3.46 does, 12's 3.40
    # does not), but never compares them with the rows.
    files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    con.executemany("INSERT INTO spare VALUES (?)", [(f"spare-{i:06d}",) for i in range(files)])
    con.commit()
    a = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_files_1'").fetchone()[0]
    b = con.execute("SELECT rootpage FROM sqlite_master WHERE name = 'spare_digest'").fetchone()[0]
    con.execute("PRAGMA writable_schema = ON")
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'sqlite_autoindex_files_1'", (b,))
    con.execute("UPDATE sqlite_master SET rootpage = ? WHERE name = 'spare_digest'", (a,))
    con.commit()
    con.close()
    con = sqlite3.connect(index)
    quick = con.execute("PRAGMA quick_check").fetchone()[0]
    con.close()
    check(quick == "ok", f"the index damage is one quick_check cannot see: {quick}")
    p = row("SQLite: a damaged digest index: add", ["history", f"--db={index}", "add", good], 2,
            ["index.sqlite", "damaged", "nothing was added"], work)
    # The two indexes hold each other's entries: the message names either
    # (SQLite's integrity_check says first whichever table it reads first).
    check(re.search(r"\b(sqlite_autoindex_files_1|spare_digest)\b", p.stderr + p.stdout),
          f"a damaged digest index: the message names a damaged index: {(p.stdout + p.stderr).strip()[:600]}")
    selections(store, work, "SQLite")
    # Files: only regular files are read, never waited on; an empty input says so.
    inputs = os.path.join(d, "inputs")
    os.makedirs(os.path.join(inputs, "fifo"))
    os.mkfifo(os.path.join(inputs, "fifo", "a.json"))
    os.mkfifo(os.path.join(inputs, "lone.json"))
    os.makedirs(os.path.join(inputs, "empty"))
    with open(os.path.join(inputs, "bad.json"), "w") as f:
        f.write("{not json")
    new = os.path.join(work, "new.sqlite")
    for what, arg, status, names in [
            ("a directory whose *.json is a FIFO", os.path.join(inputs, "fifo"), 1, ["a.json", "FIFO", "no results files"]),
            ("a FIFO", os.path.join(inputs, "lone.json"), 2, ["lone.json", "FIFO"]),
            ("an empty directory", os.path.join(inputs, "empty"), 1, ["empty", "no results files"]),
            ("a missing file", os.path.join(inputs, "nothing.json"), 2, ["nothing.json"]),
            ("a file that is not JSON", os.path.join(inputs, "bad.json"), 2, ["bad.json", "not JSON"]),
    ]:
        row(f"SQLite: add {what}", ["history", f"--db={new}", "add", arg], status, names, work)
    p = run(["results", os.path.join(inputs, "fifo")])
    check("a.json" in p.stderr and "FIFO" in p.stderr, f"results DIR skips a FIFO: {p.returncode} {p.stderr}")
    return work


def full_disk(d, good):
    """A full disk in the middle of an add: one message, a stop, whole files."""
    work = os.path.join(d, "full")
    os.mkdir(work)
    store = os.path.join(work, "h.sqlite")
    p = run(["history", f"--db={store}", "add", os.path.join(good, "r-00.json")])
    check(p.returncode == 0, f"full disk: the store: {p.stderr}")
    limit = os.path.getsize(store) + 40 * 1024

    def small_disk():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    p = subprocess.run([CLI, "history", f"--db={store}", "add", good], capture_output=True, text=True,
                       timeout=120, preexec_fn=small_disk)
    lines = p.stderr.strip().splitlines()
    check(p.returncode == 2 and len(lines) == 1 and "not tried" in p.stderr,
          f"a full disk: one message and a stop, exit 2: {p.returncode} {lines[:4]}")
    con = sqlite3.connect(store)
    files = con.execute("SELECT count(*) FROM files").fetchone()[0]
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    figures = con.execute("SELECT count(*) FROM figures").fetchone()[0]
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    check(ok == "ok" and files == runs and figures == files * (figures // max(files, 1)) and 1 <= files < 40,
          f"a full disk: whole files only: {files} files, {runs} runs, {figures} figures, {ok}")


def pg_half(d, good):
    try:
        cluster = pgcluster.Cluster()
    except pgcluster.Unavailable as e:
        print(f"SKIP (PostgreSQL half): {e}")
        return
    work = os.path.join(d, "pg")
    os.mkdir(work)
    out = os.path.join(work, "out")
    with cluster as pg:
        pg.psql("CREATE DATABASE bare", db="postgres")
        uri = pg.uri()
        p = run(["history", f"--db={uri}", "add", good])
        check(p.returncode == 0 and "40 results file(s) added" in p.stdout, f"PG store: {p.returncode} {p.stderr}")
        sock = pg.dir
        os.mkdir(out)
        stores = [
            ("a database without the schema", pg.uri("bare"), 2, ["bare", "no pmcheck history"]),
            ("an upper-case scheme and a password", f"POSTGRESQL://secret:{SECRET}@/bare?host={sock}", 2,
             ["postgresql://secret@/bare", "no pmcheck history"]),
            ("a keyword string with a password", f"host={sock} user=secret password={SECRET} dbname=bare", 2,
             ["dbname=bare", "no pmcheck history"]),
            ("an unescaped @ in the password", f"postgresql://secret:x@{SECRET}@/pmcheck?host={sock}", 64,
             ["percent-encode"]),
            ("a wrong password", f"postgresql://secret:wrong{SECRET}@/pmcheck?host={sock}", 2,
             ["postgresql://secret@/pmcheck", "password authentication failed"]),
            ("a role without permissions", f"postgresql://secret:{SECRET}@/pmcheck?host={sock}", 2,
             ["USAGE on schema pmcheck"]),
        ]
        for what, target, status, names in stores:
            for door, args in doors(target, work, out):
                row(f"PostgreSQL: {what}: {door}", args, status, names, work, pg)
        # A role that can read but not write: add names the missing privileges.
        pg.psql("GRANT USAGE ON SCHEMA pmcheck TO secret; GRANT SELECT ON ALL TABLES IN SCHEMA pmcheck TO secret")
        with open(os.path.join(good, "r-00.json")) as f:
            doc = json.load(f)
        doc["environment"]["git_commit"] = "f" * 40
        extra = os.path.join(work, "extra.json")
        with open(extra, "w") as f:
            json.dump(doc, f)
        row("PostgreSQL: a read-only role: add", ["history", f"--db=postgresql://secret:{SECRET}@/pmcheck?host={sock}",
                                                  "add", extra], 2, ["INSERT on table pmcheck.files", "USAGE on sequence"],
            work, pg)
        selections(uri, work, "PostgreSQL", pg)
        # The server stops in the middle of an add: one message and a stop.
        many = os.path.join(work, "many")
        os.mkdir(many)
        for i in range(400):
            doc["environment"]["git_commit"] = "%040x" % (1000 + i)
            with open(os.path.join(many, "m-%03d.json" % i), "w") as f:
                json.dump(doc, f)
        adder = subprocess.Popen([CLI, "history", f"--db={uri}", "add", many], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and adder.poll() is None:
            if int(pg.psql("SELECT count(*) FROM pmcheck.files")) >= 45:
                break
            time.sleep(0.02)
        pg._as_server([os.path.join(pg.bin, "pg_ctl"), "-D", os.path.join(pg.dir, "data"), "-m", "immediate", "stop"])
        _, err = adder.communicate(timeout=120)
        lines = err.strip().splitlines()
        check(adder.returncode == 2 and len(lines) == 1 and "not tried" in err,
              f"a server stopped in an add: one message and a stop, exit 2: {adder.returncode} {lines[:4]}")


def main():
    with tempfile.TemporaryDirectory() as d:
        good = make_files(d)
        guarded(sqlite_half, d, good)
        guarded(full_disk, d, good)
        guarded(pg_half, d, good)
    finish("history.doors")


main()
