"""Goldens over the definition corpus in tests/definitions/: for every definition, the
assembled prompt, the diagnostics, and the mounted tools with their schemas.

Review: `git diff golden/`; update: `pytest tests/test_golden_definitions.py --snapshot-update`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.compose.agent import AgentView, compile_agent
from capconf.simulator.compose.world import World, parse_world
from capconf.simulator.core.diagnostics import Mode

DEFINITIONS = sorted((Path(__file__).resolve().parent.parent / "definitions").iterdir())
WORLD_ARGS: dict[str, Any] = {
    "frame": "You are a subagent. Work only on the task you are given.",
    "mcp": {"servers": [{"name": "crm"}, {"name": "notion", "configured": False}]},
}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> World:
    """An empty workspace (pytest removes it): these definitions declare no knowledge."""
    return parse_world({**WORLD_ARGS, "workspace": str(tmp_path_factory.mktemp("golden"))})


def _view(path: Path, world: World, mode: Mode) -> AgentView:
    return compile_agent(path.read_bytes(), world, mode, filename=path.name)


def _diagnostics_text(view: AgentView) -> str:
    lines = []
    for d in view.diagnostics:
        where = f"{d.location.line}:{d.location.column}" if d.location.line else "-"
        lines.append(f"{where} {d.severity} {d.code} {d.location.display()}\n    {d.message}")
    return "\n".join(lines) + "\n" if lines else "(no diagnostics)\n"


ids = [p.stem for p in DEFINITIONS]


@pytest.mark.parametrize("path", DEFINITIONS, ids=ids)
def test_prompt(path: Path, world: World, golden: Any) -> None:
    view = _view(path, world, Mode.PARSE)
    text = view.prompt.text if view.prompt else "(no prompt: the definition did not load)\n"
    assert text == golden


@pytest.mark.parametrize("path", DEFINITIONS, ids=ids)
def test_diagnostics(path: Path, world: World, golden: Any) -> None:
    parse, save = _view(path, world, Mode.PARSE), _view(path, world, Mode.SAVE)
    text = ("# parse mode\n" + _diagnostics_text(parse) + "\n# save mode\n"
            + _diagnostics_text(save) + f"\n# granted tools\n{list(parse.grant.granted)}\n")
    assert text == golden


@pytest.mark.parametrize("path", DEFINITIONS, ids=ids)
def test_mounted_tools(path: Path, world: World, golden: Any) -> None:
    view = _view(path, world, Mode.PARSE)
    text = json.dumps([t.to_json() for t in view.mounted], indent=2, ensure_ascii=False) + "\n"
    assert text == golden
