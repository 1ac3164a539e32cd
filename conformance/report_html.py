"""The HTML report: one self-contained page from one or several run reports.

It opens from disk and fetches nothing: no script, font, style sheet or image from
anywhere (a Content-Security-Policy of ``default-src 'none'`` says so to the browser
too), so it can be attached to a CI run or mailed. Real table semantics (captions,
``scope``d headers, one ``tbody`` per area) and plain links make it readable with the
keyboard and a screen reader; a status is always a word, never a colour only; light and
dark follow ``prefers-color-scheme``; ``@media print`` keeps headers and drops the
navigation. A pure function of the reports: the same reports give the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from html import escape as _html_escape
from typing import Any

from capconf.conformance import outcomes
from capconf.conformance.report_file import CaseResult, LoadedReport, summary_line
from capconf.conformance.report_matrix import (
    NOT_RUN,
    SUMMARY_ORDER,
    AreaBlock,
    Cell,
    Matrix,
    Row,
    build_matrix,
)

MAX_VALUE_CHARS = 6000  # one expected/got/exchange value; a cut says how much it dropped

_ICONS = {"compliant": "\u2713", "non-compliant": "\u2717", "not implemented": "\u2013",
          "expected failure": "!", "skipped": "\u25cb", NOT_RUN: "\u00b7",
          "untested": "?", "planned": "\u00b7", "partly tested": "\u25d0"}
_OUTCOME_CLASS = {outcomes.PASSED: "compliant", outcomes.EXPECTED_FAILURE: "expected-failure",
                  outcomes.NOT_IMPLEMENTED: "not-implemented", outcomes.SKIPPED: "skipped"}

CSS = """
:root { color-scheme: light dark; --bg: #fff; --fg: #1b1b1b; --muted: #595959;
  --line: #c8c8c8; --head: #f2f2f2; --focus: #1a56db; --link: #1a4fb5;
  --ok-bg: #e3f3e6; --ok-fg: #0b5a1e; --bad-bg: #fbe3e5; --bad-fg: #8f0d1f;
  --ni-bg: #ececec; --ni-fg: #3d3d3d; --xf-bg: #fff1cc; --xf-fg: #6b4500;
  --skip-bg: #eef0f7; --skip-fg: #33415c; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #161719; --fg: #e8e8e8; --muted: #b0b0b0; --line: #4a4a4a;
    --head: #24262a; --focus: #8ab4ff; --link: #9cc0ff;
    --ok-bg: #113d1f; --ok-fg: #b9f0c6; --bad-bg: #4d1219; --bad-fg: #ffc9cf;
    --ni-bg: #2e2e2e; --ni-fg: #d6d6d6; --xf-bg: #463508; --xf-fg: #ffe3a3;
    --skip-bg: #232a3b; --skip-fg: #cdd6ee; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1rem 1.5rem 3rem; background: var(--bg);
  color: var(--fg); font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; }
a { color: var(--link); }
a:focus-visible, summary:focus-visible { outline: 3px solid var(--focus);
  outline-offset: 2px; }
:target { outline: 3px solid var(--focus); outline-offset: -3px; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 2; }
h1 { font-size: 1.6rem; margin: .5rem 0; } h2 { margin-top: 2rem; }
p.note { color: var(--muted); margin: .25rem 0; }
table { border-collapse: collapse; margin: .5rem 0 1rem; }
caption { text-align: left; font-weight: 600; padding: .25rem 0; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left;
  vertical-align: top; }
thead th { background: var(--head); position: sticky; top: 0; z-index: 1; }
th.area { background: var(--head); font-size: 1.05rem; }
th[scope=row] { font-weight: normal; }
.rid, code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
.rid { font-weight: 600; }
.st { white-space: nowrap; }
.st a { color: inherit; }
.compliant { background: var(--ok-bg); color: var(--ok-fg); }
.non-compliant, .failing { background: var(--bad-bg); color: var(--bad-fg); font-weight: 600; }
.not-implemented, .not-run, .untested, .partly-tested { background: var(--ni-bg);
  color: var(--ni-fg); }
.expected-failure { background: var(--xf-bg); color: var(--xf-fg); }
.skipped { background: var(--skip-bg); color: var(--skip-fg); }
.n { color: inherit; opacity: .8; font-weight: normal; }
pre { white-space: pre-wrap; word-break: break-word; margin: .25rem 0; padding: .4rem;
  background: var(--head); border: 1px solid var(--line); max-height: 30rem; overflow: auto; }
dl.why { margin: .25rem 0; } dl.why dt { font-weight: 600; } dl.why dd { margin: 0 0 .4rem 0; }
section.req { margin: 1rem 0 1.5rem; }
[id] { scroll-margin-top: .75rem; }
ul.verdicts { list-style: none; padding: 0; margin: .5rem 0 1rem; font-size: 1.05rem; }
ul.verdicts li { margin: .3rem 0; } ul.verdicts .st { padding: .1rem .4rem; }
@media print {
  body { max-width: none; padding: 0; font-size: 10pt; background: #fff; color: #000; }
  .skip, nav, .back { display: none; }
  thead { display: table-header-group; } thead th { position: static; }
  tr, section.req { break-inside: avoid; }
  a { color: inherit; text-decoration: none; }
  * { print-color-adjust: exact; -webkit-print-color-adjust: exact; }
  pre { max-height: none; overflow: visible; } }
"""


# C0 controls other than tab and newlines are not allowed in HTML text; an
# implementation's stderr tail may carry them
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def escape(text: str) -> str:
    return _html_escape(_CONTROL.sub("\ufffd", text))


def anchor(prefix: str, text: str) -> str:
    """A fragment id for any case ID or requirement ID: readable, unique (a short digest
    of the full text), and safe in a URL without escaping."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80]
    digest = hashlib.sha1(text.encode("utf-8")).hexdigest()[:6]
    return f"{prefix}-{slug}-{digest}"


def _status_class(status: str) -> str:
    return status.replace(" ", "-")


def _json(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(
        value, indent=2, ensure_ascii=False, sort_keys=True)
    if len(text) > MAX_VALUE_CHARS:
        text = (text[:MAX_VALUE_CHARS]
                + f"\n\u2026 ({len(text) - MAX_VALUE_CHARS} more characters cut)")
    return text


def _pre(value: Any) -> str:
    return f"<pre>{escape(_json(value))}</pre>"


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join(f"{counts[s]} {s}" for s in SUMMARY_ORDER if counts.get(s))


# -- the page -------------------------------------------------------------------------

def render_html(reports: list[LoadedReport]) -> str:
    matrix = build_matrix(reports)
    title = "capconf conformance report"
    parts = ["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             '<meta http-equiv="Content-Security-Policy" '
             "content=\"default-src 'none'; style-src 'unsafe-inline'\">",
             f"<title>{escape(title)}: {escape(', '.join(matrix.labels))}</title>",
             f"<style>{CSS}</style>", "</head>", "<body>",
             '<a class="skip" href="#matrix">Skip to the requirement matrix</a>',
             "<header>", f"<h1>{escape(title)}</h1>", _verdicts(matrix), "</header>",
             "<main>", _nav(matrix), _summary(matrix), _matrix_table(matrix),
             _implementations(matrix), _details(matrix), "</main>", "</body>", "</html>"]
    return "\n".join(parts) + "\n"


def _verdicts(matrix: Matrix) -> str:
    """The first thing a reader sees: one line per implementation."""
    items = []
    total = sum(len(b.rows) for b in matrix.areas)
    for i, name in enumerate(matrix.labels):
        counts = matrix.totals(i)
        worst = next((s for s in SUMMARY_ORDER if counts.get(s)), "compliant")
        icon = _ICONS.get(worst, "")
        bad = counts.get("non-compliant", 0)
        verdict = (f"{bad} of {total} requirements non-compliant" if bad else
                   f"{counts.get('compliant', 0)} of {total} requirements compliant")
        rest = {s: n for s, n in counts.items() if s not in ("compliant", "non-compliant")}
        more = f" ({escape(_counts_text(rest))})" if rest else ""
        items.append(f'<li><span class="st {_status_class(worst)}"><span aria-hidden="true">'
                     f"{icon}</span> {escape(verdict)}</span>{more}: "
                     f'<a href="#impl-{i}">{escape(name)}</a></li>')
    versions = sorted({r.suite_version or "unknown" for r in matrix.reports})
    note = ("" if len(versions) == 1 else
            f'<p class="note">These reports come from different suite versions '
            f"({escape(', '.join(versions))}): a requirement a report has no case for "
            "is shown as <em>not run</em>.</p>")
    return f'<ul class="verdicts">{"".join(items)}</ul>{note}'


def _implementations(matrix: Matrix) -> str:
    rows = []
    for i, (report, name) in enumerate(zip(matrix.reports, matrix.labels, strict=True)):
        h = report.header
        features = h.get("features")
        feats = ", ".join(map(str, features)) if isinstance(features, list) else "\u2014"
        counts: dict[str, int] = {}
        for c in report.cases.values():
            counts[c.outcome] = counts.get(c.outcome, 0) + 1
        cases = ", ".join(f"{counts[o]} {o}" for o in outcomes.ALL if counts.get(o))
        rows.append(
            f'<tr><th scope="row"><a href="#impl-{i}">{escape(name)}</a></th>'
            f"<td><code>{escape(str(h.get('impl', '')))}</code></td>"
            f"<td>{escape(str(h.get('suite_version', '?')))} / "
            f"{escape(str(h.get('spec_version', '?')))}</td>"
            f"<td>{escape(feats)}</td><td>{len(report.cases)}: {escape(cases)}</td>"
            f"<td><code>{escape(report.path)}</code></td></tr>")
    return ('<section aria-labelledby="impls"><h2 id="impls">Implementations</h2>'
            "<table><caption>The reports shown as columns</caption><thead><tr>"
            '<th scope="col">Implementation</th><th scope="col">Run with <code>--impl</code>'
            '</th><th scope="col">Suite / spec version</th><th scope="col">Declared features'
            '</th><th scope="col">Cases</th><th scope="col">Report file</th></tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></section>")


def _nav(matrix: Matrix) -> str:
    links = ['<li><a href="#summary">Summary by area</a></li>',
             '<li><a href="#matrix">Requirements</a></li>',
             '<li><a href="#impls">Implementations</a></li>']
    links += [f'<li><a href="#impl-{i}">Cases of {escape(name)}</a></li>'
              for i, name in enumerate(matrix.labels)]
    return f'<nav aria-label="Contents"><ul>{"".join(links)}</ul></nav>'


def _summary_cell(counts: dict[str, int], total: int) -> str:
    worst = next((s for s in SUMMARY_ORDER if counts.get(s)), "compliant")
    ok = counts.get("compliant", 0)
    rest = {s: n for s, n in counts.items() if s != "compliant"}
    detail = f"; {escape(_counts_text(rest))}" if rest else ""
    return (f'<td class="{_status_class(worst)}"><span aria-hidden="true">'
            f"{_ICONS.get(worst, '')}</span> {ok} of {total} compliant{detail}</td>")


def _summary(matrix: Matrix) -> str:
    head = "".join(f'<th scope="col">{escape(n)}</th>' for n in matrix.labels)
    body = []
    for block in matrix.areas:
        cells = "".join(_summary_cell(block.summary(i), len(block.rows))
                        for i in range(len(matrix.labels)))
        section = f"\u00a7{block.area.section}" if block.area.section else "\u2014"
        body.append(f'<tr><th scope="row"><a href="#area-{block.area.group}">'
                    f"{escape(block.area.title)}</a></th><td>{section}</td>{cells}</tr>")
    total_rows = sum(len(b.rows) for b in matrix.areas)
    foot = "".join(_summary_cell(matrix.totals(i), total_rows)
                   for i in range(len(matrix.labels)))
    return ('<section aria-labelledby="summary"><h2 id="summary">Summary by area</h2>'
            "<table><caption>Requirements of each area by status, per implementation"
            '</caption><thead><tr><th scope="col">Area</th><th scope="col">SPEC</th>'
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody>"
            f'<tfoot><tr><th scope="row">All areas</th><td></td>{foot}</tr></tfoot>'
            "</table></section>")


def _cell(cell: Cell, column: int, row: Row) -> str:
    icon = _ICONS.get(cell.status, "")
    text = f'<span aria-hidden="true">{icon}</span> {escape(cell.status)}'
    if not cell.cases:
        return f'<td class="st {_status_class(cell.status)}">{text}</td>'
    n = cell.text.removeprefix(cell.status).strip().removeprefix("(").removesuffix(")")
    return (f'<td class="st {_status_class(cell.status)}">'
            f'<a href="#{anchor(f"d{column}", row.rid)}">{text}</a> '
            f'<span class="n">({escape(n)})</span></td>')


def _matrix_table(matrix: Matrix) -> str:
    width = 2 + len(matrix.labels)
    head = "".join(f'<th scope="col">{escape(n)}</th>' for n in matrix.labels)
    bodies = []
    for block in matrix.areas:
        section = f"\u00a7{block.area.section} " if block.area.section else ""
        rows = [f'<tr><th scope="rowgroup" colspan="{width}" class="area">'
                f"{section}{escape(block.area.title)}</th></tr>"]
        for row in block.rows:
            cells = "".join(_cell(c, i, row) for i, c in enumerate(row.cells))
            rows.append(f'<tr><th scope="row" id="{anchor("req", row.rid)}">'
                        f'<span class="rid">{escape(row.rid)}</span> {escape(row.title)}</th>'
                        f"<td>{escape(row.level)}</td>{cells}</tr>")
        bodies.append(f'<tbody id="area-{block.area.group}">{"".join(rows)}</tbody>')
    return ('<section aria-labelledby="matrix"><h2 id="matrix">Requirements</h2>'
            '<p class="note">Each cell folds the requirement\'s cases: compliant (all '
            "passed), non-compliant (one failed, errored, crashed, timed out or went stale), "
            "not implemented (its feature group is not declared), expected failure (listed "
            "in the run's baseline). Follow a cell to its cases.</p>"
            "<table><caption>Each requirement's status, per implementation</caption>"
            '<thead><tr><th scope="col">Requirement</th><th scope="col">Level</th>'
            f"{head}</tr></thead>{''.join(bodies)}</table></section>")


# -- the cases, per implementation and requirement ----------------------------------------

def _why(case: CaseResult) -> str:
    """What a failing case wanted and what it got; an old report has only the reason."""
    items = []
    if case.rule:
        items.append(f"<dt>Rule</dt><dd>{escape(case.rule)}</dd>")
    if case.has_detail and (case.expected is not None or case.got is not None):
        items.append(f"<dt>Expected</dt><dd>{_pre(case.expected)}</dd>")
        items.append(f"<dt>Got</dt><dd>{_pre(case.got)}</dd>")
    if case.cause:
        items.append(f"<dt>Cause</dt><dd>{escape(case.cause)}</dd>")
    if case.reason:
        items.append(f"<dt>Reason</dt><dd>{_pre(case.reason)}</dd>")
    if case.exchange:
        steps = [{"request": e.request, "response": e.response} for e in case.exchange]
        items.append(f"<dt>Exchange</dt><dd><details><summary>{len(steps)} "
                     f"request{'s' if len(steps) != 1 else ''} and responses</summary>"
                     f"{_pre(steps)}</details></dd>")
    return f'<dl class="why">{"".join(items)}</dl>' if items else ""


def _case_rows(case: CaseResult, column: int, rid: str) -> str:
    cls = "failing" if case.failing else _OUTCOME_CLASS.get(case.outcome, "skipped")
    summary = summary_line(case.reason) if case.reason else ""
    row = (f'<tr id="{anchor(f"c{column}", f"{rid} {case.case}")}"><th scope="row"><code>'
           f"{escape(case.case)}</code></th><td class=\"st {cls}\">{escape(case.outcome)}</td>"
           f"<td>{escape(case.level)}</td><td>{escape(summary)}</td></tr>")
    if case.failing or case.outcome == outcomes.EXPECTED_FAILURE:
        why = _why(case)
        if why:
            row += f'<tr><td colspan="4">{why}</td></tr>'
    return row


def _requirement_cases(row: Row, column: int, name: str) -> str:
    cell = row.cells[column]
    if not cell.cases:
        return ""
    rows = "".join(_case_rows(c, column, row.rid) for c in cell.cases)
    return (f'<section class="req" id="{anchor(f"d{column}", row.rid)}" '
            f'aria-labelledby="{anchor(f"h{column}", row.rid)}">'
            f'<h4 id="{anchor(f"h{column}", row.rid)}"><span class="rid">{escape(row.rid)}'
            f"</span> {escape(row.title)}: {escape(cell.text or cell.status)}</h4>"
            f"<table><caption>Cases of {escape(row.rid)} for {escape(name)}</caption>"
            '<thead><tr><th scope="col">Case</th><th scope="col">Outcome</th>'
            '<th scope="col">Level</th><th scope="col">Reason</th></tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            f'<p class="back"><a href="#{anchor("req", row.rid)}">Back to {escape(row.rid)} '
            "in the matrix</a></p></section>")


def _area_cases(block: AreaBlock, column: int, name: str) -> str:
    inner = "".join(_requirement_cases(r, column, name) for r in block.rows)
    if not inner:
        return ""
    return f"<h3>{escape(block.area.title)} ({escape(name)})</h3>{inner}"


def _details(matrix: Matrix) -> str:
    out = []
    for i, name in enumerate(matrix.labels):
        inner = "".join(_area_cases(b, i, name) for b in matrix.areas)
        out.append(f'<section id="impl-{i}" aria-labelledby="impl-{i}-h">'
                   f'<h2 id="impl-{i}-h">Cases of {escape(name)}</h2>'
                   f"{inner or '<p>No case lines in this report.</p>'}</section>")
    return "".join(out)
