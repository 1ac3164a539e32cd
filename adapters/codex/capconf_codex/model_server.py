"""A scripted Responses API model on 127.0.0.1, run by the adapter.

Why: Codex must make every decision itself, so the only thing scripted is the model.
Every thread's first user message (the root prompt, or the `message` a parent passed to
`spawn_agent`) carries a marker `capconf-turn:<token>`; the script registered for that
token says what the model answers on each of that thread's requests (a tool call or
text). The server records each request Codex sent (its `tools`, its `developer` input,
the tool outputs it returned, the thread metadata of its headers), which is how the
adapter observes Codex's grants, prompts and outcomes.

Bounded: it listens on an ephemeral loopback port, answers only `POST .../responses`,
and `close()` stops it (the driver closes it at exit; it is a daemon thread).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MARKER = re.compile(r"capconf-turn:([A-Za-z0-9-]+)")
MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class Call:
    """A function call the model emits (`namespace` as Codex offered the tool)."""

    name: str
    args: dict[str, Any]
    namespace: str | None = None


@dataclass(frozen=True)
class Say:
    text: str


# an action may depend on what Codex answered the previous call (e.g. wait for the agent
# id `spawn_agent` returned): a function of the last tool output
Action = Call | Say | Callable[[str | None], "Call | Say"]


@dataclass
class Seen:
    """One request Codex sent for a thread."""

    tools: list[dict[str, Any]]
    developer: list[str]
    last_output: str | None
    thread_id: str
    parent_thread_id: str | None
    subagent: str | None


@dataclass
class Script:
    """What the model does on one thread, and what Codex showed it."""

    actions: list[Action]
    seen: list[Seen] = field(default_factory=list)
    outputs: list[str | None] = field(default_factory=list)
    done: threading.Event = field(default_factory=threading.Event)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(p.get("text", "")) for p in content if isinstance(p, dict)]
    return []


def _output_text(item: dict[str, Any]) -> str:
    out = item.get("output")
    if isinstance(out, str):
        return out
    if isinstance(out, list):
        return "".join(_texts(out))
    if isinstance(out, dict):
        return str(out.get("content", json.dumps(out)))
    return json.dumps(out)


class ScriptedModel:
    """The model server: `register` a script under a token before running Codex."""

    def __init__(self) -> None:
        self.scripts: dict[str, Script] = {}
        self.threads: dict[str, str] = {}
        self._lock = threading.Lock()
        self._n = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # stdout is the protocol
                return

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = min(int(self.headers.get("content-length") or 0), MAX_BODY)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                items = model.answer(body, {k.lower(): v for k, v in self.headers.items()})
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for ev in model.events(items):
                    self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n"
                                     .encode())
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self._thread.start()

    def register(self, token: str, actions: list[Action]) -> Script:
        with self._lock:
            s = self.scripts[token] = Script(list(actions))
        return s

    def _token(self, body: dict[str, Any], thread: str) -> str | None:
        if thread in self.threads:
            return self.threads[thread]
        for item in body.get("input") or []:
            if item.get("type") == "message" and item.get("role") == "user":
                for text in _texts(item.get("content")):
                    m = MARKER.search(text)
                    if m and m.group(1) in self.scripts:
                        self.threads[thread] = m.group(1)
                        return m.group(1)
        return None

    def answer(self, body: dict[str, Any], headers: dict[str, str]) -> list[dict[str, Any]]:
        try:
            meta = json.loads(headers.get("x-codex-turn-metadata") or "{}")
        except ValueError:
            meta = {}
        thread = str(meta.get("thread_id") or headers.get("session_id") or "")
        inp = body.get("input") or []
        last = inp[-1] if inp else {}
        last_output = _output_text(last) if last.get("type") == "function_call_output" \
            else None
        with self._lock:
            token = self._token(body, thread)
            script = self.scripts.get(token) if token else None
            if script is None:
                return [_message("capconf")]
            script.seen.append(Seen(
                tools=list(body.get("tools") or []),
                developer=[t for i in inp if i.get("type") == "message"
                           and i.get("role") == "developer" for t in _texts(i.get("content"))],
                last_output=last_output, thread_id=thread,
                parent_thread_id=meta.get("parent_thread_id"),
                subagent=headers.get("x-openai-subagent")))
            script.outputs.append(last_output)
            if not script.actions:
                script.done.set()
                return [_message("done")]
            action = script.actions.pop(0)
            self._n += 1
            n = self._n
        if callable(action):
            action = action(last_output)
        if isinstance(action, Say):
            if not script.actions:
                script.done.set()
            return [_message(action.text)]
        item: dict[str, Any] = {"type": "function_call", "call_id": f"call_{n}",
                                "name": action.name, "arguments": json.dumps(action.args)}
        if action.namespace:
            item["namespace"] = action.namespace
        return [item]

    def events(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        with self._lock:
            self._n += 1
            rid = f"resp_{self._n}"
        evs: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": rid}}]
        for i, it in enumerate(items):
            it = {**it, "id": f"item_{rid}_{i}"}
            evs.append({"type": "response.output_item.added", "output_index": i, "item": it})
            evs.append({"type": "response.output_item.done", "output_index": i, "item": it})
        evs.append({"type": "response.completed", "response": {
            "id": rid, "output": [],
            "usage": {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                      "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 0}}}})
        return evs

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}
