"""Gates fail closed: a bad gate value is an error naming it and the valid values
(nearest first), exit 2, before any case runs; a run that checked nothing never exits 0;
a baseline takes comments and refuses IDs that are not cases; a stale entry fails the
run without making its requirement look broken."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from suite_runner import run_suite

from capconf.conformance.gates import (
    GateError,
    check_pytest_args,
    nearest_first,
    parse_baseline,
)

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"


def fake(mode: str, op: str = "definition.parse") -> str:
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} {mode} {op}"


def refused(run_output: str, returncode: int) -> None:
    assert returncode == 2, run_output[-2000:]
    assert "Traceback" not in run_output
    assert "passed" not in run_output and "failed" not in run_output  # no case ran


def test_misspelled_feature_groups_are_refused_with_the_nearest_first(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "reference", "--require-features", "def,tools,promtp")
    refused(run.output, run.returncode)
    assert "unknown feature group `tools`; valid, nearest first: tool," in run.output
    assert "unknown feature group `promtp`; valid, nearest first: prompt," in run.output
    assert "`def`" not in run.output  # the valid one is not blamed
    assert run.cases == {}


def test_an_unknown_requirement_is_refused(tmp_path: Path) -> None:
    run = run_suite(tmp_path, "reference", "--req", "TOOL-99")
    refused(run.output, run.returncode)
    assert "unknown requirement `TOOL-99`; valid, nearest first: TOOL-0" in run.output


def test_pytest_arguments_that_break_reporting_are_refused(tmp_path: Path) -> None:
    for extra in (["-n", "2"], ["-n2"], ["-p", "no:capconf"], ["-p", "xdist"],
                  ["--lf"], ["-p", "no:capconf.conformance.plugin"]):
        run = run_suite(tmp_path, "reference", "--req", "TOOL-02", "--", *extra)
        refused(run.output, run.returncode)
        assert "pytest arguments after `--`" in run.output, extra
    check_pytest_args(["-x", "-k", "prompt", "-p", "no:randomly", "--tb=short"])  # fine


def test_a_run_that_checks_nothing_does_not_pass(tmp_path: Path) -> None:
    """Every selected case 'not implemented' (nothing declared) used to exit 0."""
    run = run_suite(tmp_path, fake("no-features"), "--req", "TOOL-02")
    assert set(run.outcomes().values()) == {"not implemented"}
    assert run.returncode == 5, run.output[-2000:]
    assert "no case was executed" in run.output
    (tmp_path / "k").mkdir()
    nothing = run_suite(tmp_path / "k", "reference", "--", "-k", "no_such_case_anywhere")
    assert nothing.returncode == 5 and nothing.cases == {}


BASELINE = """\
# known failures of our runtime (kind b: a documented product decision)
tool.canonical.camel-lower   # kind b: we lower-case tool names (docs: ...)

tool.canonical.camel-upper	# tab before the comment
"""


def test_a_baseline_takes_full_line_and_trailing_comments() -> None:
    entries = parse_baseline(BASELINE, "baseline.txt")
    assert [(e.line, e.case) for e in entries] == [(2, "tool.canonical.camel-lower"),
                                                   (4, "tool.canonical.camel-upper")]
    try:
        parse_baseline("tool.canonical.camel-lower we lower-case names\n", "b.txt")
    except GateError as exc:
        assert "b.txt:1" in str(exc) and "after `#`" in str(exc)
    else:
        raise AssertionError("a note without `#` was read as a case ID")


def test_a_misspelled_baseline_entry_is_refused(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("# ours\ntool.canonical.camel-lowr   # typo\n")
    run = run_suite(tmp_path, "reference", "--req", "TOOL-02",
                    "--expected-failures", str(baseline))
    refused(run.output, run.returncode)
    assert f"{baseline}:2: unknown case ID `tool.canonical.camel-lowr`; valid, nearest " \
           "first: tool.canonical.camel-lower" in run.output


def test_expected_failures_and_a_stale_entry(tmp_path: Path) -> None:
    """The lowering mutant fails camel-lower (listed: expected failure) and passes
    proto.hello.fields (listed: stale). The run fails for the stale entry, but PROTO-01,
    whose one case passed, is reported compliant, not non-compliant."""
    baseline = tmp_path / "baseline.txt"
    baseline.write_text("tool.canonical.camel-lower   # kind b: lowers names\n"
                        "proto.hello.fields           # fixed since\n")
    report_md = tmp_path / "report.md"
    run = run_suite(tmp_path, "python:mutants:dispatcher:lowercase-resolver",
                    "--case", "tool.canonical.camel-lower", "--case", "proto.hello.fields",
                    "--expected-failures", str(baseline), "--report-md", str(report_md))
    assert run.outcomes() == {"tool.canonical.camel-lower": "expected failure",
                              "proto.hello.fields": "stale"}
    assert run.returncode == 1
    assert "stale baseline entries" in run.output and "proto.hello.fields" in run.output
    markdown = report_md.read_text()
    proto = next(ln for ln in markdown.splitlines() if ln.startswith("| PROTO-01 |"))
    assert proto.endswith("| 1 / 1 | compliant (its 1 case passed) |"), proto
    assert "## Stale baseline entries" in markdown


def test_nearest_first_orders_every_valid_value() -> None:
    assert nearest_first("tools", ["prompt", "tool", "def"])[0] == "tool"
    assert nearest_first("PROMTP", ["prompt", "tool", "def"])[0] == "prompt"
    assert sorted(nearest_first("x", ["b", "a"])) == ["a", "b"]
