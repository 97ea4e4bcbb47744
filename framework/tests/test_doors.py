#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Hostile input through every door of the runner, `pmcheck stat`, `events`,
`hwdb lookup/check/merge`, `results` and `compare` (issue 45), as a table of
input class x door.  Each row asserts four things: the exit status; a
message naming the input (its control characters escaped, a long one by
its start); no file created or changed in the working directory or the
hwdb target; no control character of the input on the terminal.

Issue 59's rows: every output option (door) x what its path is (class):
links planted at the temporary names the old writer used, a FIFO,
/dev/full, a link to a character device, a directory, a link to
/proc/self/fd/1, "-" (the standard output) and "-" on a full device, a
name of 250 bytes, a directory that does not exist, /proc/self/comm; two
outputs of one command naming one file; and
the settings that were cut or ignored: PMCHECK_FAULT_CHECKS=junk,
PMCHECK_SIM_ENV past 62 names, the loader's words in the valgrind version,
PMC_REGION_N with 0 or a negative count.

Issue 59's second campaign: the JSON files beside a budget (a FIFO held
the run), a long map pattern, names with escape sequences in compare's
reports, numbers strtod read otherwise (0x10, 1e1), PMCHECK_SIM_ENV with
an escape sequence, history stores that are no file, and results
directories no file can be written in.

usage: test_doors.py PMCHECK RUNNER SELFTEST"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

CLI, RUNNER, SELFTEST = sys.argv[1:4]

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


# Doors that write a file: (door, argv for output path o, results file g,
# marker m that the door's work would create).  `pmcheck stat` counts a
# command that makes the marker: a refusal before any work leaves none.
OUTPUT_DOORS = [
    ("stat --json", lambda o, g, m: [CLI, "stat", "--json=" + o, "--", "/bin/touch", m]),
    ("runner --json", lambda o, g, m: [RUNNER, "--filter=gate.baseline_only", "--json=" + o]),
    ("runner --junit", lambda o, g, m: [RUNNER, "--filter=gate.baseline_only", "--junit=" + o]),
    ("results --json", lambda o, g, m: [CLI, "results", g, "--json=" + o]),
    ("results --markdown", lambda o, g, m: [CLI, "results", g, "--markdown=" + o]),
    ("compare --json", lambda o, g, m: [CLI, "compare", g, g, "--json=" + o]),
    ("compare --markdown", lambda o, g, m: [CLI, "compare", g, g, "--markdown=" + o]),
    ("compare --moved-cases", lambda o, g, m: [CLI, "compare", g, g, "--moved-cases=" + o]),
]


def last_pid():
    try:
        return int(open("/proc/sys/kernel/ns_last_pid").read())
    except OSError:
        return os.getpid()


def output_row(top, door, argv_of, cls, good):
    """One door x one kind of output path; True when it held."""
    # Two equal files move no case: the list is empty.
    empty = door == "compare --moved-cases"
    d = tempfile.mkdtemp(dir=top)
    secret = os.path.join(d, "secret")
    with open(secret, "w") as f:
        f.write("secret\n")
    marker = os.path.join(d, "ran")
    out = os.path.join(d, "y.out")
    stdout = subprocess.PIPE
    planted = []
    if cls == "planted links":
        # The old writer's name, OUT.tmp.PID, for the next 200 pids (the
        # writer's pid is among them unless 200 processes started in
        # between: said below): it wrote through the link into `secret`.
        start = last_pid()
        for pid in range(start + 1, start + 201):
            planted.append(f"{out}.tmp.{pid}")
            os.symlink(secret, planted[-1])
    elif cls == "FIFO":
        out = os.path.join(d, "fifo")
        os.mkfifo(out)
    elif cls == "/dev/full":
        out = "/dev/full"
    elif cls == "link to a character device":
        out = os.path.join(d, "zero")
        os.symlink("/dev/zero", out)
    elif cls == "directory":
        out = os.path.join(d, "adir")
        os.mkdir(out)
    elif cls == "link to /proc/self/fd/1":
        out = os.path.join(d, "stdout")
        os.symlink("/proc/self/fd/1", out)
    elif cls == "a name of 250 bytes":
        # The old writer's temporary was the name and ".tmp.PID.RAND":
        # past NAME_MAX, an error after the run.
        out = os.path.join(d, "y" * 250)
    elif cls == "in a directory that does not exist":
        out = os.path.join(d, "nodir", "y.out")
    elif cls == "/proc/self/comm":
        out = "/proc/self/comm"  # a regular file in a directory no file can be made in
    elif cls in ("-", "- on /dev/full"):
        out = "-"
        if cls == "- on /dev/full":
            stdout = open("/dev/full", "wb")
    before = {n: os.lstat(os.path.join(d, n)) for n in os.listdir(d)}
    dev_before = os.stat(out) if out.startswith("/dev/") else None
    child = subprocess.Popen(argv_of(out, good, marker), cwd=d, stdout=stdout, stderr=subprocess.PIPE)
    o, e = child.communicate(timeout=60)
    p = subprocess.CompletedProcess(child.args, child.returncode, o, e)
    if planted and f"{out}.tmp.{child.pid}" not in planted:
        print(f"note: {door} [{cls}]: the writer's pid {child.pid} fell outside the planted links "
              f"{start + 1}..{start + 200}: this row would not have caught the old writer")
    if stdout is not subprocess.PIPE:
        stdout.close()
    err = p.stderr.decode("utf-8", "replace")
    after = set(os.listdir(d))
    intact = open(secret).read() == "secret\n" and all(os.path.islink(x) for x in planted)
    why = ""
    if cls in ("planted links", "new file", "a name of 250 bytes"):
        # Written, next to what was planted, through none of it, and no
        # temporary left behind.
        ok = (p.returncode == 0 and intact and os.path.isfile(out) and not os.path.islink(out) and
              (os.path.getsize(out) > 0 or empty) and after == set(before) | {os.path.basename(out)} | {"ran"} & after)
        why = f"written: {os.path.isfile(out)}, secret intact: {intact}, new names: {sorted(after - set(before))[:4]}"
    elif cls == "-":
        ok = p.returncode == 0 and (b'"schema"' in p.stdout or b"<testsuites" in p.stdout or
                                    b"|" in p.stdout or b"\n" in p.stdout) and after == set(before) | ({"ran"} & after)
        why = f"stdout {p.stdout[:80]!r}"
    elif cls == "- on /dev/full":
        # Written where asked; the full device is an error naming it.
        ok = p.returncode not in (0, 64) and "No space left" in err and ("-" in err)
        why = "a full standard output must fail"
    elif cls in ("in a directory that does not exist", "/proc/self/comm"):
        # Refused before any work (it was an error after the run), the
        # path and the fix named, nothing made.
        ok = (p.returncode == 64 and out in err and "no file can be made in its directory" in err and
              not os.path.exists(marker) and after == set(before) and not os.path.exists(os.path.join(d, "nodir")))
        why = f"work done: {os.path.exists(marker)}, new names: {sorted(after - set(before))[:4]}"
    else:
        # Refused before any work, the path and the fix named, nothing
        # replaced.
        st = os.lstat(out)
        kept = (stat.S_ISFIFO(st.st_mode) if cls == "FIFO" else
                stat.S_ISDIR(st.st_mode) if cls == "directory" else
                os.path.islink(out) if cls.startswith("link") else
                (os.stat(out).st_rdev == dev_before.st_rdev and stat.S_ISCHR(os.stat(out).st_mode)))
        ok = (p.returncode == 64 and out in err and "regular file" in err and '"-"' in err and kept and
              not os.path.exists(marker) and after == set(before))
        why = f"kept: {kept}, work done: {os.path.exists(marker)}, new names: {sorted(after - set(before))[:4]}"
    check(ok, f"{door} [{cls}]: exit {p.returncode}; {why}; stderr: {err.strip()[:300]!r}")
    shutil.rmtree(d, ignore_errors=True)
    return ok


OUTPUT_CLASSES = ["new file", "planted links", "FIFO", "/dev/full", "link to a character device", "directory",
                  "link to /proc/self/fd/1", "-", "- on /dev/full", "a name of 250 bytes",
                  "in a directory that does not exist", "/proc/self/comm"]

# Two outputs of one command naming one file: the second overwrote the
# first (a run's --json lost under its --junit).  (door, argv for the two
# names a and b, the two options, marker m that the door's work would make)
SAME_OUTPUT_DOORS = [
    ("runner --json --junit", lambda a, b, g, m: [RUNNER, "--filter=gate.baseline_only", "--json=" + a, "--junit=" + b],
     ("--json", "--junit")),
    ("runner --json --save-baseline", lambda a, b, g, m: [RUNNER, "--filter=gate.baseline_only", "--json=" + a,
                                                          "--save-baseline=" + b], ("--json", "--save-baseline")),
    ("results --json --markdown", lambda a, b, g, m: [CLI, "results", g, "--json=" + a, "--markdown=" + b],
     ("--json", "--markdown")),
    ("compare --json --moved-cases", lambda a, b, g, m: [CLI, "compare", g, g, "--json=" + a, "--moved-cases=" + b],
     ("--json", "--moved-cases")),
]


def same_output_rows(top, good):
    rows = passed = 0
    for door, argv_of, options in SAME_OUTPUT_DOORS:
        for what, a, b, existing in [("one name", "o.out", "o.out", False),
                                     ("two spellings", "o.out", "./o.out", False),
                                     ("a link to the other", "o.out", "l.out", True),
                                     ("- twice", "-", "-", False)]:
            d = tempfile.mkdtemp(dir=top)
            if existing:
                open(os.path.join(d, a), "w").write("x\n")
                os.symlink(a, os.path.join(d, b))
            before = snapshot(d)
            p = subprocess.run(argv_of(a, b, good, os.path.join(d, "ran")), cwd=d, capture_output=True, timeout=60)
            err = p.stderr.decode("utf-8", "replace")
            ok = (p.returncode == 64 and all(o in err for o in options) and "overwrite" in err and
                  snapshot(d) == before)
            rows += 1
            passed += ok
            check(ok, f"{door} [{what}]: exit {p.returncode} (want 64), changed: {snapshot(d) != before}; "
                      f"stderr: {err.strip()[:300]!r}")
            shutil.rmtree(d, ignore_errors=True)
    return rows, passed


def output_rows(top, good):
    rows = passed = 0
    for door, argv_of in OUTPUT_DOORS:
        for cls in OUTPUT_CLASSES:
            if cls == "- on /dev/full" and door == "compare --moved-cases":
                continue  # nothing to write: no error to see
            rows += 1
            passed += output_row(top, door, argv_of, cls, good)
    return rows, passed


def sim_version_row(d, env_extra):
    """The valgrind version in a sim run's results: valgrind's own words."""
    out = os.path.join(d, "sim.json")
    env = dict(os.environ, **env_extra)
    p = subprocess.run([RUNNER, "--backend=sim", "--filter=gate.baseline_only", "--json=" + out], cwd=d,
                       capture_output=True, env=env, timeout=120)
    if p.returncode == 77:
        return None  # no sim backend in this build (ASan) or machine
    try:
        v = json.load(open(out))["environment"]["sim"]["valgrind"]
    except (OSError, ValueError, KeyError) as e:
        v = repr(e)
    os.unlink(out) if os.path.exists(out) else None
    return p.returncode == 0 and v.startswith("valgrind-") and "\n" not in v and " " not in v, v


def settings_rows(d):
    rows = passed = 0
    for name, run in SETTINGS:
        r = run(d)
        if r is None:
            print(f"skip: {name}: the sim backend cannot run here (valgrind missing or an ASan build)")
            continue
        ok, why = r
        rows += 1
        passed += bool(ok)
        check(ok, f"{name}: {why}")
    return rows, passed


def fault_switch_row(argv):
    def run(d):
        env = dict(os.environ, PMCHECK_FAULT_CHECKS="breakpoint,junk")
        p = subprocess.run(argv, cwd=d, capture_output=True, env=env, timeout=60)
        err = p.stderr.decode("utf-8", "replace")
        return (p.returncode == 64 and '"junk"' in err and "breakpoint-write" in err and "sim-tool" in err,
                f"exit {p.returncode} (want 64), stderr {err.strip()[:300]!r}")
    return run


def sim_env_row(d):
    names = [f"PMCHECK_DOORS_V{i}" for i in range(100)] + ["PMCHECK_DOORS_LAST"]
    env = dict(os.environ, PMCHECK_SIM_ENV=":".join(names), **{n: "x" for n in names})
    env["PMCHECK_DOORS_LAST"] = "kept"
    p = subprocess.run([SELFTEST, "--backend=sim", "--filter=selfsim.sim_env_kept"], cwd=d, capture_output=True,
                       env=env, timeout=120)
    if p.returncode == 77:
        return None
    return p.returncode == 0, f"exit {p.returncode} (want 0): {p.stdout.decode(errors='replace')[-300:]!r}"


def region_row(case, shown):
    def run(d):
        p = subprocess.run([SELFTEST, f"--filter=error.{case}"], cwd=d, capture_output=True, timeout=60)
        out = p.stdout.decode("utf-8", "replace")
        return (p.returncode == 2 and "ERROR" in out and 'region "loop"' in out and f"count is {shown}" in out,
                f"exit {p.returncode} (want 2, ERROR naming the region): {out.strip()[-300:]!r}")
    return run


def sim_env_hostile_row(d):
    """A name with an escape sequence in a long PMCHECK_SIM_ENV: the whole
    value went to the terminal as it was."""
    env = dict(os.environ, PMCHECK_SIM_ENV="HOME:A\x1b[2JB=C:" + "X" * 5000)
    p = subprocess.run([RUNNER, "--backend=sim", "--filter=gate.baseline_only"], cwd=d, capture_output=True,
                       env=env, timeout=120)
    if p.returncode == 77:
        return None
    err = p.stderr.decode("utf-8", "replace")
    return (p.returncode == 64 and "A\\x1b[2JB=C" in err and b"\x1b" not in p.stdout + p.stderr and len(err) < 1000,
            f"exit {p.returncode} (want 64), {len(err)} bytes of stderr: {err.strip()[:300]!r}")


SETTINGS = [
    ("PMCHECK_FAULT_CHECKS=junk (stat)", fault_switch_row([CLI, "stat", "--", "/bin/true"])),
    ("PMCHECK_FAULT_CHECKS=junk (runner)", fault_switch_row([RUNNER, "--filter=gate.baseline_only"])),
    ("PMCHECK_SIM_ENV with 101 names", sim_env_row),
    ("PMCHECK_SIM_ENV with an escape sequence, 5000 bytes", sim_env_hostile_row),
    ("LD_PRELOAD=/nonexistent.so for a sim run", lambda d: sim_version_row(d, {"LD_PRELOAD": "/nonexistent.so"})),
    ("LD_DEBUG=statistics for a sim run", lambda d: sim_version_row(d, {"LD_DEBUG": "statistics"})),
    ("PMC_REGION_N(t, \"loop\", 0)", region_row("region_zero_iterations", "0")),
    ("PMC_REGION_N(t, \"loop\", -3)", region_row("region_negative_iterations", "-3")),
]
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
    # The JSON itself (jdoc.c, the reader beneath): each refusal names the
    # file, its line and byte, and what is wrong.
    env = json.dumps(doc["environment"])
    out.append(("a key twice in an object of many (environment)",
                compact.replace(env, env[:-1] + ', "date": "2026-01-01T00:00:00Z"}', 1), ['"date"', "twice", "byte"]))
    out.append(("a file cut short", compact[:len(compact) // 2], ["not JSON", ", byte "]))
    out.append(("bytes that are not UTF-8", compact.replace('"PASS"', '"PA\udcffSS"', 1).encode("utf-8", "surrogateescape"),
                ["not valid UTF-8", "0xff", ", byte "]))
    out.append(("a lone surrogate", compact.replace('"PASS"', '"PA\\ud800SS"', 1), ["surrogate", ", byte "]))
    out.append(("an integer past 64 bits", compact.replace('"warmup": 1', '"warmup": 99999999999999999999', 1),
                ["past 64 bits", ", byte "]))
    out.append(("a NUL byte after a number", compact.replace('"warmup": 1', '"warmup": 1\0', 1),
                ["byte 0x00", ", byte "]))
    out.append(("nesting past 2048", compact[:-1] + ', "deep": ' + "[" * 3000 + "]" * 3000 + "}",
                ["nested deeper than 2048"]))
    for what, text, _ in out:
        check(text != compact and text != compact.encode(), f"the variant {what!r} differs from the good file")
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
        open(f, "wb" if isinstance(text, bytes) else "w").write(text)
        files.append((what, f, words))
    big = os.path.join(work, "big.json")
    with open(big, "wb") as h:
        h.truncate(500 << 20)  # sparse: 500 MB of NUL bytes, none on disk
    files.append(("a 500 MB file", big, ["524288000 bytes", "268435456 bytes", "256 MiB", "--results-dir"]))
    # A file that grows past the limit while it is read: /proc/self/pagemap
    # is a regular file whose size says 0 while it reads as hundreds of
    # GiB (8 bytes per page of the reader's address space), as a file
    # written to after the reader took its size; the cap while reading
    # stops it at the limit, deterministically.
    if os.path.isfile("/proc/self/pagemap") and os.stat("/proc/self/pagemap").st_size == 0:
        files.append(("a file that grows past the limit while read", "/proc/self/pagemap",
                      ["grew while read to 268439552 bytes or more", "268435456 bytes", "256 MiB",
                       "--results-dir"]))
    n = ok = 0
    for what, f, words in files:
        for door, argv in doors:
            before = snapshot(work)
            t0 = time.monotonic()
            p = subprocess.run(argv(f), cwd=work, capture_output=True, timeout=60, text=True)
            took = time.monotonic() - t0
            good_row = (p.returncode == 2 and f in p.stderr and
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


# ---- issue 59, second campaign: numbers as strtod(3) reads them -------------------------------
# Each number option took what strtod takes: "0x10" was 16, "0x1p3" 8,
# "1e1" 10, " 5" 5: a mistake read as another number.  Decimal digits
# only, as hwdb budgets and ci/compare-pr's --threshold take them.
NUMBER_CLASSES = ["0x10", "0x1p3", "1e1", " 5"]


def number_doors(good):
    return [
        ("runner --timeout", lambda v: [RUNNER, "--list", "--timeout=" + v], "--timeout"),
        ("runner --calibrate-margin", lambda v: [RUNNER, "--list", "--calibrate", "--hwdb=out",
                                                 "--calibrate-margin=" + v], "--calibrate-margin"),
        ("runner --calibrate-tolerance", lambda v: [RUNNER, "--list", "--calibrate", "--hwdb=out",
                                                    "--calibrate-tolerance=" + v], "--calibrate-tolerance"),
        ("runner --tolerance", lambda v: [RUNNER, "--list", "--baseline=" + good, "--tolerance=" + v], "--tolerance"),
        ("compare --tolerance", lambda v: [CLI, "compare", good, good, "--tolerance=" + v], "--tolerance"),
        ("hwdb merge --tolerance", lambda v: [CLI, "hwdb", "merge", "--hwdb=out", "--tolerance=" + v, good],
         "--tolerance"),
        ("history changes --min-change", lambda v: [CLI, "history", "--db=h.sqlite", "changes", "--min-change=" + v],
         "--min-change"),
        ("history changes --significance", lambda v: [CLI, "history", "--db=h.sqlite", "changes",
                                                      "--significance=" + {"0x10": "0x0.8", "0x1p3": "0x1p-1", "1e1": "5e-1",
                                                                         " 5": " 0.5"}[v]],
         "--significance"),
    ]


def results_dir_rows(d):
    """--results-dir (and PMCHECK_RESULTS_DIR) where no results file can be
    written: an error after the run, exit 2; now refused before it."""
    n = ok = 0
    afile = os.path.join(d, "a-file")
    open(afile, "w").write("x\n")
    for what, value, env in [("a file", afile, False), ("a file, from PMCHECK_RESULTS_DIR", afile, True),
                             ("/proc/self", "/proc/self", False), ("/dev/full", "/dev/full", False),
                             ("empty", "", False), ("a parent that does not exist", os.path.join(d, "no", "dir"), False)]:
        before = snapshot(d)
        argv = [RUNNER, "--filter=gate.baseline_only"] + ([] if env else ["--results-dir=" + value])
        e = dict(os.environ, **({"PMCHECK_RESULTS_DIR": value} if env else {}))
        p = subprocess.run(argv, cwd=d, capture_output=True, timeout=60, text=True, env=e)
        good_row = (p.returncode == 64 and "--results-dir" in p.stderr and escaped(value.encode()) in p.stderr and
                    "PASS" not in p.stdout and snapshot(d) == before)
        n += 1
        ok += good_row
        check(good_row, f"--results-dir {what}: exit {p.returncode} (want 64, before any case); "
                        f"stderr {p.stderr.strip()[:300]!r}")
    os.unlink(afile)
    print(f"{n} results directories no file can be written in, {ok} refused before the run")


def history_store_rows(d, good):
    """history add --db= a FIFO, a link to /dev/zero, a directory: SQLite
    said "disk I/O error"; the store named, with what it is."""
    n = ok = 0
    for what, make, word in [("a FIFO", os.mkfifo, "a FIFO"),
                             ("a link to /dev/zero", lambda p: os.symlink("/dev/zero", p), "a character device"),
                             ("a directory", os.mkdir, "a directory")]:
        store = os.path.join(d, "store")
        make(store)
        before = snapshot(d)
        p = subprocess.run([CLI, "history", "--db=" + store, "add", good], cwd=d, capture_output=True, timeout=30,
                           text=True)
        good_row = (p.returncode == 2 and store in p.stderr and word in p.stderr and "not a regular file" in p.stderr
                    and snapshot(d) == before)
        n += 1
        ok += good_row
        check(good_row, f"history add --db= {what}: exit {p.returncode} (want 2); stderr {p.stderr.strip()[:300]!r}")
        (os.rmdir if os.path.isdir(store) and not os.path.islink(store) else os.unlink)(store)
    print(f"{n} history stores that are no file, {ok} refused naming what they are")


def number_rows(d, good):
    n = ok = 0
    for door, argv, option in number_doors(good):
        for v in NUMBER_CLASSES:
            before = snapshot(d)
            p = subprocess.run(argv(v), cwd=d, capture_output=True, timeout=60, text=True)
            good_row = p.returncode == 64 and option in p.stderr and snapshot(d) == before
            n += 1
            ok += good_row
            check(good_row, f"{door} {v!r}: exit {p.returncode} (want 64); stderr {p.stderr.strip()[:300]!r}")
    # A count is whole: --permutations=2.5 ran 2.
    p = subprocess.run([CLI, "history", "--db=h.sqlite", "changes", "--permutations=2.5"], cwd=d,
                       capture_output=True, timeout=60, text=True)
    check(p.returncode == 64 and "--permutations=2.5" in p.stderr and "whole" in p.stderr,
          f"history changes --permutations=2.5: exit {p.returncode} (want 64); stderr {p.stderr.strip()[:300]!r}")
    print(f"{n + 1} numbers strtod would have read otherwise, {ok + (p.returncode == 64)} refused")


# ---- issue 59, second campaign: names from a results file on the terminal --------------------
# A case, region and event name with an escape sequence and a newline
# (valid JSON: \u001b, \n) went raw into compare's table, Markdown and
# list of moved cases: shown escaped, no line forged.

def compare_names_rows(d, good):
    doc = json.load(open(good))
    c = doc["cases"][0]
    c["name"] = "gate.base\u001b[2Jline\nforged line"
    r = c["regions"][0]
    r["name"] = "wo\u001b]0;titlerk"
    hostile = os.path.join(d, "hostile-names.json")
    json.dump(doc, open(hostile, "w"))
    rows = [
        ("compare GOOD HOSTILE", [CLI, "compare", good, hostile], 3),
        ("compare HOSTILE HOSTILE --markdown=-", [CLI, "compare", hostile, hostile, "--markdown=-"], 0),
        ("compare HOSTILE GOOD --moved-cases=-", [CLI, "compare", hostile, good, "--moved-cases=-"], 3),
    ]
    n = ok = 0
    for what, argv, status in rows:
        p = subprocess.run(argv, cwd=d, capture_output=True, timeout=60)
        both = p.stdout + p.stderr
        raw = b"\x1b" in both or b"\nforged line" in both
        good_row = (p.returncode == status and not raw and b"gate.base\\x1b[2Jline\\nforged line" in both)
        n += 1
        ok += good_row
        check(good_row, f"{what}: exit {p.returncode} (want {status}), an escape or forged line shown raw: "
                        f"{raw}; output {both[-400:]!r}")
    os.unlink(hostile)
    print(f"{n} reports of a results file with hostile names, {ok} shown escaped")


# ---- issue 59, second campaign: pmcheck results shows a results file's words ----------------
# A failed case's reason, its name, its suite and the kernel release with
# an escape sequence and a newline went raw to the terminal and the
# Markdown page: shown escaped, no line forged.

def results_names_rows(d, good):
    doc = json.load(open(good))
    c = doc["cases"][0]
    c["verdict"], c["checks"] = "FAIL", []
    c["reason"] = "bad\u001b[2Jthing\nforged line"
    c["suite"] = "s\u001bX"
    doc["summary"]["pass"], doc["summary"]["fail"] = 0, 1
    doc["environment"]["kernel"]["release"] = "6.1\u001b]0;title\u0007"
    hostile = os.path.join(d, "hostile-words.json")
    json.dump(doc, open(hostile, "w"))
    rows = [
        ("results HOSTILE", [CLI, "results", hostile, "--by-suite"], b"s\\x1bX"),
        ("results HOSTILE --markdown=-", [CLI, "results", hostile, "--markdown=-"],
         b"bad\\x1b[2Jthing\\nforged line"),
        ("results HOSTILE --top", [CLI, "results", hostile, "--top=3"], b"FAIL"),
    ]
    n = ok = 0
    for what, argv, want in rows:
        p = subprocess.run(argv, cwd=d, capture_output=True, timeout=60)
        both = p.stdout + p.stderr
        raw = b"\x1b" in both or b"\x07" in both or b"\nforged line" in both
        good_row = p.returncode in (1, 2) and not raw and want in both
        n += 1
        ok += good_row
        check(good_row, f"{what}: exit {p.returncode}, an escape or forged line shown raw: {raw}; "
                        f"output {both[-500:]!r}")
    os.unlink(hostile)
    print(f"{n} results reports of a file with hostile words, {ok} shown escaped")


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
    # The JSON files beside a budget: a FIFO held the run (and calibration)
    # forever, and check said "hwdb OK"; a link to /dev/zero or a directory
    # was passed over.
    for what, suffix, make, words, runs in [
            ("a .calibration.json that is a FIFO", ".calibration.json", os.mkfifo, ["a FIFO"], True),
            ("a .calibration.json linked to /dev/zero", ".calibration.json", lambda p: os.symlink("/dev/zero", p),
             ["character device"], True),
            ("a .calibration.json that is a directory", ".calibration.json", os.mkdir, ["a directory"], True),
            ("a .functions.json that is a FIFO", ".functions.json", os.mkfifo, ["a FIFO"], False)]:
        hw, f = tree(what.replace(" ", "-").replace("/", "_"))
        side = f[:-len(".ini")] + suffix
        make(side)
        if runs:
            both(what, hw, [side, words[0]])
            row(f"calibrate: {what}", [RUNNER, "--filter=gate.budgeted", "--calibrate=2", "--hwdb=" + hw],
                [side, words[0], "not calibrated"])
        else:
            row(f"hwdb check: {what}", [CLI, "hwdb", "check", "--hwdb=" + hw], [side, words[0]])
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
    # A map pattern over 512 bytes: the reason is not cut off (the pattern
    # was quoted whole).
    for what, lines, words in [
            ("a map pattern of 600 bytes", ["^q\x07" + "y" * 598 + "$ = zen3"], ["(602 bytes)", "at most 255"])]:
        hw, f = tree(what.replace(" ", "-"))
        with open(os.path.join(hw, "map.ini"), "w") as h:
            h.write("[map]\n" + "\n".join(lines) + "\n")
        both(what, hw, [os.path.join(hw, "map.ini") + ":" + str(len(lines) + 1)] + words)
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
    orows, opassed = output_rows(d, good)
    drows, dpassed = same_output_rows(d, good)
    orows, opassed = orows + drows, opassed + dpassed
    srows, spassed = settings_rows(d)
    rows += orows + srows
    passed += opassed + spassed
    print(f"{rows} hostile inputs through {len(string_doors(b'')) + len(file_doors(b'')) + len(OUTPUT_DOORS)} "
          f"doors and {len(SETTINGS)} settings, {passed} refused or taken as they should be")
    results_rows(d, good)
    compare_names_rows(d, good)
    results_names_rows(d, good)
    number_rows(d, good)
    history_store_rows(d, good)
    results_dir_rows(d)
    hwdb_rows()
finish()
