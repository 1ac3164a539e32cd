"""Starting the real `claude` binary: where it is, and the environment that keeps it on
loopback (real-runtimes.md "Claude Code 2.1.328": a private HOME and CLAUDE_CONFIG_DIR,
the vendor's traffic switches off, the model API at the adapter's own server).

Why a module: every run, the reproductions' too, must start Claude Code the same way, or a
difference between two runs could be the environment and not Claude Code.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
MODEL = "claude-sonnet-4-5"


def find_binary() -> Path:
    """The pinned native binary npm installed (`npm ci --ignore-scripts` leaves the
    platform package's binary in place; `bin/claude.exe` is only a stub until the
    postinstall copies it). `CAPCONF_CLAUDE_BIN` names another build of the same
    version."""
    env = os.environ.get("CAPCONF_CLAUDE_BIN")
    if env:
        if not Path(env).is_file():
            raise RuntimeError(f"Claude Code is not installed at CAPCONF_CLAUDE_BIN={env}")
        return Path(env)
    base = HERE / "node_modules" / "@anthropic-ai"
    for name in ("claude-code-linux-x64", "claude-code-linux-arm64",
                 "claude-code-linux-x64-musl", "claude-code-linux-arm64-musl",
                 "claude-code-darwin-arm64", "claude-code-darwin-x64"):
        p = base / name / "claude"
        if p.is_file():
            return p
    raise RuntimeError("Claude Code is not installed: run "
                       "`npm ci --prefix adapters/claude-code --ignore-scripts`")


def environment(port: int, home: Path) -> dict[str, str]:
    """Everything Claude Code reads from the environment, and nothing of the caller's
    (no credentials, no user settings)."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / ".claude"
    config.mkdir(exist_ok=True)
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(config),
        "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
        "ANTHROPIC_API_KEY": "capconf-offline",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "ENABLE_TOOL_SEARCH": "false",
        "LANG": "C.UTF-8",
        "TERM": "dumb",
        "NO_COLOR": "1",
        # the truth: an offline sandbox; Claude Code refuses `bypassPermissions` (capconf's
        # full-access tier) to root unless it is told so
        "IS_SANDBOX": "1",
    }


def start(binary: Path, project: Path, port: int, home: Path, prompt: str,
          extra: list[str] | None = None) -> subprocess.Popen[bytes]:
    """`claude -p PROMPT --output-format stream-json` in the project folder."""
    cmd = [str(binary), "-p", prompt, "--output-format", "stream-json", "--verbose",
           "--model", MODEL, "--no-session-persistence", *(extra or [])]
    return subprocess.Popen(cmd, cwd=project, env=environment(port, home),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
