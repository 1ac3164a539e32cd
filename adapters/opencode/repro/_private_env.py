"""The environment both Python reproductions start OpenCode with: a private HOME and XDG
tree, no auto-update, no model-list fetch, and a dead loopback npm registry, so the
binary touches nothing of the user's and nothing outside this machine."""

from __future__ import annotations

import os
from pathlib import Path


def private_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "HOME": str(home),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "OPENCODE_DISABLE_AUTOUPDATE": "1", "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "npm_config_registry": "http://127.0.0.1:9/"}
