#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Attribution on the sim backend: a region built twice, one function made
3% costlier; the comparison reports a regression, and its first attribution
row is that function with the region's whole difference.  Results files
compared afterwards carry functions when callgrind counted them
(PMCHECK_SIM_ENGINE=callgrind); a gate run against a baseline or budgets
counts with pmcheck's valgrind tool, which counts the functions too: the
regression and the failure name them without callgrind ever running (a
valgrind on PATH that logs its command lines shows none).  A failed calls:
budget names the callers whose calls moved since calibration: on sim from
the tool's (and callgrind's) calls per caller, on perf from the uprobe
sampled at every call."""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CLI, BEFORE, AFTER = sys.argv[1:4]
# The two builds are one program rebuilt: the same file name, as a project's
# target keeps its name (budgets are the calibrating program's own).
_builds = tempfile.mkdtemp(prefix="pmcheck-builds-")
for _side in ("before", "after"):
    os.mkdir(os.path.join(_builds, _side))
    shutil.copy2(BEFORE if _side == "before" else AFTER, os.path.join(_builds, _side, "attr_work"))
BEFORE, AFTER = (os.path.join(_builds, s, "attr_work") for s in ("before", "after"))


if os.environ.get("PMCHECK_TEST_SANITIZED") == "1":
    print("SKIP: the sim backend does not run sanitized builds")
    sys.exit(77)

# callgrind is started through the valgrind on PATH (pmcheck's tool through
# its own launcher): a valgrind first on PATH that logs each command line
# and runs the real one shows whether callgrind ran.
_real_valgrind = shutil.which("valgrind")
_spy_dir = tempfile.mkdtemp(prefix="pmcheck-spy-")
SPY_LOG = os.path.join(_spy_dir, "valgrind.log")
with open(os.path.join(_spy_dir, "valgrind"), "w") as _f:
    _f.write(f'#!/bin/sh\nprintf "%s\\n" "$*" >> {shlex.quote(SPY_LOG)}\nexec {shlex.quote(_real_valgrind)} "$@"\n')
os.chmod(os.path.join(_spy_dir, "valgrind"), 0o755)
# Outside CI: these runs have no budgets on purpose (UNBUDGETED, exit 5);
# CI set would make them strict, and fail.
ENV = {k: v for k, v in os.environ.items() if k != "CI"}
SPIED = dict(ENV, PATH=_spy_dir + os.pathsep + os.environ.get("PATH", ""))


def callgrind_runs():
    """The command lines of callgrind runs the spy logged, and forget them."""
    if not os.path.exists(SPY_LOG):
        return []
    with open(SPY_LOG) as f:
        runs = [l.strip() for l in f if "--tool=callgrind" in l]
    os.remove(SPY_LOG)
    return runs


with tempfile.TemporaryDirectory() as d:
    docs = {}
    for name, exe in (("before", BEFORE), ("after", AFTER)):
        path = os.path.join(d, name + ".json")
        p = subprocess.run([exe, "--backend=sim", f"--json={path}"], capture_output=True, text=True,
                           timeout=300, env=dict(ENV, PMCHECK_SIM_ENGINE="callgrind"))
        # No hwdb: measured, not judged, never a pass.
        check(p.returncode == 5 and "UNBUDGETED" in p.stdout, f"{name}: {p.returncode} {p.stdout[-500:]}")
        with open(path) as f:
            docs[name] = json.load(f)
    regions = {n: docs[n]["cases"][0]["regions"][0] for n in docs}
    for n, g in regions.items():
        names = [f["function"] for f in g.get("functions", [])]
        check({"attr_first", "attr_middle", "attr_last"} <= set(names),
              f"{n}: the region's functions are recorded: {names}")
    grew = (regions["after"]["events"]["instructions:u"]["min"]
            - regions["before"]["events"]["instructions:u"]["min"])
    check(grew > 0 and abs(grew / regions["before"]["events"]["instructions:u"]["min"] - 0.03) < 0.015,
          f"the region grew by about 3%: {grew}")

    md = os.path.join(d, "compare.md")
    rep = os.path.join(d, "compare.json")
    p = subprocess.run([CLI, "compare", os.path.join(d, "before.json"), os.path.join(d, "after.json"),
                        f"--json={rep}", f"--markdown={md}"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 3, f"compare finds the regression: {p.returncode}\n{p.stdout}")
    with open(rep) as f:
        rows = [r for r in json.load(f)["rows"] if r["event"] == "instructions:u"]
    check(len(rows) == 1 and rows[0]["verdict"] == "regression", f"instructions:u row: {rows}")
    at = rows[0].get("attribution", []) if rows else []
    check(at and at[0]["function"] == "attr_middle", f"first attribution row: {at[:2]}")
    check(at and at[0]["change"] == grew and abs(at[0]["share"] - 1.0) < 1e-9,
          f"attr_middle carries the whole difference {grew}: {at[:1]}")
    check(all(r["function"] != "attr_first" and r["function"] != "attr_last" for r in at),
          f"the unchanged functions are not blamed: {at}")
    check("which functions" in p.stdout and "attr_middle" in p.stdout,
          f"the console report names it:\n{p.stdout}")
    with open(md) as f:
        text = f.read()
    check("by function" in text and "`attr_middle`" in text, f"the Markdown report names it:\n{text}")
    print("attribution size: %d bytes of %d in the results file" % (
        len(json.dumps(regions["after"].get("functions", []), indent=2)),
        os.path.getsize(os.path.join(d, "after.json"))))
    print(p.stdout)

    # A stored result, read back: where the region's instructions went.
    p = subprocess.run([CLI, "results", "--top=3", os.path.join(d, "after.json")], capture_output=True,
                       text=True, timeout=60)
    block = p.stdout.split('attr.three_functions, region "work"')[-1].split("\n\n")[0]
    top = [l.split()[0] for l in block.splitlines() if l.startswith("  attr_")]
    # The calls: case's functions are attr_first's callers, with its calls.
    block = p.stdout.split('attr.calls_only, region "calls"')[-1].split("\n\n")[0]
    callers = sorted(l.split()[0] for l in block.splitlines() if l.startswith("  attr_"))
    check(callers == ["attr_growing", "attr_steady"], f"results --top lists attr_first's callers: {callers}")
    # Exit 5: the merged run's status, unbudgeted (the runs had no hwdb).
    check(p.returncode == 5 and sorted(top) == ["attr_first", "attr_last", "attr_middle"],
          f"results --top=3 lists the three functions: {top}\n{p.stdout}")

    # The gate's own --baseline: the regression fails in JUnit too (the
    # case passes its checks), with the function behind it.
    junit = os.path.join(d, "gate.xml")
    callgrind_runs()
    p = subprocess.run([AFTER, "--backend=sim", f"--baseline={os.path.join(d, 'before.json')}",
                        f"--junit={junit}"], capture_output=True, text=True, timeout=300, env=SPIED)
    check(p.returncode == 3, f"--baseline exits 3 on the regression: {p.returncode}")
    check("under callgrind" not in p.stdout and "attr_middle" in p.stdout,
          f"the tool's run names the function itself, no re-run:\n{p.stdout[-800:]}")
    ran = callgrind_runs()
    check(not ran, f"--baseline on the tool ran no callgrind: {ran}")
    root = ET.parse(junit).getroot()
    fails = list(root.iter("failure"))
    check(len(fails) == 1 and fails[0].get("type") == "REGRESSION" and root.get("failures") == "1",
          f"one REGRESSION failure in JUnit: {[(f.get('type'), f.get('message')) for f in fails]}")
    body = fails[0].text if fails else ""
    check(body and "regression against the baseline" in body and "attr_middle" in body and
          f"+{grew} (100.0% of the change)" in body and "unbudgeted" not in body,
          f"the JUnit failure names the function: {body}")

    # Without a baseline: calibrate the first build, run the second against
    # its budget; the failure names the function against calibration.
    hw = os.path.join(d, "hwdb")
    os.makedirs(hw)
    p = subprocess.run([BEFORE, "--backend=sim", "--calibrate", f"--hwdb={hw}"], capture_output=True,
                       text=True, timeout=300, env=SPIED)
    check(p.returncode == 0 and "functions of each region for attribution: counted by pmcheck's valgrind tool"
          in p.stdout, f"calibrate: {p.stdout[-600:]}")
    ran = callgrind_runs()
    check(not ran, f"--calibrate on the tool ran no callgrind: {ran}")
    fj = [os.path.join(r, f) for r, _, fs in os.walk(hw) for f in fs if f.endswith(".functions.json")]
    # One beside each file of budgets: the build's key, and "any" (calls:).
    check(len(fj) == 2, f"a functions file beside each file of budgets: {fj}")
    p = subprocess.run([CLI, "hwdb", "check", f"--hwdb={hw}"], capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"hwdb check accepts it: {p.stdout} {p.stderr}")
    p = subprocess.run([AFTER, "--backend=sim", f"--hwdb={hw}", f"--json={os.path.join(d, 'gate.json')}"],
                       capture_output=True, text=True, timeout=300, env=SPIED)
    ran = callgrind_runs()
    check(not ran, f"the failing case on the tool ran no callgrind: {ran}")
    check(p.returncode == 1 and "FAIL" in p.stdout and "against calibration" in p.stdout and
          f"attr_middle +{grew} (100% of the change)" in p.stdout,
          f"the failed budget names the function:\n{p.stdout[-1200:]}")
    with open(os.path.join(d, "gate.json")) as f:
        case = json.load(f)["cases"][0]
    check(f"attr_middle +{grew}" in case.get("reason", "") and
          any(f"attr_middle +{grew}" in c["message"] for c in case["checks"]),
          f"the record's reason and check carry it: {case.get('reason')}")
    # The tool counted the case and its functions: no re-run is noted.
    check(case.get("sim_engine") == "pmcheck" and
          not any("callgrind" in n for n in case.get("notes", [])) and
          any(f["function"] == "attr_middle" for f in case["regions"][0].get("functions", [])),
          f"the failure's functions are the tool's, with no callgrind re-run: {case.get('notes')}")

    # Run from a terminal (no results file, no baseline, not under CTest):
    # a gate's case (budgets under this build's key) counts its functions
    # from the start, so its failure names them with no second run.
    p = subprocess.run([AFTER, "--backend=sim", f"--hwdb={hw}"], capture_output=True, text=True,
                       timeout=300, env=SPIED)
    ran = callgrind_runs()
    check(p.returncode == 1 and f"attr_middle +{grew} (100% of the change)" in p.stdout and
          "run once more" not in p.stdout,
          f"the terminal run's failure names the function, from its one run:\n{p.stdout[-1200:]}")
    check(not ran, f"the terminal run's failure ran no callgrind: {ran}")
    # A case that is no gate's (no budget here; a bound in its code) counts
    # none, and its failure is run once more with them: by the tool, not
    # callgrind.
    empty = os.path.join(d, "no-budgets")
    os.makedirs(empty, exist_ok=True)
    bound = dict(SPIED, ATTR_AT_MOST=str(regions["before"]["events"]["instructions:u"]["min"]),
                 PMCHECK_SIM_ENV="ATTR_AT_MOST")
    p = subprocess.run([AFTER, "--backend=sim", f"--hwdb={empty}", "--filter=attr.three_functions"],
                       capture_output=True, text=True, timeout=300, env=bound)
    ran = callgrind_runs()
    check(p.returncode == 1 and "run once more with pmcheck's valgrind tool counting function costs" in p.stdout,
          f"an ungated failure is run once more for its functions:\n{p.stdout[-1200:]}")
    check(not ran, f"the ungated failure ran no callgrind: {ran}")

    # A failed count of one function's entries: its callers explain it.
    # Calibrated with attr_steady and attr_growing calling attr_first once
    # each; ATTR_TWICE makes attr_growing call it twice.  The failure names
    # attr_growing (1 -> 2) and not attr_steady, whose calls did not move,
    # against the functions file beside the calls: budget (under "any"),
    # counted by the tool (no callgrind) and by callgrind alike.
    fj_any = os.path.join(hw, "budgets", "any", "attr.functions.json")
    check(os.path.exists(fj_any), f"a functions file beside the calls: budget: {fj_any}")
    with open(fj_any) as f:
        rows = json.load(f)["cases"].get("attr.calls_only", {}).get("calls", [])
    callers = {r["function"]: r["costs"].get("calls:attr_first") for r in rows}
    check(callers == {"attr_steady": 1, "attr_growing": 1},
          f"calibration keeps attr_first's callers, one call each: {callers}")
    twice = dict(SPIED, ATTR_TWICE="1", PMCHECK_SIM_ENV="ATTR_TWICE")
    for engine, extra in (("pmcheck", []), ("pmcheck", [f"--json={os.path.join(d, 'calls.json')}"]),
                          ("callgrind", [])):
        p = subprocess.run([AFTER, "--backend=sim", f"--hwdb={hw}", "--filter=attr.calls_only",
                            f"--sim-engine={engine}", *extra],
                           capture_output=True, text=True, timeout=300, env=twice)
        ran = callgrind_runs()
        line = next((l for l in p.stdout.splitlines() if "calls:attr_first: measured 3" in l), "")
        check(p.returncode == (1 if engine == "pmcheck" else 4) and
              "that call it more: attr_growing +1 (1 -> 2)." in line and "attr_steady" not in line,
              f"calls: failure {engine} {extra}: names the caller that moved, not the other:\n{p.stdout[-1200:]}")
        check(bool(ran) == (engine == "callgrind"), f"calls: failure {engine} {extra}: callgrind runs {ran}")

    # On perf, where the kernel can say: the failure is run once more with
    # the uprobe sampled at every call, each sample naming the caller by
    # the return address on the stack (x86-64), and the callers are
    # compared with the ones the sim calibration kept.
    p = subprocess.run([AFTER, "--backend=perf", f"--hwdb={hw}", "--filter=attr.calls_only"],
                       capture_output=True, text=True, timeout=120, env=dict(ENV, ATTR_TWICE="1"))
    line = next((l for l in p.stdout.splitlines() if "calls:attr_first: measured 3" in l), "")
    if p.returncode == 77:
        # uprobes need root or CAP_PERFMON: the case is a SKIP with why.
        print(f"perf part skipped: {p.stdout[-400:]}")
    elif os.uname().machine != "x86_64":
        check(p.returncode == 1 and "Callers against calibration" not in line,
              f"perf, {os.uname().machine}: the failure has no callers:\n{p.stdout[-1200:]}")
    else:
        against = line.split("Callers against calibration")[-1]
        check(p.returncode == 1 and "exact: 9 calls over 3 executions): attr_growing 6" in line and
              "attr_steady 3" in line,
              f"perf: the failure names this run's callers, exactly:\n{p.stdout[-1200:]}")
        check("Callers against calibration" in line and
              "that call it more: attr_growing +1 (1 -> 2)." in against and "attr_steady" not in against,
              f"perf: against calibration, the caller that moved and not the other:\n{p.stdout[-1200:]}")

    # The same failure with a tool too old for function costs (a build of
    # protocol 3, as PMCHECK_FAULT_CHECKS=sim-tool-3 makes it answer): the
    # results say why, and the functions come from one more run under
    # callgrind, as before protocol 4.
    old = dict(SPIED, PMCHECK_FAULT_CHECKS="sim-tool-3")
    p = subprocess.run([AFTER, "--backend=sim", f"--hwdb={hw}", f"--json={os.path.join(d, 'old.json')}"],
                       capture_output=True, text=True, timeout=300, env=old)
    ran = callgrind_runs()
    check(p.returncode == 1 and f"attr_middle +{grew} (100% of the change)" in p.stdout,
          f"the old tool's failure names the function too:\n{p.stdout[-1200:]}")
    check(len(ran) == 1, f"one callgrind run, for the functions: {ran}")
    with open(os.path.join(d, "old.json")) as f:
        case = json.load(f)["cases"][0]
    notes = case.get("notes", [])
    check(any("no function costs from this run" in n and "protocol 3" in n for n in notes) and
          any("run once more under callgrind" in n for n in notes),
          f"the results say why callgrind ran: {notes}")


finish()
