"""Mutants of the driver's wire handling (PROTO-02, PROTO-03): each a plausible bug of
a runtime's JSON Lines edge, each naming the requirement whose cases must catch it."""

from __future__ import annotations

import json
from typing import Any

from capconf.simulator.core import world
from capconf.simulator.protocol import dispatcher as dispatcher_module
from capconf.simulator.protocol import wire
from mutants.base import Mutant, _original, _patch


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


MUTANTS: tuple[Mutant, ...] = (
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
