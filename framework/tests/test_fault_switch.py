#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A machine whose breakpoints open but never fire, made on any machine.

PMCHECK_FAULT_CHECKS=breakpoint makes the breakpoint kinds fail their check
on known work where they would pass.  With it, on either kind of machine:
the breakpoint cases SKIP with the check's words (never FAIL, never PASS),
every other behaviour is still judged with page faults, uprobes or
tracepoints, and pmcheck stat marks a breakpoint instead of printing 0.

usage: test_fault_switch.py BUILD_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, fail, failed, finish, guarded  # noqa: E402,F401

FINDING = "breakpoints open but never fire on this machine: a check of 64"
INJECTED = "(fault injected: PMCHECK_FAULT_CHECKS)"


def run_suite(exe, *args):
    env = dict(os.environ, PMCHECK_FAULT_CHECKS="breakpoint")
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "r.json")
        p = subprocess.run([exe, "--json=" + out, *args], env=env, capture_output=True,
                           text=True, timeout=600)
        with open(out) as f:
            doc = json.load(f)
    return p, {c["name"]: c for c in doc["cases"]}


def main():
    build = sys.argv[1]
    # The conformance suite: nothing fails, the breakpoint cases skip with
    # the finding, the platform case reports it once, and the behaviours
    # that used to ride on a write breakpoint pass on page faults.
    p, cases = run_suite(os.path.join(build, "suites/conformance/pmcheck_conformance"))
    bad = {n: c["verdict"] for n, c in cases.items() if c["verdict"] in ("FAIL", "ERROR")}
    check(not bad, "conformance with the fault switch: failed %s" % bad)
    for name in ("bp.write_len_1", "bp.write_len_8", "bp.read_write_counts_both",
                 "bp.execute_counts_calls", "ioctl.modify_attributes_breakpoint",
                 "platform.counter_kinds"):
        c = cases[name]
        check(c["verdict"] == "SKIP" and FINDING in c["reason"] and INJECTED in c["reason"],
              "%s: %s %s" % (name, c["verdict"], c.get("reason")))
    check(cases["bp.write_len_1"]["reason"].endswith("(the case platform.counter_kinds reports it)"),
          "a breakpoint case points at the platform case: " + cases["bp.write_len_1"]["reason"])
    for name in ("ioctl.enable_disable", "ioctl.reset", "ioctl.group_flag_enable",
                 "ioctl.group_flag_disable", "prctl.disable_enable_exact",
                 "prctl.owner_controls_attached_events", "exec.inherit_counts_children",
                 "exec.no_inherit_no_children", "ring.sample_fields_in_order", "ring.set_output",
                 "ring.wakeup_events", "ring.write_backward", "sample.regs_user",
                 "sample.stack_user", "signal.poll_in_on_overflow", "flags.fd_no_group",
                 "ioctl.fd_over_unix_socket"):
        check(cases[name]["verdict"] == "PASS",
              "%s with the fault switch: %s %s" % (name, cases[name]["verdict"],
                                                   cases[name].get("reason", "")))
    passed = sum(c["verdict"] == "PASS" for c in cases.values())
    skipped = sum(c["verdict"] == "SKIP" for c in cases.values())

    # The examples: breakpoint cases skip with the words, page faults pass.
    p, cases = run_suite(os.path.join(build, "suites/examples/pmcheck_examples"))
    check(p.returncode == 0, "examples exit %d with the fault switch" % p.returncode)
    for name in ("breakpoints.global_writes", "breakpoints.heap_word_reads"):
        c = cases[name]
        check(c["verdict"] == "SKIP" and FINDING in c["reason"] and
              "no verdict can rest on it here" in c["reason"], "%s: %s" % (name, c.get("reason")))
    check(cases["software.page_faults_first_touch"]["verdict"] == "PASS", "page faults still judged")

    # The harness's inherited-threads cases switch to the getppid tracepoint.
    p, cases = run_suite(os.path.join(build, "framework/tests/harness/pmcheck_selftest"),
                         "--filter=threads.inherit_sum,threads.child_process")
    for name, c in cases.items():
        check(c["verdict"] == "PASS", "%s: %s %s" % (name, c["verdict"], c.get("reason", "")))

    # pmcheck stat marks the count instead of printing a number.
    env = dict(os.environ, PMCHECK_FAULT_CHECKS="breakpoint")
    r = subprocess.run([os.path.join(build, "framework/tools/pmcheck"), "stat", "-e",
                        "page-faults,mem:0x1000/8:w", "--", "true"], env=env, capture_output=True,
                       text=True, timeout=60)
    line = [ln for ln in r.stderr.splitlines() if ln.strip().startswith("mem:0x1000")]
    check(r.returncode == 0 and line and "OPENS BUT DOES NOT COUNT" in line[0] and INJECTED in line[0]
          and line[0].split()[1] == "-", "stat marks the breakpoint: %r" % r.stderr)
    r = subprocess.run([os.path.join(build, "framework/tools/pmcheck"), "stat", "-e", "mem:main:x",
                        "--", "true"], capture_output=True, text=True, timeout=60)
    check(r.returncode == 64 and "not in the command" in r.stderr and "calls:main" in r.stderr,
          "stat refuses mem:SYMBOL with the way out: %d %r" % (r.returncode, r.stderr))

    if failed():
        finish()
    print("PASS fault.breakpoints_never_fire: conformance %d passed, %d skipped with the switch"
          % (passed, skipped))


if __name__ == "__main__":
    main()
