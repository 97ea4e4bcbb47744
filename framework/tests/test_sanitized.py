#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the sim backend cannot run says so.  A suite built with a
sanitizer: refused before anything runs, naming the sanitizer and the fix (valgrind's loader would
stop every case with "ASan runtime does not come first ...").  The suite is
compiled here against pmcheck installed from this build; each sanitizer a
row, and the same suite built without one runs (the row's control).  An
instruction valgrind cannot decode: the case's line quotes the decoder
and names the function.
Arguments: BINARY_DIR WORK_DIR"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish  # noqa: E402

BINARY_DIR, WORK = sys.argv[1:3]
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
prefix = os.path.join(WORK, "prefix")
p = subprocess.run(["cmake", "--install", BINARY_DIR, "--prefix", prefix], capture_output=True, text=True)
check(p.returncode == 0, f"install: {p.stderr}")
src = os.path.join(WORK, "suite.c")
with open(src, "w") as f:
    f.write('#include <pmcheck/harness.h>\n'
            'PMC_TEST(san, loop, .events = "instructions:u")\n'
            '{\n\tvolatile int x = 0;\n\tPMC_REGION(t, "loop") { for (int i = 0; i < 100; i++) x += i; }\n'
            '\tPMC_EXPECT_GE(t, "loop", "instructions:u", 100);\n}\n')
libdir = os.path.join(prefix, "lib")


def build(cc, flags, source, exe):
    """A suite of one file, linked to pmcheck installed above."""
    return subprocess.run([cc, *flags, "-g", f"-I{prefix}/include", source, f"-L{libdir}", f"-Wl,-rpath,{libdir}",
                           "-lpmcheck_harness_main", "-lpmcheck_harness", "-lpmcheck", "-o", exe],
                          capture_output=True, text=True)


ROWS = [  # (compiler, flags, sanitizer named, or None for the control)
    ("gcc", [], None),
    ("gcc", ["-fsanitize=address"], "AddressSanitizer (-fsanitize=address)"),
    ("gcc", ["-fsanitize=thread"], "ThreadSanitizer (-fsanitize=thread)"),
    ("clang", ["-fsanitize=address"], "AddressSanitizer (-fsanitize=address)"),
]
for cc, flags, named in ROWS:
    if not shutil.which(cc):
        print(f"note: {cc} is not installed: row {cc} {flags} left out")
        continue
    exe = os.path.join(WORK, "suite-" + cc + "".join(flags).replace("=", "-"))
    p = build(cc, flags, src, exe)
    if not check(p.returncode == 0, f"{cc} {flags}: build: {p.stderr[-1500:]}"):
        continue
    p = subprocess.run([exe, "--backend=sim"], capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    if named is None:
        check(p.returncode == 0 and "1 PASS" in out, f"{cc} without a sanitizer runs on sim: {p.returncode}\n{out}")
    else:
        check(p.returncode == 77 and named in out and "without sanitizers" in out and "--backend=perf" in out
              and "ASan runtime does not come first" not in out,
              f"{cc} {flags}: refused before running, naming {named} and the fix: {p.returncode}\n{out}")

# An instruction the simulator cannot decode (AVX-512: valgrind 3.19 and
# 3.24 have no decoder for it): an ERROR that quotes valgrind's decoder and
# names the function, never a bare "killed by signal 4".
ill = os.path.join(WORK, "ill.c")
with open(ill, "w") as f:
    f.write('#include <pmcheck/harness.h>\n'
            'static void zmm_copy(void) { __asm__ volatile(".byte 0x62,0xf1,0x7c,0x48,0x28,0xc1"); }\n'
            'PMC_TEST(ill, zmm, .events = "instructions:u") { PMC_REGION(t, "copy") { zmm_copy(); } }\n')
exe = os.path.join(WORK, "ill")
p = build("gcc", [], ill, exe)
if check(p.returncode == 0, f"ill: build: {p.stderr[-1500:]}"):
    p = subprocess.run([exe, "--backend=sim"], capture_output=True, text=True, timeout=300)
    # The case's line (after the run's header): its reason is its first line.
    first = next((ln for ln in p.stdout.splitlines() if ln.startswith("[1/1]")), "")
    if "unhandled instruction bytes" not in p.stdout and p.returncode == 0:
        print("note: this valgrind decodes AVX-512: the row has nothing to refuse")
    else:
        check(p.returncode == 2 and "cannot run an instruction in zmm_copy" in first and "0x62 0xF1" in first
              and "--backend=perf" in first,
              f"an undecodable instruction: the first line says so: {p.returncode}\n{p.stdout[-2500:]}")
        check('in region "copy"' in first, f"... and names the region: {first}")

# A crash says in which region: on the kernel (a software event) and on sim.
crash = os.path.join(WORK, "crash.c")
with open(crash, "w") as f:
    f.write('#include <stdlib.h>\n#include <pmcheck/harness.h>\n'
            'static void poke(void) { volatile int *p = (int *)(long)atoi("8"); *p = 1; }\n'
            'PMC_TEST(crash, perf, .events = "page-faults", .backends = PMC_BACKEND_PERF)'
            ' { PMC_REGION(t, "warm") { } PMC_REGION(t, "parse") { poke(); } }\n'
            'PMC_TEST(crash, sim, .events = "instructions:u", .backends = PMC_BACKEND_SIM)'
            ' { PMC_REGION(t, "parse") { poke(); } }\n')
exe = os.path.join(WORK, "crash")
p = build("gcc", [], crash, exe)
if check(p.returncode == 0, f"crash: build: {p.stderr[-1500:]}"):
    for backend in ("perf", "sim"):
        p = subprocess.run([exe, f"--backend={backend}", f"--filter=crash.{backend}"], capture_output=True,
                           text=True, timeout=300)
        line = next((ln for ln in p.stdout.splitlines() if ln.startswith("[1/1]")), "")
        check(p.returncode == 2 and "killed by signal 11" in line and 'in region "parse"' in line,
              f"a crash on {backend} names its region: {p.returncode}\n{p.stdout[-2000:]}")
sys.exit(finish())
