#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The public ABI against the committed baseline (docs/versions.md).

Each shared library's ABI (libabigail's abidw: exported functions and
variables, and every type they reach that the public headers define) is kept
in framework/abi/LIB.abi.  abidiff compares the built library with it:

  no change, or only additions      pass (additions are printed)
  an incompatible change            FAIL, unless the soname moved with it
                                    (the major number, or before 1.0 the
                                    minor one): then pass, and say to write
                                    the new baseline with ci/abi-baseline
usage:
  test_abi.py check BASELINE_DIR INCLUDE_DIRS LIB...
  test_abi.py write BASELINE_DIR INCLUDE_DIRS LIB...
  test_abi.py self-test INCLUDE_DIRS      a changed public struct is caught
INCLUDE_DIRS is a colon-separated list of directories holding pmcheck/*.h.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

ABIDIFF_ERROR, ABIDIFF_USAGE, ABIDIFF_CHANGE, ABIDIFF_INCOMPATIBLE = 1, 2, 4, 8


def need(tool):
    if not shutil.which(tool):
        print("SKIP: %s not installed (Debian: abigail-tools; ci/setup installs it)" % tool)
        sys.exit(77)


def header_dirs(include_dirs):
    return [os.path.join(d, "pmcheck") for d in include_dirs.split(":") if d]


def soname(lib):
    out = subprocess.run(["readelf", "-d", lib], capture_output=True, text=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", out)
    return m.group(1) if m else None


def baseline_of(baseline_dir, lib):
    name = os.path.basename(lib).split(".so")[0]
    return os.path.join(baseline_dir, name + ".abi")


def write(baseline_dir, include_dirs, libs):
    need("abidw")
    os.makedirs(baseline_dir, exist_ok=True)
    for lib in libs:
        out = baseline_of(baseline_dir, lib)
        cmd = ["abidw", "--no-corpus-path", "--no-comp-dir-path", "--drop-private-types",
               "--out-file", out + ".tmp"]
        for h in header_dirs(include_dirs):
            cmd += ["--headers-dir", h]
        p = subprocess.run(cmd + [lib], capture_output=True, text=True)
        if p.returncode:
            print("FAIL: abidw %s: %s" % (lib, p.stderr.strip()))
            return 1
        os.replace(out + ".tmp", out)
        print("wrote %s (%s)" % (out, soname(lib)))
    return 0


def check_one(baseline, include_dirs, lib):
    """0 when the library keeps the baseline's ABI or moved its soname."""
    if not os.path.exists(baseline):
        print("FAIL: %s: no ABI baseline %s; write one with ci/abi-baseline" % (lib, baseline))
        return 1
    with open(baseline, encoding="utf-8") as f:
        m = re.search(r"soname='([^']+)'", f.read(4096))
    old_soname, new_soname = (m.group(1) if m else None), soname(lib)
    cmd = ["abidiff", "--no-show-locs"]
    for h in header_dirs(include_dirs):
        cmd += ["--headers-dir2", h]
    p = subprocess.run(cmd + [baseline, lib], capture_output=True, text=True)
    report = (p.stdout + p.stderr).strip()
    rc = p.returncode
    name = os.path.basename(lib)
    if rc & (ABIDIFF_ERROR | ABIDIFF_USAGE):
        print("FAIL: abidiff %s %s could not compare (exit %d):\n%s" % (baseline, lib, rc, report))
        return 1
    # abidiff sets its "incompatible" bit only for what is certainly a
    # break (a symbol gone); a changed type of a public function is "a
    # change". Here every removed or changed function or variable breaks,
    # and only additions do not.
    removed_or_changed = 0
    for m in re.finditer(r"changes summary: (\d+) Removed[^,]*, (\d+) Changed", report):
        removed_or_changed += int(m.group(1)) + int(m.group(2))
    if rc & ABIDIFF_INCOMPATIBLE or (rc & ABIDIFF_CHANGE and removed_or_changed):
        if old_soname != new_soname:
            print("ok: %s: incompatible ABI change with the soname moved (%s -> %s); write the new "
                  "baseline with ci/abi-baseline in the same commit:\n%s"
                  % (name, old_soname, new_soname, report))
            return 0
        print("FAIL: %s: an incompatible ABI change, and the soname is still %s. Either keep the "
              "ABI, or move the version (CMakeLists.txt project(): the minor number before 1.0, "
              "the major after) and write the baseline with ci/abi-baseline. abidiff says:\n%s"
              % (name, new_soname, report))
        return 1
    if rc & ABIDIFF_CHANGE:
        print("ok: %s: compatible ABI changes only (additions), soname %s:\n%s" % (name, new_soname, report))
        return 0
    print("ok: %s: the ABI of %s, unchanged" % (name, old_soname))
    return 0


def check(baseline_dir, include_dirs, libs):
    need("abidiff")
    failures = sum(check_one(baseline_of(baseline_dir, lib), include_dirs, lib) for lib in libs)
    return 1 if failures else 0


SHIM = r"""
#include <pmcheck/pmcheck.h>
#include <pmcheck/harness.h>
__attribute__((visibility("default"))) int abi_shim_identify(struct pmc_cpu_id *id)
{ return id ? (int)sizeof(*id) : 0; }
__attribute__((visibility("default"))) int abi_shim_options(const struct pmc_test_options *o)
{ return o ? (int)sizeof(*o) : 0; }
"""


def self_test(include_dirs):
    """A shim library over the real public headers, built as they are and
    with one public struct changed: the check must pass the first, fail the
    second under the same soname, and pass it under a moved soname."""
    need("abidw")
    need("abidiff")
    work = tempfile.mkdtemp(prefix="pmcheck-abi-")
    failures = 0
    try:
        src = os.path.join(work, "shim.c")
        with open(src, "w") as f:
            f.write(SHIM)
        changed = os.path.join(work, "changed")
        shutil.copytree(header_dirs(include_dirs)[0], os.path.join(changed, "pmcheck"))
        for d in header_dirs(include_dirs)[1:]:
            for n in os.listdir(d):
                shutil.copy(os.path.join(d, n), os.path.join(changed, "pmcheck", n))
        path = os.path.join(changed, "pmcheck", "hwdb.h")
        with open(path, encoding="utf-8") as f:
            text = f.read()
        new = text.replace("struct pmc_cpu_id {", "struct pmc_cpu_id {\n\tint abi_selftest_new_first_field;", 1)
        if new == text:
            print("FAIL: self-test: struct pmc_cpu_id not found in hwdb.h")
            return 1
        with open(path, "w", encoding="utf-8") as f:
            f.write(new)

        def build(out, incs, so):
            cmd = ["cc", "-shared", "-fPIC", "-g", "-O1", "-fvisibility=hidden", "-o", out, src,
                   "-Wl,-soname," + so] + ["-I" + d for d in incs]
            subprocess.run(cmd, check=True)
            return out

        orig_incs = [d for d in include_dirs.split(":") if d]
        v1 = build(os.path.join(work, "libabishim.so"), orig_incs, "libabishim.so.0.2")
        base = os.path.join(work, "abi")
        if write(base, include_dirs, [v1]):
            return 1
        for d in ("same", "v2", "v3"):
            os.makedirs(os.path.join(work, d))
        same = build(os.path.join(work, "same", "libabishim.so"), orig_incs, "libabishim.so.0.2")
        v2 = build(os.path.join(work, "v2", "libabishim.so"), [changed], "libabishim.so.0.2")
        v3 = build(os.path.join(work, "v3", "libabishim.so"), [changed], "libabishim.so.0.3")
        cdir = changed
        for what, lib, incs, want in (("the same headers", same, include_dirs, 0),
                                      ("pmc_cpu_id changed, same soname", v2, cdir, 1),
                                      ("pmc_cpu_id changed, soname moved", v3, cdir, 0)):
            print("--- %s" % what)
            got = check_one(os.path.join(base, "libabishim.abi"), incs, lib)
            if got != want:
                print("FAIL: self-test: %s: the check %s" % (what, "failed" if got else "passed"))
                failures += 1
        # The failure must name the struct and the field.
        p = subprocess.run(["abidiff", os.path.join(base, "libabishim.abi"), v2],
                           capture_output=True, text=True)
        if "pmc_cpu_id" not in p.stdout or "abi_selftest_new_first_field" not in p.stdout:
            print("FAIL: self-test: abidiff's report does not name pmc_cpu_id and its new field:\n"
                  + p.stdout)
            failures += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%s: the ABI check passes an unchanged ABI, fails a changed public struct under the same "
          "soname, and passes it under a moved one" % ("FAIL" if failures else "PASS"))
    return 1 if failures else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "self-test":
        return self_test(sys.argv[2])
    if len(sys.argv) >= 5 and sys.argv[1] in ("check", "write"):
        fn = check if sys.argv[1] == "check" else write
        return fn(sys.argv[2], sys.argv[3], sys.argv[4:])
    print(__doc__)
    return 64


if __name__ == "__main__":
    sys.exit(main())
