"""A scripted OpenAI-compatible chat model on 127.0.0.1, run by the adapter.

Why: OpenCode must make every decision itself, so the only thing scripted is the model.
Each prompt the adapter sends carries a marker `capconf-turn:<token>`; the turn
registered for that token says which tool call (if any) the model emits. The server
records what OpenCode offered the model (its tools, its system prompt) and what came back
from a tool, which is how the adapter observes OpenCode's resolution and execution.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = re.compile(r"capconf-turn:([A-Za-z0-9-]+)")


@dataclass
class Turn:
    """One scripted model turn: an optional tool call, and what OpenCode showed us."""

    tool_call: tuple[str, dict[str, Any]] | None = None
    offered: list[dict[str, Any]] | None = None
    system: str | None = None
    tool_result: str | None = None
    requests: int = 0
    asks: list[dict[str, Any]] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


class ScriptedModel:
    """The model server; `register` a turn before prompting, then wait on `turn.done`."""

    def __init__(self) -> None:
        self.turns: dict[str, Turn] = {}
        self._lock = threading.Lock()
        self._calls = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet: stdout is the protocol
                return

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": "scripted", "object": "model"}]})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                reply = model.answer(body)
                if body.get("stream"):
                    self._stream(reply)
                else:
                    self._send(model.completion(reply))

            def _send(self, obj: dict[str, Any]) -> None:
                data = json.dumps(obj).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for chunk in model.chunks(reply):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def register(self, token: str, turn: Turn) -> Turn:
        with self._lock:
            self.turns[token] = turn
        return turn

    def answer(self, body: dict[str, Any]) -> dict[str, Any]:
        """What the model says next: a tool call, or plain text."""
        messages = body.get("messages") or []
        system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
        token = None
        for m in reversed(messages):
            if m.get("role") == "user":
                found = MARKER.search(_text(m.get("content")))
                token = found.group(1) if found else None
                break
        turn = self.turns.get(token) if token else None
        if turn is None or "title generator" in system:
            return {"text": "capconf"}
        with self._lock:
            turn.requests += 1
            last = messages[-1] if messages else {}
            if last.get("role") == "tool":
                turn.tool_result = _text(last.get("content"))
                turn.done.set()
                return {"text": "done"}
            if turn.offered is None:
                turn.offered = list(body.get("tools") or [])
                turn.system = system
            if turn.tool_call is not None and turn.requests == 1:
                self._calls += 1
                name, args = turn.tool_call
                return {"call": {"id": f"call_{self._calls}", "name": name,
                                 "arguments": json.dumps(args)}}
            turn.done.set()
            return {"text": "ok"}

    @staticmethod
    def completion(reply: dict[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
        finish = "stop"
        if "call" in reply:
            c = reply["call"]
            message["tool_calls"] = [{"id": c["id"], "type": "function",
                                      "function": {"name": c["name"],
                                                   "arguments": c["arguments"]}}]
            finish = "tool_calls"
        return {"id": "cmpl", "object": "chat.completion", "created": 0, "model": "scripted",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}

    @staticmethod
    def chunks(reply: dict[str, Any]) -> list[dict[str, Any]]:
        base = {"id": "cmpl", "object": "chat.completion.chunk", "created": 0,
                "model": "scripted"}
        if "call" in reply:
            c = reply["call"]
            delta: dict[str, Any] = {"role": "assistant", "tool_calls": [{
                "index": 0, "id": c["id"], "type": "function",
                "function": {"name": c["name"], "arguments": c["arguments"]}}]}
            finish = "tool_calls"
        else:
            delta = {"role": "assistant", "content": reply.get("text", "")}
            finish = "stop"
        return [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}]

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
