"""adapters/make_report.py --adapter and --compat: findings-first reports and the
compatibility page, generated, checkable for freshness, and safe for hostile text."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from capconf.conformance.safe_text import md_text

ADAPTERS = Path(__file__).resolve().parents[2] / "adapters"
TOOL = ADAPTERS / "make_report.py"
sys.path.insert(0, str(ADAPTERS))

HOSTILE = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) | # **b** http://e.vil"


def _case(cid: str, reqs: list[str], outcome: str, reason: str = "") -> dict[str, object]:
    return {"type": "case", "case": cid, "requirements": reqs, "level": "MUST",
            "outcome": outcome, "reason": reason}


def _toy(root: Path, name: str = "toy") -> Path:
    a = root / name
    (a / "repro").mkdir(parents=True)
    (a / "repro" / "drops.py").write_text("import json\n")
    rows = [{"type": "header", "suite_version": "0.1.0", "spec_version": "0.1.0",
             "implementation": {"name": "Toy", "version": "1.0.0"},
             "features": ["def", "tool"]},
            _case("def.a", ["DEF-01"], "expected failure", HOSTILE),
            _case("def.b", ["DEF-01", "DEF-03"], "expected failure"),
            _case("tool.c", ["TOOL-01"], "expected failure"),
            _case("tool.d", ["TOOL-01"], "passed"),
            _case("mcp.e", ["MCP-01"], "not implemented")]
    (a / f"{name}-run.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (a / "expected-failures.txt").write_text(
        "def.a  cause: failed: `definition.parse` wrong result  # kind a [drops]: x\n"
        "def.b  cause: failed: `definition.parse` wrong result  # kind a [drops]: y\n"
        "tool.c  cause: failed: `agent.spawn` wrong granted tools  # kind b [design]: z\n")
    (a / "findings.toml").write_text(f'''
[findings.drops]
kind = "a"
title = {json.dumps("Drops the agent " + HOSTILE)}
rule = "DEF-01"
expected = "loaded"
actual = {json.dumps(HOSTILE)}
severity = "high"
issue = "new"
draft_title = "Agent dropped"
draft_body = "Steps:\\n```\\nrun it\\n```\\n<script>x</script>"
repro = "repro/drops.py"

[findings.design]
kind = "b"
title = "Other design"
rule = "TOOL-01"
expected = "e"
actual = "a"
severity = "low"
issue = "https://github.com/o/r/issues/7"
evidence = "docs"

[findings.nobody]
kind = "b"
title = "Unreached one"
rule = "SKILL-01"
expected = "e"
actual = "a"
severity = "medium"
issue = "new"
evidence = "code"
''')
    return a


def _with_gap(a: Path) -> Path:
    """The toy plus an adapter gap: `tool.g` (TOOL-02 alone, so that requirement's only
    failure is the gap) and `def.g` (DEF-01, beside the `drops` finding's cases)."""
    run = a / f"{a.name}-run.jsonl"
    run.write_text(run.read_text()
                   + json.dumps(_case("tool.g", ["TOOL-02"], "expected failure")) + "\n"
                   + json.dumps(_case("tool.h", ["TOOL-02"], "passed")) + "\n"
                   + json.dumps(_case("def.g", ["DEF-01"], "expected failure")) + "\n")
    base = a / "expected-failures.txt"
    base.write_text(base.read_text()
                    + "tool.g  cause: errored: `cards.list` answered error `not_implemented`"
                    "  # kind gap [no-cards]: stops at cards.list\n"
                    "def.g  cause: errored: `cards.list` answered error `not_implemented`"
                    "  # kind gap [no-cards]: stops at cards.list\n")
    toml = a / "findings.toml"
    toml.write_text(toml.read_text() + f'''
[findings.no-cards]
kind = "gap"
title = {json.dumps("No permission-prompt tool " + HOSTILE)}
rule = "APPR-01"
missing = "a permission-prompt tool"
plan = "host one"
''')
    return a


def _make(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(TOOL), *args], capture_output=True,
                          text=True, check=False)


def test_report_is_findings_first_grouped_by_finding(tmp_path: Path) -> None:
    a = _toy(tmp_path)
    done = _make("--adapter", str(a))
    assert done.returncode == 0, done.stderr
    text = (a / "REPORT.md").read_text()
    first, unreached = text.index("### 1. Drops the agent"), text.index("Unreached one")
    assert first < text.index("## Feature groups") and first < text.index("## Requirements")
    assert text.index("### 2. Other design") < text.index("## Findings no case reaches")
    assert text.index("## Findings no case reaches") < unreached
    assert "- **Cases:** 2 in this run (requirements: DEF-01, DEF-03)" in text
    assert "`def.a`, `def.b`" in text
    assert "unreached" in text[unreached:]
    assert "[#7](https://github.com/o/r/issues/7)" in text
    assert "not filed yet (draft below)" in text
    assert "Ready-to-file draft, title: Agent dropped" in text
    assert "  ````text" in text  # the fence outgrows the body's own ```
    assert "[repro/drops.py](repro/drops.py)" in text


def test_report_neutralises_hostile_text(tmp_path: Path) -> None:
    a = _toy(tmp_path)
    assert _make("--adapter", str(a)).returncode == 0
    text = (a / "REPORT.md").read_text()
    outside_fences = text.split("````")[0] + text.split("````")[-1]
    assert not re.search(r"(?<!\\)<img|(?<!\\)\]\(javascript", outside_fences)
    assert "\\<img" in text and "http\\://e.vil" in text


def test_check_fails_on_a_stale_report_and_passes_on_a_fresh_one(tmp_path: Path) -> None:
    a = _toy(tmp_path)
    assert _make("--adapter", str(a)).returncode == 0
    assert _make("--adapter", str(a), "--check").returncode == 0
    (a / "REPORT.md").write_text((a / "REPORT.md").read_text() + "edited\n")
    done = _make("--adapter", str(a), "--check")
    assert done.returncode == 1 and "stale" in done.stderr


def test_an_unexplained_failure_is_shown(tmp_path: Path) -> None:
    a = _toy(tmp_path)
    run = a / "toy-run.jsonl"
    run.write_text(run.read_text() + json.dumps(_case("tool.x", ["TOOL-02"], "failed")) + "\n")
    assert _make("--adapter", str(a)).returncode == 0
    assert "| `tool.x` | failed | failing, and not in the baseline |" in (
        a / "REPORT.md").read_text()


def test_compat_page_links_cells_to_findings_and_escapes_html(tmp_path: Path) -> None:
    _toy(tmp_path, "toy")
    ref = tmp_path / "reference-run.jsonl"
    ref.write_text(json.dumps({"type": "header", "implementation": {"name": "ref"},
                               "features": []}) + "\n"
                   + json.dumps(_case("def.a", ["DEF-01"], "passed")) + "\n")
    out, page = tmp_path / "COMPATIBILITY.md", tmp_path / "c.html"
    done = _make("--compat", str(tmp_path), "--out", str(out), "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.index("## Top findings") < text.index("## Requirement by requirement")
    assert "fails: [drops](toy/REPORT.md#finding-drops)" in text
    assert "| [TOOL-01](../SPEC.md#TOOL-01) Canonical names and the registry | - | fails: " \
           "[design](toy/REPORT.md#finding-design) |" in text or "design](toy" in text
    html = page.read_text()
    assert "<img" not in html and "<script>" not in html and "&lt;img" in html
    assert 'href="#f-toy-drops"' in html and 'id="f-toy-drops"' in html
    # self-contained: no script, no external resource (only the issue is a link)
    assert not re.search(r"<script|<link|<img|<[^>]* src=|@import|url\(", html)
    assert html.count('href="http') == 1
    assert _make("--compat", str(tmp_path), "--out", str(out), "--html", str(page),
                 "--check").returncode == 0
    out.write_text(text.replace("fails", "pass"))
    assert _make("--compat", str(tmp_path), "--out", str(out), "--check").returncode == 1


def test_report_lists_adapter_gaps_apart_and_never_as_findings(tmp_path: Path) -> None:
    a = _with_gap(_toy(tmp_path))
    assert _make("--adapter", str(a)).returncode == 0
    text = (a / "REPORT.md").read_text()
    gaps = text.index("## Not judged: adapter gaps")
    assert text.index("## Findings no case reaches") < gaps < text.index("## Feature groups")
    findings_part = text[text.index("## Findings"):gaps]
    assert "no-cards" not in findings_part and "No permission-prompt tool" not in findings_part
    assert '<a id="gap-no-cards"></a>' in text[gaps:]
    assert "### G1. No permission-prompt tool" in text[gaps:]
    assert "- **What the adapter lacks:** a permission-prompt tool" in text
    assert "- **Cases:** 2 in this run (requirements: DEF-01, TOOL-02)" in text
    # the summary counts say what they count: 5 expected failures, 3 by findings, 2 gaps
    assert "- the 5 expected failures: 3 cite a runtime finding, 2 an adapter gap" in text
    assert "- distinct runtime findings (kinds a and b): 3 (2 reached" in text
    assert "- adapter gaps (kind gap, not findings about the runtime): 1 (1 reached)" in text
    # TOOL-02's only failure is the gap: not judged; DEF-01 mixes both: still a failure
    assert re.search(r"\| TOOL-02 \| .* \| not judged \(adapter gap\: 1 of 2 cases that ran "
                     r"fail only where the adapter cannot yet translate .*; 1 passed\) \|", text)
    assert re.search(r"\| DEF-01 \| .* \| expected failure \(.*1 of them adapter gaps", text)
    assert "\\<img" in text[gaps:] and "<img" not in text[gaps:].replace("\\<img", "")


def test_compat_cell_with_only_gaps_reads_not_judged(tmp_path: Path) -> None:
    _with_gap(_toy(tmp_path, "toy"))
    out, page = tmp_path / "COMPATIBILITY.md", tmp_path / "c.html"
    done = _make("--compat", str(tmp_path), "--out", str(out), "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    row = next(line for line in text.splitlines() if line.startswith("| [TOOL-02]"))
    assert row.endswith("| not judged (adapter): [no-cards](toy/REPORT.md#gap-no-cards) |")
    row = next(line for line in text.splitlines() if line.startswith("| [DEF-01]"))
    assert "fails: [drops](toy/REPORT.md#finding-drops) (+ 1 case not judged: " \
           "[no-cards](toy/REPORT.md#gap-no-cards))" in row
    assert "not judged (adapter) = every case that fails here" in text
    top = text[text.index("## Top findings"):text.index("## Requirement by requirement")]
    assert "drops" in top and "no-cards" not in top and "permission-prompt" not in top
    assert "| 1 (2) |" in text  # the overview: one gap, two cases not judged
    html = page.read_text()
    top_html = html[html.index("Top findings"):html.index("Requirement by requirement")]
    assert "no-cards" not in top_html
    assert 'class="notjudged"' in html and 'href="#g-toy-no-cards"' in html
    assert 'id="g-toy-no-cards"' in html and "+ 1 case not judged:" in html
    assert "<img" not in html


def test_the_old_positional_mode_still_works(tmp_path: Path) -> None:
    a = _toy(tmp_path)
    done = _make(str(a / "toy-run.jsonl"), str(a / "expected-failures.txt"))
    assert done.returncode == 0 and "# capconf conformance report" in done.stdout


@pytest.mark.parametrize("text", [HOSTILE, "a\nb\r\n# c", "\u202eevil", "`x`|y", "www.e.vil"])
def test_md_keeps_text_one_literal_line(text: str) -> None:
    """The reports' Markdown escaping (safe_text.md_text): one line, no control or bidi
    character, every inline markup character escaped, no bare URL left to autolink."""
    out = md_text(text)
    assert "\n" not in out and "\u202e" not in out
    assert "http://" not in out and "www." not in out
    assert all(f"\\{c}" in out for c in "<>[]|*`" if c in text)


def test_the_committed_compatibility_page_is_fresh() -> None:
    """adapters/COMPATIBILITY.md is what the committed runs give (regenerate: README §12)."""
    page = ADAPTERS / "COMPATIBILITY.md"
    if not page.is_file():
        pytest.skip("no COMPATIBILITY.md yet")
    done = _make("--compat", str(ADAPTERS), "--out", str(page), "--check")
    assert done.returncode == 0, done.stderr
