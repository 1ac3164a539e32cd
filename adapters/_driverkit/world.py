"""capconf's `world.setup` arguments, validated and kept: the part every runtime gets alike.

Why here: PROTO-02 wants every bad argument refused with its path, and the checks (known
keys, an absolute existing workspace, names unique up to case, `not_grantable` rows) are
capconf's protocol, the same for every runtime. Each adapter subclasses ``World`` with what
says the world in its runtime's terms and validates its own extras after ``parse_world``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

LEGACY_SIX = ["bash", "read", "write", "edit", "glob", "grep"]
KEYS = {"workspace", "frame", "grantable", "not_grantable", "session_tools", "builtins",
        "skills", "knowledge", "mcp", "memory"}


class WorldInvalid(ValueError):
    def __init__(self, message: str, path: list[str | int]) -> None:
        super().__init__(message)
        self.path = path


@dataclass
class World:
    workspace: Path
    frame: str | None
    grantable: list[str]
    not_grantable: list[dict[str, str]]
    session_tools: list[str]
    legacy_fallback: bool
    raw: dict[str, Any] = field(default_factory=dict)

    def registry(self) -> dict[str, Any]:
        return {"grantable": list(self.grantable), "not_grantable": list(self.not_grantable),
                "legacy_fallback": self.legacy_fallback}


W = TypeVar("W", bound=World)


def _names(args: dict[str, Any], key: str) -> list[str] | None:
    value = args[key]
    if value is None:
        return None
    if not isinstance(value, list):
        raise WorldInvalid(f"`{key}` must be a list of names", ["args", key])
    for i, v in enumerate(value):
        if not isinstance(v, str) or not v:
            raise WorldInvalid(f"`{key}[{i}]` must be a non-empty string", ["args", key, i])
    return list(value)


def parse_world(args: dict[str, Any], default_grantable: Iterable[str],
                world: type[W]) -> W:
    """The checked arguments as a ``world`` (the adapter's subclass, its own fields left at
    their defaults). ``default_grantable``: the registry when the world names none, the
    capconf tools the runtime has by the adapter's table."""
    for key in args:
        if key not in KEYS:
            raise WorldInvalid(f"unknown world.setup argument `{key}`", ["args", key])
    ws = args.get("workspace")
    if not isinstance(ws, str) or not os.path.isabs(ws) or not os.path.isdir(ws):
        raise WorldInvalid("`workspace` must be the absolute path of an existing directory",
                           ["args", "workspace"])
    frame = args.get("frame")
    if frame is not None and not isinstance(frame, str):
        raise WorldInvalid("`frame` must be text", ["args", "frame"])
    legacy = False
    if "grantable" in args:
        grantable = _names(args, "grantable")
        if grantable is None:
            grantable, legacy = list(LEGACY_SIX), True
    else:
        grantable = list(default_grantable)
    seen: dict[str, int] = {}
    for i, name in enumerate(grantable):
        if name.lower() in seen:
            raise WorldInvalid(f"`{name}` and `{grantable[seen[name.lower()]]}` are equal up "
                               "to case", ["args", "grantable", i])
        seen[name.lower()] = i
    ng = args.get("not_grantable", [])
    if not isinstance(ng, list):
        raise WorldInvalid("`not_grantable` must be a list", ["args", "not_grantable"])
    rows: list[dict[str, str]] = []
    for i, row in enumerate(ng):
        if not isinstance(row, dict):
            raise WorldInvalid("a not_grantable row is {name, reason}",
                               ["args", "not_grantable", i])
        for k in row:
            if k not in ("name", "reason"):
                raise WorldInvalid(f"unknown field `{k}`", ["args", "not_grantable", i, k])
        for k in ("name", "reason"):
            if not isinstance(row.get(k), str):
                raise WorldInvalid(f"`{k}` must be a string", ["args", "not_grantable", i, k])
        if row["name"].lower() in seen:
            raise WorldInvalid(f"`{row['name']}` is both grantable and not grantable",
                               ["args", "not_grantable", i, "name"])
        rows.append({"name": row["name"], "reason": row["reason"]})
    session = _names(args, "session_tools") if "session_tools" in args else list(grantable)
    for key in ("builtins",):
        if key in args and not isinstance(args[key], list):
            raise WorldInvalid(f"`{key}` must be a list", ["args", key])
    for key in ("knowledge", "mcp", "memory"):
        if key in args and not isinstance(args[key], (dict, list)) and args[key] is not None:
            raise WorldInvalid(f"`{key}` must be an object", ["args", key])
    return world(Path(ws), frame, grantable, rows, session or [], legacy, dict(args))
