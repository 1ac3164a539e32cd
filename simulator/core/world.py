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


def _string_list(value: Any, path: tuple[str | int, ...]) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WorldSetupError(path, "must be a list of strings")
    return list(value)


def parse_world(args: Mapping[str, Any]) -> World:
    workspace_arg = args.get("workspace")
    if not isinstance(workspace_arg, str) or not workspace_arg:
        raise WorldSetupError(("workspace",), "must be the path of an existing directory")
    workspace = Path(workspace_arg)
    if not workspace.is_absolute() or not workspace.is_dir():
        raise WorldSetupError(("workspace",), f"{workspace_arg!r} is not an absolute path of "
                              "an existing directory")
    workspace = workspace.resolve()
    frame = args.get("frame", DEFAULT_FRAME)
    if not isinstance(frame, str):
        raise WorldSetupError(("frame",), "must be a string")

    # Each key on its own: absent (or, for not_grantable, null) means the implementation's
    # own list, so `not_grantable` alone does not silently fall back to the default list.
    if "grantable" not in args and args.get("not_grantable") is None:
        registry = default_registry()
    else:
        grantable = args.get("grantable", list(default_registry().grantable))
        names = None if grantable is None else _string_list(grantable, ("grantable",))
        refused_arg = args.get("not_grantable")
        refused = None
        if refused_arg is not None:
            if not isinstance(refused_arg, list):
                raise WorldSetupError(("not_grantable",), "must be a list of {name, reason}")
            refused = []
            for i, row in enumerate(refused_arg):
                if not (isinstance(row, dict) and isinstance(row.get("name"), str)
                        and isinstance(row.get("reason"), str)):
                    raise WorldSetupError(("not_grantable", i), "must be {name, reason}")
                refused.append((row["name"], row["reason"]))
        registry = build_registry(names, refused)
    session_arg = args.get("session_tools")
    session = (frozenset(registry.grantable) if session_arg is None
               else frozenset(_string_list(session_arg, ("session_tools",))))
    builtins_arg = args.get("builtins", [])
    if not isinstance(builtins_arg, list):
        raise WorldSetupError(("builtins",), "must be a list of {filename, source}")
    builtins = []
    for i, row in enumerate(builtins_arg):
        if not (isinstance(row, dict) and isinstance(row.get("source"), str)
                and isinstance(row.get("filename"), str)):
            raise WorldSetupError(("builtins", i), "must be {filename, source} strings")
        builtins.append((row["filename"], row["source"]))
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
