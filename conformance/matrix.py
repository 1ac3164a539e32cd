"""Requirement -> cases traceability, from the suite's own markers.

The matrix is built by collecting the suite with pytest (no implementation is started),
so it is exactly what a run would execute.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from capconf.conformance.requirements import requirements


@dataclass(frozen=True)
class MatrixRow:
    id: str
    level: str
    group: str
    status: str
    cases: tuple[str, ...]


class _Collector:
    def __init__(self) -> None:
        self.by_req: dict[str, list[str]] = {}

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        from capconf.conformance.plugin import case_id, req_ids

        for item in session.items:
            cid = case_id(item) or item.nodeid
            for rid in req_ids(item):
                self.by_req.setdefault(rid, []).append(cid)


def build_matrix() -> list[MatrixRow]:
    from capconf.conformance.locations import package_file, suite_dir

    collector = _Collector()
    ini = str(package_file() / "pytest.ini")
    code = pytest.main(["-c", ini, "--rootdir", str(suite_dir().parent.parent),
                        "-p", "capconf.conformance.plugin", "--collect-only",
                        "-p", "no:terminal", str(suite_dir())], plugins=[collector])
    if code not in (0, 5):
        raise SystemExit(f"capconf matrix: collecting the suite failed (pytest exit {code})")
    return [MatrixRow(r.id, r.level, r.group, r.status,
                      tuple(sorted(collector.by_req.get(r.id, []))))
            for r in requirements().values()]


def render_matrix(rows: list[MatrixRow]) -> str:
    lines = ["| requirement | level | group | status | cases |", "|---|---|---|---|---|"]
    for row in rows:
        cases: Any = ", ".join(f"`{c}`" for c in row.cases) if row.cases else "**none**"
        lines.append(f"| {row.id} | {row.level} | {row.group} | {row.status} | {cases} |")
    return "\n".join(lines)


# -- the case-ID ledger --------------------------------------------------------------------
# conformance/case_ids.txt lists every case ID ever used, one per line; an ID whose case
# was removed stays, marked `retired`, so it can never be reused for a different check.

from capconf.conformance.ledger import ledger_path, read_ledger  # noqa: E402

__all__ = ["build_matrix", "ledger_path", "read_ledger", "render_matrix", "updated_ledger"]


def collected_case_ids() -> set[str]:
    rows = build_matrix()
    return {c for row in rows for c in row.cases}


def updated_ledger(text: str, collected: set[str]) -> str:
    ids, retired = read_ledger(text)
    header = [ln for ln in text.splitlines() if ln.startswith("#")] or [
        "# Every conformance case ID ever used. Never delete or reuse a line: a removed",
        "# case's ID is marked `retired`. Update with `capconf matrix --update-ledger`."]
    known = set(ids)
    lines = list(header)
    for cid in ids:
        gone = cid not in collected
        lines.append(f"{cid} retired" if (gone or cid in retired) else cid)
    lines += sorted(collected - known)
    return "\n".join(lines) + "\n"
