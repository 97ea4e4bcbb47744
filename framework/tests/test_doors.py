#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile input through every door of the runner, `pmcheck stat`, `events`,
`hwdb lookup/check/merge`, `results` and `compare` (issue 45), as a table of
input class x door.  Each row asserts four things: the exit status; a
message naming the input (its control characters escaped, a long one by
its start); no file created or changed in the working directory or the
hwdb target; no control character of the input on the terminal.

usage: test_doors.py PMCHECK RUNNER"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

CLI, RUNNER = sys.argv[1:3]

# Input classes: a value a user or a script could pass by mistake or malice.
CLASSES = {
    "control": b"a\x1b[2Jb",
    "empty": b"",
    "long": b"x" * 5000,
    "nbsp": "a\u00a0b".encode(),
    "bad-utf8": b"a\xffb",
    "newline": b"a\nforged line",
}
# Paths, for the doors that read a file.
PATHS = {
    "missing": b"missing/none.json",
    "directory": b"adir",
    "control": b"no\x1bsuch.json",
    "not-json": b"garbage.json",
    "empty-file": b"empty.json",
    "fifo-like": b"/dev/null",
}


def escaped(v):
    """How a message quotes v: control characters as C escapes."""
    out = []
    for c in v.decode("utf-8", "replace"):
        if c == "\n":
            out.append("\\n")
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append("\\x%02x" % ord(c))
        else:
            out.append(c)
    return "".join(out)


def snapshot(top):
    seen = {}
    for root, dirs, files in os.walk(top):
        for n in dirs + files:
            p = os.path.join(root, n)
            st = os.lstat(p)
            seen[os.path.relpath(p, top)] = (st.st_size, st.st_mtime_ns)
    return seen


def named(err, value, option):
    """The message names the input: all of it, its start, or (empty) the option."""
    if not value:
        return option in err or '""' in err
    want = escaped(value[:40])
    return want in err or want.replace("\ufffd", "") in err or (
        b"\xff" in value and (escaped(value[:1]) in err and option in err))


# Doors that take a string: (door, argv for value v, exit status, the option named).
def string_doors(good):
    return [
        ("runner --repeat", lambda v: [RUNNER, b"--repeat=" + v], 64, "--repeat"),
        ("runner --timeout", lambda v: [RUNNER, b"--timeout=" + v], 64, "--timeout"),
        ("runner --backend", lambda v: [RUNNER, b"--backend=" + v], 64, "--backend"),
        ("runner --color", lambda v: [RUNNER, b"--color=" + v], 64, "--color"),
        ("runner --calibrate", lambda v: [RUNNER, b"--calibrate=" + v, b"--hwdb=h"], 64, "--calibrate"),
        ("runner --tolerance=EVENT=", lambda v: [RUNNER, b"--baseline=" + good, b"--tolerance=" + v + b"=5"], 64,
         "--tolerance"),
        ("runner --tolerance", lambda v: [RUNNER, b"--baseline=" + good, b"--tolerance=" + v], 64, "--tolerance"),
        ("stat -e", lambda v: [CLI, b"stat", b"-e", v, b"--", b"/bin/true"], 64, "-e"),
        ("stat --repeat", lambda v: [CLI, b"stat", b"--repeat=" + v, b"--", b"/bin/true"], 64, "--repeat"),
        ("stat --backend", lambda v: [CLI, b"stat", b"--backend=" + v, b"--", b"/bin/true"], 64, "--backend"),
        ("events", lambda v: [CLI, b"events", v], 1, "event"),
        ("hwdb lookup", lambda v: [CLI, b"hwdb", b"lookup", v], 64, "lookup"),
        ("hwdb merge --tolerance", lambda v: [CLI, b"hwdb", b"merge", b"--hwdb=out", b"--tolerance=" + v, good], 64,
         "--tolerance"),
        ("compare --tolerance", lambda v: [CLI, b"compare", good, good, b"--tolerance=" + v], 64, "--tolerance"),
        # No case of the file is named like a hostile value: an error that
        # names it; an empty one is a usage error (cli.doors' empty row).
        ("compare --filter", lambda v: [CLI, b"compare", good, good, b"--filter=" + v], None,
         "--filter"),
    ]


# Doors that read a file: (door, argv for path p, exit status).
def file_doors(good):
    return [
        ("results", lambda p: [CLI, b"results", p], 2),
        ("compare", lambda p: [CLI, b"compare", good, p], 2),
        ("runner --baseline", lambda p: [RUNNER, b"--filter=gate.baseline_only", b"--baseline=" + p], 2),
        ("hwdb merge FILE", lambda p: [CLI, b"hwdb", b"merge", b"--hwdb=out/new", p], 2),
        ("hwdb merge FILE (existing target)", lambda p: [CLI, b"hwdb", b"merge", b"--hwdb=out", p], 2),
        ("hwdb check --hwdb", lambda p: [CLI, b"hwdb", b"check", b"--hwdb=" + p], 2),
    ]


def run_row(d, what, argv, status, value, option):
    before = snapshot(d)
    p = subprocess.run(argv, cwd=d, capture_output=True, timeout=60)
    after = snapshot(d)
    out, err = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    ok = (p.returncode == status and named(err, value, option) and before == after and
          b"\x1b" not in p.stdout + p.stderr and b"\nforged line" not in p.stdout + p.stderr)
    check(ok, f"{what} {escaped(value[:60])!r}: exit {p.returncode} (want {status}); "
              f"changed {sorted(set(after.items()) ^ set(before.items()))[:4]}; stderr: {err.strip()[:300]!r}"
              f"{' stdout: ' + out.strip()[:200] if p.returncode != status else ''}")
    return ok


# ---- issue 59: results that contradict themselves, and their size ----------------------------
# Each file goes through every reader of results (results, compare, history
# add, hwdb merge): refused (exit 2), the file and what is wrong named,
# nothing created; a huge file refused unread, in well under a second.

def results_variants(good):
    """(name, text, words the message must hold) from a good results file."""
    text = open(good).read()
    doc = json.loads(text)
    st = doc["cases"][0]["regions"][0]["events"]
    ev = next(iter(st))
    out = []
    compact = json.dumps(doc)
    out.append(("a key twice (verdict)", compact.replace('"verdict": "PASS"', '"verdict": "PASS", "verdict": "FAIL"', 1),
                ['"verdict"', "twice"]))
    out.append(("a second cases list", compact[:-1] + ', "cases": []}', ['"cases"', "twice"]))
    two = json.loads(compact)
    two["cases"].append(json.loads(json.dumps(two["cases"][0])))
    out.append(("the same case twice", json.dumps(two), ["cases[0]", "cases[1]", doc["cases"][0]["name"]]))
    low = json.loads(compact)
    low["cases"][0]["regions"][0]["events"][ev]["min"] = 0
    low["cases"][0]["regions"][0]["events"][ev]["median"] = min(st[ev]["values"])
    out.append(("a min below every value", json.dumps(low), [".min: 0", "smallest"]))
    high = json.loads(compact)
    high["cases"][0]["regions"][0]["events"][ev]["max"] = max(st[ev]["values"]) + 1000
    out.append(("a max above every value", json.dumps(high), [".max:", "largest"]))
    return out


def results_rows(d, good):
    work = os.path.join(d, "r59")
    os.mkdir(work)
    doors = [
        ("results", lambda f: [CLI, "results", f]),
        ("compare", lambda f: [CLI, "compare", good, f]),
        ("history add", lambda f: [CLI, "history", "--db=" + os.path.join(work, "h.sqlite"), "add", f]),
        ("hwdb merge", lambda f: [CLI, "hwdb", "merge", "--hwdb=" + os.path.join(work, "hw"), f]),
    ]
    files = []
    for i, (what, text, words) in enumerate(results_variants(good)):
        f = os.path.join(work, f"v{i}.json")
        open(f, "w").write(text)
        files.append((what, f, words))
    big = os.path.join(work, "big.json")
    with open(big, "wb") as h:
        h.truncate(500 << 20)  # sparse: 500 MB of NUL bytes, none on disk
    files.append(("a 500 MB file", big, ["524288000 bytes", "256 MiB"]))
    n = ok = 0
    for what, f, words in files:
        for door, argv in doors:
            before = snapshot(work)
            t0 = time.monotonic()
            p = subprocess.run(argv(f), cwd=work, capture_output=True, timeout=60, text=True)
            took = time.monotonic() - t0
            good_row = (p.returncode == 2 and os.path.basename(f) in p.stderr and
                        all(w in p.stderr for w in words) and snapshot(work) == before and
                        (f != big or took < 1.0))
            n += 1
            ok += good_row
            check(good_row, f"{door} of {what}: exit {p.returncode} (want 2) in {took:.2f} s; "
                            f"stderr: {p.stderr.strip()[:400]!r}")
    # What is consistent still reads: the good file through the same doors.
    p = subprocess.run([CLI, "results", good], cwd=work, capture_output=True, timeout=60, text=True)
    check(p.returncode in (0, 1), f"results of the good file: {p.returncode} {p.stderr[:300]}")
    print(f"{n} self-contradicting or oversized results files through {len(doors)} readers, {ok} refused")


with tempfile.TemporaryDirectory() as d:
    good = os.path.join(d, "good.json")
    p = subprocess.run([RUNNER, "--filter=gate.baseline_only", f"--json={good}"], capture_output=True,
                       timeout=60)
    check(p.returncode == 0 and os.path.exists(good), f"a good results file: {p.stderr}")
    os.mkdir(os.path.join(d, "adir"))
    os.mkdir(os.path.join(d, "out"))
    open(os.path.join(d, "garbage.json"), "w").write("{ \"schema\": ")
    open(os.path.join(d, "empty.json"), "w").close()
    rows = passed = 0
    for door, argv, status, option in string_doors(good.encode()):
        for cls, value in CLASSES.items():
            rows += 1
            # status None: 64 for an empty value, 2 for any other
            want = status if status is not None else (64 if not value else 2)
            passed += run_row(d, f"{door} [{cls}]", argv(value), want, value, option)
    for door, argv, status in file_doors(good.encode()):
        for cls, path in PATHS.items():
            # An empty directory is an empty hwdb: not hostile here.  (A
            # results directory with no file in it is an error: exit 2.)
            if cls == "directory" and door == "hwdb check --hwdb":
                continue
            rows += 1
            passed += run_row(d, f"{door} [{cls}]", argv(path), status, path, "")
    # A sim-only flag without --backend=sim would do nothing: refused.
    for flag in ("--sim-full", "--sim-engine=pmcheck", "--exact-layout"):
        rows += 1
        passed += run_row(d, f"runner {flag} without --backend=sim", [RUNNER, flag.encode()], 64,
                          flag.split("=")[0].encode(), "")
        p = subprocess.run([RUNNER, "--backend=sim", flag, "--list"], cwd=d, capture_output=True, timeout=60)
        check(p.returncode == 0, f"{flag} with --backend=sim is taken: {p.returncode} {p.stderr[-300:]}")
    print(f"{rows} hostile inputs through {len(string_doors(b'')) + len(file_doors(b''))} doors, "
          f"{passed} refused as they should be")
    results_rows(d, good)
finish()
