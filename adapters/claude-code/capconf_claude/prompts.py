"""The driver's end of the permission-prompt tool (`prompt_server.py`).

Why: a capconf card is one of Claude Code's own permission asks, held unanswered. Claude
Code calls the prompt tool (`--permission-prompt-tool`) when its permission code decides
that a call needs a person; the server relays that call here and waits. This side keeps
each ask by Claude Code's `tool_use_id` until the driver answers it (`card.decide`,
`task.stop`); it never answers one by itself except when the session ends (deny).
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SERVER = "capconf-approval"
TOOL = "ask"
QUALIFIED = f"mcp__{SERVER}__{TOOL}"
SCRIPT = Path(__file__).resolve().parent / "prompt_server.py"


@dataclass
class Ask:
    """One call Claude Code made to the prompt tool: `{tool_name, input, tool_use_id}`."""

    rid: int
    arguments: dict[str, Any]
    conn: socket.socket
    answered: dict[str, Any] | None = None

    @property
    def tool_use_id(self) -> str:
        return str(self.arguments.get("tool_use_id", ""))

    @property
    def tool_name(self) -> str:
        return str(self.arguments.get("tool_name", ""))

    @property
    def input(self) -> dict[str, Any]:
        value = self.arguments.get("input")
        return value if isinstance(value, dict) else {}


@dataclass
class PromptRelay:
    """A loopback listener for one Claude Code session's prompt server."""

    asks: list[Ask] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def mcp_config(self) -> dict[str, Any]:
        """The MCP config entry that makes Claude Code start the prompt server."""
        return {"mcpServers": {SERVER: {
            "command": sys.executable, "args": [str(SCRIPT)],
            "env": {"CAPCONF_PROMPT_PORT": str(self.port)}}}}

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            for line in conn.makefile("rb"):
                try:
                    msg = json.loads(line)
                except ValueError:
                    continue
                args = msg.get("arguments") if isinstance(msg, dict) else None
                if isinstance(args, dict):
                    with self.lock:
                        self.asks.append(Ask(int(msg.get("id", 0)), args, conn))

    def take(self, tool_use_id: str) -> Ask | None:
        """The unanswered ask for this tool call, if Claude Code made one."""
        with self.lock:
            for a in self.asks:
                if a.answered is None and a.tool_use_id == tool_use_id:
                    return a
        return None

    def wait_for(self, tool_use_id: str, seconds: float) -> Ask | None:
        deadline = time.monotonic() + seconds
        while True:
            a = self.take(tool_use_id)
            if a is not None or time.monotonic() >= deadline:
                return a
            time.sleep(0.05)

    def answer(self, ask: Ask, answer: dict[str, Any]) -> None:
        ask.answered = answer
        with contextlib.suppress(OSError):
            ask.conn.sendall((json.dumps({"id": ask.rid, "answer": answer}) + "\n").encode())

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        with self.lock:
            conns = list(self.conns)
        for c in conns:
            with contextlib.suppress(OSError):
                c.close()


def allow(ask: Ask) -> dict[str, Any]:
    """Claude Code's permission-prompt answer that lets the call run as it asked."""
    return {"behavior": "allow", "updatedInput": ask.input}


def deny(message: str) -> dict[str, Any]:
    return {"behavior": "deny", "message": message}
