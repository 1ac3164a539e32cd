"""The "Decisions" tables of SPEC.md cite real cases (issue 20, part 1).

Each row of a decisions table with a `g` column (the guesses of an outside implementer)
ends in the case that holds a runtime to the rule, or in "free". A cited case that does
not exist would make a rule look checked when nothing checks it.
"""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")
LEDGER = (REPO / "conformance" / "case_ids.txt").read_text(encoding="utf-8")
CASES = {ln.split("#")[0].strip() for ln in LEDGER.splitlines() if ln.split("#")[0].strip()}


def _rows() -> list[tuple[int, str]]:
    """(guess number, last cell) of every row of a table headed `| g | ... | case |`."""
    rows: list[tuple[int, str]] = []
    in_table = False
    for line in SPEC.splitlines():
        if line.startswith("| g | question | decision | case |"):
            in_table = True
            continue
        if in_table and line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if cells[0].isdigit():
                rows.append((int(cells[0]), cells[-1]))
            continue
        in_table = False
    return rows


def _row_guesses() -> set[int]:
    """The DEF table carries its guesses as `(gN)` in the question column."""
    return {int(n) for n in re.findall(r"\(g(\d+)\)", SPEC)}


def test_every_guess_of_round_three_is_decided_once() -> None:
    numbers = [n for n, _ in _rows()] + sorted(_row_guesses())
    assert sorted(numbers) == list(range(1, 70)), sorted(numbers)


def test_every_cited_case_exists() -> None:
    missing = []
    for number, cell in _rows():
        for cited in re.findall(r"`([a-z0-9][a-z0-9.\-\[\]*]+)`", cell):
            if "[" in cited:  # `case[*]`: any parameter of the case
                found = any(c.startswith(cited.split("[")[0] + "[") for c in CASES)
            else:
                found = bool(fnmatch.filter(CASES, cited))
            if not found:
                missing.append((number, cited))
    assert missing == []
    assert any(cell != "free" for _, cell in _rows())
