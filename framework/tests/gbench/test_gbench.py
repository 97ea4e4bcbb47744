#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Google Benchmark suites gated as they are (pmcheck_add_gbench), from a
project outside the tree (framework/tests/gbench/project) built against
pmcheck installed to a prefix:
  - every benchmark instance is a CTest test, per backend, discovered from
    the program; without --pmcheck the program is Google Benchmark's own;
  - calibration on sim records each instance exactly, per iteration; the
    gate passes twice, from the build directory and from another one;
  - 10% more work in one benchmark fails that benchmark alone, naming the
    functions that moved; a threaded instance is INCONCLUSIVE, never judged;
  - calls:malloc per iteration on the kernel (uprobes), calibrated exact;
  - each way a benchmark can go wrong is an error that names it;
  - the same suite with Google Benchmark built into the program from the
    release's source package (no shared library to interpose): calibrated
    and gated the same way.
Arguments: BINARY_DIR WORK_DIR PROJECT_DIR GBENCH_SOURCE_DIR"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from checks import check, finish, guarded  # noqa: E402

BINARY_DIR, WORK, PROJECT, GB_SRC = sys.argv[1:5]
PREFIX = os.path.join(WORK, "prefix")
SRC = os.path.join(WORK, "src")


def sh(cmd, timeout=900, env=None, cwd=None):
    e = dict(os.environ)
    e.pop("CI", None)
    e.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e, cwd=cwd)


def must(p, what):
    if not check(p.returncode == 0, f"{what}: exit {p.returncode}\n{p.stdout[-3000:]}{p.stderr[-3000:]}"):
        raise SystemExit(finish())
    return p


def build(name, *extra):
    """The project configured and built in WORK/name: its build directory."""
    b = os.path.join(WORK, name)
    must(sh(["cmake", "-S", SRC, "-B", b, f"-DCMAKE_PREFIX_PATH={PREFIX}",
             "-DCMAKE_BUILD_TYPE=RelWithDebInfo", *extra]), f"configure {name}")
    must(sh(["cmake", "--build", b, "-j", "2"]), f"build {name}")
    return b


def hwdb_text():
    out = []
    for root, _, files in os.walk(os.path.join(SRC, "hwdb")):
        for f in sorted(files):
            if f.endswith(".ini"):
                with open(os.path.join(root, f)) as fh:
                    out.append(fh.read())
    return "\n".join(out)


def ctest(b, *args, env=None, cwd=None):
    return sh(["ctest", "--test-dir", b, "--output-on-failure", "-j", "2", *args], env=env, cwd=cwd)


def failed_tests(p):
    return sorted(set(re.findall(r"\d+ - (\S+) \(Failed\)", p.stdout)))


def shared_library_suite():
    b = build("build")
    bench = os.path.join(b, "bench")

    # Discovery: one test per instance and backend, names as the library's.
    p = must(sh(["ctest", "--test-dir", b, "-N"]), "ctest -N")
    names = set(re.findall(r"Test +#\d+: (\S+)", p.stdout))
    for want in ("bench.BM_sort/256.sim", "bench.BM_sort/1024", "bench.BM_concat/8.sim",
                 "bench.BM_concat/64.sim", "bench.BM_map.sim", "bench.Words/Longest.sim",
                 "bench.BM_threaded/threads_2.sim", "bench_calls.BM_map", "bench.BM_twice.sim",
                 "bench.BM_twice/iterations_7.sim"):
        check(want in names, f"CTest test {want} registered: {sorted(names)}")
    check(not any(n.startswith("bench_calls.") and n.endswith(".sim") for n in names),
          "bench_calls counts on the kernel only (no SIM)")

    # Without --pmcheck it is the program it was.
    p = must(sh([bench, "--benchmark_filter=BM_map", "--benchmark_min_time=0.01"]), "plain run")
    check("BM_map" in p.stdout and "Iterations" in p.stdout, f"Google Benchmark's own table:\n{p.stdout}")

    # Calibrate every single-threaded instance on sim: exact, per iteration.
    p = must(sh([bench, "--pmcheck", "--backend=sim", "--calibrate", f"--hwdb={SRC}/hwdb",
                 "--filter=-bench.BM_threaded*"]), "calibrate on sim")
    text = hwdb_text()
    for case in ("BM_sort/256", "BM_sort/1024", "BM_concat/8", "BM_concat/64", "BM_map",
                 "Words/Longest", "BM_faulty", "BM_twice", "BM_twice/iterations_7"):
        check(re.search(r"\[" + re.escape(case) + r"\]\nloop = instructions:u = [0-9.]+ per iteration ; "
                        r"calibrated: 5 equal runs of \d+ iterations, exact", text),
              f"{case}: an exact budget per iteration:\n{text[:3000]}")

    # --pmcheck anywhere, and a filter in Google Benchmark's names.
    p = sh([bench, "--backend=sim", "--pmcheck", f"--hwdb={SRC}/hwdb", "--filter=BM_twice*"])
    check(p.returncode == 0 and "2 PASS" in p.stdout and "bench.BM_twice/iterations_7" in p.stdout,
          f"--filter=BM_twice* after --backend: both instances, each its own: {p.returncode}\n{p.stdout[-2000:]}")

    # Calibrated again, an unchanged budget is one line, not a -/+ pair.
    p = must(sh([bench, "--pmcheck", "--backend=sim", "--calibrate", f"--hwdb={SRC}/hwdb",
                 "--filter=bench.BM_map"]), "calibrate again")
    check(re.search(r"^  = loop = instructions:u = [0-9.]+ per iteration", p.stdout, re.M)
          and not re.search(r"^  [-+] loop", p.stdout, re.M),
          f"an unchanged budget line is shown once, as unchanged:\n{p.stdout[-1500:]}")

    # The gate twice, then from another directory.
    for i in range(2):
        p = ctest(b, "-L", "sim", "-E", "threaded")
        check(p.returncode == 0, f"ctest -L sim, run {i + 1}: {failed_tests(p)}\n{p.stdout[-4000:]}")
    p = ctest(b, "-L", "sim", "-R", "BM_map", cwd="/")
    check(p.returncode == 0 and "100% tests passed" in p.stdout, f"from /: {p.stdout[-2000:]}")

    # 10% more input to one sort: that benchmark alone fails, its functions named.
    p = ctest(b, "-L", "sim", "-E", "threaded",
              env={"TEAMBENCH_SORT_PERCENT": "110", "PMCHECK_SIM_ENV": "TEAMBENCH_SORT_PERCENT"})
    check(failed_tests(p) == ["bench.BM_sort/1024.sim"], f"only BM_sort/1024 fails: {failed_tests(p)}")
    check("__introsort_loop" in p.stdout or "__insertion_sort" in p.stdout,
          f"the failure names the sort's functions:\n{p.stdout[-4000:]}")

    # A threaded instance is never judged on one thread's share, nor calibrated.
    p = sh([bench, "--pmcheck", "--backend=sim", "--calibrate", f"--hwdb={SRC}/hwdb", "--filter=BM_threaded*"])
    check(p.returncode != 0 and "not calibrated: INCONCLUSIVE" in p.stdout and "2 threads" in p.stdout,
          f"a threaded instance is not calibrated, said: {p.returncode}\n{p.stdout[-1500:]}")
    p = sh([bench, "--pmcheck", "--backend=sim", "--filter=bench.BM_threaded*", f"--hwdb={SRC}/hwdb"])
    check(p.returncode == 4 and "INCONCLUSIVE" in p.stdout and "2 threads" in p.stdout,
          f"threaded: exit 4, INCONCLUSIVE, says why: {p.returncode}\n{p.stdout[-2000:]}")

    # Results files and the summary treat an instance as a case.
    out = os.path.join(WORK, "bench.json")
    p = sh([bench, "--pmcheck", "--backend=sim", f"--hwdb={SRC}/hwdb", f"--json={out}",
            "--filter=bench.BM_sort*,bench.BM_map"])
    check(p.returncode == 0, f"--json run: {p.returncode}\n{p.stdout[-2000:]}")
    with open(out) as f:
        doc = json.load(f)
    got = sorted(c["name"] for c in doc["cases"])
    check(got == ["bench.BM_map", "bench.BM_sort/1024", "bench.BM_sort/256"], f"cases in JSON: {got}")
    p = sh([os.path.join(PREFIX, "bin", "pmcheck"), "results", out])
    check(p.returncode == 0 and "3 cases: 3 PASS" in p.stdout, f"pmcheck results: {p.stdout[-1500:]}")

    # calls:malloc per iteration with uprobes on the kernel (root or CAP_PERFMON).
    calls = os.path.join(b, "bench_calls")
    p = sh([calls, "--pmcheck", "--calibrate", f"--hwdb={SRC}/hwdb", "--filter=bench_calls.BM_map"])
    if "SKIP" in p.stdout and p.returncode in (0, 77):
        print("note: calls: not countable here (not root, no CAP_PERFMON):", p.stdout[-300:])
    else:
        must(p, "calibrate calls:malloc")
        text = hwdb_text()
        check(re.search(r"\[BM_map\]\nloop = calls:malloc = 101 per iteration", text),
              f"calls:malloc: 101 map nodes per iteration, exact:\n{text[-2500:]}")
        p = ctest(b, "-R", "^bench_calls.BM_map$")
        check(p.returncode == 0, f"calls gate: {p.stdout[-2000:]}")

    # Each way a benchmark goes wrong: an error naming it, never a pass.
    def faulty(fault, backend="sim"):
        return sh([bench, "--pmcheck", f"--backend={backend}", f"--hwdb={SRC}/hwdb", "--filter=bench.BM_faulty",
                   "--timeout=5"], env={"TEAMBENCH_FAULT": fault, "PMCHECK_SIM_ENV": "TEAMBENCH_FAULT"})
    p = faulty("error")
    check(p.returncode == 2 and "SkipWithError" in p.stdout and "the input file is missing" in p.stdout,
          f"SkipWithError: ERROR quoting it: {p.returncode}\n{p.stdout[-1500:]}")
    p = faulty("abort")
    check(p.returncode == 2 and "BM_faulty" in p.stdout and "signal 6" in p.stdout.lower() + p.stderr.lower(),
          f"abort: an ERROR naming the crash: {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-1500:]}")
    p = faulty("noloop")
    both = p.stdout + p.stderr
    check(p.returncode == 2 and "KeepRunning" in both,
          f"no loop: an ERROR with the library's words: {p.returncode}\n{both[-1500:]}")
    p = faulty("hang")
    check(p.returncode == 2 and "timed out" in p.stdout.lower() + p.stderr.lower(),
          f"hang: timed out: {p.returncode}\n{p.stdout[-1500:]}")
    p = sh([bench, "--pmcheck", "--backend=sim", "--filter=bench.BM_nothing"])
    check(p.returncode != 0 and "BM_nothing" in p.stdout + p.stderr,
          f"a filter that selects nothing is not a pass: {p.returncode}\n{p.stdout}{p.stderr}")
    return bench


def static_library_suite():
    """Google Benchmark compiled into the programs from the source package."""
    if not os.path.isfile(os.path.join(GB_SRC, "CMakeLists.txt")):
        check(False, f"Google Benchmark's source package is not at {GB_SRC}: run ci/setup, which fetches it")
        return
    version = ""
    with open(os.path.join(GB_SRC, "debian", "changelog")) as f:
        m = re.match(r"\S+ \(([0-9.]+)", f.readline())
        version = m.group(1) if m else "0.0.0"
    shutil.rmtree(os.path.join(SRC, "hwdb"), ignore_errors=True)
    b = build("build-static", f"-DGBENCH_SOURCE={GB_SRC}", f"-DGBENCH_VERSION={version}")
    bench = os.path.join(b, "bench")
    p = must(sh(["ldd", bench]), "ldd")
    check("libbenchmark" not in p.stdout, f"the library is in the program:\n{p.stdout}")
    must(sh([bench, "--pmcheck", "--backend=sim", "--calibrate", f"--hwdb={SRC}/hwdb",
             "--filter=bench.BM_sort*,bench.BM_concat/8"]), "calibrate the static build")
    text = hwdb_text()
    check(text.count("calibrated: 5 equal runs of 20 iterations, exact") == 3, f"static: three exact budgets:\n{text[:2000]}")
    for i in range(2):
        p = ctest(b, "-L", "sim", "-R", "BM_sort|BM_concat/8")
        check(p.returncode == 0, f"static gate, run {i + 1}: {failed_tests(p)}\n{p.stdout[-3000:]}")


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
must(sh(["cmake", "--install", BINARY_DIR, "--prefix", PREFIX]), "install pmcheck")
shutil.copytree(PROJECT, SRC)
# PART: "shared" (Debian's libbenchmark), "static" (the source package
# built into the programs), or both when not given.
PART = sys.argv[5] if len(sys.argv) > 5 else "both"
if PART in ("shared", "both"):
    guarded(shared_library_suite)
if PART in ("static", "both"):
    guarded(static_library_suite)
sys.exit(finish())
