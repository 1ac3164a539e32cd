"""The environment both Python reproductions start OpenCode with: a private HOME and XDG
tree, no auto-update, no model-list fetch, and a dead loopback npm registry, so the
binary touches nothing of the user's and nothing outside this machine."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from capconf_opencode.model_server import ScriptedModel
from capconf_opencode.runtime import MODEL, PROVIDER, find_binary, tool_path


def private_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "npm_config_registry": "http://127.0.0.1:9/"}


def write_scripted_config(home: Path, model: ScriptedModel) -> None:
    """The user config that points OpenCode at the adapter's scripted model only."""
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
    """`opencode run --pure --agent AGENT PROMPT` in `proj`, private HOME, rg on PATH;
    the model server is closed afterwards."""
    env = private_env(home)
    env["PATH"] = tool_path(env["PATH"])
    try:
        return subprocess.run([str(find_binary()), "run", "--pure", "--agent", agent, prompt],
                              cwd=proj, env=env, capture_output=True, text=True, timeout=240,
                              check=False)
    finally:
        model.close()
