"""The MCP vocabulary (capconf_opencode/mcp.py and where it is used): pure translation, no
OpenCode. Each test names the adapter bug it catches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from _driverkit.world import WorldInvalid
from capconf_opencode.approval import Card
from capconf_opencode.approval_ops import envelope
from capconf_opencode.definition import FRONT, normalised, translate
from capconf_opencode.mcp import opencode_call, parse_mcp_world, session_rules, tool_id
from capconf_opencode.world import parse_world


def front(text: bytes) -> dict[str, Any]:
    m = FRONT.match(text.decode())
    assert m is not None
    loaded = yaml.safe_load(m.group(1))
    assert isinstance(loaded, dict)
    return loaded


def server(**entry: Any) -> dict[str, Any]:
    return {"command": "/usr/bin/python3", "args": ["-m", "fake", "/ws/n.json"], **entry}


def test_world_servers_become_local_servers_of_the_project_config(tmp_path: Path) -> None:
    """Catches a server dropped, its arguments split from its command, `env` not said as
    OpenCode's `environment`, `cwd` left relative to OpenCode's directory instead of the
    workspace, or the world's timeout not passed on."""
    world = parse_world({"workspace": str(tmp_path), "mcp": {
        "mcpServers": {"notion": server(env={"A": "1"}, cwd="sub", allow=["search_pages"],
                                        description="Notion pages"),
                       "crm": server(enabled=False)},
        "timeout_ms": 3000}})
    assert world.config()["mcp"] == {
        "crm": {"type": "local", "command": ["/usr/bin/python3", "-m", "fake", "/ws/n.json"],
                "cwd": str(tmp_path.resolve()), "enabled": False, "timeout": 3000},
        "notion": {"type": "local",
                   "command": ["/usr/bin/python3", "-m", "fake", "/ws/n.json"],
                   "cwd": str((tmp_path / "sub").resolve()), "enabled": True,
                   "timeout": 3000, "environment": {"A": "1"}}}


def test_an_unconfigured_server_is_not_written(tmp_path: Path) -> None:
    """Catches an unconfigured server written as a launchable one (OpenCode has no
    "not configured" state: such a server is not in its config at all); the list form is
    read like the named one."""
    world = parse_world({"workspace": str(tmp_path), "mcp": {"servers": [
        {"name": "crm", "configured": False}, {"name": "notion", **server()}]}})
    assert list(world.config()["mcp"]) == ["notion"]


def test_a_world_without_servers_writes_no_mcp_table(tmp_path: Path) -> None:
    """Catches an empty `mcp` table written into every world's config."""
    assert "mcp" not in parse_world({"workspace": str(tmp_path)}).config()
    assert "mcp" not in parse_world({"workspace": str(tmp_path),
                                     "mcp": {"mcpServers": {}}}).config()


@pytest.mark.parametrize(("mcp", "path"), [
    ({"mcpServers": {"a__b": {}}}, ["args", "mcp", "mcpServers", "a__b"]),
    ({"mcpServers": {"crm_": {}}}, ["args", "mcp", "mcpServers", "crm_"]),
    ({"mcpServers": {"Crm": {}, "crm": {}}}, ["args", "mcp", "mcpServers", "crm"]),
    ({"mcpServers": {"x": {"url": "https://x"}}}, ["args", "mcp", "mcpServers", "x", "url"]),
    ({"mcpServers": {"x": {"args": "-m"}}}, ["args", "mcp", "mcpServers", "x", "args"]),
    ({"mcpServers": {"x": {"allow": ["a b"]}}},
     ["args", "mcp", "mcpServers", "x", "allow", 0]),
    ({"servers": [{"command": "x"}]}, ["args", "mcp", "servers", 0]),
    ({"servers": [], "mcpServers": {}}, ["args", "mcp", "servers"]),
    ({"timeout_ms": 0}, ["args", "mcp", "timeout_ms"]),
    ({"other": 1}, ["args", "mcp", "other"]),
    ([], ["args", "mcp"]),
])
def test_a_bad_mcp_world_is_refused_with_its_path(tmp_path: Path, mcp: Any,
                                                  path: list[Any]) -> None:
    """Catches a bad server table accepted (OpenCode would then refuse the whole project
    config, or launch a look-alike) instead of PROTO-02's located refusal."""
    with pytest.raises(WorldInvalid) as e:
        parse_mcp_world(mcp, tmp_path)
    assert e.value.path == path


def test_declared_servers_become_allow_rules_after_the_tools_deny() -> None:
    """Catches `mcp.servers` left as an unknown key (OpenCode would grant no MCP tool),
    a name folded (`Github` must reach OpenCode as written), or the rule placed before
    `"*": deny` (OpenCode's last matching rule wins, so it would be denied again)."""
    t = translate(b"name: a\ndescription: d\ntools: [read]\nmcp:\n  servers: [notion, Github]\n"
                  b"prompt: Work.\n", "yaml", None, 1)
    fm = front(t.text)
    assert list(fm["permission"].items()) == [
        ("*", "deny"), ("read", "allow"), ("notion_*", "allow"), ("Github_*", "allow")]
    assert "mcp" not in fm
    assert normalised(t, {"name": "a"})["mcp"] == {"servers": ["notion", "Github"]}


@pytest.mark.parametrize("value", ["mcp: {servers: []}", "mcp: {}"])
def test_no_declared_server_adds_no_rule(value: str) -> None:
    """Catches an empty declaration granting something (PROMPT-03: empty is undeclared)."""
    t = translate(f"name: a\ndescription: d\ntools: [read]\n{value}\nprompt: W.\n".encode(),
                  "yaml", None, 1)
    assert front(t.text)["permission"] == {"*": "deny", "read": "allow"}


def test_an_mcp_value_of_another_shape_reaches_opencode_as_written() -> None:
    """Catches the adapter reading `mcp: [a]` (not capconf's mapping) as a grant."""
    t = translate(b"name: a\ndescription: d\ntools: [read]\nmcp: [notion]\nprompt: W.\n",
                  "yaml", None, 1)
    fm = front(t.text)
    assert fm["mcp"] == ["notion"]
    assert fm["permission"] == {"*": "deny", "read": "allow"}


@pytest.mark.parametrize(("args", "call"), [
    ({"name": "notion__search_pages", "arguments": {"q": "x"}},
     ("notion_search_pages", {"q": "x"})),
    ({"name": "notion__search_pages"}, ("notion_search_pages", {})),
    ({"name": "notion__x", "arguments": None}, ("notion_x", None)),
    ({"name": "notion__github__delete_repo"}, ("notion_github__delete_repo", {})),
    ({"name": "crm-eu__a.b"}, ("crm-eu_a_b", {})),
    ({"name": "Notion__search_pages"}, ("Notion_search_pages", {})),
    ({"name": "n\u043etion__search_pages"}, ("n\u043etion_search_pages", {})),
    ({"name": "notion\u200b__search_pages"}, ("notion\u200b_search_pages", {})),
])
def test_mcp_call_is_the_model_calling_opencodes_own_tool(args: dict[str, Any],
                                                          call: tuple[str, Any]) -> None:
    """Catches a split at the last `__` (SPEC N-3: the first), arguments wrapped in
    capconf's envelope, `arguments: null` turned into `{}`, or a model's look-alike name
    folded or sanitised into a name OpenCode has (only a capconf-valid name is spelled
    the way OpenCode spells its tool ids)."""
    assert opencode_call("mcp_call", args) == call


@pytest.mark.parametrize("name", ["notion", "__search_pages", "notion__", 7])
def test_a_name_that_is_not_server__tool_reaches_opencode_as_written(name: Any) -> None:
    assert opencode_call("mcp_call", {"name": name}) is None
    assert opencode_call("mcp_search", {"query": "x"}) is None


def test_tool_ids_follow_opencodes_spelling() -> None:
    assert tool_id("crm.eu", "find it") == "crm_eu_find_it"


def test_session_rules_ask_for_offered_off_list_tools_only(tmp_path: Path) -> None:
    """Catches an ask rule for a tool OpenCode did not offer (a session rule merged last
    would re-grant it), an `allow` rule (the table never allows), an allow-listed tool
    asked, or an ask under full-access (capconf's MCP cell there is allow)."""
    world = parse_mcp_world({"mcpServers": {
        "notion": server(allow=["search_pages"]), "github": server()}}, tmp_path)
    offered = ["read", "notion_search_pages", "notion_create_page", "notion_Search_Pages"]
    rules = session_rules(world, "confirm-before-change", offered, {"read"})
    assert rules == [{"permission": "notion_create_page", "pattern": "*", "action": "ask"},
                     {"permission": "notion_Search_Pages", "pattern": "*", "action": "ask"}]
    assert session_rules(world, "full-access", offered, {"read"}) == []
    assert session_rules(None, "confirm-before-change", offered, {"read"}) == []


def test_an_mcp_card_names_the_mcp_tool_and_its_arguments() -> None:
    """Catches a card saying `mcp_call` with the wrapper's arguments (MCP-03: the card is
    about `notion__create_page`, action `mcp`, summary `{"title":"Q3"}`)."""
    card = Card({"id": "per_1", "permission": "notion_create_page", "patterns": ["*"]},
                "agent-1", "researcher", "mcp_call",
                {"name": "notion__create_page", "arguments": {"title": "Q3"}}, "ses", None,
                label="notion__create_page", action="mcp", summarised={"title": "Q3"})
    shown = card.json()
    assert (shown["tool"], shown["action"], shown["summary"]) == (
        "notion__create_page", "mcp", '{"title":"Q3"}')


def part(tool: str, **state: Any) -> dict[str, Any]:
    return {"type": "tool", "tool": tool, "state": state}


def test_a_completed_mcp_call_carries_opencodes_text_as_a_text_block() -> None:
    result = envelope("mcp_call", "notion_search_pages", ["notion_search_pages"],
                      part("notion_search_pages", status="completed", output='{"q":"r"}'))
    assert result["ok"] is True
    assert result["content"]["content"] == [{"type": "text", "text": '{"q":"r"}'}]


def test_a_call_opencode_repaired_to_another_tool_is_what_that_tool_did() -> None:
    """Catches the adapter answering `tool_not_mounted` for a call OpenCode ran: its
    tool-call repair runs `Notion_search_pages` as the offered `notion_search_pages`, so
    the server was called and the answer must say so."""
    result = envelope("mcp_call", "Notion_search_pages", ["notion_search_pages"],
                      part("notion_search_pages", status="completed", output="found"))
    assert result["ok"] is True
    assert result["content"]["opencode_tool"] == "notion_search_pages"
    assert result["content"]["opencode_called"] == "Notion_search_pages"
    missing = envelope("mcp_call", "github_delete_repo", ["notion_search_pages"],
                       part("invalid", status="completed", output="unavailable tool"))
    assert missing["error_code"] == "tool_not_mounted"
    assert "github_delete_repo" in missing["error_message"]
    # OpenCode 1.18.33 stores such a call under the name called, with its error text
    unknown = envelope("mcp_search", "mcp_search", ["notion_search_pages"],
                       part("mcp_search", status="error",
                            error="Model tried to call unavailable tool 'invalid'."))
    assert unknown["error_code"] == "tool_not_mounted"


def test_a_card_summary_is_rfc_8785_text() -> None:
    """Catches Python's own JSON as the summary (code-point key order, `1e+16`, `-0.0`,
    `1e-07`): two conforming runtimes must show the user the same bytes (APPR-02)."""
    from capconf_opencode.approval import summary
    args = {"a": "\u00e9\n\"", "b": {"y": -0.0, "z": 1}, "n": 1e16, "small": 1e-7,
            "title": "Q3", "\ue000": 0.5, "\U0001f600": [True, None]}
    assert summary(args) == ('{"a":"\u00e9\\n\\"","b":{"y":0,"z":1},"n":10000000000000000,'
                             '"small":1e-7,"title":"Q3","\U0001f600":[true,null],"\ue000":0.5}')
    assert summary({"x": "y" * 300}).endswith("...")
    assert len(summary({"x": "y" * 300})) == 203
