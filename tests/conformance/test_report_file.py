"""Reading run reports back: old and new case lines, and bad files as located errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from report_support import FAILED_DETAIL, case, header, jsonl, reference_and_broken

from capconf.conformance.report_file import ReportFileError, load_report, parse_report


def test_a_new_case_line_keeps_rule_expected_got_exchange() -> None:
    report = parse_report(reference_and_broken()[1], "new.jsonl")
    failed = report.cases["tool.case.canonical"]
    assert failed.has_detail and failed.rule == FAILED_DETAIL["rule"]
    assert failed.expected == ["read", "WebFetch"] and failed.got == ["read", "webfetch"]
    assert [e.request["op"] for e in failed.exchange] == ["definition.parse"]
    assert report.label == "capconf-reference-simulator 0.1.0"


def test_an_old_case_line_reads_without_the_newer_fields() -> None:
    old = parse_report(jsonl(header(), case("a", ["DEF-01"], "failed", "why")), "old.jsonl")
    line = old.cases["a"]
    assert not line.has_detail and line.exchange == () and line.rule is None
    assert line.failing and line.reason == "why"


@pytest.mark.parametrize(("text", "line", "words"), [
    ("", 1, "empty report"),
    ('{"type": "case"}\n', 1, "not a report header"),
    ('{"type": "header"}\n{"type": "case", "case": "a"\n', 2, "not JSON"),
    ('{"type": "header"}\n[1]\n', 2, "JSON object"),
    ('{"type": "header"}\n{"type": "case", "case": "a", "outcome": "great"}\n', 2,
     "unknown outcome"),
    ('{"type": "header"}\n{"type": "case", "case": 3, "outcome": "passed"}\n', 2,
     "`case` must be a string"),
    ('{"type": "header"}\n{"type": "case", "case": "a", "outcome": "passed", '
     '"requirements": "DEF-01"}\n', 2, "list of IDs"),
    ('{"type": "header"}\n{"type": "case", "case": "a", "outcome": "passed", '
     '"exchange": [1]}\n', 2, "`exchange`"),
    ('{"type": "header"}\n' + 2 * '{"type": "case", "case": "a", "outcome": "passed"}\n', 3,
     "appears twice"),
])
def test_a_bad_report_is_refused_with_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ReportFileError) as info:
        parse_report(text, "r.jsonl")
    assert info.value.line == line and words in info.value.message
    assert str(info.value).startswith(f"r.jsonl:{line}: ")


def test_unreadable_and_non_utf8_files_are_located(tmp_path: Path) -> None:
    with pytest.raises(ReportFileError, match="cannot read"):
        load_report(str(tmp_path / "missing.jsonl"))
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"type": "header"}\n\xff\n')
    with pytest.raises(ReportFileError) as info:
        load_report(str(bad))
    assert info.value.line == 2 and "UTF-8" in info.value.message


def test_unknown_line_kinds_are_ignored_so_the_format_can_grow() -> None:
    text = jsonl(header(), {"type": "timing", "x": 1}, case("a", ["DEF-01"]))
    assert list(parse_report(text).cases) == ["a"]


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.text(max_size=400))
def test_any_text_is_a_report_or_a_located_error(text: str) -> None:
    try:
        parse_report(text, "r.jsonl")
    except ReportFileError as exc:
        assert exc.line is not None and exc.line >= 1


_json = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.sampled_from(["type", "case", "outcome",
                                                        "requirements", "exchange", "level",
                                                        "reason", "got"]), inner,
                                       max_size=5), max_leaves=12)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(_json, max_size=4))
def test_any_json_lines_are_a_report_or_a_located_error(values: list[object]) -> None:
    import json

    text = jsonl(header(), *[{"type": "case", "case": "x", "outcome": "passed"}]) + "".join(
        json.dumps(v) + "\n" for v in values)
    try:
        parse_report(text, "r.jsonl")
    except ReportFileError as exc:
        assert exc.line is not None and exc.line >= 2


def test_unicode_line_separators_inside_a_value_are_not_line_breaks() -> None:
    """The writer keeps non-ASCII text as is, so a reason may hold U+2028 or U+0085."""
    text = jsonl(header(), case("a", ["DEF-01"], "failed", "one\u2028two\x85three"))
    assert parse_report(text).cases["a"].reason == "one\u2028two\x85three"
