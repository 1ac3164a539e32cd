"""The out-of-process implementer's worker: child sessions in another process, spoken to
over a JSON Lines channel on stdin/stdout (one request, one answer, in order, so the
exchange is deterministic). It runs the same :class:`ChildHost` as the in-process
implementers; only the transport differs. It ends when its stdin closes.

Request: ``{"op": "start"|"follow_up"|"progress"|"finish"|"stop"|"context", "child": ID,
...}``; answer: ``{"ok": true, "result": ...}`` or ``{"ok": false, "code", "message"}``.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from capconf.simulator.delegation.host import ChildHost, HostError


def handle(host: ChildHost, request: dict[str, Any]) -> Any:
    op, child = request.get("op"), str(request.get("child"))
    if op == "start":
        host.start(child, list(request.get("context", [])))
        return None
    if op == "follow_up":
        host.follow_up(child, str(request.get("text", "")))
        return None
    if op == "progress":
        host.progress(child, str(request.get("text", "")))
        return None
    if op == "finish":
        return host.finish(child, str(request.get("status")), request.get("report"))
    if op == "stop":
        return host.stop(child)
    if op == "context":
        return host.context(child)
    raise HostError("bad_request", f"unknown worker op {op!r}")


def serve(stdin: TextIO, stdout: TextIO) -> None:
    host = ChildHost()
    for line in stdin:
        try:
            answer: dict[str, Any] = {"ok": True, "result": handle(host, json.loads(line))}
        except HostError as exc:
            answer = {"ok": False, "code": exc.code, "message": exc.message}
        except (ValueError, TypeError, AttributeError) as exc:
            answer = {"ok": False, "code": "bad_request", "message": str(exc)}
        stdout.write(json.dumps(answer, sort_keys=True) + "\n")
        stdout.flush()


def main() -> None:
    serve(sys.stdin, sys.stdout)


if __name__ == "__main__":
    main()
