"""The driver protocol, sans-IO: one request value in, one response value out.

Both transports use this: the in-process transport calls ``handle`` directly, and
``capconf.simulator.protocol.stdio`` wraps it in JSON Lines on stdin/stdout. Nothing here reads a
clock or a pipe, so the same requests give the same responses byte for byte.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.protocol.op_tables import FEATURES, all_ops
from capconf.simulator.protocol.session import Handler, ProtocolError, Session


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
        request_id = request.get("id") if isinstance(request, dict) else None
        if not isinstance(request_id, int) or isinstance(request_id, bool):
            request_id = None
        try:
            if not isinstance(request, dict):
                raise ProtocolError("bad_request", "a request is a JSON object")
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
