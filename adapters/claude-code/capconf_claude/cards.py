"""capconf's card board over Claude Code's own permission asks.

Why: a card is an ask Claude Code sent its permission-prompt tool and still waits on
(`prompts.py`); the board only names those asks in capconf's words (fixed tables: Claude
Code's tool -> capconf tool and action, Claude Code's input -> capconf's arguments) and
remembers how each was answered. Which call asks, and what runs after the answer, are
Claude Code's; nothing here decides either.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from .prompts import Ask
from .vocabulary import ARGS_TO_CLAUDE, capconf_name

# Claude Code tool -> capconf's decision action (SPEC §9 approval items)
ACTION: dict[str, str] = {
    "Read": "read", "Glob": "read", "Grep": "read", "Write": "write", "Edit": "edit",
    "Bash": "bash", "WebFetch": "network",
}


def action_of(claude_tool: str) -> str:
    if claude_tool.startswith("mcp__"):
        return "mcp"
    return ACTION.get(claude_tool, capconf_name(claude_tool))


@dataclass
class Sent:
    """What the adapter asked the agent's model to call: capconf's call and Claude
    Code's input for it (the vocabulary table's translation)."""

    tool: str
    arguments: dict[str, Any]
    claude_input: dict[str, Any]


def capconf_arguments(ask: Ask, sent: Sent | None) -> dict[str, Any]:
    """The call's arguments in capconf's words: the case's own arguments when Claude
    Code asks about exactly the input the adapter sent; otherwise Claude Code's input
    with its keys renamed back by the table."""
    if sent is not None and ask.input == sent.claude_input:
        return sent.arguments
    back = {v: k for k, v in ARGS_TO_CLAUDE.get(ask.tool_name, {}).items()}
    return {back.get(k, k): v for k, v in ask.input.items()}


@dataclass
class Card:
    id: str
    ask: Ask
    agent: str
    agent_name: str
    tool: str
    arguments: dict[str, Any]
    toolu: str
    state: str = "pending"
    settled_by: str | None = None
    result: dict[str, Any] | None = field(default=None)
    sent: Sent | None = None

    def json(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state,
                "origin": {"agent_id": self.agent, "agent_name": self.agent_name,
                           "subagent": True},
                "tool": self.tool, "action": action_of(self.ask.tool_name),
                "summary": summary(self.arguments),
                "reason": f"Claude Code asks its permission-prompt tool whether "
                          f"`{self.ask.tool_name}` may run",
                "settled_by": self.settled_by,
                # Claude Code calls the permission-prompt tool the moment it asks: every
                # ask reaches the board when it is raised, none waits for a pull
                "delivered": "pushed",
                "claude_code_ask": {"tool_name": self.ask.tool_name,
                                    "tool_use_id": self.ask.tool_use_id}}


# -- the summary: RFC 8785 (JCS), cut after 200 code points (SPEC APPR-02) ------------

def _number(x: float) -> str:
    """ECMAScript Number::toString of an IEEE double."""
    if x == 0:
        return "0"
    if x < 0:
        return "-" + _number(-x)
    t = Decimal(repr(x)).as_tuple()
    ds = "".join(map(str, t.digits))
    exp = int(t.exponent)
    stripped = ds.rstrip("0")
    exp += len(ds) - len(stripped)
    digits = stripped.lstrip("0") or "0"
    k = len(digits)
    n = k + exp  # value = 0.digits x 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    sign = "+" if n - 1 >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(n - 1)}"


_ESC = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f",
        "\r": "\\r"}


def _string(s: str) -> str:
    out = []
    for ch in s:
        if ch in _ESC:
            out.append(_ESC[ch])
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def canonical(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        try:
            return _number(float(value))
        except OverflowError:
            return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "null"
        return _number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: str(k).encode("utf-16-be"))
        return "{" + ",".join(_string(str(k)) + ":" + canonical(value[k]) for k in keys) + "}"
    return _string(json.dumps(value, default=str))


def summary(arguments: dict[str, Any]) -> str:
    text = canonical(arguments)
    return text if len(text) <= 200 else text[:200] + "..."
