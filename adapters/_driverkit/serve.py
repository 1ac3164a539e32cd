"""The driver's request loop: one response per request line, whatever an op does.

Why here: PROTO-03 wants exactly one well-formed answer per line and the connection kept;
the dispatch (unknown op, `world.setup` first, an adapter bug answered as `internal`) and
the stdin/stdout loop are capconf's protocol, the same for every Python adapter. The
runtime's work is each adapter's ``Driver`` and its ``OPS`` table.
"""

from __future__ import annotations

import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, ClassVar, Protocol

from .protocol import ProtoError, dump, parse_line
from .world import WorldInvalid

# the ops a driver answers before `world.setup`
NO_WORLD_NEEDED = ("hello", "world.setup", "shutdown")


class Dispatching(Protocol):
    """A driver as the loop sees it: its ops table (op -> unbound method), its world."""

    OPS: ClassVar[dict[str, Any]]

    @property
    def world(self) -> object | None: ...


class Served(Protocol):
    def handle(self, line: bytes) -> dict[str, Any]: ...

    def close(self) -> None: ...


def handle(driver: Dispatching, line: bytes) -> dict[str, Any]:
    """One request line -> its response (never raises)."""
    rid: int | None = None
    try:
        rid, op, args = parse_line(line)
        fn = driver.OPS.get(op)
        if fn is None:
            raise ProtoError("not_implemented", f"op `{op}` is not implemented", None, rid)
        if op not in NO_WORLD_NEEDED and driver.world is None:
            raise ProtoError("no_world", "world.setup first", None, rid)
        return {"id": rid, "ok": True, "result": fn(driver, args)}
    except ProtoError as e:
        if e.rid is None:
            e.rid = rid
        return e.response()
    except WorldInvalid as e:
        return {"id": rid, "ok": False,
                "error": {"code": "world_invalid", "message": str(e), "path": e.path}}
    except Exception as e:  # a bug of the adapter: one response, not the connection
        traceback.print_exc(file=sys.stderr)
        return {"id": rid, "ok": False, "error": {"code": "internal", "message": repr(e)}}


def serve(make_driver: Callable[[], Served]) -> int:
    """Answer stdin's request lines on stdout until EOF or `shutdown`; the driver is closed
    (runtime stopped, private home removed) however the loop ends."""
    # a runtime answers with whatever nesting a definition had; the reader must not be
    # the first to give up (the request side is bounded by protocol.MAX_DEPTH)
    sys.setrecursionlimit(20000)
    # a harness that stops the driver with SIGTERM still gets the driver closed (the
    # `finally` below)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    out = sys.stdout.buffer
    driver = make_driver()
    try:
        for line in sys.stdin.buffer:
            if not line.strip(b" \t\r\n"):
                continue
            response = driver.handle(line.rstrip(b"\r\n"))
            out.write(dump(response))
            out.flush()
            if response.get("ok") and response.get("result") == {} and b'"shutdown"' in line:
                break
    finally:
        driver.close()
    return 0
