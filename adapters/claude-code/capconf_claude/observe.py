"""Reading Claude Code's own signals back into capconf's vocabulary.

Why its own module: every answer the driver gives is read here from what Claude Code
sent or wrote (its model requests, its tool results), through fixed tables; nothing in
it decides an outcome.
"""

from __future__ import annotations

import re
from typing import Any

from .model_server import ModelRequest
from .vocabulary import capconf_name

BILLING = "x-anthropic-billing-header:"
# Claude Code's own text that follows an agent's prompt in the subagent's system prompt
AFTER_BODY = "\n\nMessages from the agent that launched you"
AGENT_LINE = re.compile(r"^- (?P<name>[^\n:]+): (?P<rest>.*)$", re.M)


def system_blocks(req: ModelRequest) -> list[str]:
    system = req.body.get("system")
    if isinstance(system, str):
        return [system]
    blocks = [str(b.get("text", "")) for b in system or [] if isinstance(b, dict)]
    return [b for b in blocks if not b.startswith(BILLING)]


def listed_agents(main: ModelRequest) -> dict[str, str]:
    """Claude Code's list of agent types (name -> description line) from the main
    agent's request: the `<system-reminder>` that names the available agent types."""
    out: dict[str, str] = {}
    for m in main.messages:
        content = m.get("content")
        texts = [content] if isinstance(content, str) else [
            str(b.get("text", "")) for b in content or [] if isinstance(b, dict)]
        for t in texts:
            if "Available agent types" not in t:
                continue
            for mt in AGENT_LINE.finditer(t):
                out[mt.group("name").strip()] = mt.group("rest")
    return out


def split_description(rest: str) -> str:
    """The description in `description (Tools: ...)`."""
    i = rest.rfind(" (Tools:")
    return rest[:i] if i >= 0 else rest


def listed_tools(rest: str) -> list[str] | None:
    """The tools in Claude Code's listing `description (Tools: A, B)`, in capconf's
    names; None when Claude Code says the agent has all tools (`*`, `All tools...`)."""
    i = rest.rfind(" (Tools: ")
    if i < 0 or not rest.endswith(")"):
        return None
    inner = rest[i + len(" (Tools: "):-1]
    if inner.strip() in ("*", "") or inner.startswith("All tools"):
        return None
    return [capconf_name(t.strip()) for t in inner.split(",") if t.strip()]


def prompt_of(req: ModelRequest) -> tuple[str, list[dict[str, str]]]:
    """The subagent's system prompt and its parts: Claude Code's text before the agent's
    own prompt is `frame`, the agent's prompt is `body` (cut where Claude Code's own
    follow-on text starts), Claude Code's text after it is a second `frame` part."""
    blocks = system_blocks(req)
    parts: list[dict[str, str]] = []
    for i, b in enumerate(blocks):
        cut = b.find(AFTER_BODY)
        if cut >= 0 and i > 0:
            if b[:cut].strip():
                parts.append({"kind": "body", "text": b[:cut]})
            parts.append({"kind": "frame", "text": b[cut + 2:]})
        elif b.strip():
            parts.append({"kind": "frame", "text": b})
    text = "\n\n".join(p["text"] for p in parts)
    return (text + "\n" if text else ""), parts


def body_of(req: ModelRequest) -> str | None:
    for p in prompt_of(req)[1]:
        if p["kind"] == "body":
            return p["text"]
    return None


def mounted(req: ModelRequest) -> list[dict[str, Any]]:
    """The subagent's tools array, in Claude Code's order, names in capconf's vocabulary."""
    return [{"name": capconf_name(str(t.get("name"))),
             "description": str(t.get("description", "")),
             "input_schema": t.get("input_schema") or {"type": "object"}}
            for t in req.tools]


def result_text(block: dict[str, Any]) -> str:
    c = block.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return "".join(str(x.get("text", "")) for x in c if isinstance(x, dict))
    return ""
