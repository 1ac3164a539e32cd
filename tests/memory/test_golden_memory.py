"""Goldens of the memory dimension: the tool schemas (no scope anywhere), resident sections
at and over budget, the shared-mode notice, a search page and the error envelopes.

Review: `git diff golden/memory/`; update:
`pytest tests/memory/test_golden_memory.py --snapshot-update`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memory_support import make_world, resolve, toolbox, write_file

from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory.binding import (
    MemoryWorld,
    consent_notice,
    memory_section,
    mount_memory_tools,
)
from capconf.simulator.memory.resident import PER_FILE_BUDGET


def _facts(prefix: str, size: int) -> str:
    """Readable lines of 64 bytes, cut to exactly ``size`` bytes."""
    lines = "".join(f"{prefix} fact {i:04d}: " + "." * (64 - len(prefix) - 13) + "\n"
                    for i in range(size // 64 + 1))
    assert len(lines) >= size and lines.isascii()
    return lines[:size]


def _section(world: MemoryWorld, mode: MemoryMode = MemoryMode.PRIVATE) -> str:
    text = memory_section(resolve(world, "reviewer", mode), world)
    assert text is not None
    return text + "\n"


def _dir(world: MemoryWorld) -> Path:
    return world.workspace / "mem/agents/reviewer"


def test_tool_schemas(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    tools = mount_memory_tools(resolve(world, "reviewer", MemoryMode.PRIVATE), world)
    shared = mount_memory_tools(resolve(world, "reviewer", MemoryMode.SHARED), world)
    listing = [{"name": t.name, "description": t.description, "input_schema": t.input_schema}
               for t in tools]
    assert listing == [{"name": t.name, "description": t.description,
                        "input_schema": t.input_schema} for t in shared]
    assert "scope" not in json.dumps(listing)
    assert json.dumps(listing, indent=2, ensure_ascii=False) + "\n" == golden


def test_section_at_budget(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    for name in ("MEMORY.md", "notes.md", "team.md"):
        write_file(_dir(world) / name, _facts(name.removesuffix(".md"), PER_FILE_BUDGET))
    text = _section(world)
    assert "omitted" not in text
    assert text == golden


def test_section_over_budget(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    write_file(world.workspace / "mem/main/MEMORY.md", "main memory\n")
    write_file(_dir(world) / "MEMORY.md", "# Facts\n- the repo uses uv\n- tests run on 2 cores\n")
    write_file(_dir(world) / "big.md", _facts("big", PER_FILE_BUDGET + 1))
    write_file(_dir(world) / "notes.md", _facts("notes", PER_FILE_BUDGET))
    write_file(_dir(world) / "prefs.md", _facts("prefs", PER_FILE_BUDGET))
    write_file(_dir(world) / "team.md", _facts("team", PER_FILE_BUDGET))
    write_file(_dir(world) / "zz-small.md", "- small files after an omission still fit\n")
    write_file(_dir(world) / "latin1.md", b"caf\xe9\n")
    os.symlink("../../main/MEMORY.md", _dir(world) / "link.md")
    write_file(_dir(world) / "my notes.md", "bad name\n")
    write_file(_dir(world) / "daily" / "2026-11-29.md", "never in the prompt\n")
    text = _section(world)
    assert "never in the prompt" not in text and "main memory" not in text
    assert "`big.md` omitted: 4097 bytes" in text and "`team.md` omitted: 4096 bytes would" in text
    assert text == golden


def test_shared_mode_notice(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    write_file(world.workspace / "mem/main/MEMORY.md", "- the user prefers short answers\n")
    notices = [consent_notice(MemoryMode.SHARED, mode)[0] for mode in (Mode.PARSE, Mode.SAVE)]
    text = "\n".join(f"# {mode} mode\n{n.severity} {n.code} {n.location.display()}\n"
                     f"    {n.message}" for mode, n in zip(("parse", "save"), notices,
                                                          strict=True))
    text += "\n\n# shared section\n" + _section(world, MemoryMode.SHARED)
    assert text == golden


def test_search_page(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    box = toolbox(world, "reviewer")
    for args in ({"file": "MEMORY.md", "content": "Deploys go to staging first."},
                 {"file": "MEMORY.md", "content": "Never deploy on Friday."},
                 {"file": "2026-11-28.md", "content": "deploy to staging failed: disk",
                  "daily": True},
                 {"file": "2026-11-29.md", "content": "staging deploy ok; deploy prod ok",
                  "daily": True}):
        assert box.write(args).ok
    page = box.search({"query": "deploy staging"}).to_json()
    assert json.dumps(page, indent=2, ensure_ascii=False) + "\n" == golden


def test_error_envelopes(tmp_path: Path, golden: Any) -> None:
    world = make_world(tmp_path / "ws")
    _dir(world).mkdir()
    os.symlink("../../main/MEMORY.md", _dir(world) / "link.md")
    box = toolbox(world, "reviewer")
    calls = [
        ("memory_write", box.write, {"file": "notes.md", "content": "x", "scope": "global"}),
        ("memory_read", box.read, {"file": "MEMORY.md", "dir": "../main"}),
        ("memory_write", box.write, {"file": "../main/MEMORY.md", "content": "x"}),
        ("memory_write", box.write, {"file": "notes\u2215x.md", "content": "x"}),
        ("memory_write", box.write, {"file": "link.md", "content": "x"}),
        ("memory_write", box.write, {"file": "a.md", "content": "x" * 4097}),
        ("memory_read", box.read, {"file": "missing.md"}),
        ("memory_search", box.search, {"query": "   "}),
    ]
    text = "".join(f"# {name} {json.dumps(args, ensure_ascii=True)[:80]}\n"
                   f"{json.dumps(call(args).to_json(), indent=2, ensure_ascii=False)}\n\n"
                   for name, call, args in calls)
    assert text == golden
