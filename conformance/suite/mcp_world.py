"""The MCP world shared by the MCP and approval cases: fake servers launched by command
+ args, their journals, and short helpers over the driver protocol. Not a test module."""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

WORLD = default_world()
OBJ: dict[str, Any] = {"type": "object"}

NOTION_TOOLS: list[dict[str, Any]] = [
    {"name": "search_pages", "description": "Search Notion pages",
     "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
    {"name": "create_page", "description": "Create a Notion page",
     "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                     "required": ["title"]},
     "results": [{"text": "created"}]},
]
GITHUB_TOOLS: list[dict[str, Any]] = [
    {"name": "delete_repo", "description": "Delete a repository", "inputSchema": OBJ},
]

CATALOG_INTRO = (
    "These MCP servers are granted to you. Find their tools with mcp_search, read a "
    "tool's input schema with mcp_describe, and call it with mcp_call using its "
    "qualified name server__tool. External systems are reached only through them.")
NAME = {"type": "string", "description": "Qualified tool name: server__tool."}
GATEWAY_TOOLS: list[dict[str, Any]] = [
    {"name": "mcp_search",
     "description": "Search the tools of the MCP servers granted to you. Returns qualified "
                    "names (server__tool), descriptions and whether each runs without "
                    "approval; at most 50 results.",
     "input_schema": {"type": "object", "properties": {"query": {
         "type": "string", "description": "Words that must all appear in the tool's "
         "qualified name or description (case-insensitive). Empty lists every tool."}},
         "additionalProperties": False}},
    {"name": "mcp_describe",
     "description": "Describe one tool of a granted MCP server: its description and input "
                    "schema.",
     "input_schema": {"type": "object", "properties": {"name": NAME}, "required": ["name"],
                      "additionalProperties": False}},
    {"name": "mcp_call",
     "description": "Call a tool of a granted MCP server by its qualified name "
                    "(server__tool). A tool on the server's approval allow-list runs "
                    "directly; any other tool waits for the user's approval in the parent "
                    "session.",
     "input_schema": {"type": "object", "properties": {
         "name": NAME, "arguments": {"type": "object",
                                     "description": "Arguments matching the tool's input "
                                                    "schema."}},
         "required": ["name"], "additionalProperties": False}},
]


# -- helpers -------------------------------------------------------------------------

def cases(prefix: str, rows: list[tuple[str, Any]]) -> list[Any]:
    """Parametrized rows, each with its own stable case ID ``<prefix>.<suffix>``."""
    return [pytest.param(value, id=suffix, marks=pytest.mark.case(f"{prefix}.{suffix}"))
            for suffix, value in rows]


def server(impl: Harness, name: str, tools: list[dict[str, Any]], **entry: Any) -> dict[str, Any]:
    """Write a fake server config into the workspace; return its mcpServers entry."""
    config = impl.write(f"servers/{name}.json", json.dumps({"name": name, "tools": tools}))
    journal = impl.workspace / "servers" / f"{name}.journal"
    return {"command": sys.executable,
            "args": ["-m", "capconf.simulator.mcp.fake_server", str(config),
                     "--journal", str(journal)],
            "env": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}, **entry}


def journal(impl: Harness, name: str) -> list[dict[str, Any]]:
    path = impl.workspace / "servers" / f"{name}.journal"
    if not path.exists():
        return []
    # "\n" only: str.splitlines would also split inside a JSON string at U+2028,
    # U+2029, U+0085 and other characters that canonical JSON writes unescaped
    text = path.read_text(encoding="utf-8")
    return [json.loads(line) for line in text.split("\n") if line.strip()]


def tool_calls(impl: Harness, name: str) -> list[dict[str, Any]]:
    """The server's `tools/call` requests as `{name, arguments}`: the call itself. MCP lets
    a client add request metadata (`params._meta`, e.g. the MCP SDK's progress token),
    which says nothing about what was called; any other key is kept, so it shows."""
    return [{k: v for k, v in e["received"]["params"].items() if k != "_meta"}
            for e in journal(impl, name)
            if e.get("received", {}).get("method") == "tools/call"]


def setup(impl: Harness, *, tier: str = "confirm-before-change", attendance: str = "attended",
          roots: list[str] | None = None, timeout_ms: int = 5000,
          **servers: dict[str, Any]) -> None:
    impl.setup(**WORLD, mcp={"mcpServers": servers, "timeout_ms": timeout_ms})
    impl.driver.request("approval.setup", {"tier": tier, "attendance": attendance,
                                           "writable_roots": roots or []})


def standard_world(impl: Harness, **kwargs: Any) -> None:
    setup(impl, notion=server(impl, "notion", NOTION_TOOLS, allow=["search_pages"]),
          github=server(impl, "github", GITHUB_TOOLS), **kwargs)


def agent_def(name: str = "researcher", servers: list[str] | None = None,
              tools: str = "[read, write, edit, bash, Task]") -> str:
    mcp = "" if servers is None else f"mcp:\n  servers: [{', '.join(servers)}]\n"
    return f"name: {name}\ndescription: d\ntools: {tools}\n{mcp}prompt: Work.\n"


def spawn(impl: Harness, source: str, background: bool = True) -> str:
    result = impl.driver.request("agent.spawn", {"source": source, "background": background})
    agent: str = result["agent"]
    return agent


def call(impl: Harness, agent: str, tool: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = impl.driver.request(
        "tool.call", {"agent": agent, "tool": tool, "args": args})
    return result


def mcp_call(impl: Harness, agent: str, name: Any, **arguments: Any) -> dict[str, Any]:
    return call(impl, agent, "mcp_call", name=name, arguments=arguments)


def cards(impl: Harness) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = impl.driver.request("cards.list")["cards"]
    return listed


def decide(impl: Harness, card: str, decision: str) -> dict[str, Any]:
    result: dict[str, Any] = impl.driver.request("card.decide",
                                                 {"card": card, "decision": decision})
    return result


def status(impl: Harness, agent: str) -> str:
    rows = impl.driver.request("cards.list")["agents"]
    found: str = next(r["status"] for r in rows if r["agent"] == agent)
    return found
