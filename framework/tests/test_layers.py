#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Who may call whom, read from the built objects (nm), not from intentions.

  test_layers.py harness OBJECT|DIR...
      Every file of the library (util, core, sim, hwdb, harness), the probes,
      the pmcheck command and pmcheck's valgrind tool (src/sim/tool, a
      program of its own: its files' symbols are looked up among its own)
      calls the others without a circle: the graph of "file A uses a
      symbol file B defines" is acyclic.  A circle is printed with the
      symbols on each of its edges.

  test_layers.py includes SOURCE_DIR
      Every #include "..." and #include <pmcheck/...> under framework/src and
      framework/include/pmcheck names a header of its own folder or of a
      layer below it: util, sim, core, hwdb, harness, bottom up (LAYERS).  A
      public header's layer is the one PUBLIC_HEADERS gives it, and every
      function it declares is defined in that layer.  `library` checks the
      same order for calls.

  test_layers.py tools SOURCE_DIR CLI_OBJECT_DIR
      The pmcheck command is a client of the library's interface: its
      sources include the public headers and, of the library's private
      ones, only the tools' interface (src/harness/tools.h, with
      src/util/child.h and src/util/file.h, which it includes); every
      pmc__ symbol its objects use from the library is declared there.

  test_layers.py loaded LIBRARY...
      What the measured process maps (on the sim backend valgrind reads,
      relocates and translates all of it, for every case): libpmcheck and
      libpmcheck_harness need no libm (src/util/arith.h says why), no
      libpfm4 (opened when an event name needs it, src/core/event_pmu.c)
      and no libcpuid (CPUID is read directly, src/hwdb/cpuid.c): no
      NEEDED entry for them, and no libm symbol left undefined.

  test_layers.py pkgconfig PCFILE LIBRARY [PCFILE LIBRARY]...
      Each pkg-config file names, in Libs or Libs.private, every library its
      shared library needs (its NEEDED entries, but the C library, the
      loader and pmcheck's own), so that a static link with
      `pkg-config --static --libs` finds them all.

  test_layers.py long SOURCE_DIR
      The house rule on length: a production source file (framework/src,
      framework/tools, framework/include, probes, cmake) over 600 lines
      says why at its top, before its first line of code: a comment line
      "Over 600 lines because ..." with a reason of some words.

  test_layers.py map SOURCE_DIR
      framework/README.md's map names every .c and .h file under
      framework/src, framework/tools and framework/include, in backquotes:
      by its name where no other file has that name, otherwise by a path
      that tells it from the others (`hwdb/db.c`, `history/db.c`).

  test_layers.py cli SOURCE_DIR
      The command's private interface is one header, framework/tools/cli.h:
      no other header beside it; a file of the command includes, of quoted
      headers, only cli.h (and the history store's history/history.h), a
      file of the store its own folder's and ../cli.h; only cli.h includes
      the library's tools.h and the probes' probe.h.
"""
import collections
import glob
import os
import re
import subprocess
import sys

# Headers the command finds through its include path: the tools' interface
# and the probes' (a library of its own, probes/).  Its own headers, under
# framework/tools (the history store's in framework/tools/history), it
# includes by their path from the file that includes them.
TOOLS_INCLUDED = {"tools.h", "probe.h"}
# libpmcheck's layers, bottom up, as framework/README.md and the build list
# them: a folder may call and include only the folders before it in this
# list (the tools and the probes come after the harness).
LAYERS = ("util", "sim", "core", "hwdb", "harness")

# pmcheck's valgrind tool, built by hand beside its sources' build folder
# (src/sim/tool/CMakeLists.txt): a program of its own, linked with
# valgrind's core and nothing of the library.
TOOL_DIR = "src/sim/tool"

# Each public header (framework/include/pmcheck) and the layer it belongs
# to: the layer that defines its functions, or for a header of types and
# macros alone, the lowest layer that uses them.  A header not named here
# fails, so that a new one says where it sits.
PUBLIC_HEADERS = {
    "export.h": "util", "version.h": "util", "error.h": "util", "file.h": "util",
    "spec.h": "util", "reading.h": "util",
    "sim.h": "sim",
    "event.h": "core", "counters.h": "core", "userpage.h": "core", "region.h": "core",
    "sampling.h": "core", "machine.h": "core",
    "hwdb.h": "hwdb", "pmcheck.h": "hwdb", "pmcheck.hpp": "hwdb",
    "harness.h": "harness", "gbench.h": "harness",
}

TOOLS_INTERFACE = ("framework/src/harness/tools.h", "framework/src/core/command.h", "framework/src/util/child.h",
                   "framework/src/util/file.h", "probes/probe.h")


def symbols(obj):
    defined, used = set(), set()
    out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVW":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def unit(obj):
    name = os.path.basename(obj)
    return re.sub(r"\.(c|cpp)\.o$|\.o$", "", name)


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def src_at(parts):
    """Where the library's src/ is in an object's path: right under its
    target's directory (pmcheck_objects.dir/src/core/...), never a
    directory above the build, which may have any name (a checkout at /src)."""
    for i in range(1, len(parts)):
        if parts[i] == "src" and parts[i - 1].endswith(".dir"):
            return i
    return -1


def file_name(obj):
    """src/core/counters.c for the library's objects, probes/probe.c and
    tools/pmcheck.c for the probes' and the command's (tools/history/db.c
    for a file of its history folder)."""
    parts = obj.replace("\\", "/").split("/")
    base = re.sub(r"\.o$", "", parts[-1])
    if parts[-4:-1] == TOOL_DIR.split("/"):
        return TOOL_DIR + "/" + base
    if src_at(parts) >= 0:
        return "/".join(parts[src_at(parts):])[:-len(".o")]
    for i in range(len(parts) - 2, -1, -1):
        if parts[i].endswith(".dir"):
            owner = {"pmcheck_probes.dir": "probes", "pmcheck_cli.dir": "tools"}.get(parts[i], parts[i][:-4])
            return "/".join([owner] + parts[i + 1:-1] + [base])
    return base


def harness(objs):
    """Every file of the library, the harness, the probes, the command and
    the valgrind tool (objects, and directories of objects) without a
    circle: the graph of "file A uses a symbol file B defines" is acyclic.
    The tool is linked alone, so a symbol it uses is looked up among its
    own files, and the others' among theirs."""
    expanded = []
    for o in objs:
        expanded += sorted(glob.glob(os.path.join(o, "**", "*.o"), recursive=True)) if os.path.isdir(o) else [o]
    defs, uses = {}, {}
    for o in expanded:
        defs[file_name(o)], uses[file_name(o)] = symbols(o)

    def program(u):
        return "tool" if u.startswith(TOOL_DIR + "/") else "library"

    owner = {(program(u), s): u for u, ss in defs.items() for s in ss}
    graph = collections.defaultdict(set)
    edge = collections.defaultdict(set)
    for u, ss in uses.items():
        graph[u]
        for s in ss:
            o = owner.get((program(u), s))
            if o and o != u:
                graph[u].add(o)
                edge[(u, o)].add(s)
    for u in sorted(graph):
        print("%-32s -> %s" % (u, " ".join(sorted(graph[u])) or "(nothing of ours)"))
    found = cycles(graph)
    for comp in found:
        print("FAIL: these files call one another in a circle: %s" % ", ".join(comp))
        for (a, b), ss in sorted(edge.items()):
            if a in comp and b in comp:
                print("    %s -> %s: %s" % (a, b, ", ".join(sorted(ss))))
    print("%d files, %d circles" % (len(graph), len(found)))
    for need in ("src/core/", "src/harness/", "probes/", "tools/"):
        if not any(u.startswith(need) for u in graph):
            print("FAIL: no objects of %s given" % need)
            return 1
    tool = sum(program(u) == "tool" for u in graph)
    print("the valgrind tool: %s" % ("%d files" % tool if tool else
                                      "no objects given (not built here), its files not checked"))
    return 1 if found or len(graph) < 60 else 0


def library(objs):
    """libpmcheck below the harness: the sim folder's files without a circle
    (the counting core asks the engine interface, sim.c; the engines sit
    beneath it; callgrind's dump format at the bottom), and its folders --
    util, core, sim, hwdb -- without one either (sim may use util, never
    the core that calls it)."""
    defs, uses, folder = {}, {}, {}
    for o in objs:
        parts = o.replace("\\", "/").split("/")
        if src_at(parts) < 0:
            continue
        rel = parts[src_at(parts) + 1:]
        name = "/".join(rel)[:-len(".c.o")] if o.endswith(".c.o") else "/".join(rel)
        folder[name] = rel[0]
        defs[name], uses[name] = symbols(o)
    owner = {s: u for u, ss in defs.items() for s in ss}
    files = collections.defaultdict(set)
    folders = collections.defaultdict(set)
    edge = collections.defaultdict(set)
    for u, ss in uses.items():
        files[u]
        folders[folder[u]]
        for s in ss:
            if s in owner and owner[s] != u:
                files[u].add(owner[s])
                edge[(u, owner[s])].add(s)
                if folder[owner[s]] != folder[u]:
                    folders[folder[u]].add(folder[owner[s]])
                    edge[(folder[u], folder[owner[s]])].add("%s -> %s: %s" % (u, owner[s], s))
    sim = {u: {w for w in ws if folder[w] == "sim"} for u, ws in files.items() if folder[u] == "sim"}
    for u in sorted(sim):
        print("%-24s -> %s" % (u, " ".join(sorted(files[u])) or "(nothing)"))
    for f in sorted(folders):
        print("folder %-8s -> %s" % (f, " ".join(sorted(folders[f])) or "(nothing)"))
    bad = 0
    for comp in cycles(sim):
        bad += 1
        print("FAIL: these sim files call one another in a circle: %s" % ", ".join(comp))
        for (a, b), ss in sorted(edge.items()):
            if a in comp and b in comp:
                print("    %s -> %s: %s" % (a, b, ", ".join(sorted(ss))))
    for comp in cycles(folders):
        bad += 1
        print("FAIL: these folders call one another in a circle: %s" % ", ".join(comp))
        for (a, b), ss in sorted(edge.items()):
            if a in comp and b in comp:
                for line in sorted(ss)[:6]:
                    print("    " + line)
    for f in sorted(folders):
        for g in sorted(folders[f]):
            if f in LAYERS and g in LAYERS and LAYERS.index(g) > LAYERS.index(f):
                bad += 1
                print("FAIL: %s calls %s, a layer above it (bottom up: %s)" % (f, g, ", ".join(LAYERS)))
                for line in sorted(edge[(f, g)])[:6]:
                    print("    " + line)
    print("%d sim files, %d folders, %d circles or calls upward" % (len(sim), len(folders), bad))
    return 1 if bad or len(sim) < 6 or "sim" not in folders else 0


def includes(src):
    """Every #include "..." and #include <pmcheck/...> of a file under
    framework/src or framework/include/pmcheck names a header of its own
    layer or of one below it (LAYERS, PUBLIC_HEADERS); every function a
    public header declares (PMC_API) is defined in the header's layer."""
    top = os.path.join(src, "framework", "src")
    public = os.path.join(src, "framework", "include", "pmcheck")
    where = collections.defaultdict(set)  # header name -> folders holding it
    for root, _, names in os.walk(top):
        for n in names:
            if n.endswith(".h"):
                where[n].add(os.path.relpath(root, top).split(os.sep)[0])
    bad = seen = 0
    for n in sorted(os.listdir(public)):
        if n not in PUBLIC_HEADERS:
            bad += 1
            print("FAIL: include/pmcheck/%s has no layer in PUBLIC_HEADERS (test_layers.py): add it" % n)
    files = [(os.path.relpath(root, top).split(os.sep)[0], os.path.join(root, n))
             for root, _, names in sorted(os.walk(top)) for n in sorted(names) if n.endswith((".c", ".h"))]
    files += [(PUBLIC_HEADERS.get(n), os.path.join(public, n)) for n in sorted(os.listdir(public))]
    defined = {}  # function -> layer whose .c defines it
    for layer, path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if path.endswith(".c"):
            for m in re.finditer(r"^(?=[A-Za-z_])(?:[\w \t\*]|__attribute__\(\(\w+\)\))*?\b(pmc_\w+)\s*\([^;{]*\)\s*\{", text, re.M):
                defined.setdefault(m.group(1), layer)
        for m in re.finditer(r'^#\s*include\s+(?:"([^"]+)"|<pmcheck/([^>]+)>)', text, re.M):
            inc, pub, seen = m.group(1), m.group(2), seen + 1
            root = os.path.dirname(path)
            if pub:
                owner = {PUBLIC_HEADERS[pub]} if pub in PUBLIC_HEADERS else set()
                if not owner:
                    bad += 1
                    print("FAIL: %s includes <pmcheck/%s>, which PUBLIC_HEADERS does not name" %
                          (os.path.relpath(path, src), pub))
                inc = "<pmcheck/%s>" % pub
            elif os.path.exists(os.path.join(root, inc)):
                owner = {os.path.relpath(os.path.normpath(os.path.join(root, inc)), top).split(os.sep)[0]}
                inc = '"%s"' % inc
            elif "/" in inc and os.path.exists(os.path.join(top, inc)):
                owner, inc = {inc.split("/")[0]}, '"%s"' % inc
            else:
                owner, inc = where.get(os.path.basename(inc), set()), '"%s"' % inc
            for o in owner:
                if o in LAYERS and layer in LAYERS and LAYERS.index(o) > LAYERS.index(layer):
                    bad += 1
                    print("FAIL: %s includes %s of %s, a layer above %s (bottom up: %s)" %
                          (os.path.relpath(path, src), inc, o, layer, ", ".join(LAYERS)))
    declared = 0
    for n in sorted(os.listdir(public)):
        with open(os.path.join(public, n), encoding="utf-8") as f:
            text = f.read()
        for m in re.finditer(r"\bPMC_API\b[^;(]*?\b(pmc_\w+)\s*\(", text):
            fn, declared = m.group(1), declared + 1
            if fn not in defined:
                bad += 1
                print("FAIL: include/pmcheck/%s declares %s, which no file under framework/src defines" % (n, fn))
            elif defined[fn] != PUBLIC_HEADERS.get(n):
                bad += 1
                print("FAIL: include/pmcheck/%s (%s) declares %s, a function of %s: declare it in a "
                      "header of that layer" % (n, PUBLIC_HEADERS.get(n), fn, defined[fn]))
    print("%d includes read, %d public functions placed, %d failures" % (seen, declared, bad))
    return 1 if bad or seen < 50 or declared < 100 else 0


def tools(src, objdir):
    failures = 0
    tools_dir = os.path.join(src, "framework/tools")
    sources = sorted(glob.glob(os.path.join(tools_dir, "**", "*.[ch]"), recursive=True))
    for path in sources:
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                local = os.path.realpath(os.path.join(os.path.dirname(path), m.group(1)))
                own = os.path.isfile(local) and local.startswith(os.path.realpath(tools_dir) + os.sep)
                if not own and m.group(1) not in TOOLS_INCLUDED:
                    print('FAIL: %s:%d: includes "%s": the command uses the public headers and '
                          'tools.h, not the library\'s insides' % (os.path.relpath(path, src), no,
                                                                   m.group(1)))
                    failures += 1
    declared = ""
    for h in TOOLS_INTERFACE:
        with open(os.path.join(src, h), encoding="utf-8") as f:
            declared += f.read()
    for h in glob.glob(os.path.join(src, "framework/include/pmcheck/*.h")):
        with open(h, encoding="utf-8") as f:
            declared += f.read()
    objs = sorted(glob.glob(os.path.join(objdir, "**", "*.o"), recursive=True))
    own, used = set(), set()
    for o in objs:
        d, u = symbols(o)
        own |= d
        used |= u
    private = sorted(s for s in used - own if s.startswith("pmc__"))
    for s in private:
        if not re.search(r"\b%s\b" % re.escape(s), declared):
            print("FAIL: the command uses %s, which the tools' interface does not declare" % s)
            failures += 1
    print("%d sources, %d objects, %d private symbols used, all from the tools' interface: %s"
          % (len(sources), len(objs), len(private), "no" if failures else "yes"))
    if not objs or not sources:
        print("FAIL: nothing to check (objects in %s?)" % objdir)
        return 1
    return 1 if failures else 0


LIBM_FUNCTIONS = ("acos asin atan atan2 cbrt ceil cos cosh erf exp exp2 expm1 fabs floor fma fmax fmin "
                  "fmod frexp hypot ldexp lgamma llrint llround log log10 log1p log2 lrint lround modf "
                  "nearbyint pow remainder rint round sin sinh sqrt tan tanh tgamma trunc").split()


def loaded(libraries):
    failures = 0
    for lib in libraries:
        dyn = subprocess.run(["readelf", "-d", "-W", lib], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", dyn)
        undefined = subprocess.run(["nm", "-D", "--undefined-only", lib], capture_output=True, text=True,
                                   check=True).stdout.split()
        names = {u.split("@")[0] for u in undefined}
        # A function, or its float or long double form (floorf, logl).
        from_libm = sorted(n for n in names if n in LIBM_FUNCTIONS or (n[-1:] in ("f", "l") and n[:-1] in LIBM_FUNCTIONS))
        bad = [n for n in needed if n.startswith(("libm.so", "libpfm.so", "libcpuid.so"))]
        print("%s: needs %s; libm functions used: %s" % (os.path.basename(lib), ", ".join(needed),
                                                          ", ".join(from_libm) or "none"))
        if bad or from_libm:
            print("FAIL: %s needs %s: libm's functions are in src/util/arith.h, libpfm4 is opened by "
                  "src/core/event_pmu.c, CPUID is read by src/hwdb/cpuid.c" % (lib, ", ".join(bad + from_libm)))
            failures += 1
    if not libraries:
        print("FAIL: no library to check")
        return 1
    return 1 if failures else 0


def pkgconfig(pairs):
    failures = 0
    if not pairs or len(pairs) % 2:
        print("FAIL: expected PCFILE LIBRARY pairs")
        return 1
    for pc, lib in zip(pairs[::2], pairs[1::2]):
        text = open(pc).read()
        libs = " ".join(l.split(":", 1)[1] for l in text.splitlines() if l.startswith(("Libs:", "Libs.private:")))
        named = set(re.findall(r"-l(\S+)", libs))
        dyn = subprocess.run(["readelf", "-d", "-W", lib], capture_output=True, text=True, check=True).stdout
        needed = re.findall(r"\(NEEDED\)\s+Shared library: \[lib([^.\]]+)\.so", dyn)
        # Not pmcheck's to name: the C library and the loader, pmcheck's own,
        # and a sanitizer's runtime, which the compiler adds to a sanitized
        # build (the asan preset) and to whatever links with it.
        wanted = [n for n in needed if n not in ("c", "pthread", "dl", "gcc_s", "asan", "ubsan", "lsan", "tsan",
                                                 "hwasan") and not n.startswith("pmcheck")
                  and not n.startswith("ld-linux") and not n.startswith("clang_rt")]
        missing = [n for n in wanted if n not in named]
        print("%s: %s needs %s; the file names %s" % (os.path.basename(pc), os.path.basename(lib),
                                                     ", ".join(wanted) or "nothing more", ", ".join(sorted(named))))
        if missing:
            print("FAIL: %s does not name %s, which %s needs: a static link misses it" %
                  (pc, ", ".join("-l" + m for m in missing), os.path.basename(lib)))
            failures += 1
    return 1 if failures else 0


LONG = 600
PRODUCTION = ("framework/src", "framework/tools", "framework/include", "probes", "cmake")
SOURCE_SUFFIXES = (".c", ".h", ".cpp", ".hpp")


def top_of(text):
    """The lines of a file before its first line of code: its comments."""
    out, in_comment = [], False
    for line in text.splitlines():
        s = line.strip()
        if in_comment:
            out.append(s)
            in_comment = "*/" not in s
        elif s.startswith("/*"):
            out.append(s)
            in_comment = "*/" not in s
        elif s.startswith("//") or not s:
            out.append(s)
        else:
            break
    return out


def long_files(src):
    """Files over LONG lines say why at their top."""
    bad = checked = 0
    for d in PRODUCTION:
        for root, _, names in sorted(os.walk(os.path.join(src, d))):
            for n in sorted(names):
                if not n.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, n)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                lines = text.count("\n")
                if lines <= LONG:
                    continue
                checked += 1
                top = " ".join(top_of(text))
                m = re.search(r"Over %d lines because (.*)" % LONG, top)
                words = re.findall(r"[A-Za-z]+", m.group(1).split("*/")[0]) if m else []
                rel = os.path.relpath(path, src)
                if len(words) < 8:
                    bad += 1
                    print("FAIL: %s has %d lines and its top does not say why: add a comment line "
                          "\"Over %d lines because ...\" with the reason before its first line of code, "
                          "or split it by job" % (rel, lines, LONG))
                else:
                    print("%s: %d lines: %s" % (rel, lines, " ".join(words[:12]) + " ..."))
    print("%d files over %d lines, %d without a reason at their top" % (checked, LONG, bad))
    return 1 if bad else 0


def map_names(src):
    """framework/README.md names every source file of the library, the
    command and the public headers."""
    with open(os.path.join(src, "framework", "README.md"), encoding="utf-8") as f:
        named = {re.sub(r"^(framework/)|^<|>$", "", n) for n in re.findall(r"`([^`\n]+)`", f.read())}
    files = []
    for d in ("src", "tools", "include"):
        for root, _, names in os.walk(os.path.join(src, "framework", d)):
            files += [os.path.relpath(os.path.join(root, n), os.path.join(src, "framework")).replace(os.sep, "/")
                      for n in names if n.endswith((".c", ".h"))]
    base = collections.Counter(os.path.basename(f) for f in files)
    bad = 0
    for f in sorted(files):
        # A path that ends the file's own at a folder's boundary: src/hwdb/db.c,
        # hwdb/db.c; the bare name only when no other file has it.
        parts = f.split("/")
        suffixes = {"/".join(parts[i:]) for i in range(len(parts) - (1 if base[parts[-1]] == 1 else 2) + 1)}
        if not suffixes & named:
            bad += 1
            print("FAIL: framework/README.md does not name %s: add it to the map, in backquotes, with its job%s"
                  % (f, "" if base[parts[-1]] == 1 else
                     " (as `%s`: another file is called %s)" % ("/".join(parts[-2:]), parts[-1])))
    print("%d files, %d not named in framework/README.md" % (len(files), bad))
    return 1 if bad or len(files) < 100 else 0


def cli_header(src):
    """The command's private interface in one header, tools/cli.h."""
    src = os.path.abspath(src)
    tools_dir = os.path.join(src, "framework", "tools")
    cli = os.path.join(tools_dir, "cli.h")
    bad = 0
    for h in sorted(glob.glob(os.path.join(tools_dir, "*.h"))):
        if h != cli:
            bad += 1
            print("FAIL: %s: a second header of the command; its declarations belong in "
                  "framework/tools/cli.h" % os.path.relpath(h, src))
    seen = 0
    for path in sorted(glob.glob(os.path.join(tools_dir, "**", "*.[ch]"), recursive=True)):
        folder = os.path.dirname(path)
        with open(path, encoding="utf-8") as f:
            for no, line in enumerate(f, 1):
                m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                if not m:
                    continue
                inc, seen = m.group(1), seen + 1
                target = os.path.normpath(os.path.join(folder, inc))
                ok = (target == cli or
                      (path == cli and inc in ("tools.h", "probe.h")) or
                      (folder == tools_dir and inc == "history/history.h") or
                      (folder != tools_dir and os.path.dirname(target) == folder and os.path.isfile(target)))
                if not ok:
                    bad += 1
                    print('FAIL: %s:%d: includes "%s": a file of the command includes cli.h, its one '
                          'private header (which includes the library\'s tools.h and the probes\' probe.h), '
                          'and a file of the history store its own folder\'s headers'
                          % (os.path.relpath(path, src), no, inc))
    print("%d quoted includes of the command read, %d outside its one header" % (seen, bad))
    return 1 if bad or seen < 20 else 0


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "pkgconfig":
        return pkgconfig(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "loaded":
        return loaded(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "harness":
        return harness(sys.argv[2:])
    if len(sys.argv) >= 3 and sys.argv[1] == "library":
        return library(sys.argv[2:])
    if len(sys.argv) == 3 and sys.argv[1] == "includes":
        return includes(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "long":
        return long_files(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "map":
        return map_names(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "cli":
        return cli_header(sys.argv[2])
    if len(sys.argv) == 4 and sys.argv[1] == "tools":
        return tools(sys.argv[2], sys.argv[3])
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main())
