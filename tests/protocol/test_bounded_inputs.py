"""Bounded inputs: world files and world.setup get the limits and validation of definitions.

The memory figures of the bombs are measured by ``benchmarks/bench_bombs.py``; here each
bomb must be refused, with a bound on peak allocation generous enough never to flake
(tracemalloc counts Python allocations, which is what the bombs used to exhaust).
"""

from __future__ import annotations

import json
import os
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from suite_runner import CliResult, run_cli

from capconf.conformance.reference import make_dispatcher
from capconf.conformance.worldfile import WorldFileError, load_world_file
from capconf.simulator.definition.parse import parse_definition
from capconf.simulator.definition.yamlsource import MAX_NODES

MIB = 1024 * 1024


def alias_bomb(levels: int = 9, fanout: int = 8) -> str:
    """The classic "billion laughs" in about 300 bytes: fanout**levels leaves (134
    million for the defaults) once expanded."""
    names = "abcdefghijklmnop"
    lines = ["a: &a [lol]"]
    for i in range(1, levels + 1):
        refs = ",".join([f"*{names[i - 1]}"] * fanout)
        lines.append(f"{names[i]}: &{names[i]} [{refs}]")
    return "\n".join(lines) + "\n"


def capconf(*args: str, cwd: Path | None = None) -> CliResult[bytes]:
    return run_cli(args, cwd=cwd, env=dict(os.environ), timeout=120, text=False)


def _peak(fn: Any) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result: Any = fn()
    except Exception as exc:  # the refusal is the result
        result = exc
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return result, peak


# --------------------------------------------------------------------------- world files

def test_world_file_alias_bomb_is_refused_before_expansion(tmp_path: Path) -> None:
    bomb = tmp_path / "world.yaml"
    bomb.write_text(alias_bomb())
    assert bomb.stat().st_size < 400
    result, peak = _peak(lambda: load_world_file(bomb))
    assert isinstance(result, WorldFileError) and "alias" in str(result), result
    assert peak < 2 * MIB, peak


@pytest.mark.parametrize(("text", "words"), [
    ("x: " + "[" * 40 + "]" * 40 + "\n", "deeper than 32"),
    ("x: [" + ", ".join(["1"] * MAX_NODES) + "]\n", "20,000"),
    ("x: !!binary aGk=\n", "bytes"),
    ("x: 2024-01-01\n", "date"),
    ("x: .inf\n", "JSON"),
    ("? [a]\n: b\n", "YAML"),
    ("- a\n", "mapping"),
    ("x: a\x07\n", "YAML"),
    ("1: a\n", "must be a string"),
])
def test_world_file_limits_and_types(tmp_path: Path, text: str, words: str) -> None:
    path = tmp_path / "world.yaml"
    path.write_text(text)
    with pytest.raises(WorldFileError, match=words):
        load_world_file(path)


def test_world_file_size_and_encoding(tmp_path: Path) -> None:
    big = tmp_path / "big.yaml"
    big.write_bytes(b"frame: '" + b"x" * (MIB + 10) + b"'\n")
    with pytest.raises(WorldFileError, match="1,048,576"):
        load_world_file(big)
    bad = tmp_path / "bad.yaml"
    bad.write_bytes(b"frame: \xff\n")
    with pytest.raises(WorldFileError, match="UTF-8"):
        load_world_file(bad)


def test_world_file_at_the_limits_loads(tmp_path: Path) -> None:
    path = tmp_path / "world.yaml"
    # mapping, key, sequence: 3 nodes, plus MAX_NODES - 3 items
    path.write_text("x: [" + ", ".join(["1"] * (MAX_NODES - 3)) + "]\n")
    assert len(load_world_file(path)["x"]) == MAX_NODES - 3
    path.write_text("x: " + "[" * 31 + "]" * 31 + "\n")
    load_world_file(path)


def test_cli_world_bomb_and_bad_workspace_are_clear_errors(tmp_path: Path) -> None:
    definition = tmp_path / "a.yaml"
    definition.write_text("name: a\ndescription: d\n")
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(alias_bomb())
    proc = capconf("validate", str(definition), "--world", str(bomb))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert b"alias" in proc.stderr
    for workspace in ("7", "[a]", "''"):
        world = tmp_path / "world.yaml"
        world.write_text(f"workspace: {workspace}\n")
        proc = capconf("validate", str(definition), "--world", str(world))
        assert proc.returncode == 2, proc.stderr
        assert b"Traceback" not in proc.stderr and b"workspace" in proc.stderr, proc.stderr


def test_cli_world_with_unknown_key_is_a_world_error(tmp_path: Path) -> None:
    definition = tmp_path / "a.yaml"
    definition.write_text("name: a\ndescription: d\n")
    world = tmp_path / "world.yaml"
    world.write_text("approval: yes\n")
    proc = capconf("validate", str(definition), "--world", str(world))
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr
    assert b"world_invalid" in proc.stderr and b"approval" in proc.stderr, proc.stderr


# --------------------------------------------------------------------------- world.setup

@pytest.mark.parametrize(("extra", "path"), [
    ({"approval": "yes"}, ["args", "approval"]),
    ({"grantable_tools": ["read"]}, ["args", "grantable_tools"]),
    ({"not_grantable": 7}, ["args", "not_grantable"]),
    ({"not_grantable": [{"name": "x"}]}, ["args", "not_grantable", 0, "reason"]),
    ({"not_grantable": [{"name": "x", "reason": "r", "why": 1}]},
     ["args", "not_grantable", 0, "why"]),
    ({"grantable": ["read", 3]}, ["args", "grantable", 1]),
    ({"grantable": "read"}, ["args", "grantable"]),
    ({"session_tools": ["read", None]}, ["args", "session_tools", 1]),
    ({"builtins": [{"filename": "a.md"}]}, ["args", "builtins", 0, "source"]),
    ({"builtins": {"filename": "a.md"}}, ["args", "builtins"]),
    ({"frame": ["x"]}, ["args", "frame"]),
    ({"workspace": 7}, ["args", "workspace"]),
    ({"workspace": "/tmp/\x00"}, ["args", "workspace"]),
])
def test_world_setup_refuses_every_bad_argument_with_its_path(
        tmp_path: Path, extra: dict[str, Any], path: list[str | int]) -> None:
    d = make_dispatcher()
    response = d.handle({"id": 1, "op": "world.setup",
                         "args": {"workspace": str(tmp_path), **extra}})
    assert response["ok"] is False, response
    assert response["error"]["code"] == "world_invalid"
    assert response["error"]["path"] == path
    assert d.handle({"id": 2, "op": "world.setup", "args": {"workspace": str(tmp_path)}})["ok"]


def test_not_grantable_without_grantable_is_applied_not_dropped(tmp_path: Path) -> None:
    d = make_dispatcher()
    response = d.handle({"id": 1, "op": "world.setup", "args": {
        "workspace": str(tmp_path), "not_grantable": [{"name": "Browser", "reason": "r"}]}})
    registry = response["result"]["registry"]
    assert registry["not_grantable"] == [{"name": "Browser", "reason": "r"}]
    assert "read" in registry["grantable"]


# --------------------------------------------------------------------------- node counting

def _codes(source: str) -> list[str]:
    return [d.code for d in parse_definition(source).diagnostics]


def test_node_limit_counts_nodes_not_events() -> None:
    # name: a -> mapping + 2 scalars; x: [...] -> key + sequence + items
    at_limit = "name: a\nx: [" + ", ".join(["1"] * (MAX_NODES - 5)) + "]\n"
    over = "name: a\nx: [" + ", ".join(["1"] * (MAX_NODES - 4)) + "]\n"
    assert "DEF-YAML-TOO-COMPLEX" not in _codes(at_limit)
    assert _codes(over) == ["DEF-YAML-TOO-COMPLEX"]


def test_comma_string_entries_count_toward_the_node_limit() -> None:
    def tools(n: int) -> str:
        return "name: a\ntools: " + ",".join(["read"] * n) + "\n"

    # mapping + name + a + tools key + the string: 5 nodes, each comma one more
    assert "DEF-YAML-TOO-COMPLEX" not in _codes(tools(MAX_NODES - 4))
    outcome = parse_definition(tools(MAX_NODES - 3))
    assert [d.code for d in outcome.diagnostics] == ["DEF-YAML-TOO-COMPLEX"]
    assert (outcome.diagnostics[0].location.line, outcome.diagnostics[0].location.column) == (
        2, 8)


def test_two_hundred_thousand_names_are_one_diagnostic() -> None:
    source = "name: a\ntools: " + ",".join(["t"] * 200_000) + "\n"
    result, peak = _peak(lambda: parse_definition(source))
    assert [d.code for d in result.diagnostics] == ["DEF-YAML-TOO-COMPLEX"]
    assert peak < 32 * MIB, peak
    for key in ("skills", "mcp:\n  servers"):
        many = f"name: a\n{key}: " + ",".join(["x"] * 30_000) + "\n"
        assert _codes(many) == ["DEF-YAML-TOO-COMPLEX"], key


def test_comma_strings_elsewhere_are_text(tmp_path: Path) -> None:
    """Only name lists are split: a long description full of commas is one node."""
    description = ",".join(["x"] * 100_000)
    assert "DEF-YAML-TOO-COMPLEX" not in _codes(f"name: a\ndescription: '{description}'\n")


# --------------------------------------------------------------------------- positions

@pytest.mark.parametrize(("tools", "expected"), [
    ('"read,  nope"', [("read", 2, 9), ("nope", 2, 16)]),
    ("'read, nope'", [("read", 2, 9), ("nope", 2, 15)]),
    (">\n  read,\n  nope\n", [("read", 3, 3), ("nope", 4, 3)]),
    ("|\n  read,\n    nope,\n", [("read", 3, 3), ("nope", 4, 5)]),
    ("read,\n  nope", [("read", 2, 8), ("nope", 3, 3)]),
    ('"re\\x61d, nope"', [("read", 2, 8), ("nope", 2, 18)]),  # an escape: the string
])
def test_names_in_comma_strings_are_located_at_the_name(
        tools: str, expected: list[tuple[str, int, int]]) -> None:
    outcome = parse_definition(f"name: a\ntools: {tools}\n")
    assert outcome.definition is not None and outcome.definition.tools is not None
    got = [(r.name, r.location.line, r.location.column) for r in outcome.definition.tools]
    assert got == expected


def test_folded_block_leaves_no_line_break_in_a_name() -> None:
    outcome = parse_definition("name: a\ntools: >\n  read,\n  grep\n\n")
    assert outcome.definition is not None and outcome.definition.tools is not None
    assert [r.name for r in outcome.definition.tools] == ["read", "grep"]


def test_empty_entry_in_a_quoted_string_is_located_after_the_comma() -> None:
    outcome = parse_definition('name: a\ntools: "read, ,grep"\n')
    [empty] = [d for d in outcome.diagnostics if d.code == "DEF-EMPTY-ENTRY"]
    assert (empty.location.path, empty.location.line, empty.location.column) == (
        ("tools", 1), 2, 15)


def test_world_file_round_trip_through_the_cli_json(tmp_path: Path) -> None:
    definition = tmp_path / "a.yaml"
    definition.write_text("name: a\ndescription: d\ntools: read\n")
    world = tmp_path / "world.yaml"
    world.write_text("grantable: [read]\nnot_grantable: [{name: Browser, reason: not here}]\n")
    proc = capconf("validate", str(definition), "--world", str(world), "--json")
    assert proc.returncode == 0, proc.stderr  # warnings at most, no --strict
    assert json.loads(proc.stdout)["tools"] == ["read"]
