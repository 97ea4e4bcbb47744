#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The expat gate end to end, as a user runs it through CTest.

usage: test_expat_gate.py SUITE_EXE CTEST_FILE PMCHECK_CLI RUNS

1. Every sim case alone and all together in one run: identical counts.
2. --calibrate into a scratch hwdb.
3. CTest runs the sim cases RUNS times: no failure, identical counts.
4. A ~1% instruction regression (PMCHECK_EXPAT_EXTRA tiny documents parsed
   inside the region) fails the gate: exit status and report lines.
5. A +0.05% change fails an exact budget and passes one calibrated with
   --calibrate-tolerance=1.
6. Budgets of a case that no longer exists fail a whole-suite run.
Exit 0 pass, 1 fail, 77 skip (the sim backend cannot run in this build).
"""
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../framework/tests'))
from checks import check, fail, finish, guarded  # noqa: E402,F401

EXE, CTEST_FILE, CLI, RUNS = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
SIM_CASES = ["expat.flat", "expat.attrs", "expat.chunked"]


def env(**extra):
    e = {k: v for k, v in os.environ.items()
         if k not in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "PMCHECK_EXPAT_EXTRA")}
    e["NO_COLOR"] = "1"
    # The sim backend passes a case only the variables named here.
    e["PMCHECK_SIM_ENV"] = "PMCHECK_EXPAT_EXTRA"
    e.update({k: str(v) for k, v in extra.items()})
    return e


def run(*args, **extra):
    return subprocess.run([EXE, *args], capture_output=True, text=True, env=env(**extra),
                          timeout=600)


def counts(doc):
    """{(case, event): [sample values]} of a results document."""
    return {(c["name"], e): s["values"] for c in doc["cases"] for r in c["regions"]
            for e, s in r["events"].items()}


def ctest_dir(work, hwdb, results):
    """A CTest directory holding this suite's generated tests, with the
    results and budgets redirected to scratch directories."""
    text = open(CTEST_FILE).read()
    text = re.sub(r"PMCHECK_RESULTS_DIR=[^\]]*",
                  f"PMCHECK_RESULTS_DIR={results};PMCHECK_HWDB={hwdb}", text)
    d = os.path.join(work, "ctest")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "CTestTestfile.cmake"), "w") as f:
        f.write(text)
    return d


def ctest(d, results, cases="flat|attrs|chunked", **extra):
    for f in glob.glob(os.path.join(results, "*.json")):
        os.unlink(f)
    p = subprocess.run(["ctest", "--test-dir", d, "-R", rf"^expat\.({cases})\.sim$",
                        "-j2", "--output-on-failure"], capture_output=True, text=True,
                       env=env(**extra), timeout=900)
    docs = {}
    for f in glob.glob(os.path.join(results, "*.json")):
        doc = json.load(open(f))
        docs[doc["cases"][0]["name"]] = doc
    return p, docs


def main():
    p = run("--backend=sim", "--filter=expat.flat", "--repeat=1")
    if p.returncode == 77:
        print("SKIP:", p.stdout.strip())
        sys.exit(77)
    with tempfile.TemporaryDirectory() as work:
        hwdb = os.path.join(work, "hwdb")
        results = os.path.join(work, "results")
        os.makedirs(hwdb)
        os.makedirs(results)

        # 1. Alone and together.
        together = os.path.join(work, "together.json")
        p = run("--backend=sim", "--filter=" + ",".join(SIM_CASES), "--json=" + together,
                "--hwdb=" + hwdb)
        check(p.returncode == 0, f"together: exit {p.returncode}\n{p.stdout}{p.stderr}")
        all_counts = counts(json.load(open(together)))
        for name in SIM_CASES:
            alone = os.path.join(work, name + ".json")
            run("--backend=sim", "--filter=" + name, "--json=" + alone, "--hwdb=" + hwdb)
            for key, values in counts(json.load(open(alone))).items():
                check(all_counts.get(key) == values,
                      f"{key}: alone {values}, together {all_counts.get(key)}")
        print("alone == together:", len(all_counts), "series")

        # 2. Calibrate, as the gate will run.
        p = run("--backend=sim", "--filter=" + ",".join(SIM_CASES), "--calibrate=2",
                "--hwdb=" + hwdb)
        # The header may warn of PMCHECK_SIM_ENV's unset name; the
        # calibration itself (from its first line on) warns of nothing.
        calibration = p.stdout[p.stdout.find("calibrating "):]
        check(p.returncode == 0 and "12 budget(s) written" in calibration and "warning" not in calibration,
              f"calibrate: {p.returncode}\n{p.stdout}")
        budget_files = glob.glob(os.path.join(hwdb, "budgets", "sim-*", "expat.ini"))
        check(len(budget_files) == 1, f"one sim budget file: {budget_files}")
        budget = open(budget_files[0]).read()
        base = int(re.search(r"\[flat\]\nparse = instructions:u = (\d+)", budget).group(1))

        # 3. CTest, RUNS times: no false failure, identical counts.
        d = ctest_dir(work, hwdb, results)
        seen = None
        for i in range(RUNS):
            p, docs = ctest(d, results)
            check(p.returncode == 0 and "100% tests passed" in p.stdout,
                  f"ctest run {i + 1}: exit {p.returncode}\n{p.stdout[-3000:]}")
            now = {k: v for doc in docs.values() for k, v in counts(doc).items()}
            check(len(docs) == 3, f"ctest run {i + 1}: {len(docs)} result files")
            check(seen is None or now == seen, f"ctest run {i + 1}: counts changed")
            seen = now
            env_cpu = next(iter(docs.values()))["environment"]
            check(not env_cpu["cpu"]["signature"].startswith("GenuineIntel-6-3C")
                  or "simulated_cpu" in env_cpu["sim"], f"host CPU recorded: {env_cpu['cpu']}")
        print(f"{RUNS} CTest runs: 0 failures, identical counts")

        # The cost of one extra tiny document, from the simulator itself.
        p1 = run("--backend=sim", "--filter=expat.flat", "--json=" + os.path.join(work, "x1.json"),
                 "--hwdb=" + hwdb, PMCHECK_EXPAT_EXTRA=1)
        one = counts(json.load(open(os.path.join(work, "x1.json"))))
        per_doc = min(one[("expat.flat", "instructions:u")]) - base
        check(per_doc > 0 and p1.returncode == 1, f"one extra document: +{per_doc}, exit {p1.returncode}")
        print(f"smallest change caught: +{per_doc} instructions (+{100.0 * per_doc / base:.4f}%)")

        # 4. A ~1% regression fails the gate, with the report a reviewer needs.
        n = math.ceil(0.01 * base / per_doc)
        p, docs = ctest(d, results, PMCHECK_EXPAT_EXTRA=n)
        check(p.returncode != 0 and "expat.flat.sim" in p.stdout and "Failed" in p.stdout,
              f"1% regression: ctest exit {p.returncode}\n{p.stdout[-2000:]}")
        flat = docs.get("expat.flat", {"cases": [{}]})["cases"][0]
        check(flat.get("verdict") == "FAIL", f"expat.flat verdict {flat.get('verdict')}")
        msg = next((c["message"] for c in flat.get("checks", []) if c["event"] == "instructions:u"), "")
        pct = re.search(r"over by (\d+) \(\+([\d.]+)% of the budget\)", msg)
        check(pct and 0.9 <= float(pct.group(2)) <= 1.2 and f"expected = {base}" in msg
              and budget_files[0] + ":" in msg, f"regression message: {msg}")
        p = run("--backend=sim", "--filter=expat.flat", "--hwdb=" + hwdb, PMCHECK_EXPAT_EXTRA=n)
        check(p.returncode == 1 and p.stdout.count("over by") == 4,
              f"runner exit 1, each failure once: {p.returncode}\n{p.stdout}")

        # 5. +0.05%: caught by the exact budget, tolerated within 1%.  (Only
        # "flat" reads the variable; the others' exact budgets would see one
        # more environment entry, which is a change too.)
        n = max(1, round(0.0005 * base / per_doc))
        p, docs = ctest(d, results, "flat", PMCHECK_EXPAT_EXTRA=n)
        check(p.returncode != 0, f"+0.05% fails the exact budget: {p.returncode}")
        p = run("--backend=sim", "--filter=expat.flat", "--calibrate=1", "--calibrate-tolerance=1",
                "--hwdb=" + hwdb)
        budget = open(budget_files[0]).read()
        check(f"parse = instructions:u {base} +-1%" in budget, f"tolerance recorded: {budget}")
        p, docs = ctest(d, results, "flat", PMCHECK_EXPAT_EXTRA=n)
        check(p.returncode == 0, f"+0.05% passes within 1%: {p.returncode}\n{p.stdout[-2000:]}")
        n = math.ceil(0.02 * base / per_doc)
        p, docs = ctest(d, results, "flat", PMCHECK_EXPAT_EXTRA=n)
        check(p.returncode != 0, f"+2% fails the 1% tolerance: {p.returncode}")

        # 6. Budgets for a case that is gone (renamed) fail a whole-suite run.
        with open(budget_files[0], "a") as f:
            f.write("\n[renamed_away]\nparse = instructions:u = 5\n")
        p = run("--backend=sim", "--hwdb=" + hwdb)
        check(p.returncode == 1 and "expat.renamed_away, which is not a case of this program" in p.stdout,
              f"stale budgets: {p.returncode}\n{p.stdout[-1500:]}")


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # noqa: BLE001 - any exception is a failure here
        fail(f"{type(e).__name__}: {e}")
    finish()
