"""What a definition declares, as located values.

These are the inputs of each capability dimension's resolver. Every declared entry keeps
its source location, so a resolver can report an unknown name exactly where it was
written (DEF-03, DEF-06) instead of dropping it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from capconf.simulator.core.diagnostics import Location


@dataclass(frozen=True)
class NameRef:
    """A name as written in the definition (whitespace-trimmed, case preserved)."""

    name: str
    location: Location


@dataclass(frozen=True)
class KnowledgeDeclaration:
    """One knowledge source: a name plus a workspace-relative glob (KB-01)."""

    name: str
    glob: str
    location: Location


class MemoryMode(StrEnum):
    """Three mutually exclusive modes; absent means NONE (MEM-01)."""

    NONE = "none"
    PRIVATE = "private"
    SHARED = "shared"
