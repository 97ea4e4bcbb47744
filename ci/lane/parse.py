#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Turn the emulated lane's console log into verdicts and result files.

usage: parse.py CONSOLE_LOG OUT_DIR     (exit 0: every command ended as expected)

The guest (ci/lane/init) frames each command with
  @@LANE-BEGIN NAME ... @@LANE-END NAME rc=N expect=A,B start=S end=E
and sends files as @@LANE-FILE NAME, base64 lines, @@LANE-FILE-END.  A
command that never ended (guest crash, timeout) is a failure, as is a log
without @@LANE-DONE.
"""
import base64
import json
import os
import re
import sys

log_path, out = sys.argv[1:3]
os.makedirs(out, exist_ok=True)
text = open(log_path, errors="replace").read().replace("\r", "")

kernel = re.search(r"^@@LANE-KERNEL (\S+)", text, re.M)
access = re.search(r"^@@LANE-USER-ACCESS (\S+)", text, re.M)
rows, problems = [], []
for m in re.finditer(r"^@@LANE-BEGIN (\S+)\n(.*?)^@@LANE-END (\S+) rc=(\d+) expect=(\S+) "
                     r"start=([\d.]+) end=([\d.]+)$", text, re.M | re.S):
    name, body, name2, rc, expect, t0, t1 = m.groups()
    ok = name == name2 and rc in expect.split(",")
    rows.append({"name": name, "exit": int(rc), "expected": expect, "ok": ok,
                 "seconds": round(float(t1) - float(t0), 2), "output": body})
    with open(os.path.join(out, name + ".log"), "w") as f:
        f.write(body)
begun = re.findall(r"^@@LANE-BEGIN (\S+)$", text, re.M)
for name in begun:
    if name not in [r["name"] for r in rows]:
        problems.append(f"{name}: started but never ended (crash or time limit); see {log_path}")
for m in re.finditer(r"^@@LANE-FILE (\S+)\n(.*?)^@@LANE-FILE-END$", text, re.M | re.S):
    name, data = m.groups()
    with open(os.path.join(out, name), "wb") as f:
        f.write(base64.b64decode("".join(data.split())))
if "@@LANE-DONE" not in text:
    problems.append(f"the guest did not finish (no @@LANE-DONE); last lines:\n" +
                    "\n".join(text.splitlines()[-15:]))

print(f"kernel {kernel.group(1) if kernel else '?'}, perf_user_access "
      f"{access.group(1) if access else '?'}")
print(f"{'command':<20} {'exit':>4} {'expected':>8} {'seconds':>8}  verdict")
for r in rows:
    print(f"{r['name']:<20} {r['exit']:>4} {r['expected']:>8} {r['seconds']:>8}  "
          f"{'ok' if r['ok'] else 'FAILED'}")
    if not r["ok"]:
        print("  | " + "\n  | ".join(r["output"].splitlines()[-40:]))
for p in problems:
    print("FAILED:", p)
summary = {"kernel": kernel.group(1) if kernel else None,
           "perf_user_access": access.group(1) if access else None,
           "commands": [{k: v for k, v in r.items() if k != "output"} for r in rows],
           "problems": problems}
tmp = os.path.join(out, "lane.json.tmp")
with open(tmp, "w") as f:
    json.dump(summary, f, indent=1)
os.replace(tmp, os.path.join(out, "lane.json"))
sys.exit(0 if rows and all(r["ok"] for r in rows) and not problems else 1)
