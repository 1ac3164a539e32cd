"""A scripted Messages API on 127.0.0.1 that hands every model request to the driver.

Why a broker and not a fixed script: Claude Code decides which requests come (the main
agent's, a subagent's, a nested one's) and when; the driver answers each one as it reads
it, so an agent can be held at its turn between two `tool.call` ops without a new
process. Only `POST /v1/messages` is served, as an SSE stream. A request nobody answers
within `hold_seconds` is answered with an end of turn, and the server stops itself after
`lifetime_seconds`, so a lost driver never leaves it listening.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class ModelRequest:
    """One request Claude Code sent, and the slot its answer goes into."""

    body: dict[str, Any]
    headers: dict[str, str]
    reply: queue.Queue[list[dict[str, Any]]] = field(default_factory=lambda: queue.Queue(1))

    @property
    def system_text(self) -> str:
        system = self.body.get("system")
        if isinstance(system, str):
            return system
        if isinstance(system, list):
            return "\n".join(str(b.get("text", "")) for b in system if isinstance(b, dict))
        return ""

    @property
    def is_subagent(self) -> bool:
        return "cc_is_subagent=true" in self.system_text

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [t for t in self.body.get("tools") or [] if isinstance(t, dict)]

    def tool_names(self) -> list[str]:
        return [str(t.get("name")) for t in self.tools]

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [m for m in self.body.get("messages") or [] if isinstance(m, dict)]

    def last_tool_results(self) -> list[dict[str, Any]]:
        """The `tool_result` blocks of the last user message (the tools' outcomes)."""
        if not self.messages:
            return []
        content = self.messages[-1].get("content")
        if not isinstance(content, list):
            return []
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]

    def answer(self, blocks: list[dict[str, Any]]) -> None:
        with contextlib.suppress(queue.Full):
            self.reply.put_nowait(blocks)


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def tool_use_block(tool_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": tool_input}


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def stream_bytes(model: str, blocks: list[dict[str, Any]]) -> bytes:
    """The Messages API SSE stream that carries `blocks` as one assistant message."""
    out = [_sse("message_start", {"type": "message_start", "message": {
        "id": "msg_capconf", "type": "message", "role": "assistant", "model": model,
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            out.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                            "content_block": {"type": "text", "text": ""}}))
            out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                            "delta": {"type": "text_delta", "text": b["text"]}}))
        else:
            out.append(_sse("content_block_start", {"type": "content_block_start", "index": i,
                            "content_block": {"type": "tool_use", "id": b["id"],
                                              "name": b["name"], "input": {}}}))
            out.append(_sse("content_block_delta", {"type": "content_block_delta", "index": i,
                            "delta": {"type": "input_json_delta",
                                      "partial_json": json.dumps(b["input"])}}))
        out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": i}))
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out.append(_sse("message_delta", {"type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 1}}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


class ScriptedModel:
    """The server; `requests` is the queue of model requests in arrival order."""

    def __init__(self, hold_seconds: float = 90.0, lifetime_seconds: float = 900.0) -> None:
        self.requests: queue.Queue[ModelRequest] = queue.Queue()
        self.hold_seconds = hold_seconds
        broker = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a: Any) -> None:
                pass

            def do_HEAD(self) -> None:
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_GET(self) -> None:
                self.do_HEAD()

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                path = self.path.split("?")[0]
                if path.endswith("/count_tokens"):
                    self._json({"input_tokens": 1})
                    return
                if not path.endswith("/v1/messages"):
                    self._json({}, 404)
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json({"type": "error"}, 400)
                    return
                req = ModelRequest(body, {k.lower(): v for k, v in self.headers.items()})
                broker.requests.put(req)
                try:
                    blocks = req.reply.get(timeout=broker.hold_seconds)
                except queue.Empty:
                    blocks = [text_block("done")]
                data = stream_bytes(str(body.get("model", "m")), blocks)
                if not body.get("stream"):
                    self._json({"id": "msg_capconf", "type": "message", "role": "assistant",
                                "content": blocks, "model": body.get("model", "m"),
                                "stop_reason": "end_turn", "stop_sequence": None,
                                "usage": {"input_tokens": 1, "output_tokens": 1}})
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(OSError):
                    self.wfile.write(data)

            def _json(self, obj: Any, status: int = 200) -> None:
                data = json.dumps(obj).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that hangs up (a killed session) is not news

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever,
                                       kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        self.timer = threading.Timer(lifetime_seconds, self.close)
        self.timer.daemon = True
        self.timer.start()

    def next_request(self, timeout: float) -> ModelRequest | None:
        try:
            return self.requests.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self.timer.cancel()
        self.server.shutdown()
        self.server.server_close()
