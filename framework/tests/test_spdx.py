#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every source, script and build file of the tree says its licence in an
SPDX-License-Identifier line among its first five lines: MIT, except the
valgrind tool (framework/src/sim/tool/), which links valgrind's core and is
GPL-2.0-or-later, and the protocol header both sides include.

Left out, each for a reason: documentation and data (Markdown, JSON, INI, ABI baselines,
text, images, the fuzzers' corpora), the licence texts themselves, editor
and git settings, and the two quick-start projects the README prints whole
(ci/quickstart-c, ci/downstream-cxx): a user copies them into a project
under its own licence.

usage: test_spdx.py SOURCE_DIR         check the tree
       test_spdx.py --self-test        the check refuses a file without one
"""
import os
import re
import sys
import tempfile

SKIP_DIRS = {".git", "__pycache__", "corpus", "Testing"}
# A git worktree's .git is a file naming the repository, not a directory.
SKIP_FILE = re.compile(r"\.(md|json|ini|txt|png|jpg|pyc|supp|xml|abi)$|^(LICENSE|COPYING|\.git|\.gitignore|\.clang-format)$")
SKIP_PATH = re.compile(r"^(hwdb|ci/quickstart-c|ci/downstream-cxx)/|^build[^/]*/|^out/")
# The valgrind tool's sources (they link valgrind's core), by name: a new
# file of the tool is added here on purpose, never by a pattern.
ALLOWED = {
    **{"framework/src/sim/tool/" + n: {"GPL-2.0-or-later"}
       for n in ("pmc_main.c", "pmc_instrument.c", "pmc_cache.c", "pmc_branch.c", "pmc_watch.c", "pmc_fn.c",
                 "pmc_ir.c", "pmc_state.c", "pmc_tool_int.h")},
    "framework/src/sim/tool/pmcheck_tool.h": {"MIT OR GPL-2.0-or-later"},
}
SPDX = re.compile(r"SPDX-License-Identifier:\s*([A-Za-z0-9.+ -]+?)\s*(\*/)?\s*$")


def files(root):
    for d, dirs, names in os.walk(root):
        rel_d = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and
                         not SKIP_PATH.match(os.path.normpath(os.path.join(rel_d, x)) + "/"))
        for n in sorted(names):
            rel = os.path.normpath(os.path.join(rel_d, n))
            if not SKIP_FILE.search(n) and not SKIP_PATH.match(rel):
                yield rel


def licence_of(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for _ in range(5):
                m = SPDX.search(f.readline().rstrip("\n"))
                if m:
                    return m.group(1).strip()
    except OSError:
        return None
    return None


def check(root):
    bad, n = [], 0
    for rel in files(root):
        n += 1
        got = licence_of(os.path.join(root, rel))
        want = ALLOWED.get(rel, {"MIT"})
        if got not in want:
            first = sorted(want)[0]
            bad.append(f"{rel}: {'no SPDX-License-Identifier line in its first 5 lines' if got is None else 'says ' + got}"
                       f" (want {' or '.join(sorted(want))}: a line such as 'SPDX-License-Identifier: {first}'"
                       " in a comment at its top)")
    for b in bad:
        print("FAIL: " + b)
    print(f"{n} files, {len(bad)} without the licence they should say")
    return n, bad


def self_test():
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "framework/src/sim/tool"))
        with open(os.path.join(d, "good.c"), "w") as f:
            f.write("/* SPDX-License-Identifier: MIT */\nint x;\n")
        with open(os.path.join(d, "script"), "w") as f:
            f.write("#!/bin/sh\n# SPDX-License-Identifier: MIT\ntrue\n")
        with open(os.path.join(d, "notes.md"), "w") as f:
            f.write("prose is left out\n")
        with open(os.path.join(d, "framework/src/sim/tool/pmc_main.c"), "w") as f:
            f.write("/* SPDX-License-Identifier: MIT */\n")
        with open(os.path.join(d, "bare.py"), "w") as f:
            f.write("print(1)\n")
        n, bad = check(d)
        ok = (n == 4 and len(bad) == 2 and any(b.startswith("bare.py: no SPDX") for b in bad) and
              any(b.startswith("framework/src/sim/tool/pmc_main.c: says MIT") for b in bad))
        print("self-test:", "PASS" if ok else f"FAIL {n} {bad}")
        return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    n, bad = check(sys.argv[1])
    sys.exit(1 if bad or n < 100 else 0)
