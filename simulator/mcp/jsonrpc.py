"""JSON-RPC 2.0 framing for MCP's stdio transport: one message per line, validated.

Both ends of the simulator's MCP traffic (the fake server and the client) decode through
this one module, so a hostile peer is judged by one rulebook: a line over the size limit,
bytes that are not UTF-8, JSON that is not one well-formed JSON-RPC object (duplicate
keys, NaN, batches included) all become a :class:`FramingError` value, never an exception
and never a half-trusted message. Encoding is canonical (sorted keys, no spaces) so the
same message is the same bytes on every transport, which is what makes journals
comparable.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

JSONRPC_VERSION = "2.0"

MAX_MESSAGE_BYTES = 1_048_576
"""Largest accepted message, in UTF-8 bytes, excluding the newline. A peer that sends
more is broken or hostile; reading on would let it exhaust memory."""

MAX_JSON_DEPTH = 64
"""Deepest accepted nesting of arrays/objects; deeper input is rejected before parsing
so a hostile peer cannot trigger the parser's recursion limit."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

RequestId = int | str


class FramingProblem(StrEnum):
    TOO_LARGE = "too_large"
    NOT_UTF8 = "not_utf8"
    NOT_JSON = "not_json"
    TOO_DEEP = "too_deep"
    NOT_OBJECT = "not_object"
    BAD_VERSION = "bad_version"
    BAD_SHAPE = "bad_shape"


@dataclass(frozen=True)
class FramingError:
    """A line that is not one valid JSON-RPC 2.0 message; ``code`` is what a server
    answers with (parse error for bytes that are not JSON, invalid request otherwise)."""

    problem: FramingProblem
    message: str

    @property
    def code(self) -> int:
        if self.problem in (FramingProblem.NOT_UTF8, FramingProblem.NOT_JSON):
            return PARSE_ERROR
        return INVALID_REQUEST


@dataclass(frozen=True)
class Request:
    id: RequestId
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Notification:
    method: str
    params: dict[str, Any] | None = None


@dataclass(frozen=True)
class Response:
    id: RequestId
    result: Any


@dataclass(frozen=True)
class ErrorResponse:
    id: RequestId | None
    code: int
    message: str
    data: Any = None


Message = Request | Notification | Response | ErrorResponse


def canonical_json(value: Any) -> str:
    """Sorted keys, no insignificant spaces, non-ASCII kept: same value, same bytes."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def to_obj(message: Message) -> dict[str, Any]:
    obj: dict[str, Any] = {"jsonrpc": JSONRPC_VERSION}
    if isinstance(message, Request):
        obj["id"] = message.id
        obj["method"] = message.method
        if message.params is not None:
            obj["params"] = message.params
    elif isinstance(message, Notification):
        obj["method"] = message.method
        if message.params is not None:
            obj["params"] = message.params
    elif isinstance(message, Response):
        obj["id"] = message.id
        obj["result"] = message.result
    else:
        error: dict[str, Any] = {"code": message.code, "message": message.message}
        if message.data is not None:
            error["data"] = message.data
        obj["id"] = message.id
        obj["error"] = error
    return obj


def encode(message: Message) -> str:
    """One line, without the trailing newline (json escapes any newline in strings)."""
    return canonical_json(to_obj(message))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise ValueError(f"duplicate key {key!r}")
        obj[key] = value
    return obj


def _too_deep(text: str) -> bool:
    """Bracket depth outside strings; a cheap pre-scan so json never recurses deeply."""
    depth = 0
    in_string = False
    escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_JSON_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def _valid_id(value: object) -> bool:
    return (isinstance(value, int) and not isinstance(value, bool)) or isinstance(value, str)


def decode(line: bytes | str) -> Message | FramingError:
    """Validate one line (without its newline) into a message or a framing error."""
    raw = line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line
    if len(raw) > MAX_MESSAGE_BYTES:
        return FramingError(
            FramingProblem.TOO_LARGE,
            f"message of {len(raw)} bytes exceeds the limit of {MAX_MESSAGE_BYTES} bytes",
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return FramingError(FramingProblem.NOT_UTF8, f"message is not UTF-8: {exc.reason}")
    if _too_deep(text):
        return FramingError(
            FramingProblem.TOO_DEEP, f"message nests deeper than {MAX_JSON_DEPTH} levels"
        )
    try:
        obj = json.loads(
            text, object_pairs_hook=_no_duplicate_keys, parse_constant=_reject_constant
        )
    except (ValueError, RecursionError) as exc:
        return FramingError(FramingProblem.NOT_JSON, f"message is not valid JSON: {exc}")
    if isinstance(obj, list):
        return FramingError(FramingProblem.NOT_OBJECT, "batches are not supported by MCP")
    if not isinstance(obj, dict):
        return FramingError(FramingProblem.NOT_OBJECT, "message is not a JSON object")
    return _from_obj(obj)


def _from_obj(obj: dict[str, Any]) -> Message | FramingError:
    if obj.get("jsonrpc") != JSONRPC_VERSION:
        return FramingError(FramingProblem.BAD_VERSION, 'member "jsonrpc" must be "2.0"')
    if "method" in obj:
        return _request_or_notification(obj)
    return _response(obj)


def _request_or_notification(obj: dict[str, Any]) -> Message | FramingError:
    method = obj["method"]
    if not isinstance(method, str) or not method:
        return FramingError(FramingProblem.BAD_SHAPE, 'member "method" must be a string')
    extra = set(obj) - {"jsonrpc", "id", "method", "params"}
    if extra:
        return FramingError(FramingProblem.BAD_SHAPE, f"unexpected members {sorted(extra)}")
    params = obj.get("params")
    if "params" in obj and not isinstance(params, dict):
        return FramingError(FramingProblem.BAD_SHAPE, 'member "params" must be an object')
    if "id" not in obj:
        return Notification(method, params)
    if not _valid_id(obj["id"]):
        return FramingError(FramingProblem.BAD_SHAPE, 'member "id" must be a string or integer')
    return Request(obj["id"], method, params)


def _response(obj: dict[str, Any]) -> Message | FramingError:
    if "id" not in obj:
        return FramingError(FramingProblem.BAD_SHAPE, 'a response needs member "id"')
    has_result = "result" in obj
    has_error = "error" in obj
    if has_result == has_error:
        return FramingError(
            FramingProblem.BAD_SHAPE, 'a response has exactly one of "result" and "error"'
        )
    extra = set(obj) - {"jsonrpc", "id", "result", "error"}
    if extra:
        return FramingError(FramingProblem.BAD_SHAPE, f"unexpected members {sorted(extra)}")
    rid = obj["id"]
    if has_result:
        if not _valid_id(rid):
            return FramingError(FramingProblem.BAD_SHAPE, 'member "id" must be a string or integer')
        return Response(rid, obj["result"])
    if rid is not None and not _valid_id(rid):
        return FramingError(FramingProblem.BAD_SHAPE, 'member "id" must be a string or integer')
    error = obj["error"]
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), int)
        or isinstance(error.get("code"), bool)
        or not isinstance(error.get("message"), str)
    ):
        return FramingError(
            FramingProblem.BAD_SHAPE, 'member "error" needs an integer code and a string message'
        )
    return ErrorResponse(rid, error["code"], error["message"], error.get("data"))
