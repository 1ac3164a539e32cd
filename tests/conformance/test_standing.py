"""A requirement's status says exactly what ran: compliant only when every case of the
suite citing it ran and passed; cases not run make it "partly tested (15 of 46 cases
ran)"; cases that all need undeclared groups make it "not implemented", never
non-compliant; an accepted (baselined) failure is never compliant."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from suite_runner import run_suite

from capconf.conformance import outcomes as o
from capconf.conformance import standing
from capconf.conformance.report_file import parse_report

FAKE = Path(__file__).resolve().parent.parent / "fake_impls" / "misbehave.py"
# the reference behind a `hello` that declares def, tool and prompt only
DEF_TOOL_PROMPT = f"{shlex.quote(sys.executable)} {shlex.quote(str(FAKE))} none none"


@pytest.mark.parametrize(("seen", "suite", "status", "text"), [
    ([o.PASSED] * 3, 3, standing.COMPLIANT, "compliant (all 3 cases ran and passed)"),
    ([o.PASSED] * 15 + [o.NOT_IMPLEMENTED] * 31, 46, standing.PARTLY_TESTED,
     "partly tested (15 of 46 cases ran: 31 not implemented)"),
    ([o.PASSED] * 2, 5, standing.PARTLY_TESTED,
     "partly tested (2 of 5 cases ran: 3 not selected)"),
    ([o.PASSED, o.SKIPPED], 2, standing.PARTLY_TESTED,
     "partly tested (1 of 2 cases ran: 1 skipped)"),
    ([o.NOT_IMPLEMENTED] * 18, 18, standing.NOT_IMPLEMENTED,
     "not implemented (none of its 18 cases ran: 18 not implemented)"),
    ([o.NOT_IMPLEMENTED] * 2, 27, standing.NOT_RUN,
     "not run (none of its 27 cases ran: 2 not implemented, 25 not selected)"),
    ([], 4, standing.NOT_RUN, "not run (none of its 4 cases ran: 4 not selected)"),
    ([o.SKIPPED], 1, standing.SKIPPED, "skipped (its 1 case did not run: 1 skipped)"),
    ([o.PASSED, o.FAILED, o.NOT_IMPLEMENTED], 3, standing.NON_COMPLIANT,
     "non-compliant (1 of 2 cases that ran failed; 2 of 3 ran)"),
    ([o.TIMED_OUT, o.EXPECTED_FAILURE], 2, standing.NON_COMPLIANT,
     "non-compliant (1 of 2 cases that ran failed)"),
    ([o.PASSED, o.EXPECTED_FAILURE], 2, standing.EXPECTED_FAILURE,
     "expected failure (1 of 2 cases that ran fail as the baseline expects)"),
    ([o.PASSED, o.STALE], 2, standing.COMPLIANT, "compliant (all 2 cases ran and passed)"),
    ([], 0, standing.UNTESTED, "untested (no case in the suite)"),
])
def test_the_status_table(seen: list[str], suite: int, status: str, text: str) -> None:
    found = standing.fold("X-01", seen, suite)
    assert (found.status, found.text) == (status, text)
    assert found.counts.ran + found.counts.not_implemented + found.counts.skipped \
        + found.counts.not_selected == found.counts.cases  # every case counted once


def test_a_record_read_back_is_recomputed_from_its_counts() -> None:
    record = standing.fold("X-01", [o.PASSED, o.FAILED], 2).to_json()
    assert record["type"] == "requirement" and record["status"] == "non-compliant"
    forged = {**record, "status": "compliant"}
    read = standing.from_record(forged)
    assert read is not None and read.status == standing.NON_COMPLIANT
    assert standing.from_record({**record, "ran": "2"}) is None


def test_a_driver_declaring_def_tool_prompt_reads_partly_tested_and_not_implemented(
        tmp_path: Path) -> None:
    """The issue's reproduction: DEF-02 read "compliant (46 cases)" with 31 of them not
    run, and SKILL-02, MCP-01, KB-02, MEM-02 read non-compliant with only `def` declared.
    Every output (JSONL records, console, Markdown, JUnit, the report matrix) now says
    the same: no requirement with unrun cases is compliant, no undeclared group's
    requirement is non-compliant."""
    md, junit = tmp_path / "r.md", tmp_path / "r.xml"
    reqs = ("DEF-02", "SKILL-02", "MCP-01", "KB-02", "MEM-02")
    run = run_suite(tmp_path, DEF_TOOL_PROMPT, *[a for r in reqs for a in ("--req", r)],
                    "--report-md", str(md), "--junit-xml", str(junit))
    assert run.returncode == 0, run.output[-3000:]
    text = (tmp_path / "report.jsonl").read_text()
    records = {r["requirement"]: r for r in map(json.loads, text.splitlines())
               if r["type"] == "requirement"}
    assert len(records) >= 99
    for rid, r in records.items():
        if r["status"] == "compliant":
            assert r["ran"] == r["passed"] == r["cases"], (rid, r)
        assert r["status"] != "non-compliant", (rid, r)
    def02 = records["DEF-02"]
    assert def02["status"] == "partly tested" and 0 < def02["ran"] < def02["cases"]
    assert def02["text"] == f"partly tested ({def02['ran']} of {def02['cases']} cases ran: " \
                            f"{def02['not_implemented']} not implemented)"
    for rid in reqs[1:]:
        assert records[rid]["status"] == "not implemented", records[rid]
    partly = next(ln for ln in run.output.splitlines() if ln.startswith("partly tested: "))
    assert f"DEF-02 ({def02['ran']} of {def02['cases']} cases ran" in partly
    assert "requirements: " in run.output and " in the spec, by status: " in run.output
    assert f"| DEF-02 | Two validation modes | MUST | {def02['ran']} / {def02['cases']} | " \
           f"{def02['text']} |" in md.read_text()
    assert f'name="requirement DEF-02" value="{def02["text"]}"' in junit.read_text()
    loaded = parse_report(text)
    assert loaded.standings["MCP-01"].status == "not implemented"
    assert loaded.requirement_standings()["DEF-02"].text == def02["text"]
