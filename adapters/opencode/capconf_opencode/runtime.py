"""Starting, talking to and stopping the real `opencode serve`, in a private home.

Why a server: one `opencode` start costs seconds on a shared machine; `opencode serve`
keeps one process per driver and loads each project directory as its own instance, so
a new agent file is read by OpenCode's own loader when its directory is first used.
The process runs in its own process group, dies with the driver (PR_SET_PDEATHSIG) and
is killed by group at shutdown: it is never left running.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import socket
import subprocess
import sysconfig
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

ADAPTER_DIR = Path(__file__).resolve().parent.parent
PROVIDER = "capconf"
MODEL = "scripted"


class BinaryMissing(RuntimeError):
    """The real OpenCode binary is not installed: the adapter refuses to start."""


def binary_installed() -> bool:
    """Whether `find_binary` would find one (the live tests skip without it)."""
    try:
        find_binary()
    except BinaryMissing:
        return False
    return True


# executable formats: ELF, Mach-O (both byte orders, fat), PE
_MAGIC = (b"\x7fELF", b"\xcf\xfa\xed\xfe", b"\xfe\xed\xfa\xcf", b"\xca\xfe\xba\xbe", b"MZ")


def is_native(path: Path) -> bool:
    """Whether `path` is a compiled executable, not the placeholder `opencode.exe` that
    `opencode-ai` ships until its postinstall replaces it (an install with
    `--ignore-scripts` keeps the placeholder; the platform package's binary is then the
    one to run)."""
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head.startswith(_MAGIC)


def find_binary() -> Path:
    """The binary `npm ci --prefix adapters/opencode` installs, or $CAPCONF_OPENCODE_BIN."""
    env = os.environ.get("CAPCONF_OPENCODE_BIN")
    candidates = [Path(env)] if env else [
        ADAPTER_DIR / "node_modules" / "opencode-ai" / "bin" / "opencode.exe",
        ADAPTER_DIR / "node_modules" / "opencode-linux-x64" / "bin" / "opencode",
        ADAPTER_DIR / "node_modules" / "opencode-linux-arm64" / "bin" / "opencode",
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK) and is_native(c):
            return c
    raise BinaryMissing(
        "the real OpenCode binary is not installed (looked for "
        + ", ".join(str(c) for c in candidates)
        + "); run `npm ci --prefix adapters/opencode` first")


def tool_path(path: str) -> str:
    """PATH for OpenCode with the folder of the pinned `rg` first (the `ripgrep` wheel
    of requirements.txt installs it beside this Python). OpenCode's read-only tools and
    its `skill` tool run ripgrep, and without one on PATH OpenCode downloads its own,
    which fails offline ("ripgrep execution failed"): an environment fault, not a
    decision of OpenCode's."""
    scripts = sysconfig.get_path("scripts")
    return os.pathsep.join([scripts, *[p for p in path.split(os.pathsep) if p and p != scripts]])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    os.setsid()
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class OpenCode:
    """One `opencode serve` with a private HOME/XDG tree and the scripted provider."""

    def __init__(self, binary: Path, model_port: int, log: Any) -> None:
        self.binary = binary
        self.home = Path(tempfile.mkdtemp(prefix="capconf-opencode-"))
        self.port = _free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.wedged = False  # an instance stopped answering: restart before the next probe
        self.stuck = False  # a call of OpenCode's hangs for good: restart at the next world
        cfg = self.home / "config" / "opencode"
        cfg.mkdir(parents=True)
        (cfg / "opencode.json").write_text(json.dumps({
            "$schema": "https://opencode.ai/config.json",
            "provider": {PROVIDER: {
                "npm": "@ai-sdk/openai-compatible", "name": "capconf scripted model",
                "options": {"baseURL": f"http://127.0.0.1:{model_port}/v1", "apiKey": "none"},
                "models": {MODEL: {"name": MODEL, "tool_call": True}}}},
            "model": f"{PROVIDER}/{MODEL}", "small_model": f"{PROVIDER}/{MODEL}",
            "enabled_providers": [PROVIDER], "autoupdate": False, "share": "disabled",
            "lsp": False, "formatter": False, "snapshot": False,
        }))
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCODE")}
        env["PATH"] = tool_path(env.get("PATH", ""))
        env.update({
            "HOME": str(self.home), "XDG_CONFIG_HOME": str(self.home / "config"),
            "XDG_DATA_HOME": str(self.home / "data"), "XDG_CACHE_HOME": str(self.home / "cache"),
            "XDG_STATE_HOME": str(self.home / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1", "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
            "OPENCODE_DISABLE_PRUNE": "1",
            # OpenCode installs its plugin SDK into every config folder in the background;
            # a dead loopback registry keeps that offline and quick to fail.
            "npm_config_registry": "http://127.0.0.1:9/", "npm_config_offline": "true",
        })
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--port", str(self.port), "--hostname", "127.0.0.1",
             "--pure"], cwd=str(self.home), env=env, stdin=subprocess.DEVNULL,
            stdout=log, stderr=log, preexec_fn=_die_with_parent)
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"opencode serve exited with {self.proc.returncode}")
            try:
                if self.get("/global/health", timeout=2).get("healthy"):
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("opencode serve did not become healthy in 60 s")
            time.sleep(0.2)

    def _url(self, path: str, directory: str | None, query: dict[str, str] | None) -> str:
        q = dict(query or {})
        if directory is not None:
            q["directory"] = directory
        return self.base + path + ("?" + urllib.parse.urlencode(q) if q else "")

    def request(self, method: str, path: str, body: Any = None, directory: str | None = None,
                query: dict[str, str] | None = None, timeout: float = 30) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self._url(path, directory, query), data=data,
                                     method=method, headers={"content-type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return {"__http_error__": e.code, **json.loads(raw or b"{}")}
            except ValueError:
                return {"__http_error__": e.code, "message": raw.decode(errors="replace")}
        return json.loads(raw) if raw.strip() else None

    def get(self, path: str, directory: str | None = None, timeout: float = 30,
            query: dict[str, str] | None = None) -> Any:
        return self.request("GET", path, directory=directory, timeout=timeout, query=query)

    def post(self, path: str, body: Any = None, directory: str | None = None,
             timeout: float = 30) -> Any:
        return self.request("POST", path, body if body is not None else {},
                            directory=directory, timeout=timeout)

    def fifo_waits(self) -> int | None:
        """How many of OpenCode's threads wait in the kernel for the other end of a FIFO
        they open (Linux `wchan` `wait_for_partner`), or None where /proc does not say.
        Why: a call that opens a FIFO nobody else opens never ends; seeing the thread
        blocked there tells a hung call from a slow one without waiting out a deadline."""
        count = 0
        try:
            tasks = os.listdir(f"/proc/{self.proc.pid}/task")
        except OSError:
            return None
        for task in tasks:
            try:
                with open(f"/proc/{self.proc.pid}/task/{task}/wchan") as f:
                    count += f.read().strip() == "wait_for_partner"
            except OSError:
                continue
        return count

    def version(self) -> str:
        return str(self.get("/global/health").get("version", ""))

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=5)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        shutil.rmtree(self.home, ignore_errors=True)
