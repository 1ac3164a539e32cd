"""What may cross the wire, in both directions (PROTO-03), as pure functions.

A request line is bytes until proven otherwise: strict UTF-8, then JSON per RFC 8259
(``NaN`` and ``Infinity`` are not JSON), then limits that keep one hostile line from
costing more than it is worth (integer size while parsing; nesting depth after). A
parsed request is then checked as a value, so the in-process transport (which hands
over Python objects) is held to the same rules: no lone surrogates (they cannot be
written back as UTF-8), no non-finite numbers, no integer outside the signed 64-bit
range, no nesting deeper than ``MAX_DEPTH``.

Each check returns a ``WireError`` instead of raising, so the transport decides how to
answer (always a response, never an exit). The checks are iterative: a value nested a
million levels deep must not exhaust the interpreter's recursion limit while being
refused for its depth.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

# Nesting of arrays and objects in a request (the request object itself is level 1).
# Requests need about ten levels (a tool schema inside an MCP world); 64 leaves room.
MAX_DEPTH = 64
# Integers travel as JSON numbers; anything beyond signed 64 bits has no portable meaning.
MAX_INT = 2**63 - 1
MIN_INT = -(2**63)
# One request line; a definition is at most 1 MiB, so 64 MiB (the suite's limit for a
# response line) is generous even for base64 sources inside large worlds.
MAX_LINE_BYTES = 64 * 1024 * 1024

PathItem = str | int


@dataclass(frozen=True)
class WireError:
    """A refusal before any op runs. ``code`` is ``bad_json`` (the line is not a JSON
    text) or ``bad_request`` (it is JSON, but not an acceptable request value);
    ``path`` points into the request where that is meaningful."""

    code: str
    message: str
    path: tuple[PathItem, ...] = ()


class _Refused(Exception):
    def __init__(self, error: WireError) -> None:
        super().__init__(error.message)
        self.error = error


def _refuse_constant(name: str) -> Any:
    raise _Refused(WireError("bad_json", f"`{name}` is not JSON (RFC 8259 has no NaN or "
                             "Infinity); send a finite number"))


def _parse_int(literal: str) -> int:
    # Checked on the literal's length first: converting a 5,000-digit literal is itself
    # the cost being refused (and Python refuses beyond 4,300 digits with ValueError).
    if len(literal.lstrip("-")) > 19 or not MIN_INT <= int(literal) <= MAX_INT:
        raise _Refused(WireError("bad_request", f"integer {literal[:24]}"
                                 f"{'...' if len(literal) > 24 else ''} is outside the signed "
                                 "64-bit range"))
    return int(literal)


def _parse_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _Refused(WireError("bad_request", f"number {literal[:24]} is too large for a "
                                 "64-bit float"))
    return value


def decode_line(line: bytes) -> Any | WireError:
    """One request line (without its newline) to a request value, or the refusal."""
    if len(line) > MAX_LINE_BYTES:
        return WireError("bad_request", f"the request line is longer than {MAX_LINE_BYTES:,} "
                         "bytes")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return WireError("bad_json", f"byte 0x{line[exc.start]:02x} at offset {exc.start} is "
                         "not valid UTF-8; the protocol is UTF-8 JSON Lines")
    if text.startswith("\ufeff"):
        return WireError("bad_json", "the line starts with a byte order mark; JSON Lines "
                         "must not carry one")
    return decode_text(text)


def decode_text(text: str) -> Any | WireError:
    """A JSON text (a request line, or JSON a tool argument carries) to a value, with the
    request's parse limits (no NaN/Infinity, 64-bit integers, the C parser's depth
    guard), or the refusal. The value is not yet checked: see :func:`find_problem`."""
    try:
        value = json.loads(text, parse_constant=_refuse_constant, parse_int=_parse_int,
                           parse_float=_parse_float)
    except _Refused as exc:
        return exc.error
    except json.JSONDecodeError as exc:
        return WireError("bad_json", f"not JSON: {exc}")
    except RecursionError:
        # the C parser's own guard, far beyond MAX_DEPTH (which `check_request` applies
        # to what parses); no bracket-counting prescan, which costs more than the parse
        return WireError("bad_request", f"the request is nested too deeply; at most "
                         f"{MAX_DEPTH} levels are accepted")
    except ValueError as exc:  # defence in depth: the hooks above refuse first
        return WireError("bad_request", f"the request cannot be read: {type(exc).__name__}")
    return value


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _value_problem(value: Any) -> str | None:
    if isinstance(value, str):
        return "contains a lone surrogate (not a Unicode scalar value; it cannot be " \
               "encoded as UTF-8)" if _has_surrogate(value) else None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return None if MIN_INT <= value <= MAX_INT else "is outside the signed 64-bit range"
    if isinstance(value, float):
        return None if math.isfinite(value) else "is not a finite number (NaN and " \
            "Infinity are not JSON)"
    if isinstance(value, list | dict):
        return None
    return f"is a {type(value).__name__}, not a JSON value"


_Link = tuple[Any, PathItem] | None
"""A path as a chain of ``(parent link, key)``: built only when a problem is found, so a
clean value of a million items costs no path tuples."""


def _path(link: _Link) -> tuple[PathItem, ...]:
    keys: list[PathItem] = []
    while link is not None:
        link, key = link
        keys.append(key)
    return tuple(reversed(keys))


def _clean_scalar(item: Any) -> bool:
    """A child that needs no visit of its own: the common case, checked inline."""
    kind = type(item)
    if kind is str:
        return bool(item.isascii()) or not _has_surrogate(item)
    if kind is int:
        return bool(MIN_INT <= item <= MAX_INT)
    return kind is bool or item is None or (kind is float and math.isfinite(item))


def find_problem(value: Any, max_depth: int | None = MAX_DEPTH) -> tuple[tuple[PathItem, ...],
                                                                        str] | None:
    """The first place (in document order) where ``value`` is not plain, portable JSON:
    ``(path, what is wrong)``, or None. Object keys are checked as well as values.
    Linear in the value's size: clean scalars are checked where they stand, and a path is
    built only for the problem found."""
    stack: list[tuple[Any, _Link, int]] = [(value, None, 1)]
    while stack:
        item, link, depth = stack.pop()
        problem = _value_problem(item)
        if problem is not None:
            return _path(link), problem
        if isinstance(item, list | dict):
            if max_depth is not None and depth > max_depth:
                return _path(link), f"nests deeper than {max_depth} levels"
            children: list[tuple[Any, _Link, int]] = []
            if isinstance(item, dict):
                for key, child in item.items():
                    if not isinstance(key, str):
                        return _path(link), (f"has a key that is a {type(key).__name__}, "
                                             "not a string")
                    if not key.isascii() and _has_surrogate(key):  # cannot be echoed
                        shown = key.encode("utf-8", "backslashreplace").decode("ascii",
                                                                               "replace")
                        return _path(link), f"has a key with a lone surrogate ({shown[:40]})"
                    if not _clean_scalar(child):
                        children.append((child, (link, key), depth + 1))
            else:
                children = [(child, (link, i), depth + 1) for i, child in enumerate(item)
                            if not _clean_scalar(child)]
            stack.extend(reversed(children))
    return None


def check_request(request: Any) -> WireError | None:
    """A decoded request value that no op may see: the refusal, or None."""
    found = find_problem(request)
    if found is None:
        return None
    path, problem = found
    shown = "the request" if not path else "`" + "/".join(str(p) for p in path) + "`"
    return WireError("bad_request", f"{shown} {problem}", tuple(path))


def request_id(request: Any) -> tuple[int | None, WireError | None]:
    """The id to echo and, when the id itself is unacceptable, the refusal. A response
    id is an integer or null: a missing, fractional, boolean or string id is refused and
    answered with ``id: null`` (echoing a value of another type would break every
    client that matches responses by integer id)."""
    if not isinstance(request, dict):
        return None, None
    rid = request.get("id")
    if isinstance(rid, int) and not isinstance(rid, bool) and MIN_INT <= rid <= MAX_INT:
        return rid, None
    if "id" not in request:
        return None, WireError("bad_request", "the request has no `id`; send an integer id",
                               ("id",))
    return None, WireError("bad_request", "`id` must be an integer (no fraction, no "
                           "exponent, within the signed 64-bit range)", ("id",))


def encode_response(response: dict[str, Any]) -> bytes:
    """The response line as UTF-8 bytes. Every response the dispatcher builds has
    already passed ``find_problem``; this still never raises, so a bug elsewhere can
    cost one response, never the connection."""
    try:
        text = json.dumps(response, ensure_ascii=False, sort_keys=True, allow_nan=False)
        return (text + "\n").encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError, RecursionError) as exc:
        fallback = {"id": response.get("id") if isinstance(response.get("id"), int) else None,
                    "ok": False, "error": {"code": "internal", "message": "the response "
                                           f"could not be encoded: {type(exc).__name__}"}}
        return (json.dumps(fallback, sort_keys=True) + "\n").encode("utf-8")
