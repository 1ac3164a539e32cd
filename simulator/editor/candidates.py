"""What the three selectors may offer (EDIT-01): the back-end is the only source.

A settings form that offered free text would let users write names that do not exist;
the candidates come from the same registries resolution uses: tools from the grantable
list (the legacy six when the back-end has none, DEF-05), skills from the five discovery
layers with the winner of each name and the entries it hides (SKILL-01), MCP servers from
the MCP configuration with their enabled / configured state (MCP-04).
"""

from __future__ import annotations

from typing import Any

from capconf.simulator.compose.world import World
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.mcp.world import McpWorld
from capconf.simulator.skills.discovery import discover_skills
from capconf.simulator.skills.resolution import skill_location
from capconf.simulator.skills.world import SkillWorld

MEMORY_MODES = ("none", "private", "shared")


def _name_order(name: str) -> tuple[str, str]:
    return (ascii_fold(name), name)


def tool_candidates(world: World) -> dict[str, Any]:
    registry = world.registry
    return {
        "source": "legacy_fallback" if registry.legacy_fallback else "registry",
        "candidates": [{"name": n, "in_session": n in world.session_tools}
                       for n in registry.grantable],
        "not_grantable": [{"name": n, "reason": r} for n, r in registry.not_grantable],
    }


def skill_candidates(world: World) -> dict[str, Any]:
    skills: SkillWorld = world.dimensions["skills"]
    discovery = discover_skills(skills)
    winners: dict[str, Any] = {}
    hidden: list[dict[str, Any]] = []
    for package in discovery.packages:  # layer order: the first of a name wins
        key = ascii_fold(package.name)
        if key not in winners:
            winners[key] = {"name": package.name, "description": package.description,
                            "layer": str(package.layer),
                            "location": skill_location(package, world.workspace),
                            "shadowed": []}
            continue
        winner = winners[key]
        winner["shadowed"].append(str(package.layer))
        hidden.append({"name": package.name, "layer": str(package.layer),
                       "location": skill_location(package, world.workspace),
                       "shadowed_by": winner["layer"]})
    return {
        "layers": [str(layer) for layer, _ in skills.layers],
        "candidates": sorted(winners.values(), key=lambda c: _name_order(c["name"])),
        "shadowed": hidden,
        "diagnostics": [d.to_json() for d in discovery.diagnostics],
    }


def mcp_candidates(world: World) -> dict[str, Any]:
    mcp: McpWorld = world.dimensions["mcp"]
    return {"candidates": [
        {"name": s.name, "enabled": s.enabled, "configured": s.configured,
         "state": str(s.status), "description": s.description}
        for s in sorted(mcp.servers, key=lambda s: _name_order(s.name))]}


def candidates(world: World) -> dict[str, Any]:
    return {"tools": tool_candidates(world), "skills": skill_candidates(world),
            "mcp": mcp_candidates(world), "memory": {"modes": list(MEMORY_MODES)}}


def candidate_names(world: World) -> dict[str, list[str]]:
    """The names each name-list field can suggest (EDIT-04)."""
    data = candidates(world)
    return {"tools": [c["name"] for c in data["tools"]["candidates"]],
            "skills": [c["name"] for c in data["skills"]["candidates"]],
            "mcp.servers": [c["name"] for c in data["mcp"]["candidates"]]}
