"""`capconf diff`: regressions gate, fixes and changes do not, versions are said."""

from __future__ import annotations

import os
from pathlib import Path

from report_support import case, header, jsonl, reference_and_broken
from suite_runner import CliResult, run_cli

from capconf.conformance.report_diff import (
    ADDED,
    CHANGED,
    FIXED,
    REGRESSED,
    REMOVED,
    diff_reports,
    render_diff,
)
from capconf.conformance.report_file import CaseResult, parse_report


def _kinds(old: str, new: str) -> dict[str, list[str]]:
    diff = diff_reports(parse_report(old, "old"), parse_report(new, "new"))
    return {k: [c.case for c in diff.of(k)] for k in (REGRESSED, FIXED, CHANGED, ADDED, REMOVED)}


def test_reference_to_broken_regresses_and_names_requirements() -> None:
    good, bad = reference_and_broken()
    diff = diff_reports(parse_report(good, "ref"), parse_report(bad, "broken"))
    assert [c.case for c in diff.of(REGRESSED)] == ["mem.modes", "tool.case.canonical",
                                                   "tool.case.mixed"]
    text = render_diff(diff)
    assert "REGRESSION in MEM-01, TOOL-02, TOOL-03" in text
    assert "  TOOL-02\n    tool.case.canonical: passed -> failed: TOOL-02: names come out " \
           "canonical" in text
    assert "kb.glob" not in text  # failed in both: not a change
    # and back again is a fix, never a regression
    back = diff_reports(parse_report(bad, "broken"), parse_report(good, "ref"))
    assert not back.regressed and len(back.of(FIXED)) == 3


def _one(outcome: str) -> CaseResult:
    return CaseResult("a", ("DEF-01",), outcome, "MUST", "")


def test_every_outcome_pair_is_classified_once() -> None:
    from capconf.conformance import outcomes
    from capconf.conformance.report_diff import classify

    for old in outcomes.ALL:
        for new in outcomes.ALL:
            kind = classify(_one(old), _one(new))
            if old == new:
                assert kind is None
            elif new in outcomes.FAILING and old not in outcomes.FAILING:
                assert kind == REGRESSED, (old, new)
            elif old == outcomes.PASSED and new == outcomes.NOT_IMPLEMENTED:
                assert kind == REGRESSED  # declaring less is not neutral
            else:
                assert kind in (FIXED, CHANGED), (old, new)
    assert classify(_one("failed"), _one("crashed")) == CHANGED
    assert classify(_one("passed"), _one("skipped")) == CHANGED


def test_added_and_removed_cases_never_gate() -> None:
    old = jsonl(header(), case("a", ["DEF-01"]), case("gone", ["DEF-02"]))
    new = jsonl(header(), case("a", ["DEF-01"]), case("new", ["DEF-03"], "failed", "x"))
    assert _kinds(old, new) == {REGRESSED: [], FIXED: [], CHANGED: [], ADDED: ["new"],
                                REMOVED: ["gone"]}


def test_an_older_suite_version_is_compared_on_common_ids_and_says_so() -> None:
    old = jsonl(header(suite_version="0.0.9"), case("a", ["DEF-01"]), case("b", ["DEF-01"]))
    new = jsonl(header(), case("a", ["DEF-01"], "failed", "bug"), case("c", ["DEF-01"]))
    diff = diff_reports(parse_report(old, "old"), parse_report(new, "new"))
    text = render_diff(diff)
    assert diff.common == 1 and diff.regressed
    assert "different suite versions (0.0.9 and 0.1.0)" in text
    assert "compared on the 1 case IDs both know" in text
    same = render_diff(diff_reports(parse_report(new, "a"), parse_report(new, "b")))
    assert "different suite versions" not in same


def _capconf(*args: str) -> CliResult[str]:
    return run_cli(args, env=dict(os.environ), timeout=120)


def test_the_command_exits_1_on_a_regression_0_otherwise_2_on_bad_input(
        tmp_path: Path) -> None:
    good, bad = reference_and_broken()
    (tmp_path / "ref.jsonl").write_text(good)
    (tmp_path / "bad.jsonl").write_text(bad)
    (tmp_path / "junk.jsonl").write_text('{"type": "header"}\n{oops\n')
    ref, broken = str(tmp_path / "ref.jsonl"), str(tmp_path / "bad.jsonl")
    regressed = _capconf("diff", ref, broken)
    assert regressed.returncode == 1 and "REGRESSION in MEM-01, TOOL-02, TOOL-03" in \
        regressed.stdout
    assert _capconf("diff", broken, ref).returncode == 0
    assert _capconf("diff", ref, ref).returncode == 0
    junk = _capconf("diff", ref, str(tmp_path / "junk.jsonl"))
    assert junk.returncode == 2 and "junk.jsonl:2: not JSON" in junk.stderr
