"""The driver protocol, sans-IO: one request value in, one response value out.

Both transports use this: the in-process transport calls ``handle`` directly, and
``capconf.simulator.protocol.stdio`` wraps it in JSON Lines on stdin/stdout. Nothing here reads a
clock or a pipe, so the same requests give the same responses byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.core.wire import (
    WireError,
    check_request,
    decode_line,
    find_problem,
    request_id,
)
from capconf.simulator.protocol.op_tables import FEATURES, all_ops


class Dispatcher:
    """One driver connection. ``handle`` never raises: every failure is a response."""

    def __init__(self, ops: Mapping[str, Handler] | None = None,
                 features: tuple[str, ...] = FEATURES) -> None:
        self.ops = dict(all_ops() if ops is None else ops)
        self.session = Session(features=features, op_names=tuple(sorted(self.ops)))

    @property
    def finished(self) -> bool:
        return self.session.finished

    def handle(self, request: Any) -> dict[str, Any]:
        """Answer one decoded request. The request is first held to the wire rules
        (PROTO-03) so no op ever sees a lone surrogate, NaN or an absurd nesting; the
        response is held to them too, so whatever an op returns, the line written back
        is valid UTF-8 JSON."""
        rid, refused = request_id(request)
        refused = check_request(request) or refused
        if refused is None and not isinstance(request, dict):
            refused = WireError("bad_request", "a request is a JSON object")
        if refused is not None:
            return self.refusal(refused, rid)
        assert isinstance(request, dict)
        response = self._answer(request, rid)
        found = find_problem(response, max_depth=None)
        if found is not None:  # a bug in the reference: say where, keep the connection
            path, problem = found
            where = "/".join(str(p) for p in path).encode("utf-8", "backslashreplace")
            return {"id": rid, "ok": False, "error": {
                "code": "internal", "message": "the response is not portable JSON: "
                f"{where.decode('ascii', 'replace')} {problem}"}}
        return response

    def handle_line(self, line: bytes) -> dict[str, Any]:
        """One request line as bytes (no newline): decoded by the wire rules, then
        handled. The stdio transport and the suite's in-process raw sends use this."""
        request = decode_line(line)
        if isinstance(request, WireError):
            return self.refusal(request)
        return self.handle(request)

    @staticmethod
    def refusal(error: WireError, rid: int | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.path:
            body["path"] = list(error.path)
        return {"id": rid, "ok": False, "error": body}

    def _answer(self, request: dict[str, Any], request_id: int | None) -> dict[str, Any]:
        try:
            op = request.get("op")
            args = request.get("args", {})
            if not isinstance(op, str):
                raise ProtocolError("bad_request", "`op` must be a string", ("op",))
            if not isinstance(args, dict):
                raise ProtocolError("bad_request", "`args` must be an object", ("args",))
            handler = self.ops.get(op)
            if handler is None:
                raise ProtocolError("not_implemented", f"op `{op}` is not implemented")
            result = handler(self.session, args)
        except ProtocolError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.path:
                error["path"] = list(exc.path)
            return {"id": request_id, "ok": False, "error": error}
        except Exception as exc:  # a bug in the reference itself: report it, never crash
            return {"id": request_id, "ok": False,
                    "error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}
        return {"id": request_id, "ok": True, "result": result}
