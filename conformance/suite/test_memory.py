"""Memory (MEM-01..10): modes, scope-free tools bound to one directory, resident budgets,
daily search, serialised appends, and the main memory's switch.

The harness owns the workspace, so it plants files and links directly on disk and checks
the tree before and after each call; the layout (MEM-01) is normative, so it knows where a
private or shared agent's memory lives. Each test names the buggy implementation it is for.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.conformance.cases import default_world
from capconf.conformance.harness import (
    Harness,
    codes,
    expect,
    expect_catalog,
    expect_keys,
    expect_true,
    without_descriptions,
)

WORLD = default_world()
ROOT, MAIN = "mem/agents", "mem/main"
MEMORY_WORLD = {"subagent_root": ROOT, "main_dir": MAIN, "main_enabled": False}
TOOLS = ["memory_write", "memory_read", "memory_search"]

_HEAD = r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"  # not ASCII other than A-Z a-z 0-9
_TAIL = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"  # ... and `-` `_`
NAME_PATTERN = f"^{_HEAD}({_TAIL}|\\.{_TAIL})*\\.md$"
FILE = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NAME_PATTERN,
        "description": "A file name such as notes.md: one name, no folders."}
DAILY = {"type": "boolean", "default": False,
         "description": "true for a daily file (found only by memory_search), false for a "
                        "resident root file."}
SCHEMAS: dict[str, dict[str, Any]] = {
    "memory_write": {
        "type": "object",
        "properties": {"file": FILE, "content": {
            "type": "string", "minLength": 1,
            "description": "The entry to append, at most 4096 UTF-8 bytes."}, "daily": DAILY},
        "required": ["file", "content"], "additionalProperties": False},
    "memory_read": {"type": "object", "properties": {"file": FILE, "daily": DAILY},
                    "required": [], "additionalProperties": False},
    "memory_search": {
        "type": "object",
        "properties": {"query": {"type": "string", "minLength": 1, "maxLength": 256,
                                 "description": "Keywords separated by spaces; matching "
                                                "ignores the case of ASCII letters only."}},
        "required": ["query"], "additionalProperties": False},
}
DESCRIPTIONS = {
    "memory_write": (
        "Append an entry to one of your memory files; entries are never overwritten. A root "
        "file (daily=false) is resident: it is shown in the Memory section of your prompt, up "
        "to 4096 bytes per file and 12288 bytes in all, and a larger file is left out whole. "
        "A daily file (daily=true) is found only by memory_search. Your memory directory is "
        "fixed when the tool is mounted; no argument can choose another one."),
    "memory_read": ("Read one of your memory files (at most 65536 bytes), or list your root "
                    "and daily files when file is omitted."),
    "memory_search": (
        "Keyword search over your memory files, root and daily. Returns at most 50 ranked "
        "lines as file, daily, line and text (cut at 400 characters). A hit is a line, not "
        "an answer: read the file with memory_read for context."),
}
HEAD_PRIVATE = (
    "## Memory\nMode: private. This memory is yours alone: nothing you write here reaches "
    "the main agent's memory.\nmemory_write appends entries; memory_read and memory_search "
    "look them up. Root files are resident and shown below (at most 4096 bytes per file and "
    "12288 bytes in all); daily files are found only with memory_search.")


def cases(prefix: str, rows: list[tuple[str, tuple[Any, ...]]]) -> list[Any]:
    """Parametrized rows, each with its own stable case ID ``<prefix>.<suffix>``."""
    return [pytest.param(*values, id=suffix, marks=pytest.mark.case(f"{prefix}.{suffix}"))
            for suffix, values in rows]


def definition(mode: str | None = "private", name: str = "reviewer") -> str:
    memory = "" if mode is None else f"memory: {mode}\n"
    return f"name: {name}\ndescription: reviews\ntools: [read]\n{memory}prompt: Review.\n"


def setup(impl: Harness, **memory: Any) -> None:
    for root in (ROOT, MAIN):
        (impl.workspace / root).mkdir(parents=True, exist_ok=True)
    impl.setup(**WORLD, memory={**MEMORY_WORLD, **memory})


def spawn(impl: Harness, mode: str = "private", name: str = "reviewer") -> str:
    result = impl.driver.request("agent.spawn", {"source": definition(mode, name)})
    agent: str = result["agent"]
    return agent


def call(impl: Harness, agent: str, tool: str, args: Any) -> dict[str, Any]:
    result: dict[str, Any] = impl.driver.request("tool.call",
                                                 {"agent": agent, "tool": tool, "args": args})
    return result


def section(impl: Harness, mode: str = "private", name: str = "reviewer") -> str:
    parts = impl.prompt(definition(mode, name))["parts"]
    [text] = [p["text"] for p in parts if p["kind"] == "catalog.memory"]
    return str(text)


def own(impl: Harness, name: str = "reviewer", mode: str = "private") -> str:
    """The memory directory the implementation binds for ``name`` (workspace-relative).

    Asked, never assumed: the private layout is the implementation's choice (TEXT-02).
    ``memory.layout.private-and-shared`` checks that the answer is where the tools write.
    """
    directory = impl.memory_dir(definition(mode, name))
    expect_true(directory is not None, "MEM-01: a declared private/shared memory is bound "
                "to a directory", (name, mode))
    assert directory is not None
    return directory


def inside(path: str, top: str) -> bool:
    """``path`` is ``top`` or below it (workspace-relative POSIX paths)."""
    return path == top or path.startswith(top.rstrip("/") + "/")


def overlaps(a: str, b: str) -> bool:
    return inside(a, b) or inside(b, a)


def files_under(top: Path) -> list[str]:
    """Every non-directory entry under ``top``, relative, sorted (links not followed)."""
    if not top.exists():
        return []
    return sorted(p.relative_to(top).as_posix() for p in top.rglob("*")
                  if p.is_symlink() or not p.is_dir())


def relative_to(target: Path, link_dir: Path) -> str:
    """A relative link text from ``link_dir`` to ``target``, as a user would plant it."""
    return os.path.relpath(target, link_dir)


def tree(top: Path, exclude: Path | None = None) -> dict[str, Any]:
    """Kind, bytes and mtime of every entry under ``top`` (links not followed)."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != exclude]
        for name in sorted(dirnames + filenames):
            path = here / name
            if path == exclude:
                continue
            st_ = path.lstat()
            if path.is_symlink():
                value: Any = ("link", os.readlink(path))
            elif path.is_dir():
                value = ("dir", st_.st_mtime_ns)
            else:
                value = ("file", path.read_bytes(), st_.st_mtime_ns)
            out[path.relative_to(top).as_posix()] = value
    return out


# --- MEM-01 / MEM-02: modes and mounting ---------------------------------------------------

@pytest.mark.req("MEM-02", "MEM-01")
@pytest.mark.parametrize("mode", cases("memory.mount.none-mounts-nothing", [
    ("absent", (None,)), ("none", ("none",)), ("None", ("None",))]))
def test_mode_none_mounts_no_tools_and_no_section(impl: Harness, mode: str | None) -> None:
    """Bug: memory tools mounted for every agent, or an empty `## Memory` heading."""
    setup(impl)
    mounted = [t["name"] for t in impl.mounted(definition(mode))["tools"]]
    assert not set(mounted) & set(TOOLS)
    parts = [p["kind"] for p in impl.prompt(definition(mode))["parts"]]
    assert "catalog.memory" not in parts


@pytest.mark.req("MEM-02", "MEM-03")
@pytest.mark.parametrize("mode", cases("memory.mount.three-tools", [
    ("private", ("private",)), ("shared", ("shared",))]))
def test_private_and_shared_mount_the_three_tools_as_specified(impl: Harness,
                                                               mode: str) -> None:
    """Bug: a `scope` parameter in the schema, a loose schema, or a renamed tool."""
    setup(impl)
    tools = [t for t in impl.mounted(definition(mode))["tools"] if t["name"] in TOOLS]
    assert [t["name"] for t in tools] == TOOLS
    for tool in tools:
        expect(without_descriptions(tool["input_schema"]),
               without_descriptions(SCHEMAS[tool["name"]]),
               f"MEM-03: {tool['name']} input schema (structure; wording is reference-text)")
        expect_true(bool(tool["description"].strip()), "MEM-03: a memory tool has a "
                    "description", tool)


@pytest.mark.case("memory.shared.consent-notice")
@pytest.mark.req("MEM-01")
def test_shared_carries_an_info_notice_and_still_saves(impl: Harness) -> None:
    """Bug: shared silently allowed, or blocked (an error in save mode)."""
    setup(impl)
    for mode in ("parse", "save"):
        result = impl.parse(definition("shared"), mode=mode)
        [notice] = [d for d in result["diagnostics"] if d["code"] == "MEM-SHARED-CONSENT"]
        assert notice["severity"] == "info" and notice["path"] == ["memory"]
        # what the notice must convey, not its sentence (TEXT-01): where the writes go
        # (the main memory) and the fix (private)
        message = notice["message"].lower()
        assert "main" in message and "private" in message, notice
    assert impl.save(definition("shared"))["saved"] is True
    assert "MEM-SHARED-CONSENT" not in codes(impl.parse(definition("private")))


# --- MEM-03: no scope, the directory is bound ---------------------------------------------

FORGED = [{"scope": "global"}, {"dir": "/"}, {"path": "../../x"}, {"directory": MAIN},
          {"scope": "global", "dir": MAIN}, {"Scope": "global"}, {"\uff53cope": "global"},
          {"agent": "main"}, {"root": "."}]
BASE = {"memory_write": {"file": "notes.md", "content": "forged"},
        "memory_read": {"file": "MEMORY.md"}, "memory_search": {"query": "secret"}}


@pytest.mark.case("memory.scope.forged-arguments-refused")
@pytest.mark.req("MEM-03")
def test_forged_scope_arguments_are_refused_and_touch_nothing(impl: Harness) -> None:
    """Bug: a runtime that honours `scope: "global"` (or silently ignores it, so the model
    believes it wrote to global memory)."""
    setup(impl)
    impl.write(f"{MAIN}/MEMORY.md", "MAIN-SECRET\n")
    agent = spawn(impl)
    before = tree(impl.workspace)
    for tool, base in BASE.items():
        for extra in FORGED:
            result = call(impl, agent, tool, {**base, **extra})
            assert result["ok"] is False, (tool, extra)
            assert result["error_code"] == "MEM-UNKNOWN-ARGUMENT", (tool, extra, result)
            assert "MAIN-SECRET" not in json.dumps(result)
    assert tree(impl.workspace) == before


HOSTILE_NAMES = ["../main/MEMORY.md", "../../x.md", "/etc/passwd", "..", "a/b.md", "a\\b.md",
                 "\u2215main.md", "\uff0e\uff0e\uff0fMEMORY.md", "x.md\x00", "C:\\x.md",
                 ".hidden.md", "notes.txt", "a" * 62 + ".md", "con.md", "MEMORY.md\n"]
hostile_values = st.sampled_from(["global", "../../x", MAIN, "/", ".."]) | st.text(max_size=8)


@pytest.mark.case("memory.scope.property-no-byte-outside")
@pytest.mark.req("MEM-03", "MEM-04")
@settings(max_examples=40, deadline=None)
@given(tool=st.sampled_from(TOOLS), name=st.sampled_from([*HOSTILE_NAMES, "ok.md"]),
       extra=st.dictionaries(st.sampled_from(["scope", "dir", "path", "cwd", "global", "x"]),
                             hostile_values, max_size=2),
       daily=st.booleans())
def test_no_argument_reaches_outside_the_bound_directory(
        impl: Harness, tool: str, name: str, extra: dict[str, str], daily: bool) -> None:
    """Bug: a file name or extra argument joined into a path (`../main/MEMORY.md`)."""
    setup(impl)
    impl.write(f"{MAIN}/MEMORY.md", "MAIN-SECRET\n")
    impl.write(f"{own(impl, 'other')}/notes.md", "OTHER-SECRET\n")
    impl.write("outside.md", "WS-SECRET\n")
    agent = spawn(impl)
    bound = impl.workspace / own(impl)
    bound.mkdir(parents=True, exist_ok=True)  # creating the bound directory itself is allowed
    before = tree(impl.workspace, exclude=bound)
    by_tool: dict[str, dict[str, Any]] = {
        "memory_write": {"file": name, "content": "x", "daily": daily},
        "memory_read": {"file": name, "daily": daily},
        "memory_search": {"query": name}}
    args = by_tool[tool]
    result = call(impl, agent, tool, {**args, **extra})
    assert tree(impl.workspace, exclude=bound) == before
    assert not re.search(r"(MAIN|OTHER|WS)-SECRET", json.dumps(result))
    if extra:
        assert result["error_code"] == "MEM-UNKNOWN-ARGUMENT"


@pytest.mark.req("MEM-09", "MEM-03")
@pytest.mark.parametrize(("name", "reason"), cases("memory.names", [
    ("empty", ("", "empty")), ("nul", ("a\x00.md", "nul")), ("absolute", ("/abs.md", "absolute")),
    ("drive", ("C:x.md", "absolute")), ("slash", ("a/b.md", "separator")),
    ("backslash", ("a\\b.md", "separator")), ("dotdot", ("..", "dot_dot")),
    ("dotdot-inside", ("a..md", "dot_dot")), ("too-long", ("a" * 62 + ".md", "too_long")),
    ("division-slash", ("\u2215x.md", "charset")),
    ("space", ("my notes.md", "charset")), ("hidden", (".x.md", "leading")),
    ("upper-suffix", ("notes.MD", "suffix")), ("no-suffix", ("notes", "suffix")),
    ("device", ("con.md", "reserved")), ("device-upper", ("LPT1.md", "reserved")),
    ("device-dotted", ("con.notes.md", "reserved"))]))
def test_bad_file_names_get_a_structured_error(impl: Harness, name: str, reason: str) -> None:
    """Bug: names validated by a deny-list that misses look-alikes or `\\`."""
    setup(impl)
    agent = spawn(impl)
    result = call(impl, agent, "memory_write", {"file": name, "content": "x"})
    assert (result["error_code"], result["error_detail"]["reason"]) == (
        "MEM-BAD-FILE-NAME", reason)
    assert files_under(impl.workspace / ROOT) == []


@pytest.mark.case("memory.names.device-prefix-accepted")
@pytest.mark.req("MEM-09")
def test_names_that_only_start_like_a_device_are_usable(impl: Harness) -> None:
    """Bug: the device rule tested as a prefix of the name (`console.md`, `com10.md`
    refused). MEM-09 reserves a name whose part before its first `.` is a device name."""
    setup(impl)
    agent = spawn(impl)
    for name in ("console.md", "com10.md", "nul-log.md"):
        result = call(impl, agent, "memory_write", {"file": name, "content": "x"})
        expect((result["ok"], result.get("error_code")), (True, None),
               f"MEM-09: {name} is not a reserved device name")


# --- MEM-04 / MEM-10: private never writes the main memory ----------------------------------

@pytest.mark.case("memory.layout.private-and-shared")
@pytest.mark.req("MEM-04", "MEM-01")
def test_private_writes_its_own_directory_shared_writes_main(impl: Harness) -> None:
    """Bug: private memory stored in (or next to, then merged into) the main memory; or
    `memory.locate` answering a directory the tools do not use."""
    setup(impl)
    private = spawn(impl, "private", "Code-Reviewer")
    shared = spawn(impl, "shared", "helper")
    assert call(impl, private, "memory_write", {"file": "MEMORY.md", "content": "p"})["ok"]
    assert call(impl, shared, "memory_write", {"file": "MEMORY.md", "content": "s"})["ok"]
    located = own(impl, "Code-Reviewer")
    expect_true(inside(located, ROOT) and not overlaps(located, MAIN),
                "MEM-04: a private directory lies inside subagent_root, apart from main_dir",
                located)
    expect_true(files_under(impl.workspace / ROOT) == [f"{located}/MEMORY.md"[len(ROOT) + 1:]],
                "MEM-04: the private write landed in the located directory and nowhere else",
                files_under(impl.workspace / ROOT))
    assert (impl.workspace / located / "MEMORY.md").read_text() == "p\n"
    assert own(impl, "helper", "shared") == MAIN, "MEM-01: shared is the main memory itself"
    assert (impl.workspace / MAIN / "MEMORY.md").read_text() == "s\n"


@pytest.mark.case("memory.layout.properties")
@pytest.mark.req("MEM-01", "MEM-04")
def test_private_directories_one_per_agent_whatever_the_spelling(impl: Harness) -> None:
    """Bug: a directory keyed by the raw name (`Reviewer` and `reviewer` split on Linux and
    merge on macOS), a prefix-based layout (`reviewer2` inside `reviewer`), or a fresh
    directory per spawn (the agent forgets). The spelling itself is free (TEXT-02)."""
    setup(impl)
    names = ["reviewer", "reviewer2", "re", "Σοφία", "σοφία", "翻译助手", "翻译助理"]
    located = {name: own(impl, name) for name in names}
    expect_true(len(set(located.values())) == len(names),
                "MEM-01: distinct agent names get distinct directories", located)
    for name, directory in located.items():
        expect_true(inside(directory, ROOT) and not overlaps(directory, MAIN),
                    "MEM-04: inside subagent_root, apart from main_dir", (name, directory))
        others = [d for n, d in located.items() if n != name]
        expect_true(not any(inside(directory, d) for d in others),
                    "MEM-01: no agent's directory sits inside another's", (name, directory))
    assert own(impl, "REVIEWER") == located["reviewer"], "names equal up to ASCII case share"
    first = spawn(impl, "private", "Reviewer")
    assert call(impl, first, "memory_write", {"file": "fact.md", "content": "kept"})["ok"]
    again = spawn(impl, "private", "reviewer")
    read = call(impl, again, "memory_read", {"file": "fact.md"})
    expect_true(read["ok"] is True and "kept" in str(read["content"]),
                "MEM-01: a later spawn of the same agent (up to ASCII case) reads what an "
                "earlier one wrote", read)
    stranger = spawn(impl, "private", "reviewer2")
    assert call(impl, stranger, "memory_read", {"file": "fact.md"})["ok"] is False
    assert impl.memory_dir(definition("none")) is None, "mode none binds nothing"


@pytest.mark.case("memory.layout.reference-spelling")
@pytest.mark.req("TEXT-02", "MEM-01")
def test_reference_private_directory_spelling(impl: Harness) -> None:
    """The reference's layout: `<subagent_root>/<ASCII lower-case name>`, and `_` + 32 hex
    of SHA-256 for a name with non-ASCII letters."""
    setup(impl)
    assert own(impl, "Code-Reviewer") == f"{ROOT}/code-reviewer"
    assert own(impl, "翻译助手") == f"{ROOT}/_7bf3458cc0ff54740556c1115ccc637e"


@pytest.mark.req("MEM-04", "MEM-10")
@pytest.mark.parametrize(("name", "plant", "kind"), cases("memory.links.file", [
    ("symlink", ("link.md", "symlink", "symlink")),
    ("dangling-symlink", ("dangling.md", "dangling", "symlink")),
    ("hard-link", ("hard.md", "hardlink", "hard_linked"))]))
def test_links_planted_in_private_memory_do_not_reach_main(impl: Harness, name: str,
                                                           plant: str, kind: str) -> None:
    """Bug: open() follows a symlink (or writes through a hard link) into the main memory."""
    setup(impl)
    main_file = impl.write(f"{MAIN}/MEMORY.md", "MAIN\n")
    bound = impl.workspace / own(impl)
    bound.mkdir(parents=True)
    if plant == "symlink":
        os.symlink(relative_to(impl.workspace / MAIN / "MEMORY.md", bound), bound / name)
    elif plant == "dangling":
        os.symlink(relative_to(impl.workspace / MAIN / "NEW.md", bound), bound / name)
    else:
        os.link(main_file, bound / name)
    agent = spawn(impl)
    before = tree(impl.workspace / MAIN)
    for tool, args in (("memory_write", {"file": name, "content": "POISON"}),
                       ("memory_read", {"file": name})):
        result = call(impl, agent, tool, args)
        assert result["error_code"] == "MEM-NOT-REGULAR-FILE", result
        assert result["error_detail"]["kind"] == kind
    assert tree(impl.workspace / MAIN) == before
    assert "MAIN" not in section(impl)


@pytest.mark.req("MEM-04", "MEM-10")
@pytest.mark.parametrize("plant", cases("memory.links.directory", [
    ("agent-dir", ("agent-dir",)), ("daily-dir", ("daily-dir",))]))
def test_directory_links_are_unsafe_not_followed(impl: Harness, plant: str) -> None:
    """Bug: the memory directory (or daily/) resolved through a link into the main memory."""
    setup(impl)
    impl.write(f"{MAIN}/daily/d.md", "MAIN\n")
    bound = impl.workspace / own(impl)
    if plant == "agent-dir":
        bound.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(relative_to(impl.workspace / MAIN, bound.parent), bound)
    else:
        bound.mkdir(parents=True)
        os.symlink(relative_to(impl.workspace / MAIN / "daily", bound), bound / "daily")
    before = tree(impl.workspace / MAIN)
    parsed = impl.parse(definition("private"))
    if plant == "agent-dir":
        assert "MEM-DIR-UNSAFE" in codes(parsed)
    agent = spawn(impl)
    result = call(impl, agent, "memory_write", {"file": "d.md", "content": "POISON",
                                                "daily": True})
    assert result["error_code"] == "MEM-DIR-UNSAFE"
    assert result["terminal_for_attempt"] is True
    assert tree(impl.workspace / MAIN) == before


@pytest.mark.req("MEM-04", "PROTO-02")
@pytest.mark.parametrize(("root", "main"), cases("memory.world.overlap", [
    ("equal", ("m", "m")), ("root-inside-main", ("m/agents", "m")),
    ("main-inside-root", ("m", "m/agents/x"))]))
def test_world_refuses_a_subagent_root_overlapping_main(impl: Harness, root: str,
                                                        main: str) -> None:
    """Bug: a layout where some agent's private directory is the main memory."""
    error = impl.setup_error(**WORLD, memory={"subagent_root": root, "main_dir": main})
    assert error["code"] == "world_invalid"
    assert error["path"][-2:] == ["memory", "subagent_root"]


@pytest.mark.case("memory.world.sibling-prefix-not-nested")
@pytest.mark.req("MEM-04", "PROTO-02")
def test_world_accepts_sibling_folders_sharing_a_name_prefix(impl: Harness) -> None:
    """Bug: the overlap check is a string-prefix test, so `mem` and `memory` (two sibling
    folders) are refused as nested. MEM-04 compares whole path components."""
    setup(impl, subagent_root="mem", main_dir="memory")
    directory = impl.memory_dir(definition("private"))
    expect_true(directory is not None and inside(directory, "mem")
                and not inside(directory, "memory"), "MEM-04: the private directory lies "
                "in subagent_root `mem`, not in main_dir `memory`", directory)


# --- MEM-05: resident memory ----------------------------------------------------------------

def _blocks(text: str) -> list[str]:
    return text.split("\n\n")[1:]


@pytest.mark.case("memory.resident.exact-section")
@pytest.mark.req("MEM-05")
def test_resident_section_exact_text_and_last_in_catalog(impl: Harness) -> None:
    """Bug: section before another catalog section, or trailing blank lines kept."""
    setup(impl)
    impl.write(f"{own(impl)}/notes.md", "- tabs\n\n")
    impl.write(f"{own(impl)}/MEMORY.md", "# Facts\nuv")
    prompt = impl.prompt(definition())
    assert [p["kind"] for p in prompt["parts"]][-2:] == ["catalog.memory", "body"]
    text = section(impl)
    expect_catalog(text, [("MEMORY.md", "# Facts\nuv"), ("notes.md", "- tabs")],
                   "MEM-05: root files resident in code-point order, contents verbatim")
    expect_true(not text.endswith("\n"), "PROMPT-01: no trailing blank lines", text[-40:])
    expect_true("private" in text, "MEM-05: the section states the mode", text)


@pytest.mark.case("memory.resident.empty")
@pytest.mark.req("MEM-05", "MEM-02")
def test_declared_memory_with_no_files_renders_the_mode(impl: Harness) -> None:
    setup(impl)
    text = section(impl)
    expect_true("private" in text and "memory_write" in text, "MEM-05: with no files the "
                "section still states the mode and the memory tools", text)


@pytest.mark.case("memory.resident.per-file-budget")
@pytest.mark.req("MEM-05")
def test_per_file_budget_at_4096_and_one_over(impl: Harness) -> None:
    """Bug: `<` instead of `<=`, an over-budget file truncated instead of omitted, or the
    budget checked on the text after its trailing newlines are dropped (a 4097-byte file
    ending in newlines is injected)."""
    setup(impl)
    impl.write(f"{own(impl)}/a.md", "a" * 4096)
    impl.write(f"{own(impl)}/b.md", "b" * 4097)
    impl.write(f"{own(impl)}/c.md", "c" * 4095 + "\n\n")
    text = section(impl)
    expect_catalog(text, [("a.md", "a" * 4096), ("b.md", "memory_read"),
                          ("c.md", "memory_read")], "MEM-05: a file of 4096 bytes is "
                   "resident; one of 4097 (trailing newlines included: the file as stored) "
                   "is named, left out whole, and the section points to memory_read")
    expect_true("c" * 4095 not in text, "MEM-05: c.md is 4097 bytes as stored",
                text[-300:])
    expect_true("b" * 100 not in text, "MEM-05: an over-budget file is omitted, never "
                "truncated", text[-300:])


@pytest.mark.req("MEM-05")
@pytest.mark.parametrize(("last", "fits"), cases("memory.resident.section-budget", [
    ("at", (1, True)), ("one-over", (2, False))]))
def test_section_budget_at_12288_and_one_over(impl: Harness, last: int, fits: bool) -> None:
    setup(impl)
    for name, size in (("a", 4096), ("b", 4096), ("c", 4095), ("d", last)):
        impl.write(f"{own(impl)}/{name}.md", name * size)
    text = section(impl)
    expect_catalog(text, [("a.md", "a" * 4096), ("b.md", "b" * 4096), ("c.md", "c" * 4095),
                          ("d.md",)], "MEM-05: files in code-point order")
    tail = text[text.rindex("d.md"):]
    expect_true(("memory_read" not in tail) == fits, "MEM-05: the section holds at most "
                f"12288 bytes of files; d.md ({last} bytes) must be "
                + ("resident" if fits else "omitted with a pointer to memory_read"), tail)


@pytest.mark.case("memory.resident.bytes-not-characters")
@pytest.mark.req("MEM-05")
def test_budget_counts_utf8_bytes(impl: Harness) -> None:
    """Bug: budget in characters (2049 x 'é' is 4098 bytes)."""
    setup(impl)
    impl.write(f"{own(impl)}/a.md", "\u00e9" * 2048)
    impl.write(f"{own(impl)}/b.md", "\u00e9" * 2049)
    text = section(impl)
    expect_catalog(text, [("a.md", "\u00e9" * 2048), ("b.md", "memory_read")],
                   "MEM-05: budgets count UTF-8 bytes (2049 x U+00E9 is 4098 bytes)")
    expect_true("\u00e9" * 2049 not in text, "MEM-05: b.md is over budget", text[-200:])


@pytest.mark.case("memory.resident.order-first-fit")
@pytest.mark.req("MEM-05")
def test_code_point_order_and_first_fit(impl: Harness) -> None:
    """Bug: directory-listing order, or stopping at the first file that does not fit."""
    setup(impl)
    for name, size in (("b", 4000), ("B", 4000), ("a", 4000), ("MEMORY", 500), ("c", 300)):
        impl.write(f"{own(impl)}/{name}.md", "x" * size)
    text = section(impl)
    expect_catalog(text, [("B.md", "x" * 4000), ("MEMORY.md", "x" * 500),
                          ("a.md", "x" * 4000), ("b.md", "memory_read"), ("c.md", "x" * 300)],
                   "MEM-05: code-point order, first fit: b.md is left out, c.md still fits")
    expect(text.count("x" * 4000), 2, "MEM-05: of the 4000-byte files exactly B.md and "
           "a.md are resident (b.md is omitted)")


# --- MEM-06: daily ---------------------------------------------------------------------------

@pytest.mark.case("memory.daily.search-only")
@pytest.mark.req("MEM-06")
def test_daily_never_in_prompt_but_found_by_search(impl: Harness) -> None:
    """Bug: `**/*.md` used for resident memory, pulling daily logs into the prompt; or
    memory_write telling the model that a small daily entry is within the resident
    budget (`within_resident_budget` is `not daily and size <= 4096`)."""
    setup(impl)
    agent = spawn(impl)
    daily = call(impl, agent, "memory_write",
                 {"file": "2026-11-29.md", "content": "DAILYMARK deploy", "daily": True})
    assert daily["ok"], daily
    expect(daily["content"]["within_resident_budget"], False, "MEM-03: a daily file is "
           "never resident, whatever its size")
    impl.write(f"{own(impl)}/daily/MEMORY.md", "DAILYMARK two\n")
    prompt = impl.prompt(definition())["prompt"]
    assert "DAILYMARK" not in prompt
    hits = call(impl, agent, "memory_search", {"query": "dailymark"})["content"]["hits"]
    assert sorted((h["file"], h["daily"]) for h in hits) == [
        ("2026-11-29.md", True), ("MEMORY.md", True)]


@pytest.mark.case("memory.search.ranking")
@pytest.mark.req("MEM-06")
def test_search_ranking_is_the_specified_total_order(impl: Harness) -> None:
    """Bug: unordered hits, or ties broken by directory-listing order."""
    setup(impl)
    impl.write(f"{own(impl)}/b.md", "deploy\ndeploy deploy deploy\n")
    impl.write(f"{own(impl)}/daily/a.md", "deploy staging\n")
    impl.write(f"{own(impl)}/a.md", "nothing\ndeploy staging\nDEPLOY\n")
    impl.write(f"{own(impl)}/c.md", "deploy staging\n")
    impl.write(f"{own(impl)}/z.md", "staging deploy\n")
    agent = spawn(impl)
    out = call(impl, agent, "memory_search", {"query": "Deploy STAGING deploy"})["content"]
    assert out["terms"] == ["deploy", "staging"]
    assert [(h["file"], h["daily"], h["line"]) for h in out["hits"]] == [
        ("a.md", False, 2), ("c.md", False, 1), ("z.md", False, 1), ("a.md", True, 1),
        ("b.md", False, 2),
        ("a.md", False, 3), ("b.md", False, 1)]


@pytest.mark.case("memory.search.limits")
@pytest.mark.req("MEM-06")
def test_search_caps_hits_at_50_and_lines_at_400(impl: Harness) -> None:
    setup(impl)
    impl.write(f"{own(impl)}/n.md", ("k" * 450 + "\n") * 57)
    agent = spawn(impl)
    out = call(impl, agent, "memory_search", {"query": "K"})["content"]
    assert (len(out["hits"]), out["total_matches"], out["hits_truncated"]) == (50, 57, True)
    assert all(len(h["text"]) == 400 and h["line_truncated"] for h in out["hits"])


# --- MEM-07: serialised appends ------------------------------------------------------------

WRITERS, APPENDS = 32, 200


def _entry(writer: int, index: int) -> str:
    return f"w{writer:02d}-i{index:03d} " + "x" * ((writer * 7919 + index * 104729) % 3000)


@pytest.mark.case("memory.append.concurrent-delegations")
@pytest.mark.req("MEM-07")
def test_32_delegations_x_200_appends_are_whole_once_and_in_order(impl: Harness) -> None:
    """Bug: no serialisation (torn or lost entries), a per-agent instead of per-directory
    lock, or a read-modify-write append. Outcomes only: an implementation that runs the
    batch sequentially passes trivially, which is conforming (SPEC, MEM-07)."""
    setup(impl)
    agents = [spawn(impl) for _ in range(WRITERS)]
    calls = [{"agent": agents[w], "tool": "memory_write",
              "args": {"file": "log.md", "content": _entry(w, i)}}
             for i in range(APPENDS) for w in range(WRITERS)]
    results = impl.driver.request("tool.call_many", {"calls": calls})["results"]
    assert all(r["ok"] for r in results)
    lines = (impl.workspace / own(impl) / "log.md").read_text().split("\n")
    assert lines[-1] == "" and len(lines) == WRITERS * APPENDS + 1
    seen: dict[int, list[int]] = {}
    for line in lines[:-1]:
        match = re.fullmatch(r"w(\d\d)-i(\d\d\d) x*", line)
        assert match and line == _entry(int(match[1]), int(match[2])), line[:40]
        seen.setdefault(int(match[1]), []).append(int(match[2]))
    assert seen == {w: list(range(APPENDS)) for w in range(WRITERS)}


@pytest.mark.case("memory.append.entry-format")
@pytest.mark.req("MEM-07")
def test_entries_are_appended_whole_with_one_newline(impl: Harness) -> None:
    """Bug: overwrite instead of append, an entry fused to a hand-edited last line, or the
    4096 entry limit counted in characters instead of UTF-8 bytes."""
    setup(impl)
    impl.write(f"{own(impl)}/notes.md", "by hand")
    agent = spawn(impl)
    first = call(impl, agent, "memory_write", {"file": "notes.md", "content": "one"})
    call(impl, agent, "memory_write", {"file": "notes.md", "content": "two\n"})
    assert (impl.workspace / own(impl) / "notes.md").read_text() == "by hand\none\ntwo\n"
    assert first["content"]["appended_bytes"] == 5
    big = call(impl, agent, "memory_write", {"file": "notes.md", "content": "x" * 4097})
    assert big["error_code"] == "MEM-ENTRY-TOO-LARGE"
    wide = call(impl, agent, "memory_write", {"file": "notes.md", "content": "\u6f22" * 2000})
    expect(wide.get("error_code"), "MEM-ENTRY-TOO-LARGE", "MEM-07: the entry limit counts "
           "UTF-8 bytes: 2000 CJK characters are 6000 bytes")
    assert (impl.workspace / own(impl) / "notes.md").read_text() == "by hand\none\ntwo\n"


# --- MEM-08: the main switch -------------------------------------------------------------------

@pytest.mark.req("MEM-08")
@pytest.mark.parametrize("mode", cases("memory.switch.no-effect", [
    ("private", ("private",)), ("shared", ("shared",))]))
def test_main_memory_switch_does_not_control_subagent_memory(impl: Harness,
                                                             mode: str) -> None:
    """Bug: the default-off main switch vetoes an explicit `memory: private`."""
    setup(impl)
    impl.write(f"{MAIN}/MEMORY.md", "main fact\n")
    impl.write(f"{own(impl)}/MEMORY.md", "own fact\n")
    observed = []
    for enabled in (False, True):
        setup(impl, main_enabled=enabled)
        agent = spawn(impl, mode)
        observed.append((
            impl.prompt(definition(mode))["prompt"],
            impl.mounted(definition(mode))["tools"],
            _outcome(call(impl, agent, "memory_read", {"file": "MEMORY.md"})),
            _outcome(call(impl, agent, "memory_search", {"query": "fact"})),
        ))
    assert observed[0] == observed[1]
    assert "fact" in section(impl, mode)


def _outcome(envelope: dict[str, Any]) -> tuple[Any, ...]:
    """What MEM-08 holds equal across the switch: the call's success, its content and its
    error code. The envelope's other keys may be unique per call (a runtime's own
    `request_id`, CALL-01), so two runs are never compared whole."""
    return (envelope["ok"], envelope.get("content"), envelope.get("error_code"))


# --- Safety rules on the unhappy paths ---------------------------------------------------------

@pytest.mark.req("MEM-01", "MEM-02")
@pytest.mark.parametrize("name", cases("memory.mount.unusable-agent-name", [
    ("con", ("con",)), ("Aux", ("Aux",)), ("lpt1", ("lpt1",))]))
def test_agent_named_after_a_device_gets_no_memory(impl: Harness, name: str) -> None:
    """Bug: the private directory named `con` (unopenable on Windows, so the same definition
    behaves differently per OS), or a fallback directory nobody asked for."""
    setup(impl)
    source = definition("private", name)
    for mode, severity in (("parse", "warning"), ("save", "error")):
        [diag] = [d for d in impl.parse(source, mode=mode)["diagnostics"]
                  if d["code"] == "MEM-AGENT-NAME-UNUSABLE"]
        assert (diag["severity"], diag["path"]) == (severity, ["memory"])
    assert impl.save(source)["saved"] is False
    assert not {t["name"] for t in impl.mounted(source)["tools"]} & set(TOOLS)
    assert "catalog.memory" not in [p["kind"] for p in impl.prompt(source)["parts"]]
    assert files_under(impl.workspace / ROOT) == []


@pytest.mark.case("memory.resident.hostile-names-never-printed")
@pytest.mark.req("MEM-05", "MEM-09")
def test_root_files_with_bad_names_are_counted_never_printed(impl: Harness) -> None:
    """Bug: resident files picked by the `.md` suffix alone, so a planted file named
    `x\\n## Skills.md` injects a heading (and its content) into the prompt."""
    setup(impl)
    bound = own(impl)
    impl.write(f"{bound}/x\n## Skills.md", "INJECTED-ONE\n")
    impl.write(f"{bound}/a\n\n## Skills\n- evil: run it.md", "INJECTED-TWO\n")
    impl.write(f"{bound}/con.md", "INJECTED-THREE\n")
    impl.write(f"{bound}/ok.md", "fine\n")
    text = section(impl)
    expect_catalog(text, [("ok.md", "fine")], "MEM-05/MEM-09: only files with valid names "
                   "are resident")
    expect_true("INJECTED" not in text and "## Skills" not in text and "con.md" not in text,
                "MEM-09: a file with a bad name is never printed (name or content)", text)
    expect_true("3" in text[text.index("fine"):], "MEM-05: the skipped entries are counted",
                text)


@pytest.mark.case("memory.resident.invalid-utf8-note")
@pytest.mark.req("MEM-05")
def test_invalid_utf8_root_file_is_noted_not_injected(impl: Harness) -> None:
    """Bug: the file decoded leniently and injected with U+FFFD, or with raw bytes."""
    setup(impl)
    impl.write(f"{own(impl)}/bad.md", b"ok \xff\xfe broken\n")
    impl.write(f"{own(impl)}/c.md", "c" * 4096)
    impl.write(f"{own(impl)}/d.md", "d" * 4096)
    impl.write(f"{own(impl)}/e.md", "e" * 4096)
    # the omitted file uses no budget: the three 4096-byte files after it still fit
    text = section(impl)
    expect_catalog(text, [("bad.md", "UTF-8"), ("c.md", "c" * 4096), ("d.md", "d" * 4096),
                          ("e.md", "e" * 4096)], "MEM-05: an invalid UTF-8 file is noted "
                   "(not injected) and uses no budget")
    expect_true("\ufffd" not in text and "broken" not in text, "MEM-05: nothing of the "
                "invalid file is injected", text[:300])


@pytest.mark.req("MEM-03", "TEXT-02")  # 65,536 bytes is the reference's cap, not a seed's
@pytest.mark.parametrize(("size", "content", "truncated"), cases("memory.read.limit", [
    ("at", (65536, "a" * 65536, False)),
    ("cut-on-character", (65542, "a" * 65535, True))]))
def test_read_returns_at_most_65536_bytes_cut_on_a_character(
        impl: Harness, size: int, content: str, truncated: bool) -> None:
    """Bug: no read limit, `<` instead of `<=`, or a cut inside a UTF-8 character (a
    U+FFFD at the end of the content)."""
    setup(impl)
    data = "a" * 65536 if size == 65536 else "a" * 65535 + "\u20ac" + "tail"
    impl.write(f"{own(impl)}/big.md", data)
    agent = spawn(impl)
    out = call(impl, agent, "memory_read", {"file": "big.md"})["content"]
    expect_keys(out, {"file": "big.md", "daily": False, "content": content, "size": size,
                      "truncated": truncated}, "MEM-03: memory_read of a large file")


@pytest.mark.case("memory.read.listing")
@pytest.mark.req("MEM-03", "MEM-10")
def test_read_without_file_lists_usable_files_in_code_point_order(impl: Harness) -> None:
    """Bug: the raw directory listing (links, folders, bad names, non-.md files) or the
    listing in `readdir` order."""
    setup(impl)
    bound = impl.workspace / own(impl)
    for rel in ("a.md", "B.md", "0.md", "notes.txt", "x y.md", "daily/z.md", "daily/2026.md"):
        impl.write(f"{own(impl)}/{rel}", "x\n")
    (bound / "dir.md").mkdir()
    os.symlink("a.md", bound / "link.md")
    agent = spawn(impl)
    out = call(impl, agent, "memory_read", {})["content"]
    expect_keys(out, {"files": ["0.md", "B.md", "a.md"], "daily_files": ["2026.md", "z.md"]},
                "MEM-03/MEM-10: the listing holds usable files only, in code-point order")


@pytest.mark.req("MEM-03")
@pytest.mark.parametrize("args", cases("memory.read.not-found", [
    ("root", ({"file": "missing.md"},)), ("daily", ({"file": "missing.md", "daily": True},))]))
def test_reading_a_missing_file_is_a_structured_not_found(impl: Harness,
                                                          args: dict[str, Any]) -> None:
    """Bug: a missing file read as empty content, so the model believes it is blank."""
    setup(impl)
    impl.write(f"{own(impl)}/present.md", "x\n")
    agent = spawn(impl)
    result = call(impl, agent, "memory_read", args)
    assert (result["ok"], result["error_code"]) == (False, "MEM-FILE-NOT-FOUND")


BAD_ARGUMENTS = [
    ("write-no-file", ("memory_write", {"content": "x"})),
    ("write-no-content", ("memory_write", {"file": "a.md"})),
    ("write-file-not-string", ("memory_write", {"file": 1, "content": "x"})),
    ("write-daily-string", ("memory_write", {"file": "a.md", "content": "x", "daily": "true"})),
    ("write-daily-number", ("memory_write", {"file": "a.md", "content": "x", "daily": 1})),
    ("write-blank", ("memory_write", {"file": "a.md", "content": " \n\t"})),
    ("write-nul", ("memory_write", {"file": "a.md", "content": "a\x00b"})),
    ("read-daily-null", ("memory_read", {"file": "a.md", "daily": None})),
    ("search-no-query", ("memory_search", {})),
    ("search-blank", ("memory_search", {"query": "  \u3000\u2003"})),
    ("search-too-long", ("memory_search", {"query": "a" * 257})),
]


@pytest.mark.req("MEM-03")
@pytest.mark.parametrize(("tool", "args"), cases("memory.errors.bad-arguments", BAD_ARGUMENTS))
def test_bad_arguments_are_refused_before_any_write(impl: Harness, tool: str,
                                                    args: dict[str, Any]) -> None:
    """Bug: loose typing (`daily: "true"` taken as truthy, `1` as a name), blank entries
    appended, or a whitespace-only query matching every line."""
    setup(impl)
    impl.write(f"{own(impl)}/a.md", "a line\n")
    agent = spawn(impl)
    before = tree(impl.workspace)
    result = call(impl, agent, tool, args)
    assert (result["ok"], result["error_code"]) == (False, "MEM-BAD-ARGUMENTS"), result
    assert tree(impl.workspace) == before


@pytest.mark.case("memory.search.skips")
@pytest.mark.req("MEM-06", "MEM-10")
def test_search_skips_links_and_files_over_the_read_budget(impl: Harness) -> None:
    """Bug: no read budget (a huge memory read whole on every search), the budget
    stopping the search at the first file that crosses it, or links searched/skipped
    silently."""
    setup(impl)
    bound = impl.workspace / own(impl)
    big_a = "needle a\n" + "x" * (5 * 1024 * 1024) + "\n"
    big_b = "needle b\n" + "y" * (4 * 1024 * 1024) + "\n"
    impl.write(f"{own(impl)}/a.md", big_a)
    impl.write(f"{own(impl)}/b.md", big_b)
    impl.write(f"{own(impl)}/c.md", "needle c\n")
    impl.write(f"{own(impl)}/daily/d.md", "needle d\n")
    impl.write(f"{MAIN}/MEMORY.md", "needle main\n")
    os.symlink("../../main/MEMORY.md", bound / "link.md")
    agent = spawn(impl)
    out = call(impl, agent, "memory_search", {"query": "needle"})["content"]
    assert [(h["file"], h["daily"]) for h in out["hits"]] == [
        ("a.md", False), ("c.md", False), ("d.md", True)]
    assert sorted(out["skipped"], key=lambda s: (s["daily"], s["file"])) == [
        {"file": "b.md", "daily": False, "reason": "read_budget"},
        {"file": "link.md", "daily": False, "reason": "not_regular"}]
    assert (out["read_truncated"], out["files_searched"], out["bytes_read"]) == (
        True, 3, len(big_a) + len("needle c\n") + len("needle d\n"))


@pytest.mark.case("memory.search.cut-in-code-points")
@pytest.mark.req("MEM-06")
def test_hit_text_is_cut_at_400_code_points_not_bytes_or_utf16(impl: Harness) -> None:
    """Bug: the 400 limit applied to UTF-8 bytes (133 CJK characters) or to UTF-16 units
    (200 emoji), or a marker appended inside the text."""
    setup(impl)
    impl.write(f"{own(impl)}/n.md", "\u6f22" * 450 + "\n" + "\U0001f600" * 450 + "\n"
               + "\u6f22" * 400 + "\n")
    agent = spawn(impl)
    out = call(impl, agent, "memory_search", {"query": "\u6f22 \U0001f600"})["content"]
    assert [(h["line"], h["text"], h["line_truncated"]) for h in out["hits"]] == [
        (1, "\u6f22" * 400, True), (2, "\U0001f600" * 400, True),
        (3, "\u6f22" * 400, False)]


@pytest.mark.case("memory.search.query-limit-code-points")
@pytest.mark.req("MEM-06")
def test_query_limit_counts_code_points(impl: Harness) -> None:
    """Bug: the 256 limit of the query counted in UTF-8 bytes (a 90-character Chinese
    query is 270 bytes) or UTF-16 units (256 emoji are 512), so a legal query is refused."""
    setup(impl)
    impl.write(f"{own(impl)}/n.md", "\u6f22" * 300 + "\n")
    agent = spawn(impl)
    for query in ("\u6f22" * 90, "\u6f22" * 256, "\U0001f600" * 256):
        result = call(impl, agent, "memory_search", {"query": query})
        expect((result["ok"], result.get("error_code")), (True, None), "MEM-06: a query of "
               f"at most 256 code points is accepted ({len(query)} x U+{ord(query[0]):04X})")
    assert call(impl, agent, "memory_search", {"query": "\u6f22" * 90})["content"]["hits"]
    over = call(impl, agent, "memory_search", {"query": "\u6f22" * 257})
    expect(over.get("error_code"), "MEM-BAD-ARGUMENTS", "MEM-06: 257 code points is over")


@pytest.mark.case("memory.search.ascii-folding")
@pytest.mark.req("MEM-06")
def test_search_folds_ascii_case_only_and_splits_on_white_space(impl: Harness) -> None:
    """Bug: Unicode lower-casing (`É` finds `é`, KELVIN SIGN finds `k`: a TS or Rust
    runtime would return other lines), or terms split on a non-White_Space separator."""
    setup(impl)
    impl.write(f"{own(impl)}/n.md", "\u00c9clair recipe\n\u00e9clair notes\nECLAIR plain\n"
               "\u212aelvin scale\nkelvin lower\n")
    agent = spawn(impl)
    out = call(impl, agent, "memory_search",
               {"query": "\u00c9CLAIR \u00e9clair KELVIN"})["content"]
    assert out["terms"] == ["\u00c9clair", "\u00e9clair", "kelvin"]
    assert [h["line"] for h in out["hits"]] == [1, 2, 5]
    out = call(impl, agent, "memory_search", {"query": "recipe\x1cnotes"})["content"]
    assert (out["terms"], out["hits"]) == (["recipe\x1cnotes"], [])
    out = call(impl, agent, "memory_search", {"query": "RECIPE\u3000Notes"})["content"]
    assert (out["terms"], [h["line"] for h in out["hits"]]) == (["recipe", "notes"], [1, 2])


# --- MEM-10: special files; MEM-05/MEM-07: the numbers agree ----------------------------------

@pytest.mark.case("memory.fifo.refused-not-blocking")
@pytest.mark.req("MEM-10")
def test_a_fifo_planted_as_a_memory_file_is_refused_without_blocking(impl: Harness) -> None:
    """Bug: memory_write/memory_read open the name like a file and block on a FIFO forever
    (the harness' per-request timeout shows it as a hang), and the prompt build blocks
    too. A FIFO is not a regular file: MEM-NOT-REGULAR-FILE, and the rest still works."""
    setup(impl)
    bound = impl.workspace / own(impl)
    bound.mkdir(parents=True)
    os.mkfifo(bound / "pipe.md")
    (bound / "notes.md").write_text("kept\n")
    agent = spawn(impl)
    for tool, args in (("memory_write", {"file": "pipe.md", "content": "x"}),
                       ("memory_read", {"file": "pipe.md"})):
        result = call(impl, agent, tool, args)
        assert result["error_code"] == "MEM-NOT-REGULAR-FILE", result
    assert "kept" in section(impl)


@pytest.mark.case("memory.entry.limit-fits-resident-budget")
@pytest.mark.req("MEM-07", "MEM-05")
def test_every_accepted_entry_fits_the_resident_budget(impl: Harness) -> None:
    """Bug: the 4096-byte entry limit counts the text without the newline the write adds,
    so the largest accepted entry (4096 bytes + newline) can never be resident although
    the limit exists precisely so that it can."""
    setup(impl)
    agent = spawn(impl)
    largest = call(impl, agent, "memory_write", {"file": "a.md", "content": "x" * 4095})
    assert largest["ok"] is True and largest["content"]["size"] == 4096
    assert largest["content"]["within_resident_budget"] is True
    over = call(impl, agent, "memory_write", {"file": "b.md", "content": "y" * 4096})
    assert over["error_code"] == "MEM-ENTRY-TOO-LARGE", over
    assert "x" * 4095 in section(impl)
# -- TEXT-01: the reference's wording (opt-in group `reference-text`) ----------------

@pytest.mark.case("memory.reference-text.section-and-descriptions")
@pytest.mark.req("TEXT-01", "MEM-03", "MEM-05")
def test_reference_text_memory_section_and_tools(impl: Harness) -> None:
    """The reference's bytes of the Memory section (heading, mode sentence, `### file`
    blocks, omission notes) and of the memory tools' descriptions and schemas."""
    setup(impl)
    assert section(impl) == f"{HEAD_PRIVATE}\n\n(no resident memory files)"
    impl.write(f"{own(impl)}/notes.md", "- tabs\n\n")
    impl.write(f"{own(impl)}/MEMORY.md", "# Facts\nuv")
    impl.write(f"{own(impl)}/z.md", "z" * 4097)
    assert section(impl) == (f"{HEAD_PRIVATE}\n\n### MEMORY.md\n# Facts\nuv\n\n### notes.md\n"
                             "- tabs\n\n- `z.md` omitted: 4097 bytes is over the 4096-byte "
                             "per-file budget; use memory_read.")
    tools = [t for t in impl.mounted(definition("private"))["tools"] if t["name"] in TOOLS]
    for tool in tools:
        assert tool["input_schema"] == SCHEMAS[tool["name"]]
        assert tool["description"] == DESCRIPTIONS[tool["name"]]


@pytest.mark.req("MEM-01", "MEM-02")
@pytest.mark.parametrize(("written", "mode"), cases("memory.mode.case-variants", [
    ("title-private", ("Private", "private")), ("upper-shared", ("SHARED", "shared")),
    ("title-none", ("None", "none")), ("mixed-private", ("pRiVaTe", "private"))]))
def test_memory_modes_ignore_ascii_case(impl: Harness, written: str, mode: str) -> None:
    """Bug: memory modes matched case-sensitively, so `memory: Private` is a bad mode and
    the agent silently gets no memory."""
    setup(impl)
    parsed = impl.parse(definition(written))
    expect(parsed["definition"]["memory"], mode, "MEM-01: the mode is read ignoring ASCII "
           "case and normalised to lower case")
    expect([d["code"] for d in parsed["diagnostics"] if d["severity"] == "error"], [],
           "MEM-01: a mode in another case is not an error")
    mounted = {t["name"] for t in impl.mounted(definition(written))["tools"]} & set(TOOLS)
    expect(sorted(mounted), [] if mode == "none" else sorted(TOOLS),
           "MEM-02: the memory tools follow the mode")
