"""A driver that answers like the reference but says hostile things (issue 38): its name,
its diagnostics, the tools it grants and its stderr carry GitHub workflow commands,
terminal escapes, Markdown/HTML and table breakers, so every place capconf prints what
an implementation says is fed what an attacker with that foothold would send.

Usage: python hostile.py [MODE]
MODE: words (default: the hostile strings in `hello`, diagnostics, granted tools and
      on stderr) | crash-at-hello (hostile stderr, then exit 9) |
      crash-at-parse (hostile stderr, then exit 9 at the first `definition.parse`) |
      surrogate-at-hello | surrogate-in-parse (a lone surrogate in that response)
Also importable in-process: ``python:fake_impls.hostile:dispatcher``.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from capconf.simulator.protocol.dispatcher import Dispatcher

# One of each probe class: a workflow command on a line of its own, the legacy form
# anywhere in a line, an OSC 52 clipboard write, a screen clear, a window title, a bidi
# override, a tracking pixel, a javascript: link, raw HTML, a table row, a CR that
# hides what precedes it, a C1 CSI.
HOSTILE = ("x\n::warning::pwn", "##[error]x", "\x1b]52;c;ZWNobw==\x07", "\x1b[2J",
           "\x1b]0;title\x07", "\u202egnp.exe", "![x](http://t/p.png)",
           "[a](javascript:alert(1))", "<script>alert(1)</script>", "a|b\n|c|",
           "ok\r::error::hidden", "\x9b31m", "`code` ``x``")
ALL = " ".join(HOSTILE)


class HostileDispatcher:
    """The reference, with hostile words added to what it says."""

    def __init__(self) -> None:
        self.inner = Dispatcher()

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        response: dict[str, Any] = self.inner.handle(request)
        result = response.get("result")
        if not response.get("ok") or not isinstance(result, dict):
            return response
        op = request.get("op")
        if op == "hello":
            result["implementation"] = {"name": ALL, "version": "::error::v"}
        elif op in ("definition.parse", "agent.spawn"):
            result["tools"] = [*result.get("tools", []), *HOSTILE]
            result["diagnostics"] = [*result.get("diagnostics", []), {
                "code": "DEF-X", "severity": "warning", "path": ["tools", ALL],
                "line": 1, "column": 1, "message": ALL}]
        return response


def dispatcher() -> HostileDispatcher:
    return HostileDispatcher()


def main() -> int:
    mode = sys.argv[1] if len(sys.argv) > 1 else "words"
    sys.stderr.write("\n".join(HOSTILE) + "\n")
    sys.stderr.flush()
    if mode == "crash-at-hello":
        return 9
    hostile = HostileDispatcher()
    for line in sys.stdin:
        request = json.loads(line)
        if mode == "crash-at-parse" and request.get("op") == "definition.parse":
            sys.stderr.write(ALL + "\n")
            return 9
        response = hostile.handle(request)
        op = request.get("op")
        if (mode, op) in (("surrogate-at-hello", "hello"),
                          ("surrogate-in-parse", "definition.parse")) and response.get("ok"):
            # json.dumps writes it as the escape "\ud800": valid JSON syntax, no UTF-8 form
            response["result"]["note"] = "a\ud800b"
        sys.stdout.write(json.dumps(response) + "\n")
        sys.stdout.flush()
        if hostile.inner.finished:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
