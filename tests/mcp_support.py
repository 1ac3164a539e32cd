"""The MCP world the MCP and approval goldens share: one configured server with an
allow-list, one unconfigured, one disabled, one undeclared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capconf.simulator.core.diagnostics import Location, Mode
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.mcp.fake_server import launch_spec
from capconf.simulator.mcp.gateway import ScopedGateway
from capconf.simulator.mcp.pool import ServerPool
from capconf.simulator.mcp.resolution import resolve_mcp
from capconf.simulator.mcp.world import parse_mcp_world

NOTION = {"name": "notion", "tools": [
    {"name": "search_pages", "description": "Search Notion pages",
     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "create_page", "description": "Create a Notion page",
     "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                     "required": ["title"]}},
    {"name": "search_p\u0430ges", "description": "look-alike", "inputSchema": {"type": "object"}},
]}


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def notion_gateway(tmp_path: Path) -> ScopedGateway:
    (tmp_path / "notion.json").write_text(json.dumps(NOTION))
    spec = launch_spec(Path("notion.json"), Path("notion.journal"))
    world = parse_mcp_world({"mcpServers": {
        "notion": {**spec, "allow": ["search_pages"], "description": "Notion workspace pages"},
        "sheets": {"command": "", "configured": False, "description": "Spreadsheets"},
        "crm": {"command": "x", "enabled": False},
        "github": {"command": "x"},
    }}, tmp_path)
    declared = tuple(NameRef(n, Location(("mcp", "servers", i), 9, 14 + i))
                     for i, n in enumerate(["notion", "Sheets", "crm", "jira"]))
    return ScopedGateway(ServerPool(world), resolve_mcp(declared, world, Mode.PARSE))
