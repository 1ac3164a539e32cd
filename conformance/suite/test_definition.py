"""Bad input: every case ends in a located diagnostic, never a crash or a hang."""

from __future__ import annotations

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness, codes, expect, expect_true

WORLD = default_world()
GOOD = "name: ok\ndescription: fine\ntools: [read]\nprompt: |\n  Line one.\n  Line two.\n"


@pytest.mark.case("def.bytes.not-utf8")
@pytest.mark.req("DEF-03")
def test_non_utf8_bytes_are_located(impl: Harness) -> None:
    source = b"name: x\ndescription: caf\xe9 bar\nprompt: y\n"
    result = impl.parse(source)
    assert not result["loaded"]
    [diag] = [d for d in result["diagnostics"] if d["code"] == "DEF-ENCODING"]
    assert (diag["line"], diag["column"], diag["severity"]) == (2, 17, "error")


@pytest.mark.case("def.bytes.bom-and-crlf")
@pytest.mark.req("DEF-04", "PROMPT-03")
def test_bom_and_crlf_give_the_same_prompt_as_lf(impl: Harness) -> None:
    """Bug: the BOM reaches the prompt, or CRLF line ends survive into the body, so the
    same definition saved by another editor changes the prompt bytes (and misses the
    provider's prompt cache). Only the bytes rule is checked here: how the prompt is laid
    out around the body is PROMPT-01's cases' business, so a runtime with its own layout
    is judged on this rule alone."""
    impl.setup(**WORLD)
    plain = impl.prompt(GOOD)["prompt"]
    crlf = impl.prompt(b"\xef\xbb\xbf" + GOOD.replace("\n", "\r\n").encode())["prompt"]
    expect(crlf, plain, "DEF-04/PROMPT-03: a BOM and CRLF line ends give the prompt of the "
           "same definition saved with LF")
    expect_true("Line one.\nLine two." in plain, "the body reaches the prompt, its lines "
                "ending in LF", plain)


@pytest.mark.case("def.bytes.bom-takes-no-column")
@pytest.mark.req("DEF-03", "DEF-01")
def test_a_leading_bom_takes_no_column_on_line_one(impl: Harness) -> None:
    """Bug: the ignored BOM is still counted as a code point, so every diagnostic on line 1
    is one column too far right (an editor never shows the BOM)."""
    impl.setup(**WORLD)
    source = "name: My Agent!\ndescription: d\nprompt: P.\n"
    for raw in (source.encode(), b"\xef\xbb\xbf" + source.encode()):
        [diag] = [d for d in impl.parse(raw)["diagnostics"] if d["code"] == "DEF-BAD-NAME"]
        assert (diag["line"], diag["column"]) == (1, 7), (raw[:3], diag)


@pytest.mark.case("def.size.over-limit")
@pytest.mark.req("DEF-03")
def test_definition_over_one_mebibyte_is_refused(impl: Harness) -> None:
    filler = "# " + "x" * 1000 + "\n"
    source = GOOD + filler * 1100  # about 1.1 MB of comments
    result = impl.parse(source)
    assert not result["loaded"]
    assert "DEF-TOO-LARGE" in codes(result)


@pytest.mark.case("def.size.at-limit-loads")
@pytest.mark.req("DEF-03")
def test_definition_just_under_the_limit_loads(impl: Harness) -> None:
    filler = "# " + "x" * 1000 + "\n"
    source = GOOD + filler * 1040
    assert len(source.encode()) <= 1_048_576
    result = impl.parse(source)
    assert result["loaded"], result["diagnostics"]


@pytest.mark.case("def.yaml.billion-laughs")
@pytest.mark.req("DEF-03")
def test_alias_bomb_is_refused(impl: Harness) -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        refs = ",".join([f"*{prev}"] * 9)
        lines.append(f"{cur}: &{cur} [{refs}]")
    lines.append("name: bomb\ndescription: bomb\nprompt: x")
    result = impl.parse("\n".join(lines) + "\n")
    assert not result["loaded"]
    [diag] = [d for d in result["diagnostics"] if d["code"] == "DEF-YAML-ALIAS"]
    assert diag["line"] == 2


@pytest.mark.case("def.yaml.deep-nesting")
@pytest.mark.req("DEF-03")
def test_deep_nesting_is_refused(impl: Harness) -> None:
    source = "name: deep\ndescription: d\nextra: " + "[" * 5000 + "]" * 5000 + "\nprompt: x\n"
    result = impl.parse(source)
    assert not result["loaded"]
    assert "DEF-YAML-TOO-DEEP" in codes(result)


@pytest.mark.case("def.markdown.empty-file")
@pytest.mark.req("DEF-03")
def test_empty_markdown_file_is_a_located_error(impl: Harness) -> None:
    result = impl.parse("", filename="empty.md")
    assert not result["loaded"]
    [diag] = [d for d in result["diagnostics"] if d["code"] == "DEF-NO-FRONT-MATTER"]
    # a whole-document problem: the seeds need no position, so line 1 or none (DEF-03)
    assert diag["severity"] == "error" and diag["line"] in (1, None)


@pytest.mark.case("def.yaml.empty-document")
@pytest.mark.req("DEF-01", "DEF-02")
def test_empty_yaml_document_loads_with_missing_key_warnings(impl: Harness) -> None:
    result = impl.parse("", filename="empty.yaml")
    assert result["loaded"]
    missing = [d["path"] for d in result["diagnostics"] if d["code"] == "DEF-MISSING-KEY"]
    assert sorted(missing) == [["description"], ["name"]]
    assert all(d["severity"] != "error" for d in result["diagnostics"])


def _padded(total_bytes: int) -> str:
    """A valid definition of exactly ``total_bytes`` UTF-8 bytes, padded with comments of
    two-byte characters, so counting characters instead of bytes gives the wrong answer."""
    head = GOOD
    remaining = total_bytes - len(head.encode())
    lines = []
    while remaining > 0:
        chunk = min(remaining, 1001)
        if chunk < 3:
            lines.append("#" * (chunk - 1) + "\n" if chunk > 1 else "\n")
            remaining -= chunk
            continue
        body = chunk - 3  # "# " + ... + "\n"
        line = "# " + "é" * (body // 2) + "x" * (body % 2) + "\n"
        lines.append(line)
        remaining -= len(line.encode())
    source = head + "".join(lines)
    assert len(source.encode()) == total_bytes
    return source


@pytest.mark.case("def.size.exact-limit-bytes")
@pytest.mark.req("DEF-03")
def test_size_limit_is_exactly_one_mebibyte_of_bytes(impl: Harness) -> None:
    at_limit = impl.parse(_padded(1_048_576).encode())
    assert at_limit["loaded"], at_limit["diagnostics"][:3]
    over = impl.parse(_padded(1_048_577).encode())
    assert not over["loaded"] and "DEF-TOO-LARGE" in codes(over)


def _nested(levels: int) -> str:
    """`extra` nested so that the document has ``levels`` collections in depth (the top
    mapping is level 1)."""
    inner = "[" * (levels - 1) + "]" * (levels - 1)
    return f"name: deep\ndescription: d\nextra: {inner}\nprompt: x\n"


@pytest.mark.case("def.yaml.depth-boundary")
@pytest.mark.req("DEF-03")
def test_nesting_limit_is_exactly_32(impl: Harness) -> None:
    assert impl.parse(_nested(32))["loaded"]
    over = impl.parse(_nested(33))
    assert not over["loaded"]
    [diag] = [d for d in over["diagnostics"] if d["code"] == "DEF-YAML-TOO-DEEP"]
    assert diag["line"] == 3


@pytest.mark.case("def.bytes.lone-cr")
@pytest.mark.req("DEF-01", "PROMPT-03")
def test_lone_cr_line_endings_read_as_lf(impl: Harness) -> None:
    impl.setup(**WORLD)
    assert impl.prompt(GOOD.replace("\n", "\r"))["prompt"] == impl.prompt(GOOD)["prompt"]


@pytest.mark.case("tool.legacy.fallback-once")
@pytest.mark.req("DEF-05")
def test_legacy_fallback_is_reported_once(impl: Harness) -> None:
    impl.setup(grantable=None, not_grantable=[], session_tools=["read", "grep"])
    result = impl.parse("name: l\ndescription: d\ntools: [read, grep, WebFetch]\nprompt: p\n")
    fallback = [d for d in result["diagnostics"] if d["code"] == "TOOL-LEGACY-FALLBACK"]
    assert len(fallback) == 1 and fallback[0]["severity"] == "info"
    assert result["tools"] == ["read", "grep"]


def _with_items(items: int) -> str:
    """A mapping, five scalars (three keys, two values) and one sequence: 7 nodes, plus
    ``items`` scalar items."""
    return "name: n\ndescription: d\nextra: [" + ", ".join(["1"] * items) + "]\n"


@pytest.mark.case("def.yaml.node-boundary")
@pytest.mark.req("DEF-03")
def test_node_limit_counts_nodes_exactly(impl: Harness) -> None:
    """20,000 nodes load and 20,001 do not, counting scalars, sequences and mappings
    (keys included), not parser events."""
    at_limit = impl.parse(_with_items(20_000 - 7))
    assert at_limit["loaded"] and "DEF-YAML-TOO-COMPLEX" not in codes(at_limit)
    over = impl.parse(_with_items(20_000 - 6))
    assert not over["loaded"] and "DEF-YAML-TOO-COMPLEX" in codes(over)


def _with_items_and_names(items: int, names: int) -> str:
    """``_with_items(items)`` plus a `tools` key (one node) whose comma string of
    ``names`` distinct names counts as ``names`` nodes: 8 + ``items`` + ``names`` nodes."""
    return _with_items(items) + "tools: " + ",".join(f"t{i}" for i in range(names)) + "\n"


@pytest.mark.case("def.yaml.comma-entries-boundary")
@pytest.mark.req("DEF-03")
def test_comma_string_entries_reach_the_node_limit(impl: Harness) -> None:
    """A string of n names is n nodes: with 20,000 nodes in all counting each name, the
    document loads; one more name and it does not. A runtime that counts the string as
    one node loads both; one that counts the string and each name refuses both."""
    names = 40
    at_limit = impl.parse(_with_items_and_names(20_000 - 8 - names, names))
    assert at_limit["loaded"] and "DEF-YAML-TOO-COMPLEX" not in codes(at_limit)
    over = impl.parse(_with_items_and_names(20_000 - 8 - names, names + 1))
    assert not over["loaded"] and "DEF-YAML-TOO-COMPLEX" in codes(over)


@pytest.mark.case("def.yaml.comma-entries-count")
@pytest.mark.req("DEF-03")
def test_comma_string_entries_count_as_nodes(impl: Harness) -> None:
    """A comma-separated `tools` string is a list written on one line: its entries count
    toward the node limit, so 30,000 names are one refusal, not 30,000 diagnostics."""
    result = impl.parse("name: n\ndescription: d\ntools: " + ",".join(["x"] * 30_000) + "\n")
    assert not result["loaded"] and codes(result) == ["DEF-YAML-TOO-COMPLEX"]
    [diag] = result["diagnostics"]
    assert diag["line"] == 3
