"""The knowledge dimension as the skeleton sees it (``capconf.simulator.core.dimension.Dimension``).

Compile checks the declarations (KB-01, KB-07), the `read` grant (KB-08) and renders the
one-line-per-source catalog (KB-02); the resolved sources are the outcome's state, and
kb_search re-checks each glob before it walks (KB-07 at search time).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capconf.simulator.core.diagnostics import Location
from capconf.simulator.core.dimension import CallContext, CompileContext, DimensionOutcome
from capconf.simulator.core.envelope import ToolResult, failure
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.knowledge.kbsearch import call_kb_search, kb_search_tools
from capconf.simulator.knowledge.sources import (
    KnowledgeResolution,
    KnowledgeWorld,
    check_knowledge_requires_read,
    knowledge_catalog_section,
    parse_knowledge_world,
    resolve_knowledge,
)

if TYPE_CHECKING:
    from capconf.simulator.definition.document import Definition


class KnowledgeDimension:
    key = "knowledge"

    def parse_world(self, args: Any, workspace: Path) -> KnowledgeWorld:
        return parse_knowledge_world(args, workspace)

    def compile(self, definition: Definition, world: KnowledgeWorld,
                ctx: CompileContext) -> DimensionOutcome:
        declared = definition.knowledge
        if not declared:
            return DimensionOutcome()
        first = declared[0].location
        read = check_knowledge_requires_read(True, "read" in ctx.granted, ctx.mode,
                                             Location(("knowledge",), first.line, first.column))
        resolution = resolve_knowledge(declared, ctx.workspace, ctx.mode)
        tools = tuple(MountedTool(t.name, t.description, t.input_schema)
                      for t in kb_search_tools(resolution))
        diagnostics = (() if read is None else (read,)) + (
            () if resolution is None else resolution.diagnostics)
        return DimensionOutcome(
            section=knowledge_catalog_section(resolution),
            diagnostics=diagnostics,
            tools=tools,
            state=resolution,
        )

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome,
             world: KnowledgeWorld, ctx: CallContext) -> ToolResult:
        resolution = outcome.state
        if tool != "kb_search" or not isinstance(resolution, KnowledgeResolution):
            return failure("tool_not_mounted", f"`{tool}` is not mounted for this agent",
                           {"tool": tool}, terminal_for_attempt=True)
        return call_kb_search(resolution, ctx.workspace, args)
