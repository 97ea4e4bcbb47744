#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The CI templates, validated (docs/ci-templates.md says they were validated,
not run on GitHub or GitLab):

  .github/workflows/*.yml and action.yml   against GitHub's schemas with
      @action-validator/cli (npm; ci/setup installs it), and a copy of each
      with one mistake must be refused, so the validator is known to look;
  action.yml                               every ${{ inputs.X }} and
      ${{ steps.ID.outputs.Y }} names a declared input and step, and every
      ${PMC_*} a run script reads is set in that step's env;
  pmcheck's workflow                       runs `bash ci/test` in debian:12;
  the GitLab example in docs/ci-templates.md  parses, each job has an image
      and a script, and its commands name files that exist here.

usage: test_templates.py SOURCE_DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SRC = sys.argv[1]
failures = 0


def check(ok, msg):
    global failures
    print(("ok: " if ok else "FAIL: ") + msg)
    if not ok:
        failures += 1


def validator():
    found = shutil.which("action-validator")
    cache = os.path.join(os.environ.get("XDG_CACHE_HOME", os.path.expanduser("~/.cache")),
                         "pmcheck/npm/node_modules/.bin/action-validator")
    return found or (cache if os.access(cache, os.X_OK) else None)


def validate(tool, path):
    p = subprocess.run([tool, path], capture_output=True, text=True, timeout=120)
    return p.returncode, (p.stdout + p.stderr)


def main():
    tool = validator()
    if not tool:
        print("SKIP: @action-validator/cli is not installed (ci/setup installs it with npm)")
        return 77
    workflows = sorted(glob.glob(os.path.join(SRC, ".github/workflows/*.yml")))
    action = os.path.join(SRC, "action.yml")
    check(bool(workflows), "workflows found: %s" % [os.path.relpath(w, SRC) for w in workflows])
    for path in workflows + [action]:
        rc, out = validate(tool, path)
        check(rc == 0, "%s valid (action-validator)%s" % (os.path.relpath(path, SRC), "" if rc == 0 else ":\n" + out))

    # The validator must refuse a mistake in each kind of file.
    with tempfile.TemporaryDirectory() as tmp:
        bad_wf = os.path.join(tmp, ".github/workflows/bad.yml")
        os.makedirs(os.path.dirname(bad_wf))
        with open(workflows[0]) as f:
            text = f.read()
        with open(bad_wf, "w") as f:
            f.write(text.replace("runs-on:", "runs_on:", 1))
        rc, _ = validate(tool, bad_wf)
        check(rc != 0, "a workflow with runs_on: for runs-on: is refused")
        bad_action = os.path.join(tmp, "action.yml")
        with open(action) as f:
            text = f.read()
        with open(bad_action, "w") as f:
            f.write(text.replace("using: composite", "using: compose", 1))
        rc, _ = validate(tool, bad_action)
        check(rc != 0, "an action with using: compose is refused")

    # action.yml: names used are names declared.
    with open(action) as f:
        text = f.read()
    doc = yaml.safe_load(text)
    inputs = set(doc.get("inputs", {}))
    used_inputs = set(re.findall(r"\binputs\.([A-Za-z0-9_-]+)", text))
    check(used_inputs <= inputs, "action.yml uses only declared inputs (undeclared: %s)"
          % sorted(used_inputs - inputs))
    check(inputs <= used_inputs, "action.yml uses every input it declares (unused: %s)"
          % sorted(inputs - used_inputs))
    steps = doc["runs"]["steps"]
    ids = {s.get("id") for s in steps if s.get("id")}
    used_ids = set(re.findall(r"\bsteps\.([A-Za-z0-9_-]+)\.outputs", text))
    check(used_ids <= ids, "action.yml reads outputs of its own steps only (unknown: %s)"
          % sorted(used_ids - ids))
    for s in steps:
        run = s.get("run", "")
        need = set(re.findall(r"\$\{?(PMC_[A-Z_]+)", run))
        have = set((s.get("env") or {}).keys())
        check(need <= have, "step %r sets every PMC_ variable it reads (missing: %s)"
              % (s.get("name"), sorted(need - have)))
        check(bool(run) == ("shell" in s), "step %r: a run step of a composite action names its shell"
              % s.get("name"))
    for o, spec in doc.get("outputs", {}).items():
        check("value" in spec, "output %s has a value" % o)

    # pmcheck's own workflow runs the README's test command in Debian 12.
    wf = yaml.safe_load(open(workflows[0]))
    jobs = list(wf["jobs"].values())
    runs_test = [j for j in jobs if any("bash ci/test" in (st.get("run") or "") for st in j.get("steps", []))]
    check(bool(runs_test), "a job runs bash ci/test")
    check(all((j.get("container") or {}).get("image") == "debian:12" for j in runs_test),
          "that job runs in the debian:12 container")
    with open(os.path.join(SRC, ".ci/run")) as f:
        check("bash ci/test" in f.read(), ".ci/run runs the same command")

    # The GitLab example.
    with open(os.path.join(SRC, "docs/ci-templates.md")) as f:
        md = f.read()
    m = re.search(r"<!-- gitlab-ci -->\s*```yaml\n(.*?)```", md, re.S)
    check(bool(m), "docs/ci-templates.md has the GitLab example after <!-- gitlab-ci -->")
    if m:
        gl = yaml.safe_load(m.group(1))
        reserved = {"stages", "variables", "default", "workflow", "include", "image", "services",
                    "cache", "before_script", "after_script"}
        jobs = {k: v for k, v in gl.items() if k not in reserved and not k.startswith(".")}
        check(len(jobs) >= 2, "GitLab jobs: %s" % sorted(jobs))
        stages = set(gl.get("stages", []))
        for name, job in jobs.items():
            check(isinstance(job.get("script"), list) and job["script"], "GitLab job %s has a script" % name)
            check(job.get("image") or gl.get("image") or (gl.get("default") or {}).get("image"),
                  "GitLab job %s has an image" % name)
            check(job.get("stage") in stages, "GitLab job %s is in a declared stage" % name)
            lines = job.get("script", []) + (gl.get("default") or {}).get("before_script", [])
            for line in lines:
                for path in re.findall(r"\$PMCHECK_SRC/([\w./-]+)", line):
                    check(os.path.exists(os.path.join(SRC, path)),
                          "GitLab job %s: %s exists in pmcheck's tree" % (name, path))
    print("%s: %d problems" % ("FAIL" if failures else "PASS", failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
