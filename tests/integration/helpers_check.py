"""Helpers for tests of config diagnostics (test_check.py)."""

import re


def diagnostics(stderr, path):
    """[(line, column, message)] of the FILE:LINE:COLUMN: lines for `path`."""
    pattern = re.compile(re.escape(str(path)) + r":(\d+):(\d+): (.*)")
    found = []
    for text in stderr.splitlines():
        match = pattern.match(text)
        if match:
            found.append((int(match[1]), int(match[2]), match[3]))
    return found
