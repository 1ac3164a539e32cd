"""Mutants of the driver's wire handling (PROTO-02, PROTO-03) and of positions inside
comma strings (DEF-03): each a plausible bug, each naming the requirement whose cases
must catch it."""

from __future__ import annotations

import json
from typing import Any

from capconf.simulator.compose import world
from capconf.simulator.core import wire
from capconf.simulator.definition import yamlsource
from capconf.simulator.protocol import dispatcher as dispatcher_module
from mutants.base import Mutant, _original, _patch
from mutants.split import ModuleGroup

# definition/document.py before it was split into the document and its parser (issue 24)
document = ModuleGroup("capconf.simulator.definition.document",
                       "capconf.simulator.definition.parse")


def _lenient_json(line: bytes) -> Any:
    """The language's default parser: accepts NaN and Infinity (Python, some others)."""
    try:
        return json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        return wire.WireError("bad_json", str(exc))


def _nan_accepted() -> None:
    _patch(dispatcher_module, "decode_line", _lenient_json)
    _patch(dispatcher_module, "check_request", lambda request: None)


def _utf8_replaced() -> None:
    """Invalid UTF-8 is decoded with replacement characters and the request is run."""
    real = _original(wire, "decode_line")

    def buggy(line: bytes) -> Any:
        return real(line.decode("utf-8", "replace").encode("utf-8"))

    _patch(dispatcher_module, "decode_line", buggy)


def _any_id_echoed() -> None:
    """Whatever the id is, it is echoed and the request runs."""
    def buggy(request: Any) -> tuple[Any, None]:
        return (request.get("id") if isinstance(request, dict) else None), None

    _patch(dispatcher_module, "request_id", buggy)


def _recursion_escapes() -> None:
    """No depth limit: the parser's RecursionError escapes and ends the connection."""
    def buggy(line: bytes) -> Any:
        return json.loads(line.decode("utf-8"))  # RecursionError propagates

    _patch(dispatcher_module, "decode_line", buggy)


def _unknown_world_keys_ignored() -> None:
    """world.setup drops keys it does not know, and a non-list not_grantable."""
    real = _original(world, "parse_world")

    def buggy(args: Any) -> Any:
        kept = {k: v for k, v in args.items() if k in world.world_keys()}
        if not isinstance(kept.get("not_grantable", []), list):
            kept.pop("not_grantable")
        return real(kept)

    _patch(world, "parse_world", buggy)
    import capconf.simulator.protocol.core_ops as core_ops

    _patch(core_ops, "parse_world", buggy)


def _quoted_names_at_string_start() -> None:
    """Offsets inside a scalar are trusted only for plain one-line strings: names in a
    quoted or block string are all located at the string (the issue-9 behaviour)."""
    real = _original(document, "_comma_entries")

    def buggy(node: Any) -> list[tuple[str, int, int]]:
        entries: list[tuple[str, int, int]] = real(node)
        if node.style is None and "\n" not in node.text:
            return entries
        return [(name, node.mark.line, node.mark.column) for name, _, _ in entries]

    _patch(document, "_comma_entries", buggy)


def _events_counted() -> None:
    """The node limit counts parser events (stream, document and end events too)."""
    import yaml

    _patch(yamlsource, "_NODE_EVENTS", (yaml.Event,))


def _comma_entries_free() -> None:
    """Entries of a comma string do not count toward the node limit."""
    _patch(document, "check_entry_budget", lambda nodes, scalars: None)


def _comma_string_counted_twice() -> None:
    """A comma string counts as a node and then each of its names once more: a document
    of exactly 20,000 nodes is refused."""
    real = _original(yamlsource, "check_entry_budget")

    def check(nodes: int, scalars: list[yamlsource.LScalar]) -> None:
        real(nodes + len(scalars), scalars)

    _patch(document, "check_entry_budget", check)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("events-counted", "the node limit counts parser events, not nodes", ("DEF-03",),
           _events_counted),
    Mutant("comma-entries-free", "a comma string of 30,000 names escapes the node limit",
           ("DEF-03",), _comma_entries_free),
    Mutant("comma-string-counted-twice", "a comma string of n names counts as n + 1 nodes",
           ("DEF-03",), _comma_string_counted_twice),
    Mutant("quoted-names-at-string-start", "names in quoted or folded comma strings are "
           "located at the string's start", ("DEF-03",), _quoted_names_at_string_start),
    Mutant("nan-accepted", "NaN and Infinity in a request are parsed and the op runs",
           ("PROTO-03",), _nan_accepted),
    Mutant("utf8-replaced", "invalid UTF-8 is replaced with U+FFFD and the request runs",
           ("PROTO-03",), _utf8_replaced),
    Mutant("any-id-echoed", "a string or fractional id is echoed back", ("PROTO-03",),
           _any_id_echoed),
    Mutant("recursion-escapes", "a deeply nested line raises out of the driver",
           ("PROTO-03",), _recursion_escapes),
    Mutant("unknown-world-keys-ignored", "world.setup silently drops unknown and ill-typed "
           "keys", ("PROTO-02",), _unknown_world_keys_ignored),
)
