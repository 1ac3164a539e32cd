"""One tool call in an OpenCode session that may stop at an OpenCode permission ask.

Why its own module: with an approval policy a call has three ends, all OpenCode's: the
tool ran (or failed), OpenCode refused it by a rule, or OpenCode asked and waits for a
reply. The driver needs to return at the ask while OpenCode keeps the call waiting, and to
read the call's end after a reply; this module does only that watching.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from .agents import TURN_TIMEOUT, OpenCodeError, _tokens, tool_parts, wait_idle
from .model_server import ScriptedModel, Turn
from .runtime import MODEL, PROVIDER, OpenCode

# OpenCode's own messages for a call its permission layer stopped (tool part `error`)
DENIED_BY_RULE = "specified a rule which prevents you from using"
REJECTED_BY_USER = "rejected permission"
ABORTED = "aborted"


def start_turn(oc: OpenCode, model: ScriptedModel, directory: Path, session: str, agent: str,
               tool_call: tuple[str, dict[str, Any]]) -> Turn:
    """Prompt `agent` in `session`; the scripted model emits `tool_call` once."""
    token = f"g{next(_tokens)}"
    turn = model.register(token, Turn(tool_call=tool_call))
    answer = oc.post(f"/session/{session}/prompt_async", {
        "agent": agent, "model": {"providerID": PROVIDER, "modelID": MODEL},
        "parts": [{"type": "text", "text": f"Call {tool_call[0]}.\n\ncapconf-turn:{token}"}]},
        directory=str(directory))
    if isinstance(answer, dict) and "__http_error__" in answer:
        raise OpenCodeError(str(answer.get("message") or answer))
    return turn


def pending_asks(oc: OpenCode, directory: Path, session: str) -> list[dict[str, Any]]:
    """OpenCode's pending asks of `session`. A listing OpenCode fails to answer is an
    error, never "no ask" (1.18.33 answers 400 while a `webfetch` ask without a `timeout`
    argument is pending: repro/webfetch-ask-breaks-permission-list.py)."""
    asks = oc.get("/permission", directory=str(directory))
    if not isinstance(asks, list):
        raise OpenCodeError(f"OpenCode did not list its pending permissions: {asks!r}"[:500])
    return [a for a in asks if a.get("sessionID") == session]


def idle(oc: OpenCode, directory: Path, session: str) -> bool:
    status = oc.get("/session/status", directory=str(directory))
    return isinstance(status, dict) and (
        session not in status or (status[session] or {}).get("type") == "idle")


def ask_or_end(oc: OpenCode, turn: Turn, directory: Path, session: str,
               known: set[str]) -> dict[str, Any] | None:
    """Wait until OpenCode asks a new permission in `session` (returned, still waiting for
    its reply) or the turn ends (None, after the session is idle)."""
    deadline = time.monotonic() + TURN_TIMEOUT
    ended = False
    fifo_base = oc.fifo_waits()
    blocked_since: float | None = None
    while time.monotonic() < deadline:
        for ask in pending_asks(oc, directory, session):
            if str(ask.get("id")) not in known:
                return ask
        if turn.done.wait(0.2) or (turn.requests and idle(oc, directory, session)):
            # the model saw the call's result, or OpenCode ended the turn without one
            # (a rejected ask stops OpenCode's loop before the model is asked again)
            ended = True
            break
        if _blocked_on_fifo(oc, fifo_base):
            # OpenCode's tool sits in a FIFO open no one will ever match: the call cannot
            # end, so waiting out the deadline would tell nothing more (require_ended
            # reports the hang; the server is restarted before the next world)
            blocked_since = blocked_since or time.monotonic()
            if time.monotonic() - blocked_since >= FIFO_SETTLE:
                oc.stuck = True
                return None
        else:
            blocked_since = None
    wait_idle(oc, directory, session, limit=20 if ended else 3)
    for ask in pending_asks(oc, directory, session):  # asked just as the turn ended
        if str(ask.get("id")) not in known:
            return ask
    return None


FIFO_SETTLE = 1.0  # seconds a FIFO wait must last before the call counts as hung


def _blocked_on_fifo(oc: OpenCode, base: int | None) -> bool:
    now = oc.fifo_waits()
    return base is not None and now is not None and now > base


def last_part(oc: OpenCode, directory: Path, session: str, skip: int) -> dict[str, Any] | None:
    parts = tool_parts(oc, directory, session)[skip:]
    return parts[-1] if parts else None


class CallHung(RuntimeError):
    """OpenCode's tool never ended the call (its part is still running at the deadline)."""


def require_ended(oc: OpenCode, directory: Path, session: str,
                  part: dict[str, Any] | None) -> None:
    """Raise CallHung when OpenCode's call has not ended: the adapter must not make up an
    answer for it. The hung session is aborted so OpenCode can go on with other calls."""
    state = (part or {}).get("state") or {}
    if state.get("status") in ("pending", "running"):
        oc.post(f"/session/{session}/abort", {}, directory=str(directory))
        tool = part.get("tool") if part else "?"
        if oc.stuck:
            raise CallHung(f"OpenCode's `{tool}` call does not end: its tool part is still "
                           f"{state.get('status')} and an OpenCode thread waits in the kernel "
                           "for the other end of a FIFO it opened (wchan wait_for_partner)")
        raise CallHung(f"OpenCode's `{tool}` call did not end within {TURN_TIMEOUT:.0f} s "
                       f"(its tool part is still {state.get('status')})")


def stopped_by_permission(state: dict[str, Any]) -> str | None:
    """`rule`, `rejected` or `aborted` when OpenCode's permission layer or an abort ended
    the call (OpenCode's own error text says which), else None."""
    error = str(state.get("error") or "")
    if DENIED_BY_RULE in error:
        return "rule"
    if REJECTED_BY_USER in error:
        return "rejected"
    if state.get("status") == "error" and ABORTED in error.lower():
        return "aborted"
    return None
