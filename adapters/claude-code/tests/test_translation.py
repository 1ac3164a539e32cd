"""The vocabulary tables and the definition translation, without Claude Code: each test
names the bug a wrong translation would be."""

from __future__ import annotations

import json

from capconf_claude.definition import translate
from capconf_claude.driver import envelope
from capconf_claude.observe import listed_tools, split_description
from capconf_claude.vocabulary import capconf_name, claude_args, claude_name


def front(text: bytes) -> dict[str, object]:
    head = text.decode().split("\n---", 1)[0].removeprefix("---\n")
    return {json.loads(k): json.loads(v) for k, v in
            (line.split(": ", 1) for line in head.splitlines())}


def test_registry_names_are_translated_and_every_other_spelling_is_kept() -> None:
    """Bug: the adapter folds `READ` or `webfetch` itself, so Claude Code's own exact
    matching is never tested."""
    t = translate(b"---\nname: w\ndescription: d\ntools: read, READ, webfetch, Task, X\n"
                  b"---\nBody\n", "auto", None, 1)
    assert front(t.text)["tools"] == "Read, READ, webfetch, Agent, X"
    assert t.declared_tools == ["read", "READ", "webfetch", "Task", "X"]


def test_whitespace_around_a_name_is_kept_as_written() -> None:
    """Bug: the adapter trims a no-break space, hiding how Claude Code trims names."""
    t = translate("---\nname: w\ndescription: d\ntools: grep,\u00a0read\n---\nB\n".encode(),
                  "auto", None, 1)
    assert front(t.text)["tools"] == "Grep,\u00a0read"


def test_yaml_form_becomes_markdown_with_the_prompt_as_body() -> None:
    t = translate(b"name: w\ndescription: d\ntools: [read]\nmemory: private\n"
                  b"mcp: {servers: [crm]}\nprompt: Do it.\n", "auto", "w.yaml", 1)
    fm = front(t.text)
    assert fm == {"name": "w", "description": "d", "tools": ["Read"], "memory": "local",
                  "mcpServers": ["crm"]}
    assert t.text.decode().endswith("---\nDo it.") and t.form == "yaml"


def test_yaml_1_1_words_stay_text() -> None:
    """Bug: `tools: [on, yes]` becomes booleans in the adapter, not in Claude Code."""
    t = translate(b"---\nname: w\ndescription: d\ntools: [on, yes, 017]\n---\nB\n",
                  "auto", None, 1)
    assert front(t.text)["tools"] == ["on", "yes", "017"]


def test_an_alias_is_never_expanded_by_the_adapter() -> None:
    """Bug: the adapter constructs an alias bomb and runs out of memory before Claude
    Code sees the file."""
    src = b"---\nname: w\na: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n---\nB\n"
    t = translate(src, "auto", None, 1)
    assert t.text == src and t.declared_tools is None


def test_an_unreadable_front_matter_reaches_claude_code_unchanged() -> None:
    src = b"---\nname: [unclosed\n---\nB\n"
    assert translate(src, "auto", None, 1).text == src


def test_tool_names_and_arguments_map_by_the_table_only() -> None:
    assert claude_name("read") == "Read" and claude_name("Task") == "Agent"
    assert claude_name("use_skill") == "Skill" and claude_name("mcp__a__b") == "mcp__a__b"
    assert claude_name("Read") == "Read" and claude_name("WEBFETCH") == "WEBFETCH"
    assert capconf_name("Agent") == "Task" and capconf_name("Monitor") == "Monitor"
    assert claude_args("Edit", {"path": "a.txt", "old": "x", "new": "y"}, "/ws") == {
        "file_path": "/ws/a.txt", "old_string": "x", "new_string": "y"}
    assert claude_args("Read", {"path": "/abs/b"}, "/ws") == {"file_path": "/abs/b"}


def test_claude_code_listing_is_read_back() -> None:
    assert listed_tools("does work (Tools: Read, Agent, mcp__a__b)") == [
        "read", "Task", "mcp__a__b"]
    assert listed_tools("does work (Tools: All tools)") is None
    assert split_description("does work (Tools: *)") == "does work"


def test_envelope_codes_come_only_from_claude_code_signals() -> None:
    """Bug: an error the adapter cannot classify gets a made-up capconf code."""
    missing = {"is_error": True, "content": "<tool_use_error>Error: No such tool "
               "available: Write.</tool_use_error>"}
    assert envelope("write", missing, ["read"])["error_code"] == "tool_not_mounted"
    denied = {"is_error": True, "content": "Permission to use Write has been denied."}
    assert envelope("write", denied, [])["error_code"] == "APPROVAL-DENIED"
    other = {"is_error": True, "content": "File does not exist."}
    e = envelope("read", other, [])
    assert e["error_code"] == "tool_use_error" and e["error_message"] == "File does not exist."
    assert envelope("read", {"content": "1\thi"}, []) == {"ok": True, "content": "1\thi"}


def test_a_bom_and_line_ends_reach_claude_code_as_written() -> None:
    """Bug: the adapter dropped a leading BOM and turned CRLF and CR into LF, so how
    Claude Code reads such a file was never what a case saw (bom-first-key and
    bom-and-crlf passed on the adapter's repair)."""
    crlf = translate(b"\xef\xbb\xbf---\r\nname: b\r\ndescription: d\r\n---\r\nOne.\r\nTwo.\r\n",
                     "auto", None, 1)
    assert crlf.text.startswith(b"\xef\xbb\xbf---\r\n") and b"One.\r\nTwo.\r\n" in crlf.text
    assert b"\n" not in crlf.text.replace(b"\r\n", b"")
    yaml_lf = translate(b"\xef\xbb\xbfname: b\ndescription: d\nprompt: W.\n", "auto", None, 1)
    assert yaml_lf.text.startswith(b"\xef\xbb\xbf---\n") and b"\r" not in yaml_lf.text
    mixed = translate(b"---\nname: m\ndescription: d\n---\nOne.\rTwo.\r\nThree.\n", "auto", None, 1)
    assert mixed.text.endswith(b"---\nOne.\rTwo.\r\nThree.\n")  # the body byte for byte
