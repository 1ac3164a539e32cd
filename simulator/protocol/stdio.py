"""Serve the dispatcher over JSON Lines on stdin/stdout (`capconf driver`).

The I/O edge of the simulator: one request per line, one response per line, in order.
Lines are read as bytes and decoded here (``wire.decode_line``), never by the text layer
of ``sys.stdin``: invalid UTF-8, a line that is not JSON, ``NaN``, absurd nesting or a
5,000-digit number each get an error response with ``id: null`` (PROTO-03), and the
server keeps reading. Responses are written as UTF-8 bytes by ``wire.encode_response``,
which cannot fail, so no request can end the connection except ``shutdown``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO

from capconf.simulator.core.wire import MAX_LINE_BYTES, WireError, encode_response
from capconf.simulator.protocol.dispatcher import Dispatcher

JSON_WHITESPACE = b" \t\r"


def _lines(stdin: IO[bytes]) -> Iterator[bytes | None]:
    """Request lines without their newline; None for a line over the size limit (its
    bytes are skipped up to the next newline without being kept)."""
    while True:
        line = stdin.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                rest = stdin.readline(MAX_LINE_BYTES)
                if not rest or rest.endswith(b"\n"):
                    break
            yield None
            continue
        yield line.rstrip(b"\n").rstrip(b"\r")


def serve(stdin: IO[bytes] | None = None, stdout: IO[bytes] | None = None,
          dispatcher: Dispatcher | None = None) -> int:
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    dispatcher = dispatcher or Dispatcher()
    for line in _lines(stdin):
        if line is not None and not line.strip(JSON_WHITESPACE):
            continue  # only JSON's own whitespace makes a blank line (not \v or \f)
        if line is None:
            response = Dispatcher.refusal(WireError(
                "bad_request", f"the request line is longer than {MAX_LINE_BYTES:,} bytes"))
        else:
            response = dispatcher.handle_line(line)
        stdout.write(encode_response(response))
        stdout.flush()
        if dispatcher.finished:
            break
    return 0
