"""The arguments every definition op carries (`source`/`source_b64`, `format`,
`filename`), checked once for the Python adapters: a malformed request is capconf's
`bad_request` with its argument path, whatever the runtime would make of the file.

How the source bytes are read stays each adapter's (``read_source``), since each adapter
translates them for its own runtime."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, TypeVar

from .protocol import ProtoError

FORMATS = ("auto", "yaml", "markdown")


def definition_args(args: dict[str, Any], read_source: Callable[[dict[str, Any]], bytes],
                    bad_source: type[Exception]) -> tuple[bytes, str, str | None]:
    """(source bytes, format, filename) of a definition op, or ``bad_request``."""
    try:
        raw = read_source(args)
    except bad_source as e:
        raise ProtoError("bad_request", str(e), ["args", "source"]) from e
    fmt = args.get("format", "auto")
    if fmt not in FORMATS:
        raise ProtoError("bad_request", "`format` is auto, yaml or markdown", ["args", "format"])
    filename = args.get("filename")
    if filename is not None and not isinstance(filename, str):
        raise ProtoError("bad_request", "`filename` must be a string", ["args", "filename"])
    return raw, fmt, filename


def tool_call_args(args: dict[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """(agent id, tool name, the tool's arguments) of a `tool.call`, or ``bad_request``;
    whether the agent exists is the adapter's (``no_such_agent``)."""
    aid, tool, targs = args.get("agent"), args.get("tool"), args.get("args", {})
    if not isinstance(aid, str):
        raise ProtoError("bad_request", "`agent` is required", ["args", "agent"])
    if not isinstance(tool, str):
        raise ProtoError("bad_request", "`tool` is required", ["args", "tool"])
    if not isinstance(targs, dict):
        raise ProtoError("bad_request", "`args` must be an object", ["args", "args"])
    return aid, tool, targs


class _HasId(Protocol):
    id: str


CardT = TypeVar("CardT", bound=_HasId)


def card_arg(cards: Iterable[CardT], args: dict[str, Any]) -> CardT:
    """The card a card op names (`card`), or `bad_request` / `CARD-NOT-FOUND` at its path:
    the lookup is the protocol's, whichever runtime raised the card."""
    cid = args.get("card")
    if not isinstance(cid, str):
        raise ProtoError("bad_request", "`card` is a card id", ["args", "card"])
    for c in cards:
        if c.id == cid:
            return c
    raise ProtoError("CARD-NOT-FOUND", f"no card `{cid}`", ["args", "card"])

