"""`capconf report` and `capconf diff`: the command-line edge of the report readers and
renderers (the renderers are pure; files are read and written only here).

Exit status: `report` 0, or 2 when a report cannot be read or written; `diff` 1 when a
case regressed, 0 otherwise, 2 when a report cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from capconf.conformance.report_file import LoadedReport, ReportFileError, load_report
from capconf.conformance.safe_text import console, console_value


def _fail(message: str) -> int:
    print(console(f"capconf: {message}"), file=sys.stderr)
    return 2


def _write(path: str, text: str) -> None:
    Path(path).write_text(text, encoding="utf-8")


def cmd_report(ns: argparse.Namespace) -> int:
    from capconf.conformance.junit import render_junit
    from capconf.conformance.report_html import render_html
    from capconf.conformance.report_markdown import render_markdown

    if not (ns.html or ns.markdown or ns.junit_xml):
        return _fail("report: name at least one output: --html FILE, --markdown FILE "
                     "or --junit-xml FILE")
    try:
        reports = [load_report(p) for p in ns.reports]
    except ReportFileError as exc:
        return _fail(str(exc))
    outputs: list[tuple[str, Callable[[list[LoadedReport]], str]]] = []
    if ns.html:
        outputs.append((ns.html, render_html))
    if ns.markdown:
        outputs.append((ns.markdown, render_markdown))
    if ns.junit_xml:
        if len(reports) != 1:
            return _fail("report: --junit-xml takes exactly one report")
        outputs.append((ns.junit_xml, lambda rs: render_junit(rs[0])))
    for path, render in outputs:
        try:
            _write(path, render(reports))
        except OSError as exc:
            return _fail(f"cannot write {path}: {exc.strerror or exc}")
        print(f"wrote {console_value(path)}")
    return 0


def cmd_diff(ns: argparse.Namespace) -> int:
    from capconf.conformance.report_diff import diff_reports, render_diff

    try:
        old, new = load_report(ns.old), load_report(ns.new)
    except ReportFileError as exc:
        return _fail(str(exc))
    diff = diff_reports(old, new)
    sys.stdout.write(render_diff(diff))
    return 1 if diff.regressed else 0


def add_report_parsers(sub: Any) -> None:
    """Register `report` and `diff` on the `capconf` subparsers (handlers: REPORT_HANDLERS)."""
    report = sub.add_parser("report", help="render one or several JSON Lines reports as one "
                            "self-contained HTML page and/or Markdown (columns = reports)")
    report.add_argument("reports", nargs="+", metavar="REPORT.jsonl")
    report.add_argument("--html", help="write the HTML report here")
    report.add_argument("--markdown", help="write a Markdown summary here (e.g. "
                        "$GITHUB_STEP_SUMMARY)")
    report.add_argument("--junit-xml", help="write JUnit XML of one report here")
    diff = sub.add_parser("diff", help="compare two reports: regressed, fixed, added, "
                          "removed by requirement; exit 1 on a regression")
    diff.add_argument("old", metavar="OLD.jsonl")
    diff.add_argument("new", metavar="NEW.jsonl")


REPORT_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "report": cmd_report, "diff": cmd_diff}
