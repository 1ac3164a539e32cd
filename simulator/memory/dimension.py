"""The memory dimension as the skeleton sees it (``capconf.simulator.core.dimension.Dimension``).

Compile binds the agent's memory directory once, when the agent is mounted, and keeps it
in ``DimensionOutcome.state``; a call takes the directory from there and never from its
arguments (MEM-03). Every delegation is a separately spawned agent with its own outcome,
and all of them append through the one process-wide serializer (MEM-07).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.core.dimension import CallContext, CompileContext, DimensionOutcome
from capconf.simulator.core.envelope import ToolResult, failure
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.memory.append import PROCESS_SERIALIZER
from capconf.simulator.memory.binding import (
    MemoryBinding,
    MemoryWorld,
    consent_notice,
    memory_section,
    mount_memory_tools,
    parse_memory_world,
    resolve_memory,
)
from capconf.simulator.memory.tools import MemoryToolbox

if TYPE_CHECKING:
    from capconf.simulator.definition.document import Definition


class MemoryDimension:
    key = "memory"

    def parse_world(self, args: Any, workspace: Path) -> MemoryWorld:
        try:
            return parse_memory_world(args, workspace)
        except WorldSetupError as exc:
            raise WorldSetupError(("memory", *exc.path), exc.message) from None

    def compile(self, definition: Definition, world: MemoryWorld,
                ctx: CompileContext) -> DimensionOutcome:
        declared = definition.memory_mode
        where = definition.memory_location
        notices = consent_notice(declared, ctx.mode, where)
        resolution = resolve_memory(ctx.agent_name or "", declared, world, ctx.mode, where)
        tools = tuple(MountedTool(t.name, t.description, dict(t.input_schema))
                      for t in mount_memory_tools(resolution, world))
        return DimensionOutcome(
            section=memory_section(resolution, world),
            diagnostics=notices + resolution.diagnostics,
            tools=tools,
            state=resolution.binding,
        )

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome,
             world: MemoryWorld, ctx: CallContext) -> ToolResult:
        binding = outcome.state
        if not isinstance(binding, MemoryBinding):
            return failure("tool_not_mounted", f"`{tool}` is not mounted for this agent",
                           {"tool": tool}, terminal_for_attempt=True)
        toolbox = MemoryToolbox(world.workspace, binding.directory, PROCESS_SERIALIZER)
        calls = {"memory_write": toolbox.write, "memory_read": toolbox.read,
                 "memory_search": toolbox.search}
        call = calls.get(tool)
        if call is None:
            return failure("tool_not_mounted", f"`{tool}` is not a memory tool",
                           {"tool": tool}, terminal_for_attempt=True)
        return call(args)
