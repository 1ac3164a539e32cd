"""What the Action (action.yml) prints for GitHub: a run report's failing cases as
workflow annotations (``::error ...``; `capconf run` itself prints plain text), and the
step summary of a `capconf validate --format sarif` log.

A case's reason carries the implementation's answers, so every value is escaped as the
runner's workflow-command parser expects (``%``, CR and LF in the message; ``:`` and
``,`` in a property as well): no answer can end its line and start a command of its
own. GitHub shows at most 10 error annotations per step, so the first ``limit`` cases
are annotated and one more line says how many more there are and where they are.
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capconf.conformance.lint_formats import _gh_data, _gh_property
from capconf.conformance.report_file import CaseResult, ReportFileError, load_report

LIMIT = 10
MAX_MESSAGE = 2000  # characters of one annotation's message, before escaping


def _message(case: CaseResult) -> str:
    rule = case.rule or ", ".join(case.requirements)
    text = f"{case.outcome}: {rule}: {case.reason}" if case.reason else f"{case.outcome}: {rule}"
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + " [cut]"


def render_annotations(cases: Sequence[CaseResult], limit: int = LIMIT,
                       header: dict[str, Any] | None = None) -> str:
    """``::error title=capconf CASE::OUTCOME: RULE: REASON`` per failing case, in report
    order; a ``::notice`` for those past ``limit``. A run that stopped at the handshake
    (no case ran) gets one error with the report header's account of it."""
    lines = []
    stopped = (header or {}).get("handshake_error")
    if isinstance(stopped, str) and stopped:
        lines.append(f"::error title=capconf handshake::"
                     f"{_gh_data(stopped[:MAX_MESSAGE])}")
    failing = [c for c in cases if c.failing]
    lines += [f"::error title={_gh_property(f'capconf {c.case}')}::{_gh_data(_message(c))}"
              for c in failing[:limit]]
    if len(failing) > limit:
        lines.append(f"::notice title=capconf::{len(failing) - limit} more failing case(s) "
                     "are not annotated; the step summary and the reports list every one")
    return "".join(line + "\n" for line in lines)


def _md_code(text: str, limit: int = 120) -> str:
    """Text of the implementation as a Markdown code span in a table cell: no backtick
    can close the span, no control character or pipe can end the cell or the line."""
    clean = "".join(" " if (ord(ch) < 32 or ord(ch) == 127 or ch == "`") else ch
                    for ch in text[:limit]).replace("|", "\\|")
    return f"`{clean}`" if clean.strip() else "`(empty)`"


def sarif_summary(log: dict[str, Any], status: int) -> str:
    """A Markdown step summary of one `capconf validate --format sarif` log: results by
    level and by diagnostic code, and what the exit status means."""
    results = [r for run in log.get("runs", []) for r in run.get("results", [])]
    levels = Counter(str(r.get("level", "warning")) for r in results)
    files = {str(loc.get("physicalLocation", {}).get("artifactLocation", {}).get("uri"))
             for r in results for loc in r.get("locations", [])[:1]}
    meaning = {0: "passed", 1: "failed: warnings, under --strict", 2: "failed: errors"}
    out = ["# capconf validate", "",
           f"{len(results)} diagnostic(s) in {len(files)} file(s): {levels['error']} "
           f"error(s), {levels['warning']} warning(s), {levels['note']} note(s). "
           f"Exit status {status} ({meaning.get(status, 'failed: see the job log')}).", ""]
    by_code = Counter((str(r.get("ruleId")), str(r.get("level", "warning"))) for r in results)
    if by_code:
        out += ["| code | level | results |", "|---|---|---|"]
        out += [f"| {_md_code(code)} | {level} | {n} |"
                for (code, level), n in sorted(by_code.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(out) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m capconf.conformance.github_annotations REPORT.jsonl``: annotations of
    a run report. ``... --sarif-summary LOG.sarif STATUS``: the Markdown summary of a
    validate run. Exit 2 when the file cannot be read (the message names it), else 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) == 3 and args[0] == "--sarif-summary" and args[2].isdigit():
        try:
            log = json.loads(Path(args[1]).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            print(f"capconf: {args[1]}: not a SARIF log: {exc}", file=sys.stderr)
            return 2
        sys.stdout.write(sarif_summary(log if isinstance(log, dict) else {}, int(args[2])))
        return 0
    if len(args) != 1:
        print("usage: python -m capconf.conformance.github_annotations REPORT.jsonl\n"
              "       python -m capconf.conformance.github_annotations --sarif-summary "
              "LOG.sarif STATUS", file=sys.stderr)
        return 2
    try:
        report = load_report(args[0])
    except ReportFileError as exc:
        print(f"capconf: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(render_annotations(list(report.cases.values()), header=report.header))
    return 0


if __name__ == "__main__":
    sys.exit(main())
