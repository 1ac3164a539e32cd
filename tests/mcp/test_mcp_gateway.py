"""MCP-01..05: the scoped gateway, checked against the fake servers' journals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.approval.cards import (
    APPROVAL_DENIED,
    Board,
    CardEvent,
    raise_card,
    settle,
    spawn,
)
from capconf.simulator.approval.decision import ApprovalPolicy, AskPolicy, Attendance, Tier
from capconf.simulator.core.diagnostics import Location, Mode, Severity, WorldSetupError
from capconf.simulator.core.envelope import ToolResult
from capconf.simulator.definition.declarations import KnowledgeDeclaration, NameRef
from capconf.simulator.mcp.catalog import GATEWAY_TOOLS, catalog_section, mounted_tools
from capconf.simulator.mcp.fake_server import launch_spec
from capconf.simulator.mcp.gateway import PendingApproval, ScopedGateway
from capconf.simulator.mcp.pool import ServerPool
from capconf.simulator.mcp.resolution import (
    DIAGNOSTIC_KINDS,
    McpResolution,
    check_external_in_knowledge,
    resolve_mcp,
)
from capconf.simulator.mcp.world import McpWorld, parse_mcp_world

NOTION: dict[str, Any] = {
    "name": "notion",
    "tools": [
        {"name": "search_pages", "description": "Search Notion pages",
         "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}}},
        {"name": "create_page", "description": "Create a Notion page",
         "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}},
                         "required": ["title"]},
         "results": [{"text": "created"}]},
    ],
}
GITHUB: dict[str, Any] = {
    "name": "github",
    "tools": [{"name": "delete_repo", "description": "Delete a repository",
               "inputSchema": {"type": "object"}}],
}
SHEETS: dict[str, Any] = {
    "name": "sheets", "tools": [{"name": "read_range", "inputSchema": {"type": "object"}}],
}
ATTENDED = ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE)


class World:
    """A workspace with fake servers on disk and a way to read their journals."""

    def __init__(self, tmp_path: Path, transport: str = "in-process",
                 overrides: dict[str, dict[str, Any]] | None = None) -> None:
        self.root = tmp_path
        servers: dict[str, Any] = {}
        for config in (NOTION, GITHUB, SHEETS):
            name = str(config["name"])
            (tmp_path / f"{name}.json").write_text(json.dumps(config), encoding="utf-8")
            spec = launch_spec(Path(f"{name}.json"), Path(f"{name}.journal"))
            servers[name] = {**spec, "description": f"{name.title()} (fake)",
                             **(overrides or {}).get(name, {})}
        servers["notion"].setdefault("allow", ["search_pages"])
        self.raw: dict[str, Any] = {
            "mcpServers": servers, "transport": transport, "timeout_ms": 5000,
        }
        self.world = parse_mcp_world(self.raw, tmp_path)
        self.pool = ServerPool(self.world)

    def journal(self, name: str) -> list[dict[str, Any]]:
        path = self.root / f"{name}.journal"
        if not path.exists():
            return []
        return [json.loads(x)["received"] for x in path.read_text().splitlines()]

    def methods(self, name: str) -> list[str]:
        return [e["method"] for e in self.journal(name)]

    def gateway(self, *declared: str, mode: Mode = Mode.PARSE) -> ScopedGateway:
        return ScopedGateway(self.pool, resolve_mcp(refs(*declared), self.world, mode))


def refs(*names: str) -> tuple[NameRef, ...]:
    return tuple(NameRef(n, Location(("mcp", "servers", i), i + 3, 7))
                 for i, n in enumerate(names))


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def ok(result: object) -> dict[str, Any]:
    assert isinstance(result, ToolResult), result
    envelope = result.to_json()
    assert envelope["ok"] is True, envelope
    content: dict[str, Any] = envelope["content"]
    return content


def err(result: object) -> dict[str, Any]:
    assert isinstance(result, ToolResult), result
    envelope = result.to_json()
    assert envelope["ok"] is False, envelope
    return envelope


# -- declare / resolve / catalog / mount ---------------------------------------------

@pytest.mark.parametrize("declared", [None, ()])
def test_not_declared_means_no_section_and_no_tools(world: World,
                                                    declared: tuple[NameRef, ...] | None) -> None:
    resolution = resolve_mcp(declared, world.world, Mode.PARSE)
    assert resolution.declared is False
    assert catalog_section(resolution) is None
    assert mounted_tools(resolution) == ()
    assert resolution.diagnostics == ()


def test_declared_servers_mount_the_three_gateway_tools(world: World) -> None:
    resolution = resolve_mcp(refs("notion"), world.world, Mode.PARSE)
    assert [t.name for t in mounted_tools(resolution)] == ["mcp_search", "mcp_describe",
                                                           "mcp_call"]
    assert world.journal("notion") == []  # mounting contacts nobody


def test_catalog_section_text(world: World) -> None:
    world = World(world.root, overrides={"sheets": {"configured": False}})
    section = catalog_section(resolve_mcp(refs("sheets", "notion"), world.world, Mode.PARSE))
    assert section == (
        "## MCP servers\n"
        "These MCP servers are granted to you. Find their tools with mcp_search, read a "
        "tool's input schema with mcp_describe, and call it with mcp_call using its "
        "qualified name server__tool. External systems are reached only through them.\n"
        "- notion: Notion (fake)\n"
        "- sheets (not configured: the user can configure it in settings): Sheets (fake)"
    )


def test_unknown_server_is_reported_where_declared_and_kept_out(world: World) -> None:
    for mode in Mode:
        resolution = resolve_mcp(refs("notion", "jira"), world.world, mode)
        assert resolution.granted_names() == ("notion",)
        [diag] = resolution.diagnostics
        assert diag.code == "MCP-UNKNOWN-SERVER"
        assert diag.severity is Severity.WARNING  # DEF-06: kept, visible, removable
        assert diag.location == Location(("mcp", "servers", 1), 4, 7)
        assert "'jira'" in diag.message and "add the server in settings" in diag.message
    only_unknown = resolve_mcp(refs("jira"), world.world, Mode.PARSE)
    # The "declared" rule: tools follow the declaration, the section follows the grants.
    assert catalog_section(only_unknown) is None
    assert [t.name for t in mounted_tools(only_unknown)] == ["mcp_search", "mcp_describe",
                                                             "mcp_call"]
    assert mounted_tools(resolve_mcp((), world.world, Mode.PARSE)) == ()
    assert mounted_tools(resolve_mcp(None, world.world, Mode.PARSE)) == ()


@pytest.mark.parametrize(("override", "phrase"), [
    ({"enabled": False}, "enables it in settings"),
    ({"configured": False, "command": ""}, "configures it in settings"),
])
def test_disabled_or_unconfigured_server_still_mounts_with_its_own_diagnostic(
    tmp_path: Path, override: dict[str, Any], phrase: str
) -> None:
    code = "MCP-NOT-CONFIGURED"
    world = World(tmp_path, overrides={"sheets": override})
    for mode in Mode:
        resolution = resolve_mcp(refs("sheets"), world.world, mode)
        assert resolution.granted_names() == ("sheets",)
        assert mounted_tools(resolution) == GATEWAY_TOOLS
        [diag] = resolution.diagnostics
        assert diag.code == code != "MCP-UNKNOWN-SERVER"
        assert diag.severity is Severity.WARNING
        assert phrase in diag.message
    gateway = world.gateway("sheets")
    envelope = err(gateway.call({"name": "sheets__read_range"}, ATTENDED))
    assert envelope["error_code"] == code
    assert "settings" in envelope["error_message"]
    search = ok(gateway.search({}))
    assert search["tools"] == []
    assert search["unavailable_servers"][0]["server"] == "sheets"
    assert world.journal("sheets") == []


def test_declarations_match_case_insensitively_and_store_the_canonical_name(
    world: World,
) -> None:
    resolution = resolve_mcp(refs("NOTION", "notion"), world.world, Mode.SAVE)
    assert resolution.granted_names() == ("notion",)
    codes = [d.code for d in resolution.diagnostics]
    assert codes == ["MCP-SERVER-CANONICALIZED", "MCP-SERVER-DUPLICATE"]
    assert resolution.diagnostics[0].severity is Severity.INFO


def test_diagnostic_kinds_are_declared_with_requirements() -> None:
    codes = [k.code for k in DIAGNOSTIC_KINDS]
    assert len(codes) == len(set(codes))
    for kind in DIAGNOSTIC_KINDS:
        assert kind.code.startswith("MCP-") and kind.code == kind.code.upper()
        assert kind.requirement.startswith("MCP-")


# -- MCP-01 search / describe --------------------------------------------------------

def test_search_lists_only_declared_servers_tools(world: World) -> None:
    gateway = world.gateway("notion")
    found = ok(gateway.search({}))
    assert [t["name"] for t in found["tools"]] == ["notion__create_page",
                                                   "notion__search_pages"]
    assert [t["runs_directly"] for t in found["tools"]] == [False, True]
    assert world.journal("github") == [] and world.journal("sheets") == []
    assert world.methods("notion") == ["initialize", "notifications/initialized", "tools/list"]
    assert ok(gateway.search({"query": "delete"}))["tools"] == []


def test_search_query_matches_all_words_case_insensitively(world: World) -> None:
    gateway = world.gateway("notion", "github")
    names = [t["name"] for t in ok(gateway.search({"query": "NOTION page create"}))["tools"]]
    assert names == ["notion__create_page"]
    all_names = [t["name"] for t in ok(gateway.search({"query": ""}))["tools"]]
    assert all_names == ["github__delete_repo", "notion__create_page", "notion__search_pages"]
    assert err(gateway.search({"query": 5}))["error_code"] == "MCP-ARGUMENTS-INVALID"


def test_describe_gives_the_schema_only_for_granted_servers(world: World) -> None:
    gateway = world.gateway("notion")
    described = ok(gateway.describe({"name": "notion__create_page"}))
    assert described["input_schema"]["required"] == ["title"]
    assert described["runs_directly"] is False
    refused = err(gateway.describe({"name": "github__delete_repo"}))
    assert refused["error_code"] == "MCP-SERVER-NOT-GRANTED"
    assert world.journal("github") == []


# -- MCP-02 undeclared servers -------------------------------------------------------

def test_undeclared_server_is_refused_with_the_granted_list_and_never_contacted(
    tmp_path: Path,
) -> None:
    world = World(tmp_path, overrides={"sheets": {"enabled": False}})
    gateway = world.gateway("sheets", "notion")
    envelope = err(gateway.call({"name": "github__delete_repo", "arguments": {}}, ATTENDED))
    assert envelope["error_code"] == "MCP-SERVER-NOT-GRANTED"
    assert envelope["error_message"] == (
        "MCP server 'github' is not granted to this agent; it was not contacted. "
        "Granted MCP servers: notion, sheets (disabled)."
    )
    assert envelope["error_detail"]["granted_servers"] == [
        {"name": "notion", "status": "ready"}, {"name": "sheets", "status": "disabled"},
    ]
    assert envelope["terminal_for_attempt"] is True
    assert world.journal("github") == []
    assert world.journal("notion") == []  # refused at once: nothing else was asked either


def test_refusal_with_nothing_granted(world: World) -> None:
    gateway = ScopedGateway(world.pool, McpResolution(True, ()))
    envelope = err(gateway.call({"name": "notion__search_pages"}, ATTENDED))
    assert envelope["error_message"].endswith("This agent is granted no MCP servers.")
    assert world.journal("notion") == []


def test_a_server_in_the_world_but_not_declared_is_invisible_to_another_agent(
    world: World,
) -> None:
    wide = world.gateway("notion", "github")
    narrow = world.gateway("notion")
    ok(wide.search({}))  # the shared pool is now connected to github
    assert err(narrow.call({"name": "github__delete_repo"}, ATTENDED))["error_code"] == (
        "MCP-SERVER-NOT-GRANTED"
    )
    assert "tools/call" not in world.methods("github")


# -- MCP-03 allow-list and approval --------------------------------------------------

def test_allowlisted_tool_runs_directly(world: World) -> None:
    result = world.gateway("notion").call(
        {"name": "notion__search_pages", "arguments": {"q": "roadmap"}}, ATTENDED)
    assert ok(result) == {"content": [{"type": "text", "text": '{"q":"roadmap"}'}]}
    assert world.journal("notion")[-1]["params"] == {"name": "search_pages",
                                                     "arguments": {"q": "roadmap"}}


def test_other_tool_raises_a_card_and_reaches_the_server_only_after_approval(
    world: World,
) -> None:
    gateway = world.gateway("notion")
    pending = gateway.call({"name": "notion__create_page", "arguments": {"title": "Q3"}},
                           ATTENDED)
    assert isinstance(pending, PendingApproval)
    assert pending.call.qualified == "notion__create_page"
    assert "tools/call" not in world.methods("notion")
    board, sub = spawn(Board(), "researcher", background=True)
    board, card = raise_card(board, sub.id, tool=pending.call.qualified, action="mcp",
                             args=pending.call.arguments, reason=pending.decision.reason)
    board, settlement = settle(board, card.id, CardEvent.APPROVE)
    assert settlement.result is None
    assert ok(gateway.run(pending.call)) == {"content": [{"type": "text", "text": "created"}]}
    assert world.methods("notion").count("tools/call") == 1


def test_denied_card_never_reaches_the_server(world: World) -> None:
    gateway = world.gateway("notion")
    pending = gateway.call({"name": "notion__create_page", "arguments": {"title": "Q3"}},
                           ATTENDED)
    assert isinstance(pending, PendingApproval)
    board, sub = spawn(Board(), "researcher", background=True)
    board, card = raise_card(board, sub.id, tool=pending.call.qualified, action="mcp",
                             args=pending.call.arguments, reason=pending.decision.reason)
    _, settlement = settle(board, card.id, CardEvent.DENY)
    assert settlement.result is not None
    assert settlement.result.to_json()["error_code"] == APPROVAL_DENIED
    assert "tools/call" not in world.methods("notion")


@pytest.mark.parametrize(("policy", "outcome"), [
    (ApprovalPolicy(Tier.FULL_ACCESS), "runs"),
    (ApprovalPolicy(Tier.AUTO_EDIT), "card"),
    (ApprovalPolicy(Tier.CONFIRM_BEFORE_CHANGE, Attendance.UNATTENDED), "denied"),
    (ApprovalPolicy(Tier.FULL_ACCESS, Attendance.UNATTENDED), "runs"),
    (ApprovalPolicy(Tier.AUTO_EDIT, ask_policy=AskPolicy.NEVER_ASK), "denied"),
])
def test_off_list_tool_follows_the_one_decision(world: World, policy: ApprovalPolicy,
                                                outcome: str) -> None:
    result = world.gateway("notion").call(
        {"name": "notion__create_page", "arguments": {"title": "x"}}, policy)
    calls = world.methods("notion").count("tools/call")
    if outcome == "runs":
        ok(result)
        assert calls == 1
    elif outcome == "card":
        assert isinstance(result, PendingApproval) and calls == 0
    else:
        envelope = err(result)
        assert envelope["error_code"] == APPROVAL_DENIED
        assert envelope["error_detail"]["tool"] == "notion__create_page"
        assert calls == 0


def test_unknown_tool_on_a_granted_server_is_not_called(world: World) -> None:
    envelope = err(world.gateway("notion").call({"name": "notion__drop_db"}, ATTENDED))
    assert envelope["error_code"] == "MCP-TOOL-NOT-FOUND"
    assert envelope["error_detail"]["tools"] == ["notion__create_page", "notion__search_pages"]
    assert "tools/call" not in world.methods("notion")


def test_tool_and_server_errors_are_envelopes(tmp_path: Path) -> None:
    config = {"name": "notion", "tools": [
        {"name": "search_pages", "inputSchema": {"type": "object"},
         "results": [{"text": "quota", "isError": True},
                     {"error": {"code": -32603, "message": "backend down"}}]}]}
    (tmp_path / "n2.json").write_text(json.dumps(config))
    world = World(tmp_path)
    world.raw["mcpServers"]["notion"] |= launch_spec(Path("n2.json"), Path("notion.journal"))
    world.world = parse_mcp_world(world.raw, tmp_path)
    world.pool = ServerPool(world.world)
    gateway = world.gateway("notion")
    tool_error = err(gateway.call({"name": "notion__search_pages"}, ATTENDED))
    assert (tool_error["error_code"], tool_error["error_message"]) == ("MCP-TOOL-ERROR", "quota")
    rpc_error = err(gateway.call({"name": "notion__search_pages"}, ATTENDED))
    assert rpc_error["error_code"] == "MCP-SERVER-ERROR"
    assert rpc_error["error_detail"]["rpc_code"] == -32603
    assert rpc_error["terminal_for_attempt"] is False
    assert err(gateway.call({"name": "notion__search_pages", "arguments": [1]}, ATTENDED))[
        "error_code"] == "MCP-ARGUMENTS-INVALID"


# -- both transports -----------------------------------------------------------------

def scenario(world: World) -> list[Any]:
    gateway = world.gateway("notion")
    outcomes = [
        gateway.search({}).to_json(),
        gateway.call({"name": "notion__search_pages", "arguments": {"q": "é"}},
                     ATTENDED),
        gateway.call({"name": "github__delete_repo"}, ATTENDED),
    ]
    pending = gateway.call({"name": "notion__create_page", "arguments": {"title": "t"}},
                           ATTENDED)
    assert isinstance(pending, PendingApproval)
    outcomes.append(gateway.run(pending.call))
    world.pool.close()
    return outcomes


def test_in_process_and_stdio_gateways_give_the_same_results_and_journals(
    tmp_path: Path,
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    fast = World(tmp_path / "a")
    slow = World(tmp_path / "b", transport="stdio")
    assert fast.world.in_process and not slow.world.in_process
    assert scenario(fast) == scenario(slow)
    for name in ("notion", "github", "sheets"):
        assert fast.journal(name) == slow.journal(name)
    assert (tmp_path / "a" / "notion.journal").read_bytes() == (
        tmp_path / "b" / "notion.journal").read_bytes()


# -- MCP-05 and world setup ----------------------------------------------------------

def test_external_systems_in_knowledge_are_pointed_to_mcp(world: World) -> None:
    knowledge = (
        KnowledgeDeclaration("Notion", "./docs/**/*.md", Location(("knowledge", 0))),
        KnowledgeDeclaration("crm", "https://crm.example.com/**", Location(("knowledge", 1))),
        KnowledgeDeclaration("manual", "./docs/**/*.md", Location(("knowledge", 2))),
    )
    parse = check_external_in_knowledge(knowledge, world.world, Mode.PARSE)
    assert [d.location.path for d in parse] == [("knowledge", 0), ("knowledge", 1)]
    assert all(d.code == "MCP-EXTERNAL-AS-KNOWLEDGE" for d in parse)
    assert "declare 'notion' under mcp.servers" in parse[0].message
    save = check_external_in_knowledge(knowledge, world.world, Mode.SAVE)
    assert {d.severity for d in save} == {Severity.ERROR}


def test_world_names_servers_like_real_mcp_clients(world: World) -> None:
    entry = world.raw["mcpServers"]["notion"]
    assert set(entry) >= {"command", "args", "env"}
    assert entry["args"][:2] == ["-m", "capconf.simulator.mcp.fake_server"]
    parsed = world.world.lookup("notion")
    assert parsed is not None and parsed.command == entry["command"]
    assert parsed.cwd == world.root / "."


@pytest.mark.parametrize(("raw", "path"), [
    ([], ()),
    ({"servers": {}}, ("servers",)),
    ({"mcpServers": []}, ("mcpServers",)),
    ({"transport": "http"}, ("transport",)),
    ({"timeout_ms": 0}, ("timeout_ms",)),
    ({"timeout_ms": True}, ("timeout_ms",)),
    ({"mcpServers": {"a": []}}, ("mcpServers", "a")),
    ({"mcpServers": {"a": {"url": "https://x"}}}, ("mcpServers", "a", "url")),
    ({"mcpServers": {"a": {"command": 5}}}, ("mcpServers", "a", "command")),
    ({"servers": [{"command": "x"}]}, ("servers", 0)),
    ({"servers": {"a": {}}}, ("servers",)),
    ({"servers": [], "mcpServers": {}}, ("servers",)),
    ({"mcpServers": {"a": {"command": "x", "args": "y"}}}, ("mcpServers", "a", "args")),
    ({"mcpServers": {"a": {"command": "x", "env": {"K": 1}}}}, ("mcpServers", "a", "env")),
    ({"mcpServers": {"a": {"command": "x", "enabled": "yes"}}},
     ("mcpServers", "a", "enabled")),
    ({"mcpServers": {"a": {"command": "x", "allow": ["ok", "bad name"]}}},
     ("mcpServers", "a", "allow", 1)),
    ({"mcpServers": {"a": {"command": "x", "description": "two\nlines"}}},
     ("mcpServers", "a", "description")),
    ({"mcpServers": {"a": {"command": "x", "args": ["-m", "capconf.simulator.mcp.fake_server",
                                                     "missing.json"]}}},
     ("mcpServers", "a", "args", 2)),
])
def test_bad_world_is_a_setup_error_with_a_path(tmp_path: Path, raw: Any,
                                                path: tuple[Any, ...]) -> None:
    with pytest.raises(WorldSetupError) as info:
        parse_mcp_world(raw, tmp_path)
    assert info.value.path == path
    assert info.value.message


def test_world_defaults(tmp_path: Path) -> None:
    assert parse_mcp_world({}, tmp_path) == McpWorld()
    assert parse_mcp_world(None, tmp_path) == McpWorld()


def test_list_form_equals_the_mcp_servers_form(tmp_path: Path) -> None:
    entry = {"command": "x", "args": ["a"], "enabled": False, "allow": ["t"]}
    by_name = parse_mcp_world({"mcpServers": {"crm": entry}}, tmp_path)
    listed = parse_mcp_world({"servers": [{"name": "crm", **entry}]}, tmp_path)
    assert by_name == listed
    with pytest.raises(WorldSetupError) as info:
        parse_mcp_world({"servers": [{"name": "a__b"}]}, tmp_path)
    assert info.value.path == ("servers", 0)


def test_a_server_without_command_mounts_but_cannot_start(tmp_path: Path) -> None:
    world = parse_mcp_world({"servers": [{"name": "crm"}]}, tmp_path)
    gateway = ScopedGateway(ServerPool(world), resolve_mcp(refs("crm"), world, Mode.PARSE))
    assert mounted_tools(gateway.resolution) == GATEWAY_TOOLS
    envelope = err(gateway.call({"name": "crm__x"}, ATTENDED))
    assert envelope["error_code"] == "MCP-SERVER-UNAVAILABLE"
    assert "no command" in envelope["error_message"]


def test_published_limits_and_codes_match_the_code() -> None:
    from capconf.simulator.approval.cards import SUMMARY_MAX_CHARS
    from capconf.simulator.mcp import client, jsonrpc
    from capconf.simulator.mcp.gateway import ERROR_CODE_TABLE, LIMITS, ErrorCode
    from capconf.simulator.mcp.names import SEARCH_LIMIT, SERVER_NAME_MAX, TOOL_NAME_MAX

    assert [value for _, value, _ in LIMITS] == [
        jsonrpc.MAX_MESSAGE_BYTES, jsonrpc.MAX_JSON_DEPTH, client.DEFAULT_TIMEOUT_MS,
        client.MAX_LIST_PAGES, SEARCH_LIMIT, SERVER_NAME_MAX, TOOL_NAME_MAX, SUMMARY_MAX_CHARS]
    published = [code for code, _, _ in ERROR_CODE_TABLE]
    assert set(ErrorCode) <= set(published) and len(published) == len(set(published))


def test_search_terms_are_ascii_folded_and_split_on_unicode_white_space(world: World) -> None:
    """Same matches in every language: no Unicode case mapping, the White_Space set."""
    gateway = world.gateway("notion")

    def names(query: str) -> list[str]:
        return [t["name"] for t in ok(gateway.search({"query": query}))["tools"]]

    assert names("CREATE\u3000Page") == ["notion__create_page"]
    assert names("create\u00a0page") == ["notion__create_page"]
    assert names("\uff43reate") == []  # fullwidth c is not c
    assert names("cre\u212a") == []  # KELVIN SIGN folds to k only in Unicode
    assert names("create\x1fpage") == []  # U+001F is not White_Space (str.split says it is)
