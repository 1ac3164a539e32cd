"""The default implementation adapter: the ONLY module of the suite that imports the
reference simulator (a test in tests/test_boundary.py enforces this).

Everything else in ``conformance`` speaks the driver protocol, so the simulator is one
implementation among others, exactly as a TypeScript or Rust runtime would be.
"""

from __future__ import annotations

import sys
from typing import Any

REFERENCE_DRIVER_ARGV = [sys.executable, "-m", "conformance.cli", "driver"]


def make_dispatcher() -> Any:
    from simulator.dispatcher import Dispatcher

    return Dispatcher()


def serve_stdio(mutant: str | None = None) -> int:
    if mutant is not None:
        from simulator.mutants import apply_mutant

        apply_mutant(mutant)
    from simulator.driver_stdio import serve

    return serve()


def apply_mutant(name: str) -> None:
    from simulator.mutants import apply_mutant as apply

    apply(name)


def mutant_table() -> dict[str, tuple[str, tuple[str, ...]]]:
    """name -> (bug, requirement IDs whose tests must catch it)."""
    from simulator.mutants import all_mutants

    return {m.name: (m.bug, m.caught_by) for m in all_mutants().values()}
