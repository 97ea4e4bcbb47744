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
/proc/self/fd/1, "-" (the standard output) and "-" on a full device; and
the settings that were cut or ignored: PMCHECK_FAULT_CHECKS=junk,
PMCHECK_SIM_ENV past 62 names, the loader's words in the valgrind version,
PMC_REGION_N with 0 or a negative count.

usage: test_doors.py PMCHECK RUNNER SELFTEST"""
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile

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
    if cls in ("planted links", "new file"):
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
                  "link to /proc/self/fd/1", "-", "- on /dev/full"]


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


SETTINGS = [
    ("PMCHECK_FAULT_CHECKS=junk (stat)", fault_switch_row([CLI, "stat", "--", "/bin/true"])),
    ("PMCHECK_FAULT_CHECKS=junk (runner)", fault_switch_row([RUNNER, "--filter=gate.baseline_only"])),
    ("PMCHECK_SIM_ENV with 101 names", sim_env_row),
    ("LD_PRELOAD=/nonexistent.so for a sim run", lambda d: sim_version_row(d, {"LD_PRELOAD": "/nonexistent.so"})),
    ("LD_DEBUG=statistics for a sim run", lambda d: sim_version_row(d, {"LD_DEBUG": "statistics"})),
    ("PMC_REGION_N(t, \"loop\", 0)", region_row("region_zero_iterations", "0")),
    ("PMC_REGION_N(t, \"loop\", -3)", region_row("region_negative_iterations", "-3")),
]


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
    srows, spassed = settings_rows(d)
    rows += orows + srows
    passed += opassed + spassed
    print(f"{rows} hostile inputs through {len(string_doors(b'')) + len(file_doors(b'')) + len(OUTPUT_DOORS)} "
          f"doors and {len(SETTINGS)} settings, {passed} refused or taken as they should be")
finish()
