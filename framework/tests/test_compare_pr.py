#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A pull request gated against its base (ci/compare-pr), on the README's
quick start in a git repository made here, against a prefix installed from
this build.  Each branch is a pull request into main:
  unchanged   a commit that changes no code: passes, nothing moved
  twice       twice the work: exit 3, the table names expat's functions
  tolerated   twice the work under --threshold=150: passes, said as moved
  half        half the work: an improvement, passes
  no-build    the head does not compile: exit 1
and from branches whose own base is broken:
  a merge base that does not build: exit 5, said, neither pass nor fail
  a merge base built Debug (its CMakeLists forces it): two toolchains,
  both named, refused (exit 2)
A library upgrade under both sides (another libexpat.so.1 first on both)
moves nothing; the unchanged one also passes run as nobody (no root); bad
arguments are usage errors.  The doors of issue 59, each a row:
  perf        twice the work, the case moved to .backends = PMC_BACKEND_PERF:
              gone from sim, exit 3 (0 with --allow-gone)
  gate2-twice a regression in gate while the base's gate2 runs no case:
              exit 3, not the no verdict (5) of gate2
  spaces      the repository, TMPDIR and --out with a space: compared (3)
  skip-worktree  twice the work committed, reverted in a working tree git
              is told to skip: the commit is built, exit 3 (it passed)
  and, before anything is built: a base that is an option (nothing run), a
  threshold out of range, a suite that is a pattern, a change not committed
  (the head would not be the commit named), --out on tracked files (--out=.
  hid the change): exit 64; a head that is its
  merge base: nothing compared, said, exit 5.
usage: test_compare_pr.py SOURCE_DIR BUILD_DIR STUB_LIBRARY_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import check, finish, guarded  # noqa: E402

SRC, BUILD, STUB_DIR = sys.argv[1:4]
SCRIPT = os.path.join(SRC, "ci", "compare-pr")
GIT = ["git", "-c", "user.email=ci@pmcheck.invalid", "-c", "user.name=ci"]


def git(repo, *args):
    subprocess.run([*GIT, "-C", repo, *args], check=True, capture_output=True)


def branch(repo, name, start, edit, message):
    """A branch from start with one commit: edit(repo) changes the files."""
    git(repo, "checkout", "-q", "-b", name, start)
    edit(repo)
    git(repo, "commit", "-qam", message)
    git(repo, "checkout", "-q", "main")


def sed(path, old, new):
    def edit(repo):
        f = os.path.join(repo, path)
        text = open(f).read()
        assert old in text, (path, old)
        open(f, "w").write(text.replace(old, new, 1))
    return edit


def compare(repo, head, base, prefix, *args, env=None, user=None, suites="gate"):
    if head:
        git(repo, "checkout", "-q", head)
    out = tempfile.mkdtemp(prefix="pmcheck-compare out-")  # a space: quoted everywhere
    if user:
        shutil.chown(out, user, "nogroup")
    e = {k: v for k, v in os.environ.items() if not k.startswith(("PMCHECK_", "GITHUB_"))}
    e.update(env or {})
    cmd = ["bash", SCRIPT, f"--suites={suites}", f"--base={base}", f"--prefix={prefix}", f"--out={out}", *args]
    if user:
        cmd = ["setpriv", f"--reuid={user}", "--regid=nogroup", "--clear-groups", *cmd]
        e["HOME"] = out
    p = subprocess.run(cmd, cwd=repo, capture_output=True, text=True, env=e, timeout=600)
    summary = open(os.path.join(out, "summary.md")).read() if os.path.exists(os.path.join(out, "summary.md")) else ""
    # The functions come from the suites' own runs on pmcheck's valgrind
    # tool: no moved case is run once more under callgrind.
    again = [f for f in os.listdir(out) if f.endswith("-functions.json")]
    check(not again, f"{head}: no re-run under callgrind for the functions: {again}")
    if head:
        git(repo, "checkout", "-q", "main")
    shutil.rmtree(out, ignore_errors=True)
    return p.returncode, summary, p.stderr


def main():
    work = tempfile.mkdtemp(prefix="pmcheck-compare-pr-")
    os.chmod(work, 0o755)
    prefix = os.path.join(work, "prefix")
    p = subprocess.run(["cmake", "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
    check(p.returncode == 0, f"install: {p.stderr}")
    repo = os.path.join(work, "repo")
    os.makedirs(repo)
    for f in ("CMakeLists.txt", "gate.c"):
        shutil.copy(os.path.join(SRC, "ci", "quickstart-c", f), repo)
    subprocess.run(["git", "init", "-q", "-b", "main", repo], check=True)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "the quick start")
    items = "int items = env ? atoi(env) : 1000"

    def readme(r):
        open(os.path.join(r, "README"), "w").write("words, no code\n")
        git(r, "add", "README")
    branch(repo, "unchanged", "main", readme, "a README")
    branch(repo, "twice", "main", sed("gate.c", items, items.replace("1000", "2000")), "twice the work")
    branch(repo, "half", "main", sed("gate.c", items, items.replace("1000", "500")), "half the work")
    branch(repo, "no-build", "main", sed("gate.c", "static void parse", "static void parse("), "a typo")
    branch(repo, "broken", "main", sed("gate.c", "static void parse", "static void parse("), "broken")
    branch(repo, "fixed", "broken", sed("gate.c", "static void parse(", "static void parse"), "fixed")
    branch(repo, "debug", "main", sed("CMakeLists.txt", "enable_testing()",
                                      'set(CMAKE_BUILD_TYPE Debug CACHE STRING "" FORCE)\nenable_testing()'), "Debug")
    def off_sim(r):  # twice the work, where sim no longer counts it
        sed("gate.c", items, items.replace("1000", "2000"))(r)
        sed("gate.c", ".backends = PMC_BACKEND_SIM", ".backends = PMC_BACKEND_PERF")(r)
    branch(repo, "perf", "main", off_sim, "twice the work, off sim")

    def gate2(r):  # an executable of the build that runs no case: no results
        open(os.path.join(r, "gate2.c"), "w").write("int main(void) { return 0; }\n")
        open(os.path.join(r, "CMakeLists.txt"), "a").write("add_executable(gate2 gate2.c)\n")
        git(r, "add", "gate2.c")
    branch(repo, "gate2-base", "main", gate2, "a gate2 that runs no case")
    branch(repo, "gate2-twice", "gate2-base", sed("gate.c", items, items.replace("1000", "2000")), "twice the work")
    branch(repo, "release", "debug", sed("CMakeLists.txt", 'set(CMAKE_BUILD_TYPE Debug CACHE STRING "" FORCE)\n', ""),
           "back")

    rc, md, err = compare(repo, "unchanged", "main", prefix)
    check(rc == 0 and "No count moved: 0 regressions, 0 improvements, 0 tolerated, 3 same" in md,
          f"unchanged: passes, nothing moved: {rc}\n{md}{err}")

    rc, md, err = compare(repo, "twice", "main", prefix)
    rows = re.findall(r"^\| `0x[0-9a-f]+` \| libexpat\.so\.1[.\d]* \| \d+ \| \d+ \| \+\d+ \|", md, re.M)
    check(rc == 3 and "Moved: `xml.parse` — **a regression beyond the threshold**" in md and
          re.search(r"\| `xml\.parse` \| parse \| `instructions:u` \| \d+(\.\.\d+)? \| \d+(\.\.\d+)? \(\+10\d\.\d\d%\) \| "
                    r"\*\*regression\*\* \|", md) and len(rows) >= 3 and "xml.parse_calls" not in md,
          f"twice the work: exit 3, the table, expat's functions (by address: Debian strips it): {rc}\n{md}{err}")
    print(md)

    rc, md, err = compare(repo, "twice", "main", prefix, "--threshold=150%")
    check(rc == 0 and "Moved: `xml.parse`" in md and "| tolerated |" in md and "threshold: 150%. Exit 0." in md and
          "%%" not in md and "150%150" not in md,
          f"within the threshold: passes, said as moved and tolerated, the threshold said once: {rc}\n{md}")
    rc, md, err = compare(repo, "half", "main", prefix)
    check(rc == 0 and "| improvement" in md, f"half the work: an improvement passes: {rc}\n{md}")
    rc, md, err = compare(repo, "no-build", "main", prefix)
    check(rc == 1 and "The head does not build" in md, f"the head does not build: exit 1: {rc}\n{md}")
    rc, md, err = compare(repo, "fixed", "broken", prefix)
    check(rc == 5 and "No verdict: the merge base" in md and "does not build" in md and "error" in md and
          "no verdict" in err, f"a merge base that does not build: exit 5, said: {rc}\n{md}{err}")
    rc, md, err = compare(repo, "release", "debug", prefix)
    check(rc == 2 and "**Not compared:** different toolchains" in md and "-O0-Debug" in md and
          "-O-RelWithDebInfo" in md, f"two toolchains: both named, refused: {rc}\n{md}")

    # A case that leaves sim (or is removed, or stops measuring) fails
    # unless asked for; it is never a callgrind run that failed.
    rc, md, err = compare(repo, "perf", "main", prefix)
    check(rc == 3 and "Gone: `xml.parse` — **not measured by the head on sim**" in md and
          "callgrind runs failed" not in md and "--allow-gone" in md,
          f"twice the work moved to the perf backend: gone, exit 3: {rc}\n{md}{err}")
    rc, md, err = compare(repo, "perf", "main", prefix, "--allow-gone")
    check(rc == 0 and "Gone: `xml.parse` (not measured by the head on sim; allowed by --allow-gone)" in md,
          f"--allow-gone: a case gone from sim passes, said: {rc}\n{md}{err}")

    # One suite's no verdict never hides another's regression.
    rc, md, err = compare(repo, "gate2-twice", "gate2-base", prefix, suites="gate gate2")
    check(rc == 3 and "**a regression beyond the threshold**" in md and "**No verdict:** the merge base's `gate2`" in md,
          f"gate regresses, the base's gate2 runs no case: exit 3, both said: {rc}\n{md}{err}")

    # Paths with a space: the source directory, TMPDIR and --out.
    spaced = os.path.join(work, "repo with space")
    shutil.copytree(repo, spaced)
    tmp = os.path.join(work, "tmp dir")
    os.makedirs(tmp)
    rc, md, err = compare(spaced, "twice", "main", prefix, env={"TMPDIR": tmp})
    check(rc == 3 and "Moved: `xml.parse` — **a regression beyond the threshold**" in md,
          f"a source directory and TMPDIR with a space: compared, exit 3: {rc}\n{md}{err}")
    shutil.rmtree(spaced, ignore_errors=True)
    check(os.listdir(tmp) == [], f"TMPDIR: the work directory removed: {os.listdir(tmp)}")

    # The head is its commit, whatever the checkout says: a regression
    # reverted in the working tree of a file git is told to skip
    # (--skip-worktree: git status shows nothing) was built as the head,
    # and the pull request passed (second hostile campaign, issue 59).
    git(repo, "checkout", "-q", "twice")
    sed("gate.c", items.replace("1000", "2000"), items)(repo)
    git(repo, "update-index", "--skip-worktree", "gate.c")
    rc, md, err = compare(repo, None, "main", prefix)
    git(repo, "update-index", "--no-skip-worktree", "gate.c")
    git(repo, "checkout", "-q", "--", "gate.c")
    git(repo, "checkout", "-q", "main")
    check(rc == 3 and "Moved: `xml.parse` — **a regression beyond the threshold**" in md,
          f"a regression hidden by --skip-worktree: the commit is compared, exit 3: {rc}\n{md}{err}")

    # A library upgrade that lands under both sides moves nothing.
    rc, md, err = compare(repo, "unchanged", "main", prefix,
                          env={"LD_LIBRARY_PATH": STUB_DIR, "PMCHECK_SIM_ENV": "LD_LIBRARY_PATH"})
    check(rc == 0 and "No count moved" in md, f"another libexpat under both sides: passes: {rc}\n{md}{err}")

    # No root: the same as nobody, on a copy of the repository it owns.
    if os.geteuid() == 0 and shutil.which("setpriv"):
        mine = os.path.join(work, "repo-nobody")
        shutil.copytree(repo, mine)
        git(mine, "checkout", "-q", "twice")
        subprocess.run(["chown", "-R", "nobody:nogroup", mine], check=True)
        rc, md, err = compare(mine, None, "main", prefix, user="nobody")
        check(rc == 3 and "Moved: `xml.parse`" in md, f"as nobody (no root, no PMU): {rc}\n{md}{err}")
    else:
        print("not root: the unprivileged run is every run here")

    # Refused before anything is built (a build would write build-*.log).
    def refused(*args, head=None, base="main", out=None):
        if head:
            git(repo, "checkout", "-q", head)
        o = out or tempfile.mkdtemp(prefix="pmcheck-compare-usage-")
        e = {k: v for k, v in os.environ.items() if not k.startswith(("PMCHECK_", "GITHUB_"))}
        p = subprocess.run(["bash", SCRIPT, "--suites=gate", f"--base={base}", f"--prefix={prefix}", f"--out={o}", *args],
                           cwd=repo, capture_output=True, text=True, env=e, timeout=60)
        built = [f for f in os.listdir(os.path.join(repo, o)) if f.startswith("build-")] if os.path.isdir(os.path.join(repo, o)) else []
        md = open(os.path.join(repo, o, "summary.md")).read() if os.path.exists(os.path.join(repo, o, "summary.md")) else ""
        if not out:
            shutil.rmtree(o, ignore_errors=True)
        if head:
            git(repo, "checkout", "-q", "main")
        return p.returncode, p.stderr, md, built
    planted = os.path.join(work, "PLANTED")
    for base in (f"--upload-pack=touch {planted};", f"origin/--upload-pack=touch {planted};"):
        rc, err, md, built = refused(head="twice", base=base)
        check(rc == 64 and "cannot begin with '-'" in err and base in err and not os.path.exists(planted) and not built,
              f"--base={base}: a ref, never an option: exit 64, nothing run: {rc} {err} {os.path.exists(planted)}")
    rc, err, md, built = refused("--threshold=1000000", head="twice")
    check(rc == 64 and "--threshold=1000000" in err and "0 to 1000" in err and not built,
          f"--threshold=1000000: refused before any build: {rc} {err} {built}")
    rc, err, md, built = refused("--suites=g*", head="twice")
    check(rc == 64 and "'g*'" in err and "gate.c" not in err + md and not built,
          f"--suites='g*': not expanded against the directory: {rc} {err}{md}")
    git(repo, "checkout", "-q", "twice")
    sed("gate.c", items.replace("1000", "2000"), items)(repo)  # the regression reverted, not committed
    rc, err, md, built = refused()
    git(repo, "checkout", "-q", "--", "gate.c")
    git(repo, "checkout", "-q", "main")
    check(rc == 64 and "not committed" in err and "gate.c" in err and not built,
          f"a change not committed: refused, the file named: {rc} {err}{md}")
    # --out naming a directory git tracks files in (here the checkout
    # itself) hid every change there: refused, nothing written.
    git(repo, "checkout", "-q", "twice")
    sed("gate.c", items.replace("1000", "2000"), items)(repo)
    rc, err, md, built = refused(out=".")
    git(repo, "checkout", "-q", "--", "gate.c")
    git(repo, "checkout", "-q", "main")
    littered = [f for f in ("summary.md", "build-base.log") if os.path.exists(os.path.join(repo, f))]
    git(repo, "clean", "-fdq")  # what an old script wrote there would fail the rows below
    check(rc == 64 and "holds files git tracks" in err and not built and not littered,
          f"--out=. over a change not committed: refused, nothing written: {rc} {err} {littered}")
    for again in ("first", "second"):  # --out in the checkout is no change of it
        rc, err, md, built = refused(out="pmcheck-compare")
        check(rc == 5 and "Nothing compared: the head is its merge base" in md and "no verdict" in err and not built,
              f"the head is the base ({again} run): nothing compared, said, exit 5: {rc} {err}{md}")
    shutil.rmtree(os.path.join(repo, "pmcheck-compare"))

    for args, what in (((), "no base"), (("--suites=",), "no suites"), (("--threshold=lots",), "--threshold"),
                       (("--base=no-such-branch",), "no commit")):
        e = {k: v for k, v in os.environ.items() if not k.startswith(("PMCHECK_", "GITHUB_"))}
        p = subprocess.run(["bash", SCRIPT, "--suites=gate", f"--prefix={prefix}",
                            *(("--base=main",) if what not in ("no base", "no commit") else ()), *args],
                           cwd=repo, capture_output=True, text=True, env=e, timeout=60)
        check(p.returncode == 64 and what in p.stderr, f"{what}: usage, exit 64: {p.returncode} {p.stderr}")
    shutil.rmtree(work, ignore_errors=True)


guarded(main)
finish()
