"""JUnit XML of a run, for CI systems that show test results from JUnit files.

Each ``<testcase>`` is named by its capconf case ID (not the pytest node id, which moves
when a file is renamed), its ``classname`` is ``capconf.<area>``, and its properties carry
the requirement IDs, the level (MUST / REFERENCE) and capconf's own outcome word, since
JUnit has fewer kinds than capconf: failed and stale are ``<failure>``; errored, crashed
and timed out are ``<error>``; skipped, not implemented and expected failure are
``<skipped>``. Written from the JSON Lines report's text, so `capconf run --junit-xml`
and `capconf report --junit-xml` give the same bytes for the same run. No timestamps or
times: two runs of the same implementation give the same file. The suite's properties
carry each requirement's status as every other output words it (``standing``).
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from capconf.conformance import outcomes
from capconf.conformance.report_file import CaseResult, LoadedReport, parse_report, summary_line
from capconf.conformance.requirements import requirements

FAILURE = frozenset({outcomes.FAILED, outcomes.STALE})
ERROR = frozenset({outcomes.ERRORED, outcomes.CRASHED, outcomes.TIMED_OUT})
SKIPPED = frozenset({outcomes.SKIPPED, outcomes.NOT_IMPLEMENTED, outcomes.EXPECTED_FAILURE})

# characters XML 1.0 cannot carry at all (an implementation's stderr tail may hold them)
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def _text(value: str) -> str:
    return _NOT_XML.sub("\ufffd", value)


def _classname(case: CaseResult) -> str:
    table = requirements()
    groups = [table[r].group for r in case.requirements if r in table]
    return f"capconf.{groups[0]}" if groups else "capconf"


def _body(case: CaseResult) -> str:
    parts = [case.reason]
    if case.rule:
        parts.insert(0, f"rule: {case.rule}")
    if case.has_detail and (case.expected is not None or case.got is not None):
        parts += [f"expected: {case.expected!r}", f"got: {case.got!r}"]
    if case.cause:
        parts.append(f"cause: {case.cause}")
    if case.baseline_cause:
        parts.append(f"new cause: the baseline pins: {case.baseline_cause}")
        parts.append(f"new cause: the case now fails with: {case.fingerprint}")
    return "\n".join(p for p in parts if p)


def _testcase(parent: ET.Element, case: CaseResult) -> None:
    element = ET.SubElement(parent, "testcase", name=_text(case.case),
                            classname=_classname(case))
    props = ET.SubElement(element, "properties")
    for rid in case.requirements:
        ET.SubElement(props, "property", name="requirement", value=rid)
    ET.SubElement(props, "property", name="level", value=case.level)
    ET.SubElement(props, "property", name="outcome", value=case.outcome)
    if case.nodeid:
        ET.SubElement(props, "property", name="nodeid", value=_text(case.nodeid))
    if case.fingerprint:
        ET.SubElement(props, "property", name="fingerprint", value=_text(case.fingerprint))
    if case.baseline_cause:
        ET.SubElement(props, "property", name="baseline_cause",
                      value=_text(case.baseline_cause))
    message = _text(f"{case.outcome}: {summary_line(case.reason, 300)}".rstrip(": "))
    tag = ("failure" if case.outcome in FAILURE else "error" if case.outcome in ERROR
           else "skipped" if case.outcome in SKIPPED else None)
    if tag is not None:
        child = ET.SubElement(element, tag, message=message, type=case.outcome)
        if tag != "skipped":
            child.text = _text(_body(case))


def render_junit(report: LoadedReport) -> str:
    counts = Counter(c.outcome for c in report.cases.values())
    totals = {"tests": str(len(report.cases)),
              "failures": str(sum(counts[o] for o in FAILURE)),
              "errors": str(sum(counts[o] for o in ERROR)),
              "skipped": str(sum(counts[o] for o in SKIPPED))}
    root = ET.Element("testsuites", {"name": "capconf", **totals})
    suite = ET.SubElement(root, "testsuite", {"name": _text(f"capconf: {report.label}"),
                                              **totals})
    props = ET.SubElement(suite, "properties")
    for key in ("impl", "suite_version", "spec_version"):
        value = report.header.get(key)
        if isinstance(value, str):
            ET.SubElement(props, "property", name=key, value=_text(value))
    # each requirement's status, as every other output states it (standing.py)
    for rid, found in report.requirement_standings().items():
        ET.SubElement(props, "property", name=f"requirement {_text(rid)}",
                      value=_text(found.text))
    for cid in sorted(report.cases):
        _testcase(suite, report.cases[cid])
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def write_junit(path: str, jsonl: str) -> None:
    """The hook the run calls where it writes its JSON Lines report."""
    Path(path).write_text(render_junit(parse_report(jsonl, path)), encoding="utf-8")
