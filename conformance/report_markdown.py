"""The Markdown matrix for a CI step summary (``$GITHUB_STEP_SUMMARY`` is just a file):
the same model as the HTML page, cut to what a job page shows well: implementations,
the per-area summary, the requirements that are not compliant everywhere, and the
failing cases with their reason."""

from __future__ import annotations

from capconf.conformance.report_file import LoadedReport, summary_line
from capconf.conformance.report_matrix import SUMMARY_ORDER, Matrix, build_matrix
from capconf.conformance.safe_text import md_code, md_inline, md_text

MAX_FAILING_LINES = 200  # a step summary is limited in size; the HTML has them all


def _cell(text: object) -> str:
    """A report file's text in a table cell: inert Markdown on one line (safe_text)."""
    return md_text(text)


def _summary_text(counts: dict[str, int], total: int) -> str:
    rest = ", ".join(f"{counts[s]} {s}" for s in SUMMARY_ORDER
                     if s != "compliant" and counts.get(s))
    ok = f"{counts.get('compliant', 0)} of {total} requirements compliant"
    return f"{ok}; {rest}" if rest else ok


def render_markdown(reports: list[LoadedReport]) -> str:
    matrix = build_matrix(reports)
    out = ["# capconf conformance report", ""]
    out += ["| implementation | `--impl` | suite / spec | cases |", "|---|---|---|---|"]
    for report, name in zip(matrix.reports, matrix.labels, strict=True):
        h = report.header
        out.append(f"| {_cell(name)} | {md_code(str(h.get('impl', '')), in_table=True)} | "
                   f"{_cell(h.get('suite_version', '?'))} / "
                   f"{_cell(h.get('spec_version', '?'))} | "
                   f"{len(report.cases)} |")
    out += ["", "## Summary by area", "", _header(matrix, "area", "SPEC")]
    for block in matrix.areas:
        cells = " | ".join(_summary_text(block.summary(i), len(block.rows))
                           for i in range(len(matrix.labels)))
        section = f"§{block.area.section}" if block.area.section else ""
        out.append(f"| {_cell(block.area.title)} | {section} | {cells} |")
    total = sum(len(b.rows) for b in matrix.areas)
    out.append("| **all** | | " + " | ".join(_summary_text(matrix.totals(i), total)
                                         for i in range(len(matrix.labels))) + " |")
    out += _not_everywhere_compliant(matrix)
    out += _failing(matrix)
    return "\n".join(out) + "\n"


def _header(matrix: Matrix, *first: str) -> str:
    names = [*first, *(_cell(n) for n in matrix.labels)]
    return "| " + " | ".join(names) + " |\n" + "|---" * len(names) + "|"


def _not_everywhere_compliant(matrix: Matrix) -> list[str]:
    rows = [(block, row) for block in matrix.areas for row in block.rows
            if any(c.status != "compliant" for c in row.cells)]
    if not rows:
        return ["", "Every requirement is compliant in every report."]
    out = ["", "## Requirements not compliant everywhere", "",
           _header(matrix, "requirement", "area")]
    for block, row in rows:
        cells = " | ".join(f"**{_cell(c.text)}**" if c.status == "non-compliant"
                           else _cell(c.text or c.status) for c in row.cells)
        out.append(f"| {_cell(row.rid)} {_cell(row.title)} | {_cell(block.area.title)} | {cells} |")
    return out


def _failing(matrix: Matrix) -> list[str]:
    lines = []
    for report, name in zip(matrix.reports, matrix.labels, strict=True):
        bad = [c for _, c in sorted(report.cases.items()) if c.failing]
        if bad:
            lines += ["", f"## Failing cases: {_cell(name)}", ""]
            for c in bad[:MAX_FAILING_LINES]:
                lines.append(f"- {md_code(c.case)} ({_cell(', '.join(c.requirements))}; "
                             f"{_cell(c.level)}): **{_cell(c.outcome)}** "
                             f"{md_inline(summary_line(c.reason, 300))}")
            if len(bad) > MAX_FAILING_LINES:
                lines.append(f"- \u2026 and {len(bad) - MAX_FAILING_LINES} more "
                             "(the HTML report lists them all)")
    return lines
