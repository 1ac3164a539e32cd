"""The settings editor's back-end (SPEC section 3, EDIT): selector candidates, form edits
that keep every other byte, refusals, and unknown names an editor can show and remove.

Checks are on behaviour: which candidates, which text is kept, what the result parses
to. Wording, suggestion order beyond "the one-edit typo first", and where exactly an
absent key is inserted are the implementation's.
"""

from __future__ import annotations

import base64
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

WORLD = default_world()

MD = """---
# Reviewer used by the nightly job.
name: reviewer   # keep this name
description: 'Reviews code: style and bugs'
tools: Read, Grep
skills:
  - refund-policy   # the main one
  # - old-skill (disabled)
  - tone
model: sonnet
x-team: {owner: ops, since: 2024}
memory: PRIVATE
---

Review the *diff* you are given.
  Indented line kept as is.

"""

YAML = """name: planner
description: "Plans work"   # quoted on purpose
tools: [read, 'glob']
mcp:
  servers:
    - crm   # sales
  note: kept
color: blue
prompt: |
  Plan the task.

  Then stop.

# trailing comment
"""


def edit(impl: Harness, source: str, e: dict[str, Any], filename: str) -> dict[str, Any]:
    out: dict[str, Any] = impl.driver.request(
        "editor.edit", {"source": source, "filename": filename, "edit": e})
    return out


def definition(impl: Harness, source: str, filename: str) -> dict[str, Any]:
    out: dict[str, Any] = impl.parse(source, filename=filename)["definition"]
    return out


def kept_outside(before: str, after: str, first: str, last: str) -> None:
    """Every line before the line holding ``first`` and after the line holding ``last``
    is byte-identical in the result."""
    lines = before.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if first in ln)
    end = next(i for i, ln in enumerate(lines) if last in ln)
    head, tail = "".join(lines[:start]), "".join(lines[end + 1:])
    assert after.startswith(head), "text before the edited field changed"
    assert after.endswith(tail), "text after the edited field changed"


# (case suffix, source, filename, edit, first line marker, last line marker, field,
#  expected value, a pattern the result must match: the list keeps its style and a kept
#  entry keeps the comment on its line)
FIELD_EDITS = [
    ("md-tools-comma", MD, "a.md", {"field": "tools", "value": ["Read", "WebFetch"]},
     "tools:", "tools:", "tools", ["Read", "WebFetch"], r"(?m)^tools: *Read *, *WebFetch *$"),
    ("md-skills-block", MD, "a.md", {"field": "skills", "value": ["tone", "billing"]},
     "skills:", "  - tone", "skills", ["tone", "billing"], r"(?m)^ *- *billing *$"),
    ("md-memory", MD, "a.md", {"field": "memory", "value": "shared"},
     "memory:", "memory:", "memory", "shared", r"(?m)^memory: *shared *$"),
    ("md-description", MD, "a.md", {"field": "description", "value": "Finds bugs: fast"},
     "description:", "description:", "description", "Finds bugs: fast", r"Finds bugs: fast"),
    ("yaml-tools-flow", YAML, "a.yaml", {"field": "tools", "value": ["read", "grep", "bash"]},
     "tools:", "tools:", "tools", ["read", "grep", "bash"],
     r"(?m)^tools: *\[ *read *, *grep *, *bash *\]"),
    ("yaml-servers", YAML, "a.yaml", {"field": "mcp.servers", "value": ["crm", "notion"]},
     "servers:", "- crm", "mcp", {"servers": ["crm", "notion"]},
     r"(?m)^ +- crm +# sales\n(?: *#.*\n)* +- notion *$"),
    ("yaml-name", YAML, "a.yaml", {"field": "name", "value": "planner-2"},
     "name:", "name:", "name", "planner-2", r"(?m)^name: *planner-2 *$"),
    ("yaml-body", YAML, "a.yaml", {"field": "body", "value": "New plan.\n\n  Step two."},
     "prompt:", "Then stop.", "body", "New plan.\n\n  Step two.", r"New plan\."),
]


@pytest.mark.parametrize(
    "source,filename,e,first,last,field,expected,shape",
    [pytest.param(*row[1:], id=row[0], marks=pytest.mark.case(f"edit.form.only-field.{row[0]}"))
     for row in FIELD_EDITS])
@pytest.mark.req("EDIT-02", "DEF-04")
def test_a_form_edit_changes_only_the_edited_field(
        impl: Harness, source: str, filename: str, e: dict[str, Any], first: str, last: str,
        field: str, expected: Any, shape: str) -> None:
    result = edit(impl, source, e, filename)
    assert result["applied"] is True and result["refusal"] is None, result["refusal"]
    after = result["document"]
    kept_outside(source, after, first, last)
    assert re.search(shape, after), f"the edited field lost its style: {shape}"
    want = definition(impl, source, filename)
    want[field] = expected
    got = definition(impl, after, filename)
    assert got == want
    assert result["diagnostics"] == impl.parse(after, filename=filename)["diagnostics"]


@pytest.mark.case("edit.form.body-bytes-kept")
@pytest.mark.req("EDIT-02")
def test_the_markdown_body_is_kept_byte_for_byte(impl: Harness) -> None:
    result = edit(impl, MD, {"field": "tools", "value": ["Read"]}, "a.md")
    body = MD.split("\n---\n", 1)[1]
    assert result["document"].endswith("\n---\n" + body)


@pytest.mark.case("edit.form.line-endings-kept")
@pytest.mark.req("EDIT-02")
def test_crlf_line_endings_and_a_bom_are_kept(impl: Harness) -> None:
    source = "\ufeff" + MD.replace("\n", "\r\n")
    raw = source.encode("utf-8")
    result = impl.driver.request("editor.edit", {
        "source_b64": base64.b64encode(raw).decode(), "filename": "a.md",
        "edit": {"field": "memory", "value": "none"}})
    assert result["applied"] is True
    out = base64.b64decode(result["document_b64"])
    assert out.startswith(b"\xef\xbb\xbf")
    assert b"\n" not in out.replace(b"\r\n", b"")
    assert out.replace(b"memory: none", b"memory: PRIVATE") == raw


@pytest.mark.req("EDIT-02")
@pytest.mark.parametrize("field,value,key", [
    pytest.param("knowledge", [{"name": "handbook", "glob": "./docs/**/*.md"}], "knowledge",
                 id="knowledge", marks=pytest.mark.case("edit.form.absent-key.knowledge")),
    pytest.param("mcp.servers", ["crm"], "mcp", id="mcp",
                 marks=pytest.mark.case("edit.form.absent-key.mcp")),
])
def test_an_absent_key_is_inserted_and_nothing_else_moves(
        impl: Harness, field: str, value: Any, key: str) -> None:
    result = edit(impl, MD, {"field": field, "value": value}, "a.md")
    assert result["applied"] is True
    before, after = MD.splitlines(), result["document"].splitlines()
    it = iter(after)
    assert all(line in it for line in before), "an original line changed or moved"
    got = definition(impl, result["document"], "a.md")
    want = definition(impl, MD, "a.md")
    want[key] = value if key == "knowledge" else {"servers": value}
    assert got == want


@pytest.mark.case("edit.form.remove-key")
@pytest.mark.req("EDIT-02")
def test_null_removes_the_key_and_only_its_lines(impl: Harness) -> None:
    result = edit(impl, MD, {"field": "memory", "value": None}, "a.md")
    assert result["applied"] is True
    assert result["document"] == MD.replace("memory: PRIVATE\n", "")


@pytest.mark.case("edit.form.builtin-copy-keeps-four-dimensions")
@pytest.mark.req("EDIT-02", "DEF-07")
def test_editing_a_builtin_copy_keeps_all_four_dimensions(impl: Harness) -> None:
    builtin = ("---\nname: support\ndescription: Support.\ntools: Read, Grep\n"
               "skills: [refund-policy]\nmcp:\n  servers: [crm]\nknowledge:\n"
               "  - {name: handbook, glob: ./docs/**/*.md}\nmemory: private\n---\nHelp.\n")
    impl.setup(**WORLD, builtins=[{"filename": "support.md", "source": builtin}])
    copy = impl.driver.request("builtins.copy", {"name": "support"})["document"]
    result = edit(impl, copy, {"field": "name", "value": "my-support"}, "support.md")
    assert result["applied"] is True
    got = definition(impl, result["document"], "support.md")
    original = definition(impl, builtin, "support.md")
    for key in ("skills", "mcp", "knowledge", "memory", "body", "description"):
        assert got[key] == original[key], key
    assert got["name"] == "my-support"


# -- EDIT-03 ---------------------------------------------------------------------------

@pytest.mark.case("edit.refuse.unreadable")
@pytest.mark.req("EDIT-03")
def test_an_unreadable_document_is_refused_not_rewritten(impl: Harness) -> None:
    broken = "name: x\ndescription: [unclosed\ntools: [read]\nprompt: p\n"
    result = edit(impl, broken, {"field": "tools", "value": ["read", "grep"]}, "a.yaml")
    assert result["applied"] is False and result["document"] is None
    assert result["refusal"]["code"] == "document_unreadable"
    assert result["refusal"]["line"] is not None
    assert any(d["severity"] == "error" for d in result["diagnostics"])


@pytest.mark.case("edit.refuse.no-such-entry")
@pytest.mark.req("EDIT-03")
def test_removing_an_entry_that_does_not_exist_is_refused(impl: Harness) -> None:
    result = edit(impl, MD, {"field": "skills", "remove": 7}, "a.md")
    assert result["applied"] is False and result["document"] is None
    assert result["refusal"]["code"] == "no_such_entry"


@pytest.mark.req("EDIT-03")
@pytest.mark.parametrize("e", [
    pytest.param(e, id=name, marks=pytest.mark.case(f"edit.refuse.bad-edit.{name}"))
    for name, e in (("unknown-field", {"field": "colour", "value": "x"}),
                    ("no-value", {"field": "tools"}),
                    ("bad-mode", {"field": "memory", "value": "global"}),
                    ("string-for-list", {"field": "tools", "value": "read"}))])
def test_a_malformed_edit_is_a_bad_request(impl: Harness, e: dict[str, Any]) -> None:
    error = impl.driver.request_error("editor.edit",
                                      {"source": MD, "filename": "a.md", "edit": e})
    assert error["code"] == "bad_request"


# -- EDIT-01 ---------------------------------------------------------------------------

@pytest.mark.case("edit.candidates.tools-registry")
@pytest.mark.req("EDIT-01", "DEF-05")
def test_tool_candidates_are_the_registry(impl: Harness) -> None:
    impl.setup(**{**WORLD, "grantable": ["read", "WebFetch", "crm_lookup"],
                  "session_tools": ["read", "WebFetch"]})
    tools = impl.driver.request("editor.candidates")["tools"]
    assert [c["name"] for c in tools["candidates"]] == ["read", "WebFetch", "crm_lookup"]
    assert {c["name"]: c["in_session"] for c in tools["candidates"]} == {
        "read": True, "WebFetch": True, "crm_lookup": False}
    assert tools["source"] == "registry"


@pytest.mark.case("edit.candidates.legacy-six")
@pytest.mark.req("EDIT-01", "DEF-05")
def test_without_a_grantable_list_the_candidates_are_the_legacy_six(impl: Harness) -> None:
    impl.setup(**{**WORLD, "grantable": None})
    tools = impl.driver.request("editor.candidates")["tools"]
    assert sorted(c["name"] for c in tools["candidates"]) == sorted(
        ["bash", "read", "write", "edit", "glob", "grep"])
    assert tools["source"] == "legacy_fallback"


def _skill(root: Path, folder: str, name: str) -> None:
    d = root / folder
    d.mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {name} skill\n---\nBody.\n",
                                encoding="utf-8")


@pytest.mark.case("edit.candidates.skills-shadowing")
@pytest.mark.req("EDIT-01", "SKILL-01")
def test_skill_candidates_name_the_winning_layer_and_the_shadowed_ones(impl: Harness) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        layers = {name: root / name for name in ("workspace", "system", "plugin")}
        _skill(layers["plugin"], "review", "review")
        _skill(layers["system"], "review", "review")
        _skill(layers["system"], "tone", "tone")
        _skill(layers["workspace"], "notes", "notes")
        _skill(layers["plugin"], "Tone", "TONE")
        impl.setup(**WORLD, skills={"layers": {k: str(v) for k, v in layers.items()}})
        skills = impl.driver.request("editor.candidates")["skills"]
    by_name = {c["name"].lower(): c for c in skills["candidates"]}
    assert sorted(by_name) == ["notes", "review", "tone"]
    assert by_name["review"]["layer"] == "system"
    assert by_name["review"]["shadowed"] == ["plugin"]
    assert by_name["tone"]["layer"] == "system" and by_name["tone"]["name"] == "tone"
    assert by_name["notes"]["shadowed"] == []
    hidden = sorted((s["name"].lower(), s["layer"], s["shadowed_by"]) for s in skills["shadowed"])
    assert hidden == [("review", "plugin", "system"), ("tone", "plugin", "system")]


@pytest.mark.case("edit.candidates.mcp-state")
@pytest.mark.req("EDIT-01", "MCP-04")
def test_mcp_candidates_carry_enabled_and_configured(impl: Harness) -> None:
    impl.setup(**WORLD, mcp={"mcpServers": {
        "crm": {"command": "crm-server"},
        "notion": {"command": "notion-server", "enabled": False},
        "sheets": {"configured": False}}})
    servers = impl.driver.request("editor.candidates")["mcp"]["candidates"]
    got = {s["name"]: (s["enabled"], s["configured"], s["state"]) for s in servers}
    assert got == {"crm": (True, True, "ready"), "notion": (False, True, "disabled"),
                   "sheets": (True, False, "not-configured")}


# -- EDIT-04 ---------------------------------------------------------------------------

UNKNOWN = """---
name: helper
description: Helps.
tools: Read, webfech, GRPE, zqxvjkw
mcp:
  servers: [crn]
---
Help.
"""


def _unknown(impl: Harness) -> list[dict[str, Any]]:
    impl.setup(**WORLD, mcp={"mcpServers": {"crm": {"command": "crm-server"}}})
    out: list[dict[str, Any]] = impl.driver.request(
        "editor.unknown_names", {"source": UNKNOWN, "filename": "a.md"})["unknown"]
    return out


@pytest.mark.case("edit.unknown.located")
@pytest.mark.req("EDIT-04", "DEF-06")
def test_each_unknown_name_is_located_and_explained(impl: Harness) -> None:
    unknown = _unknown(impl)
    got = {(u["field"], u["name"]): (u["line"], u["column"], u["index"]) for u in unknown}
    assert got == {("tools", "webfech"): (4, 14, 1), ("tools", "GRPE"): (4, 23, 2),
                   ("tools", "zqxvjkw"): (4, 29, 3), ("mcp.servers", "crn"): (6, 13, 0)}
    assert all(u["message"] and u["severity"] == "warning" for u in unknown)


@pytest.mark.case("edit.unknown.nearest")
@pytest.mark.req("EDIT-04")
def test_the_nearest_candidates_are_case_insensitive_and_cut_off(impl: Harness) -> None:
    nearest = {u["name"]: u["nearest"] for u in _unknown(impl)}
    assert nearest["webfech"][:1] == ["WebFetch"]
    assert nearest["GRPE"][:1] == ["grep"]
    assert nearest["crn"][:1] == ["crm"]
    assert nearest["zqxvjkw"] == []


@pytest.mark.case("edit.unknown.removal")
@pytest.mark.req("EDIT-04", "EDIT-02")
def test_the_removal_edit_removes_exactly_that_name(impl: Harness) -> None:
    for chip in _unknown(impl):
        result = edit(impl, UNKNOWN, chip["removal"], "a.md")
        assert result["applied"] is True
        before = definition(impl, UNKNOWN, "a.md")
        after = definition(impl, result["document"], "a.md")
        key = "tools" if chip["field"] == "tools" else "mcp"
        names = before["tools"] if key == "tools" else before["mcp"]["servers"]
        names = [n for n in names if n != chip["name"]]
        assert (after["tools"] if key == "tools" else after["mcp"]["servers"]) == names
        other = {k: v for k, v in after.items() if k != key}
        assert other == {k: v for k, v in before.items() if k != key}
        kept_outside(UNKNOWN, result["document"],
                     "tools:" if key == "tools" else "servers:",
                     "tools:" if key == "tools" else "servers:")


# -- Cases the outside tester's broken runtimes slipped past (issue 10, eyes round 2) ------

MD_TRAILING = ("---\n# Reviewer \t\nname: reviewer\ndescription: Reviews.   # note  \n"
               "tools: Read, Grep\nmemory: private\n---\n\n"
               "First line with a Markdown hard break  \nnext line.\t\n\n")


@pytest.mark.case("edit.form.trailing-whitespace-kept")
@pytest.mark.req("EDIT-02")
def test_trailing_whitespace_outside_the_field_is_kept(impl: Harness) -> None:
    """Bug: the document is normalised on the way out (trailing blanks stripped), which
    deletes a Markdown hard line break the user wrote in the body."""
    result = edit(impl, MD_TRAILING, {"field": "tools", "value": ["Read"]}, "a.md")
    assert result["applied"] is True, result["refusal"]
    kept_outside(MD_TRAILING, result["document"], "tools:", "tools:")


HARD_TO_SPLICE = [
    ("comment-in-flow-list",
     "# top comment\nname: x   # the name\ndescription: d\ntools: [read,   # main one\n"
     "  grep]\nx-team: {owner: ops}\nprompt: p\n", ["# top comment", "# the name",
                                                 "x-team: {owner: ops}"]),
    ("flow-mapping-document",
     "{name: x, description: d, tools: [read], x-team: {owner: ops}, prompt: p}\n",
     ["{name: x, description: d, tools: ", "x-team: {owner: ops}, prompt: p}"]),
]


@pytest.mark.parametrize(("source", "kept"), [
    pytest.param(source, kept, id=name, marks=pytest.mark.case(f"edit.refuse.hard.{name}"))
    for name, source, kept in HARD_TO_SPLICE])
@pytest.mark.req("EDIT-03", "EDIT-02")
def test_a_hard_edit_is_spliced_exactly_or_refused_never_rewritten(
        impl: Harness, source: str, kept: list[str]) -> None:
    """Bug: when the splice is unsafe the back-end falls back to dumping the parsed
    document, losing comments, quoting and foreign keys' layout. Either outcome is
    conforming: a splice that changes only the field, or `unsafe_splice` with no
    document."""
    result = edit(impl, source, {"field": "tools", "value": ["read", "bash"]}, "a.yaml")
    if result["applied"] is not True:
        assert result["document"] is None, "a refusal carries no document"
        assert result["refusal"]["code"] == "unsafe_splice", result["refusal"]
        return
    after = result["document"]
    missing = [text for text in kept if text not in after]
    assert not missing, f"EDIT-02: a spliced edit lost text outside the field: {missing}"
    want = definition(impl, source, "a.yaml")
    want["tools"] = ["read", "bash"]
    assert definition(impl, after, "a.yaml") == want


RAW_INDEX = """---
name: helper
description: Helps.
tools:
  - read
  - ""
  - ~
  - webfech
  - mcp__notion__search
  - memory_rite
  - memory_wread
---
Help.
"""


def _chips(impl: Harness, source: str) -> list[dict[str, Any]]:
    impl.setup(**WORLD)
    out: list[dict[str, Any]] = impl.driver.request(
        "editor.unknown_names", {"source": source, "filename": "a.md"})["unknown"]
    return out


@pytest.mark.case("edit.unknown.removal-raw-index")
@pytest.mark.req("EDIT-04", "EDIT-02", "MCP-05")
def test_removal_counts_every_entry_as_written(impl: Harness) -> None:
    """Bugs: the index counts only valid entries (so the removal edit deletes the wrong
    line when empty or null entries come first), or an MCP-style name, which resolution
    reports, is missing from the chips."""
    chips = {c["name"]: c for c in _chips(impl, RAW_INDEX)}
    assert set(chips) == {"webfech", "mcp__notion__search", "memory_rite", "memory_wread"}
    assert chips["mcp__notion__search"]["code"] == "TOOL-MCP-STYLE"
    lines = RAW_INDEX.splitlines(keepends=True)
    for name, chip in chips.items():
        assert chip["index"] == chip["path"][-1] == next(
            i for i, ln in enumerate(lines[4:11]) if name in ln), chip
        result = edit(impl, RAW_INDEX, chip["removal"], "a.md")
        assert result["applied"] is True, result["refusal"]
        after = result["document"]
        assert name not in after, f"the removal of {name!r} left it in place"
        others = [ln for ln in lines if name not in ln]
        kept = iter(after.splitlines(keepends=True))
        assert all(any(ln == got for got in kept) for ln in others), (
            f"removing {name!r} changed other lines", after)


def _osa(a: str, b: str) -> int:
    """Optimal string alignment distance (SPEC EDIT-04), ASCII case folded."""
    a, b = a.lower(), b.lower()
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1,
                          d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[-1][-1]


@pytest.mark.case("edit.unknown.nearest-first")
@pytest.mark.req("EDIT-04")
def test_suggestions_are_ordered_nearest_first(impl: Harness) -> None:
    """Bug: suggestions in name order (either way), so `memory_rite` offers
    `memory_read` first or `memory_wread` offers `memory_write` first."""
    chips = {c["name"]: c for c in _chips(impl, RAW_INDEX)}
    assert chips["memory_rite"]["nearest"][:1] == ["memory_write"], chips["memory_rite"]
    assert chips["memory_wread"]["nearest"][:1] == ["memory_read"], chips["memory_wread"]
    for chip in chips.values():
        distances = [_osa(chip["name"], c) for c in chip["nearest"]]
        assert distances == sorted(distances), (chip["name"], chip["nearest"])


# -- Cases the outside tester's broken runtimes slipped past (eyes round 4) ----------------

@pytest.mark.case("edit.refuse.bad-edit.negative-index")
@pytest.mark.req("EDIT-03")
def test_a_negative_remove_index_is_a_bad_request(impl: Harness) -> None:
    """Bug: `remove` indexes the entries like a Python list, so `-1` silently removes the
    last entry. A diagnostic's path never holds a negative index: the edit is malformed."""
    for e in ({"field": "skills", "remove": -1}, {"field": "tools", "remove": -2}):
        error = impl.driver.request_error("editor.edit",
                                          {"source": MD, "filename": "a.md", "edit": e})
        assert error["code"] == "bad_request", (e, error)
        assert error["path"] == ["args", "edit", "remove"], (e, error)


REPEATED = """---
name: helper
description: Helps.
tools: Read, webfech, Grep, webfech, WEBFECH, zqxvjkw
---
Help.
"""


@pytest.mark.case("edit.unknown.repeated-name-each-position")
@pytest.mark.req("EDIT-04", "TOOL-04")
def test_a_repeated_unknown_name_gets_a_chip_at_each_position(impl: Harness) -> None:
    """Bug: chips are listed once per name, so the second `webfech` has no chip and no
    removal edit although the parse reports it there (TOOL-04: a repeated unknown name is
    a separate mistake at each position)."""
    chips = _chips(impl, REPEATED)
    parsed = impl.parse(REPEATED, filename="a.md")["diagnostics"]
    codes = {"TOOL-UNKNOWN", "TOOL-MCP-STYLE", "SKILL-NOT-FOUND", "MCP-UNKNOWN-SERVER"}
    want = sorted((tuple(d["path"]), d["code"]) for d in parsed if d["code"] in codes)
    got = sorted((tuple(c["path"]), c["code"]) for c in chips)
    assert got == want, "a chip and a parse disagree"
    assert sorted(c["index"] for c in chips) == [1, 3, 4, 5], chips
    second = next(c for c in chips if c["index"] == 3)
    assert second["name"] == "webfech", second
    assert (second["removal"]["field"], second["removal"]["remove"]) == ("tools", 3), second
    result = edit(impl, REPEATED, second["removal"], "a.md")
    assert result["applied"] is True, result["refusal"]
    assert definition(impl, result["document"], "a.md")["tools"] == [
        "Read", "webfech", "Grep", "WEBFECH", "zqxvjkw"]


KB_WITHOUT_READ = """---
name: helper
description: Helps.
tools: grep
knowledge:
  - {name: handbook, glob: ./docs/**/*.md}
---
Help.
"""


@pytest.mark.case("edit.form.diagnostics-parse-mode")
@pytest.mark.req("EDIT-02", "DEF-02")
def test_an_edit_reports_the_parse_mode_diagnostics_of_its_result(impl: Harness) -> None:
    """Bug: the diagnostics of an edit come from the save validator, so knowledge without
    `read` shows as an error (save mode) in the form while a parse of the same document
    calls it a warning (DEF-02, KB-08)."""
    result = edit(impl, KB_WITHOUT_READ, {"field": "description", "value": "Helps more."},
                  "a.md")
    assert result["applied"] is True, result["refusal"]
    parsed = impl.parse(result["document"], filename="a.md")["diagnostics"]
    assert result["diagnostics"] == parsed


@pytest.mark.case("edit.form.empty-list-keeps-key")
@pytest.mark.req("EDIT-02")
def test_setting_a_list_to_empty_keeps_the_key(impl: Harness) -> None:
    """Bug: setting a list to `[]` deletes the key, as `null` does: the explicit "none"
    the user chose is gone from the file, and the definition reads the field as absent
    instead of `[]` (a reader that takes an absent `tools` as "inherit everything" would
    then grant more, DEF-01)."""
    source = ("---\nname: helper\ndescription: Helps.\ntools: Read, Grep\nskills:\n  - tone\n"
              "mcp:\n  servers: [crm]\nknowledge:\n  - {name: handbook, glob: ./docs/*.md}\n"
              "---\nHelp.\n")
    before = definition(impl, source, "a.md")
    for field, key, empty in (("tools", "tools", []), ("skills", "skills", []),
                              ("mcp.servers", "mcp", {"servers": []}),
                              ("knowledge", "knowledge", [])):
        result = edit(impl, source, {"field": field, "value": []}, "a.md")
        assert result["applied"] is True, (field, result["refusal"])
        assert re.search(rf"(?m)^{key}:", result["document"]), (
            f"setting {field} to [] removed the key")
        assert definition(impl, result["document"], "a.md") == {**before, key: empty}, field
