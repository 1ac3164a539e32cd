"""Classes of slip-throughs found by outside testers (issue 10): save and copy fidelity for
every key and for multi-line bodies, absent vs null vs empty `tools`, dimension tools
listed in `tools`, bytes at the start of a file, YAML 1.1 scalars as names, Unicode
look-alike tool names, and the frame's own blank lines. Each test names the wrong
implementation it is for; every check is by meaning (parse what was saved), never by the
reference's bytes.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness, expect, expect_true

BODY = (
    "Review the change.\n"
    "\n"
    "  Indented two spaces.\n"
    "    Indented four spaces.\n"
    "\n"
    "```python\n"
    "def f(x):\n"
    "    if x:\n"
    "        return 1\n"
    "```\n"
    "\t- a tab-indented item\n"
    "Last line."
)
DIMENSION_TOOLS = ("use_skill", "skill_search", "kb_search", "mcp_search", "mcp_describe",
                   "mcp_call", "memory_write", "memory_read", "memory_search")


def _world(impl: Harness, **more: Any) -> None:
    impl.setup(**default_world(), **more)


def _body_of(impl: Harness, document: str, filename: str | None = None) -> str:
    parsed = impl.parse(document, filename=filename)
    expect_true(parsed["loaded"], "DEF-04: a saved document loads again", parsed["diagnostics"])
    body: str = parsed["definition"]["body"]
    return body


@pytest.mark.case("def.save.multiline-body-fidelity.markdown")
@pytest.mark.req("DEF-04")
def test_save_keeps_a_markdown_body_with_indentation_and_code(impl: Harness) -> None:
    """Bug: save strips (or re-indents) the lines of a multi-line body."""
    _world(impl)
    source = f"---\nname: reviewer\ndescription: Reviews.\ntools: [read]\n---\n{BODY}\n"
    before = _body_of(impl, source, "reviewer.md")
    saved = impl.save(source, filename="reviewer.md")
    expect(saved["saved"], True, "DEF-04: a valid definition saves")
    expect(_body_of(impl, saved["document"], "reviewer.md"), before,
           "DEF-04: save keeps the body byte for byte (indentation, code blocks, tabs)")


@pytest.mark.case("def.save.multiline-body-fidelity.yaml")
@pytest.mark.req("DEF-04")
def test_save_keeps_a_yaml_block_body_with_indentation_and_code(impl: Harness) -> None:
    """Bug: save re-indents a `prompt: |` block, losing relative indentation."""
    _world(impl)
    block = "".join(f"  {line}\n" if line else "\n" for line in BODY.split("\n"))
    source = f"name: reviewer\ndescription: Reviews.\ntools: [read]\nprompt: |\n{block}"
    before = _body_of(impl, source)
    expect_true("    Indented four spaces." in before and "\t- a tab" in before,
                "DEF-01: a literal block keeps its relative indentation", before)
    saved = impl.save(source)
    expect(saved["saved"], True, "DEF-04: a valid definition saves")
    expect(_body_of(impl, saved["document"]), before,
           "DEF-04: save keeps a block body byte for byte")


@pytest.mark.case("def.save.every-key-kept")
@pytest.mark.req("DEF-04", "DEF-06")
def test_save_keeps_every_key_foreign_and_unknown(impl: Harness) -> None:
    """Bug: save drops or rewrites keys the runtime does not know (model, color, a vendor
    key with a nested mapping)."""
    _world(impl)
    source = ("---\nname: reviewer\ndescription: Reviews.\ntools: [read, grep]\n"
              "model: sonnet\ncolor: blue\nx-vendor:\n  level: 3\n  tags: [a, b]\n"
              "memory: private\n---\nBody.\n")
    before = impl.parse(source, filename="reviewer.md")["definition"]
    saved = impl.save(source, filename="reviewer.md")
    expect(saved["saved"], True, "DEF-04: a definition with foreign keys saves")
    after = impl.parse(saved["document"], filename="reviewer.md")["definition"]
    for key in ("name", "description", "tools", "memory", "body", "extra"):
        expect(after[key], before[key], f"DEF-04: save keeps `{key}` (by meaning)")
    expect(sorted(after["extra"]), ["color", "model", "x-vendor"],
           "DEF-06: foreign and unknown keys are kept in `extra`")


@pytest.mark.case("def.builtin.copy-keeps-every-key")
@pytest.mark.req("DEF-07", "DEF-04")
def test_copy_as_system_level_keeps_every_key_and_the_body(impl: Harness) -> None:
    """Bug: copy-as-system-level writes only the capability keys (drops model, color,
    unknown keys) or mangles a multi-line body."""
    builtin = ("---\nname: helper\ndescription: Built-in helper.\ntools: Read, Grep\n"
               "model: haiku\ncolor: green\nx-vendor: {level: 2}\nmemory: shared\n"
               f"---\n{BODY}\n")
    _world(impl, builtins=[{"filename": "helper.md", "source": builtin}])
    original = impl.parse(builtin, filename="helper.md")
    copy = impl.driver.request("builtins.copy", {"name": "helper"})["document"]
    copied = impl.parse(copy, filename="helper.md")
    for key in ("description", "memory", "body", "extra"):
        expect(copied["definition"][key], original["definition"][key],
               f"DEF-07: the copy keeps `{key}`")
    expect(copied["tools"], original["tools"], "DEF-07: the copy grants the same tools")


@pytest.mark.req("DEF-01", "TOOL-03")
@pytest.mark.parametrize("tools_line", [
    pytest.param("", id="absent", marks=pytest.mark.case("def.tools.absent-grants-nothing")),
    pytest.param("tools:\n", id="null", marks=pytest.mark.case("def.tools.null-grants-nothing")),
    pytest.param("tools: []\n", id="empty",
                 marks=pytest.mark.case("def.tools.empty-grants-nothing")),
])
def test_absent_null_or_empty_tools_grant_no_session_tool(impl: Harness,
                                                          tools_line: str) -> None:
    """Bug: `tools` absent (or null) read as "inherit every session tool"."""
    _world(impl)
    source = f"name: minimal\ndescription: d\n{tools_line}prompt: Work.\n"
    mounted = [t["name"] for t in impl.mounted(source)["tools"]]
    expect(mounted, [], "DEF-01/TOOL-03: without granted tools nothing is mounted (absent "
           "`tools` is the empty grant, not inheritance)")
    expect(impl.parse(source)["tools"], [], "DEF-01: the granted tool list is empty")


@pytest.mark.case("def.tools.dimension-tools-never-from-tools")
@pytest.mark.req("TOOL-03", "MEM-02", "SKILL-02", "KB-02", "MCP-01")
def test_dimension_tools_listed_in_tools_are_not_mounted(impl: Harness) -> None:
    """Bug: memory_*, mcp_*, kb_search, use_skill mounted because `tools` lists them while
    their dimension is undeclared."""
    _world(impl)
    source = (f"name: lister\ndescription: d\ntools: [read, {', '.join(DIMENSION_TOOLS)}]\n"
              "prompt: Work.\n")
    mounted = [t["name"] for t in impl.mounted(source)["tools"]]
    expect([n for n in mounted if n in DIMENSION_TOOLS], [],
           "TOOL-03: a dimension tool is mounted only by its dimension, never by `tools`")
    expect_true("read" in mounted, "TOOL-03: the ordinary tool is still granted", mounted)
    granted = impl.parse(source)["tools"]
    expect([n for n in granted if n in DIMENSION_TOOLS], [],
           "TOOL-03: dimension tools are not in the granted `tools`")


@pytest.mark.case("def.bytes.bom-first-key")
@pytest.mark.req("DEF-01")
def test_a_leading_bom_is_not_part_of_the_first_key(impl: Harness) -> None:
    """Bug: the UTF-8 BOM is kept, so the first key is `\\ufeffname` (unknown) and `name`
    is missing. Read in parse mode: the BOM is a rule of the document (DEF-01), so a
    runtime without a save-mode check is judged on it too."""
    _world(impl)
    for text in ("name: bommed\ndescription: d\ntools: [read]\nprompt: Work.\n",
                 "---\nname: bommed\ndescription: d\ntools: [read]\n---\nWork.\n"):
        raw = b"\xef\xbb\xbf" + text.encode("utf-8")
        result = impl.driver.request("definition.parse", {
            "source_b64": base64.b64encode(raw).decode("ascii"), "mode": "parse"})
        expect(result["loaded"], True, "DEF-01: a leading BOM is stripped")
        expect(result["definition"]["name"], "bommed", "DEF-01: the first key is `name`")
        expect(result["definition"]["extra"], {}, "DEF-01: no unknown key from the BOM")
        expect([d["code"] for d in result["diagnostics"] if d["severity"] == "error"], [],
               "DEF-01: a BOM causes no error")


@pytest.mark.case("def.tools.yaml11-words-are-names")
@pytest.mark.req("DEF-01", "DEF-06")
def test_yaml11_booleans_are_names_not_booleans(impl: Harness) -> None:
    """Bug: YAML 1.1 typing: `tools: [on, yes, No]` read as booleans."""
    _world(impl)
    result = impl.parse("name: y\ndescription: d\ntools: [read, on, yes, No]\nprompt: W.\n")
    expect(result["definition"]["tools"], ["read", "on", "yes", "No"],
           "DEF-01: YAML 1.2 core schema: on/yes/No are strings, kept as written")
    expect([r["declared"] for r in result["tool_resolution"]], ["read", "on", "yes", "No"],
           "DEF-03: tool_resolution lists the names as written")


@pytest.mark.parametrize("name", [
    pytest.param("\uff52\uff45\uff41\uff44", id="fullwidth",
                 marks=pytest.mark.case("tool.unicode-look-alike.fullwidth")),
    pytest.param("\u216e\u216e", id="roman-numeral",
                 marks=pytest.mark.case("tool.unicode-look-alike.roman-numeral")),
    pytest.param("gre\u0440", id="cyrillic-er",
                 marks=pytest.mark.case("tool.unicode-look-alike.cyrillic")),
])
@pytest.mark.req("TOOL-02")
def test_unicode_look_alike_tool_names_resolve_to_nothing(impl: Harness, name: str) -> None:
    """Bug: tool names compared after NFKC / Unicode case mapping (fullwidth `ｒｅａｄ`
    reaches `read`)."""
    _world(impl)
    result = impl.parse(f"name: y\ndescription: d\ntools: [{name}]\nprompt: W.\n")
    [row] = result["tool_resolution"]
    expect((row["canonical"], row["status"]), (None, "unknown"),
           f"TOOL-02: only ASCII case is folded; {name!r} is not a registered name")
    expect(impl.mounted(f"name: y\ndescription: d\ntools: [{name}]\nprompt: W.\n")["tools"],
           [], "TOOL-02: a look-alike mounts nothing")


@pytest.mark.case("prompt.frame.blank-lines-stripped")
@pytest.mark.req("PROMPT-01")
def test_the_frame_is_joined_without_its_own_blank_lines(impl: Harness) -> None:
    """Bug: the frame's leading/trailing newlines are kept, so the blank line between
    frame and body is two or three."""
    _world(impl, frame="\n\nYou are a framed subagent.\n\n\n")
    prompt = impl.prompt("name: y\ndescription: d\ntools: [read]\nprompt: Body.\n", layout=True)
    expect(prompt["prompt"], "You are a framed subagent.\n\nBody.\n",
           "PROMPT-01: frame and body (each without surrounding blank lines) joined by "
           "exactly one blank line")


# -- every dimension: absent, null, empty, ill-typed (issue 10, item 4) --------------

DIMENSION_FORMS = [
    ("skills", "null", "skills:\n", False),
    ("skills", "empty", "skills: []\n", False),
    ("skills", "ill-typed", "skills: {notes: yes}\n", True),
    ("knowledge", "null", "knowledge:\n", False),
    ("knowledge", "empty", "knowledge: []\n", False),
    ("knowledge", "ill-typed", "knowledge: {name: docs, glob: ./docs/*.md}\n", True),
    ("mcp", "null", "mcp:\n", False),
    ("mcp", "empty", "mcp: {servers: []}\n", False),
    ("mcp", "ill-typed", "mcp: [notion]\n", True),
    ("memory", "null", "memory:\n", False),
    ("memory", "empty", "memory: none\n", False),
    ("memory", "ill-typed", "memory: [private]\n", True),
]


@pytest.mark.req("PROMPT-03", "DEF-03", "SKILL-02", "KB-02", "MCP-01", "MEM-02")
@pytest.mark.parametrize("row", [
    pytest.param(row, id=f"{row[0]}-{row[1]}",
                 marks=pytest.mark.case(f"def.dimension-form.{row[0]}.{row[1]}"))
    for row in DIMENSION_FORMS])
def test_a_dimension_without_an_entry_adds_no_section_and_no_tool(
        impl: Harness, row: tuple[str, str, str, bool]) -> None:
    """Bug: a dimension key that is present but null, empty or of the wrong type counts as
    declared (an empty section, or the dimension's tools mounted), or an ill-typed value
    is dropped without a diagnostic. Compared with the same runtime's answer for the same
    definition without the key, so no reference format is assumed."""
    key, _form, line, ill_typed = row
    _world(impl)
    without = "name: dims\ndescription: d\ntools: [read]\nprompt: Work.\n"
    source = without.replace("prompt: Work.\n", line + "prompt: Work.\n")
    expect(impl.prompt(source)["prompt"], impl.prompt(without)["prompt"],
           f"PROMPT-03: `{line.strip()}` declares nothing, so the prompt is the same bytes "
           "as without the key")
    expect([t["name"] for t in impl.mounted(source)["tools"]],
           [t["name"] for t in impl.mounted(without)["tools"]],
           f"{key}: `{line.strip()}` declares nothing, so no dimension tool is mounted")
    parsed = impl.parse(source)
    expect_true(parsed["loaded"], "DEF-02: parse mode keeps the definition", parsed)
    at_key = [d for d in parsed["diagnostics"] if d["path"][:1] == [key]]
    if ill_typed:
        expect_true(bool(at_key), f"DEF-03: the ill-typed `{key}` is reported at its key, "
                    "never dropped silently", parsed["diagnostics"])
