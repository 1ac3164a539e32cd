"""The skills dimension as the skeleton sees it (``capconf.simulator.core.dimension.Dimension``).

Compile discovers the layers and resolves the allow-list once, when the agent is mounted,
and keeps the resolution as the outcome's state; use_skill and skill_search answer from
that state (bodies are still read from disk on demand, SKILL-04, SKILL-08).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capconf.simulator.core.dimension import CallContext, CompileContext, DimensionOutcome
from capconf.simulator.core.envelope import ToolResult, failure
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.skills.catalog import skills_catalog_section
from capconf.simulator.skills.discovery import discover_skills
from capconf.simulator.skills.resolution import SkillResolution, resolve_skills
from capconf.simulator.skills.use_skill import call_skill_search, call_use_skill, skill_tools
from capconf.simulator.skills.world import SkillWorld, parse_skill_world

if TYPE_CHECKING:
    from capconf.simulator.definition.document import Definition


class SkillsDimension:
    key = "skills"

    def parse_world(self, args: Any, workspace: Path) -> SkillWorld:
        return parse_skill_world(args, workspace)

    def compile(self, definition: Definition, world: SkillWorld,
                ctx: CompileContext) -> DimensionOutcome:
        if not definition.skills:
            return DimensionOutcome()
        resolution = resolve_skills(definition.skills, discover_skills(world, ctx.mode), world,
                                    ctx.mode, ctx.workspace)
        tools = tuple(MountedTool(t.name, t.description, t.input_schema)
                      for t in skill_tools(resolution))
        return DimensionOutcome(
            section=skills_catalog_section(resolution),
            diagnostics=() if resolution is None else resolution.diagnostics,
            tools=tools,
            state=resolution,
        )

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome,
             world: SkillWorld, ctx: CallContext) -> ToolResult:
        resolution = outcome.state
        if not isinstance(resolution, SkillResolution):
            return failure("tool_not_mounted", f"`{tool}` is not mounted for this agent",
                           {"tool": tool}, terminal_for_attempt=True)
        if tool == "use_skill":
            return call_use_skill(resolution, args)
        if tool == "skill_search":
            return call_skill_search(resolution, args)
        return failure("tool_not_mounted", f"`{tool}` is not a skills tool", {"tool": tool},
                       terminal_for_attempt=True)
