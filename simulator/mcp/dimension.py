"""The MCP dimension as the skeleton sees it (``capconf.simulator.core.dimension.Dimension``).

Compile resolves ``mcp.servers`` into a scoped resolution (kept as the outcome's state);
a call builds a :class:`ScopedGateway` over the session's shared server pool from that
resolution alone, so what an agent can reach is fixed when it is mounted. ``mcp_call``
goes through the session's approval chain like write/edit/bash.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from capconf.simulator.approval.chain import chain_of, hold, stopped_result
from capconf.simulator.approval.decision import Action
from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.core.dimension import CallContext, CompileContext, DimensionOutcome
from capconf.simulator.core.envelope import ToolResult, failure
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.mcp.catalog import catalog_section, mounted_tools
from capconf.simulator.mcp.gateway import PendingApproval, ScopedGateway
from capconf.simulator.mcp.pool import ServerPool
from capconf.simulator.mcp.resolution import McpResolution, check_external_in_knowledge, resolve_mcp
from capconf.simulator.mcp.world import McpWorld, parse_mcp_world

if TYPE_CHECKING:
    from capconf.simulator.definition.document import Definition

STATE_KEY = "mcp"


def session_pool(state: dict[str, Any], world: McpWorld) -> ServerPool:
    """One pool per session and world: a new ``world.setup`` resets the session state,
    and with it every connection."""
    pool = state.get(STATE_KEY)
    if not isinstance(pool, ServerPool) or pool.world is not world:
        pool = ServerPool(world)
        state[STATE_KEY] = pool
    return pool


class McpDimension:
    key = "mcp"

    def parse_world(self, args: Any, workspace: Path) -> McpWorld:
        try:
            return parse_mcp_world(args, workspace)
        except WorldSetupError as exc:
            raise WorldSetupError(("mcp", *exc.path), exc.message) from None

    def compile(self, definition: Definition, world: McpWorld,
                ctx: CompileContext) -> DimensionOutcome:
        resolution = resolve_mcp(definition.mcp_servers, world, ctx.mode)
        external = check_external_in_knowledge(definition.knowledge or (), world, ctx.mode)
        tools = tuple(MountedTool(t.name, t.description, t.input_schema)
                      for t in mounted_tools(resolution))
        return DimensionOutcome(catalog_section(resolution),
                                resolution.diagnostics + external, tools, resolution)

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome,
             world: McpWorld, ctx: CallContext) -> ToolResult:
        resolution = outcome.state
        assert isinstance(resolution, McpResolution)
        gateway = ScopedGateway(session_pool(ctx.session_state, world), resolution)
        if tool == "mcp_search":
            return gateway.search(args)
        if tool == "mcp_describe":
            return gateway.describe(args)
        if tool != "mcp_call":
            return failure("tool_not_mounted", f"`{tool}` is not an MCP gateway tool",
                           {"tool": tool}, terminal_for_attempt=True)
        chain = chain_of(ctx.session_state)
        if chain.stopped(ctx.agent_id):
            return stopped_result(ctx.agent_id)
        result = gateway.call(args, chain.policy_for(ctx.agent_id))
        if not isinstance(result, PendingApproval):
            return result
        call = result.call
        return hold(chain, ctx.agent_id, ctx.agent_name, tool=call.qualified,
                    action=str(Action.MCP), args=call.arguments, reason=result.decision.reason,
                    run=lambda: gateway.run(call))
