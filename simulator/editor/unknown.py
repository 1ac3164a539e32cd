"""Unknown names as an editor shows them: a chip with its explanation, the candidates
closest to it, and the edit that removes it (EDIT-04, DEF-06).

The unknown names are exactly the ones resolution reports (so the chip and the parse can
never disagree); each gets its field, its entry index, its location and message, and a
removal edit that goes through the same splice as any form edit.
"""

from __future__ import annotations

from typing import Any

from capconf.simulator.compose.agent import AgentView
from capconf.simulator.compose.world import World
from capconf.simulator.core.diagnostics import Diagnostic
from capconf.simulator.core.nearest import nearest
from capconf.simulator.editor.candidates import candidate_names

# diagnostic code -> the field whose entry it reports -- SPEC table.
UNKNOWN_NAME_CODES: tuple[tuple[str, str], ...] = (
    ("TOOL-UNKNOWN", "tools"),
    ("TOOL-MCP-STYLE", "tools"),
    ("SKILL-NOT-FOUND", "skills"),
    ("MCP-UNKNOWN-SERVER", "mcp.servers"),
)


def _field(diagnostic: Diagnostic) -> tuple[str, int] | None:
    fields = dict(UNKNOWN_NAME_CODES)
    field = fields.get(diagnostic.code)
    path = diagnostic.location.path
    depth = len(field.split(".")) if field else 0
    if field is None or len(path) != depth + 1 or not isinstance(path[-1], int):
        return None
    if ".".join(str(p) for p in path[:depth]) != field:
        return None
    return field, path[-1]


def _declared(view: AgentView, field: str, index: int) -> str | None:
    d = view.definition
    if d is None:
        return None
    refs = {"tools": d.tools, "skills": d.skills, "mcp.servers": d.mcp_servers}[field] or ()
    return next((r.name for r in refs if r.location.path[-1] == index), None)


def unknown_names(view: AgentView, world: World) -> list[dict[str, Any]]:
    names = candidate_names(world)
    out = []
    for diagnostic in view.diagnostics:
        found = _field(diagnostic)
        if found is None:
            continue
        field, index = found
        name = _declared(view, field, index)
        if name is None:
            continue
        loc = diagnostic.location
        out.append({
            "field": field, "index": index, "name": name,
            "path": list(loc.path), "line": loc.line, "column": loc.column,
            "code": diagnostic.code, "severity": str(diagnostic.severity),
            "message": diagnostic.message,
            "nearest": nearest(name, names[field]),
            "removal": {"field": field, "remove": index},
        })
    return out
