"""The scoped MCP gateway (MCP-01..05) and the one approval chain (APPR-01..05).

MCP servers here are the capconf fake servers, launched by command + args exactly as a
real MCP client launches any server; each writes a journal of every message it
received, so "the server never saw it" is read from the journal file, not trusted from
the implementation. Each test names the buggy implementation it is for.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.cases import default_world
from conformance.harness import Harness, codes, diagnostics_at

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
            "args": ["-m", "simulator.mcp.fake_server", str(config), "--journal", str(journal)],
            "env": {"PYTHONPATH": os.environ.get("PYTHONPATH", "")}, **entry}


def journal(impl: Harness, name: str) -> list[dict[str, Any]]:
    path = impl.workspace / "servers" / f"{name}.journal"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def tool_calls(impl: Harness, name: str) -> list[dict[str, Any]]:
    return [e["received"]["params"] for e in journal(impl, name)
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


# -- MCP-01 scoped gateway -----------------------------------------------------------

@pytest.mark.case("mcp.scope.search-lists-declared-only")
@pytest.mark.req("MCP-01")
def test_search_lists_only_declared_servers(impl: Harness) -> None:
    """Bug: the subagent gets the shared gateway and sees every configured server."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    found = call(impl, agent, "mcp_search", query="")
    assert found["ok"], found
    assert [t["name"] for t in found["content"]["tools"]] == ["notion__create_page",
                                                              "notion__search_pages"]
    assert journal(impl, "github") == []  # never even initialised


@pytest.mark.case("mcp.scope.three-tools-and-section")
@pytest.mark.req("MCP-01", "PROMPT-02")
def test_declared_servers_mount_the_gateway_tools_and_section(impl: Harness) -> None:
    """Bug: MCP tools mounted one per server tool, or the section lists every server."""
    standard_world(impl)
    source = agent_def(servers=["notion"], tools="[read]")
    mounted = impl.mounted(source)
    assert [t for t in mounted["tools"] if t["name"].startswith("mcp_")] == GATEWAY_TOOLS
    parts = {p["kind"]: p["text"] for p in impl.prompt(source)["parts"]}
    assert parts["catalog.mcp"] == "## MCP servers\n" + CATALOG_INTRO + "\n- notion"
    assert journal(impl, "notion") == []  # mounting contacts nobody


@pytest.mark.case("mcp.scope.undeclared-mounts-nothing")
@pytest.mark.req("MCP-01", "PROMPT-03")
def test_undeclared_mcp_mounts_nothing(impl: Harness) -> None:
    """Bug: every agent gets the gateway tools whether it declared servers or not."""
    standard_world(impl)
    for source in (agent_def(tools="[read]"), agent_def(servers=[], tools="[read]")):
        names = [t["name"] for t in impl.mounted(source)["tools"]]
        assert not [n for n in names if n.startswith("mcp_")]
        assert "catalog.mcp" not in [p["kind"] for p in impl.prompt(source)["parts"]]


@pytest.mark.case("mcp.scope.all-unknown-still-mounts")
@pytest.mark.req("MCP-01", "MCP-02", "MCP-04")
def test_declared_but_all_unknown_mounts_the_tools_without_a_section(impl: Harness) -> None:
    """Bug: the gateway tools depend on the settings of the day (a declared but unknown
    server unmounts them), or an empty grant falls back to the shared gateway."""
    standard_world(impl)
    source = agent_def(servers=["jira"], tools="[read]")
    assert [t["name"] for t in impl.mounted(source)["tools"] if t["name"].startswith("mcp_")] \
        == ["mcp_search", "mcp_describe", "mcp_call"]
    parsed = impl.parse(source)
    assert [d["code"] for d in diagnostics_at(parsed, ["mcp", "servers", 0])] == [
        "MCP-UNKNOWN-SERVER"]
    assert "catalog.mcp" not in [p["kind"] for p in impl.prompt(source)["parts"]]
    agent = spawn(impl, source)
    found = call(impl, agent, "mcp_search", query="")
    assert found["ok"] and found["content"]["tools"] == [], found
    for tool in ("mcp_call", "mcp_describe"):
        refused = call(impl, agent, tool, name="notion__search_pages")
        assert refused["error_code"] == "MCP-SERVER-NOT-GRANTED", refused
        assert refused["error_message"] == (
            "MCP server 'notion' is not granted to this agent; it was not contacted. "
            "This agent is granted no MCP servers.")
        assert refused["error_detail"]["granted_servers"] == []
    assert journal(impl, "notion") == [] and journal(impl, "github") == []


@pytest.mark.case("mcp.scope.canonical-case")
@pytest.mark.req("MCP-01", "DEF-05")
def test_a_declaration_in_another_ascii_case_is_granted_under_the_configured_name(
        impl: Harness) -> None:
    """Bug: declarations compared exactly (`Notion` is unknown), or the grant keeps the
    declared spelling so the model is told a name no call can use."""
    standard_world(impl)
    source = agent_def(servers=["Notion"], tools="[read]")
    parsed = impl.parse(source)
    found = diagnostics_at(parsed, ["mcp", "servers", 0])
    assert [(d["code"], d["severity"]) for d in found] == [("MCP-SERVER-CANONICALIZED", "info")]
    parts = {p["kind"]: p["text"] for p in impl.prompt(source)["parts"]}
    assert parts["catalog.mcp"].endswith("\n- notion")
    agent = spawn(impl, source)
    refused = mcp_call(impl, agent, "github__delete_repo")
    assert refused["error_detail"]["granted_servers"] == [{"name": "notion", "status": "ready"}]
    assert mcp_call(impl, agent, "notion__search_pages", q="x")["ok"] is True
    assert mcp_call(impl, agent, "Notion__search_pages")["error_code"] == \
        "MCP-SERVER-NOT-GRANTED"  # N-3: the model's names stay exact


@pytest.mark.case("mcp.scope.unicode-look-alike-declaration")
@pytest.mark.req("MCP-01", "MCP-04")
def test_a_unicode_look_alike_declaration_is_unknown(impl: Harness) -> None:
    """Bug: declarations folded with Unicode case mapping or normalised (KELVIN SIGN,
    fullwidth letters), so a look-alike is granted."""
    setup(impl, kb=server(impl, "kb", NOTION_TOOLS))
    for declared in ("\u212ab", "\uff4b\uff42"):
        source = agent_def(servers=[declared], tools="[read]")
        parsed = impl.parse(source)
        assert [d["code"] for d in diagnostics_at(parsed, ["mcp", "servers", 0])] == [
            "MCP-UNKNOWN-SERVER"], declared
        assert "catalog.mcp" not in [p["kind"] for p in impl.prompt(source)["parts"]]


@pytest.mark.case("mcp.scope.duplicate-declaration")
@pytest.mark.req("MCP-01")
def test_a_server_declared_twice_is_granted_once(impl: Harness) -> None:
    """Bug: a duplicate is granted (and listed) twice, or dropped without a word."""
    standard_world(impl)
    source = agent_def(servers=["notion", "github", "NOTION"], tools="[read]")
    parsed = impl.parse(source)
    assert [d["code"] for d in diagnostics_at(parsed, ["mcp", "servers", 2])] == [
        "MCP-SERVER-DUPLICATE"]
    assert diagnostics_at(parsed, ["mcp", "servers", 0]) == []
    parts = {p["kind"]: p["text"] for p in impl.prompt(source)["parts"]}
    assert parts["catalog.mcp"] == "## MCP servers\n" + CATALOG_INTRO + "\n- github\n- notion"
    agent = spawn(impl, source)
    refused = mcp_call(impl, agent, "jira__x")
    assert refused["error_detail"]["granted_servers"] == [
        {"name": "github", "status": "ready"}, {"name": "notion", "status": "ready"}]


@pytest.mark.case("mcp.catalog.order-and-notes")
@pytest.mark.req("MCP-01", "MCP-04")
def test_catalog_lists_servers_in_code_point_order_with_their_notes(impl: Harness) -> None:
    """Bug: servers listed in declaration order, or a disabled / unconfigured server shown
    like a ready one (the model calls it and fails instead of telling the user)."""
    setup(impl,
          notion=server(impl, "notion", NOTION_TOOLS, description="Notion workspace pages"),
          crm=server(impl, "crm", GITHUB_TOOLS, enabled=False),
          sheets={"configured": False, "description": "Spreadsheets"},
          Zeta=server(impl, "Zeta", GITHUB_TOOLS))
    source = agent_def(servers=["sheets", "zeta", "notion", "crm"], tools="[read]")
    parts = {p["kind"]: p["text"] for p in impl.prompt(source)["parts"]}
    assert parts["catalog.mcp"] == "\n".join([
        "## MCP servers", CATALOG_INTRO,
        "- Zeta",
        "- crm (disabled: the user can enable it in settings)",
        "- notion: Notion workspace pages",
        "- sheets (not configured: the user can configure it in settings): Spreadsheets"])
    agent = spawn(impl, source)
    found = call(impl, agent, "mcp_search", query="")["content"]
    assert [t["name"] for t in found["tools"]] == [
        "Zeta__delete_repo", "notion__create_page", "notion__search_pages"]
    assert [(u["server"], u["status"]) for u in found["unavailable_servers"]] == [
        ("crm", "disabled"), ("sheets", "not-configured")]
    assert journal(impl, "crm") == []


def assert_github_refused_uncontacted(impl: Harness, refused: dict[str, Any]) -> None:
    """The MCP-02 refusal of `github` for an agent granted only `notion`: at once, with
    the granted list (exact message), terminal, and the server never contacted."""
    assert refused["ok"] is False and refused["error_code"] == "MCP-SERVER-NOT-GRANTED"
    assert refused["error_message"] == (
        "MCP server 'github' is not granted to this agent; it was not contacted. "
        "Granted MCP servers: notion.")
    assert refused["error_detail"]["granted_servers"] == [{"name": "notion", "status": "ready"}]
    assert refused["terminal_for_attempt"] is True
    assert journal(impl, "github") == []


# -- MCP-02 undeclared servers -------------------------------------------------------

@pytest.mark.case("mcp.refusal.lists-granted-servers")
@pytest.mark.req("MCP-02")
def test_undeclared_server_is_refused_with_the_granted_list(impl: Harness) -> None:
    """Bug: the call is forwarded to the server, or the refusal does not say what is
    granted so the model cannot recover."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    assert_github_refused_uncontacted(impl, mcp_call(impl, agent, "github__delete_repo"))
    assert tool_calls(impl, "notion") == []


@pytest.mark.req("MCP-02", "MCP-01")
@pytest.mark.parametrize("name", cases("mcp.refusal.hostile-name", [
    ("title-case", "Notion__search_pages"),
    ("upper-case", "NOTION__search_pages"),
    ("cyrillic-o", "n\u043etion__search_pages"),
    ("fullwidth", "\uff4e\uff4f\uff54\uff49\uff4f\uff4e__search_pages"),
    ("zero-width", "notion\u200b__search_pages"),
    ("leading-space", " notion__search_pages"),
    ("single-underscore", "notion_github__delete_repo"),
    ("undeclared", "github__delete_repo"),
]))
def test_case_games_and_look_alikes_are_not_granted(impl: Harness, name: str) -> None:
    """Bug: server names folded or normalised, so a variant reaches a server."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    refused = mcp_call(impl, agent, name)
    assert refused["error_code"] == "MCP-SERVER-NOT-GRANTED", refused
    assert refused["error_detail"]["granted_servers"] == [{"name": "notion", "status": "ready"}]
    assert tool_calls(impl, "notion") == [] and journal(impl, "github") == []


@pytest.mark.case("mcp.refusal.separator-injection")
@pytest.mark.req("MCP-02", "MCP-03")
def test_separator_injection_stays_on_the_named_server(impl: Harness) -> None:
    """Bug: the qualified name is split at the last `__`, so notion__github__x reaches
    github."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    result = mcp_call(impl, agent, "notion__github__delete_repo")
    assert result["error_code"] == "MCP-TOOL-NOT-FOUND"
    assert result["error_detail"]["server"] == "notion"
    assert journal(impl, "github") == [] and tool_calls(impl, "notion") == []


@pytest.mark.case("mcp.describe.granted-tool")
@pytest.mark.req("MCP-01", "MCP-03")
def test_describe_gives_the_schema_and_whether_the_tool_runs_directly(impl: Harness) -> None:
    """Bug: describe returns another tool's schema, or runs_directly ignores the
    allow-list."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    listed = call(impl, agent, "mcp_describe", name="notion__search_pages")
    assert listed == {"ok": True, "content": {
        "name": "notion__search_pages", "description": "Search Notion pages",
        "input_schema": NOTION_TOOLS[0]["inputSchema"], "runs_directly": True}}, listed
    created = call(impl, agent, "mcp_describe", name="notion__create_page")["content"]
    assert created["input_schema"] == NOTION_TOOLS[1]["inputSchema"]
    assert created["runs_directly"] is False
    assert tool_calls(impl, "notion") == []  # describing calls nothing


@pytest.mark.case("mcp.describe.undeclared-refused")
@pytest.mark.req("MCP-02")
def test_describe_of_an_undeclared_server_is_refused_uncontacted(impl: Harness) -> None:
    """Bug: describe goes through the shared gateway (lists the server's tools), even if
    calls are scoped."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    assert_github_refused_uncontacted(
        impl, call(impl, agent, "mcp_describe", name="github__delete_repo"))


@pytest.mark.req("MCP-02", "MCP-01")
@pytest.mark.parametrize("name", cases("mcp.describe.hostile-name", [
    ("title-case", "Notion__search_pages"),
    ("upper-case", "NOTION__search_pages"),
    ("kelvin", "\u212anotion__search_pages"),
    ("cyrillic-o", "n\u043etion__search_pages"),
    ("trailing-space", "notion __search_pages"),
]))
def test_describe_matches_server_names_exactly(impl: Harness, name: str) -> None:
    """Bug: describe folds or normalises server names although mcp_call does not."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    refused = call(impl, agent, "mcp_describe", name=name)
    assert refused["error_code"] == "MCP-SERVER-NOT-GRANTED", refused
    assert journal(impl, "notion") == [] and journal(impl, "github") == []


@pytest.mark.case("mcp.describe.not-configured")
@pytest.mark.req("MCP-04")
def test_describe_of_a_disabled_or_unconfigured_server_says_configure_it(
        impl: Harness) -> None:
    """Bug: describe contacts a disabled server anyway, or reports it as not granted."""
    setup(impl, sheets=server(impl, "sheets", GITHUB_TOOLS, enabled=False),
          crm={"configured": False})
    agent = spawn(impl, agent_def(servers=["sheets", "crm"], tools="[read]"))
    for qualified, state in (("sheets__delete_repo", "disabled"),
                             ("crm__delete_repo", "not-configured")):
        refused = call(impl, agent, "mcp_describe", name=qualified)
        assert refused["error_code"] == "MCP-NOT-CONFIGURED", refused
        assert refused["error_detail"]["status"] == state
        assert refused["terminal_for_attempt"] is True
        assert "settings" in refused["error_message"]
    assert journal(impl, "sheets") == []


@pytest.mark.req("MCP-01", "MCP-02")
@pytest.mark.parametrize("name", cases("mcp.name.invalid", [
    ("no-separator", "notion"), ("empty-server", "__search_pages"),
    ("empty-tool", "notion__"), ("not-a-string", 7)]))
def test_a_name_that_is_not_server__tool_is_invalid(impl: Harness, name: Any) -> None:
    """Bug: a bare or malformed name is routed somewhere (or crashes the gateway)."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    for tool in ("mcp_call", "mcp_describe"):
        result = call(impl, agent, tool, name=name)
        assert result["error_code"] == "MCP-NAME-INVALID", (tool, result)
    assert journal(impl, "notion") == [] and journal(impl, "github") == []


SEARCH_TOOLS: list[dict[str, Any]] = [
    {"name": "search_pages", "description": "Search Notion pages", "inputSchema": OBJ},
    {"name": "create_page", "description": "Create a Notion page", "inputSchema": OBJ},
    {"name": "bookmark_link", "description": "Save a link for later", "inputSchema": OBJ},
]


@pytest.mark.req("MCP-01")
@pytest.mark.parametrize("row", cases("mcp.search.query", [
    ("one-term", ("bookmark", ["notion__bookmark_link"])),
    ("all-terms", ("page CREATE", ["notion__create_page"])),
    ("name-or-description", ("notion__ later", ["notion__bookmark_link"])),
    ("no-match", ("create search", [])),
    ("unicode-space", ("create\u3000page", ["notion__create_page"])),
    ("ascii-fold-only", ("\u212a", [])),
    ("no-fullwidth-fold", ("\uff50\uff41\uff47\uff45", [])),
    ("blank", (" \t", ["notion__bookmark_link", "notion__create_page",
                        "notion__search_pages"])),
]))
def test_search_filters_by_every_term(impl: Harness, row: tuple[str, list[str]]) -> None:
    """Bug: the query is ignored (every tool listed), terms are ORed, split on ASCII
    spaces only, or folded with Unicode case mapping (KELVIN SIGN matches `k`)."""
    query, expected = row
    setup(impl, notion=server(impl, "notion", SEARCH_TOOLS))
    agent = spawn(impl, agent_def(servers=["notion"]))
    found = call(impl, agent, "mcp_search", query=query)
    assert found["ok"], found
    assert [t["name"] for t in found["content"]["tools"]] == expected, query


@pytest.mark.case("mcp.errors.tool-server-arguments")
@pytest.mark.req("MCP-03", "CALL-03")
def test_tool_errors_server_errors_and_bad_arguments_are_distinct(impl: Harness) -> None:
    """Bug: a tool's `isError` result is passed off as success, a JSON-RPC error is
    reported as a tool error (or breaks the connection), or non-object arguments are
    forwarded to the server."""
    tools = [
        {"name": "fails", "inputSchema": OBJ,
         "results": [{"content": [{"type": "text", "text": "no such page"}], "isError": True}]},
        {"name": "broken", "inputSchema": OBJ,
         "results": [{"error": {"code": -32603, "message": "kaput"}}]},
        {"name": "fine", "inputSchema": OBJ, "results": [{"text": "ok"}]},
    ]
    setup(impl, notion=server(impl, "notion", tools, allow=["fails", "broken", "fine"]))
    agent = spawn(impl, agent_def(servers=["notion"]))
    failed = mcp_call(impl, agent, "notion__fails")
    assert (failed["ok"], failed["error_code"]) == (False, "MCP-TOOL-ERROR"), failed
    assert "no such page" in failed["error_message"]
    broken = mcp_call(impl, agent, "notion__broken")
    assert broken["error_code"] == "MCP-SERVER-ERROR", broken
    assert broken["error_detail"]["rpc_code"] == -32603
    assert broken["terminal_for_attempt"] is False
    assert mcp_call(impl, agent, "notion__fine")["ok"] is True  # connection kept
    before = len(tool_calls(impl, "notion"))
    bad = call(impl, agent, "mcp_call", name="notion__fine", arguments=["x"])
    assert bad["error_code"] == "MCP-ARGUMENTS-INVALID", bad
    assert call(impl, agent, "mcp_search", query=5)["error_code"] == "MCP-ARGUMENTS-INVALID"
    assert len(tool_calls(impl, "notion")) == before


# -- MCP-03 allow-list and cards -----------------------------------------------------

@pytest.mark.case("mcp.allowlist.runs-directly")
@pytest.mark.req("MCP-03")
def test_allowlisted_tool_runs_without_a_card(impl: Harness) -> None:
    """Bug: every MCP call raises a card, or the allow-list is ignored."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    result = mcp_call(impl, agent, "notion__search_pages", q="roadmap")
    assert result["ok"], result
    assert result["content"]["content"] == [{"type": "text", "text": '{"q":"roadmap"}'}]
    assert tool_calls(impl, "notion") == [{"name": "search_pages",
                                           "arguments": {"q": "roadmap"}}]
    assert cards(impl) == []


@pytest.mark.case("mcp.offlist.card-then-call")
@pytest.mark.req("MCP-03", "APPR-02")
def test_offlist_tool_reaches_the_server_only_after_approval(impl: Harness) -> None:
    """Bug: the off-list tool runs before the user decides, or the card lacks origin."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    pending = mcp_call(impl, agent, "notion__create_page", title="Q3")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    card = pending["error_detail"]["card"]
    assert card["origin"] == {"agent_id": agent, "agent_name": "researcher", "subagent": True}
    assert (card["tool"], card["action"], card["state"]) == ("notion__create_page", "mcp",
                                                             "pending")
    assert card["summary"] == '{"title":"Q3"}'
    assert tool_calls(impl, "notion") == []
    decided = decide(impl, card["id"], "approve")
    assert decided["card"]["state"] == "approved"
    assert decided["result"] == {"ok": True, "content": {"content": [
        {"type": "text", "text": "created"}]}}
    assert tool_calls(impl, "notion") == [{"name": "create_page", "arguments": {"title": "Q3"}}]


@pytest.mark.case("mcp.offlist.denied-never-called")
@pytest.mark.req("MCP-03", "APPR-01")
def test_denied_offlist_tool_never_reaches_the_server(impl: Harness) -> None:
    """Bug: a denied card still lets the call through."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    card = mcp_call(impl, agent, "notion__create_page", title="x")["error_detail"]["card"]
    decided = decide(impl, card["id"], "deny")
    assert decided["result"]["error_code"] == "APPROVAL-DENIED"
    assert tool_calls(impl, "notion") == []


# -- MCP-04 disabled / unconfigured --------------------------------------------------

@pytest.mark.case("mcp.not-configured.mounts-with-diagnostic")
@pytest.mark.req("MCP-04")
def test_disabled_and_unconfigured_servers_mount_with_their_own_diagnostic(
        impl: Harness) -> None:
    """Bug: a disabled server is reported as non-existent (the model gives up instead of
    the user opening settings), or it is not mounted at all."""
    setup(impl, sheets=server(impl, "sheets", GITHUB_TOOLS, enabled=False),
          crm={"configured": False})
    source = agent_def(servers=["sheets", "crm", "jira"], tools="[read]")
    for mode in ("parse", "save"):
        result = impl.parse(source, mode=mode)
        assert [d["code"] for d in diagnostics_at(result, ["mcp", "servers", 0])] == [
            "MCP-NOT-CONFIGURED"]
        assert [d["code"] for d in diagnostics_at(result, ["mcp", "servers", 1])] == [
            "MCP-NOT-CONFIGURED"]
        assert [d["code"] for d in diagnostics_at(result, ["mcp", "servers", 2])] == [
            "MCP-UNKNOWN-SERVER"]
        assert "settings" in diagnostics_at(result, ["mcp", "servers", 1])[0]["message"]
    assert impl.save(source)["saved"]  # unknown names are kept and reported (DEF-06)
    names = [t["name"] for t in impl.mounted(source)["tools"]]
    assert "mcp_call" in names
    agent = spawn(impl, source)
    refused = mcp_call(impl, agent, "sheets__delete_repo")
    assert refused["error_code"] == "MCP-NOT-CONFIGURED"
    assert refused["error_detail"]["status"] == "disabled"
    assert journal(impl, "sheets") == []


# -- MCP-05 external systems ---------------------------------------------------------

@pytest.mark.case("mcp.external.not-knowledge")
@pytest.mark.req("MCP-05")
def test_external_system_declared_as_knowledge_points_to_mcp(impl: Harness) -> None:
    """Bug: an external system is silently accepted as a knowledge source."""
    standard_world(impl)
    source = ("name: k\ndescription: d\ntools: [read]\nknowledge:\n"
              "  - {name: notion, glob: ./docs/*.md}\n  - {name: docs, glob: ./docs/*.md}\n"
              "prompt: P.\n")
    parsed = impl.parse(source)
    assert "MCP-EXTERNAL-AS-KNOWLEDGE" in codes(parsed)
    located = [d for d in parsed["diagnostics"] if d["code"] == "MCP-EXTERNAL-AS-KNOWLEDGE"]
    assert [d["path"][:2] for d in located] == [["knowledge", 0]]
    assert "mcp.servers" in located[0]["message"]
    saved = impl.save(source)
    assert not saved["saved"]


# -- hostile servers -----------------------------------------------------------------

@pytest.mark.req("MCP-01", "MCP-02")
@pytest.mark.parametrize("fault", cases("mcp.hostile.server-fault", [
    (f, f) for f in ("hang", "die", "garbage", "oversized", "wrong_id")]))
def test_a_misbehaving_server_is_a_structured_error_and_widens_nothing(
        impl: Harness, fault: str) -> None:
    """Bug: a hung or dying server hangs the agent or crashes the implementation."""
    tools = [{"name": "search_pages", "inputSchema": OBJ, "results": [{"fault": fault}]}]
    setup(impl, notion=server(impl, "notion", tools, allow=["search_pages"]),
          github=server(impl, "github", GITHUB_TOOLS), timeout_ms=500)
    agent = spawn(impl, agent_def(servers=["notion"]))
    result = mcp_call(impl, agent, "notion__search_pages")
    assert result["ok"] is False
    assert result["error_code"] == "MCP-SERVER-UNAVAILABLE", result
    assert mcp_call(impl, agent, "github__delete_repo")["error_code"] == "MCP-SERVER-NOT-GRANTED"
    assert journal(impl, "github") == []


# -- APPR-01 one decision ------------------------------------------------------------

TIERS = ["confirm-before-change", "auto-within-workspace", "auto-edit", "full-access"]
ACTIONS = ["read", "write", "edit", "bash", "mcp", "config-tool"]
TARGETS = ["inside-workspace", "inside-writable-root", "outside"]


def expected_verdict(tier: str, action: str, target: str, attendance: str) -> str:
    """The table of SPEC.md restated as rules."""
    rank = TIERS.index(tier)
    if action == "config-tool":
        verdict = "ask"
    elif action == "read":
        verdict = "allow" if tier == "full-access" or target != "outside" else "ask"
    elif action == "mcp" or tier == "full-access":
        verdict = "allow" if tier == "full-access" else "ask"
    elif target == "inside-workspace":
        verdict = "allow" if rank >= 1 else "ask"
    elif target == "inside-writable-root" and action in ("write", "edit"):
        verdict = "allow" if rank >= 2 else "ask"
    else:
        verdict = "ask"
    return "deny" if verdict == "ask" and attendance == "unattended" else verdict


@pytest.mark.case("appr.table.every-cell")
@pytest.mark.req("APPR-01")
def test_every_cell_of_the_published_table(impl: Harness) -> None:
    """Bug: any cell of the decision table differs from SPEC.md."""
    wrong = []
    for tier, action, target, attendance in itertools.product(
            TIERS, ACTIONS, TARGETS, ["attended", "unattended"]):
        got = impl.driver.request("approval.decide", {
            "tier": tier, "action": action, "target": target, "attendance": attendance})
        want = expected_verdict(tier, action, target, attendance)
        if got["verdict"] != want or not got["reason"]:
            wrong.append((tier, action, target, attendance, got["verdict"], want))
    assert wrong == []


@pytest.mark.case("appr.table.allowlist-and-never-ask")
@pytest.mark.req("APPR-01", "MCP-03")
def test_allowlist_precedes_and_never_ask_follows_the_table(impl: Harness) -> None:
    """Bug: the allow-list is consulted only in some tiers, or never-ask still asks."""
    for tier in TIERS:
        allow = impl.driver.request("approval.decide", {
            "tier": tier, "action": "mcp", "allowlisted": True, "attendance": "unattended"})
        assert allow["verdict"] == "allow"
        pinned = impl.driver.request("approval.decide", {
            "tier": tier, "action": "config-tool", "ask_policy": "never-ask"})
        assert pinned["verdict"] == "deny"


@pytest.mark.case("appr.write.card-then-write")
@pytest.mark.req("APPR-01", "APPR-02")
def test_subagent_write_waits_for_the_parent(impl: Harness) -> None:
    """Bug: write taken from the parent's tool table without the approval hook, so a
    subagent with write silently escalates."""
    standard_world(impl)
    agent = spawn(impl, agent_def(name="writer"))
    pending = call(impl, agent, "write", path="notes.md", content="hello")
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    card = pending["error_detail"]["card"]
    assert card["origin"] == {"agent_id": agent, "agent_name": "writer", "subagent": True}
    assert (card["tool"], card["action"]) == ("write", "write")
    assert not (impl.workspace / "notes.md").exists()
    assert cards(impl) == [card]
    assert decide(impl, card["id"], "approve")["result"]["ok"] is True
    assert (impl.workspace / "notes.md").read_text() == "hello"


@pytest.mark.case("appr.tier.workspace-roots-outside")
@pytest.mark.req("APPR-01")
def test_tiers_distinguish_workspace_writable_roots_and_outside(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: the writable-roots list or the workspace boundary is ignored (a `..` path or a
    symlink counts as inside)."""
    root = tmp_path / "shared"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (impl.workspace / "link").symlink_to(outside)
    expectations = {
        "auto-within-workspace": {"a.txt": True, str(root / "b.txt"): False,
                                  "../outside/c.txt": False, "link/d.txt": False},
        "auto-edit": {"a.txt": True, str(root / "b.txt"): True,
                      "../outside/c.txt": False, "link/d.txt": False},
    }
    for tier, paths in expectations.items():
        standard_world(impl, tier=tier, roots=[str(root)])
        agent = spawn(impl, agent_def())
        for path, direct in paths.items():
            result = call(impl, agent, "write", path=path, content=tier)
            assert (result["ok"] is True) == direct, (tier, path, result)
            if not direct:
                assert result["error_code"] == "APPROVAL-PENDING"
    assert not (outside / "c.txt").exists() and not (outside / "d.txt").exists()


WIRING_POLICIES = [("confirm-before-change", "attended"), ("auto-within-workspace", "attended"),
                   ("auto-edit", "attended"), ("auto-edit", "unattended")]
GATED_TARGETS = {"read": TARGETS, "write": TARGETS, "edit": TARGETS, "bash": TARGETS}
"""bash is decided at its working directory (`cwd`)."""


def _wiring_call(impl: Harness, agent: str, action: str, directory: Path,
                 label: str) -> tuple[dict[str, Any], Any]:
    """One gated call landing in ``directory``; returns the result and a probe that
    says whether the call really took effect."""
    where = str(directory / f"{label}.txt")
    if action == "read":
        Path(where).write_text(f"secret {label}\n", encoding="utf-8")
        result = call(impl, agent, "read", path=where)
        return result, lambda r=result: r.get("ok") is True and f"secret {label}" in str(
            r["content"])
    if action == "write":
        result = call(impl, agent, "write", path=where, content=label)
        return result, lambda: Path(where).exists()
    if action == "edit":
        Path(where).write_text("old", encoding="utf-8")
        result = call(impl, agent, "edit", path=where, old="old", new="new")
        return result, lambda: Path(where).read_text(encoding="utf-8") == "new"
    result = call(impl, agent, "bash", command=f"echo {label}", cwd=str(directory))
    return result, lambda r=result: r.get("error_code") not in (
        "APPROVAL-PENDING", "APPROVAL-DENIED", "AGENT-STOPPED")


@pytest.mark.case("appr.wiring.builtin-calls-follow-the-table")
@pytest.mark.req("APPR-01")
def test_read_write_edit_bash_through_tool_call_follow_the_decision(
        impl: Harness, tmp_path: Path) -> None:
    """Bug: approval.decide answers the published table but the tools are wired to other
    rows (bash decided as a read, a read outside the workspace allowed, edit ungated)."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    wrong: list[tuple[str, ...]] = []
    for tier, attendance in WIRING_POLICIES:
        setup(impl, tier=tier, attendance=attendance, roots=[str(root)])
        agent = spawn(impl, agent_def(name="wired"))
        places = {"inside-workspace": impl.workspace, "inside-writable-root": root,
                  "outside": outside}
        for action, targets in GATED_TARGETS.items():
            for target in targets:
                label = f"{tier}-{attendance}-{action}-{target}"
                decided = impl.driver.request("approval.decide", {
                    "tier": tier, "action": action, "target": target,
                    "attendance": attendance})["verdict"]
                want = expected_verdict(tier, action, target, attendance)
                before = len(cards(impl))
                result, took_effect = _wiring_call(impl, agent, action, places[target], label)
                raised = cards(impl)[before:]
                if result.get("error_code") == "APPROVAL-PENDING":
                    got = "ask"
                elif result.get("error_code") == "APPROVAL-DENIED":
                    got = "deny"
                else:
                    got = "allow"
                effect = took_effect()
                consistent = (
                    (got == "allow" and effect and not raised)
                    or (got == "ask" and not effect and len(raised) == 1
                        and raised[0]["action"] == action and raised[0]["tool"] == action)
                    or (got == "deny" and not effect and not raised))
                if not (got == decided == want and consistent):
                    wrong.append((label, f"decide={decided}", f"table={want}",
                                  f"call={got}", f"effect={effect}", f"cards={len(raised)}"))
    assert wrong == []


@pytest.mark.case("appr.card.summary-jcs")
@pytest.mark.req("APPR-02")
def test_card_summary_is_rfc8785_canonical_json(impl: Harness) -> None:
    """Bug: the summary is the runtime's own JSON (Python's sorted json.dumps orders keys
    by code point and spells 1e16 as 1e+16; insertion order; spaces), so two conforming
    runtimes show the user different bytes."""
    standard_world(impl)
    agent = spawn(impl, agent_def(servers=["notion"]))
    arguments = {"title": "Q3", "\ue000": 0.5, "\U0001f600": [True, None], "n": 1e16,
                 "a": "\u00e9\n\"", "small": 1e-7, "b": {"z": 1, "y": -0.0}}
    pending = call(impl, agent, "mcp_call", name="notion__create_page", arguments=arguments)
    summary = pending["error_detail"]["card"]["summary"]
    assert summary == ('{"a":"\u00e9\\n\\"","b":{"y":0,"z":1},"n":10000000000000000,'
                       '"small":1e-7,"title":"Q3","\U0001f600":[true,null],"\ue000":0.5}')
    long = call(impl, agent, "write", path="long.txt", content="\u00e9" * 300)
    cut = long["error_detail"]["card"]["summary"]
    assert cut == ('{"content":"' + "\u00e9" * 188)[:200] + "..."
    assert len(cut) == 203


@pytest.mark.case("appr.unattended.denied-at-once")
@pytest.mark.req("APPR-01")
def test_unattended_session_denies_instead_of_asking(impl: Harness) -> None:
    """Bug: an unattended session raises cards nobody will ever answer."""
    standard_world(impl, attendance="unattended")
    agent = spawn(impl, agent_def(servers=["notion"]))
    for result in (call(impl, agent, "edit", path="a.md", old="x", new="y"),
                   call(impl, agent, "bash", command="rm -rf /"),
                   mcp_call(impl, agent, "notion__create_page", title="t")):
        assert result["error_code"] == "APPROVAL-DENIED", result
        assert result["terminal_for_attempt"] is True
    assert cards(impl) == []
    assert mcp_call(impl, agent, "notion__search_pages")["ok"] is True  # allow-list


@pytest.mark.case("appr.same-chain.main-and-mcp")
@pytest.mark.req("APPR-01", "APPR-02")
def test_write_and_mcp_cards_share_one_chain(impl: Harness) -> None:
    """Bug: MCP approvals and file approvals are separate queues with separate ids."""
    standard_world(impl)
    first = spawn(impl, agent_def(name="a", servers=["notion"]))
    second = spawn(impl, agent_def(name="b"))
    c1 = call(impl, first, "bash", command="make")["error_detail"]["card"]
    c2 = mcp_call(impl, first, "notion__create_page", title="t")["error_detail"]["card"]
    c3 = call(impl, second, "write", path="x", content="y")["error_detail"]["card"]
    listed = cards(impl)
    assert [c["id"] for c in listed] == [c1["id"], c2["id"], c3["id"]]
    assert len({c["id"] for c in listed}) == 3
    assert [c["origin"]["agent_name"] for c in listed] == ["a", "a", "b"]


# -- APPR-03 Task --------------------------------------------------------------------

@pytest.mark.case("appr.task.not-an-approval-item")
@pytest.mark.req("APPR-03")
def test_task_raises_no_card(impl: Harness) -> None:
    """Bug: Task is treated as a change and asks for approval."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    result = call(impl, agent, "Task", subagent="helper", prompt="look around")
    assert result.get("error_code") not in ("APPROVAL-PENDING", "APPROVAL-DENIED")
    assert cards(impl) == []


# -- APPR-04 suspension and TaskStop -------------------------------------------------

@pytest.mark.case("appr.taskstop.denies-owned-cards")
@pytest.mark.req("APPR-04")
def test_task_stop_settles_every_card_of_its_owner_as_denied(impl: Harness) -> None:
    """Bug: TaskStop leaves the cards pending (the call hangs) or settles other agents'."""
    standard_world(impl)
    bg = spawn(impl, agent_def(name="bg"), background=True)
    other = spawn(impl, agent_def(name="other"), background=True)
    assert status(impl, bg) == "running"
    c1 = call(impl, bg, "write", path="1", content="1")["error_detail"]["card"]
    c2 = call(impl, bg, "bash", command="make")["error_detail"]["card"]
    c3 = call(impl, other, "write", path="3", content="3")["error_detail"]["card"]
    assert status(impl, bg) == "suspended"
    stopped = impl.driver.request("task.stop", {"agent": bg})
    assert [c["id"] for c in stopped["settled"]] == [c1["id"], c2["id"]]
    assert {(c["state"], c["settled_by"]) for c in stopped["settled"]} == {
        ("denied", "task-stop")}
    assert [r["error_code"] for r in stopped["results"]] == ["APPROVAL-DENIED"] * 2
    by_id = {c["id"]: c for c in cards(impl)}
    assert by_id[c3["id"]]["state"] == "pending"
    assert not [c for c in by_id.values()
                if c["origin"]["agent_id"] == bg and c["state"] == "pending"]
    assert status(impl, bg) == "stopped" and status(impl, other) == "suspended"
    late = impl.driver.request_error("card.decide", {"card": c1["id"], "decision": "approve"})
    assert late["code"] == "CARD-ALREADY-SETTLED"
    assert not (impl.workspace / "1").exists()
    again = call(impl, bg, "write", path="4", content="4")
    assert again["ok"] is False and again["error_code"] == "AGENT-STOPPED"


@pytest.mark.case("appr.card.settles-once")
@pytest.mark.req("APPR-04", "APPR-02")
def test_a_card_is_settled_once(impl: Harness) -> None:
    """Bug: a second answer re-runs or flips a settled card."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    assert decide(impl, card["id"], "deny")["result"]["error_code"] == "APPROVAL-DENIED"
    error = impl.driver.request_error("card.decide", {"card": card["id"], "decision": "approve"})
    assert error["code"] == "CARD-ALREADY-SETTLED"
    assert not (impl.workspace / "n").exists()


# -- APPR-05 no live parent request --------------------------------------------------

@pytest.mark.case("appr.residual.pushed-when-live")
@pytest.mark.req("APPR-05")
def test_card_is_pushed_while_the_parent_request_is_live(impl: Harness) -> None:
    """Bug: a pushed card is delivered again by the next pull."""
    standard_world(impl)
    agent = spawn(impl, agent_def())
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    assert card["delivered"] == "pushed"
    assert impl.driver.request("snapshot.pull")["delivered"] == []


@pytest.mark.case("appr.residual.next-pull-exactly-once")
@pytest.mark.req("APPR-05")
def test_card_without_live_request_appears_at_the_next_pull_once(impl: Harness) -> None:
    """Bug: the card is pushed into the void (lost), or shown at every pull."""
    standard_world(impl)
    agent = spawn(impl, agent_def(), background=True)
    impl.driver.request("parent.request.end")
    card = call(impl, agent, "write", path="n", content="1")["error_detail"]["card"]
    assert card["delivered"] is None
    first = impl.driver.request("snapshot.pull")["delivered"]
    assert [c["id"] for c in first] == [card["id"]] and first[0]["delivered"] == "pulled"
    assert impl.driver.request("snapshot.pull")["delivered"] == []
    assert impl.driver.request("parent.request.start")["delivered"] == []


@pytest.mark.case("appr.residual.mount-pull")
@pytest.mark.req("APPR-05")
def test_the_next_parent_request_pulls_queued_cards(impl: Harness) -> None:
    """Bug: queued cards only ever show up when someone polls explicitly."""
    standard_world(impl)
    agent = spawn(impl, agent_def(), background=True)
    impl.driver.request("parent.request.end")
    c1 = call(impl, agent, "write", path="a", content="1")["error_detail"]["card"]
    c2 = call(impl, agent, "bash", command="ls")["error_detail"]["card"]
    started = impl.driver.request("parent.request.start")["delivered"]
    assert [c["id"] for c in started] == [c1["id"], c2["id"]]
    assert impl.driver.request("snapshot.pull")["delivered"] == []
