"""adapters/make_report.py: the report says what the run measured and why, from the
JSONL report and the baseline's annotations."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import ADAPTER

TOOL = ADAPTER.parent / "make_report.py"


def test_findings_carry_kind_and_issue_link(tmp_path: Path) -> None:
    report = tmp_path / "r.jsonl"
    rows = [{"type": "header", "suite_version": "0.1.0", "spec_version": "0.1.0",
             "implementation": {"name": "x"}, "features": ["def"]},
            {"type": "case", "case": "def.a", "requirements": ["DEF-01"], "level": "MUST",
             "outcome": "expected failure", "reason": "r"},
            {"type": "case", "case": "def.b", "requirements": ["DEF-01"], "level": "MUST",
             "outcome": "passed", "reason": ""},
            {"type": "case", "case": "mcp.c", "requirements": ["MCP-01"], "level": "MUST",
             "outcome": "not implemented", "reason": ""}]
    report.write_text("".join(json.dumps(r) + "\n" for r in rows))
    baseline = tmp_path / "b.txt"
    baseline.write_text("# header\ndef.a   # kind a: bug #26015: drops the agent\n")
    done = subprocess.run([sys.executable, str(TOOL), str(report), str(baseline),
                           "--issue-url", "https://example.invalid/issues/"],
                          capture_output=True, text=True, check=True)
    text = done.stdout
    assert "| def | yes | 1 | 1 | 0 | 0 | 0 |" in text
    assert "| mcp | no | 0 | 0 | 0 | 1 | 0 |" in text
    assert "| DEF-01 |" in text and "non-compliant (known)" in text
    assert "| MCP-01 |" in text and "not implemented" in text
    assert "### Kind (a): runtime bug (1 cases)" in text
    assert "[#26015](https://example.invalid/issues/26015)" in text


def test_a_broken_report_is_a_located_error(tmp_path: Path) -> None:
    report = tmp_path / "r.jsonl"
    report.write_text('{"type": "header"}\nnot json\n')
    baseline = tmp_path / "b.txt"
    baseline.write_text("")
    done = subprocess.run([sys.executable, str(TOOL), str(report), str(baseline)],
                          capture_output=True, text=True)
    assert done.returncode == 2
    assert f"{report}:2: not JSON" in done.stderr


def test_a_reason_holding_unicode_line_separators_is_one_line(tmp_path: Path) -> None:
    """JSON Lines end with \\n only: a case's reason written raw with U+0085 or U+2028 (the
    report keeps non-ASCII as is) is still one row, not a "not JSON" crash."""
    report = tmp_path / "r.jsonl"
    rows = [{"type": "header", "suite_version": "0.1.0", "spec_version": "0.1.0",
             "implementation": {"name": "x"}, "features": ["def"]},
            {"type": "case", "case": "def.a", "requirements": ["DEF-01"], "level": "MUST",
             "outcome": "expected failure", "reason": "got 'Text.\u3000\x85' and \u2028"}]
    report.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                      encoding="utf-8")
    baseline = tmp_path / "b.txt"
    baseline.write_text("def.a   # kind b: design choice: keeps it\n")
    done = subprocess.run([sys.executable, str(TOOL), str(report), str(baseline)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "| def | yes | 0 | 1 | 0 | 0 | 0 |" in done.stdout
