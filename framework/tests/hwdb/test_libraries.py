#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A library changed under a calibrated program is named, on perf and sim.

The README's quick start gates Debian's libexpat (instructions on the
simulator, calls of malloc with uprobes and on the simulator; the calls
under "any").  It is
calibrated; then another libexpat.so.1 (the same soname, built here, from no
package, doing other work) comes first through LD_LIBRARY_PATH.  Every
failed budget must name the library with its identity at calibration
(package and version as dpkg has them, build ID) and now, before its
figures.  Then: a dpkg database that says another version owns the file;
a budget file from before the library lines (named from the calibration
file); a malformed library line (file:line, from the run and hwdb check).

usage: test_libraries.py QUICKSTART_GATE STUB_LIBRARY PMCHECK_CLI
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish, guarded  # noqa: E402

EXE, STUB, CLI = sys.argv[1:4]
STUB_DIR = os.path.dirname(STUB)


def run(*args, env=None):
    e = {k: v for k, v in os.environ.items()
         if k not in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "LD_LIBRARY_PATH", "DPKG_ADMINDIR",
                      "PMCHECK_SIM_ENV")}
    e["NO_COLOR"] = "1"
    e.update(env or {})
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=e, timeout=240)


def build_id(path):
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    return m.group(1) if m else None


def libexpat():
    """The libexpat.so.1 the program loads, and what dpkg says of it."""
    out = subprocess.run(["ldd", EXE], capture_output=True, text=True).stdout
    path = re.search(r"libexpat\.so\.1 => (\S+)", out).group(1)
    pkg = ver = None
    if shutil.which("dpkg"):
        for p in (path, os.path.realpath(path)):
            s = subprocess.run(["dpkg", "-S", p], capture_output=True, text=True)
            if s.returncode == 0:
                pkg = s.stdout.split(":")[0]
                ver = subprocess.run(["dpkg-query", "-W", "-f=${Version}", s.stdout.split(": ")[0]],
                                     capture_output=True, text=True).stdout
                break
    return path, pkg, ver


def failed_checks(results):
    with open(results) as f:
        doc = json.load(f)
    return {(c["name"], ck["event"]): ck["message"] for c in doc["cases"] for ck in c["checks"]
            if ck["status"] == "fail"}


def named_first(msg, event, was, now):
    """The check's words: region, event, the library with both identities,
    then the figures."""
    head = f'region "parse", {event}: library libexpat.so.1 changed since calibration (was {was}; now {now})'
    return msg.startswith(head) and msg.index("measured") > len(head)


def main():
    d = tempfile.mkdtemp(prefix="pmcheck-libraries-")
    hw = os.path.join(d, "hwdb")
    path, pkg, ver = libexpat()
    old_id, stub_id = build_id(os.path.realpath(path)), build_id(STUB)
    was = f"{pkg} {ver}, build ID {old_id[:12]}" if pkg else f"no package, build ID {old_id[:12]}"
    now = f"no package, build ID {stub_id[:12]}, {STUB_DIR}/libexpat.so.1"
    print(f"libexpat: {path} ({pkg} {ver}, build ID {old_id}); the other one: {STUB} ({stub_id})")

    # Calibrate on both backends: the library lines beside every budget.
    p = run("--backend=sim", "--calibrate=2", f"--hwdb={hw}")
    check(p.returncode == 0, f"calibrate on sim: {p.returncode}\n{p.stdout}{p.stderr}")
    p = run("--calibrate=2", f"--hwdb={hw}")
    perf = "parse_calls" in p.stdout and "calls:malloc = " in p.stdout
    check(p.returncode == 0, f"calibrate on perf: {p.returncode}\n{p.stdout}{p.stderr}")
    files = [os.path.join(r, f) for r, _, fs in os.walk(hw) for f in fs if f == "xml.ini"]
    line = re.compile(r"^library:libexpat\.so\.1 = build-id:%s%s$" %
                      (old_id, re.escape(f" package:{pkg}={ver}") if pkg else ""), re.M)
    check(len(files) == 2 and all(line.search(open(f).read()) for f in files),
          f"both budget files (the sim key and any) record libexpat with its package and build ID: "
          f"{[(f, open(f).read()) for f in files]}")
    anyfile = os.path.join(hw, "budgets", "any", "xml.ini")
    check(os.path.exists(anyfile) and "[parse_calls]" in open(anyfile).read(), "calls under any")
    p = run("--backend=sim", f"--hwdb={hw}")
    check(p.returncode == 0, f"unchanged, sim passes: {p.returncode}\n{p.stdout}")

    # The other libexpat.so.1 first: every failed budget names it.
    stub_env = {"LD_LIBRARY_PATH": STUB_DIR}
    if perf:
        out = os.path.join(d, "perf.json")
        p = run(f"--hwdb={hw}", f"--json={out}", env=stub_env)
        fails = failed_checks(out)
        msg = fails.get(("xml.parse_calls", "calls:malloc"), "")
        check(p.returncode == 1 and named_first(msg, "calls:malloc", was, now),
              f"perf: calls:malloc under any names the library, both identities, before the figures:\n{msg}\n{p.stdout}")
        check(f"library libexpat.so.1 changed since calibration (was {was}" in p.stdout,
              "and the console says it")
        print("perf:", msg[:400])
    else:
        print("perf: uprobes not available here (calls:malloc did not calibrate); sim only")
    out, junit = os.path.join(d, "sim.json"), os.path.join(d, "sim.xml")
    p = run("--backend=sim", f"--hwdb={hw}", f"--json={out}", f"--junit={junit}",
            env=dict(stub_env, PMCHECK_SIM_ENV="LD_LIBRARY_PATH"))
    fails = failed_checks(out)
    for case, event in (("xml.parse", "instructions:u"), ("xml.parse_calls", "calls:malloc")):
        msg = fails.get((case, event), "")
        check(named_first(msg, event, was, now),
              f"sim: {case} {event} names the library, both identities, before the figures:\n{msg}")
        print("sim:", msg[:400])
    check(p.returncode == 1, f"sim fails: {p.returncode}")
    text = "".join((f.get("message") or "") + (f.text or "") for f in ET.parse(junit).getroot().iter("failure"))
    check(text.count("library libexpat.so.1 changed since calibration") >= 2, "JUnit says it too")

    # dpkg says another version owns that file now: both versions shown.
    admin = os.path.join(d, "dpkg")
    os.makedirs(os.path.join(admin, "info"))
    with open(os.path.join(admin, "info", "libexpat1:amd64.list"), "w") as f:
        f.write(f"/.\n{STUB_DIR}/libexpat.so.1\n")
    with open(os.path.join(admin, "status"), "w") as f:
        f.write("Package: libexpat1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.7.1-1\n")
    now_pkg = f"libexpat1 2.7.1-1, build ID {stub_id[:12]}, {STUB_DIR}/libexpat.so.1"
    out = os.path.join(d, "dpkg.json")
    p = run("--backend=sim", f"--hwdb={hw}", f"--json={out}",
            env=dict(stub_env, DPKG_ADMINDIR=admin, PMCHECK_SIM_ENV="LD_LIBRARY_PATH:DPKG_ADMINDIR"))
    msg = failed_checks(out).get(("xml.parse", "instructions:u"), "")
    check(named_first(msg, "instructions:u", was, now_pkg),
          f"the package version dpkg gives now is shown beside the one calibrated:\n{msg}")

    # A budget file from before the library lines: named from
    # SUITE.calibration.json, its build ID only.
    text = open(anyfile).read()
    with open(anyfile, "w") as f:
        f.write("".join(ln for ln in text.splitlines(True) if not ln.startswith("library:")))
    out = os.path.join(d, "old.json")
    run("--backend=sim", "--filter=xml.parse_calls", f"--hwdb={hw}", f"--json={out}",
        env=dict(stub_env, PMCHECK_SIM_ENV="LD_LIBRARY_PATH"))
    msg = failed_checks(out).get(("xml.parse_calls", "calls:malloc"), "")
    check(named_first(msg, "calls:malloc", f"its package not recorded, build ID {old_id[:12]}", now),
          f"without library lines, the calibration file's build ID:\n{msg}")

    # A malformed library line: the run says file:line and the fix; so
    # does hwdb check; nothing is judged against that file.
    with open(anyfile, "w") as f:
        f.write(text.replace(f"build-id:{old_id}", "build-id:not-hex", 1))
    bad = [i + 1 for i, ln in enumerate(text.splitlines()) if ln.startswith("library:libexpat")][0]
    where = f"{anyfile}:{bad}: "
    p = run("--backend=sim", "--filter=xml.parse_calls", f"--hwdb={hw}")
    check(p.returncode == 2 and where in p.stdout and "calibrate again, or delete the line" in p.stdout,
          f"a malformed library line is an error naming {where}: {p.returncode}\n{p.stdout}")
    p = subprocess.run([CLI, "hwdb", "check", f"--hwdb={hw}"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and where in p.stdout + p.stderr and "build-id:HEX" in p.stdout + p.stderr,
          f"hwdb check names it: {p.returncode}\n{p.stdout}{p.stderr}")
    shutil.rmtree(d, ignore_errors=True)


guarded(main)
finish()
