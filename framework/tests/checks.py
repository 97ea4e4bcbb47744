# SPDX-License-Identifier: MIT
"""What a test script here needs: checks that count their failures and say
what failed, and the exit status they add up to.  (Older scripts carry a
copy of check(); new ones import this.)"""
import sys

failures = 0


def check(ok, what):
    """Count and print a failed check; never stops the script."""
    global failures
    if not ok:
        failures += 1
        print("FAIL:", what)


def finish():
    """Exit 1 when any check failed, else 0."""
    print(f"{failures} failure(s)")
    sys.exit(1 if failures else 0)
