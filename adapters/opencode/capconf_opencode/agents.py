"""Asking OpenCode what it made of an agent file, and running that agent's tool calls.

Why through a session: what OpenCode grants an agent is what it offers the model when
that agent runs, so the adapter starts a session with the agent and lets the scripted
model see the tool list (names, descriptions, input schemas) OpenCode sends. A tool call
is the model emitting exactly the call asked for; OpenCode's permission evaluator and the
tool itself decide, and the session's stored tool part says what happened.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .definition import Translated
from .model_server import ScriptedModel, Turn
from .runtime import MODEL, PROVIDER, OpenCode

TURN_TIMEOUT = 40.0
AGENT_TIMEOUT = 20.0
_tokens = itertools.count(1)


class OpenCodeError(RuntimeError):
    """OpenCode answered an API call with an error (its own message is kept)."""


@dataclass
class Loaded:
    """OpenCode's view of one agent file."""

    directory: Path
    agent: dict[str, Any] | None
    error: str | None
    offered: list[dict[str, Any]] = field(default_factory=list)
    system: str = ""
    stale: bool = False
    """OpenCode answered from an instance that still holds an earlier file's agent: the
    caller loads the file again in a directory of its own."""


STALE = "OpenCode's instance of this directory still lists an earlier file's agent"


def write_agent(directory: Path, t: Translated) -> Path:
    folder = directory / ".opencode" / "agent"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{t.stem}.md"
    path.write_bytes(t.text)
    return path


def find_agent(oc: OpenCode, directory: Path, stem: str,
               body: str | None = None) -> tuple[dict[str, Any] | None, str | None]:
    """This file's agent as OpenCode loaded it, or why there is none. An agent of another
    name is taken only when it is the one custom agent and holds this file's body: after
    a dispose OpenCode may still answer from the old instance, whose one agent is the
    previous file's, and taking that answered a case with another definition (seen in CI:
    an empty file answered with the previous case's 5,000-level `extra`)."""
    for attempt in range(3):
        try:
            answer = oc.get("/agent", directory=str(directory), timeout=AGENT_TIMEOUT)
        except OSError:  # a timeout, or the connection reset by a wedged instance
            oc.wedged = True
            return None, (f"OpenCode did not answer GET /agent within {AGENT_TIMEOUT:.0f} s "
                          "while loading this file")
        # 503 is OpenCode's server being unavailable, not a verdict on the file (its
        # config issues come as 400 with the file's path): ask again, as any client would.
        if not (isinstance(answer, dict) and answer.get("__http_error__") == 503) \
                or attempt == 2:
            break
        time.sleep(1.0 + attempt)
    if isinstance(answer, dict) and "__http_error__" in answer:
        return None, str(answer.get("message") or answer.get("data") or answer)
    if not isinstance(answer, list):
        return None, f"unexpected /agent answer: {answer!r}"[:500]
    for a in answer:
        if a.get("name") == stem and not a.get("native"):
            return a, None
    custom = [a for a in answer if not a.get("native")]
    if len(custom) == 1 and (body is None or _same_body(custom[0], body)):
        return custom[0], None
    if custom:
        names = ", ".join(sorted(str(a.get("name")) for a in custom))
        return None, f"{STALE} ({names[:300]}), not `{stem}`"
    return None, "OpenCode did not load the agent file (it is not among /agent)"


def stale_config(oc: OpenCode, directory: Path, marker: str) -> str | None:
    """Why the instance that answered is not the one that read this load's config (its
    `username` is another load's marker), or None when it is. OpenCode not answering
    marks the server wedged, as for GET /agent."""
    try:
        config = oc.get("/config", directory=str(directory), timeout=AGENT_TIMEOUT)
    except OSError:
        oc.wedged = True
        return (f"OpenCode did not answer GET /config within {AGENT_TIMEOUT:.0f} s "
                "while loading this file")
    if isinstance(config, dict) and "__http_error__" in config:
        return None  # the file's own config error: OpenCode's verdict, read by find_agent
    seen = config.get("username") if isinstance(config, dict) else None
    return None if seen == marker else f"{STALE} (its config is `{seen}`, not `{marker}`)"


def _same_body(agent: dict[str, Any], body: str) -> bool:
    return str(agent.get("prompt") or "").strip() == body.strip()


def run_turn(oc: OpenCode, model: ScriptedModel, directory: Path, session: str, agent: str,
             text: str, tool_call: tuple[str, dict[str, Any]] | None = None,
             settle: bool = True) -> Turn:
    """Prompt `agent` in `session`; the model emits `tool_call` (if any) once. With
    `settle` false the turn is left as soon as the model has answered (the caller
    disposes the instance, which ends the session)."""
    token = f"t{next(_tokens)}"
    turn = model.register(token, Turn(tool_call=tool_call))
    answer = oc.post(f"/session/{session}/prompt_async", {
        "agent": agent, "model": {"providerID": PROVIDER, "modelID": MODEL},
        "parts": [{"type": "text", "text": f"{text}\n\ncapconf-turn:{token}"}]},
        directory=str(directory))
    if isinstance(answer, dict) and "__http_error__" in answer:
        raise OpenCodeError(str(answer.get("message") or answer))
    deadline = time.monotonic() + TURN_TIMEOUT
    while not turn.done.wait(0.3) and time.monotonic() < deadline:
        for ask in pending_asks(oc, directory, session):
            # Nobody attends this session: answer as OpenCode's own headless `run` does.
            oc.post(f"/permission/{ask['id']}/reply", {"reply": "reject"},
                    directory=str(directory))
            turn.asks.append(ask)
    if settle:
        wait_idle(oc, directory, session)
    return turn


def pending_asks(oc: OpenCode, directory: Path, session: str) -> list[dict[str, Any]]:
    asks = oc.get("/permission", directory=str(directory))
    return [a for a in asks if a.get("sessionID") == session] if isinstance(asks, list) else []


def wait_idle(oc: OpenCode, directory: Path, session: str, limit: float = 20.0) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        status = oc.get("/session/status", directory=str(directory))
        if not isinstance(status, dict) or session not in status \
                or (status[session] or {}).get("type") == "idle":
            return True
        time.sleep(0.1)
    return False


def dispose(oc: OpenCode, directory: Path) -> bool:
    """Let OpenCode drop its instance of `directory` (it re-reads the agent files there
    on the next request); an instance that does not answer marks the server wedged.
    False when OpenCode did not confirm the dispose (an HTTP error such as 503 under
    load): its instance, with the agent files it read, may still be there, so the caller
    must not load another file in that directory."""
    try:
        answer = oc.post("/instance/dispose", directory=str(directory), timeout=AGENT_TIMEOUT)
    except OSError:
        oc.wedged = True
        return False
    return not (isinstance(answer, dict) and "__http_error__" in answer)


def new_session(oc: OpenCode, directory: Path, parent: str | None = None,
                permission: list[dict[str, str]] | None = None) -> str:
    body: dict[str, Any] = {"title": "capconf"}
    if parent:
        body["parentID"] = parent
    if permission is not None:  # the session's own ruleset, merged after the agent's
        body["permission"] = permission
    answer = oc.post("/session", body, directory=str(directory))
    if not isinstance(answer, dict) or "id" not in answer:
        raise OpenCodeError(f"session not created: {answer!r}"[:500])
    return str(answer["id"])


def load(oc: OpenCode, model: ScriptedModel, directory: Path, t: Translated,
         settle: bool = True, marker: str | None = None) -> Loaded:
    """Write the file, let OpenCode load it, and see what it offers that agent's model.
    With `marker` (the `username` the caller wrote into this directory's config), an
    instance whose config says otherwise read an earlier config and agent files (OpenCode
    revived it after the last dispose): the answer is `stale`, never taken for this file.
    Seen in CI: a file OpenCode refuses (`color: x`) answered as the earlier file's agent
    of the same name and body, which no comparison of the agent could tell apart."""
    write_agent(directory, t)
    agent, error = find_agent(oc, directory, t.stem, t.body or "")
    if marker is not None and not oc.wedged:
        stale = stale_config(oc, directory, marker)
        if stale is not None:
            return Loaded(directory, None, stale, stale=not oc.wedged)
    loaded = Loaded(directory, agent, error, stale=bool(error and error.startswith(STALE)))
    if agent is None:
        return loaded
    session = new_session(oc, directory)
    turn = run_turn(oc, model, directory, session, str(agent["name"]), "List your tools.",
                    settle=settle)
    if turn.offered is None:
        loaded.error = ("OpenCode did not run the agent (no model request arrived)"
                        + session_error(oc, directory, session))
        return loaded
    loaded.offered = turn.offered
    loaded.system = turn.system or ""
    return loaded


def session_error(oc: OpenCode, directory: Path, session: str) -> str:
    """OpenCode's own error of the session's last message, if it stored one."""
    messages = oc.get(f"/session/{session}/message", directory=str(directory))
    for m in reversed(messages if isinstance(messages, list) else []):
        error = (m.get("info") or {}).get("error")
        if error:
            return f": {error}"[:2000]
    return ""


def tool_parts(oc: OpenCode, directory: Path, session: str) -> list[dict[str, Any]]:
    """The tool parts OpenCode stored for the session, oldest first."""
    messages = oc.get(f"/session/{session}/message", directory=str(directory))
    parts: list[dict[str, Any]] = []
    for m in messages if isinstance(messages, list) else []:
        for p in m.get("parts") or []:
            if p.get("type") == "tool":
                parts.append(p)
    return parts
