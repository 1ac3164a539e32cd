"""Modes, the memory world and binding (MEM-01, MEM-02, MEM-04, MEM-08)."""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
import shared_folder
from memory_support import MAIN, ROOT, make_world, resolve, snapshot, write_file

from capconf.simulator.core.diagnostics import (
    DiagnosticKind,
    Location,
    Mode,
    Severity,
    WorldSetupError,
)
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import binding as memory
from capconf.simulator.memory.binding import (
    DEFAULT_MAIN_DIR,
    DEFAULT_SUBAGENT_ROOT,
    DIAGNOSTIC_KINDS,
    SHARED_CONSENT_MESSAGE,
    consent_notice,
    memory_section,
    mount_memory_tools,
    parse_memory_world,
    private_directory_name,
    resolve_memory,
)

AGENTS_CORPUS = shared_folder.corpus("claude-code-agents")
HERE = Location(("memory",), 4, 9)


# --- the consent notice --------------------------------------------------------------------

@pytest.mark.parametrize("declared", [MemoryMode.NONE, MemoryMode.PRIVATE])
def test_no_notice_unless_shared(declared: MemoryMode) -> None:
    assert consent_notice(declared, Mode.SAVE, HERE) == ()


@pytest.mark.parametrize("mode", [Mode.PARSE, Mode.SAVE])
def test_shared_carries_an_informed_consent_notice_not_a_block(mode: Mode) -> None:
    (notice,) = consent_notice(MemoryMode.SHARED, mode, HERE)
    assert (notice.code, notice.severity) == ("MEM-SHARED-CONSENT", Severity.INFO)
    assert notice.message == SHARED_CONSENT_MESSAGE and notice.location == HERE
    assert notice.requirement == "MEM-01"
    assert consent_notice(MemoryMode.SHARED, mode)[0].location == Location(("memory",))


def test_diagnostic_kinds_are_declared_once_with_area_codes() -> None:
    codes = [kind.code for kind in DIAGNOSTIC_KINDS]
    assert len(set(codes)) == len(codes)
    assert all(re.fullmatch(r"MEM-[A-Z]+(-[A-Z]+)*", code) for code in codes)
    assert all(re.fullmatch(r"MEM-0[1-8]", kind.requirement) for kind in DIAGNOSTIC_KINDS)
    module_kinds = {v.code for v in vars(memory).values() if isinstance(v, DiagnosticKind)}
    assert module_kinds == set(codes)


# --- the memory world --------------------------------------------------------------------

def test_world_defaults(tmp_path: Path) -> None:
    world = parse_memory_world(None, tmp_path)
    assert (world.subagent_root, world.main_dir, world.main_enabled) == (
        DEFAULT_SUBAGENT_ROOT, DEFAULT_MAIN_DIR, False)
    assert parse_memory_world({}, tmp_path) == world


@pytest.mark.parametrize(("args", "path"), [
    ([], ()),
    ({"subagent_root": "x", "scope": "global"}, ("scope",)),
    ({"subagent_root": "/abs"}, ("subagent_root",)),
    ({"main_dir": "../up"}, ("main_dir",)),
    ({"main_dir": "a/./b"}, ("main_dir",)),
    ({"main_dir": "a//b"}, ("main_dir",)),
    ({"main_dir": "a\\b"}, ("main_dir",)),
    ({"main_dir": "C:/x"}, ("main_dir",)),
    ({"main_dir": ""}, ("main_dir",)),
    ({"main_dir": 3}, ("main_dir",)),
    ({"main_dir": "."}, ("main_dir",)),
    ({"main_enabled": "yes"}, ("main_enabled",)),
    ({"main_enabled": 0}, ("main_enabled",)),
])
def test_bad_worlds_raise_with_the_key_path(tmp_path: Path, args: object,
                                            path: tuple[str, ...]) -> None:
    with pytest.raises(WorldSetupError) as info:
        parse_memory_world(args, tmp_path)
    assert info.value.path == path


# --- binding -------------------------------------------------------------------------------

def test_mode_none_binds_nothing_mounts_nothing_renders_nothing(tmp_path: Path) -> None:
    world = make_world(tmp_path / "ws")
    write_file(world.workspace / ROOT / "reviewer" / "MEMORY.md", "exists anyway")
    resolution = resolve(world, "reviewer", MemoryMode.NONE)
    assert resolution.binding is None and resolution.diagnostics == ()
    assert memory_section(resolution, world) is None
    assert mount_memory_tools(resolution, world) == ()


@pytest.mark.parametrize(("mode", "directory"), [
    (MemoryMode.PRIVATE, f"{ROOT}/code-reviewer"), (MemoryMode.SHARED, MAIN)])
def test_layout(tmp_path: Path, mode: MemoryMode, directory: str) -> None:
    world = make_world(tmp_path / "ws")
    binding = resolve(world, "Code-Reviewer", mode).binding
    assert binding is not None
    assert binding.directory == PurePosixPath(directory)
    assert [t.name for t in mount_memory_tools(resolve(world, "x", mode), world)] == [
        "memory_write", "memory_read", "memory_search"]


@pytest.mark.parametrize("name", ["", "..", ".", "a/b", "a\\b", "../main", "a..b", "x.",
                                  "-x", "p\u0430ypal", "a\u202eb", "con", "NUL.x", "a" * 65,
                                  "a b"])
def test_unusable_agent_names_get_a_diagnostic_and_no_memory(tmp_path: Path,
                                                             name: str) -> None:
    world = make_world(tmp_path / "ws")
    assert private_directory_name(name) is None
    for mode, severity in ((Mode.PARSE, Severity.WARNING), (Mode.SAVE, Severity.ERROR)):
        resolution = resolve_memory(name, MemoryMode.PRIVATE, world, mode)
        assert resolution.binding is None
        assert [(d.code, d.severity) for d in resolution.diagnostics] == [
            ("MEM-AGENT-NAME-UNUSABLE", severity)]
        assert mount_memory_tools(resolution, world) == ()


@shared_folder.needs(AGENTS_CORPUS)
def test_every_real_agent_name_gets_a_private_directory() -> None:
    names = [line.split(":", 1)[1].strip()
             for path in sorted(AGENTS_CORPUS.rglob("*.md"))
             for line in path.read_text(encoding="utf-8").splitlines()[:5]
             if line.startswith("name:")]
    assert len(names) > 50
    assert [n for n in names if private_directory_name(n) is None] == []


# --- MEM-08: the main memory's global switch -----------------------------------------------

def _session(top: Path, main_enabled: bool, mode: MemoryMode) -> tuple[Any, ...]:
    world = make_world(top / "ws", main_enabled=main_enabled)
    write_file(world.workspace / MAIN / "MEMORY.md", "main fact\n")
    write_file(world.workspace / ROOT / "reviewer" / "MEMORY.md", "own fact\n")
    resolution = resolve(world, "reviewer", mode)
    tools = mount_memory_tools(resolution, world)
    calls = [tools[0].call({"file": "MEMORY.md", "content": "learned"}),
             tools[0].call({"file": "d.md", "content": "fact log", "daily": True}),
             tools[1].call({"file": "MEMORY.md"}), tools[1].call({}),
             tools[2].call({"query": "fact"})]
    return (
        resolution.binding, [d.to_json() for d in resolution.diagnostics],
        memory_section(resolution, world),
        [(t.name, t.description, json.dumps(t.input_schema)) for t in tools],
        [c.to_json() for c in calls],
        snapshot(world.workspace, exclude=world.workspace / "none").keys(),
        [(world.workspace / p).read_bytes() for p in (f"{MAIN}/MEMORY.md",
                                                       f"{ROOT}/reviewer/MEMORY.md")],
    )


@pytest.mark.parametrize("mode", [MemoryMode.PRIVATE, MemoryMode.SHARED])
def test_main_memory_switch_has_no_effect_on_subagent_memory(tmp_path: Path,
                                                            mode: MemoryMode) -> None:
    off = _session(tmp_path / "off", False, mode)
    on = _session(tmp_path / "on", True, mode)
    assert off == on
    assert off[2] is not None and len(off[3]) == 3  # mounted and rendered even when off
    fact = "own fact" if mode is MemoryMode.PRIVATE else "main fact"
    assert fact in off[2]
