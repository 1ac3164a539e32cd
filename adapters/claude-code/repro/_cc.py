"""Shared by the reproductions: the pinned `claude` binary driven by a scripted Messages API
on 127.0.0.1. Standalone on purpose: Python's standard library and the npm package only
(no capconf, no adapter code), so a Claude Code maintainer can run a script as it is.

`run(files, script)` writes `files` into a fresh project folder, starts
`claude -p ... --output-format stream-json` there with a private HOME and the vendor's
traffic switched off, and answers every model request with `script(request)` (a list of
content blocks). It returns the requests Claude Code sent and its stream-json events.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent


def binary() -> str:
    if os.environ.get("CAPCONF_CLAUDE_BIN"):
        return os.environ["CAPCONF_CLAUDE_BIN"]
    p = HERE / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"
    if not p.is_file():
        sys.exit("install first: npm ci --prefix adapters/claude-code --ignore-scripts")
    return str(p)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(tid: str, name: str, inp: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp}


def _sse(blocks: list[dict[str, Any]]) -> bytes:
    def ev(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"
    out = [ev("message_start", {"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1}}})]
    for i, b in enumerate(blocks):
        start = dict(b, input={}) if b["type"] == "tool_use" else {"type": "text", "text": ""}
        delta = ({"type": "input_json_delta", "partial_json": json.dumps(b["input"])}
                 if b["type"] == "tool_use" else {"type": "text_delta", "text": b["text"]})
        out += [ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": start}),
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": delta}),
                ev("content_block_stop", {"type": "content_block_stop", "index": i})]
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    out += [ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 1}}),
            ev("message_stop", {"type": "message_stop"})]
    return "".join(out).encode()


class Request(dict):  # type: ignore[type-arg]
    """A model request Claude Code sent (its JSON body), plus the agent id header."""

    agent_id: str | None = None

    @property
    def is_subagent(self) -> bool:
        return "cc_is_subagent=true" in json.dumps(self.get("system"))

    def tool_names(self) -> list[str]:
        return [t.get("name") for t in self.get("tools") or []]

    def tool_results(self) -> list[dict[str, Any]]:
        c = (self.get("messages") or [{}])[-1].get("content")
        return [b for b in c or [] if isinstance(b, dict) and b.get("type") == "tool_result"]


def result_text(b: dict[str, Any]) -> str:
    c = b.get("content")
    return c if isinstance(c, str) else "".join(x.get("text", "") for x in c or [])


def run(files: dict[str, str], script: Callable[[Request], list[dict[str, Any]]],
        args: list[str] | None = None, timeout: float = 60.0,
        before: Callable[[str], None] | None = None
        ) -> tuple[list[Request], list[dict[str, Any]], Path]:
    """Raises TimeoutError (after killing claude) when the run outlives `timeout`."""
    seen: list[Request] = []
    lock = threading.Lock()

    class H(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a: Any) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            req = Request(json.loads(body or b"{}"))
            req.agent_id = self.headers.get("x-claude-code-agent-id")
            with lock:
                seen.append(req)
                blocks = script(req)
            data = _sse(blocks)
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    project = Path(tempfile.mkdtemp(prefix="cc-repro-"))
    for rel, content in files.items():
        p = project / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(content)
    if before is not None:
        before(str(project))
    home = Path(tempfile.mkdtemp(prefix="cc-home-"))
    (home / ".claude").mkdir()
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "CLAUDE_CONFIG_DIR": str(home / ".claude"),
           "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}",
           "ANTHROPIC_API_KEY": "offline", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
           "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
           "DISABLE_ERROR_REPORTING": "1", "ENABLE_TOOL_SEARCH": "false"}
    cmd = [binary(), "-p", "go", "--output-format", "stream-json", "--verbose",
           "--model", "claude-sonnet-4-5", "--no-session-persistence", *(args or [])]
    proc = subprocess.Popen(cmd, cwd=project, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        stdout, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired as e:
        os.killpg(proc.pid, 9)
        proc.communicate()
        raise TimeoutError(f"claude still running after {timeout} s") from e
    finally:
        server.shutdown()
    events = []
    for line in stdout.splitlines():
        with contextlib.suppress(ValueError):
            events.append(json.loads(line))
    return seen, events, project


def main_then(spawn: dict[str, Any], sub: Callable[[Request, int], list[dict[str, Any]]]
              ) -> Callable[[Request], list[dict[str, Any]]]:
    """A script: the main agent delegates once with `spawn`, then ends its turns; each
    subagent request is answered by `sub(request, n)` (n counts that agent's requests)."""
    counts: dict[str, int] = {}
    state = {"main": 0}

    def script(req: Request) -> list[dict[str, Any]]:
        if req.agent_id is None and not req.is_subagent:
            state["main"] += 1
            return [tool_use("toolu_spawn", "Agent", spawn)] if state["main"] == 1 \
                else [text("ok")]
        key = req.agent_id or "?"
        counts[key] = counts.get(key, 0) + 1
        return sub(req, counts[key])
    return script
