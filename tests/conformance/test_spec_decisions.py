"""SPEC.md's decided points live in the requirement they decide and cite real cases.

Where the sources leave a point open, SPEC.md decides it in a "Decided points" table at
the end of the requirement the point belongs to: the point, the rule, and the case that
holds a runtime to it (or *free*: the implementation chooses and no case depends on it).
A point the requirement's own text already states is not repeated there. A cited case
that does not exist would make a rule look checked when nothing checks it, and a table
outside a requirement would be a rule no reader of that requirement finds.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")
LEDGER = (REPO / "conformance" / "case_ids.txt").read_text(encoding="utf-8")
CASES = {ln.split("#")[0].strip() for ln in LEDGER.splitlines() if ln.split("#")[0].strip()}

LABEL = "**Decided points.**"
HEADER = "| point | rule | case |"
# Every point decided so far that the requirement's prose does not already state (a
# rewrite may move a point, never drop one silently: a point merged into the prose lowers
# this number in the same commit).
DECIDED_POINTS = 89


def _cells(line: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def _tables() -> list[tuple[str, list[list[str]]]]:
    """(requirement the table sits in, its rows) for every decided-points table."""
    tables: list[tuple[str, list[list[str]]]] = []
    owner = ""
    lines = SPEC.splitlines()
    fenced = False
    for i, line in enumerate(lines):
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"(#{2,4}) (?:([A-Z]+-\d{2}) — )?", line)
        if heading:
            if heading.group(2):
                owner = heading.group(2)
            elif len(heading.group(1)) <= 3:
                owner = ""
        if line == LABEL:
            assert lines[i + 2] == HEADER, f"line {i + 3}: {lines[i + 2]!r}"
            rows = []
            for row in lines[i + 4:]:
                if not row.startswith("|"):
                    break
                rows.append(_cells(row))
            tables.append((owner, rows))
    return tables


def test_decided_points_sit_inside_a_requirement() -> None:
    tables = _tables()
    assert tables
    assert [owner for owner, _ in tables if not owner] == []
    assert len({owner for owner, _ in tables}) == len(tables), "one table per requirement"


def test_no_decided_point_is_lost() -> None:
    rows = [row for _, table in _tables() for row in table]
    assert all(len(row) == 3 and all(row) for row in rows), rows
    assert len(rows) == DECIDED_POINTS


def test_every_cited_case_exists() -> None:
    missing = []
    cells = [row[2] for _, table in _tables() for row in table]
    for cell in cells:
        for cited in re.findall(r"`([a-z0-9][a-z0-9.\-\[\]*]+)`", cell):
            if "[" in cited:  # `case[*]`: any parameter of the case
                found = any(c.startswith(cited.split("[")[0] + "[") for c in CASES)
            else:
                found = bool(fnmatch.filter(CASES, cited))
            if not found:
                missing.append(cited)
    assert missing == []
    assert all(cell.startswith("free") or "`" in cell or "cases" in cell
               for cell in cells), "a case, or free"
    assert any(cell != "free" for cell in cells)
