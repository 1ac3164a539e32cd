"""The compatibility page: every adapter's committed run and the reference's, requirement
by requirement × runtime (`make_report.py --compat adapters --out COMPATIBILITY.md
--html FILE`).

Why: someone choosing or fixing a runtime asks "which runtime honours which rule, and if
not, why"; each adapter's REPORT.md answers it for one runtime. This page puts them side
by side: the top findings across runtimes first (worst, widest first), then one row per
requirement with each runtime's status and links to the findings that explain it. Built
from committed files only, so it is deterministic and `--check` can tell it is stale.
The Markdown and the HTML are two renderings of one ``Page``; all text from runs and
findings files is neutralised for where it goes (``capconf.conformance.safe_text``).

An adapter gap (kind ``gap``) is not a finding about the runtime: a cell whose failing
cases are all gaps reads *not judged (adapter)*, a cell mixing both says how many of its
cases are not judged, and the top findings never list a gap.
"""

from __future__ import annotations

import html
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import findings
from report_adapter import NOT_JUDGED, Reach, judge, reaches, read_entries
from runs import Case, Run, read_report

from capconf.conformance import standing
from capconf.conformance.areas import AREAS
from capconf.conformance.requirements import requirements
from capconf.conformance.safe_text import escape_controls
from capconf.conformance.safe_text import md_text as md

TOP = 12  # findings shown in "top findings"
SHORT = {standing.COMPLIANT: "pass", standing.EXPECTED_FAILURE: "fails",
         standing.NON_COMPLIANT: "FAILS (unexpected)", standing.PARTLY_TESTED: "partly",
         standing.NOT_IMPLEMENTED: "n/a", standing.SKIPPED: "skipped",
         standing.NOT_RUN: "not run", NOT_JUDGED: "not judged (adapter)"}


@dataclass(frozen=True)
class Cell:
    status: str  # a standing status, or NOT_JUDGED
    text: str  # the status with its counts
    findings: tuple[str, ...]  # finding ids whose cases cite this requirement
    gaps: tuple[str, ...] = ()  # adapter gap ids whose cases cite it
    gap_cases: int = 0  # its expected failures that are adapter gaps (not judged)


@dataclass(frozen=True)
class Column:
    key: str  # folder name, or "reference"
    title: str  # implementation name and version
    cells: dict[str, Cell]
    reached: tuple[Reach, ...]  # runtime findings with cases, worst first
    gaps: tuple[Reach, ...] = ()  # adapter gaps with cases (never findings)


@dataclass(frozen=True)
class Page:
    columns: tuple[Column, ...]
    requirements: tuple[tuple[str, str, str], ...]  # (id, group, title) in SPEC order


def _title(run: Run, fallback: str) -> str:
    impl = run.header.get("implementation")
    if not isinstance(impl, dict):
        return fallback
    return f"{impl.get('name', fallback)} {impl.get('version', '')}".strip()


def column(key: str, run: Run, adapter: Path | None) -> Column:
    entries = read_entries(adapter / "expected-failures.txt") if adapter else ()
    known = findings.read(adapter) if adapter else {}
    explained = reaches(run, entries, known)
    case_finding: dict[str, str] = {}
    case_gap: dict[str, str] = {}
    for reach in explained.findings:
        for cid in reach.cases:
            case_finding[cid] = reach.finding.id
    for reach in explained.gaps:
        for cid in reach.cases:
            case_gap[cid] = reach.finding.id
    by_req: dict[str, list[Case]] = defaultdict(list)
    req_findings: dict[str, set[str]] = defaultdict(set)
    req_gaps: dict[str, set[str]] = defaultdict(set)
    for case in run.cases:
        for rid in case.requirements:
            by_req[rid].append(case)
            if case.case in case_finding:
                req_findings[rid].add(case_finding[case.case])
            if case.case in case_gap:
                req_gaps[rid].add(case_gap[case.case])
    cells = {}
    for rid, seen in by_req.items():
        v = judge(rid, seen, explained.gap_cases)
        cells[rid] = Cell(v.status, v.text, tuple(sorted(req_findings[rid])),
                          tuple(sorted(req_gaps[rid])), v.gaps)
    return Column(key, _title(run, key), cells,
                  tuple(r for r in explained.findings if r.cases),
                  tuple(r for r in explained.gaps if r.cases))


def build(root: Path, reference: Path | None = None) -> Page:
    """The page from ``root`` (the adapters/ folder): the reference's run first, then
    each adapter folder that has a committed run."""
    columns = []
    ref = reference or root / "reference-run.jsonl"
    if ref.is_file():
        columns.append(column("reference", read_report(ref), None))
    for folder in sorted(p for p in root.iterdir() if p.is_dir()
                         and not p.name.startswith((".", "_"))):
        run = folder / f"{folder.name}-run.jsonl"
        if run.is_file():
            columns.append(column(folder.name, read_report(run), folder))
    order = {a.group: i for i, a in enumerate(AREAS)}
    table = requirements()
    reqs = sorted(table.values(), key=lambda r: (order.get(r.group, 99), r.id))
    return Page(tuple(columns), tuple((r.id, r.group, r.title) for r in reqs))


def top_findings(page: Page) -> list[tuple[Column, Reach]]:
    """Every reached runtime finding of every runtime, worst and widest first (an
    adapter gap is no finding: it is never listed)."""
    rows = [(col, reach) for col in page.columns for reach in col.reached
            if not reach.finding.is_gap]
    rows.sort(key=lambda cr: ({"high": 0, "medium": 1, "low": 2}.get(
        cr[1].finding.severity, 3), cr[1].finding.kind, -len(cr[1].requirements),
        -cr[1].ran, cr[0].key, cr[1].finding.id))
    return rows[:TOP]


# --- Markdown ---------------------------------------------------------------------------

def _md_link(col: Column, fid: str) -> str:
    return f"[{fid}]({col.key}/REPORT.md#finding-{fid})"


def _md_gap_link(col: Column, gid: str) -> str:
    return f"[{gid}]({col.key}/REPORT.md#gap-{gid})"


def _n(count: int) -> str:
    return f"{count} case{'' if count == 1 else 's'}"


def _md_cell(col: Column, cell: Cell) -> str:
    """``fails: [finding]``; ``not judged (adapter): [gap]``; a mix: ``fails:
    [finding] (+ 2 cases not judged: [gap])``."""
    short = SHORT.get(cell.status, cell.status)
    links = ", ".join(_md_link(col, f) for f in cell.findings)
    gaps = ", ".join(_md_gap_link(col, g) for g in cell.gaps)
    if cell.status == NOT_JUDGED:
        return f"{short}: {gaps}" if gaps else short
    text = short + (f": {links}" if links else "")
    if cell.gap_cases:
        text += f" (+ {_n(cell.gap_cases)} not judged: {gaps})"
    return text


def markdown(page: Page) -> str:
    runtimes = [c for c in page.columns if c.key != "reference"]
    out = ["# Compatibility: capconf's rules × real runtimes", "",
           "Generated by `python adapters/make_report.py --compat adapters --out "
           "adapters/COMPATIBILITY.md` from each adapter's committed run "
           "(`adapters/<runtime>/<runtime>-run.jsonl`) and the reference's "
           "(`adapters/reference-run.jsonl`); do not edit by hand.", "",
           "| runtime | adapter | runtime findings reached | adapter gaps (cases not "
           "judged) |", "|---|---|---|---|"]
    out += [f"| {md(c.title)} | " + (f"[{c.key}]({c.key}/REPORT.md)" if c.key != "reference"
                                      else "reference simulator")
            + f" | {len(c.reached)} | {len(c.gaps)} ({sum(g.ran for g in c.gaps)}) |"
            for c in page.columns]
    out += ["", "## Top findings across runtimes", "",
            "Runtime findings only (kind a: a bug; kind b: a different design); adapter "
            "gaps are not findings and are never listed here.", "",
            "| # | runtime | finding | kind | severity | requirements | cases |",
            "|---|---|---|---|---|---|---|"]
    for n, (col, reach) in enumerate(top_findings(page), 1):
        f = reach.finding
        out.append(f"| {n} | {md(col.title)} | [{md(f.title)}]({col.key}/REPORT.md#finding-"
                   f"{f.id}) | {md(f.kind)} | {md(f.severity)} | "
                   f"{', '.join(reach.requirements)} | {reach.ran} |")
    out += ["", "## Requirement by requirement", "",
            "Each cell: the runtime's status for the requirement (pass = every case ran "
            "and passed; fails = fails as its reviewed baseline says; partly = not every "
            "case ran; n/a = its group is not declared; not judged (adapter) = every case "
            "that fails here fails because the adapter cannot yet translate or observe a "
            "mechanism the runtime has, so capconf did not judge the runtime) and the "
            "findings that explain it. A fails cell that also has adapter gaps says how "
            "many of its cases are not judged and links the gaps.", ""]
    head = "| requirement | " + " | ".join(md(c.key) for c in page.columns) + " |"
    out += [head, "|---|" + "---|" * len(page.columns)]
    for rid, _group, title in page.requirements:
        cells = []
        for col in page.columns:
            cell = col.cells.get(rid)
            if cell is None:
                cells.append("-")
                continue
            cells.append(_md_cell(col, cell))
        out.append(f"| [{rid}](../SPEC.md#{rid}) {md(title)} | " + " | ".join(cells) + " |")
    if not runtimes:
        out += ["", "No adapter has a committed run yet."]
    return "\n".join(out) + "\n"


# --- HTML -------------------------------------------------------------------------------

_CSS = """body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:3px 6px;
vertical-align:top}th{background:#f3f3f3;position:sticky;top:0}
td.pass{background:#e6f4e6}td.fails{background:#fde8e8}td.unexpected{background:#f8b4b4}
td.partly{background:#fff6d5}td.na{background:#f4f4f4;color:#777}
td.notjudged{background:#e8eef8;color:#445}
a{color:#0645ad}.f{font-size:12px}h2{margin-top:1.5em}dd{margin-bottom:.6em}"""
_CLASS = {standing.COMPLIANT: "pass", standing.EXPECTED_FAILURE: "fails",
          standing.NON_COMPLIANT: "unexpected", standing.PARTLY_TESTED: "partly",
          NOT_JUDGED: "notjudged"}


def esc(text: str) -> str:
    """Text for HTML element content or a quoted attribute: controls and bidi overrides
    as visible escapes (safe_text), then HTML's own escapes."""
    return html.escape(escape_controls(text), quote=True)


def _anchor(col: Column, fid: str) -> str:
    return esc(f"f-{col.key}-{fid}")


def _gap_anchor(col: Column, gid: str) -> str:
    return esc(f"g-{col.key}-{gid}")


def html_page(page: Page) -> str:
    """A self-contained page (inline CSS, no script, no external resource); every text
    escaped, every link an in-page anchor or a relative path built from checked ids."""
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>capconf compatibility</title>", f"<style>{_CSS}</style></head><body>",
           "<h1>Compatibility: capconf's rules &times; real runtimes</h1>",
           "<p>Generated from each adapter's committed run and the reference's; "
           "regenerate with <code>python adapters/make_report.py --compat adapters</code>."
           "</p>", "<h2>Top findings across runtimes</h2>",
           "<p>Runtime findings only; adapter gaps are not findings and are never listed "
           "here.</p>", "<table><tr><th>#</th>"
           "<th>runtime</th><th>finding</th><th>kind</th><th>severity</th>"
           "<th>requirements</th><th>cases</th></tr>"]
    for n, (col, reach) in enumerate(top_findings(page), 1):
        f = reach.finding
        out.append(f"<tr><td>{n}</td><td>{esc(col.title)}</td><td><a href=\"#"
                   f"{_anchor(col, f.id)}\">{esc(f.title)}</a></td><td>{esc(f.kind)}</td>"
                   f"<td>{esc(f.severity)}</td><td>{esc(', '.join(reach.requirements))}</td>"
                   f"<td>{reach.ran}</td></tr>")
    out += ["</table>", "<h2>Requirement by requirement</h2>",
            "<p>pass = every case ran and passed; fails = fails as the reviewed baseline "
            "says; partly = not every case ran; n/a = its group is not declared; not "
            "judged (adapter) = every case that fails here fails because the adapter cannot "
            "yet translate or observe a mechanism the runtime has, so capconf did not judge "
            "the runtime. A fails cell with adapter gaps says how many of its cases are not "
            "judged.</p>", "<table><tr><th>requirement"
            "</th>" + "".join(f"<th>{esc(c.title)}</th>" for c in page.columns) + "</tr>"]
    for rid, _group, title in page.requirements:
        row = [f"<tr><td><b>{esc(rid)}</b> {esc(title)}</td>"]
        for col in page.columns:
            cell = col.cells.get(rid)
            if cell is None:
                row.append('<td class="na">-</td>')
                continue
            links = [f'<a class="f" href="#{_anchor(col, f)}">{esc(f)}</a>'
                     for f in cell.findings]
            gaps = [f'<a class="f" href="#{_gap_anchor(col, g)}">{esc(g)}</a>'
                    for g in cell.gaps]
            if cell.gap_cases and cell.status != NOT_JUDGED:
                gaps.insert(0, f'<span class="f">+ {esc(_n(cell.gap_cases))} not judged:'
                               "</span>")
            parts = links + gaps
            row.append(f'<td class="{_CLASS.get(cell.status, "na")}" title="{esc(cell.text)}">'
                       f"{esc(SHORT.get(cell.status, cell.status))}"
                       + (f"<br>{'<br>'.join(parts)}" if parts else "") + "</td>")
        out.append("".join(row) + "</tr>")
    out.append("</table>")
    for col in page.columns:
        if not col.reached:
            continue
        out.append(f"<h2>Findings: {esc(col.title)}</h2><dl>")
        for reach in col.reached:
            f = reach.finding
            issue = (f'<a href="{esc(f.issue)}">{esc(f.issue)}</a>'
                     if findings.ISSUE_URL.match(f.issue) else esc(f.issue))
            out.append(f'<dt id="{_anchor(col, f.id)}"><b>{esc(f.title)}</b> '
                       f"(kind {esc(f.kind)}, {esc(f.severity)}; issue: {issue})</dt>"
                       f"<dd>Rule: {esc(f.rule)}<br>Expected: {esc(f.expected)}<br>"
                       f"Actual: {esc(f.actual)}<br>Cases: {reach.ran} "
                       f"({esc(', '.join(reach.requirements))})</dd>")
        out.append("</dl>")
    for col in page.columns:
        if not col.gaps:
            continue
        out.append(f"<h2>Not judged: adapter gaps of {esc(col.title)}</h2><dl>")
        for reach in col.gaps:
            g = reach.finding
            out.append(f'<dt id="{_gap_anchor(col, g.id)}"><b>{esc(g.title)}</b> '
                       "(adapter gap: the runtime not judged)</dt>"
                       f"<dd>Rule not judged: {esc(g.rule)}<br>What the adapter lacks: "
                       f"{esc(g.missing)}<br>What would close it: {esc(g.plan)}<br>"
                       f"Cases: {reach.ran} ({esc(', '.join(reach.requirements))})</dd>")
        out.append("</dl>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"
