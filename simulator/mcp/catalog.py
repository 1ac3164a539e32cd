"""What a subagent is shown of its MCP servers: the catalog section (MCP-03) and the three
gateway tools' specs (``mcp_search``, ``mcp_describe``, ``mcp_call``), mounted only when a
server was granted."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from capconf.simulator.mcp.names import SEARCH_LIMIT
from capconf.simulator.mcp.resolution import McpResolution
from capconf.simulator.mcp.world import ServerStatus

CATALOG_HEADING = "## MCP servers"


CATALOG_INTRO = (
    "These MCP servers are granted to you. Find their tools with mcp_search, read a "
    "tool's input schema with mcp_describe, and call it with mcp_call using its "
    "qualified name server__tool. External systems are reached only through them."
)


STATUS_NOTES: Mapping[ServerStatus, str] = {
    ServerStatus.READY: "",
    ServerStatus.DISABLED: " (disabled: the user can enable it in settings)",
    ServerStatus.NOT_CONFIGURED: " (not configured: the user can configure it in settings)",
}


def catalog_section(resolution: McpResolution) -> str | None:
    if not resolution.granted:
        return None
    lines = [CATALOG_HEADING, CATALOG_INTRO]
    for s in resolution.granted:
        described = f": {s.description}" if s.description else ""
        lines.append(f"- {s.name}{STATUS_NOTES[s.status]}{described}")
    return "\n".join(lines)


@dataclass(frozen=True)
class GatewayTool:
    name: str
    description: str
    input_schema: dict[str, Any]


MCP_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": "Words that must all appear in the tool's qualified name or "
            "description (case-insensitive). Empty lists every tool.",
        }
    },
    "additionalProperties": False,
}


MCP_DESCRIBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Qualified tool name: server__tool."}
    },
    "required": ["name"],
    "additionalProperties": False,
}


MCP_CALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "Qualified tool name: server__tool."},
        "arguments": {
            "type": "object",
            "description": "Arguments matching the tool's input schema.",
        },
    },
    "required": ["name"],
    "additionalProperties": False,
}


MCP_SEARCH_DESCRIPTION = (
    "Search the tools of the MCP servers granted to you. Returns qualified names "
    f"(server__tool), descriptions and whether each runs without approval; at most "
    f"{SEARCH_LIMIT} results."
)


MCP_DESCRIBE_DESCRIPTION = (
    "Describe one tool of a granted MCP server: its description and input schema."
)


MCP_CALL_DESCRIPTION = (
    "Call a tool of a granted MCP server by its qualified name (server__tool). A tool "
    "on the server's approval allow-list runs directly; any other tool waits for the "
    "user's approval in the parent session."
)


GATEWAY_TOOLS = (
    GatewayTool("mcp_search", MCP_SEARCH_DESCRIPTION, MCP_SEARCH_SCHEMA),
    GatewayTool("mcp_describe", MCP_DESCRIBE_DESCRIPTION, MCP_DESCRIBE_SCHEMA),
    GatewayTool("mcp_call", MCP_CALL_DESCRIPTION, MCP_CALL_SCHEMA),
)


def mounted_tools(resolution: McpResolution) -> tuple[GatewayTool, ...]:
    """The three gateway tools whenever ``mcp.servers`` is declared, even when no
    declared server exists (the project-wide "declared" rule): the tool table then
    depends on the definition alone, not on the settings of the day, and a call answers
    with the refusal that lists the granted servers (none) instead of `tool_not_mounted`."""
    return GATEWAY_TOOLS if resolution.declared else ()
