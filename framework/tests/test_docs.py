#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The documentation checked as a reader would use it.

  test_docs.py links SOURCE_DIR
      Every relative link in the tree's Markdown files (README.md, docs/,
      framework/, hwdb/, suites/) names a file that exists, and every
      #anchor a heading of that file.

  test_docs.py commands SOURCE_DIR BINARY_DIR
      The code blocks the Markdown marks, in document order:
        <!-- tested: PATH -->    the block is PATH in the tree, as it is
                                 (the file's leading comment lines aside);
        <!-- tested: hwdb check --> the block is a budget file that
                                 `pmcheck hwdb check` accepts;
        <!-- write: DIR/NAME --> the block is written to NAME in DIR;
        <!-- run: DIR [+PATH ...] [fails: TEXT] -->
                                 the shell block runs, unchanged, in DIR
                                 (with bash -e).  DIR is a directory of the
                                 tree (copied first), a directory written
                                 by `write:`, or `pmcheck`: a checkout whose
                                 `build` is BINARY_DIR.  +PATH copies a file
                                 of the tree into DIR first.  With `fails:`
                                 the block must exit non-zero and print TEXT.
      $HOME is a fresh directory, so "$HOME/pmcheck" is a prefix of this
      test's own.  Each block's command and output are printed; a failure
      names the file and line of its block.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

DOC_DIRS = ("docs", "framework", "hwdb", "suites", "probes", "ci")
FENCE = re.compile(r"^(```+|~~~+)")
MARK = re.compile(r"^<!--\s*(tested|write|run):\s*(.*?)\s*-->\s*$")
LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def markdown_files(src):
    files = [os.path.join(src, "README.md")]
    for d in DOC_DIRS:
        for root, dirs, names in os.walk(os.path.join(src, d)):
            dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".md")]
    return [f for f in files if os.path.isfile(f)]


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen = {}
    out = set()
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                s = slug(m.group(1))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else "%s-%d" % (s, n))
    return out


def check_links(src):
    problems = []
    count = 0
    for path in markdown_files(src):
        fenced = False
        with open(path, encoding="utf-8") as f:
            lines = f.readlines()
        for no, line in enumerate(lines, 1):
            if FENCE.match(line):
                fenced = not fenced
            if fenced:
                continue
            for m in LINK.finditer(re.sub(r"`[^`]*`", "", line)):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                    continue  # https:, mailto:
                count += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) \
                    if file_part else path
                where = "%s:%d" % (os.path.relpath(path, src), no)
                if not os.path.exists(dest):
                    problems.append("%s: link to %s: no such file (%s)" %
                                    (where, target, os.path.relpath(dest, src)))
                elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                    problems.append("%s: link to %s: %s has no heading with anchor #%s" %
                                    (where, target, os.path.relpath(dest, src), anchor))
    for p in problems:
        print(p)
    print("%d relative links in %d Markdown files, %d broken" %
          (count, len(markdown_files(src)), len(problems)))
    return 1 if problems else 0


def marked_blocks(path):
    """(line, kind, argument, text) of each block with a marker before it."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    out = []
    i = 0
    while i < len(lines):
        m = MARK.match(lines[i])
        if m and i + 1 < len(lines) and FENCE.match(lines[i + 1]):
            fence = FENCE.match(lines[i + 1]).group(1)
            j = i + 2
            while j < len(lines) and not lines[j].startswith(fence):
                j += 1
            if j == len(lines):
                raise SystemExit("%s:%d: the block after the marker is never closed" % (path, i + 2))
            out.append((i + 1, m.group(1), m.group(2), "\n".join(lines[i + 2:j]) + "\n"))
            i = j
        elif m:
            raise SystemExit("%s:%d: a marker must be followed directly by a ``` block" % (path, i + 1))
        i += 1
    return out


def strip_leading_comments(text):
    lines = text.split("\n")
    while lines and (lines[0].startswith(("#", "//")) or not lines[0].strip()):
        if lines[0].startswith("#include") or lines[0].startswith("#!"):
            break
        lines.pop(0)
    return "\n".join(lines)


def run_commands(src, binary):
    tmp = tempfile.mkdtemp(prefix="pmcheck-docs-")
    home = os.path.join(tmp, "home")
    os.makedirs(home)
    env = dict(os.environ, HOME=home)
    for var in ("PMCHECK_RESULTS_DIR", "PMCHECK_HWDB", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH"):
        env.pop(var, None)
    shim = os.path.join(tmp, "pmcheck")
    os.makedirs(shim)
    os.symlink(binary, os.path.join(shim, "build"))
    dirs = {"pmcheck": shim}
    failures = 0
    blocks = 0

    def directory(name):
        if name not in dirs:
            d = os.path.join(tmp, "projects", name)
            if os.path.isdir(os.path.join(src, name)):
                shutil.copytree(os.path.join(src, name), d)
            else:
                os.makedirs(d, exist_ok=True)
            dirs[name] = d
        return dirs[name]

    for path in markdown_files(src):
        rel = os.path.relpath(path, src)
        for line, kind, arg, text in marked_blocks(path):
            where = "%s:%d" % (rel, line)
            blocks += 1
            if kind == "tested" and arg == "hwdb check":
                # A budget file as the hwdb reads it: pmcheck hwdb check accepts it.
                hw = os.path.join(tmp, "hwdb-%d" % blocks)
                os.makedirs(os.path.join(hw, "budgets", "zen4"))
                with open(os.path.join(hw, "budgets", "zen4", "parser.ini"), "w") as f:
                    f.write(text)
                p = subprocess.run([os.path.join(binary, "framework/tools/pmcheck"), "hwdb", "check",
                                    "--hwdb=" + hw], capture_output=True, text=True, env=env)
                if p.returncode != 0:
                    print("FAIL %s: pmcheck hwdb check refuses the example (exit %d):\n%s%s" %
                          (where, p.returncode, p.stdout, p.stderr))
                    failures += 1
                else:
                    print("ok   %s: the example is a budget file hwdb check accepts" % where)
                continue
            if kind == "tested":
                want = os.path.join(src, arg)
                if not os.path.isfile(want):
                    print("FAIL %s: tested as %s, which does not exist" % (where, arg))
                    failures += 1
                    continue
                with open(want, encoding="utf-8") as f:
                    body = strip_leading_comments(f.read())
                if body.rstrip("\n") != text.rstrip("\n"):
                    print("FAIL %s: the block differs from %s, which CI builds; copy the file "
                          "into the block (or the block into the file)" % (where, arg))
                    failures += 1
                else:
                    print("ok   %s: the block is %s" % (where, arg))
                continue
            if kind == "write":
                d, _, name = arg.partition("/")
                target = os.path.join(directory(d), name)
                with open(target, "w", encoding="utf-8") as f:
                    f.write(text)
                print("ok   %s: wrote %s" % (where, arg))
                continue
            # run
            spec, _, expect = arg.partition(" fails: ")
            words = spec.split()
            cwd = directory(words[0])
            for extra in words[1:]:
                if not extra.startswith("+"):
                    raise SystemExit("%s: run: %r is neither a directory nor +FILE" % (where, extra))
                shutil.copy(os.path.join(src, extra[1:]), cwd)
            print("---- %s: in %s\n%s" % (where, words[0], text.rstrip()))
            p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text], cwd=cwd, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            print(p.stdout.rstrip())
            if expect:
                ok = p.returncode != 0 and expect in p.stdout
                if not ok:
                    print("FAIL %s: expected the commands to fail and print %r (exit %d)" %
                          (where, expect, p.returncode))
            else:
                ok = p.returncode == 0
                if not ok:
                    print("FAIL %s: the commands exited %d" % (where, p.returncode))
            failures += not ok
    print("%d marked blocks, %d failed" % (blocks, failures))
    if not failures:
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        print("left for inspection: %s" % tmp)
    if blocks == 0:
        print("FAIL: no marked blocks found (were the markers renamed?)")
        return 1
    return 1 if failures else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "links":
        return check_links(os.path.abspath(sys.argv[2]))
    if len(sys.argv) == 4 and sys.argv[1] == "commands":
        return run_commands(os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3]))
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main())
