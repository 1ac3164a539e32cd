"""What the Action prints for GitHub (capconf/conformance/github_annotations.py): failing
cases as annotations no implementation text can break out of, and a validate summary."""

from __future__ import annotations

from action_runner import workflow_commands

from capconf.conformance.github_annotations import (
    LIMIT,
    render_annotations,
    sarif_summary,
)
from capconf.conformance.report_file import CaseResult

HOSTILE = "got 'x'\n::error title=forged::pwned\r\n::add-mask::%0A"


def _case(case: str, outcome: str, reason: str = "") -> CaseResult:
    return CaseResult(case=case, requirements=("TOOL-02",), outcome=outcome, level="MUST",
                      reason=reason, rule="TOOL-02 (Case-insensitive in, canonical out)")


def test_each_failing_case_is_one_annotation_and_its_text_stays_inside() -> None:
    text = render_annotations([_case("tool.a", "passed"), _case("tool.b", "failed", HOSTILE),
                               _case("tool.c", "crashed", "boom"),
                               _case("tool.d", "expected failure", "known")])
    assert len(text.splitlines()) == 2
    commands = workflow_commands(text)
    assert [(c.name, c.properties["title"]) for c in commands] == [
        ("error", "capconf tool.b"), ("error", "capconf tool.c")]
    assert commands[0].message == f"failed: TOOL-02 (Case-insensitive in, canonical out): {HOSTILE}"


def test_past_the_limit_one_notice_counts_the_rest() -> None:
    cases = [_case(f"tool.c{i:02d}", "failed", "r") for i in range(LIMIT + 3)]
    commands = workflow_commands(render_annotations(cases))
    assert [c.name for c in commands] == ["error"] * LIMIT + ["notice"]
    assert commands[-1].message.startswith("3 more failing case(s)")


def test_a_run_stopped_at_the_handshake_is_one_error() -> None:
    commands = workflow_commands(render_annotations(
        [], header={"handshake_error": "capconf: the implementation failed the handshake\n"
                                       "::error title=forged::x"}))
    assert [(c.name, c.properties["title"]) for c in commands] == [
        ("error", "capconf handshake")]


def test_the_validate_summary_counts_by_code_and_neutralises_codes() -> None:
    def result(code: str, level: str, uri: str) -> dict[str, object]:
        return {"ruleId": code, "level": level, "message": {"text": "m"},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri}}}]}
    log = {"runs": [{"results": [result("TOOL-UNKNOWN", "warning", "a.md"),
                                 result("TOOL-UNKNOWN", "warning", "b.md"),
                                 result("X`|<img src=x>\n# h", "error", "b.md")]}]}
    text = sarif_summary(log, 2)
    assert "3 diagnostic(s) in 2 file(s): 1 error(s), 2 warning(s)" in text
    assert "Exit status 2 (failed: errors)" in text
    assert "| `TOOL-UNKNOWN` | warning | 2 |" in text
    assert "| `X \\|<img src=x> # h` | error | 1 |" in text
    assert sarif_summary({"runs": [{"results": []}]}, 0).count("|") == 0
