"""Prompt assembly: frame -> capability catalog -> definition body (PROMPT-01..03).

The body goes last so it has the last word on how to work. Catalog sections follow the
fixed order skills -> knowledge -> MCP -> memory. A section that is None (dimension not
declared, or nothing resolved) contributes nothing at all -- not a heading, not a blank
line -- so a definition that declares no dimension yields exactly the legacy prompt
``frame + "\\n\\n" + body + "\\n"`` and the provider's prompt cache keeps hitting.
"""

from __future__ import annotations

from dataclasses import dataclass

from capconf.simulator.core.text import normalize_block

SECTION_ORDER: tuple[str, ...] = ("skills", "knowledge", "mcp", "memory")
SEPARATOR = "\n\n"


@dataclass(frozen=True)
class PromptPart:
    kind: str  # "frame", "catalog.<dimension>" or "body"
    text: str


@dataclass(frozen=True)
class Prompt:
    text: str
    parts: tuple[PromptPart, ...]


def assemble_prompt(frame: str, sections: dict[str, str | None], body: str) -> Prompt:
    unknown = set(sections) - set(SECTION_ORDER)
    if unknown:
        raise ValueError(f"unknown catalog sections: {sorted(unknown)}")
    parts: list[PromptPart] = []
    frame = normalize_block(frame)  # as DEF-01 normalises a body (PROMPT-01, PROMPT-03)
    if frame:
        parts.append(PromptPart("frame", frame))
    for dimension in SECTION_ORDER:
        text = sections.get(dimension)
        if text is not None and text.strip():
            parts.append(PromptPart(f"catalog.{dimension}", text.strip("\n")))
    if body:
        parts.append(PromptPart("body", body))
    text = SEPARATOR.join(p.text for p in parts) + "\n" if parts else ""
    return Prompt(text, tuple(parts))
