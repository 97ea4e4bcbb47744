#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""How pmcheck history and hwdb merge grow with a fleet's results, for the
docs: N results files made from one real file (each its own run: another
date, host and commit), then `pmcheck history add` of all of them, `history
report` over the database, and `hwdb merge` of M of them, each timed.
Usage: fleet_scale.py PMCHECK TEMPLATE.json [N ...]  (default 1000 10000;
merge uses N/10 files)."""
import copy
import json
import os
import subprocess
import sys
import tempfile
import time

cli, template = sys.argv[1], sys.argv[2]
sizes = [int(x) for x in sys.argv[3:]] or [1000, 10000]
with open(template) as f:
    base = json.load(f)


def timed(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        sys.exit(f"{' '.join(argv[:3])}...: exit {p.returncode}: {p.stderr[-400:]}")
    return time.perf_counter() - t


print(f"{'files':>7} {'history add':>12} {'per file':>9} {'report':>8} {'db':>9} "
      f"{'merge files':>11} {'merge':>7} {'per file':>9}")
for n in sizes:
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, "results")
        os.makedirs(res)
        for i in range(n):
            r = copy.deepcopy(base)
            env = r["environment"]
            env["date"] = "2026-%02d-%02dT%02d:%02d:00Z" % (1 + i // 5000 % 12, 1 + i // 200 % 28,
                                                           i // 60 % 24, i % 60)
            env["hostname"] = "ci-%03d" % (i % 40)
            env["git_commit"] = "%040x" % (0x1000 + i // 10)
            with open(os.path.join(res, "r%06d.json" % i), "w") as f:
                json.dump(r, f)
        db = os.path.join(d, "h.sqlite")
        add = timed([cli, "history", f"--db={db}", "add", res])
        rep = timed([cli, "history", f"--db={db}", "report", f"--html={os.path.join(d, 'html')}"])
        m = max(1, n // 10)
        files = [os.path.join(res, "r%06d.json" % i) for i in range(m)]
        hw = os.path.join(d, "hwdb")
        os.makedirs(hw)
        merge = timed([cli, "hwdb", "merge", f"--hwdb={hw}"] + files)
        print(f"{n:>7} {add:>11.2f}s {1000 * add / n:>7.2f}ms {rep:>7.2f}s "
              f"{os.path.getsize(db) / 1e6:>7.1f}MB {m:>11} {merge:>6.2f}s {1000 * merge / m:>7.2f}ms")
