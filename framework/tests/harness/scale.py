#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The cost of a region executed N times, for the docs: run pmcheck_scale's
cases with 10^3 .. 10^7 executions -- scale.million (calls:, a uprobe hit
per execution on average) and scale.empty (an empty region on page-faults:
the harness and two read(2) calls) -- and print, per execution,
the wall time, the peak memory of the case's process and the bytes of the
results file.  Usage: scale.py PMCHECK_SCALE [TOTAL_EXECUTIONS...]
(default 1000 100000 1000000).  Each total is 5 repetitions."""
import os
import resource
import subprocess
import sys
import tempfile
import time

prog = sys.argv[1]
totals = [int(x) for x in sys.argv[2:]] or [1000, 100000, 1000000]
print(f"{'case':>14} {'executions':>12} {'ns/execution':>13} {'peak RSS':>10} {'RSS B/exec':>11} "
      f"{'results':>10} {'results B/exec':>15}")
for case, total in [(c, t) for c in ("scale.empty", "scale.million") for t in totals]:
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        env = dict(os.environ, SCALE_EXECUTIONS=str(total // 5))
        # Each total in its own runner, so RUSAGE_CHILDREN's peak is its own.
        code = ("import resource,subprocess,sys,time;"
                "t=time.perf_counter();"
                f"r=subprocess.run([{prog!r},'--filter={case}','--timeout=900','--json={path}'],"
                "stdout=subprocess.DEVNULL);"
                "e=time.perf_counter()-t;"
                "print(r.returncode, e, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        rc, secs, rss_kb = out.stdout.split()
        if rc != "0":
            print(f"{case:>14} {total:>12} the case did not pass (exit {rc})")
            continue
        size = os.path.getsize(path)
        print(f"{case:>14} {total:>12} {float(secs) * 1e9 / total:>13.0f} {int(rss_kb) / 1024:>8.1f}MB "
              f"{int(rss_kb) * 1024 / total:>11.1f} {size:>10} {size / total:>15.3f}")
