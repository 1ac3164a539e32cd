"""Failure texts say what they compare: a plain `assert got == expected` in a case reads
with both sides labelled (pytest's own text labels neither and cuts both), the report
carries both values whole, and a crashed implementation's stderr tail is on the console
(it read "stderr tail:" and nothing)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from suite_runner import run_suite

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"
LOWERING = "python:mutants:dispatcher:lowercase-resolver"


def test_a_plain_assert_labels_expected_and_got(tmp_path: Path) -> None:
    run = run_suite(tmp_path, LOWERING, "--case", "tool.repeats.each-reported")
    case = run.cases["tool.repeats.each-reported"]
    assert case["outcome"] == "failed"
    assert "\n  expected: [('bogus', 'unknown'), " in case["reason"]
    assert "\n  got: [('bogus', 'unknown'), " in case["reason"]
    assert "first difference at $[2][0]" in case["reason"]
    assert case["expected"][2] == ["deploy", "not-grantable"]  # whole, as JSON
    assert ["deploy", "not-grantable"] not in case["got"]
    assert "expected: [[\"bogus\", \"unknown\"]" in run.output
    assert "assert [" not in run.output  # no bare pytest comparison


def test_a_crash_shows_its_stderr_tail_on_the_console(tmp_path: Path) -> None:
    crash = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} crash definition.parse"
    run = run_suite(tmp_path, crash, "--case", "tool.canonical.camel-lower")
    assert run.outcomes() == {"tool.canonical.camel-lower": "crashed"}
    lines = run.output.splitlines()
    at = next(i for i, ln in enumerate(lines) if "its stderr tail (last 1 line(s)):" in ln)
    assert lines[at + 1].strip() == "| panic: simulated crash in definition.parse"
    assert not any(ln.rstrip().endswith("stderr tail:") for ln in lines)
