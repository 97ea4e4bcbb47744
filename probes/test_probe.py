#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check `pmcheck probe --json` against the schema and against facts read
independently of the probe code (sysfs, the architecture, the PATH).

usage: test_probe.py PMCHECK SCHEMA
"""
import json
import re
import os
import platform
import shutil
import subprocess
import sys
import tempfile

import jsonschema

PMU_ROOT = "/sys/bus/event_source/devices"


def fail(msg):
    print("FAIL probe.record: " + msg)
    sys.exit(1)


def unprivileged(pmcheck, schema_path):
    """`pmcheck probe` as an unprivileged user: every line that says
    UNAVAILABLE gives its reason, none contradicts itself, and what works
    for user space only (:u) is offered as such."""
    runuser = shutil.which("runuser")
    if os.geteuid() != 0 or not runuser:
        print("SKIP probe.unprivileged: needs root and runuser to become nobody")
        sys.exit(77)
    with open("/proc/sys/kernel/perf_event_paranoid") as f:
        paranoid = int(f.read())
    as_nobody = [runuser, "-u", "nobody", "--", pmcheck, "probe"]
    run = subprocess.run(as_nobody + ["--json"], capture_output=True, text=True, timeout=150,
                         cwd="/")
    if run.returncode != 0:
        fail("probe as nobody exited %d: %s" % (run.returncode, run.stderr))
    rec = json.loads(run.stdout)
    with open(schema_path) as f:
        jsonschema.validate(rec, json.load(f))
    table = subprocess.run(as_nobody, capture_output=True, text=True, timeout=150, cwd="/").stdout
    for line in table.splitlines():
        if "UNAVAILABLE" in line:
            reason = line.split("UNAVAILABLE", 1)[1].strip(": ")
            if len(reason) < 20:
                fail("no reason given: %r" % line)
            if "exactly" in reason or "counted 1" in reason:
                fail("contradiction: unavailable, yet something counted: %r" % line)
    sw, bp = rec["software"], rec["breakpoints"]
    if paranoid >= 2 and paranoid < 3:
        # The kernel refuses to let nobody count the kernel; user space is fine.
        if not sw.get("user_only") or "task-clock" not in sw["available"] + sw["user_only"]:
            fail("software events as nobody at paranoid %d: %s" % (paranoid, sw))
        if "user space only (:u)" not in table:
            fail("table does not say the software events count user space only:\n" + table)
        if "breakpoint" in os.listdir(PMU_ROOT) and not (bp["status"] != "unavailable" and bp.get("user_only")):
            fail("breakpoints as nobody should open with :u: %s" % bp)
    if "uprobe" in os.listdir(PMU_ROOT) and not rec["uprobes"]["value"] and \
            "CAP_PERFMON" not in rec["uprobes"]["how"]:
        fail("uprobes refused without naming the privilege: %s" % rec["uprobes"]["how"])
    if not rec["tracepoints"]["available"] and "root" not in rec["tracepoints"]["how"]:
        fail("tracepoints refused without saying what would help: %s" % rec["tracepoints"]["how"])
    print("PASS probe.unprivileged (paranoid %d):\n%s" % (paranoid, table))


def check_kinds(pmcheck, rec, schema):
    """Every kind's check: its status agrees with its figures, page faults
    count on every machine, and the fault switch turns the breakpoint kinds
    into 'opens but does not count' with the same words as a machine whose
    breakpoints never fire, leaving the other kinds as they were."""
    kinds = rec["kinds"]
    for name, k in kinds.items():
        exact = name not in ("instructions", "branches", "cycles")
        if k["status"] == "available" and exact and k["counted"] != k["work"]:
            fail("%s available but counted %d of %d" % (name, k["counted"], k["work"]))
        if k["status"] == "opens but does not count" and \
                ("counted %d" % k["counted"]) not in k["how"]:
            fail("%s: the finding must give the figures: %s" % (name, k["how"]))
        # (The whole suite may run under the switch, to see a machine whose
        # breakpoints never fire: then injected is what was asked.)
        if k["injected"] and not os.environ.get("PMCHECK_FAULT_CHECKS"):
            fail("%s: fault injected without PMCHECK_FAULT_CHECKS" % name)
    if kinds["page-faults"]["status"] != "available":
        fail("page faults must count on every machine: %s" % kinds["page-faults"])
    env = dict(os.environ, PMCHECK_FAULT_CHECKS="breakpoint")
    run = subprocess.run([pmcheck, "probe", "--json", "--timeout=5"], capture_output=True,
                         text=True, timeout=60, env=env)
    bad = json.loads(run.stdout)
    jsonschema.validate(bad, schema)
    for name in ("breakpoint-write", "breakpoint-rw", "breakpoint-exec"):
        k = bad["kinds"][name]
        if kinds[name]["status"] == "unavailable":
            continue
        if k["status"] != "opens but does not count" or not k["injected"] or k["counted"] != 0 \
                or "open but never fire on this machine: a check of 64" not in k["how"] \
                or "fault injected: PMCHECK_FAULT_CHECKS" not in k["how"]:
            fail("fault switch on %s: %s" % (name, k))
    for name in ("uprobe", "tracepoint", "page-faults"):
        if bad["kinds"][name]["status"] != kinds[name]["status"]:
            fail("the breakpoint fault disturbed %s: %s" % (name, bad["kinds"][name]))
    table = subprocess.run([pmcheck, "probe", "--timeout=5"], capture_output=True, text=True,
                           timeout=60, env=env).stdout
    if "breakpoint" in os.listdir(PMU_ROOT) and \
            "Breakpoints   OPEN BUT DO NOT COUNT (" not in table:
        fail("table with the fault switch:\n" + table)
    for name in kinds:
        if not re.search(r"^    %s +(available|opens but does not count|unavailable): " % re.escape(name),
                         table, re.M):
            fail("table lacks the %s check:\n%s" % (name, table))


def main():
    pmcheck, schema_path = sys.argv[1], sys.argv[2]
    if len(sys.argv) > 3 and sys.argv[3] == "--unprivileged":
        unprivileged(pmcheck, schema_path)
        return
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "probe.json")
        run = subprocess.run([pmcheck, "probe", "--json", "--output=" + out],
                             capture_output=True, text=True, timeout=150)
        if run.returncode != 0:
            fail("pmcheck probe exited %d: %s" % (run.returncode, run.stderr))
        rec = json.loads(run.stdout)
        with open(out) as f:
            if json.load(f) != rec:
                fail("--output file differs from stdout")
        if [n for n in os.listdir(tmp) if ".tmp." in n]:
            fail("temporary file left behind by the atomic write")
    with open(schema_path) as f:
        schema = json.load(f)
    try:
        jsonschema.validate(rec, schema)
    except jsonschema.ValidationError as e:
        fail("record does not match %s: %s at %s" % (schema_path, e.message, list(e.path)))

    for key in schema["required"]:
        if isinstance(rec[key], dict) and "error" in rec[key]:
            fail("probe %s did not run: %s" % (key, rec[key]["error"]))

    # PMUs: exactly what sysfs lists.
    names = sorted(p["name"] for p in rec["pmus"]["list"])
    if names != sorted(os.listdir(PMU_ROOT)):
        fail("PMU list %s differs from %s" % (names, sorted(os.listdir(PMU_ROOT))))
    core = [n for n in names if n == "cpu" or n.startswith("cpu_") or n.startswith("armv8")]
    hw = rec["hardware"]["available"]["value"]
    if bool(core) != hw:
        fail("hardware available=%s but core PMUs in sysfs: %s (%s)"
             % (hw, core, rec["hardware"]["available"]["how"]))
    if not hw and "no hardware PMU" not in rec["hardware"]["available"]["how"]:
        fail("no-PMU reason missing: " + rec["hardware"]["available"]["how"])
    if hw:
        ur = rec["hardware"].get("user_read")
        perf_user = rec["kernel"]["perf_user_access"]["value"]
        if platform.machine() == "aarch64" and perf_user == 1 and not (ur and ur["works"]):
            fail("arm64 with perf_user_access=1 but user reads do not work: %s" % ur)
        if rec["hardware"]["general_counters"]["value"] < 1:
            fail("hardware PMU without a general counter")

    # Breakpoints: x86 has four debug address registers.
    bp = rec["breakpoints"]
    if "breakpoint" in names:
        # They open here; whether they count is the check's finding.
        if bp["status"] == "unavailable":
            fail("breakpoint PMU present but probe says unavailable: " + bp["how"])
        if bp["status"] != rec["kinds"]["breakpoint-write"]["status"] or \
                bp["available"] != (bp["status"] == "available"):
            fail("breakpoints and the write-breakpoint check disagree: %s / %s"
                 % (bp, rec["kinds"]["breakpoint-write"]))
        if platform.machine() in ("x86_64", "i686") and bp["slots"] != 4:
            fail("x86 breakpoint slots %d, expected 4" % bp["slots"])
        if "breakpoint slot" not in bp["limit"]:
            fail("breakpoint limit reason: " + bp["limit"])
    if ("uprobe" in names) != rec["uprobes"]["value"]:
        fail("uprobe PMU in sysfs=%s but probe says %s (%s)"
             % ("uprobe" in names, rec["uprobes"]["value"], rec["uprobes"]["how"]))
    if ("kprobe" in names) != rec["kprobes"]["value"]:
        fail("kprobe presence disagrees with sysfs")
    if os.geteuid() == 0 and "tracepoint" in names and not rec["tracepoints"]["available"]:
        fail("root with a tracepoint PMU but tracepoints unavailable: " + rec["tracepoints"]["how"])
    if "task-clock" not in rec["software"]["available"]:
        fail("task-clock not available: %s" % rec["software"]["unavailable"])
    if (shutil.which("valgrind") is not None) != (rec["tools"]["valgrind"]["value"] is not None):
        fail("valgrind on PATH disagrees with the record")
    if (shutil.which("qemu-system-aarch64") is not None) != \
            (rec["tools"]["qemu_system_aarch64"]["value"] is not None):
        fail("qemu-system-aarch64 on PATH disagrees with the record")
    if platform.machine() == "x86_64":
        sig = rec["cpu"]["signature"]["value"]
        with open("/proc/cpuinfo") as f:
            info = dict(l.split(":", 1) for l in f.read().split("\n\n")[0].splitlines() if ":" in l)
        want = "%s-%d-%X-%X" % (info["vendor_id\t"].strip(), int(info["cpu family\t"]),
                                int(info["model\t\t"]), int(info["stepping\t"]))
        if sig != want:
            fail("signature %s, /proc/cpuinfo says %s" % (sig, want))

    # Probes run at once: each one's time is recorded, and the whole run
    # takes about as long as the slowest probe, not the sum.
    timing = rec["timing_ms"]
    keys = [k for k in schema["required"] if k not in ("schema", "generated", "timing_ms")]
    if sorted(k for k in timing if k != "total") != sorted(keys):
        fail("timing_ms keys %s, expected the probes %s" % (sorted(timing), sorted(keys)))
    if timing["total"] + 1 < max(v for k, v in timing.items() if k != "total"):
        fail("total %.1f ms below a probe's time: %s" % (timing["total"], timing))
    if shutil.which("valgrind"):
        if "not run" not in rec["tools"]["sim_backend"]["how"]:
            fail("a plain probe ran a simulation: %s" % rec["tools"]["sim_backend"]["how"])
        deep = json.loads(subprocess.run([pmcheck, "probe", "--json", "--deep"], capture_output=True,
                                         text=True, timeout=150).stdout)
        if "ran /bin/true" not in deep["tools"]["sim_backend"]["how"] or \
                deep["tools"]["sim_backend"]["value"] != rec["tools"]["sim_backend"]["value"]:
            fail("--deep: %s (plain: %s)" % (deep["tools"]["sim_backend"], rec["tools"]["sim_backend"]))

    # The table says the essentials plainly.
    table = subprocess.run([pmcheck, "probe"], capture_output=True, text=True, timeout=150).stdout
    for word in ("Hardware PMU", "Breakpoints", "uprobes", "Tracepoints", "sim backend"):
        if word not in table:
            fail("table lacks %r:\n%s" % (word, table))
    if not hw and "NONE" not in table:
        fail("table does not say there is no hardware PMU:\n" + table)
    if bp["available"] and ("%d slots" % bp["slots"]) not in table:
        fail("table lacks the slot count:\n" + table)
    # A probe that hangs or crashes costs its own entry only, within the limit.
    for fault, words in (("kprobes:hang", "timed out after 2 s"), ("uprobes:crash", "crashed (signal 11)")):
        env = dict(os.environ, PMCHECK_PROBE_FAULT=fault)
        key = fault.split(":")[0]
        run = subprocess.run([pmcheck, "probe", "--json", "--timeout=2"], capture_output=True,
                             text=True, timeout=60, env=env)
        if run.returncode != 0:
            fail("probe with %s exited %d: %s" % (fault, run.returncode, run.stderr))
        bad = json.loads(run.stdout)
        jsonschema.validate(bad, schema)
        if words not in bad[key].get("error", ""):
            fail("%s: entry %s is %s" % (fault, key, bad[key]))
        if bad["breakpoints"]["slots"] != bp["slots"] or bad["software"]["available"] != rec["software"]["available"]:
            fail("%s disturbed other probes" % fault)
        table = subprocess.run([pmcheck, "probe", "--timeout=2"], capture_output=True, text=True,
                               timeout=60, env=env).stdout
        if words not in table:
            fail("table hides the failed probe %s:\n%s" % (key, table))

    check_kinds(pmcheck, rec, schema)

    print("PASS probe.record: %d PMUs, hardware=%s, %d breakpoint slots, uprobes=%s, tracepoints=%s"
          % (len(names), hw, bp["slots"], rec["uprobes"]["value"], rec["tracepoints"]["available"]))


if __name__ == "__main__":
    main()
