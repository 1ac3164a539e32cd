"""capconf's card board over Claude Code's own permission asks.

Why: a card is an ask Claude Code sent its permission-prompt tool and still waits on
(`prompts.py`); the board only names those asks in capconf's words (fixed tables: Claude
Code's tool -> capconf tool and action, Claude Code's input -> capconf's arguments) and
remembers how each was answered. Which call asks, and what runs after the answer, are
Claude Code's; nothing here decides either.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from _driverkit.jcs import summary

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
