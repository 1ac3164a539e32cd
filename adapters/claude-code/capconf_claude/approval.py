"""capconf's approval policy in Claude Code's terms (`approval.setup`).

Why a table: the policy is the user's setting, and Claude Code has its own: a permission
mode for the session, extra writable directories, and whether anybody answers a
permission prompt under `-p`. The adapter names Claude Code's setting for each capconf
one and Claude Code's permission code decides every call.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _driverkit.protocol import ProtoError

from .prompts import QUALIFIED

# capconf tier -> Claude Code permission mode (the nearest Claude Code has; README:
# Vocabulary says where they differ)
TIER_MODE: dict[str, str] = {
    "confirm-before-change": "manual",
    "auto-within-workspace": "acceptEdits",
    "auto-edit": "acceptEdits",
    "full-access": "bypassPermissions",
}
ATTENDANCE = ("attended", "unattended")
ASK_POLICY = ("ask-parent", "never-ask")


@dataclass
class Policy:
    tier: str = "confirm-before-change"
    attendance: str = "attended"
    ask_policy: str = "ask-parent"
    writable_roots: list[str] = field(default_factory=list)

    def json(self) -> dict[str, Any]:
        return {"tier": self.tier, "attendance": self.attendance,
                "ask_policy": self.ask_policy, "writable_roots": list(self.writable_roots)}

    @property
    def asks_a_person(self) -> bool:
        """Somebody answers asks: attended and not pinned to never-ask."""
        return self.attendance == "attended" and self.ask_policy == "ask-parent"

    def cli_args(self, prompt_config: Path | None = None) -> list[str]:
        """Claude Code's flags for this policy. When somebody answers asks and the
        session has the adapter's permission-prompt tool (`prompt_config`, its MCP
        config), Claude Code's asks go to that tool (`--permission-prompt-tool`; the
        tool itself is kept out of every agent's tools by `--disallowedTools`).
        Otherwise nobody answers a prompt under `-p`, so an ask is Claude Code's own
        automatic denial (`--permission-prompts none`)."""
        args = ["--permission-mode", TIER_MODE[self.tier]]
        if prompt_config is not None and self.asks_a_person:
            args += ["--permission-prompt-tool", QUALIFIED, "--disallowedTools", QUALIFIED,
                     "--mcp-config", str(prompt_config)]
        else:
            args += ["--permission-prompts", "none"]
        for root in self.writable_roots:
            args += ["--add-dir", root]
        return args


def parse_policy(args: dict[str, Any]) -> Policy:
    def pick(key: str, choices: tuple[str, ...], default: str) -> str:
        v = args.get(key, default)
        if v not in choices:
            raise ProtoError("bad_request", f"`{key}` must be one of {', '.join(choices)}",
                             ["args", key])
        return str(v)
    if "tier" not in args:
        raise ProtoError("bad_request", "`tier` is required", ["args", "tier"])
    tier = pick("tier", tuple(TIER_MODE), "confirm-before-change")
    attendance = pick("attendance", ATTENDANCE, "attended")
    ask = pick("ask_policy", ASK_POLICY, "ask-parent")
    roots = args.get("writable_roots", [])
    if not isinstance(roots, list):
        raise ProtoError("bad_request", "`writable_roots` must be a list of absolute "
                         "directory paths", ["args", "writable_roots"])
    out = []
    for i, r in enumerate(roots):
        if not isinstance(r, str) or not os.path.isabs(r) or not os.path.isdir(r):
            raise ProtoError("bad_request", "a writable root must be an absolute path of "
                             "an existing directory", ["args", "writable_roots", i])
        out.append(os.path.realpath(r))
    return Policy(tier, attendance, ask, out)
