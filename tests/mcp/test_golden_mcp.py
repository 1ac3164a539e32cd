"""Goldens of the MCP area: the scoped gateway's catalog, schemas, search and refusals.

Review: `git diff golden/mcp/`; update:
`pytest tests/mcp/test_golden_mcp.py --snapshot-update`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp_support import notion_gateway, pretty

from capconf.simulator.approval.decision import (
    ApprovalPolicy,
    Tier,
)
from capconf.simulator.core.diagnostics import Location, Mode
from capconf.simulator.core.envelope import ToolResult
from capconf.simulator.definition.declarations import NameRef
from capconf.simulator.mcp.catalog import GATEWAY_TOOLS, catalog_section
from capconf.simulator.mcp.gateway import ScopedGateway
from capconf.simulator.mcp.pool import ServerPool
from capconf.simulator.mcp.resolution import resolve_mcp


@pytest.fixture
def gateway(tmp_path: Path) -> ScopedGateway:
    return notion_gateway(tmp_path)


def test_catalog_section(gateway: ScopedGateway, golden: Any) -> None:
    assert catalog_section(gateway.resolution) == golden


def test_resolution_diagnostics(gateway: ScopedGateway, golden: Any) -> None:
    lines = [f"{d.location.display()} {d.severity} {d.code}\n    {d.message}"
             for d in gateway.resolution.diagnostics]
    assert "\n".join(lines) + "\n" == golden


def test_gateway_tool_schemas(golden: Any) -> None:
    text = "".join(f"## {t.name}\n{t.description}\n{pretty(t.input_schema)}\n"
                   for t in GATEWAY_TOOLS)
    assert text == golden


def test_search_result(gateway: ScopedGateway, golden: Any) -> None:
    assert pretty(gateway.search({}).to_json()) == golden


def test_refusal_of_an_undeclared_server(gateway: ScopedGateway, golden: Any) -> None:
    result = gateway.call({"name": "github__delete_repo"}, ApprovalPolicy(Tier.FULL_ACCESS))
    assert isinstance(result, ToolResult)
    assert pretty(result.to_json()) == golden


def test_refusal_of_a_disabled_server(gateway: ScopedGateway, golden: Any) -> None:
    result = gateway.call({"name": "crm__anything"}, ApprovalPolicy(Tier.FULL_ACCESS))
    assert isinstance(result, ToolResult)
    assert pretty(result.to_json()) == golden


def test_nothing_granted(gateway: ScopedGateway, golden: Any) -> None:
    """Declared, but every server unknown: the tools are mounted and answer like this."""
    world = gateway.pool.world
    declared = (NameRef("jira", Location(("mcp", "servers", 0), 9, 14)),)
    empty = ScopedGateway(ServerPool(world), resolve_mcp(declared, world, Mode.PARSE))
    search = empty.search({"query": "page"}).to_json()
    described = empty.describe({"name": "notion__search_pages"}).to_json()
    assert pretty({"mcp_search": search, "mcp_describe": described}) == golden
