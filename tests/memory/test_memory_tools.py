"""memory_write / memory_read / memory_search: schemas and behaviour (MEM-02, MEM-03, MEM-06)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from memory_support import make_world, toolbox, write_file

from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import tools as memory_tools
from capconf.simulator.memory.names import NAME_PATTERN
from capconf.simulator.memory.search import (
    MAX_HITS,
    MAX_LINE_CHARS,
    SearchDocument,
    query_terms,
    search,
)
from capconf.simulator.memory.tools import (
    MAX_ENTRY_BYTES,
    MEMORY_READ_SCHEMA,
    MEMORY_SEARCH_SCHEMA,
    MEMORY_WRITE_SCHEMA,
    READ_LIMIT_BYTES,
    TOOL_ERROR_CODES,
    MemoryToolbox,
    mount_tools,
)

SCHEMAS = {
    "memory_write": MEMORY_WRITE_SCHEMA,
    "memory_read": MEMORY_READ_SCHEMA,
    "memory_search": MEMORY_SEARCH_SCHEMA,
}
DIRECTORY_WORDS = ("scope", "dir", "directory", "folder", "path", "root", "cwd", "global",
                   "agent", "namespace", "location", "target", "base")


@pytest.fixture
def box(tmp_path: Path) -> MemoryToolbox:
    return toolbox(make_world(tmp_path / "ws"), "reviewer")


def bound(box: MemoryToolbox) -> Path:
    return box.workspace / box.directory


def ok(result: Any) -> dict[str, Any]:
    assert result.ok, result.to_json()
    content: dict[str, Any] = result.content
    return content


def err(result: Any, code: str) -> dict[str, Any]:
    assert not result.ok, result.to_json()
    assert result.error.code == code, result.to_json()
    assert code in {row[0] for row in TOOL_ERROR_CODES}  # every code is in the published table
    detail: dict[str, Any] = result.error.detail
    return detail


# --- schemas -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_schema_is_closed_and_has_no_directory_parameter(name: str) -> None:
    schema = SCHEMAS[name]
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert "patternProperties" not in schema and "dependentSchemas" not in schema
    for prop in schema["properties"]:
        assert not any(word in prop.lower() for word in DIRECTORY_WORDS), prop


def test_the_only_string_that_reaches_a_path_is_a_patterned_file_name() -> None:
    """Free-text strings (content, query) are never used as paths (the isolation property
    test proves it); the one string used as a path carries the one-component pattern."""
    for schema in SCHEMAS.values():
        for prop, spec in schema["properties"].items():
            if spec["type"] == "string" and prop not in ("content", "query"):
                assert prop == "file"
                assert spec["pattern"] == NAME_PATTERN and spec["maxLength"] == 64
                for bad in ("/x.md", "a/b.md", "..", "../x.md", "a\\b.md", ".x.md"):
                    assert re.fullmatch(NAME_PATTERN[1:-1], bad) is None, bad
            else:
                assert spec["type"] in ("string", "boolean")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
@pytest.mark.parametrize("extra", [{"scope": "global"}, {"dir": "/"}, {"path": "../../x"}])
def test_schema_rejects_forged_directory_arguments(name: str, extra: dict[str, str]) -> None:
    base = {"memory_write": {"file": "a.md", "content": "x"}, "memory_read": {},
            "memory_search": {"query": "x"}}[name]
    jsonschema.validate(base, SCHEMAS[name])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**base, **extra}, SCHEMAS[name])


def test_mounted_tools_are_the_three_in_order(box: MemoryToolbox) -> None:
    tools = mount_tools(box)
    assert [t.name for t in tools] == ["memory_write", "memory_read", "memory_search"]
    assert [t.input_schema for t in tools] == [MEMORY_WRITE_SCHEMA, MEMORY_READ_SCHEMA,
                                               MEMORY_SEARCH_SCHEMA]
    assert all("scope" not in t.description for t in tools)


# --- argument errors ---------------------------------------------------------------------

@pytest.mark.parametrize(("args", "code", "reason"), [
    ([], "MEM-BAD-ARGUMENTS", "not_an_object"),
    ("notes.md", "MEM-BAD-ARGUMENTS", "not_an_object"),
    ({"content": "x"}, "MEM-BAD-ARGUMENTS", "missing"),
    ({"file": "a.md"}, "MEM-BAD-ARGUMENTS", "missing"),
    ({"file": 3, "content": "x"}, "MEM-BAD-ARGUMENTS", "type"),
    ({"file": "a.md", "content": "x", "daily": 1}, "MEM-BAD-ARGUMENTS", "type"),
    ({"file": "a.md", "content": "x", "daily": "true"}, "MEM-BAD-ARGUMENTS", "type"),
    ({"file": "a.md", "content": "\ud800"}, "MEM-BAD-ARGUMENTS", "not_utf8"),
    ({"file": "a.md", "content": "  \n"}, "MEM-BAD-ARGUMENTS", "blank_or_nul"),
    ({"file": "a.md", "content": "a\x00b"}, "MEM-BAD-ARGUMENTS", "blank_or_nul"),
    ({"file": "../a.md", "content": "x"}, "MEM-BAD-FILE-NAME", "separator"),
    ({"file": "a.txt", "content": "x"}, "MEM-BAD-FILE-NAME", "suffix"),
])
def test_bad_write_arguments(box: MemoryToolbox, args: object, code: str, reason: str) -> None:
    assert err(box.write(args), code)["reason"] == reason
    assert list(bound(box).parent.iterdir()) == []  # nothing created, not even the directory


def test_unknown_arguments_are_rejected_and_listed(box: MemoryToolbox) -> None:
    detail = err(box.write({"file": "a.md", "content": "x", "scope": "global", "dir": "/"}),
                 "MEM-UNKNOWN-ARGUMENT")
    assert detail["unknown"] == ["dir", "scope"]
    assert detail["allowed"] == ["file", "content", "daily"]
    err(box.read({"scope": "global"}), "MEM-UNKNOWN-ARGUMENT")
    err(box.search({"query": "x", "path": "../../x"}), "MEM-UNKNOWN-ARGUMENT")


# --- memory_write --------------------------------------------------------------------------

def test_write_appends_whole_entries_each_ending_in_a_newline(box: MemoryToolbox) -> None:
    ok(box.write({"file": "notes.md", "content": "first"}))
    out = ok(box.write({"file": "notes.md", "content": "second\n"}))
    assert (bound(box) / "notes.md").read_bytes() == b"first\nsecond\n"
    assert out == {"file": "notes.md", "daily": False, "appended_bytes": 7, "size": 13,
                   "within_resident_budget": True}


def test_write_separates_an_entry_from_a_hand_edited_last_line(box: MemoryToolbox) -> None:
    write_file(bound(box) / "notes.md", "edited by hand")
    assert ok(box.write({"file": "notes.md", "content": "entry"}))["appended_bytes"] == 7
    assert (bound(box) / "notes.md").read_bytes() == b"edited by hand\nentry\n"


def test_daily_writes_go_to_the_daily_folder_and_are_never_resident(box: MemoryToolbox) -> None:
    out = ok(box.write({"file": "2026-11-29.md", "content": "log", "daily": True}))
    assert out["within_resident_budget"] is False
    assert (bound(box) / "daily" / "2026-11-29.md").read_bytes() == b"log\n"
    assert not (bound(box) / "2026-11-29.md").exists()


def test_entry_size_limit_is_inclusive(box: MemoryToolbox) -> None:
    """The limit counts the entry as stored, its newline included (MEM-05/MEM-07)."""
    ok(box.write({"file": "a.md", "content": "é" * (MAX_ENTRY_BYTES // 2 - 1) + "x\n"}))
    ok(box.write({"file": "b.md", "content": "x" * (MAX_ENTRY_BYTES - 1)}))
    detail = err(box.write({"file": "a.md", "content": "x" * MAX_ENTRY_BYTES}),
                 "MEM-ENTRY-TOO-LARGE")
    assert detail["bytes"] == MAX_ENTRY_BYTES + 1
    detail = err(box.write({"file": "a.md", "content": "x" * MAX_ENTRY_BYTES + "é"}),
                 "MEM-ENTRY-TOO-LARGE")
    assert detail["bytes"] == MAX_ENTRY_BYTES + 3


def test_every_accepted_entry_is_resident_in_an_empty_file(box: MemoryToolbox) -> None:
    """The numbers agree: the largest accepted entry fits the per-file budget."""
    out = ok(box.write({"file": "c.md", "content": "x" * (MAX_ENTRY_BYTES - 1)}))
    assert out["size"] == MAX_ENTRY_BYTES and out["within_resident_budget"] is True


def test_within_resident_budget_flips_past_4096_bytes(box: MemoryToolbox) -> None:
    ok(box.write({"file": "a.md", "content": "x" * 4095}))  # 4096 with the newline
    assert ok(box.write({"file": "b.md", "content": "x" * 4095}))["within_resident_budget"]
    assert not ok(box.write({"file": "b.md", "content": "y"}))["within_resident_budget"]


# --- memory_read ---------------------------------------------------------------------------

def test_read_lists_and_reads(box: MemoryToolbox) -> None:
    assert ok(box.read({})) == {"files": [], "daily_files": []}
    ok(box.write({"file": "b.md", "content": "bee"}))
    ok(box.write({"file": "A.md", "content": "ay"}))
    ok(box.write({"file": "d.md", "content": "dee", "daily": True}))
    write_file(bound(box) / "skip me.md", "x")
    write_file(bound(box) / "other.txt", "x")
    assert ok(box.read({})) == {"files": ["A.md", "b.md"], "daily_files": ["d.md"]}
    assert ok(box.read({"file": "d.md", "daily": True}))["content"] == "dee\n"
    err(box.read({"file": "d.md"}), "MEM-FILE-NOT-FOUND")
    err(box.read({"file": "..", "daily": True}), "MEM-BAD-FILE-NAME")


def test_read_truncates_on_a_character_boundary(box: MemoryToolbox) -> None:
    data = ("x" + "é" * READ_LIMIT_BYTES).encode()
    write_file(bound(box) / "big.md", data)
    out = ok(box.read({"file": "big.md"}))
    assert out["truncated"] is True and out["size"] == len(data)
    assert out["content"] == "x" + "é" * ((READ_LIMIT_BYTES - 1) // 2)
    write_file(bound(box) / "exact.md", b"y" * READ_LIMIT_BYTES)
    out = ok(box.read({"file": "exact.md"}))
    assert out["truncated"] is False and len(out["content"]) == READ_LIMIT_BYTES


# --- memory_search -------------------------------------------------------------------------

def test_ranking_is_a_total_order() -> None:
    docs = (
        SearchDocument("b.md", False, "deploy\ndeploy deploy deploy\n"),
        SearchDocument("a.md", True, "deploy staging\n"),
        SearchDocument("a.md", False, "nothing\ndeploy staging\nDEPLOY\n"),
        SearchDocument("c.md", False, "deploy staging\n"),
    )
    hits = search(docs, query_terms("Deploy  STAGING deploy")).hits
    assert [(h.file, h.daily, h.line) for h in hits] == [
        ("a.md", False, 2),  # 2 terms, 2 occurrences, root, a < c
        ("c.md", False, 1),
        ("a.md", True, 1),  # daily after root
        ("b.md", False, 2),  # 1 term, 3 occurrences
        ("a.md", False, 3),  # 1 term, 1 occurrence: file a before b
        ("b.md", False, 1),
    ]
    assert hits[0].terms_matched == 2 and hits[3].occurrences == 3


def test_search_is_substring_based_for_unspaced_scripts() -> None:
    hits = search((SearchDocument("n.md", False, "用户偏好深色主题\n"),), query_terms("深色")).hits
    assert [h.line for h in hits] == [1]


@pytest.mark.parametrize(("query", "terms"), [
    ("\u00c9CLAIR \u00e9clair", ("\u00c9clair", "\u00e9clair")),  # only A-Z fold
    ("\u212aelvin KELVIN", ("\u212aelvin", "kelvin")),  # KELVIN SIGN is not K
    ("a\x1cb", ("a\x1cb",)),  # U+001C is not White_Space (Python's str.split splits)
    ("a\u3000B\u00a0c\u2028d", ("a", "b", "c", "d")),
    ("a\u200bb\ufeffc", ("a\u200bb\ufeffc",)),  # zero-width space, BOM: not White_Space
])
def test_query_terms_fold_ascii_only_and_split_on_white_space(
        query: str, terms: tuple[str, ...]) -> None:
    assert query_terms(query) == terms


def test_lines_fold_ascii_only() -> None:
    doc = SearchDocument("n.md", False, "\u00c9clair\n\u00e9clair\nECLAIR\n\u212aelvin\nkelvin\n")
    assert [h.line for h in search((doc,), query_terms("\u00e9clair kelvin")).hits] == [2, 5]
    assert [h.line for h in search((doc,), query_terms("ECLAIR")).hits] == [3]


def test_search_caps_hits_and_lines() -> None:
    docs = (SearchDocument("n.md", False, "\n".join(["k" * 500] * (MAX_HITS + 7))),)
    outcome = search(docs, ("k",))
    assert len(outcome.hits) == MAX_HITS and outcome.total_matches == MAX_HITS + 7
    assert outcome.hits_truncated
    assert all(len(h.text) == MAX_LINE_CHARS and h.line_truncated for h in outcome.hits)
    assert [h.line for h in outcome.hits] == list(range(1, MAX_HITS + 1))


def test_search_tool_covers_root_and_daily(box: MemoryToolbox) -> None:
    ok(box.write({"file": "notes.md", "content": "prefers tabs"}))
    ok(box.write({"file": "d.md", "content": "TABS again", "daily": True}))
    out = ok(box.search({"query": "tabs"}))
    assert [(h["file"], h["daily"]) for h in out["hits"]] == [("notes.md", False), ("d.md", True)]
    assert out["files_searched"] == 2 and out["read_truncated"] is False
    err(box.search({"query": "   "}), "MEM-BAD-ARGUMENTS")
    err(box.search({"query": "x" * 257}), "MEM-BAD-ARGUMENTS")


def test_search_read_budget_skips_the_crossing_file_whole(
    box: MemoryToolbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(memory_tools, "SEARCH_READ_BUDGET", 20)
    write_file(bound(box) / "a.md", "key " * 3)  # 12 bytes
    write_file(bound(box) / "b.md", "key " * 3)  # would make 24
    write_file(bound(box) / "c.md", "key\n")  # 16 in all
    out = ok(box.search({"query": "key"}))
    assert [h["file"] for h in out["hits"]] == ["a.md", "c.md"]
    assert out["bytes_read"] == 16 and out["read_truncated"] is True
    assert out["skipped"] == [{"file": "b.md", "daily": False, "reason": "read_budget"}]


def test_missing_directory_is_empty_not_an_error(box: MemoryToolbox) -> None:
    assert ok(box.search({"query": "x"}))["hits"] == []
    assert not bound(box).exists()


def test_shared_toolbox_is_bound_to_the_main_directory(tmp_path: Path) -> None:
    world = make_world(tmp_path / "ws")
    shared = toolbox(world, "reviewer", MemoryMode.SHARED)
    ok(shared.write({"file": "MEMORY.md", "content": "shared fact"}))
    assert (world.workspace / "mem/main/MEMORY.md").read_text() == "shared fact\n"
