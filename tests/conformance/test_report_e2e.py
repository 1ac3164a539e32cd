"""End to end, as a CI job uses it: the reference and a deliberately broken runtime run
the TOOL-02 cases; JUnit names cases by ID, `capconf diff` exits 1 naming the
requirement, `capconf report` writes both columns."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from suite_runner import CliResult, run_cli

TESTS = Path(__file__).resolve().parent.parent
BROKEN = "python:mutants:dispatcher:lowercase-resolver"


def _capconf(*args: str) -> CliResult[str]:
    return run_cli(args, env={**os.environ, "PYTHONPATH": str(TESTS)}, timeout=600)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    for name, impl, status in (("ref", "reference", 0), ("broken", BROKEN, 1)):
        # fail-fast: the verdicts of the default profile, a failure not shrunk
        proc = _capconf("run", "--impl", impl, "--req", "TOOL-02",
                        "--report", str(out / f"{name}.jsonl"),
                        "--junit-xml", str(out / f"{name}.xml"),
                        "--", "--hypothesis-profile=fail-fast")
        assert proc.returncode == status, proc.stdout[-2000:] + proc.stderr[-2000:]
    return out


def test_the_run_writes_junit_named_by_case_id(runs: Path) -> None:
    root = ET.fromstring((runs / "broken.xml").read_bytes())
    cases = {c.get("name", ""): c for c in root.iter("testcase")}
    assert cases and all("::" not in n and "/" not in n for n in cases)  # not node ids
    failed = [c for c in cases.values() if c.find("failure") is not None]
    assert failed
    for case in failed:
        props = [(p.get("name"), p.get("value")) for p in case.iter("property")]
        assert ("requirement", "TOOL-02") in props and ("level", "MUST") in props
    # the same bytes from the JSON Lines report afterwards
    again = _capconf("report", str(runs / "broken.jsonl"), "--junit-xml",
                     str(runs / "again.xml"))
    assert again.returncode == 0, again.stderr
    assert (runs / "again.xml").read_bytes() == (runs / "broken.xml").read_bytes()


def test_diff_from_the_reference_to_the_broken_runtime_exits_1_naming_it(runs: Path) -> None:
    proc = _capconf("diff", str(runs / "ref.jsonl"), str(runs / "broken.jsonl"))
    assert proc.returncode == 1
    assert "REGRESSION in " in proc.stdout and "TOOL-02" in proc.stdout.splitlines()[-1]
    assert _capconf("diff", str(runs / "broken.jsonl"), str(runs / "ref.jsonl")
                    ).returncode == 0


def test_report_writes_html_and_markdown_with_both_columns(runs: Path) -> None:
    html, md = runs / "r.html", runs / "r.md"
    proc = _capconf("report", str(runs / "ref.jsonl"), str(runs / "broken.jsonl"),
                    "--html", str(html), "--markdown", str(md))
    assert proc.returncode == 0, proc.stderr
    page = html.read_text(encoding="utf-8")
    assert f"({BROKEN})" in page and "(reference)" in page
    assert "| TOOL-02 Case-insensitive in, canonical out | Tool grants | compliant (all " \
           in md.read_text(encoding="utf-8")
    assert "ran and passed) | **non-compliant (" in md.read_text(encoding="utf-8")


def test_report_refuses_without_an_output_or_with_a_bad_report(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("hello\n")
    none = _capconf("report", str(bad))
    assert none.returncode == 2 and "--html FILE" in none.stderr
    broken = _capconf("report", str(bad), "--html", str(tmp_path / "x.html"))
    assert broken.returncode == 2 and "bad.jsonl:1: not JSON" in broken.stderr
    assert not (tmp_path / "x.html").exists()
