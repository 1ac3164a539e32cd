"""capconf's approval policy in OpenCode's terms, and the cards that are OpenCode's asks.

Why here: OpenCode decides every call with its own permission evaluator (last matching
rule wins, over the agent's rules merged with the session's). capconf's policy (a tier,
the writable roots) is said to OpenCode once, as the *session* ruleset a session is
created with (`POST /session {permission}`), the place OpenCode itself pins a session's
policy (its `task` tool derives a child session's ruleset the same way). The table below
is vocabulary: it names, for each tier, the OpenCode permissions that ask. It never says
`allow` (a session `allow` would re-grant a tool the agent file denies) and it ends with a
`deny` for every tool OpenCode did not offer the agent, so a tier's `ask` never re-grants
one either. Whatever OpenCode then does with a call (run it, ask, refuse it) is the answer.

A card is one OpenCode permission request (`GET /permission`), answered through OpenCode's
reply API (`POST /permission/{id}/reply`). Nothing here decides a call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _driverkit.jcs import summary
from _driverkit.protocol import ProtoError

TIERS = ("confirm-before-change", "auto-within-workspace", "auto-edit", "full-access")
ATTENDANCE = ("attended", "unattended")
ASK_POLICIES = ("ask-parent", "never-ask")

# OpenCode permissions that ask under each tier (everything else is the agent's own rule).
# `edit` is OpenCode's one permission for write, edit and patches; `external_directory`
# is its one permission for any path outside the project directory, whatever the tool.
ASKS: dict[str, tuple[str, ...]] = {
    "confirm-before-change": ("edit", "bash", "webfetch", "external_directory"),
    "auto-within-workspace": ("webfetch", "external_directory"),
    "auto-edit": ("webfetch", "external_directory"),
    "full-access": (),
}
# the tiers whose writable roots are said as an `external_directory` allow for the root.
# OpenCode applies that one rule to every tool, so it is said only where no tool's change
# inside a root would then run unasked against the tier (auto-within-workspace: a root is
# not the workspace, so it stays "outside" there, reads included).
ROOTS_OPEN = ("confirm-before-change", "auto-edit")

# capconf tool -> decision action (SPEC APPR-01's approval items)
ACTION = {"read": "read", "glob": "read", "grep": "read", "write": "write", "edit": "edit",
          "bash": "bash", "WebFetch": "network"}


@dataclass
class Policy:
    tier: str = "confirm-before-change"
    attendance: str = "attended"
    ask_policy: str = "ask-parent"
    writable_roots: tuple[str, ...] = ()

    def json(self) -> dict[str, Any]:
        return {"tier": self.tier, "attendance": self.attendance,
                "ask_policy": self.ask_policy, "writable_roots": list(self.writable_roots)}

    def key(self) -> str:
        return json.dumps(self.json(), sort_keys=True)

    @property
    def nobody_answers(self) -> bool:
        """No person can answer an ask: OpenCode's ask is rejected at once, as OpenCode's
        own headless `run` rejects every ask (nobody attends that session)."""
        return self.attendance == "unattended" or self.ask_policy == "never-ask"


def parse_policy(args: dict[str, Any], base: Policy | None = None) -> Policy:
    """`approval.setup` / `approval.decide` arguments -> a Policy, or a located error."""
    base = base or Policy()
    tier = args.get("tier", base.tier)
    if tier not in TIERS:
        raise ProtoError("bad_request", f"`tier` is one of {', '.join(TIERS)}", ["args", "tier"])
    attendance = args.get("attendance", base.attendance)
    if attendance not in ATTENDANCE:
        raise ProtoError("bad_request", "`attendance` is attended or unattended",
                         ["args", "attendance"])
    ask_policy = args.get("ask_policy", base.ask_policy)
    if ask_policy not in ASK_POLICIES:
        raise ProtoError("bad_request", "`ask_policy` is ask-parent or never-ask",
                         ["args", "ask_policy"])
    roots = args.get("writable_roots", list(base.writable_roots))
    if not isinstance(roots, list):
        raise ProtoError("bad_request", "`writable_roots` must be a list of absolute "
                         "directory paths", ["args", "writable_roots"])
    for i, r in enumerate(roots):
        if not isinstance(r, str) or not Path(r).is_absolute() or not Path(r).is_dir():
            raise ProtoError("bad_request", "a writable root must be an absolute path of an "
                             "existing directory", ["args", "writable_roots", i])
    return Policy(tier, attendance, ask_policy,
                  tuple(str(Path(r).resolve()) for r in roots))


def session_rules(policy: Policy, offered: list[str], builtin: list[str]) -> list[dict[str, str]]:
    """The session ruleset that says `policy` to OpenCode for an agent OpenCode offered
    `offered` (its tool ids); `builtin` are the OpenCode tool ids the adapter knows."""
    rules: list[dict[str, str]] = []
    asks = ASKS[policy.tier]
    for permission in asks:
        rules.append({"permission": permission, "pattern": "*", "action": "ask"})
    if policy.tier == "full-access":
        rules.append({"permission": "external_directory", "pattern": "*", "action": "allow"})
    elif policy.tier in ROOTS_OPEN:
        for root in policy.writable_roots:
            rules.append({"permission": "external_directory", "pattern": f"{root}/*",
                          "action": "allow"})
    for tool in builtin:
        if tool not in offered:
            rules.append({"permission": tool, "pattern": "*", "action": "deny"})
    return rules


@dataclass
class Card:
    """One OpenCode permission request, seen as a capconf card."""

    ask: dict[str, Any]
    agent: str
    agent_name: str
    tool: str
    arguments: dict[str, Any]
    session: str
    turn: Any
    state: str = "pending"
    settled_by: str | None = None
    envelope: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # an MCP call's card names the MCP tool (capconf's qualified name), action `mcp`, and
    # summarises that tool's arguments, not the `mcp_call` wrapper's
    label: str | None = None
    action: str | None = None
    summarised: Any = None

    @property
    def id(self) -> str:
        return str(self.ask["id"])

    def json(self) -> dict[str, Any]:
        permission = self.ask.get("permission")
        patterns = self.ask.get("patterns") or []
        return {"id": self.id, "state": self.state,
                "origin": {"agent_id": self.agent, "agent_name": self.agent_name,
                           "subagent": True},
                "tool": self.label or self.tool,
                "action": self.action or ACTION.get(self.tool, self.tool),
                "summary": summary(self.arguments if self.summarised is None
                                   else self.summarised),
                "reason": f"OpenCode asks for permission `{permission}` on "
                          f"{', '.join(map(str, patterns)) or '*'}",
                "settled_by": self.settled_by,
                # OpenCode publishes every ask on its event bus the moment it asks
                # (`permission.asked`): it is never held back for a later pull
                "delivered": "pushed",
                "opencode_permission": {"id": self.id, "permission": permission,
                                        "patterns": patterns}}
