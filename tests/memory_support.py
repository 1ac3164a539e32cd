"""Shared fixtures-as-functions for the memory tests (plain helpers, not a conftest)."""

from __future__ import annotations

import os
from pathlib import Path

from capconf.simulator.core.diagnostics import Mode
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory.append import AppendSerializer
from capconf.simulator.memory.binding import (
    MemoryResolution,
    MemoryWorld,
    parse_memory_world,
    resolve_memory,
)
from capconf.simulator.memory.tools import MemoryToolbox

ROOT = "mem/agents"
MAIN = "mem/main"


def make_world(workspace: Path, *, main_enabled: bool = False) -> MemoryWorld:
    workspace.mkdir(parents=True, exist_ok=True)
    world = parse_memory_world(
        {"subagent_root": ROOT, "main_dir": MAIN, "main_enabled": main_enabled}, workspace
    )
    for root in (ROOT, MAIN):  # as a harness would: memory calls then create nothing else
        (workspace / root).mkdir(parents=True, exist_ok=True)
    return world


def resolve(world: MemoryWorld, agent: str, mode: MemoryMode) -> MemoryResolution:
    return resolve_memory(agent, mode, world, Mode.PARSE)


def toolbox(world: MemoryWorld, agent: str, mode: MemoryMode = MemoryMode.PRIVATE,
            serializer: AppendSerializer | None = None) -> MemoryToolbox:
    binding = resolve(world, agent, mode).binding
    assert binding is not None
    return MemoryToolbox(world.workspace, binding.directory, serializer or AppendSerializer())


def write_file(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def snapshot(top: Path, exclude: Path) -> dict[str, tuple[str, bytes, int]]:
    """Every entry under ``top`` except the subtree at ``exclude``: kind, bytes (file
    contents or link target) and mtime in ns, never following symlinks."""
    result: dict[str, tuple[str, bytes, int]] = {}
    for dirpath, dirnames, filenames in os.walk(top, followlinks=False):
        here = Path(dirpath)
        for name in sorted(dirnames + filenames):
            path = here / name
            if path == exclude:
                continue
            st = path.lstat()
            rel = path.relative_to(top).as_posix()
            if path.is_symlink():
                result[rel] = ("link", os.readlink(path).encode(), st.st_mtime_ns)
            elif path.is_dir():
                result[rel] = ("dir", b"", st.st_mtime_ns)
            else:
                result[rel] = ("file", path.read_bytes(), st.st_mtime_ns)
        dirnames[:] = [d for d in dirnames if here / d != exclude]
    return result
