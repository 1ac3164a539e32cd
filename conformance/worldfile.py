"""Read a `--world` YAML file as untrusted data, with the limits of a definition.

A world file is the arguments of `world.setup` written as YAML. It gets the refusals
the spec gives definitions (DEF-03): at most 1,048,576 bytes, no aliases (a 342-byte
file of nested aliases otherwise expands to gigabytes), nesting of at most 32 levels,
at most 20,000 nodes; and only JSON values, since it is sent over the driver protocol.
Everything is checked on the event stream before any value is built. This module is
part of the suite's tooling, so it does not import the reference simulator.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from capconf.conformance import cli_files

MAX_BYTES = 1_048_576
MAX_DEPTH = 32
MAX_NODES = 20_000
_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)


class WorldFileError(Exception):
    """The file cannot be used as a world; the message names the place."""


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}"


def _prescan(text: str) -> None:
    depth = nodes = 0
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, yaml.AliasEvent):
            raise WorldFileError(f"YAML alias *{event.anchor} at {_at(event.start_mark)} is "
                                 "not allowed; write the value out in full")
        if isinstance(event, _NODE_EVENTS):
            nodes += 1
            if nodes > MAX_NODES:
                raise WorldFileError(f"more than {MAX_NODES:,} YAML nodes (at "
                                     f"{_at(event.start_mark)})")
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise WorldFileError(f"nesting deeper than {MAX_DEPTH} levels at "
                                     f"{_at(event.start_mark)}")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _json_value(value: Any, path: str) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, child in value.items():
            if not isinstance(key, str):
                raise WorldFileError(f"key {key!r} at {path or 'the top level'} must be a "
                                     "string")
            out[key] = _json_value(child, f"{path}.{key}" if path else key)
        return out
    if isinstance(value, list):
        return [_json_value(child, f"{path}[{i}]") for i, child in enumerate(value)]
    if isinstance(value, float) and not math.isfinite(value):
        raise WorldFileError(f"`{path}` is {value}, which JSON cannot carry")
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise WorldFileError(f"`{path}` is a {type(value).__name__}; write it as a string")


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """The parser's complaint at its line and column (PyYAML's own text names the source
    `<unicode string>`, which tells a user nothing)."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).split("\n", 1)[0]
    context = getattr(exc, "context", None)
    where = f" at {_at(mark)}" if mark is not None else ""
    return f"invalid YAML{where}: {problem}" + (f" ({context})" if context else "")


def load_world_file(path: Path) -> dict[str, Any]:
    try:
        data = cli_files.read_prefix(str(path), "world file", MAX_BYTES + 1)
    except cli_files.InputError as exc:
        raise WorldFileError(exc.message) from None
    if len(data) > MAX_BYTES:
        raise WorldFileError(f"larger than the {MAX_BYTES:,}-byte limit")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as exc:
        raise WorldFileError(f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not "
                             "valid UTF-8") from None
    try:
        _prescan(text)
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise WorldFileError(_yaml_problem(exc)) from None
    loaded = {} if loaded is None else loaded
    if not isinstance(loaded, dict):
        raise WorldFileError("must be a mapping of world.setup keys")
    result: dict[str, Any] = _json_value(loaded, "")
    return result
