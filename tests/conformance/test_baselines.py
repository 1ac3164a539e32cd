"""Baselines pin the cause: an entry records the fingerprint of its case's failure, a
listed case failing for another reason fails the run as a new cause (old and new shown in
every output), the old ID-only form still reads with one warning, and `capconf baseline`
writes the file from a report so that the same implementation's next run is green."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from suite_runner import run_cli, run_suite

from capconf.conformance import baselines, outcomes
from capconf.conformance.gates import GateError, parse_baseline

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"
LOWERING = "python:mutants:dispatcher:lowercase-resolver"
CRASHING = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} crash definition.parse"
CASES = ("tool.canonical.camel-lower", "tool.canonical.camel-upper")


def _step(op: str, response: object, failure: str | None = None,
          **args: object) -> dict[str, object]:
    step: dict[str, object] = {"request": {"op": op, "args": args}, "response": response}
    if failure is not None:
        step["failure"] = failure
    return step


@pytest.mark.parametrize(("record", "expected"), [
    ({"outcome": "failed", "exchange": [_step("agent.spawn", {"ok": False, "error": {
        "code": "unknown_tool", "message": "no /tmp/capconf-ws-1a2b3c4d/x"}})]},
     "failed: `agent.spawn` answered error `unknown_tool`"),
    ({"outcome": "failed", "exchange": [_step("tool.call", {"ok": True, "result": {
        "ok": False, "error_code": "KB-UNKNOWN-SOURCE"}}, tool="kb_search")]},
     "failed: `tool.call` of `kb_search` tool error `KB-UNKNOWN-SOURCE`"),
    ({"outcome": "failed", "reason": "TOOL-02 | granted tools: expected ['A'], got []",
      "exchange": [_step("definition.parse", {"ok": True, "result": {}})]},
     "failed: `definition.parse` wrong granted tools"),
    ({"outcome": "failed", "expected": {"tools": ["a", "b"], "x": 1},
      "got": {"tools": ["a", "c"], "x": 1},
      "exchange": [_step("definition.parse", {"ok": True, "result": {}})]},
     "failed: `definition.parse` result differs at $.tools[1]"),
    ({"outcome": "failed", "expected": [1, 2], "got": [1],
      "exchange": [_step("tools.mounted", {"ok": True, "result": {}})]},
     "failed: `tools.mounted` result differs at $[1] (missing)"),
    ({"outcome": "timed out", "exchange": [_step(
        "agent.spawn", None, "timed out: no response within 2.5 s")]},
     "timed out: `agent.spawn`"),
    ({"outcome": "crashed", "exchange": [_step(
        "agent.spawn", None, "crashed: exited (status 3); stderr tail:\npanic at 0x7fff1234")]},
     "crashed: `agent.spawn`"),
    ({"outcome": "errored", "exchange": [_step(
        "prompt.assemble", None, "errored: response is not JSON (pid 4242, 0.25 s)")]},
     "errored: `prompt.assemble` response is not JSON (pid <n>, <n> s)"),
    ({"outcome": "failed", "reason": "the note names /tmp/capconf-ws-x1/a.md # here",
      "exchange": [_step("definition.parse", {"ok": True, "result": {}})]},
     "failed: `definition.parse` check failed: the note names <path> %23 here"),
])
def test_the_fingerprint_names_the_kind_the_op_and_what_is_wrong_never_volatile_values(
        record: dict[str, object], expected: str) -> None:
    assert baselines.fingerprint(record) == expected


def test_the_same_failure_at_another_temp_path_has_the_same_fingerprint() -> None:
    def record(workspace: str) -> dict[str, object]:
        return {"outcome": "failed", "reason": f"read {workspace}/notes.txt: refused",
                "exchange": [_step("tool.call", {"ok": True, "result": {"ok": True}},
                                   tool="read", path=f"{workspace}/notes.txt")]}
    assert baselines.fingerprint(record("/tmp/capconf-ws-aaaa")) == \
        baselines.fingerprint(record("/tmp/capconf-ws-bbbb/deeper"))


def test_the_file_form_reads_both_forms_and_round_trips() -> None:
    text = ("# ours\n"
            "tool.canonical.camel-lower  cause: failed: `definition.parse` wrong granted "
            "tools   # kind b: we lower\n"
            "tool.canonical.camel-upper\t# the old form\n")
    read = baselines.parse(text, "b.txt")
    assert read.causes == {
        "tool.canonical.camel-lower": "failed: `definition.parse` wrong granted tools",
        "tool.canonical.camel-upper": None}
    assert read.entries[0].note == "kind b: we lower"
    assert read.unpinned == ("tool.canonical.camel-upper",)
    warning = read.warning()
    assert warning is not None and "b.txt" in warning and "1 of 2" in warning
    assert "capconf baseline REPORT.jsonl --update b.txt" in warning
    again = baselines.parse(baselines.render(read.entries), "b2.txt")
    assert [(e.case, e.cause, e.note) for e in again.entries] == [
        (e.case, e.cause, e.note) for e in read.entries]
    assert [e.case for e in parse_baseline(text, "b.txt")] == list(read.causes)


@pytest.mark.parametrize("line", ["tool.canonical.camel-lower we lower names",
                                  "tool.canonical.camel-lower cause:   # nothing",
                                  "a.case\na.case"])
def test_a_line_that_is_not_an_entry_is_refused(line: str) -> None:
    with pytest.raises(GateError, match=r"b\.txt:"):
        parse_baseline(line + "\n", "b.txt")


def test_the_verdict_on_a_listed_case() -> None:
    pinned = "failed: `definition.parse` wrong granted tools"
    same = baselines.judge(outcomes.FAILED, "r", pinned, pinned + "  ")
    assert same.outcome == outcomes.EXPECTED_FAILURE
    other = baselines.judge(outcomes.TIMED_OUT, "no answer", pinned, "timed out: `x`")
    assert other.outcome == outcomes.TIMED_OUT and other.baseline_cause == pinned
    assert other.reason.startswith("new cause: ") and pinned in other.reason
    assert "timed out: `x`" in other.reason and other.reason.endswith("\nno answer")
    assert baselines.judge(outcomes.CRASHED, "r", None, "crashed: `x`").outcome == \
        outcomes.EXPECTED_FAILURE  # the old form matches any failure
    assert baselines.judge(outcomes.PASSED, "", pinned, "").outcome == outcomes.STALE


def test_an_update_keeps_notes_drops_passing_cases_and_keeps_unrun_ones() -> None:
    existing_text = ("# our header\n\n"
                     "a.fails  cause: failed: `x` wrong result  # kind b: reviewed\n"
                     "b.passes  # kind a: fixed since\n"
                     "c.not-run  cause: failed: `y` wrong result  # kind b: kept\n"
                     "d.moved  cause: failed: `z` wrong result  # kind a: bug\n")
    existing = baselines.parse(existing_text, "old.txt")
    fail = {"outcome": "failed", "exchange": [_step("x", {"ok": True, "result": {}})]}
    records = {"a.fails": {**fail, "fingerprint": "failed: `x` wrong result"},
               "b.passes": {"outcome": "passed"},
               "c.not-run": {"outcome": "not implemented"},
               "d.moved": {**fail, "outcome": "timed out"},
               "e.new": fail,
               "f.passes": {"outcome": "passed"}}
    result = baselines.update(records, existing, existing_text)
    read = baselines.parse(result.text, "new.txt")
    assert result.text.startswith("# our header\n")
    assert {e.case: (e.cause, e.note) for e in read.entries} == {
        "a.fails": ("failed: `x` wrong result", "kind b: reviewed"),
        "c.not-run": ("failed: `y` wrong result", "kind b: kept"),
        "d.moved": ("timed out: `x`", "kind a: bug"),
        "e.new": ("failed: `x` wrong result", baselines.NOT_REVIEWED)}
    told = "\n".join(result.messages)
    assert "dropped 1 entry whose case now passes: b.passes" in told
    assert "d.moved: was `failed: `z` wrong result`, now `timed out: `x``" in told
    assert "kept 1 entry for cases the report did not run" in told
    assert "1 new entry" in told


def test_a_baseline_written_from_a_report_is_green_and_pins_the_cause_for_another_runtime(
        tmp_path: Path) -> None:
    """The issue's done-means: a baseline written from one broken runtime (it lowers
    tool names: the cases get the wrong granted tools) makes the same runtime's run green,
    and fails the run of a second runtime that fails the same cases for another reason
    (it crashes on `definition.parse`), showing the old and the new cause everywhere."""
    selection = [arg for case in CASES for arg in ("--case", case)]
    first = run_suite(tmp_path, LOWERING, *selection)
    assert set(first.outcomes().values()) == {"failed"} and first.returncode == 1
    baseline = tmp_path / "baseline.txt"
    written = run_cli(["baseline", str(tmp_path / "report.jsonl"), "-o", str(baseline)])
    assert written.returncode == 0, written.stderr
    assert "2 new entries" in written.stderr
    text = baseline.read_text()
    assert text.startswith("# Expected failures (capconf baseline)")
    assert "tool.canonical.camel-lower  cause: failed: `definition.parse` wrong granted " \
           "tools  # not reviewed yet" in text

    (tmp_path / "same").mkdir()
    same = run_suite(tmp_path / "same", LOWERING, *selection, "--expected-failures",
                     str(baseline))
    assert same.outcomes() == dict.fromkeys(CASES, "expected failure"), same.output[-3000:]
    assert same.returncode == 0

    (tmp_path / "other").mkdir()
    md, junit = tmp_path / "other.md", tmp_path / "other.xml"
    other = run_suite(tmp_path / "other", CRASHING, *selection, "--expected-failures",
                      str(baseline), "--report-md", str(md), "--junit-xml", str(junit))
    assert other.outcomes() == dict.fromkeys(CASES, "crashed"), other.output[-3000:]
    assert other.returncode == 1
    pinned = "failed: `definition.parse` wrong granted tools"
    for case in CASES:
        line = other.cases[case]
        assert line["baseline_cause"] == pinned
        assert line["fingerprint"] == "crashed: `definition.parse`"
        assert line["reason"].startswith("new cause: ")
    assert "new causes: 2 baselined case(s)" in other.output
    assert f"the baseline pins: {pinned}" in other.output
    assert "it now fails with: crashed: `definition.parse`" in other.output
    markdown = md.read_text()
    assert "## New causes" in markdown and pinned in markdown
    xml = junit.read_text()
    assert f'name="baseline_cause" value="{pinned}"' in xml
    assert "new cause: the case now fails with: crashed: `definition.parse`" in xml


def test_the_old_form_still_reads_with_one_warning(tmp_path: Path) -> None:
    baseline = tmp_path / "old.txt"
    baseline.write_text("".join(f"{c}   # kind b: reviewed long ago\n" for c in CASES))
    run = run_suite(tmp_path, CRASHING, *[a for c in CASES for a in ("--case", c)],
                    "--expected-failures", str(baseline))
    assert run.outcomes() == dict.fromkeys(CASES, "expected failure")
    assert run.returncode == 0
    assert run.output.count(f"{baseline}: 2 of 2 baseline entries pin no cause") == 2, \
        run.output[-3000:]  # stderr at the start, and the summary
    assert f"--update {baseline}" in run.output


def test_adapters_make_report_reads_the_pinned_form(tmp_path: Path) -> None:
    """The adapters' REPORT.md generator keys its findings by case ID in both forms."""
    import json
    import subprocess

    report = tmp_path / "r.jsonl"
    rows = [{"type": "header", "suite_version": "0.1.0", "spec_version": "0.1.0",
             "implementation": {"name": "x"}, "features": ["def"]},
            {"type": "case", "case": "def.a", "requirements": ["DEF-01"], "level": "MUST",
             "outcome": "expected failure", "reason": "r"}]
    report.write_text("".join(json.dumps(r) + "\n" for r in rows))
    baseline = tmp_path / "b.txt"
    baseline.write_text("def.a  cause: failed: `definition.parse` wrong result  "
                        "# kind a: bug #1: drops the agent\n")
    tool = Path(__file__).resolve().parents[2] / "adapters" / "make_report.py"
    done = subprocess.run([sys.executable, str(tool), str(report), str(baseline)],
                          capture_output=True, text=True, check=True)
    assert "### Kind (a): runtime bug (1 cases)" in done.stdout
    assert "| `def.a` | DEF-01 | expected failure | bug #1: drops the agent |" in done.stdout
