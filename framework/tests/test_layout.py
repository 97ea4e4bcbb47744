#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Budgets that survive unrelated changes, and failures that say whose
change it was (sim backend).  One program, layout_work.c, is calibrated
as built; then, each copied in place of it under the same name:
  - rebuilds that only add an unrelated global and function (the tables
    and string literals move): every budget holds, exact and noisy; where
    an exact count moved, the check says "layout" and how;
  - real changes of +0.05% and of a few instructions: they fail;
  - its shared library replaced in place by another build: it fails and
    the console, JSON, JUnit and Markdown name the library and its share;
  - another program with a suite of the same name: refused, in words.
Arguments: CLI LIB_V1 LIB_V2 base more tiny pad..."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

from checks import check, finish

CLI, LIB_V1, LIB_V2, BASE, MORE, TINY = sys.argv[1:7]
PADS = sys.argv[7:]

d = tempfile.mkdtemp(prefix="pmcheck-layout-")
gate = os.path.join(d, "layout_gate")
lib = os.path.join(d, "liblayoutdep.so.1")
hw = os.path.join(d, "hwdb")


def install(program, library=LIB_V1):
    """The project's build: the program, and the library beside it, each
    replaced in place (a rename, as a package manager does)."""
    for src, dst in ((program, gate), (library, lib)):
        shutil.copy2(src, dst + ".new")
        os.replace(dst + ".new", dst)


def run(*args, program=gate, timeout=300):
    return subprocess.run([program, "--backend=sim", f"--hwdb={hw}", *args], capture_output=True,
                          text=True, timeout=timeout)


def checks_of(path):
    with open(path) as f:
        case = json.load(f)["cases"][0]
    return case, {c["event"]: c for c in case["checks"]}


install(BASE)
p = run("--calibrate")
check(p.returncode == 0, f"calibrate: {p.returncode}\n{p.stdout}{p.stderr}")
cal = [os.path.join(r, f) for r, _, fs in os.walk(hw) for f in fs if f.endswith(".calibration.json")]
check(len(cal) == 1, f"one calibration file beside the budgets: {cal}")
if cal:
    with open(cal[0]) as f:
        doc = json.load(f)
    names = [os.path.basename(o["path"]) for o in doc.get("objects", [])]
    check(doc.get("program") == "layout_gate" and doc.get("pmcheck") and
          "liblayoutdep.so.1" in names and all(re.match(r"^(build-id|fnv1a64):[0-9a-f]+$", o["id"])
                                                for o in doc["objects"]),
          f"the calibration file names the program, pmcheck and the libraries: {doc}")
p = run()
check(p.returncode == 0, f"the calibrated build passes: {p.returncode}\n{p.stdout}")

# Layout-only rebuilds: no false failure, and every moved count said.
false_failures, moved = 0, 0
for pad in PADS:
    install(pad)
    out = os.path.join(d, "pad.json")
    p = run(f"--json={out}")
    if p.returncode != 0:
        false_failures += 1
        print(f"false failure: {os.path.basename(pad)}:\n{p.stdout}")
        continue
    case, by = checks_of(out)
    ins = by.get("instructions:u", {})
    if ins.get("layout"):
        moved += 1
        check("Layout, not a regression" in ins["message"] and
              any(n.startswith("layout: region \"work\"") for n in case["notes"]) and
              "note: layout:" in p.stdout,
              f"{os.path.basename(pad)}: a moved exact count is said, in the check, the note and the console:\n{p.stdout}")
        check(re.match(r"^\S+ [-+]\d+ over \d+ calls", ins["layout"]),
              f"the layout field names the function, its change and its calls: {ins['layout']}")
    else:
        check(ins.get("measured") == ins.get("lo"), f"{os.path.basename(pad)}: exact and equal: {ins}")
print(f"layout-only rebuilds: {len(PADS)}, false failures: {false_failures}, "
      f"exact counts moved and passed as layout: {moved}")
check(false_failures == 0, f"no layout-only rebuild fails ({false_failures} of {len(PADS)} did)")
check(moved > 0, "at least one rebuild moved an exact count (else the test tests nothing)")

# Real changes fail, with the function that changed.
for prog, what in ((MORE, "+0.05%"), (TINY, "a few instructions")):
    install(prog)
    out = os.path.join(d, "real.json")
    p = run(f"--json={out}")
    case, by = checks_of(out)
    ins = by.get("instructions:u", {})
    check(p.returncode == 1 and ins.get("status") == "fail" and not ins.get("layout") and
          "pmc__body_layout__sort_and_copy" in ins.get("message", ""),
          f"a real change of {what} fails, naming the function: {p.returncode}\n{p.stdout}")
    print(f"real change ({what}): measured {ins.get('measured')} against {ins.get('lo')}: "
          f"{(ins.get('measured', 0) / ins.get('lo', 1) - 1) * 100:+.4f}%")

# The library replaced in place by another build.
install(BASE, LIB_V2)
out, junit = os.path.join(d, "lib.json"), os.path.join(d, "lib.xml")
p = run(f"--json={out}", f"--junit={junit}")
case, by = checks_of(out)
msg = by.get("instructions:u", {}).get("message", "")
said = re.compile(r"library liblayoutdep\.so\.1 changed since calibration \(was no package, build ID [0-9a-f]{12}; "
                  r"now no package, build ID [0-9a-f]{12}, [^ ]*/liblayoutdep\.so\.1\), "
                  r"\+\d+ of the difference \(100%\) lies in it; measured ")
check(p.returncode == 1 and said.search(msg) and msg.startswith('region "work", instructions:u: library '),
      f"the failed check names the library, both identities and its share, before the figures: {msg}")
check(said.search(p.stdout), f"the console names it:\n{p.stdout}")
text = ET.parse(junit).getroot().find(".//failure")
check(text is not None and said.search((text.get("message") or "") + (text.text or "")),
      "the JUnit failure names it")
md = os.path.join(d, "lib.md")
p = subprocess.run([CLI, "results", f"--markdown={md}", out], capture_output=True, text=True, timeout=60)
with open(md) as f:
    check(said.search(f.read()), "the Markdown report names it")
with open(out) as f:
    env_objects = json.load(f)["environment"].get("objects", [])
check(any(os.path.basename(o["path"]) == "liblayoutdep.so.1" for o in case.get("objects", env_objects)),
      "the results record lists the loaded objects (once, in the environment, when every case loaded the same)")
p = subprocess.run([CLI, "compare", out, out], capture_output=True, text=True, timeout=60)
check(p.returncode == 0, f"the results file reads back: {p.returncode} {p.stderr}")
# ... and against a baseline of the first build.
install(BASE)
base = os.path.join(d, "base.json")
run(f"--json={base}")
install(BASE, LIB_V2)
p = run(f"--baseline={base}")
check(p.returncode in (1, 3) and "since the baseline: liblayoutdep.so.1: another build than at the baseline" in p.stdout,
      f"--baseline names the library too: {p.returncode}\n{p.stdout}")

# Another program with a suite of the same name: refused, never judged by
# the first one's budgets, never writing over them.
install(BASE)
other = os.path.join(d, "other_gate")
shutil.copy2(gate, other)
p = run(program=other)
check(p.returncode != 0 and "these budgets belong to another program" in p.stdout and
      '"layout_gate" calibrated them, this is "other_gate"' in p.stdout,
      f"the other program's budgets are refused in words: {p.returncode}\n{p.stdout}")
before = {f: open(os.path.join(r, f)).read() for r, _, fs in os.walk(hw) for f in fs}
p = run("--calibrate", program=other)
after = {f: open(os.path.join(r, f)).read() for r, _, fs in os.walk(hw) for f in fs}
check(p.returncode != 0 and "two programs have a suite of this name" in p.stdout and before == after,
      f"calibrating the other program refuses and leaves the files: {p.returncode}\n{p.stdout}")

shutil.rmtree(d, ignore_errors=True)
finish()
