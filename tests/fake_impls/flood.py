"""Writes to stderr without end (a driver's log gone wild, or a grandchild of a wrapper
that inherited the pipes). Used behind wrappers in tests/conformance/test_runner_processes.py."""

from __future__ import annotations

import sys

LINE = "flood: " + "x" * 1000 + "\n"

while True:
    sys.stderr.write(LINE)
