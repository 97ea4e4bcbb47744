#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One version, everywhere: the CMake project's version (read here from the
top CMakeLists.txt, not from the build) must be what an installed tree says
in each place a user meets it, and find_package must keep its promise
(docs/versions.md):

  pmcheck --version, <pmcheck/version.h>, the .pc files, the libraries'
  sonames (MAJOR.MINOR before 1.0, MAJOR after), the CMake package version
  file, and a results file's environment.pmcheck_version;
  find_package(pmcheck MAJOR.MINOR) and the exact version are accepted;
  the next major, the next and the previous minor (before 1.0) and a
  malformed version are refused.

usage: test_versions.py SOURCE_DIR BUILD_DIR SELFTEST
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC, BUILD, SELFTEST = sys.argv[1:4]
failures = 0


def fail(msg):
    global failures
    print("FAIL: " + msg)
    failures += 1


def ok(msg):
    print("ok: " + msg)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def project_version():
    with open(os.path.join(SRC, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(pmcheck VERSION (\d+)\.(\d+)\.(\d+)", f.read())
    if not m:
        sys.exit("FAIL: no project(pmcheck VERSION X.Y.Z) in CMakeLists.txt")
    return tuple(int(x) for x in m.groups())


def find_package(prefix, work, request, name):
    """Configure a project that asks for pmcheck REQUEST; (accepted, output)."""
    d = os.path.join(work, "fp-" + name)
    os.makedirs(d)
    with open(os.path.join(d, "CMakeLists.txt"), "w") as f:
        f.write("cmake_minimum_required(VERSION 3.25)\nproject(v LANGUAGES NONE)\n"
                "find_package(pmcheck %s REQUIRED)\n"
                'message(STATUS "found pmcheck ${pmcheck_VERSION}")\n' % request)
    p = run(["cmake", "-S", d, "-B", os.path.join(d, "b"), "-DCMAKE_PREFIX_PATH=" + prefix])
    return p.returncode == 0, p.stdout + p.stderr


def main():
    major, minor, patch = project_version()
    full = "%d.%d.%d" % (major, minor, patch)
    soversion = "%d.%d" % (major, minor) if major == 0 else "%d" % major
    work = tempfile.mkdtemp(prefix="pmcheck-versions-")
    try:
        prefix = os.path.join(work, "prefix")
        p = run(["cmake", "--install", BUILD, "--prefix", prefix])
        if p.returncode:
            sys.exit("FAIL: install into %s: %s" % (prefix, p.stderr))

        p = run([os.path.join(prefix, "bin", "pmcheck"), "--version"])
        (ok if p.stdout.strip() == "pmcheck " + full else fail)(
            "pmcheck --version says %r (project: %s)" % (p.stdout.strip(), full))

        with open(os.path.join(prefix, "include", "pmcheck", "version.h"), encoding="utf-8") as f:
            h = f.read()
        want = {"MAJOR": str(major), "MINOR": str(minor), "PATCH": str(patch),
                "STRING": '"%s"' % full}
        got = {k: (re.search(r"#define PMCHECK_VERSION_%s (\S+)" % k, h) or [None, None])[1]
               for k in want}
        (ok if got == want else fail)("<pmcheck/version.h>: %s" % got)

        libdir = [d for d in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu")
                  if os.path.exists(os.path.join(prefix, d, "pkgconfig", "pmcheck.pc"))]
        if not libdir:
            sys.exit("FAIL: no pkgconfig/pmcheck.pc under %s" % prefix)
        libdir = os.path.join(prefix, libdir[0])
        for pc in ("pmcheck", "pmcheck-harness"):
            p = run(["pkg-config", "--modversion", pc],
                    env=dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig")))
            (ok if p.stdout.strip() == full else fail)("%s.pc Version: %r" % (pc, p.stdout.strip()))

        for lib in ("libpmcheck", "libpmcheck_harness"):
            path = os.path.join(libdir, lib + ".so")
            if not os.path.exists(path):
                ok("%s: a static build has no soname" % lib)
                continue
            p = run(["readelf", "-d", path])
            m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", p.stdout)
            soname = m.group(1) if m else None
            (ok if soname == "%s.so.%s" % (lib, soversion) else fail)(
                "%s soname %s (want %s.so.%s)" % (lib, soname, lib, soversion))
            real = os.path.realpath(path)
            (ok if real.endswith(".so." + full) else fail)("%s is %s" % (lib, os.path.basename(real)))

        res = os.path.join(work, "r.json")
        run([SELFTEST, "--filter=pass.plain", "--json=" + res])
        try:
            with open(res, encoding="utf-8") as f:
                v = json.load(f)["environment"]["pmcheck_version"]
        except (OSError, ValueError, KeyError) as e:
            v = "unreadable (%s)" % e
        (ok if v == full else fail)("results environment.pmcheck_version %r" % v)

        nxt_major = "%d.0" % (major + 1)
        cases = [("%d.%d" % (major, minor), True, "this minor"),
                 (full, True, "the exact version"),
                 (nxt_major, False, "the next major")]
        if major == 0:
            cases.append(("0.%d" % (minor + 1), False, "the next minor, before 1.0"))
            if minor:
                cases.append(("0.%d" % (minor - 1), False, "the previous minor, before 1.0"))
        cases.append(("%d.%d.x" % (major, minor), False, "a malformed version"))
        for i, (req, accept, what) in enumerate(cases):
            got, out = find_package(prefix, work, req, str(i))
            if got != accept:
                fail("find_package(pmcheck %s REQUIRED), %s: %s\n%s"
                     % (req, what, "accepted" if got else "refused", out[-1500:]))
                continue
            if accept and "found pmcheck " + full not in out:
                fail("find_package(pmcheck %s): pmcheck_VERSION is not %s\n%s" % (req, full, out[-800:]))
                continue
            # CMake's wording changes between releases (3.25 and 3.31 differ
            # around it); what must hold is that the error is find_package's
            # and quotes the request it refused.
            if not accept and "malformed" in what and not (
                    "find_package" in out and '"%s"' % req in out):
                fail("find_package(pmcheck %s): refused without quoting the malformed request\n%s"
                     % (req, out))
                continue
            if not accept and "malformed" not in what and full not in out:
                fail("find_package(pmcheck %s): the refusal does not say which version is "
                     "installed\n%s" % (req, out[-800:]))
                continue
            ok("find_package(pmcheck %s REQUIRED), %s: %s" % (req, what,
                                                             "accepted" if got else "refused"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%s: version %s in every place" % ("FAIL" if failures else "PASS", full))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
