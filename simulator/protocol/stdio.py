"""Serve the dispatcher over JSON Lines on stdin/stdout (`capconf driver`).

The I/O edge of the simulator: one request per line, one response per line, in order.
A line that is not JSON gets an error response with ``id: null``; the server keeps going.
"""

from __future__ import annotations

import json
import sys
from typing import IO

from capconf.simulator.protocol.dispatcher import Dispatcher


def serve(stdin: IO[str] | None = None, stdout: IO[str] | None = None,
          dispatcher: Dispatcher | None = None) -> int:
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    dispatcher = dispatcher or Dispatcher()
    for line in stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
        except json.JSONDecodeError as exc:
            response = {"id": None, "ok": False,
                        "error": {"code": "bad_json", "message": f"not JSON: {exc}"}}
        else:
            response = dispatcher.handle(request)
        stdout.write(json.dumps(response, ensure_ascii=False, sort_keys=True) + "\n")
        stdout.flush()
        if dispatcher.finished:
            break
    return 0
