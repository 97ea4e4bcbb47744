#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The sim backend end to end, under the real valgrind.

usage: test_sim.py CHECK KERNELS_EXE EXAMPLES_EXE PMCHECK_CLI   (exit 0 pass, 1 fail, 77 skip)
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CHECK, KERNELS, EXAMPLES, CLI, COST = sys.argv[1:6]
# The tree's budgets recorded here for the cases whose libraries moved
# (kernels.budgets_here, suites/CMakeLists.txt), searched first as the
# suite's own sim tests do; CTest sets it for sim.gate.  The runs below
# otherwise see no hwdb of the caller's.
HWDB_HERE = [f"--hwdb={d}" for d in os.environ.get("PMCHECK_HWDB", "").split(":") if d]


def env_for(extra=None, path=None):
    e = dict(os.environ)
    for k in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "PMCHECK_GATE_SLOWER"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    # Under sim a case sees only the variables PMCHECK_SIM_ENV names.
    e["PMCHECK_SIM_ENV"] = "PMCHECK_GATE_SLOWER"
    if path is not None:
        e["PATH"] = path
    if extra:
        e.update(extra)
    return e


def run(exe, *args, extra=None, path=None, timeout=280):
    return subprocess.run([exe, *args], capture_output=True, text=True,
                          env=env_for(extra, path), timeout=timeout)


def figures(doc):
    """{(case, region, event): [samples]} of a results document."""
    out = {}
    for c in doc["cases"]:
        for r in c.get("regions", []):
            for ev, st in r["events"].items():
                out[(c["name"], r["name"], ev)] = st["values"]
    return out


def sim_run(*args, extra=None):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        p = run(KERNELS, "--backend=sim", "--json=" + path, *args, extra=extra)
        doc = json.load(open(path)) if os.path.exists(path) else None
        return p, doc


# Events whose simulated counts depend only on the code executed.
EXACT = ("instructions:u", "branches", "L1-dcache-loads")


def t_determinism():
    """Instructions, branches and loads repeat exactly over three runs and
    with a larger caller environment (which the case does not see); misses
    may not.  kernels.threads_sum is left out: how two threads interleave
    under valgrind moves its thread creation and join by a few instructions
    (its case states the allowance)."""
    flt = "--filter=kernels.*,-kernels.threads_sum"
    runs = []
    for i in range(3):
        p, doc = sim_run(flt)
        check(p.returncode == 0 and doc, f"run {i}: exit {p.returncode}: {p.stdout}{p.stderr}")
        if doc:
            runs.append(figures(doc))
    p, doc = sim_run(flt, extra={"PMCHECK_TEST_PADDING": "x" * 6000})
    check(p.returncode == 0 and doc, f"padded run: exit {p.returncode}: {p.stdout}{p.stderr}")
    if doc:
        runs.append(figures(doc))
    if len(runs) != 4:
        return
    compared = 0
    for key, vals in runs[0].items():
        if key[2] not in EXACT:
            continue
        compared += 1
        for i, other in enumerate(runs[1:], 1):
            check(other.get(key) == vals,
                  f"{key}: run 0 {vals} != run {i} {other.get(key)}")
        check(len(set(vals)) == 1, f"{key}: samples of one run differ: {vals}")
    check(compared >= 8, f"compared {compared} exact series")
    env = doc["environment"]
    check(env["backend"] == "sim" and env["sim"]["valgrind"].startswith("valgrind-"),
          f"environment records the simulator: {env.get('sim')}")
    check(env["sim"]["LL"] == "8388608,16,64", f"geometry recorded: {env['sim']}")
    case = doc["cases"][0]
    check(case.get("read_path") == "sim" and case.get("sim_profile", "").startswith("sim-"),
          f"case records read path and profile: {case.get('read_path')} {case.get('sim_profile')}")


def t_gate():
    """The bundled gate passes on its recorded sim budgets; an extra pass over
    the input fails it with a report that names the budget's file:line."""
    p, doc = sim_run("--filter=gate.checksum", "--strict", *HWDB_HERE)
    check(p.returncode == 0, f"gate passes on the built-in sim budgets: {p.stdout}{p.stderr}")
    p, doc = sim_run("--filter=gate.checksum", "--strict", *HWDB_HERE, extra={"PMCHECK_GATE_SLOWER": "1"})
    check(p.returncode == 1, f"slower code fails the gate (exit {p.returncode})")
    # A library that differs from calibration is named first (the tree's
    # budgets were calibrated while pmcheck still loaded libinih).
    m = re.search(r'region "checksum", instructions:u: (library .*; )?measured (\d+) .*expected = (\d+): '
                  r'over by \d+ \(\+([\d.]+)% of the budget\); budget from (\S+gate\.ini):(\d+)', p.stdout)
    check(m is not None, f"readable report: {p.stdout}")
    if m:
        check(int(m.group(2)) > int(m.group(3)), "measured above budget")
        check("budgets/<key>/" in m.group(5), f"budget from the sim profile key, written <key>: {m.group(5)}")
    # The key once per run, in the header, and in no case's line.
    head = re.findall(r'^sim: key (sim-\S+) \(written "<key>" below\)$', p.stdout, re.M)
    check(len(head) == 1 and p.stdout.count(head[0]) == 1 and doc and
          all(c.get("sim_profile") == head[0] for c in doc["cases"]),
          f"the header names the cases' sim key once: {head} {p.stdout}")


def t_calibrate_round_trip():
    """Record sim budgets into an empty hwdb, re-run: pass; change the code: fail."""
    with tempfile.TemporaryDirectory() as d:
        p = run(KERNELS, "--backend=sim", "--filter=gate.checksum", "--calibrate=3", "--hwdb=" + d)
        check(p.returncode == 0, f"calibrate: exit {p.returncode}: {p.stdout}{p.stderr}")
        keys = os.listdir(os.path.join(d, "budgets")) if os.path.isdir(os.path.join(d, "budgets")) else []
        check(len(keys) == 1 and keys[0].startswith("sim-"), f"one sim profile key: {keys}")
        # The key once, in the run's header; each file written names it <key>.
        check(keys and p.stdout.count(keys[0]) == 1 and f"  {d}/budgets/<key>/gate.ini [" in p.stdout,
              f"calibration names the sim key once: {p.stdout}")
        if keys:
            text = open(os.path.join(d, "budgets", keys[0], "gate.ini")).read()
            check(re.search(r"checksum = instructions:u = \d+ ; calibrated: 3 equal runs, exact\n", text) is not None,
                  f"exact budget for instructions on sim: {text}")
            # Three more runs move the heap; no flat margin on sim.
            m = re.search(r"checksum = L1-dcache-load-misses <= (\d+) ; calibrated: a miss count, 6 runs (\d+)\.\.(\d+) over as many memory layouts \(stack, environment and heap\), max \+ \d+ \(twice the spread, or twice its square root\)\n", text)
            check(m is not None and int(m.group(1)) == int(m.group(3)) + max(2 * (int(m.group(3)) - int(m.group(2))), math.ceil(2 * math.sqrt(int(m.group(3)))), 2),
                  f"layout-spread budget for a layout-dependent miss count: {text}")
        p = run(KERNELS, "--backend=sim", "--filter=gate.checksum", "--strict", "--hwdb=" + d)
        check(p.returncode == 0, f"re-run passes: {p.stdout}")
        p = run(KERNELS, "--backend=sim", "--filter=gate.checksum", "--strict", "--hwdb=" + d,
                extra={"PMCHECK_GATE_SLOWER": "1"})
        check(p.returncode == 1 and "over by" in p.stdout, f"changed code fails: {p.stdout}")
        # The user's directory comes before the built-in hwdb.
        check(f"budget from {d}/budgets/<key>/gate.ini" in p.stdout and f"sim: key {keys[0]} " in p.stdout,
              f"the recorded budget judged: {p.stdout}")


def t_no_valgrind():
    """Without valgrind on PATH, --backend=sim is a clear error, not a skip."""
    with tempfile.TemporaryDirectory() as d:
        p = run(KERNELS, "--backend=sim", "--filter=kernels.loop_linear", path=d)
        check(p.returncode == 2, f"exit {p.returncode}, want 2 (error)")
        check("valgrind" in p.stderr and "apt-get install valgrind" in p.stderr and
              "--backend=perf" in p.stderr, f"message names the fix: {p.stderr}")
        # Listing needs no simulator.
        p = run(KERNELS, "--list", path=d)
        check(p.returncode == 0 and "kernels.loop_linear" in p.stdout, f"--list works: {p.stderr}")


def t_unsupported_events():
    """Events with no simulated equivalent skip with the reason; cases that
    cannot run on sim get no .sim variant in the listing."""
    p = run(EXAMPLES, "--backend=sim", "--filter=software.page_faults_first_touch")
    check(p.returncode == 77, f"exit {p.returncode}, want 77 (skip): {p.stdout}")
    check('cannot count "page-faults" on the sim backend' in p.stdout, f"reason: {p.stdout}")
    # calls: is counted by callgrind itself: the same figure as the uprobe's.
    p = run(EXAMPLES, "--backend=sim", "--filter=calls.three_allocations")
    check(p.returncode == 0 and "PASS" in p.stdout, f"calls: on sim: {p.returncode} {p.stdout}")
    p = run(EXAMPLES, "--list=tsv")
    for line in p.stdout.splitlines():
        name, backends = line.split("\t")[0], line.split("\t")[4]
        if name.startswith(("software.", "breakpoints.")):
            check("sim" not in backends, f"{name}: offered on sim: {line}")
        if name.startswith("calls."):
            check("sim" in backends, f"{name}: calls: cases run on sim too: {line}")
    p = run(KERNELS, "--list=tsv")
    sims = [l.split("\t")[0] for l in p.stdout.splitlines() if l.split("\t")[4].endswith("sim")]
    check("kernels.loop_linear" in sims and "gate.checksum" in sims, f"sim variants: {sims}")


def t_cli():
    """`pmcheck sim -- PROG` runs a program under the simulator; `pmcheck events`
    shows each event's simulated equivalent."""
    p = subprocess.run([CLI, "events", "instructions,branch-misses,cycles,sim:Bc"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"events: {p.stderr}")
    lines = [l for l in p.stdout.splitlines() if not l.startswith(" ")]
    check(len(lines) == 4 and "sim=Ir" in lines[0] and "sim=Bcm+Bim" in lines[1] and
          "sim=unsupported" in lines[2] and "sim=Bc" in lines[3], f"events: {p.stdout}")
    check('    cannot count "cycles" on the sim backend: callgrind simulates instructions' in p.stdout,
          f"events says why not, in the SKIP's words: {p.stdout}")
    p = subprocess.run([CLI, "events", "calls:malloc"], capture_output=True, text=True)
    check(p.returncode == 0 and "sim=calls" in p.stdout, f"calls: on sim: {p.stdout}")
    p = subprocess.run([CLI, "sim", "--", KERNELS, "--filter=kernels.loop_linear", "--backend=sim"],
                       capture_output=True, text=True, env=env_for(), timeout=200)
    check(p.returncode == 0 and "PASS" in p.stdout, f"pmcheck sim: {p.returncode} {p.stdout}{p.stderr}")
    # --print-command: the environment and the valgrind options of a sim run
    # on callgrind (the engine a bare valgrind has), exactly those
    # `pmcheck sim -v` shows for a real one there (less its own files).
    p = subprocess.run([CLI, "sim", "--print-command"], capture_output=True, text=True)
    printed = p.stdout.split()
    v = subprocess.run([CLI, "sim", "-v", "--", "/bin/true"], capture_output=True, text=True, timeout=200,
                       env=dict(os.environ, PMCHECK_SIM_ENGINE="callgrind"))
    shown = [w for w in v.stderr.splitlines()[0].split()[1:]
             if not w.startswith(("--callgrind-out-file=", "--log-file="))]
    # The run itself starts the launcher Debian's valgrind script would
    # (valgrind.bin), so the program sees no variable the script adds.
    shown = [("valgrind" if w.endswith(("/valgrind", "/valgrind.bin")) else w) for w in shown if w != "/bin/true" and not w.endswith("/true")]
    check(p.returncode == 0 and printed == shown and "--cache-sim=yes" in printed and "LD_BIND_NOW=1" in printed,
          f"--print-command {printed} against -v {shown}")
    p = subprocess.run([CLI, "sim"], capture_output=True, text=True)
    check(p.returncode == 64 and "expected a program" in p.stderr and "pmcheck sim --help" in p.stderr,
          f"usage: {p.stderr}")
    p = subprocess.run([CLI, "sim", "--bogus", "/bin/true"], capture_output=True, text=True)
    check(p.returncode == 64 and '"--bogus"' in p.stderr, f"unknown option: {p.stderr}")
    p = subprocess.run([CLI, "sim", "--help"], capture_output=True, text=True)
    check(p.returncode == 0 and "--print-command" in p.stdout and "exit status" in p.stdout,
          f"--help: {p.stdout}")
    p = subprocess.run([CLI, "sim", "--", "/nonexistent/prog"], capture_output=True, text=True)
    check(p.returncode == 2 and "/nonexistent/prog" in p.stderr, f"missing program: {p.stderr}")


def t_narrowed():
    """A case's valgrind simulates only what it asks and instruments from its
    first set; --sim-full simulates everything from the start.  Counts of
    what the program executes are the same either way, and so are the
    misses of a case that asks for them; a case that asks for no cache
    event cannot count one added at run time, and says why."""
    def counts(case, *extra):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            p = run(COST, "--backend=sim", f"--filter={case}", f"--json={path}", *extra)
            check(p.returncode == 0, f"{case} {extra}: {p.returncode} {p.stdout}")
            with open(path) as f:
                g = json.load(f)["cases"][0]["regions"][0]["events"]
            return {k: (v["min"], v["max"]) for k, v in g.items()}
    for case in ("cost.instructions", "cost.misses"):
        narrow, full = counts(case), counts(case, "--sim-full")
        # Executed work: every sample equal.  Misses: the caches and the
        # predictor start empty at the first set (set-up ran unsimulated),
        # so a sample may differ, and the smallest, which budgets judge, by
        # at most 1 in 10000 (measured: equal in the gcc build; 1 of 33468
        # L1 misses and 1 of 222115 branch misses in the clang build).
        misses = [k for k in narrow if "miss" in k]
        check(narrow and narrow["instructions:u"] == full["instructions:u"] and
              all(narrow[k][0] == full[k][0] for k in narrow if k not in misses) and
              all(abs(narrow[k][0] - full[k][0]) <= max(1, full[k][0] // 10000) for k in misses),
              f"{case}: narrowed {narrow} against whole {full}")
    # Instructions only: pmcheck's valgrind tool, counting no loads, stores
    # or branches (or, where it is not built, callgrind without simulation).
    p = run(COST, "--backend=sim", "--filter=cost.instructions", "--verbose")
    out = p.stdout + p.stderr
    check(("--tool=pmcheck" in out and "--pmcheck-memory=no" in out and "--pmcheck-branches=no" in out and
           "sim: engine pmcheck:" in out) or
          ("sim: engine callgrind: pmcheck's valgrind tool" in out and "--cache-sim=no" in out),
          f"instructions only: the tool, counting nothing more: {out[-800:]}")
    p = subprocess.run([COST, "--backend=sim", "--filter=cost.instructions", "--verbose"], capture_output=True,
                       text=True, timeout=300, env=dict(os.environ, PMCHECK_SIM_ENGINE="callgrind"))
    out = p.stdout + p.stderr
    check("--cache-sim=no" in out and "--branch-sim=no" in out and "--instr-atstart=no" in out and
          "sim: engine callgrind: callgrind chosen" in out,
          f"instructions only under callgrind: no simulation: {out[-800:]}")
    # Misses: the tool with both models, from the first set on; or, where
    # the tool is not built, callgrind with both simulations.
    p = run(COST, "--backend=sim", "--filter=cost.misses", "--verbose")
    out = p.stdout + p.stderr
    check(("--pmcheck-cache-sim=yes" in out and "--pmcheck-branch-sim=yes" in out and
           "--pmcheck-models-atstart=no" in out and "sim: engine pmcheck:" in out) or
          ("sim: engine callgrind: pmcheck's valgrind tool" in out and "--cache-sim=yes" in out and
           "--branch-sim=yes" in out),
          f"misses: both simulations: {out[-800:]}")
    # An event with no simulated equivalent: skipped without valgrind.
    p = run(EXAMPLES, "--backend=sim", "--filter=software.page_faults_first_touch", "--verbose")
    check(p.returncode == 77 and "valgrind --tool" not in p.stdout + p.stderr,
          f"skipped before valgrind starts: {p.stdout[-600:]}")


if os.environ.get("PMCHECK_TEST_SANITIZED") == "1":
    print("SKIP: this is a sanitizer build; valgrind cannot run AddressSanitizer programs")
    sys.exit(77)
if shutil.which("valgrind") is None and CHECK != "no_valgrind":
    print("SKIP: valgrind is not installed (ci/setup installs it)")
    sys.exit(77)
globals()["t_" + CHECK]()
finish()
