"""capconf's skills in OpenCode's terms: discovery folders, the `skill` permission, the
`skill` tool, and the catalog OpenCode writes into its system prompt.

Why a table and nothing else: OpenCode discovers `SKILL.md` files itself (its config's
`skills.paths` folders, `**/SKILL.md`), offers the skills an agent's `skill` permission
does not deny in an `<available_skills>` block of the system prompt, and loads one with
its `skill` tool. So the adapter only
- names capconf's five layer folders in OpenCode's `skills.paths`, in capconf's layer
  order (which one wins a shared name is OpenCode's rule, not the adapter's);
- turns `skills: [a, b]` into the agent's rule `skill: {"*": deny, a: allow, b: allow}`,
  every name as written;
- calls capconf's `use_skill {name}` as OpenCode's `skill {name}` and reads OpenCode's
  answer back (its body section, its base directory).
capconf's skill_search, references, amendments, pins, preferences and gates have no
OpenCode counterpart and are not supplied here (README: what the adapter supplies).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LAYERS = ("workspace", "ecosystem-workspace", "system", "ecosystem-user", "plugin")
WORLD_KEYS = {"layers", "preferred", "amendments", "preferences", "offers_asked", "vm_type",
              "feature_versions"}
USE_SKILL = "use_skill"  # capconf's tool name; OpenCode's tool id is `skill`
OPENCODE_TOOL = "skill"


class SkillsWorldInvalid(ValueError):
    def __init__(self, message: str, path: list[str | int]) -> None:
        super().__init__(message)
        self.path = path


@dataclass(frozen=True)
class SkillWorld:
    """The layer folders the world names, in capconf's layer order."""

    layers: tuple[tuple[str, Path], ...]

    def paths(self) -> list[str]:
        """OpenCode's `skills.paths`: one folder per layer, in layer order."""
        return [str(p) for _, p in self.layers]


def parse_skill_world(value: Any, workspace: Path) -> SkillWorld | None:
    """`world.setup` `skills`: the layer folders (PROTO-02 errors with their path)."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise SkillsWorldInvalid("`skills` must be an object", ["args", "skills"])
    for key in value:
        if key not in WORLD_KEYS:
            raise SkillsWorldInvalid(f"unknown skills key `{key}`", ["args", "skills", key])
    layers = value.get("layers", {})
    if not isinstance(layers, dict):
        raise SkillsWorldInvalid("`skills.layers` must be an object",
                                 ["args", "skills", "layers"])
    found: dict[str, Path] = {}
    for name, folder in layers.items():
        where: list[str | int] = ["args", "skills", "layers", name]
        if name not in LAYERS:
            raise SkillsWorldInvalid(f"unknown layer `{name}` (layers: {', '.join(LAYERS)})",
                                     where)
        if not isinstance(folder, str) or not folder:
            raise SkillsWorldInvalid("a layer is a folder path", where)
        path = Path(folder) if os.path.isabs(folder) else workspace / folder
        if not path.is_dir():
            raise SkillsWorldInvalid(f"layer `{name}` is not a directory: {folder}", where)
        found[name] = path
    return SkillWorld(tuple((n, found[n]) for n in LAYERS if n in found))


def declared_skills(value: Any) -> list[str] | None:
    """The skill names a `skills` value declares, as written, or None (not a list of
    names: passed to OpenCode untouched)."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        # capconf trims spaces and tabs only (SKILL-01, TOOL-02): `\u3000pdf` is a name
        # of its own and reaches OpenCode's `skill` rule as written
        return [v.strip(" \t") for v in value if v.strip(" \t")]
    return None


def permission_rules(names: list[str]) -> dict[str, str]:
    """OpenCode's `skill` permission for an allow-list (patterns as written)."""
    return {"*": "deny", **{n: "allow" for n in names}}


# OpenCode's catalog block in the system prompt (session/system.ts): an intro, then
# `<available_skills>` ... `</available_skills>`; the intro is the text just before it.
_CATALOG = re.compile(r"(?:[^\n]*\n){0,2}<available_skills>\n.*?</available_skills>", re.S)
_INTRO = "Skills provide specialized instructions"


def catalog_span(system: str) -> tuple[int, int] | None:
    """Where OpenCode's skills catalog sits in its system prompt, or None."""
    at = system.find(_INTRO)
    if at < 0:
        return None
    m = _CATALOG.match(system, at)
    if m is None:
        return None
    return at, m.end()


_BODY = re.compile(r"\A<skill_content name=\"[^\"]*\">\n# Skill: [^\n]*\n\n(.*?)\n\n"
                   r"Base directory for this skill: ([^\n]*)\n", re.S)


def use_skill_content(state: dict[str, Any]) -> dict[str, Any]:
    """OpenCode's completed `skill` tool part as capconf's `use_skill` content: the body
    section and the base directory of OpenCode's own answer (its text is kept too)."""
    output = str(state.get("output") or "")
    meta = state.get("metadata") or {}
    m = _BODY.match(output)
    base = str(meta.get("dir") or (m.group(2) if m else ""))
    return {"name": meta.get("name"),
            "body": m.group(1) if m else output,
            "location": str(Path(base) / "SKILL.md") if base else None,
            "opencode_output": output}


def refusal_code(error: str) -> str | None:
    """capconf's code for OpenCode's two refusals of a skill: not discovered, or denied
    by the agent's `skill` rule (both are "not granted" to capconf)."""
    if re.match(r'Skill ".*" not found\.', error, re.S):
        return "SKILL-NOT-GRANTED"
    if "prevents you from using this specific tool call" in error:
        return "SKILL-NOT-GRANTED"
    return None


def use_skill_result(tool: str, state: dict[str, Any]) -> dict[str, Any]:
    """OpenCode's `skill` tool part as capconf's `use_skill` answer: its own two refusals
    (not found, denied by the agent's `skill` rule) keep their capconf code."""
    if state.get("status") == "completed":
        return {"ok": True, "content": use_skill_content(state)}
    error = str(state.get("error") or state.get("status"))
    return {"ok": False, "error_code": refusal_code(error) or "tool_error",
            "error_message": error,
            "error_detail": {"tool": tool, "opencode_state": state.get("status")},
            "terminal_for_attempt": True, "retry_after_ms": None}
