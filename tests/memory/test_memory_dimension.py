"""The memory dimension wired into the skeleton: world parsing, compile and call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.compose.agent import compile_agent
from capconf.simulator.compose.world import parse_world
from capconf.simulator.core.diagnostics import Mode, WorldSetupError
from capconf.simulator.core.dimension import CallContext
from capconf.simulator.memory.dimension import MemoryDimension


def world(tmp_path: Path, **memory: Any) -> Any:
    return parse_world({"workspace": str(tmp_path), "frame": "F.",
                        "memory": {"subagent_root": "m/agents", "main_dir": "m/main",
                                   **memory}})


def source(mode: str | None, name: str = "reviewer") -> str:
    memory = f"memory: {mode}\n" if mode is not None else ""
    return f"name: {name}\ndescription: d\ntools: [read]\n{memory}prompt: Body.\n"


def test_bad_memory_world_is_reported_under_the_memory_key(tmp_path: Path) -> None:
    with pytest.raises(WorldSetupError) as info:
        world(tmp_path, main_dir="../x")
    assert info.value.path == ("memory", "main_dir")


@pytest.mark.parametrize("mode", [None, "none"])
def test_none_adds_nothing_to_the_legacy_prompt(tmp_path: Path, mode: str | None) -> None:
    view = compile_agent(source(mode), world(tmp_path))
    assert view.prompt is not None and view.prompt.text == "F.\n\nBody.\n"
    assert not any(t.name.startswith("memory_") for t in view.mounted)


def test_private_section_sits_last_and_tools_call_the_bound_directory(tmp_path: Path) -> None:
    w = world(tmp_path)
    view = compile_agent(source("private"), w)
    assert view.prompt is not None
    assert [p.kind for p in view.prompt.parts] == ["frame", "catalog.memory", "body"]
    assert [t.name for t in view.mounted if t.name.startswith("memory_")] == [
        "memory_write", "memory_read", "memory_search"]
    dimension = MemoryDimension()
    ctx = CallContext("agent-1", "reviewer", w.workspace)
    outcome = view.outcomes["memory"]
    result = dimension.call("memory_write", {"file": "a.md", "content": "x", "scope": "global"},
                            outcome, w.dimensions["memory"], ctx)
    assert result.error is not None and result.error.code == "MEM-UNKNOWN-ARGUMENT"
    assert dimension.call("memory_write", {"file": "a.md", "content": "x"}, outcome,
                          w.dimensions["memory"], ctx).ok
    assert (tmp_path / "m/agents/reviewer/a.md").read_text() == "x\n"
    other = dimension.call("kb_search", {}, outcome, w.dimensions["memory"], ctx)
    assert other.error is not None and other.error.code == "tool_not_mounted"


def test_shared_notice_is_info_in_save_mode_and_saves(tmp_path: Path) -> None:
    view = compile_agent(source("shared"), world(tmp_path), Mode.SAVE)
    [notice] = [d for d in view.diagnostics if d.code == "MEM-SHARED-CONSENT"]
    assert str(notice.severity) == "info" and notice.location.path == ("memory",)
    assert not [d for d in view.diagnostics if str(d.severity) == "error"]
