"""Deliberately broken variants of the reference simulator: fixtures of the project's own
tests, never part of the installed product.

Each mutant is a plausible real bug and names the requirements whose conformance cases
must catch it (``tests/conformance/test_mutants.py`` runs the suite against every one). A mutant
patches the process it runs in, so it is served either in a dedicated ``capconf run``
process (``--impl python:mutants:dispatcher:NAME``) or over stdio
(``python -m mutants NAME``), with ``tests/`` on ``PYTHONPATH``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mutants.base import Mutant, all_mutants, apply_mutant

__all__ = ["FIRST_KILLS", "Mutant", "all_mutants", "apply_mutant", "dispatcher",
           "first_kills", "mutant_table", "render_first_kills"]

# mutant -> the case that killed it last time, run first next time (see first_kills)
FIRST_KILLS = Path(__file__).resolve().parent / "first_kills.txt"


def dispatcher(name: str) -> Any:
    """The reference dispatcher with mutant ``name`` applied to this process."""
    from capconf.conformance.reference import make_dispatcher

    apply_mutant(name)
    return make_dispatcher()


def mutant_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (bug, requirement IDs whose tests must catch it)."""
    return {m.name: (m.bug, m.caught_by) for m in all_mutants().values()}


def first_kills(path: Path = FIRST_KILLS) -> dict[str, str]:
    """name -> the case ID that killed the mutant when this file was last written.

    Only an order: ``tests/conformance/test_mutants.py`` runs that case before the mutant's other
    cases, so a mutant killed by its 38th case costs one case. The cases run are the
    same; a stale or missing line only costs time (a new mutant has none until the file
    is rewritten: ``CAPCONF_UPDATE_FIRST_KILLS=1 pytest tests/conformance/test_mutants.py``)."""
    if not path.exists():
        return {}
    kills: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        name, _, case = line.split("#", 1)[0].strip().partition(" ")
        if name and case.strip():
            kills[name] = case.strip()
    return kills


def render_first_kills(kills: dict[str, str]) -> str:
    header = ("# mutant -> the case that killed it, run first (an order only; written by\n"
              "# CAPCONF_UPDATE_FIRST_KILLS=1 pytest tests/conformance/test_mutants.py)\n")
    return header + "".join(f"{name} {case}\n" for name, case in sorted(kills.items()))
