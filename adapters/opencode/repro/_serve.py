"""`opencode serve` for the HTTP reproductions: a private HOME (see _private_env), the
adapter's scripted model as the only provider, one project directory, and plain HTTP
calls (standalone: see _private_env). The server runs in its own process group and is
killed with it on exit."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from _private_env import (
    MODEL,
    PROVIDER,
    ScriptedModel,
    Turn,
    find_binary,
    free_port,
    private_env,
    write_scripted_config,
)


class Serve:
    def __init__(self, base: str, proj: Path, model: ScriptedModel) -> None:
        self.base, self.proj, self.model = base, proj, model

    def http(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(f"{self.base}{path}?directory={self.proj}", data=data,
                                     method=method,
                                     headers={"content-type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as resp:
            raw = resp.read()
        return json.loads(raw) if raw.strip() else None

    def prompt(self, session: str, agent: str, token: str,
               call: tuple[str, dict[str, Any]]) -> Turn:
        """The scripted model makes exactly `call` in `session`."""
        turn = self.model.register(token, Turn(tool_call=call))
        self.http("POST", f"/session/{session}/prompt_async", {
            "agent": agent, "model": {"providerID": PROVIDER, "modelID": MODEL},
            "parts": [{"type": "text", "text": f"Go. capconf-turn:{token}"}]})
        return turn

    def asks(self, session: str) -> list[dict[str, Any]]:
        return [a for a in self.http("GET", "/permission") if a.get("sessionID") == session]

    def wait_asks(self, session: str, limit: float = 30) -> list[dict[str, Any]]:
        """The session's pending asks once there is one, or [] after `limit` seconds."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            asks = self.asks(session)
            if asks:
                return asks
            time.sleep(0.2)
        return []

    def tool_states(self, session: str) -> list[dict[str, Any]]:
        return [p.get("state", {}) for m in self.http("GET", f"/session/{session}/message")
                for p in m.get("parts") or [] if p.get("type") == "tool"]

    def wait_idle(self, session: str, limit: float = 30) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            status = self.http("GET", "/session/status")
            if session not in status or status[session].get("type") == "idle":
                return
            time.sleep(0.2)


@contextlib.contextmanager
def serve(tmp: Path, agents: dict[str, str]) -> Iterator[Serve]:
    """Start `opencode serve` for a project in `tmp` holding the agent files `agents`."""
    binary = find_binary()
    model = ScriptedModel()
    port = free_port()
    home, proj = tmp / "home", tmp / "proj"
    (proj / ".opencode" / "agent").mkdir(parents=True)
    write_scripted_config(home, model)
    for name, text in agents.items():
        (proj / ".opencode" / "agent" / f"{name}.md").write_text(text)
    server = subprocess.Popen([str(binary), "serve", "--port", str(port), "--hostname",
                               "127.0.0.1", "--pure"], cwd=proj, env=private_env(home),
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    s = Serve(f"http://127.0.0.1:{port}", proj, model)
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if s.http("GET", "/global/health").get("healthy"):
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("opencode serve did not start in 90 s")
            time.sleep(0.3)
        yield s
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGTERM)  # the server's own process group
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
            server.wait(timeout=10)
        model.close()
