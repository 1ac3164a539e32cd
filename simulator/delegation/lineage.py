"""Lineage as data (DELEG-02, DELEG-03): who delegated to whom, how deep, by which
implementer. It is read for counting (depth and fan-out limits), authorisation (only an
ancestor may stop or follow up a task) and tracing (the event log), and for nothing else:
no function here, and nothing that reads a ``Lineage``, decides which tools a child sees.

Depth is persisted in the capability and is authoritative: a runtime depth option (for
instance, a restarted child process told its depth on the command line) can only deepen
it (:func:`effective_depth`), so a resumed child is never re-counted as top-level.
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MAX_DEPTH = 3
DEFAULT_MAX_FANOUT = 20


@dataclass(frozen=True)
class Lineage:
    parent: str
    root: str
    depth: int
    implementer: str
    background: bool

    def to_json(self) -> dict[str, object]:
        return {"parent": self.parent, "root": self.root, "depth": self.depth,
                "implementer": self.implementer, "background": self.background}


@dataclass(frozen=True)
class Limits:
    """``max_depth``: the deepest a child may be (a top-level agent is depth 0).
    ``max_fanout``: how many running children one agent may have at once, foreground,
    background and forks alike."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_fanout: int = DEFAULT_MAX_FANOUT

    def to_json(self) -> dict[str, int]:
        return {"max_depth": self.max_depth, "max_fanout": self.max_fanout}


def effective_depth(persisted: int, option: int | None) -> int:
    """A runtime depth option only deepens: the persisted depth is the floor."""
    return persisted if option is None else max(persisted, option)


def depth_refusal(parent_depth: int, limits: Limits) -> str | None:
    """Why a child of an agent at ``parent_depth`` may not exist, or None."""
    if parent_depth + 1 > limits.max_depth:
        return (f"a child would be at depth {parent_depth + 1}, deeper than the maximum "
                f"{limits.max_depth}")
    return None


def fanout_refusal(running_children: int, limits: Limits) -> str | None:
    if running_children >= limits.max_fanout:
        return (f"{running_children} children are already running, the maximum fan-out is "
                f"{limits.max_fanout}")
    return None
