"""A subagent definition as a value: the keys a document knows (in save order), the two
source formats, the ``Definition`` the parser (``definition.parse``) produces and every
other area reads, and the near-miss suggestions for a misspelled key.

Everything declared is kept, even names that resolve to nothing, so the caller can show
them and the save path can write them back (DEF-06).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from capconf.simulator.core.diagnostics import Location
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.core.nearest import osa_distance
from capconf.simulator.core.text import normalize_block
from capconf.simulator.definition.declarations import KnowledgeDeclaration, MemoryMode, NameRef
from capconf.simulator.definition.yamlsource import json_value


class SourceFormat(StrEnum):
    YAML = "yaml"
    MARKDOWN = "markdown"


# Keys in canonical (save) order. `prompt` is the body in the YAML-document form only.
KNOWN_KEYS: tuple[str, ...] = (
    "name", "description", "tools", "skills", "mcp", "knowledge", "memory", "prompt",
)
CAPABILITY_KEYS: tuple[str, ...] = ("skills", "mcp", "knowledge", "memory")
FOREIGN_KEYS: frozenset[str] = frozenset({"model", "color"})
_NEAR_MISS_TARGETS: tuple[str, ...] = (*KNOWN_KEYS, "servers", "mcp_servers", "mcp.servers")


def near_miss(key: str) -> list[str]:
    """The DEF-MISSPELLED-KEY rule: the first target (KNOWN_KEYS order, then the MCP
    aliases) whose distance from the ASCII-lower-cased key is at most 2 and less than half
    the target's length; [] when none is."""
    folded = ascii_fold(key)
    for target in _NEAR_MISS_TARGETS:
        distance = osa_distance(folded, target)
        if distance <= 2 and 2 * distance < len(target):
            return [target]
    return []


@dataclass(frozen=True)
class Definition:
    """A parsed definition. ``None`` for a capability field means the key is absent;
    an empty tuple means it is present but empty (both count as "not declared")."""

    format: SourceFormat
    name: str | None
    description: str | None
    body: str
    tools: tuple[NameRef, ...] | None
    skills: tuple[NameRef, ...] | None
    mcp_servers: tuple[NameRef, ...] | None
    knowledge: tuple[KnowledgeDeclaration, ...] | None
    memory: MemoryMode | None
    extra: tuple[tuple[str, Any], ...] = ()
    memory_location: Location | None = None  # where `memory:` is written, for diagnostics

    @property
    def memory_mode(self) -> MemoryMode:
        return self.memory or MemoryMode.NONE

    def declared_dimensions(self) -> frozenset[str]:
        """Dimensions that count as declared: a non-empty list, or memory other than
        none (PROMPT-03: an empty list is the same as no key)."""
        out = set()
        if self.skills:
            out.add("skills")
        if self.knowledge:
            out.add("knowledge")
        if self.mcp_servers:
            out.add("mcp")
        if self.memory_mode is not MemoryMode.NONE:
            out.add("memory")
        return frozenset(out)

    def to_json(self) -> dict[str, Any]:
        def names(refs: tuple[NameRef, ...] | None) -> list[str] | None:
            return None if refs is None else [r.name for r in refs]

        return {
            "format": str(self.format),
            "name": self.name,
            "description": self.description,
            "body": self.body,
            "tools": names(self.tools),
            "skills": names(self.skills),
            "mcp": None if self.mcp_servers is None else {"servers": names(self.mcp_servers)},
            "knowledge": None if self.knowledge is None else [
                {"name": k.name, "glob": k.glob} for k in self.knowledge],
            "memory": None if self.memory is None else str(self.memory),
            "extra": {k: json_value(v) for k, v in self.extra},
        }


def normalize_body(text: str) -> str:
    """Leading blank lines and trailing whitespace are not part of the body (DEF-01)."""
    return normalize_block(text)
