"""Form edits are splices: for random documents and random edits, only the edited
field's text changes (EDIT-02), and whatever cannot be spliced is refused (EDIT-03).

The documents are built from entries whose line ranges are known by construction, so the
"bytes outside the edited span" check does not trust the splicer's own account."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from capconf.simulator.definition.parse import parse_definition
from capconf.simulator.editor.form import EditField, FormEdit, RefusalCode
from capconf.simulator.editor.splice import apply_edit

NAMES = st.sampled_from(["read", "Grep", "WebFetch", "on", "a b", "x:y", "#hash", "tool-1",
                         "ünï", "yes", "[x]", "say \"hi\"", "it's"])
COMMENT = st.sampled_from(["", "  # note", "   # 注释"])


def _flow(names: list[str]) -> str:
    import json

    return "[" + ", ".join(json.dumps(n, ensure_ascii=False) for n in names) + "]"


@st.composite
def name_list(draw: Any, key: str) -> list[str]:
    names = draw(st.lists(NAMES, min_size=1, max_size=4))
    style = draw(st.sampled_from(["flow", "block", "comma"] if key == "tools"
                                 else ["flow", "block"]))
    comment = draw(COMMENT)
    if style == "flow":
        return [f"{key}: {_flow(names)}{comment}\n"]
    if style == "comma" and all("," not in n and n[:1].isalnum() for n in names):
        return [f"{key}: {', '.join(names)}{comment}\n"]
    return [f"{key}:{comment}\n"] + [f"  - {_flow([n])[1:-1]}{draw(COMMENT)}\n" for n in names]


@st.composite
def documents(draw: Any) -> tuple[str, str, dict[str, tuple[int, int]]]:
    """(text, filename, key -> (first line, last line + 1) of its entry)."""
    entries: list[tuple[str, list[str]]] = [
        ("name", [f"name: helper{draw(COMMENT)}\n"]),
        ("description", [f"description: {draw(st.sampled_from(['Helps.', repr('q: x')]))}\n"]),
    ]
    for key in ("tools", "skills"):
        if draw(st.booleans()):
            entries.append((key, draw(name_list(key))))
    if draw(st.booleans()):
        servers = _flow(draw(st.lists(NAMES, max_size=3)))
        entries.append(("mcp", ["mcp:\n", f"  servers: {servers}\n"]))
    if draw(st.booleans()):
        mode = draw(st.sampled_from(["private", "Shared", "none"]))
        entries.append(("memory", [f"memory: {mode}\n"]))
    if draw(st.booleans()):
        entries.append(("knowledge", ["knowledge:\n", "  - {name: docs, glob: \"**/*.md\"}\n"]))
    for extra in draw(st.lists(st.sampled_from(["model: sonnet\n", "x-team: {a: 1}\n",
                                                "# a comment line\n", "color: 'blue'\n"]),
                               max_size=3, unique=True)):
        entries.append(("", [extra]))
    order = draw(st.permutations(range(len(entries))))
    markdown = draw(st.booleans())
    lines: list[str] = ["---\n"] if markdown else []
    spans: dict[str, tuple[int, int]] = {}
    for i in order:
        key, block = entries[i]
        if key:
            spans[key] = (len(lines), len(lines) + len(block))
        lines += block
    body = draw(st.sampled_from(["Work *well*.\n  indented\n", "One line.",
                                 "  lead\n\n\ntail  \n"]))
    if markdown:
        lines += ["---\n", "\n"]
        spans["body"] = (len(lines), len(lines) + body.count("\n") + 1)
        lines += [body]
    else:
        spans["body"] = (len(lines), len(lines) + 2)
        lines += ["prompt: |\n", "  Work.\n"]
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    text = "".join(lines).replace("\n", newline)
    return text, "a.md" if markdown else "a.yaml", spans


EDITS = st.one_of(
    st.builds(lambda v: FormEdit(EditField.TOOLS, v), st.lists(NAMES, max_size=4)),
    st.builds(lambda v: FormEdit(EditField.SKILLS, v), st.lists(NAMES, max_size=4)),
    st.builds(lambda v: FormEdit(EditField.MCP_SERVERS, v), st.lists(NAMES, max_size=3)),
    st.builds(lambda v: FormEdit(EditField.MEMORY, v),
              st.sampled_from(["none", "private", "shared", None])),
    st.builds(lambda v: FormEdit(EditField.DESCRIPTION, v),
              st.sampled_from(["New: text", "plain", "it's", "#x", "多语言"])),
    st.builds(lambda v: FormEdit(EditField.KNOWLEDGE, v),
              st.lists(st.tuples(st.sampled_from(["docs", "faq"]),
                                 st.sampled_from(["**/*.md", "./a/*.txt"])), max_size=2)),
    st.builds(lambda i: FormEdit(EditField.TOOLS, remove=i), st.integers(0, 4)),
    st.builds(lambda i: FormEdit(EditField.SKILLS, remove=i), st.integers(0, 4)),
    st.builds(lambda v: FormEdit(EditField.NAME, v), st.sampled_from(["renamed", "2024"])),
    st.builds(lambda v: FormEdit(EditField.BODY, v),
              st.sampled_from(["New.", "Two\n\nlines", "  indented first\nsecond", ""])),
    st.builds(lambda v: FormEdit(EditField.TOOLS, None), st.none()),
)

_KEY = {EditField.TOOLS: "tools", EditField.SKILLS: "skills", EditField.MCP_SERVERS: "mcp",
        EditField.MEMORY: "memory", EditField.DESCRIPTION: "description",
        EditField.KNOWLEDGE: "knowledge", EditField.NAME: "name", EditField.BODY: "body"}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents(), EDITS)
def test_only_the_edited_field_changes(doc: tuple[str, str, dict[str, tuple[int, int]]],
                                       edit: FormEdit) -> None:
    text, filename, spans = doc
    before = parse_definition(text, filename=filename).definition
    assert before is not None
    outcome = apply_edit(text, edit, filename=filename)
    if outcome.document is None:  # every generated shape can be spliced
        assert outcome.refusal is not None
        assert outcome.refusal.code is RefusalCode.NO_SUCH_ENTRY and edit.remove is not None
        return
    after = parse_definition(outcome.document, filename=filename).definition
    assert after is not None
    key = _KEY[edit.field]
    want, got = before.to_json(), after.to_json()
    assert {k: v for k, v in got.items() if k != key} == {
        k: v for k, v in want.items() if k != key}
    lines = text.splitlines(keepends=True)
    if key in spans:
        first, last = spans[key]
        head, tail = "".join(lines[:first]), "".join(lines[last:])
        assert outcome.document.startswith(head) and outcome.document.endswith(tail)
    else:  # inserted: every original line survives, in order
        it = iter(outcome.document.splitlines(keepends=True))
        assert all(line in it for line in lines)
    if "\r\n" in text:
        assert "\n" not in outcome.document.replace("\r\n", "")


def test_a_comment_inside_a_flow_list_is_refused() -> None:
    text = "name: a\ndescription: d\ntools: [read,  # why\n  grep]\nprompt: p\n"
    outcome = apply_edit(text, FormEdit(EditField.TOOLS, ["read"]))
    assert outcome.document is None and outcome.refusal is not None
    assert outcome.refusal.code is RefusalCode.UNSAFE and outcome.refusal.line == 3


def test_lenient_front_matter_is_refused() -> None:
    text = "---\nname: a\ndescription: Note: colon\n---\nBody\n"
    outcome = apply_edit(text, FormEdit(EditField.MEMORY, "private"), filename="a.md")
    assert outcome.refusal is not None and outcome.refusal.code is RefusalCode.NOT_STRICT_YAML


def _edit(text: str, edit: FormEdit, filename: str = "a.yaml") -> str:
    outcome = apply_edit(text, edit, filename=filename)
    assert outcome.document is not None, outcome.refusal
    return outcome.document


BASE = "name: a\ndescription: d\n"


def test_explicit_and_empty_nulls_take_a_list() -> None:
    assert _edit(BASE + "tools: ~  # none yet\nprompt: p\n",
                 FormEdit(EditField.TOOLS, ["read"])) == (
        BASE + "tools: [read]  # none yet\nprompt: p\n")
    assert _edit(BASE + "tools:\nprompt: p\n", FormEdit(EditField.TOOLS, ["read", "grep"])) == (
        BASE + "tools: [read, grep]\nprompt: p\n")
    block = BASE + "skills:\n  - x\ntools:\nprompt: p\n"
    assert _edit(block, FormEdit(EditField.TOOLS, ["read"])) == (
        BASE + "skills:\n  - x\ntools:\n  - read\nprompt: p\n")


def test_removing_an_empty_comma_entry_fixes_it() -> None:
    text = BASE + "tools: Read,, Grep\nprompt: p\n"
    assert _edit(text, FormEdit(EditField.TOOLS, remove=1)) == (
        BASE + "tools: Read, Grep\nprompt: p\n")


def test_lone_cr_line_endings_and_bom_are_kept() -> None:
    text = "\ufeff" + (BASE + "memory: none\nprompt: p\n").replace("\n", "\r")
    assert _edit(text, FormEdit(EditField.MEMORY, "shared")) == text.replace("none", "shared")


def test_a_missing_prompt_is_inserted_after_the_known_keys() -> None:
    text = BASE + "tools: [read]\nx-extra: 1\n"
    out = _edit(text, FormEdit(EditField.BODY, "Do it.\n  carefully"))
    assert out == BASE + "tools: [read]\nprompt: |\n  Do it.\n    carefully\nx-extra: 1\n"


def test_a_repeated_key_edits_the_first_and_keeps_the_repeat() -> None:
    text = BASE + "memory: none\nmemory: shared\nprompt: p\n"
    assert _edit(text, FormEdit(EditField.MEMORY, "private")) == (
        BASE + "memory: private\nmemory: shared\nprompt: p\n")


def test_knowledge_block_maps_stay_block_maps() -> None:
    text = BASE + "knowledge:\n  - name: a\n    glob: '*.md'   # all\nprompt: p\n"
    out = _edit(text, FormEdit(EditField.KNOWLEDGE, [("a", "*.md"), ("b", "docs/*.txt")]))
    assert out == (BASE + "knowledge:\n  - name: a\n    glob: '*.md'   # all\n"
                   "  - name: b\n    glob: docs/*.txt\nprompt: p\n")


def test_a_flow_mapping_document_is_refused() -> None:
    outcome = apply_edit("{name: a, description: d, prompt: p}",
                         FormEdit(EditField.MEMORY, "private"))
    assert outcome.refusal is not None and outcome.refusal.code is RefusalCode.UNSAFE


def test_an_unreadable_document_is_refused_with_its_location() -> None:
    outcome = apply_edit("name: [a\n", FormEdit(EditField.MEMORY, "private"))
    assert outcome.refusal is not None
    assert outcome.refusal.code is RefusalCode.UNREADABLE and outcome.refusal.line == 2


FRAGMENTS = st.sampled_from([
    "name: a\n", "description: d\n", "tools: [read, grep]\n", "tools: Read,, Grep\n",
    "tools:\n", "tools: ~\n", "  - read\n", "- x\n", "skills: {a: 1}\n", "mcp:\n",
    "  servers: [crm]\n", "  servers:\n", "    - crm\n", "mcp: [x]\n", "memory: 5\n",
    "knowledge:\n", "  - {name: a, glob: b}\n", "  - name: a\n", "    glob: b\n",
    "prompt: |\n", "  body\n", "prompt: [x]\n", "# c\n", "\n", "---\n", "x: 'q\n",
    "description: >\n", "  folded\n", "\t\n", "tools: [a,  # c\n", "  b]\n", "\r\n",
])


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(FRAGMENTS, max_size=12), EDITS, st.sampled_from(["a.md", "a.yaml", None]))
def test_any_text_and_any_edit_end_in_a_document_or_a_refusal(
        parts: list[str], edit: FormEdit, filename: str | None) -> None:
    outcome = apply_edit("".join(parts), edit, filename=filename)
    assert (outcome.document is None) == (outcome.refusal is not None)
