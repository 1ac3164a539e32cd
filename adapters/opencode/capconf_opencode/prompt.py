"""OpenCode's system prompt cut into capconf's parts (PROMPT-01), where its pieces sit.

Why a cut and not a composition: the prompt is OpenCode's, byte for byte; the adapter
only says which span is the agent's own prompt (`body`), which is OpenCode's skills
catalog (`catalog.skills`, skills.py) and which is OpenCode's text around them (`frame`).
"""

from __future__ import annotations

from .skills import catalog_span


def prompt_parts(system: str, body: str) -> list[dict[str, str]]:
    spans: list[tuple[int, int, str]] = []
    at = system.find(body) if body else -1
    if at >= 0:
        spans.append((at, at + len(body), "body"))
    catalog = catalog_span(system)
    if catalog is not None and not any(s < catalog[1] and catalog[0] < e for s, e, _ in spans):
        spans.append((catalog[0], catalog[1], "catalog.skills"))
    parts: list[dict[str, str]] = []
    position = 0
    for start, end, kind in sorted(spans):
        if system[position:start]:
            parts.append({"kind": "frame", "text": system[position:start]})
        parts.append({"kind": kind, "text": system[start:end]})
        position = end
    if system[position:]:
        parts.append({"kind": "frame", "text": system[position:]})
    return parts
