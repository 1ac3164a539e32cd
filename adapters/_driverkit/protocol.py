"""capconf's JSON Lines framing (SPEC.md section 2, PROTO-03): one answer per line.

Why its own module: whatever the runtime does, a malformed line must get exactly one
well-formed answer and the driver must keep reading. The framing is capconf's, not a
runtime's, so the Python adapters share this one copy.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64


class ProtoError(Exception):
    def __init__(self, code: str, message: str, path: list[Any] | None = None,
                 rid: int | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.path, self.rid = code, message, path, rid

    def response(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.path is not None:
            err["path"] = self.path
        return {"id": self.rid, "ok": False, "error": err}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth_and_strings(value: Any, path: list[Any], depth: int) -> None:
    if depth > MAX_DEPTH:
        raise ProtoError("bad_request", f"nesting deeper than {MAX_DEPTH} levels", path)
    if isinstance(value, str):
        _check_str(value, path)
    elif isinstance(value, float) and not math.isfinite(value):
        raise ProtoError("bad_request", "a number that is not finite", path)
    elif isinstance(value, int) and not isinstance(value, bool) \
            and not -(2**63) <= value < 2**63:
        raise ProtoError("bad_request", "an integer outside 64 bits", path)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _depth_and_strings(v, [*path, i], depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            _check_str(k, path)
            _depth_and_strings(v, [*path, k], depth + 1)


def _check_str(s: str, path: list[Any]) -> None:
    try:
        s.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ProtoError("bad_request", "a string with a lone surrogate", path) from e


def parse_line(line: bytes) -> tuple[int, str, dict[str, Any]]:
    """A request line -> (id, op, args), or ProtoError with the PROTO-03 code."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtoError("bad_json", f"not UTF-8: {e}") from e
    try:
        obj = json.loads(text, parse_constant=_reject_constant)
    except RecursionError as e:
        raise ProtoError("bad_json", "nesting too deep to parse") from e
    except ValueError as e:
        raise ProtoError("bad_json", f"not one JSON text: {e}") from e
    if not isinstance(obj, dict):
        raise ProtoError("bad_request", "a request is a JSON object")
    rid = obj.get("id")
    if not isinstance(rid, int) or isinstance(rid, bool):
        raise ProtoError("bad_request", "`id` must be an integer", ["id"])
    if not -(2**63) <= rid < 2**63:
        raise ProtoError("bad_request", "`id` outside 64 bits", ["id"])
    try:
        _depth_and_strings(obj, [], 1)
    except ProtoError as e:
        e.rid = rid
        raise
    op = obj.get("op")
    if not isinstance(op, str):
        raise ProtoError("bad_request", "`op` must be a string", ["op"], rid)
    args = obj.get("args", {})
    if not isinstance(args, dict):
        raise ProtoError("bad_request", "`args` must be an object", ["args"], rid)
    return rid, op, args


def dump(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, ensure_ascii=True, allow_nan=False) + "\n").encode()
