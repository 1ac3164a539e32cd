"""The pure parts of the adapter: the key table, the agent file, the framing, the world.
Each test names the adapter bug it is for."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from _driverkit.protocol import ProtoError, parse_line
from _driverkit.world import WorldInvalid
from capconf_opencode.definition import FRONT, auto_format, declared, translate
from capconf_opencode.vocabulary import AREA_TOOLS, FROM_OPENCODE, TO_OPENCODE, opencode_args
from capconf_opencode.world import parse_world


def _front(text: bytes) -> dict[str, object]:
    m = FRONT.match(text.decode())
    assert m, text
    loaded = yaml.safe_load(m.group(1))
    assert isinstance(loaded, dict)
    return loaded


def test_names_are_passed_as_written_never_repaired() -> None:
    """Bug: the adapter lower-cases `WEBFETCH` or maps it to `webfetch`, so OpenCode's
    own (case-sensitive) matching is never what is tested."""
    t = translate(b"name: f\ndescription: d\ntools: [WEBFETCH, Read, grep]\nprompt: P.\n",
                  "auto", None, 1)
    assert _front(t.text)["permission"] == {"*": "deny", "WEBFETCH": "allow", "Read": "allow",
                                            "grep": "allow"}
    assert t.declared_tools == ["WEBFETCH", "Read", "grep"]


def test_a_registry_name_is_translated_by_the_table_and_only_it() -> None:
    """Bug: capconf's own spelling of a tool (`WebFetch`, `Task`) reaches OpenCode as a
    rule no OpenCode tool id matches, so the suite's canonical grant of the web fetch tool
    tests the adapter's vocabulary, not OpenCode; or the table also catches `webfetch`
    or `WEBFETCH`, which must meet OpenCode's own matching as written."""
    t = translate(b"name: f\ndescription: d\ntools: [WebFetch, Task, WEBFETCH, read]\n"
                  b"prompt: P.\n", "auto", None, 1)
    assert _front(t.text)["permission"] == {"*": "deny", "webfetch": "allow", "task": "allow",
                                            "WEBFETCH": "allow", "read": "allow"}
    assert t.declared_tools == ["WebFetch", "Task", "WEBFETCH", "read"]


def test_the_yaml_prompt_becomes_the_body_and_other_keys_pass_through() -> None:
    """Bug: unknown keys are dropped before OpenCode sees them."""
    t = translate(b"name: f\ndescription: d\ncolor: red\nprompt: Be brief.\n", "yaml", None, 1)
    front = _front(t.text)
    assert front["color"] == "red" and front["mode"] == "subagent" and "prompt" not in front
    assert t.text.decode().endswith("---\nBe brief.")
    assert t.stem == "f"


def test_markdown_keeps_its_body_and_a_comma_string_is_a_list() -> None:
    t = translate(b"---\nname: r\ndescription: d\ntools: Read, Grep\n---\nReview.\n",
                  "auto", "r.md", 1)
    assert _front(t.text)["permission"] == {"*": "deny", "Read": "allow", "Grep": "allow"}
    assert t.text.decode().endswith("---\nReview.\n")
    assert declared(" a , b,,c ") == ["a", "b", "c"]


def test_only_spaces_and_tabs_are_trimmed_from_a_declared_name() -> None:
    """Bug: the adapter trimmed names with Python's `strip`, so `"\u00a0read"` reached
    OpenCode as the rule `read: allow` and was granted: the adapter repaired a name
    capconf (TOOL-02) and OpenCode both take as written."""
    t = translate(b'name: x\ndescription: y\ntools: ["\\u00A0read", "\\u3000write", '
                  b'" grep\\t"]\nprompt: Go.\n', "auto", None, 1)
    assert _front(t.text)["permission"] == {"*": "deny", "\u00a0read": "allow",
                                            "\u3000write": "allow", "grep": "allow"}
    assert declared("Grep,\u00a0Read") == ["Grep", "\u00a0Read"]
    t = translate(b'name: x\ndescription: y\nskills: [" pdf\\t", "\\u3000pdf"]\n'
                  b'prompt: Go.\n', "auto", None, 2)
    assert _front(t.text)["permission"]["skill"] == {"*": "deny", "pdf": "allow",
                                                     "\u3000pdf": "allow"}


def test_auto_format_follows_capconf_rule_and_a_yaml_marker_is_no_key() -> None:
    """Bug: with no file name every document opening with `---` was taken for Markdown,
    so a YAML document with its start marker (and no later `---` line) reached OpenCode
    as a file of no front matter (DEF-01's auto rule); and the YAML form's own marker
    stayed inside the front matter, closing it at once."""
    doc = "---\nname: marked\ndescription: d\ntools: [read]\nprompt: Work.\n"
    assert auto_format(doc, None) == "yaml"
    assert auto_format("---\nname: m\n---\nBody.\n", None) == "markdown"
    assert auto_format("---\rname: m\r---\rBody.\r", None) == "markdown"
    assert auto_format(doc, "a.md") == "markdown" and auto_format("x: 1\n", "a.MARKDOWN") \
        == "markdown"
    assert auto_format("---\nname: m\n---\nBody.\n", "a.yml") == "yaml"
    t = translate(doc.encode(), "auto", None, 1)
    assert t.fmt == "yaml" and t.stem == "marked"
    assert _front(t.text)["permission"] == {"*": "deny", "read": "allow"}
    assert t.text.decode().startswith("---\nname: marked\n")
    assert t.text.decode().endswith("---\nWork.")


def test_a_leading_bom_stays_first_and_never_joins_a_key() -> None:
    """Bug: a YAML document's BOM was moved inside the front matter (`---` then
    `\\ufeffname:`), so OpenCode read a key `\\ufeffname`; a Markdown file's BOM hid its
    front matter from the adapter, so `tools` reached OpenCode untranslated. Both came
    from the adapter, never from OpenCode."""
    for source in (b"\xef\xbb\xbfname: b\ndescription: d\ntools: [read]\nprompt: W.\n",
                   b"\xef\xbb\xbf---\nname: b\ndescription: d\ntools: [read]\n---\nW.\n"):
        t = translate(source, "auto", None, 1)
        assert t.text.startswith(b"\xef\xbb\xbf---\n"), t.text
        front = _front(t.text[3:])
        assert "name" in front and "tools" not in front, front
        assert front["permission"] == {"*": "deny", "read": "allow"}


def test_a_document_the_adapter_cannot_read_still_goes_to_opencode() -> None:
    """Bug: the adapter refuses a broken document itself instead of letting OpenCode's
    loader decide."""
    t = translate(b"name: [unclosed\n", "yaml", None, 7)
    assert t.mapping is None and t.stem == "agent-7" and b"[unclosed" in t.text


def test_an_unsafe_name_does_not_become_a_path() -> None:
    t = translate(b"name: ../../etc/x\ndescription: d\nprompt: P.\n", "yaml", None, 3)
    assert t.stem == "agent-3"


def test_the_table_is_one_to_one_and_renames_argument_keys_only() -> None:
    assert {v: k for k, v in FROM_OPENCODE.items()} == {**TO_OPENCODE, **AREA_TOOLS}
    assert opencode_args("write", {"path": "a", "content": "b", "extra": 1}) == {
        "filePath": "a", "content": "b", "extra": 1}


@pytest.mark.parametrize("line, code, rid", [
    (b"{not json", "bad_json", None), (b"\xff", "bad_json", None),
    (b'{"id": 1, "op": "x", "args": {"a": NaN}}', "bad_json", None),
    (b"[1]", "bad_request", None), (b'{"id": "1", "op": "x"}', "bad_request", None),
    (b'{"id": 3, "args": {}}', "bad_request", 3),
    (b'{"id": 4, "op": "x", "args": {"s": "\\ud800"}}', "bad_request", 4),
])
def test_malformed_lines_get_the_proto03_code(line: bytes, code: str, rid: int | None) -> None:
    with pytest.raises(ProtoError) as e:
        parse_line(line)
    assert (e.value.code, e.value.response()["id"]) == (code, rid)


def test_deep_nesting_is_refused_with_the_request_id() -> None:
    line = json.dumps({"id": 9, "op": "x", "args": {"a": [[[[[[[[[[]]]]]]]]]] * 1}})
    assert parse_line(line.encode())[0] == 9
    deep: object = []
    for _ in range(70):
        deep = [deep]
    with pytest.raises(ProtoError) as e:
        parse_line(json.dumps({"id": 9, "op": "x", "args": {"a": deep}}).encode())
    assert (e.value.code, e.value.rid) == ("bad_request", 9)


def test_world_arguments_are_validated_with_paths(tmp_path: Path) -> None:
    with pytest.raises(WorldInvalid) as e:
        parse_world({"workspace": str(tmp_path), "grantable": ["read", "WebFetch", "webfetch"]})
    assert e.value.path == ["args", "grantable", 2]
    with pytest.raises(WorldInvalid) as e:
        parse_world({"workspace": str(tmp_path), "grantable_tools": []})
    assert e.value.path == ["args", "grantable_tools"]
    world = parse_world({"workspace": str(tmp_path), "grantable": ["read", "write"],
                         "session_tools": ["read"]})
    rules = world.config()["permission"]
    assert rules["write"] == "deny" and rules["todowrite"] == "deny" and "read" not in rules


def test_scalars_reach_opencode_as_written_not_as_the_adapter_reads_them() -> None:
    """Bug: the adapter re-dumps the front matter through a YAML 1.1 reader, so `yes`
    reaches OpenCode as `true` and `017` as `15`: OpenCode's own reader is never tested."""
    src = (b"name: a\ndescription: d\nflag: yes\noctal: 017\ntools:\n  - read\n"
           b"prompt: |\n  One.\n  Two.\nwhen: 2024-01-01\n")
    text = translate(src, "yaml", None, 1).text.decode()
    assert "flag: yes\noctal: 017\nwhen: 2024-01-01\n" in text
    assert "tools" not in text and "prompt" not in text
    assert text.endswith("---\nOne.\nTwo.\n")


def test_a_placeholder_binary_is_not_the_runtime(tmp_path: Path) -> None:
    """Bug: after `npm ci --ignore-scripts` the driver ran opencode-ai's placeholder
    `opencode.exe` (Exec format error) instead of the platform package's binary."""
    from capconf_opencode.runtime import is_native
    placeholder = tmp_path / "opencode.exe"
    placeholder.write_text('echo "Error: opencode-ai\'s postinstall script was not run." >&2\n')
    elf = tmp_path / "opencode"
    elf.write_bytes(b"\x7fELF\x02\x01\x01" + b"\x00" * 16)
    assert not is_native(placeholder) and is_native(elf)
    assert not is_native(tmp_path / "missing")
