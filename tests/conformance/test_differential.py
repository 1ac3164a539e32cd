"""The differential run: real files through an implementation and the reference, judged
by the behaviour rules (never the reference's wording). Against the reference itself the
corpora give no disagreement; a broken runtime that passes every case of its groups
(fake_impls/lenient_drift.py: columns off after lenient recovery, tab-indented YAML
accepted) disagrees on real files, and the run names the requirement and both answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shared_folder
from suite_runner import run_cli, run_suite

from capconf.conformance import differential

CORPORA = shared_folder.SHARED / "corpora"
AGENTS = shared_folder.corpus("claude-code-agents")
DRIFT = "python:fake_impls.lenient_drift:dispatcher"


def _ok(result: dict[str, object]) -> dict[str, object]:
    return {"ok": True, "result": result}


def _diag(code: str, line: int, column: int, message: str = "m") -> dict[str, object]:
    return {"code": code, "severity": "warning", "path": ["tools", 1], "line": line,
            "column": column, "message": message, "requirement": "TOOL-03"}


def test_wording_is_never_judged_and_free_locations_are_free() -> None:
    ref = _ok({"loaded": True, "tools": ["read"], "diagnostics": [
        _diag("TOOL-UNKNOWN", 4, 13, "`Raed` is not a tool; did you mean `read`?"),
        _diag("DEF-YAML-SYNTAX", 2, 1)]})
    mine = _ok({"loaded": True, "tools": ["read"], "diagnostics": [
        _diag("DEF-YAML-SYNTAX", 3, 7, "bad YAML"),  # another parser, another place
        _diag("TOOL-UNKNOWN", 4, 13, "unknown tool Raed")], "own_key": 1})
    assert differential.compare("definition.parse", ref, mine) == []


def test_a_column_a_code_or_an_error_is_a_disagreement_under_its_requirement() -> None:
    ref = _ok({"loaded": True, "tools": ["read"], "diagnostics": [_diag("TOOL-UNKNOWN", 4, 13)]})
    moved = _ok({"loaded": True, "tools": ["read"], "diagnostics": [_diag("TOOL-UNKNOWN", 4, 12)]})
    [found] = differential.compare("definition.parse", ref, moved)
    assert (found.aspect, found.requirement) == ("diagnostics", "DEF-03")
    assert found.reference[0]["column"] == 13 and found.implementation[0]["column"] == 12
    missing = _ok({"loaded": True, "tools": ["read", "Raed"], "diagnostics": []})
    found_all = differential.compare("definition.parse", ref, missing)
    assert [(d.aspect, d.requirement) for d in found_all] == [
        ("granted tools", "TOOL-03"), ("diagnostics", "TOOL-03")]
    refused = {"ok": False, "error": {"code": "definition_invalid", "message": "x"}}
    [answer] = differential.compare("prompt.assemble", ref, refused)
    assert answer.reference == "a result" and answer.implementation == {
        "error": "definition_invalid"}


@shared_folder.needs(AGENTS)
def test_the_reference_against_itself_agrees_on_every_corpus_file(tmp_path: Path) -> None:
    report = tmp_path / "d.jsonl"
    proc = run_cli(["differential", str(CORPORA), "--report", str(report)], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "against the reference: 0 disagreement(s) in 0 file(s)" in proc.stdout
    lines = [json.loads(x) for x in report.read_text().splitlines()]
    cases = [x for x in lines if x["type"] == "case"]
    files = len(list(AGENTS.rglob("*.md")))
    assert len(cases) >= files * len(differential.OPS)
    assert {c["outcome"] for c in cases} == {"passed"}


@shared_folder.needs(AGENTS)
def test_a_runtime_the_cases_miss_disagrees_on_real_files(tmp_path: Path) -> None:
    tab = tmp_path / "tabbed.md"
    tab.write_text("---\nname: tabbed\ndescription: d\ntools:\n\t- read\n---\nBody.\n")
    report, md, junit = tmp_path / "d.jsonl", tmp_path / "d.md", tmp_path / "d.xml"
    proc = run_cli(["differential", "--impl", DRIFT, str(AGENTS), tab.name,
                    "--report", str(report), "--report-md", str(md),
                    "--junit-xml", str(junit)], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    failing = [x for x in map(json.loads, report.read_text().splitlines())
               if x["type"] == "case" and x["outcome"] == "failed"]
    files = {c["reason"].split(": `", 1)[0] for c in failing}
    assert len(files) >= 9 and "tabbed.md" in files, sorted(files)  # 8 corpus files + tab
    assert "claude-code-agents/08-business-product/backlog-grooming.md" in files
    column = next(c for c in failing if "/definition.parse[parse]/diagnostics" in c["case"]
                  and c["case"] != "differential/tabbed.md/definition.parse[parse]/"
                  "diagnostics")
    assert column["requirements"] == ["DEF-03"]
    ref_cols = [d["column"] for d in column["expected"] if "column" in d]
    got_cols = [d["column"] for d in column["got"] if "column" in d]
    assert [c - 1 for c in ref_cols] == got_cols  # both answers are there, 0- vs 1-based
    assert "reference (expected): " in column["reason"]
    assert "implementation (got): " in column["reason"]
    tabbed = [c for c in failing if c["case"].startswith("differential/tabbed.md/")]
    assert any(c["requirements"] == ["DEF-02"] for c in tabbed)  # the lenient warning
    assert "DEF-03: " in proc.stdout and "  reference (expected): [" in proc.stdout
    assert "disagreement(s) in " in proc.stdout and "by requirement: DEF-02 " in proc.stdout
    assert "non-compliant" in md.read_text() and "DEF-03" in md.read_text()
    assert "<failure" in junit.read_text()


@pytest.mark.slow
def test_that_runtime_passes_every_case_of_its_groups(tmp_path: Path) -> None:
    """The point of the differential run: the suite alone calls this runtime compliant
    with every case it can run."""
    run = run_suite(tmp_path, DRIFT, timeout=900)
    ran = {cid: o for cid, o in run.outcomes().items() if o != "not implemented"}
    assert len(ran) > 100 and set(ran.values()) == {"passed"}, run.output[-3000:]
    assert run.returncode == 0
    # the done-means, on the whole suite: this runtime declares def, tool and
    # prompt; no requirement with unrun cases reads compliant, none of an undeclared
    # group reads non-compliant
    records = [json.loads(x) for x in (tmp_path / "report.jsonl").read_text().splitlines()]
    standings = {r["requirement"]: r for r in records if r["type"] == "requirement"}
    compliant = [r for r in standings.values() if r["status"] == "compliant"]
    assert compliant and all(r["ran"] == r["passed"] == r["cases"] for r in compliant)
    assert not [r for r in standings.values() if r["status"] == "non-compliant"]
    assert standings["DEF-02"]["status"] == "partly tested"
    for rid in ("SKILL-02", "MCP-01", "KB-02", "MEM-02"):
        assert standings[rid]["status"] == "not implemented", standings[rid]


def test_a_hostile_file_name_cannot_forge_report_text() -> None:
    from capconf.conformance.cli_differential import safe_name

    assert safe_name("agents/ok_name [1].md") == "agents/ok_name [1].md"
    assert safe_name("a\nb|`c`<x>%.md") == "a%0Ab%7C%60c%60%3Cx%3E%25.md"
