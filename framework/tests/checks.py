# SPDX-License-Identifier: MIT
"""What every test script here shares: checks that count their failures and
say what failed, a failure from an exception, and the exit status they add
up to.  A script outside framework/tests puts this directory on sys.path:

    sys.path.insert(0, os.path.join(ROOT, "framework", "tests"))
    from checks import check, fail, finish, guarded
"""
import sys
import traceback

failures = 0


def check(ok, what):
    """Count and print a failed check; never stops the script.  Returns ok."""
    if not ok:
        fail(what)
    return bool(ok)


def fail(what):
    """Count and print a failure found some other way."""
    global failures
    failures += 1
    print("FAIL:", what)


def failed():
    return failures > 0


def guarded(fn, *args):
    """Run fn; an exception it raises is one more failure (with where it came
    from), never a traceback that hides the checks' own words."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - any exception is a failure here
        tb = traceback.extract_tb(e.__traceback__)[-1]
        fail(f"{type(e).__name__} at line {tb.lineno}: {str(e)[:2000]}")
    return None


def finish(label=None):
    """Exit 1 when any check failed, else 0, saying which."""
    if label:
        print(f"{label}: {'FAILED' if failures else 'ok'} ({failures} failure(s))")
    else:
        print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)
