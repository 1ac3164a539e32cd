"""The vocabulary of the adapter: definitions -> role files, capconf names -> Codex's.
Each test would fail for a translation that decides instead of translating (a key
dropped or invented, a name repaired)."""

import tomllib

from capconf_codex.role import translate
from capconf_codex.vocabulary import capconf_names, codex_args, codex_tool


def role(src: str, servers: dict | None = None):
    return translate(src.encode(), "auto", None, 1, servers or {})


def test_body_becomes_developer_instructions_and_keys_pass_as_written():
    r = role("---\nname: rev\ndescription: d\ncolour: red\n---\nBody line.\n")
    doc = tomllib.loads(r.toml)
    assert doc == {"name": "rev", "description": "d", "colour": "red",
                   "developer_instructions": "Body line.\n"}
    assert r.agent_type == "rev"


def test_keys_without_a_codex_counterpart_are_not_written():
    r = role("name: a\ndescription: d\ntools: [bash]\nskills: [s]\nmemory: user\n"
             "knowledge: []\nprompt: p\n")
    assert tomllib.loads(r.toml) == {"name": "a", "description": "d",
                                     "developer_instructions": "p"}
    assert r.declared_tools == ["bash"]


def test_declared_mcp_server_carries_the_world_settings():
    r = role("name: a\ndescription: d\nmcp: {servers: [notion]}\nprompt: p\n",
             {"notion": {"command": "/bin/x", "args": ["-v"]}})
    assert tomllib.loads(r.toml)["mcp_servers"] == {"notion": {"command": "/bin/x",
                                                               "args": ["-v"]}}


def test_alias_bomb_is_not_expanded():
    pairs = zip("abcdefg", "bcdefgh", strict=True)
    bomb = "a: &a [1,1,1,1,1,1,1,1,1,1]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in pairs)
    r = role(bomb + "name: x\ndescription: d\nprompt: p\n")
    assert not r.readable


def test_tool_table_and_as_written():
    assert codex_tool("bash") == (None, "exec_command")
    assert codex_tool("Task") == ("multi_agent_v1", "spawn_agent")
    assert codex_tool("BASH") == (None, "BASH")  # no repair of a spelling
    assert codex_tool("mcp__notion__search") == ("mcp__notion", "search")
    assert capconf_names(None, "apply_patch") == ("write", "edit")
    assert capconf_names(None, "web_search") == ("web_search",)
    assert codex_args("exec_command", "bash", {"command": "ls"}) == {"cmd": "ls"}


def test_a_leading_bom_is_carried_to_the_role_file_never_into_a_key():
    """Bug: a Markdown definition starting with a BOM had no front matter for the
    adapter, so no role file was written and Codex answered `unknown agent_type`; the
    BOM belongs at the start of the file Codex reads, where Codex's TOML reader decides."""
    for src in (b"\xef\xbb\xbfname: b\ndescription: d\nprompt: W.\n",
                b"\xef\xbb\xbf---\nname: b\ndescription: d\n---\nW.\n"):
        role = translate(src, "auto", None, 1, {})
        assert role.readable and role.toml.startswith("\ufeff")
        loaded = tomllib.loads(role.toml.removeprefix("\ufeff"))
        assert loaded["name"] == "b" and loaded["developer_instructions"].strip() == "W."
