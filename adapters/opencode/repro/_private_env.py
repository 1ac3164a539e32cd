"""What every reproduction shares, standalone: the pinned binary, a private HOME and XDG
tree (no auto-update, no model-list fetch, a dead loopback npm registry, so the binary
touches nothing of the user's and nothing outside this machine), and a scripted
OpenAI-compatible model on 127.0.0.1.

Why standalone: a finding is claimed only as far as a reproduction shows it, so these
scripts need the pinned `opencode-ai` package and Python only, never capconf or the
adapter's code (a maintainer can run them as they are). The model below is a small
scripted chat-completions server: each prompt carries `capconf-turn:<token>`; the turn
registered for that token says which one tool call the model makes, and the server
records the tools and system prompt OpenCode sent and the tool result it got back.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sysconfig
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ADAPTER = Path(__file__).resolve().parent.parent
PROVIDER, MODEL = "capconf", "scripted"
MARKER = re.compile(r"capconf-turn:([A-Za-z0-9-]+)")


def find_binary() -> Path:
    """The native binary `npm ci --prefix adapters/opencode` installs (the platform
    package's; `opencode-ai/bin/opencode.exe` is a placeholder until its postinstall
    runs), or $CAPCONF_OPENCODE_BIN."""
    env = os.environ.get("CAPCONF_OPENCODE_BIN")
    modules = ADAPTER / "node_modules"
    for c in ([Path(env)] if env else [modules / "opencode-ai" / "bin" / "opencode.exe",
                                       modules / "opencode-linux-x64" / "bin" / "opencode",
                                       modules / "opencode-linux-arm64" / "bin" / "opencode"]):
        if c.is_file() and os.access(c, os.X_OK):
            with c.open("rb") as f:
                if f.read(4) in (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe"):
                    return c
    raise SystemExit("no OpenCode binary: run `npm ci --prefix adapters/opencode`")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def private_env(home: Path) -> dict[str, str]:
    # the `rg` of the pinned ripgrep wheel first: OpenCode's grep/glob/skill tools run it
    path = os.pathsep.join([sysconfig.get_path("scripts"), os.environ.get("PATH", "")])
    return {"PATH": path, "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "npm_config_registry": "http://127.0.0.1:9/"}


@dataclass
class Turn:
    """One scripted turn: the call the model makes, and what OpenCode showed it."""

    tool_call: tuple[str, dict[str, Any]] | None = None
    offered: list[dict[str, Any]] | None = None
    system: str | None = None
    tool_result: str | None = None
    requests: int = 0
    done: threading.Event = field(default_factory=threading.Event)


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


class ScriptedModel:
    """`register` a turn, put `capconf-turn:<token>` in the prompt, read the turn."""

    def __init__(self) -> None:
        self.turns: dict[str, Turn] = {}
        self.lock = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                data = json.dumps({"object": "list", "data": [{"id": MODEL}]}).encode()
                self.send_response(200)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                delta, finish = model.answer(body)
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for d, f in ((delta, None), ({}, finish)):
                    chunk = {"id": "c", "object": "chat.completion.chunk", "model": MODEL,
                             "choices": [{"index": 0, "delta": d, "finish_reason": f}]}
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def register(self, token: str, turn: Turn) -> Turn:
        self.turns[token] = turn
        return turn

    def answer(self, body: dict[str, Any]) -> tuple[dict[str, Any], str]:
        messages = body.get("messages") or []
        system = "\n".join(_text(m.get("content")) for m in messages if m["role"] == "system")
        users = [m for m in messages if m.get("role") == "user"]
        found = MARKER.search(_text(users[-1].get("content"))) if users else None
        turn = self.turns.get(found.group(1)) if found else None
        text = {"role": "assistant", "content": "ok"}
        if turn is None or "title generator" in system:
            return text, "stop"
        with self.lock:
            turn.requests += 1
            if messages[-1].get("role") == "tool":
                turn.tool_result = _text(messages[-1].get("content"))
                turn.done.set()
                return text, "stop"
            if turn.offered is None:
                turn.offered, turn.system = list(body.get("tools") or []), system
            if turn.tool_call is None or turn.requests > 1:
                turn.done.set()
                return text, "stop"
            name, args = turn.tool_call
            return {"role": "assistant", "tool_calls": [{
                "index": 0, "id": f"call_{turn.requests}", "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)}}]}, "tool_calls"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def write_scripted_config(home: Path, model: ScriptedModel) -> None:
    """The user config that points OpenCode at the scripted model only."""
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.json").write_text(json.dumps({
        "provider": {PROVIDER: {"npm": "@ai-sdk/openai-compatible", "name": "scripted",
                                "options": {"baseURL": f"http://127.0.0.1:{model.port}/v1",
                                            "apiKey": "none"},
                                "models": {MODEL: {"name": MODEL, "tool_call": True}}}},
        "model": f"{PROVIDER}/{MODEL}", "small_model": f"{PROVIDER}/{MODEL}",
        "enabled_providers": [PROVIDER], "autoupdate": False, "share": "disabled"}))


def run_agent(home: Path, proj: Path, model: ScriptedModel, agent: str,
              prompt: str) -> subprocess.CompletedProcess[str]:
    """`opencode run --pure --agent AGENT PROMPT` in `proj`; the model is closed after."""
    try:
        return subprocess.run([str(find_binary()), "run", "--pure", "--agent", agent, prompt],
                              cwd=proj, env=private_env(home), capture_output=True,
                              text=True, timeout=240, check=False)
    finally:
        model.close()
