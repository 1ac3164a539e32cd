"""The world an implementation runs in, as the harness describes it (driver `world.setup`).

The world is a value: the workspace directory, the frame text, the grantable-tool
registry, the session's tool table, and one configuration per capability dimension.
Parsing it validates everything up front and names the JSON path of a bad argument, so a
broken harness is told exactly what it sent wrong.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from capconf.simulator.areas import DIMENSIONS
from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.tools.catalog import DEFAULT_GRANTABLE
from capconf.simulator.tools.registry import Registry, build_registry, default_registry

DEFAULT_FRAME = (
    "You are a subagent. Work only on the task you are given, with the tools you are "
    "granted, and report the result to the agent that delegated it."
)


@dataclass(frozen=True)
class World:
    workspace: Path
    frame: str
    registry: Registry
    session_tools: frozenset[str]
    dimensions: dict[str, Any]  # dimension key -> that dimension's parsed world
    builtins: tuple[tuple[str, str], ...] = ()  # read-only definitions: (filename, source)


CORE_KEYS = ("workspace", "frame", "grantable", "not_grantable", "session_tools", "builtins")


def world_keys() -> tuple[str, ...]:
    """Every key `world.setup` accepts: the core keys and one per capability dimension."""
    return CORE_KEYS + tuple(d.key for d in DIMENSIONS)


def _string_list(value: Any, path: tuple[str | int, ...]) -> list[str]:
    if not isinstance(value, list):
        raise WorldSetupError(path, "must be a list of strings")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise WorldSetupError((*path, i), "must be a string")
    return list(value)


def _rows(value: Any, key: str, fields: tuple[str, ...]) -> list[tuple[str, ...]]:
    """A list of objects with exactly ``fields``, all strings; the path names the first
    bad row or field."""
    shape = "{" + ", ".join(fields) + "}"
    if not isinstance(value, list):
        raise WorldSetupError((key,), f"must be a list of {shape}")
    rows = []
    for i, row in enumerate(value):
        if not isinstance(row, dict):
            raise WorldSetupError((key, i), f"must be {shape}")
        for extra in sorted(set(row) - set(fields)):
            raise WorldSetupError((key, i, extra), f"unknown key; a row is {shape}")
        for name in fields:
            if not isinstance(row.get(name), str):
                raise WorldSetupError((key, i, name), "must be a string")
        rows.append(tuple(row[name] for name in fields))
    return rows


def parse_world(args: Mapping[str, Any]) -> World:
    """Validate every argument (PROTO-02): an unknown key or a value of the wrong type is
    refused with its path, never dropped, because a harness whose setting is silently
    ignored tests a different world than it thinks."""
    for key in args:
        if key not in world_keys():
            raise WorldSetupError((key,), f"unknown world key `{key}`; the keys are "
                                  f"{', '.join(world_keys())}")
    workspace_arg = args.get("workspace")
    if not isinstance(workspace_arg, str) or not workspace_arg:
        raise WorldSetupError(("workspace",), "must be the path of an existing directory")
    if "\x00" in workspace_arg:
        raise WorldSetupError(("workspace",), "must not contain a NUL character")
    workspace = Path(workspace_arg)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise WorldSetupError(("workspace",), f"{workspace_arg!r} is not an absolute path of "
                              "an existing directory")
    workspace = workspace.resolve()
    frame = args.get("frame", DEFAULT_FRAME)
    if not isinstance(frame, str):
        raise WorldSetupError(("frame",), "must be a string")

    refused_arg = args.get("not_grantable")
    refused = (None if refused_arg is None else
               [(n, r) for n, r in _rows(refused_arg, "not_grantable", ("name", "reason"))])
    if "grantable" not in args:
        registry = (default_registry() if refused is None
                    else build_registry(DEFAULT_GRANTABLE, refused))
    else:
        grantable = args.get("grantable", list(default_registry().grantable))
        names = None if grantable is None else _string_list(grantable, ("grantable",))
        registry = build_registry(names, refused)
    session_arg = args.get("session_tools")
    session = (frozenset(registry.grantable) if session_arg is None
               else frozenset(_string_list(session_arg, ("session_tools",))))
    builtins = [(f, src) for f, src in _rows(args.get("builtins", []), "builtins",
                                               ("filename", "source"))]
    return World(
        builtins=tuple(builtins),
        workspace=workspace,
        frame=frame,
        registry=registry,
        session_tools=session,
        dimensions={d.key: d.parse_world(args.get(d.key), workspace) for d in DIMENSIONS},
    )


def registry_json(registry: Registry) -> dict[str, Any]:
    return {
        "grantable": list(registry.grantable),
        "not_grantable": [{"name": n, "reason": r} for n, r in registry.not_grantable],
        "legacy_fallback": registry.legacy_fallback,
    }
