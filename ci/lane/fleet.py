#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The emulated lane's fleet: every CPU model's results in one history store.

usage: fleet.py WORK SRC MODEL...     (exit 0: every check held)

After ci/qemu-lane has booted each model (results-MODEL/) and "max" on the
model kernel (results-default/ or the first kernel's), this:
  1. prints `pmcheck validate` per model (model, listed, verdicts);
  2. runs the host's gate.loop on the sim backend (build-ci or build);
  3. adds every model's gate results and the sim's into one SQLite history
     store (WORK/fleet/history.sqlite), all of one commit;
  4. pools budgets per model from it (hwdb merge --from-history) and checks
     that each model's pooled budget is the one hwdb files for that model,
     under that model's key and no other;
  5. runs history changes and report on the store.
"""
import json
import os
import re
import shutil
import subprocess
import sys

work, src, models = sys.argv[1], sys.argv[2], sys.argv[3:]
fleet = os.path.join(work, "fleet")
shutil.rmtree(fleet, ignore_errors=True)
os.makedirs(fleet)
problems = []


def problem(msg):
    problems.append(msg)
    print("FAILED:", msg)


host = next((b for b in (os.path.join(src, "build-ci"), os.path.join(src, "build"))
             if os.access(os.path.join(b, "framework/tools/pmcheck"), os.X_OK)), None)
if not host:
    print("fleet: no host build (build-ci or build) to add the sim's results and run pmcheck; skipped")
    sys.exit(0)
cli = os.path.join(host, "framework/tools/pmcheck")

# 1. validation per model
print(f"{'model':<14} {'hwdb model':<14} {'listed':<7} {'pass':>5} {'fail':>5} {'skip':>5}  signature")
for m in models:
    path = os.path.join(work, f"results-{m}", "validation.json")
    try:
        with open(path) as f:
            v = json.load(f)
    except (OSError, ValueError) as e:
        problem(f"{m}: no validation report ({e})")
        continue
    rows = v.get("rows", [])
    verdicts = [r.get("verdict", r.get("status", "")) for r in rows]
    npass = sum(x in ("PASS", "pass") for x in verdicts)
    nfail = sum(x in ("FAIL", "fail") for x in verdicts)
    print(f"{m:<14} {v['model'].get('id', '?'):<14} {str(v['model'].get('listed')):<7} {npass:>5} {nfail:>5} "
          f"{len(v.get('skipped', [])):>5}  {v['environment']['cpu']['signature']}")
    if v["model"].get("id") != m:
        problem(f"-cpu {m}: hwdb mapped its MIDR ({v['environment']['cpu']['signature']}) to "
                f"{v['model'].get('id')!r}, not {m!r}")
    if nfail or not npass:
        problem(f"{m}: validation {npass} passed, {nfail} failed")

# 2. the host's sim run of the same case, of the same commit
# The commit the guests were booted with (ci/qemu-lane passes it): HEAD read
# now may have moved on while the lane ran, and a store of two commits pools
# only the newer one's runs.
commit = os.environ.get("PMCHECK_LANE_COMMIT") or subprocess.run(
    ["git", "-C", src, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip() or "0" * 40
env = dict(os.environ, PMCHECK_GIT_COMMIT=commit)
files = []
sim_json = os.path.join(fleet, "sim.json")
p = subprocess.run([os.path.join(host, "suites/sim/pmcheck_kernels"), "--backend=sim",
                    "--filter=gate.loop", "--strict", f"--json={sim_json}"],
                   capture_output=True, text=True, env=env, timeout=600)
if p.returncode == 0:
    files.append(sim_json)
else:
    problem(f"host sim gate.loop: exit {p.returncode}\n{p.stdout[-600:]}{p.stderr[-300:]}")
# "max" on the kernel the models booted, and each model
kmax = os.path.join(work, "results-" + os.environ.get("PMCHECK_LANE_MODEL_KERNEL", "default"), "kernels.json")
if os.path.exists(kmax):
    files.append(kmax)
else:
    problem(f"no results of -cpu max on the models' kernel ({kmax})")
for m in models:
    g = os.path.join(work, f"results-{m}", "gate.json")
    if os.path.exists(g):
        files.append(g)
    else:
        problem(f"{m}: no gate results")

# 3. one store
db = os.path.join(fleet, "history.sqlite")
p = subprocess.run([cli, "history", f"--db={db}", "add", *files], capture_output=True, text=True)
print(p.stdout.strip())
if p.returncode:
    problem(f"history add: {p.returncode} {p.stderr}")

# 4. budgets pooled per model, from the store
merged = os.path.join(fleet, "merged")
p = subprocess.run([cli, "hwdb", "merge", f"--hwdb={merged}", f"--from-history={db}"],
                   capture_output=True, text=True)
print(p.stdout.strip())
if p.returncode:
    problem(f"hwdb merge --from-history: exit {p.returncode} {p.stderr}")


def loop_budget(path):
    try:
        with open(path) as f:
            m = re.search(r"^loop = instructions:u = (\d+)", f.read(), re.M)
            return int(m.group(1)) if m else None
    except OSError:
        return None


keys = sorted(os.listdir(os.path.join(merged, "budgets"))) if os.path.isdir(os.path.join(merged, "budgets")) else []
print("pooled budget keys:", ", ".join(keys))
for m in ["qemu-max"] + models:
    got = loop_budget(os.path.join(merged, "budgets", m, "gate.ini"))
    want = loop_budget(os.path.join(src, "hwdb", "budgets", m, "gate.ini"))
    print(f"  {m:<14} pooled {got}  filed {want}")
    if got is None or got != want:
        problem(f"{m}: the budget pooled from the store ({got}) is not the one hwdb files for it ({want})")
sims = [k for k in keys if k.startswith("sim-")]
if len(sims) != 1:
    problem(f"the sim's run pooled under {len(sims)} sim keys: {sims}")
if len(keys) != len(models) + 1 + len(sims):
    problem(f"one key per model and the sim profile, no other: {keys}")

# 5. the store's changes and page
for args in (["changes"], ["report", f"--html={os.path.join(fleet, 'report')}"]):
    p = subprocess.run([cli, "history", f"--db={db}", *args], capture_output=True, text=True)
    print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else p.stderr.strip())
    if p.returncode:
        problem(f"history {args[0]}: exit {p.returncode} {p.stderr}")

print("fleet:", "ok" if not problems else f"{len(problems)} problem(s)")
sys.exit(1 if problems else 0)
