"""Deliberately broken variants of the reference simulator: fixtures of the project's own
tests, never part of the installed product.

Each mutant is a plausible real bug and names the requirements whose conformance cases
must catch it (``tests/test_mutants.py`` runs the suite against every one). A mutant
patches the process it runs in, so it is served either in a dedicated ``capconf run``
process (``--impl python:mutants:dispatcher:NAME``) or over stdio
(``python -m mutants NAME``), with ``tests/`` on ``PYTHONPATH``.
"""

from __future__ import annotations

from typing import Any

from mutants.base import Mutant, all_mutants, apply_mutant

__all__ = ["Mutant", "all_mutants", "apply_mutant", "dispatcher", "mutant_table"]


def dispatcher(name: str) -> Any:
    """The reference dispatcher with mutant ``name`` applied to this process."""
    from capconf.conformance.reference import make_dispatcher

    apply_mutant(name)
    return make_dispatcher()


def mutant_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (bug, requirement IDs whose tests must catch it)."""
    return {m.name: (m.bug, m.caught_by) for m in all_mutants().values()}
