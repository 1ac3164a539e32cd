"""Goldens of the mcp-approval area: what the model and the user see, as reviewed text.

Review: `git diff golden/mcp_approval/`; update:
`pytest tests/test_golden_mcp_approval.py --snapshot-update`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from simulator.approval import (
    ApprovalPolicy,
    Attendance,
    Tier,
    truth_table_markdown,
)
from simulator.cards import (
    Board,
    CardEvent,
    end_parent_request,
    pull,
    raise_card,
    settle,
    spawn,
    start_parent_request,
    stop_agent,
)
from simulator.declarations import NameRef
from simulator.diagnostics import Location, Mode
from simulator.envelope import ToolResult
from simulator.mcp.fake_server import launch_spec
from simulator.mcp.gateway import (
    GATEWAY_TOOLS,
    PendingApproval,
    ScopedGateway,
    ServerPool,
    catalog_section,
    parse_mcp_world,
    resolve_mcp,
)

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


@pytest.fixture
def gateway(tmp_path: Path) -> ScopedGateway:
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


def test_unattended_denial(gateway: ScopedGateway, golden: Any) -> None:
    policy = ApprovalPolicy(Tier.AUTO_EDIT, Attendance.UNATTENDED)
    result = gateway.call({"name": "notion__create_page", "arguments": {"title": "t"}}, policy)
    assert isinstance(result, ToolResult)
    assert pretty(result.to_json()) == golden


def test_card_lifecycle(gateway: ScopedGateway, golden: Any) -> None:
    pending = gateway.call({"name": "notion__create_page", "arguments": {"title": "Q3 plan"}},
                           ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE))
    assert isinstance(pending, PendingApproval)
    board, _ = start_parent_request(Board())
    board, researcher = spawn(board, "researcher", background=True)
    board, writer = spawn(board, "writer")
    board, mcp_card = raise_card(board, researcher.id, tool=pending.call.qualified,
                                 action="mcp", args=pending.call.arguments,
                                 reason=pending.decision.reason)
    board = end_parent_request(board)
    board, bash_card = raise_card(board, researcher.id, tool="bash", action="bash",
                                  args={"command": "make release " + "x" * 300},
                                  reason="confirm-before-change: every change needs "
                                  "confirmation")
    board, write_card = raise_card(board, writer.id, tool="write", action="write",
                                   args={"path": "notes.md", "content": "draft"},
                                   reason="confirm-before-change: every change needs "
                                   "confirmation")
    board, delivered = pull(board)
    board, approved = settle(board, write_card.id, CardEvent.APPROVE)
    board, stopped = stop_agent(board, researcher.id)
    sections = [
        ("raised (pushed, then queued)", [mcp_card.to_json(), bash_card.to_json()]),
        ("delivered by the snapshot pull", [c.to_json() for c in delivered]),
        ("approved by the user", [approved.card.to_json()]),
        ("settled by TaskStop", [s.card.to_json() for s in stopped]),
        ("the blocked calls' denials", [s.result.to_json() for s in stopped
                                        if s.result is not None]),
    ]
    assert "".join(f"# {title}\n{pretty(v)}" for title, v in sections) == golden


def test_truth_table(golden: Any) -> None:
    assert truth_table_markdown() + "\n" == golden


def test_nothing_granted(gateway: ScopedGateway, golden: Any) -> None:
    """Declared, but every server unknown: the tools are mounted and answer like this."""
    world = gateway.pool.world
    declared = (NameRef("jira", Location(("mcp", "servers", 0), 9, 14)),)
    empty = ScopedGateway(ServerPool(world), resolve_mcp(declared, world, Mode.PARSE))
    search = empty.search({"query": "page"}).to_json()
    described = empty.describe({"name": "notion__search_pages"}).to_json()
    assert pretty({"mcp_search": search, "mcp_describe": described}) == golden


def test_card_summaries(golden: Any) -> None:
    """RFC 8785 summaries of awkward arguments, as a TS or Rust runtime must print them."""
    from simulator.cards import summarize_args

    rows = [
        {"title": "Q3", "n": 1e16, "small": 1e-7, "neg": -0.0, "big": 10**21},
        {"\ue000": 1, "\U0001f600": 2, "B": 3, "a": 4},
        {"text": "tab\there\nline \"quoted\" back\\slash \x01 \u2028 é"},
        {"nested": {"z": [1, 2.5, {"y": None, "x": True}], "a": {}}},
        {"content": "é" * 300},
    ]
    assert "".join(summarize_args(r) + "\n" for r in rows) == golden
