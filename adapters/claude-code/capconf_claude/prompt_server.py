"""The adapter's permission-prompt tool: a stdio MCP server Claude Code starts itself.

Why: under `-p` Claude Code answers a permission ask through the MCP tool named by
`--permission-prompt-tool` (real-runtimes.md, "Claude Code 2.1.328"). This server has one
tool, `ask`; every call Claude Code makes to it is relayed, as it came, to the driver over
a loopback socket (`CAPCONF_PROMPT_PORT`) and held until the driver sends the answer
(`card.decide`, or a deny when the agent is stopped). It decides nothing: whether to ask,
and what runs after the answer, are Claude Code's.

Standard library only; run as `python prompt_server.py` (the MCP config names it).
One JSON line per relayed ask: `{"id": N, "arguments": {...}}`; the driver answers with
`{"id": N, "answer": {"behavior": "allow"|"deny", ...}}`.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from typing import Any

TOOL = "ask"
out_lock = threading.Lock()


def send(msg: dict[str, Any]) -> None:
    data = (json.dumps(msg) + "\n").encode()
    with out_lock:
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()


class Relay:
    """The loopback connection to the driver; answers come back by relay id."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port))
        self.lock = threading.Lock()
        self.waiting: dict[int, tuple[threading.Event, list[dict[str, Any]]]] = {}
        self.n = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        buf = self.sock.makefile("rb")
        for line in buf:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            slot = self.waiting.get(msg.get("id"))
            if slot is not None:
                slot[1].append(msg.get("answer") or {})
                slot[0].set()
        for ev, box in list(self.waiting.values()):  # the driver went away
            box.append({"behavior": "deny", "message": "the capconf driver ended"})
            ev.set()

    def ask(self, arguments: dict[str, Any]) -> dict[str, Any]:
        with self.lock:
            self.n += 1
            rid = self.n
            ev: threading.Event = threading.Event()
            box: list[dict[str, Any]] = []
            self.waiting[rid] = (ev, box)
            self.sock.sendall((json.dumps({"id": rid, "arguments": arguments}) + "\n").encode())
        ev.wait()
        return box[0]


def handle(relay: Relay, msg: dict[str, Any]) -> None:
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        version = (msg.get("params") or {}).get("protocolVersion") or "2024-11-05"
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": version, "capabilities": {"tools": {}},
            "serverInfo": {"name": "capconf-approval", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
            "name": TOOL, "description": "capconf's approval board (permission prompts)",
            "inputSchema": {"type": "object", "properties": {
                "tool_name": {"type": "string"}, "input": {"type": "object"},
                "tool_use_id": {"type": "string"}}}}]}})
    elif method == "tools/call":
        params = msg.get("params") or {}

        def run() -> None:
            answer = relay.ask(params.get("arguments") or {})
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(answer)}]}})
        threading.Thread(target=run, daemon=True).start()
    elif mid is not None and method is not None:
        if method == "ping":
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
        else:
            send({"jsonrpc": "2.0", "id": mid,
                  "error": {"code": -32601, "message": f"no method {method}"}})


def main() -> int:
    relay = Relay(int(os.environ["CAPCONF_PROMPT_PORT"]))
    for line in sys.stdin.buffer:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if isinstance(msg, dict):
            handle(relay, msg)
    return 0


if __name__ == "__main__":
    sys.exit(main())
