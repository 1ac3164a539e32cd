"""Shared by the standalone reproductions: a scripted Responses API model on 127.0.0.1
and a `codex exec` in a private CODEX_HOME. Needs only Python and the pinned
`@openai/codex` (`npm ci --ignore-scripts --prefix adapters/codex`); no capconf code.

Each thread's first user message carries `turn:<token>`; the script for that token is a
list of answers (a function call or a text), one per request of that thread.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
BIN = Path(os.environ.get("CAPCONF_CODEX_BIN") or HERE.parent / "node_modules/@openai/"
           "codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
NS = "multi_agent_v1"


def call(name: str, args: dict[str, Any], ns: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call", "name": name, "arguments": json.dumps(args)}
    if ns:
        item["namespace"] = ns
    return item


def say(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}


class Model:
    """scripts: token -> list of answers (dicts, or functions of the last tool output)."""

    def __init__(self, scripts: dict[str, list[Any]]) -> None:
        self.scripts = scripts
        self.threads: dict[str, str] = {}
        self.seen: dict[str, list[dict[str, Any]]] = {t: [] for t in scripts}
        self.lock = threading.Lock()
        self.n = 0
        model = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                item = model.answer(body, json.loads(
                    self.headers.get("x-codex-turn-metadata") or "{}"))
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                with model.lock:
                    model.n += 1
                    rid = f"r{model.n}"
                item = {**item, "id": f"i{rid}", "call_id": f"c{rid}"}
                for ev in ({"type": "response.created", "response": {"id": rid}},
                           {"type": "response.output_item.done", "output_index": 0,
                            "item": item},
                           {"type": "response.completed", "response": {
                               "id": rid, "output": [], "usage": {
                                   "input_tokens": 1, "output_tokens": 1,
                                   "total_tokens": 2}}}):
                    self.wfile.write(f"event: {ev['type']}\ndata: {json.dumps(ev)}\n\n"
                                     .encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def answer(self, body: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
        thread = str(meta.get("thread_id"))
        inp = body.get("input") or []
        with self.lock:
            if thread not in self.threads:
                for it in inp:
                    for part in it.get("content") or [] if it.get("role") == "user" else []:
                        m = re.search(r"turn:(\w+)", str(part.get("text", "")))
                        if m and m.group(1) in self.scripts:
                            self.threads[thread] = m.group(1)
            token = self.threads.get(thread)
            if token is None:
                return say("idle")
            last = inp[-1] if inp else {}
            out = last.get("output") if last.get("type") == "function_call_output" else None
            self.seen[token].append({"tools": body.get("tools"), "output": out,
                                     "input": inp})
            if not self.scripts[token]:
                return say("done")
            step = self.scripts[token].pop(0)
        return step(out) if callable(step) else step

    def close(self) -> None:
        self.httpd.shutdown()


def codex_exec(model: Model, roles: dict[str, str], workspace: Path, prompt: str,
               flags: list[str] | None = None, config: str = "",
               timeout: float = 60) -> subprocess.CompletedProcess[str]:
    home = Path(tempfile.mkdtemp(prefix="codex-repro-home-"))
    (home / "agents").mkdir()
    (home / "config.toml").write_text(
        'model = "repro"\nmodel_provider = "fake"\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "http://127.0.0.1:{model.port}/v1"\nwire_api = "responses"\n'
        'env_key = "REPRO_KEY"\nrequest_max_retries = 0\nstream_max_retries = 0\n' + config)
    for name, text in roles.items():
        (home / "agents" / f"{name}.toml").write_text(text)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "CODEX_HOME": str(home), "REPRO_KEY": "offline"}
    return subprocess.run([str(BIN), "exec", "--json", "--skip-git-repo-check", "-c",
                           "features.plugins=false", *(flags or []), "-C", str(workspace),
                           prompt], stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, env=env, timeout=timeout, check=False)


def agent_id(out: Any) -> str:
    try:
        return str(json.loads(out)["agent_id"])
    except (ValueError, KeyError, TypeError):
        return ""
