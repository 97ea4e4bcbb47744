#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A relocatable install: pmcheck installed into a scratch prefix, the
prefix then moved, finds its data in the moved prefix's share/pmcheck/hwdb
(never the source tree's or the configured prefix's), for hwdb lookup,
hwdb check and --calibrate; with the installed hwdb gone, hwdb lookup and
check fail naming what is missing instead of matching nothing.

usage: test_relocatable.py BUILD_DIR GATE_SELFTEST
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

BUILD, GATE = sys.argv[1:3]


def run(cmd, env=None):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)


with tempfile.TemporaryDirectory() as d:
    first, moved = os.path.join(d, "first"), os.path.join(d, "moved")
    p = run(["cmake", "--install", BUILD, "--prefix", first])
    check(p.returncode == 0, f"install: {p.stderr}")
    os.rename(first, moved)
    share = os.path.realpath(os.path.join(moved, "share", "pmcheck", "hwdb"))
    cli = os.path.join(moved, "bin", "pmcheck")
    env = {k: v for k, v in os.environ.items() if k != "PMCHECK_HWDB"}

    p = run([cli, "hwdb", "lookup", "GenuineIntel-6-55-7"], env=env)
    check(p.returncode == 0 and f"directory 1   {share}\n" in p.stdout and
          f"[{share}/map.ini:" in p.stdout and "directory 2" not in p.stdout,
          f"hwdb lookup reads the moved prefix's hwdb: {p.stdout}{p.stderr}")
    p = run([cli, "hwdb", "check"], env=env)
    check(p.returncode == 0 and "hwdb OK: 1 directory" in p.stdout,
          f"hwdb check reads the moved prefix's hwdb: {p.stdout}{p.stderr}")

    # --calibrate of a program loading the moved library: the machine's
    # model comes from the moved hwdb, so budgets are filed under the model
    # (or "any"), never under a bare signature.
    libdirs = [os.path.dirname(os.path.join(r, f)) for r, _, fs in os.walk(moved) for f in fs
               if f.startswith("libpmcheck.so")]
    cal = os.path.join(d, "cal")
    p = run([GATE, "--filter=gate.budgeted", "--calibrate", f"--hwdb={cal}"],
            env=dict(env, LD_LIBRARY_PATH=":".join(sorted(set(libdirs)))))
    keys = sorted(os.listdir(os.path.join(cal, "budgets"))) if os.path.isdir(os.path.join(cal, "budgets")) else []
    lookup = run([cli, "hwdb", "lookup"], env=env).stdout
    model = next((l.split()[1].rstrip(":") for l in lookup.splitlines() if l.strip().startswith("model ")), None)
    check(p.returncode == 0 and keys and all(k == "any" or k == model for k in keys),
          f"--calibrate files budgets under the model from the moved hwdb ({model}): {keys}\n{p.stdout}{p.stderr}")

    # The installed hwdb gone: an error naming it, not "OK, 0 directories".
    shutil.rmtree(share)
    for op in ("lookup", "check"):
        p = run([cli, "hwdb", op], env=env)
        check(p.returncode == 2 and "share/pmcheck/hwdb" in p.stderr and "--hwdb" in p.stderr,
              f"hwdb {op} without the installed hwdb: {p.returncode} {p.stdout}{p.stderr}")
finish()
