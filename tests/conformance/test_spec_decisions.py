"""The "Decisions" tables of SPEC.md cite real cases (issue 20, part 1).

Each row of a decisions table with a `g` column (the guesses of an outside implementer,
round 1) or an `r2` column (its round 2: connectors, flow, skills, memory, knowledge)
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


def _rows(header: str = "| g | question | decision | case |") -> list[tuple[int, str]]:
    """(guess number, last cell) of every row of a table headed ``header``."""
    rows: list[tuple[int, str]] = []
    in_table = False
    for line in SPEC.splitlines():
        if line.startswith(header):
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


R2_HEADER = "| r2 | question | decision | case |"


def test_every_guess_of_round_two_is_decided_once() -> None:
    numbers = sorted(n for n, _ in _rows(R2_HEADER))
    assert numbers == list(range(1, 30)), numbers


def test_round_two_tables_sit_in_their_sections() -> None:
    """Each area's guesses are decided in that area's section, under a heading that says
    which round they are (so a reader of CONN-01 finds the connector decisions there)."""
    want = {"connectors": ("## 11b. ", range(1, 15)), "flow": ("## 10b. ", range(15, 21)),
            "skills": ("## 6. ", range(21, 23)), "knowledge": ("## 7. ", range(23, 26)),
            "memory": ("## 10. ", range(26, 29)), "definition": ("## 3. ", range(29, 30))}
    for area, (section, numbers) in want.items():
        heading = f"### Decisions: {area} (outside implementer, round 3, part 2)"
        assert SPEC.count(heading) == 1, heading
        start = SPEC.index(heading)
        numbered = [m.start() for m in re.finditer(r"\n## \d", SPEC[:start])]
        assert numbered[-1] == SPEC.index("\n" + section), (area, section)
        after = re.search(r"\n#{2,3} ", SPEC[start + len(heading):])
        assert after is not None, heading
        body = SPEC[start:start + len(heading) + after.start()]
        found = [int(line.split("|")[1]) for line in body.splitlines()
                 if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
        assert found == list(numbers), (area, found)


def test_every_cited_case_exists() -> None:
    missing = []
    for number, cell in _rows() + _rows(R2_HEADER):
        for cited in re.findall(r"`([a-z0-9][a-z0-9.\-\[\]*]+)`", cell):
            if "[" in cited:  # `case[*]`: any parameter of the case
                found = any(c.startswith(cited.split("[")[0] + "[") for c in CASES)
            else:
                found = bool(fnmatch.filter(CASES, cited))
            if not found:
                missing.append((number, cited))
    assert missing == []
    assert any(cell != "free" for _, cell in _rows())
    assert any(cell != "free" for _, cell in _rows(R2_HEADER))
