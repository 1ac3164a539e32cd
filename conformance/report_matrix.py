"""Several run reports side by side: requirements (rows, grouped by area) against
implementations (columns). The one model behind the HTML and Markdown renderings, so
both always say the same thing.

A cell is one requirement's status in one report: the report's own requirement record
(``standing``: the same fold as the terminal summary, counting the suite's cases the run
did not select), or for an older report without those records the same fold over its
case lines; a requirement a report has no line for is "not run".
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from capconf.conformance import standing
from capconf.conformance.areas import AREAS, OTHER, Area, area_of
from capconf.conformance.report_file import CaseResult, LoadedReport
from capconf.conformance.requirements import requirements

NOT_RUN = standing.NOT_RUN
# the order of the per-area summary, worst first
SUMMARY_ORDER = standing.ORDER


@dataclass(frozen=True)
class Cell:
    status: str  # a standing: compliant, partly tested, non-compliant, not implemented, ...
    cases: tuple[CaseResult, ...]
    text: str = ""  # the status with what its numbers count: "partly tested (15 of 46 ...)"

    @property
    def failing(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.failing)


@dataclass(frozen=True)
class Row:
    rid: str
    title: str
    level: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class AreaBlock:
    area: Area
    rows: tuple[Row, ...]

    def summary(self, column: int) -> Counter[str]:
        return Counter(row.cells[column].status for row in self.rows)


@dataclass(frozen=True)
class Matrix:
    reports: tuple[LoadedReport, ...]
    labels: tuple[str, ...]  # one distinct column heading per report
    areas: tuple[AreaBlock, ...]

    def totals(self, column: int) -> Counter[str]:
        total: Counter[str] = Counter()
        for block in self.areas:
            total.update(block.summary(column))
        return total


def column_labels(reports: list[LoadedReport]) -> tuple[str, ...]:
    """Each report's label, made distinct where two would read the same (a broken build
    of a runtime still says its name in `hello`): by its `--impl`, else its file name."""
    plain = [r.label for r in reports]
    seen = Counter(plain)
    impls = Counter(str(r.header.get("impl", "")) for r in reports)
    out = []
    for name, report in zip(plain, reports, strict=True):
        impl = str(report.header.get("impl", ""))
        if seen[name] > 1:
            tag = impl if impl and impls[impl] == 1 else report.path.rsplit("/", 1)[-1]
            name = f"{name} ({tag})"
        out.append(name)
    return tuple(out)


def build_matrix(reports: list[LoadedReport]) -> Matrix:
    table = requirements()
    per_report = [r.by_requirement() for r in reports]
    known = list(table)
    extra = sorted({rid for by in per_report for rid in by} - set(known))
    rows_by_area: dict[str, list[Row]] = {}
    for rid in known + extra:
        req = table.get(rid)
        cells = []
        for report, by in zip(reports, per_report, strict=True):
            cases = tuple(sorted(by.get(rid, []), key=lambda c: c.case))
            found = report.standings.get(rid)
            if found is None and cases:
                found = standing.fold(rid, [c.outcome for c in cases])
            cells.append(Cell(found.status, cases, found.text) if found is not None
                         else Cell(NOT_RUN, cases, f"{NOT_RUN} (no case line in the report)"))
        area = area_of(req.group) if req else OTHER
        rows_by_area.setdefault(area.group, []).append(
            Row(rid, req.title if req else "", req.level if req else "", tuple(cells)))
    blocks = tuple(AreaBlock(a, tuple(rows_by_area[a.group]))
                   for a in (*AREAS, OTHER) if a.group in rows_by_area)
    return Matrix(tuple(reports), column_labels(reports), blocks)
