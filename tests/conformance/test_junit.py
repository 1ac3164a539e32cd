"""JUnit XML: test cases named by case ID, requirements and level as properties,
capconf's outcomes mapped onto JUnit's kinds."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from report_support import reference_and_broken

from capconf.conformance.junit import render_junit
from capconf.conformance.report_file import parse_report


def _cases(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml.encode("utf-8"))
    return {c.get("name", ""): c for c in root.iter("testcase")}


def _props(element: ET.Element) -> list[tuple[str | None, str | None]]:
    return [(p.get("name"), p.get("value")) for p in element.iter("property")]


def test_each_testcase_is_a_case_id_with_requirements_level_and_outcome() -> None:
    xml = render_junit(parse_report(reference_and_broken()[1], "broken.jsonl"))
    cases = _cases(xml)
    assert sorted(cases) == ["def.doc.one", "kb.glob", "mem.modes", "tool.case.canonical",
                             "tool.case.mixed"]
    mixed = cases["tool.case.mixed"]
    assert ("requirement", "TOOL-02") in _props(mixed)
    assert ("requirement", "TOOL-03") in _props(mixed) and ("level", "MUST") in _props(mixed)
    assert mixed.get("classname") == "capconf.tool"
    assert cases["def.doc.one"].find("failure") is None


def test_outcomes_map_to_failure_error_and_skipped_with_the_reason() -> None:
    xml = render_junit(parse_report(reference_and_broken()[1], "broken.jsonl"))
    cases = _cases(xml)
    failure = cases["tool.case.canonical"].find("failure")
    assert failure is not None and failure.get("type") == "failed"
    assert "expected: WebFetch" in (failure.get("message") or "")
    assert "got: ['read', 'webfetch']" in (failure.text or "")  # the detail fields
    error = cases["tool.case.mixed"].find("error")
    assert error is not None and error.get("type") == "crashed"
    assert "\x07" not in xml and "<boom>" in (error.text or "")  # kept, escaped in XML
    skipped = cases["mem.modes"].find("skipped")
    assert skipped is not None and (skipped.get("message") or "").startswith(
        "not implemented")
    suite = ET.fromstring(xml.encode()).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors"),
            suite.get("skipped")) == ("5", "2", "1", "1")
