"""The registry of named implementers (DELEG-01, DELEG-04). They coexist in one
capability; a caller names one and uses the same service interface whichever it is.

``inherits_parent_context`` is descriptive (DELEG-04): it says whether the child's context
is seeded with the parent's *completed* history (``fork``) or not (``fresh``,
``out-of-process``). It is not consulted to decide tools, services or authority: those
come from the child's definition and the pinned permissions, the same for every
implementer. The seed boundary (how much completed history a fork sees) is taken by the
capability at delegation time; the turn in flight is never part of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from capconf.simulator.delegation.channel import WorkerChannel
from capconf.simulator.delegation.host import ChildHost, Host

FRESH = "fresh"
FORK = "fork"
OUT_OF_PROCESS = "out-of-process"


@dataclass(frozen=True)
class Implementer:
    name: str
    inherits_parent_context: bool
    in_process: bool
    host: Host

    def seed(self, completed_history: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
        """What of the parent's completed history the child's context starts with."""
        if not self.inherits_parent_context:
            return []
        return [{"kind": "seed", "role": e["role"], "text": e["text"]}
                for e in completed_history]


ImplementerFactory = Callable[[], tuple[Implementer, ...]]


def default_implementers() -> tuple[Implementer, ...]:
    """fresh and fork share one in-process host; out-of-process has a worker process."""
    local = ChildHost()
    remote = WorkerChannel()
    return (
        Implementer(FRESH, inherits_parent_context=False, in_process=True, host=local),
        Implementer(FORK, inherits_parent_context=True, in_process=True, host=local),
        Implementer(OUT_OF_PROCESS, inherits_parent_context=False, in_process=False,
                    host=remote),
    )


def close_all(implementers: tuple[Implementer, ...]) -> None:
    for implementer in implementers:
        if isinstance(implementer.host, WorkerChannel):
            implementer.host.close()
