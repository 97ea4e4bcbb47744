#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The pmcheck command line as a whole: every command of `pmcheck help` has
a --help page that exits 0, and every usage error exits 64 (PMC_EXIT_USAGE)
with a message naming the bad input and pointing at --help."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CLI = sys.argv[1]


def run(*args):
    return subprocess.run([CLI, *args], capture_output=True, text=True, timeout=120)


p = run("help")
commands = re.findall(r"^  ([a-z]+)\b", p.stdout, re.M)
check(p.returncode == 0 and len(commands) >= 9, f"help lists the commands: {commands}")
for c in commands:
    h = run(c, "--help")
    check(h.returncode == 0 and h.stdout.startswith(f"usage: pmcheck {c}"), f"{c} --help: {h.returncode} {h.stdout[:80]}")
    check(run("help", c).stdout == h.stdout, f"help {c} is {c} --help")
    if c == "help":
        continue
    b = run(c, "--no-such-option")
    check(b.returncode == 64 and '"--no-such-option"' in b.stderr and f"pmcheck {c} --help" in b.stderr,
          f"{c} --no-such-option: {b.returncode} {b.stderr.strip()}")

cases = [
    (["probe", "--timeout=0"], "--timeout=0"),
    (["probe", "--timeout"], '"--timeout" needs a value'),
    (["results", "--json"], '"--json" needs a value'),
    (["probe", "extra"], '"extra"'),
    (["events"], "event list"),
    (["results", "--clear"], "--clear"),
    (["compare", "one.json"], "two result files"),
    (["compare", "a.json", "b.json", "--tolerance=x"], "x"),
    (["hwdb"], "lookup [SIG], budget SUITE.TEST REGION EVENT, check or merge"),
    (["hwdb", "budget", "nodot", "r", "instructions"], "SUITE.TEST"),
    (["hwdb", "lookup", "--backend=sim"], "budget"),
    (["hwdb", "budget", "a.b", "r", "instructions", "--backend=gpu"], "--backend=gpu"),
    (["validate", "--backend=gpu"], "--backend=gpu"),
    (["sim"], "expected a program"),
    (["version", "extra"], '"extra"'),
    (["help", "nosuch"], '"nosuch"'),
    (["nosuch"], '"nosuch"'),
    ([], "usage: pmcheck COMMAND"),
]
for args, said in cases:
    p = run(*args)
    check(p.returncode == 64 and said in p.stderr, f"pmcheck {' '.join(args)}: {p.returncode} {p.stderr.strip()[:200]}")

v = run("--version")
check(v.returncode == 0 and v.stdout.startswith("pmcheck "), f"--version: {v.stdout}")
print(f"{len(commands)} commands, {len(cases)} usage errors checked")
finish()
