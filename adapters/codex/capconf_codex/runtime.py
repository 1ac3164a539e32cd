"""Finding and running the real `codex` binary, in a private home, offline.

Why one `codex exec` per observation: Codex reads its agent roles, MCP servers and skills
when a session starts, so every observation runs the pinned binary on a fresh
`CODEX_HOME` written for exactly that world and definition (about 0.3 CPU-s). The model
provider is the adapter's scripted server on 127.0.0.1 (`request_max_retries = 0`), the
process runs in its own process group with a bounded wait, and is killed by group when
it overstays: it is never left running.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ADAPTER_DIR = Path(__file__).resolve().parent.parent
PLATFORM_BIN = ("node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/"
                "codex")
PROVIDER = "capconf"
# a model Codex has no metadata for: its fallback offers every tool upfront (gpt-5.5, the
# one bundled model, defers tools behind `tool_search`, so a grant would be hidden)
MODEL = "capconf-scripted"
KEY_VAR = "CAPCONF_CODEX_KEY"
RUN_TIMEOUT = 45.0


class BinaryMissing(RuntimeError):
    """The real Codex binary is not installed: the adapter refuses to start."""


def find_binary() -> Path:
    """The binary `npm ci --prefix adapters/codex` installs, or $CAPCONF_CODEX_BIN."""
    env = os.environ.get("CAPCONF_CODEX_BIN")
    c = Path(env) if env else ADAPTER_DIR / PLATFORM_BIN
    if c.is_file() and os.access(c, os.X_OK):
        return c
    raise BinaryMissing(f"the real Codex binary is not installed (looked for {c}); run "
                        "`npm ci --ignore-scripts --prefix adapters/codex` first")


def binary_installed() -> bool:
    try:
        find_binary()
    except BinaryMissing:
        return False
    return True


def toml_str(s: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's for the characters JSON escapes;
    a lone surrogate, which TOML cannot hold, becomes U+FFFD)."""
    return json.dumps(s.encode("utf-8", "replace").decode("utf-8"), ensure_ascii=False)


def base_config(port: int, agents: dict[str, int] | None = None,
                extra: str = "") -> str:
    """`config.toml`: the loopback provider, and whatever the world adds."""
    lines = [f'model = "{MODEL}"', f'model_provider = "{PROVIDER}"',
             f"[model_providers.{PROVIDER}]", f'name = "{PROVIDER}"',
             f'base_url = "http://127.0.0.1:{port}/v1"', 'wire_api = "responses"',
             f'env_key = "{KEY_VAR}"', "request_max_retries = 0", "stream_max_retries = 0"]
    if agents:
        lines.append("[agents]")
        lines += [f"{k} = {v}" for k, v in agents.items()]
    return "\n".join(lines) + "\n" + extra


@dataclass
class Run:
    """What `codex exec --json` printed: its events, and whether it ended by itself."""

    events: list[dict[str, Any]]
    returncode: int | None
    timed_out: bool
    stderr: str

    def messages(self) -> list[str]:
        """Codex's own warnings/errors (`error` items), in order."""
        return [str(e["item"].get("message", "")) for e in self.events
                if e.get("type") == "item.completed"
                and isinstance(e.get("item"), dict) and e["item"].get("type") == "error"]


def run_exec(binary: Path, home: Path, workspace: Path, prompt: str,
             flags: list[str] | None = None, timeout: float = RUN_TIMEOUT) -> Run:
    """One `codex exec` in `home` (CODEX_HOME and HOME), in `workspace`."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home),
           "CODEX_HOME": str(home), KEY_VAR: "capconf-offline", "LANG": "C.UTF-8",
           "TMPDIR": str(home / "tmp")}
    (home / "tmp").mkdir(exist_ok=True)
    cmd = [str(binary), "exec", "--json", "--skip-git-repo-check",
           "-c", "features.plugins=false", *(flags or []), "-C", str(workspace), prompt]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    timed_out = False
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    events = []
    for line in out.decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError):
            ev = json.loads(line)
            if isinstance(ev, dict):
                events.append(ev)
    return Run(events, proc.returncode, timed_out, err.decode("utf-8", "replace")[-4000:])


class Homes:
    """One private CODEX_HOME path, emptied for each run (runs are one at a time) and
    removed with the driver. One path, not one per run: Codex's prompt names its home
    (the skill roots), so a numbered home per run made two loads of one role differ by
    the number alone (h9 against h10), which no case may see as Codex's doing."""

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="capconf-codex-"))

    def new(self) -> Path:
        home = self.root / "home"
        shutil.rmtree(home, ignore_errors=True)
        (home / "agents").mkdir(parents=True)
        return home

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
