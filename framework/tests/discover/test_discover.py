#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""No case vanishes from CTest, whatever its calls: events resolve to when
the suite is listed; and calls: of a C++ function with a .cold part counts
the function's entries.

usage: test_discover.py CHECK VANISH_EXE COLD_EXE|- CMAKE CTEST DISCOVER_SCRIPT
  registered  every case is listed (--list=tsv) and registered by
              PmcheckDiscover.cmake, .sim variants by kind; a suite that
              lists no case gets one failing test that says so; through
              CTest, the unresolvable case fails and says why
  perf        on perf (uprobes): the dlopen()ed library counts exactly,
              the missing function is an ERROR with the reason, the .cold
              function counts its entries, names of the cold part refused
  sim         the same cases on --backend=sim
(exit 0 pass, 1 fail, 77 skip)
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

CHECK, VANISH, COLD, CMAKE, CTEST, DISCOVER = sys.argv[1:7]
COLD = None if COLD == "-" else COLD
LIB_EVENT = "calls:pmc_vanish_lib_fn@libpmcheck_vanish_lib.so"
MISSING_EVENT = "calls:pmc_vanish_no_such_fn@libpmcheck_vanish_lib.so"


def env_for():
    e = dict(os.environ)
    for k in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "PMCHECK_SIM_ENGINE"):
        e.pop(k, None)
    e["NO_COLOR"] = "1"
    return e


def run_case(exe, name, *args):
    """(exit status, the case's result, console) of one case."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.json")
        p = subprocess.run([exe, "--filter=" + name, "--json=" + path, *args],
                           capture_output=True, text=True, env=env_for(), timeout=240)
        doc = json.load(open(path)) if os.path.exists(path) else {"cases": []}
    cases = [c for c in doc["cases"] if c["name"] == name]
    return p.returncode, cases[0] if cases else None, p.stdout + p.stderr


def calls_of(case, region, event):
    """The samples of event in region: every repetition's count."""
    for r in case.get("regions", []):
        if r["name"] == region:
            return r["events"].get(event, {}).get("values")
    return None


def listing(exe):
    p = subprocess.run([exe, "--list=tsv"], capture_output=True, text=True, env=env_for())
    check(p.returncode == 0, f"{exe} --list=tsv: exit {p.returncode}: {p.stderr}")
    return {f[0]: f[4] for f in (line.split("\t") for line in p.stdout.splitlines()) if len(f) >= 5}


def discover(exe, target, d):
    """Run the discovery script on exe as pmcheck_add_suite(... SIM) does
    after a build, in a directory CTest reads: the registered test names."""
    out = os.path.join(d, target + "_tests.cmake")
    p = subprocess.run([CMAKE, "-D", "EXE=" + exe, "-D", "EMULATOR=", "-D", "OUT=" + out,
                        "-D", "TARGET=" + target, "-D", "LABELS=t", "-D", "ARGS=",
                        "-D", "RESULTS_DIR=" + os.path.join(d, "results"), "-D", "SIM=ON",
                        "-P", DISCOVER], capture_output=True, text=True)
    check(p.returncode == 0, f"discovery of {target}: exit {p.returncode}: {p.stderr}")
    with open(os.path.join(d, "CTestTestfile.cmake"), "w") as f:
        f.write(f'include("{out}")\n')
    p = subprocess.run([CTEST, "-N"], cwd=d, capture_output=True, text=True)
    return re.findall(r"Test +#\d+: (\S+)", p.stdout)


def t_registered():
    expected = {
        # The library is dlopen()ed by the case: not loaded when listed.
        "vanish.dlopen_later": "perf,sim",
        # Found nowhere: listed all the same; its run says why.
        "vanish.no_such_function": "perf,sim",
    }
    if COLD:
        expected.update({"cold.entries": "perf,sim",
                         # refused by name: no sim variant to refuse it twice
                         "cold.refused_demangled": "perf", "cold.refused_mangled": "perf"})
    listed = listing(VANISH)
    if COLD:
        listed.update(listing(COLD))
    check(listed == expected, f"--list=tsv: {listed}, expected {expected}")
    with tempfile.TemporaryDirectory() as d:
        names = discover(VANISH, "pmcheck_vanish", d)
        want = ["vanish.dlopen_later", "vanish.dlopen_later.sim",
                "vanish.no_such_function", "vanish.no_such_function.sim"]
        check(sorted(names) == want, f"registered {names}, expected {want}")
        # Through CTest: the case that cannot be resolved is a failed test
        # that says which event, why, and what to do.
        p = subprocess.run([CTEST, "-R", "no_such_function$", "--output-on-failure"], cwd=d,
                           capture_output=True, text=True, env=env_for(), timeout=240)
        out = p.stdout + p.stderr
        if "Skipped" in out and "uprobe" in out:
            print("no uprobe PMU here: the run through CTest skips, which it may")
        else:
            check(p.returncode != 0 and "ERROR" in out and MISSING_EVENT in out
                  and "is not defined" in out and "nm -D" in out,
                  f"ctest -R no_such_function: exit {p.returncode}:\n{out}")
    if COLD:
        with tempfile.TemporaryDirectory() as d:
            names = discover(COLD, "pmcheck_cold", d)
            want = ["cold.entries", "cold.entries.sim", "cold.refused_demangled",
                    "cold.refused_mangled"]
            check(sorted(names) == want, f"registered {names}, expected {want}")
    # A program that lists no case: one test, and it fails saying so
    # (never a dummy that fails with "Could not find executable").
    with tempfile.TemporaryDirectory() as d:
        names = discover(shutil.which("true") or "/bin/true", "empty_suite", d)
        check(names == ["empty_suite.no_cases"], f"no cases: registered {names}")
        p = subprocess.run([CTEST, "--output-on-failure"], cwd=d, capture_output=True, text=True)
        out = p.stdout + p.stderr
        check(p.returncode != 0 and "listed no case" in out and "add a case" in out
              and "Could not find executable" not in out,
              f"no cases: exit {p.returncode}:\n{out}")


def judged(backend_args, label):
    """The cases on one backend; 77 when this machine cannot count calls:."""
    rc, case, out = run_case(VANISH, "vanish.dlopen_later", *backend_args)
    if case and case["verdict"] == "SKIP":
        print(f"SKIP: {label}: {case.get('reason')}")
        sys.exit(77)
    check(rc == 0 and case and case["verdict"] == "PASS",
          f"{label}: dlopen_later: exit {rc}:\n{out}")
    if case:
        values = calls_of(case, "ten", LIB_EVENT)
        check(values and all(v == 10 for v in values),
              f"{label}: the library dlopen()ed after the counters opened: {values}, expected 10 per repetition")

    rc, case, out = run_case(VANISH, "vanish.no_such_function", *backend_args)
    reason = (case or {}).get("reason") or ""
    check(rc == 2 and case and case["verdict"] == "ERROR", f"{label}: no_such_function: exit {rc}:\n{out}")
    for words in (MISSING_EVENT, 'symbol "pmc_vanish_no_such_fn" is not defined', "nm -D",
                  "looked up when the counters open"):
        check(words in reason, f"{label}: no_such_function: the reason lacks {words!r}: {reason}")

    if not COLD:
        print("no g++ here: the .cold cases are not built")
        return
    rc, case, out = run_case(COLD, "cold.entries", *backend_args)
    check(rc == 0 and case and case["verdict"] == "PASS", f"{label}: cold.entries: exit {rc}:\n{out}")
    if case:
        # 7 calls return, 3 throw through the cold part: 10 entries.
        values = calls_of(case, "ten", "calls:cold_ns::parse")
        check(values and all(v == 10 for v in values),
              f"{label}: calls:cold_ns::parse {values}, expected 10 per repetition")
    for name, why in (("cold.refused_demangled",
                       '"cold_ns::parse.cold" names the cold part of cold_ns::parse(...)'),
                      ("cold.refused_mangled",
                       '"_ZN7cold_ns5parseEPKc.cold" names the cold part of cold_ns::parse(char const*)')):
        rc, case, out = run_case(COLD, name, *backend_args)
        reason = (case or {}).get("reason") or ""
        check(rc == 2 and case and case["verdict"] == "ERROR" and why in reason
              and reason.endswith("count the function itself: calls:cold_ns::parse"),
              f"{label}: {name}: exit {rc}: {reason or out}")


def t_perf():
    judged([], "perf")


def t_sim():
    if os.environ.get("PMCHECK_TEST_SANITIZED") in ("1", "ON", "TRUE"):
        print("SKIP: valgrind does not run a sanitized program")
        sys.exit(77)
    if not shutil.which("valgrind"):
        print("SKIP: valgrind is not installed")
        sys.exit(77)
    judged(["--backend=sim"], "sim")


CHECKS = {"registered": t_registered, "perf": t_perf, "sim": t_sim}

if __name__ == "__main__":
    if CHECK not in CHECKS:
        print(f"unknown check {CHECK!r}; one of {', '.join(CHECKS)}")
        sys.exit(64)
    guarded(CHECKS[CHECK])
    finish(f"discover.{CHECK}")
