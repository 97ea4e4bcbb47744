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


# ---- issue 59: hwdb files read in a run as strictly as by `hwdb check` -------------------------
# Each broken hwdb goes through the run (the gate selftest's budgeted case)
# and `pmcheck hwdb check`: both exit 2 naming the path and what is wrong,
# never "hwdb OK" or a case that passes unbudgeted; no secret of a linked
# file and no control character of a line reaches the output.

GOOD_BUDGETS = "[budgeted]\nwork = calls:gate_step = 20\nwork = task-clock <= 100000000000\n"
SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY"


def nobody():
    """The argv prefix that runs a command as nobody, or None with why not."""
    if os.geteuid() != 0:
        return None, "not root: cannot run as nobody"
    for tool in ("/usr/bin/setpriv", "/bin/setpriv"):
        if os.path.exists(tool):
            return [tool, "--reuid=nobody", "--regid=nogroup", "--clear-groups"], ""
    return None, "no setpriv to run as nobody"


def hwdb_rows():
    top = tempfile.mkdtemp(prefix="pmcheck-doors-hwdb-")
    os.chmod(top, 0o755)  # nobody's rows reach their hwdb through it
    try:
        hwdb_rows_in(top)
    finally:
        subprocess.run(["chmod", "-R", "u+rwX", "--", top], check=False)
        subprocess.run(["rm", "-rf", "--", top], check=False)


def hwdb_rows_in(top):
    as_nobody, why_not = nobody()
    n = ok = skipped = 0

    def tree(name, budgets=GOOD_BUDGETS):
        hw = os.path.join(top, name)
        os.makedirs(os.path.join(hw, "budgets", "any"))
        f = os.path.join(hw, "budgets", "any", "gate.ini")
        if budgets is not None:
            with open(f, "w") as h:
                h.write(budgets)
        return hw, f

    def row(what, argv, words, env=None, user=None, forbidden=()):
        nonlocal n, ok
        before = snapshot(top)
        full = (user or []) + argv
        t0 = time.monotonic()
        p = subprocess.run(full, cwd=top, capture_output=True, timeout=60,
                           env=dict(os.environ, **(env or {})))
        took = time.monotonic() - t0
        out = (p.stdout + p.stderr).decode("utf-8", "replace")
        bad = [w for w in words if w not in out]
        leaked = [w for w in forbidden if w.encode() in p.stdout + p.stderr]
        good_row = (p.returncode == 2 and not bad and not leaked and took < 30 and
                    snapshot(top) == before and b"\x1b" not in p.stdout + p.stderr and
                    b"\x07" not in p.stdout + p.stderr and "hwdb OK" not in out)
        n += 1
        ok += good_row
        check(good_row, f"{what}: exit {p.returncode} (want 2) in {took:.1f} s; missing {bad}; leaked {leaked}; "
                        f"output: {out.strip()[-500:]!r}")

    def both(what, hw, words, env=None, user=None, forbidden=()):
        hwarg = [] if env else ["--hwdb=" + hw]
        row(f"run: {what}", [RUNNER, "--filter=gate.budgeted"] + hwarg, words, env, user, forbidden)
        row(f"hwdb check: {what}", [CLI, "hwdb", "check"] + hwarg, words, env, user, forbidden)

    # The good tree passes both: what the rows below break is all that differs.
    hw, f = tree("good")
    p = subprocess.run([RUNNER, "--filter=gate.budgeted", "--hwdb=" + hw], capture_output=True, timeout=60)
    check(p.returncode == 0, f"the good hwdb passes the run: {p.returncode} {p.stdout[-400:]}")
    p = subprocess.run([CLI, "hwdb", "check", "--hwdb=" + hw], capture_output=True, timeout=60)
    check(p.returncode == 0, f"the good hwdb passes check: {p.returncode} {p.stderr[-400:]}")

    # Files that are not regular, readable files.
    for what, make, words in [
            ("a budget file linked to /dev/zero", lambda f: os.symlink("/dev/zero", f), ["character device"]),
            ("a budget file that is a FIFO", lambda f: os.mkfifo(f), ["a FIFO"]),
            ("a budget file linked to /dev/null", lambda f: os.symlink("/dev/null", f), ["character device"]),
            ("a budget link to nothing", lambda f: os.symlink("nothing.ini", f), ["link to nothing"]),
            ("a budget link in a loop", lambda f: os.symlink("gate.ini", f), ["link in a loop"]),
            ("a budget file that is a directory", lambda f: os.mkdir(f), ["a directory"])]:
        hw, f = tree(what.replace(" ", "-").replace("/", "_"), None)
        make(f)
        both(what, hw, [f, words[0]])
    # Directories and files nobody may read, read as nobody.
    for what, rel, run_too in [("an hwdb directory of mode 000", "", True),
                               ("a budgets/ directory of mode 000", "budgets", True),
                               ("a key directory of mode 000", "budgets/any", False),
                               ("a budget file of mode 000", "budgets/any/gate.ini", False)]:
        hw, f = tree(what.replace(" ", "-").replace("/", "_"))
        target = os.path.join(hw, rel) if rel else hw
        if as_nobody is None:
            skipped += 2
            print(f"SKIP {what}: {why_not}")
            continue
        os.chmod(target, 0o000)
        try:
            words = [target.rstrip("/"), "Permission denied"]
            if run_too:
                row(f"run as nobody: {what}", [RUNNER, "--filter=gate.budgeted", "--hwdb=" + hw], words,
                    user=as_nobody)
            else:
                # As nobody the case cannot count calls: (uprobes need
                # root), so it skips before any budget is looked up.
                skipped += 1
                print(f"SKIP run as nobody: {what}: the case skips (no uprobes as nobody) before its lookup")
            row(f"hwdb check as nobody: {what}", [CLI, "hwdb", "check", "--hwdb=" + hw], words, user=as_nobody)
        finally:
            os.chmod(target, 0o755 if os.path.isdir(target) else 0o644)
    # Directories that are not an hwdb at all.
    for d in ("/", "/proc/self"):
        both(f"PMCHECK_HWDB={d}", d, [f'"{d}"', "not an hwdb directory", "map.ini"], env={"PMCHECK_HWDB": d})
    # A budget file linked to a credentials file: file and line, never the values.
    creds = os.path.join(top, "aws-credentials")
    with open(creds, "w") as h:
        h.write(f"[budgeted]\naws_secret_access_key = {SECRET}\nwork = {SECRET}x {SECRET}y\n")
    hw, f = tree("credentials", None)
    os.symlink(creds, f)
    both("a budget file linked to a credentials file", hw, [f + ":2", "aws_secret_access_key"],
         forbidden=[SECRET])
    # Lines whose names carry control characters: shown escaped.
    hw, f = tree("control", GOOD_BUDGETS + "[bud\x1b[2Jgeted\x07]\nwork = calls:gate_step = 20\n"
                 "[budgeted]\nwo\x1b[2Jrk = calls:gate_step = 20\n")
    both("names with control characters", hw, [f + ":5", "bud\\x1b[2Jgeted\\x07"])
    # One rule for a library named twice.
    hw, f = tree("libraries", GOOD_BUDGETS + "library:libc.so.6 = build-id:aa\nlibrary:libc.so.6 = build-id:aa\n")
    both("a library line given twice", hw, [f + ":5", "library:libc.so.6 is given twice", "line 4"])
    # Bounds no count can meet or that a double would round.
    for what, bound, words in [
            ("a bound past 2^64", "<= 18446744073709551616", ["larger than any count"]),
            ("a bound past 2^53", "= 9007199254740993", ["larger than any count"]),
            ("a tolerance of 100000%", "20 +-100000%", ["above 100%"]),
            ("a fraction a double rounds to 16", "= 15.9999999999999999999", ["15 significant digits"])]:
        hw, f = tree(what.replace(" ", "-").replace("^", "_"),
                     "[budgeted]\nwork = task-clock <= 100000000000\nwork = calls:gate_step " + bound + "\n")
        both(what, hw, [f + ":3", "[budgeted] work"] + words)
    # Lines over 512 bytes: the reason is not cut off.
    hw, f = tree("long-bound", "[budgeted]\nwork = task-clock <= 100000000000\nwork = calls:gate_step <= 20 "
                 + "x" * 700 + "\n")
    both("a bound line of 730 bytes", hw, [f + ":3", "trailing text"])
    hw, f = tree("long-name", GOOD_BUDGETS + "r" * 700 + " = calls:gate_step <= 20\n")
    both("a region name of 700 bytes", hw, [f + ":4", "(700 bytes)", "200 bytes or longer"])
    print(f"{n} broken hwdb trees through the run and hwdb check, {ok} refused, {skipped} skipped")


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
    hwdb_rows()
finish()
