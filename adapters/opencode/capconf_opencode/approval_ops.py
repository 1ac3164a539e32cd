"""The `approval` group's ops, served by OpenCode's permission asks and replies.

Why: a capconf card is an OpenCode permission request and `card.decide` is OpenCode's
reply to it; `task.stop` is OpenCode's session abort over the agent's session subtree
(OpenCode's own session tree, `GET /session/{id}/children`). The adapter keeps a list of
the asks it saw (OpenCode's `GET /permission` says which are still pending) and the
sessions it opened for each agent; it decides nothing: an ask is answered `reject` only
when nobody can answer it (an unattended session, or the never-ask policy), as OpenCode's
own headless `run` answers every ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from _driverkit.protocol import ProtoError
from _driverkit.request import card_arg

from . import agents, gated, mcp, skills
from .approval import Card, Policy, parse_policy, session_rules
from .vocabulary import FROM_OPENCODE, TO_OPENCODE, opencode_args, opencode_id

if TYPE_CHECKING:
    from .driver import Agent, Driver


@dataclass
class Board:
    """What the adapter saw of OpenCode's asks in this world, in raise order."""

    policy: Policy = field(default_factory=Policy)
    cards: list[Card] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    parent_live: bool = True
    session_policy: dict[str, str] = field(default_factory=dict)  # session -> policy key
    owner: dict[str, str] = field(default_factory=dict)  # session -> agent id

    def pending(self, agent: str | None = None) -> list[Card]:
        return [c for c in self.cards if c.state == "pending"
                and (agent is None or c.agent == agent)]


def rules_for(driver: Driver, agent: Agent) -> list[dict[str, str]]:
    offered = [str(o.get("function", {}).get("name")) for o in agent.offered]
    builtin = list(TO_OPENCODE.values())
    world = driver.world.mcp if driver.world is not None else None
    return [*session_rules(driver.board.policy, offered, builtin),
            *mcp.session_rules(world, driver.board.policy.tier, offered, set(builtin))]


def open_session(driver: Driver, agent_id: str, agent: Agent, parent: str | None) -> str:
    """A session of `agent` carrying the current policy as its OpenCode ruleset."""
    oc = driver.runtime()
    session = agents.new_session(oc, agent.directory, parent, rules_for(driver, agent))
    driver.board.session_policy[session] = driver.board.policy.key()
    driver.board.owner[session] = agent_id
    return session


def call_session(driver: Driver, agent_id: str, agent: Agent) -> str:
    """The agent's session, or (while it waits on an ask, or under another policy) a new
    child session of it: OpenCode runs one call of a session at a time."""
    board = driver.board
    busy = {c.session for c in board.pending(agent_id)}
    if agent.session not in busy and board.session_policy.get(agent.session) == \
            board.policy.key():
        return agent.session
    for session, owner in board.owner.items():
        if owner == agent_id and session not in busy and \
                board.session_policy.get(session) == board.policy.key():
            return session
    return open_session(driver, agent_id, agent, agent.session)


def envelope(tool: str, oc_id: str, offered: list[str], part: dict[str, Any] | None
             ) -> dict[str, Any]:
    """A call's end as OpenCode stored it, as a CALL-03 envelope."""
    state = (part or {}).get("state") or {}
    mounted = [FROM_OPENCODE.get(o, o) for o in offered]
    ran = (part or {}).get("tool")
    if part is None or ran == "invalid" or ran not in offered:
        # OpenCode found no tool of that name among the agent's: its part names the tool
        # as called (or its `invalid` tool) and ends with "Model tried to call unavailable
        # tool"
        called = f"`{tool}`" + (f" (OpenCode's `{oc_id}`)" if oc_id != opencode_id(tool)
                                else "")
        return {"ok": False, "error_code": "tool_not_mounted",
                "error_message": f"{called} is not mounted for this agent"
                + (f" (OpenCode: {state.get('error') or state.get('output')})" if part else ""),
                "error_detail": {"tool": tool, "mounted": mounted},
                "terminal_for_attempt": True, "retry_after_ms": None}
    if ran != oc_id:
        # OpenCode ran another tool than the one the model named (its tool-call repair
        # takes a name that differs from an offered tool's only in case as that tool):
        # what that tool did is the answer, and which tool it was is said
        answer = envelope(tool, str(ran), offered, part)
        where = answer.get("content") if answer.get("ok") else answer.get("error_detail")
        if isinstance(where, dict):
            where["opencode_tool"] = ran
            where["opencode_called"] = oc_id
        return answer
    if oc_id == skills.OPENCODE_TOOL:
        return skills.use_skill_result(tool, state)
    if state.get("status") == "completed" and tool == mcp.MCP_CALL:
        # OpenCode hands its model an MCP result as one text (the text blocks joined):
        # that text is the result's one text block
        return {"ok": True, "content": {"content": [{"type": "text",
                                                     "text": str(state.get("output"))}],
                                        "output": state.get("output"),
                                        "title": state.get("title"),
                                        "metadata": state.get("metadata")}}
    if state.get("status") == "completed":
        return {"ok": True, "content": {"output": state.get("output"),
                                        "title": state.get("title"),
                                        "metadata": state.get("metadata")}}
    why = gated.stopped_by_permission(state)
    if why is not None:
        return {"ok": False, "error_code": "APPROVAL-DENIED",
                "error_message": f"OpenCode: {state.get('error')}",
                "error_detail": {"tool": tool, "rule": f"opencode-{why}"},
                "terminal_for_attempt": True, "retry_after_ms": None}
    return {"ok": False, "error_code": "tool_error",
            "error_message": str(state.get("error") or state.get("status")),
            "error_detail": {"tool": tool, "opencode_state": state.get("status")},
            "terminal_for_attempt": True, "retry_after_ms": None}


def denied_unanswered(tool: str, ask: dict[str, Any], policy: Policy) -> dict[str, Any]:
    rule = "never-ask" if policy.ask_policy == "never-ask" else "unattended"
    return {"ok": False, "error_code": "APPROVAL-DENIED",
            "error_message": f"OpenCode asked for permission `{ask.get('permission')}` and "
            f"nobody can answer in this session ({rule}): answered `reject`, as OpenCode's "
            "headless run does",
            "error_detail": {"tool": tool, "rule": rule, "opencode_ask": ask},
            "terminal_for_attempt": True, "retry_after_ms": None}


def settle_or_raise(driver: Driver, agent_id: str, agent: Agent, tool: str,
                    targs: dict[str, Any], session: str, turn: Any, skip: int,
                    offered: list[str], oc_id: str) -> dict[str, Any]:
    """Watch the call to its end or to OpenCode's next ask, and answer for it."""
    oc = driver.runtime()
    known = {c.id for c in driver.board.cards}
    ask = gated.ask_or_end(oc, turn, agent.directory, session, known)
    if ask is not None and driver.board.policy.nobody_answers:
        oc.post(f"/permission/{ask['id']}/reply", {"reply": "reject"},
                directory=str(agent.directory))
        agents.wait_idle(oc, agent.directory, session)
        return denied_unanswered(tool, ask, driver.board.policy)
    if ask is not None:
        card = Card(ask, agent_id, agent.name, tool, targs, session, turn,
                    extra={"skip": skip, "oc_id": oc_id})
        if tool == mcp.MCP_CALL:  # the card is about the MCP tool and its arguments
            card.label, card.action = str(targs.get("name")), "mcp"
            card.summarised = targs.get("arguments", {})
        driver.board.cards.append(card)
        return {"ok": False, "error_code": "APPROVAL-PENDING",
                "error_message": f"OpenCode asks for permission `{ask.get('permission')}`",
                "error_detail": {"tool": tool, "card": card.json()},
                "terminal_for_attempt": False, "retry_after_ms": None}
    part = gated.last_part(oc, agent.directory, session, skip)
    try:
        gated.require_ended(oc, agent.directory, session, part)
    except gated.CallHung as e:
        raise ProtoError("runtime_hung", str(e)) from e
    return envelope(tool, oc_id, offered, part)


def tool_call(driver: Driver, agent_id: str, agent: Agent, tool: str,
              targs: dict[str, Any]) -> dict[str, Any]:
    oc_id = opencode_id(tool)
    oc_args: Any = opencode_args(oc_id, targs)
    routed = mcp.opencode_call(tool, targs)
    if routed is not None:  # mcp_call: the model calls OpenCode's own tool of that server
        oc_id, oc_args = routed
    offered = [str(o.get("function", {}).get("name")) for o in agent.offered]
    oc = driver.runtime()
    session = call_session(driver, agent_id, agent)
    skip = len(agents.tool_parts(oc, agent.directory, session))
    turn = gated.start_turn(oc, driver.require_model(), agent.directory, session, agent.name,
                            (oc_id, oc_args))
    return settle_or_raise(driver, agent_id, agent, tool, targs, session, turn, skip, offered,
                           oc_id)


# -- ops -----------------------------------------------------------------------------

def op_approval_setup(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    driver.need_world()
    driver.board.policy = parse_policy(args, Policy())
    return {"policy": driver.board.policy.json()}


def _card(driver: Driver, args: dict[str, Any]) -> Card:
    return card_arg(driver.board.cards, args)


def refresh(driver: Driver) -> None:
    """A pending card whose ask OpenCode no longer lists was settled by a stop."""
    board = driver.board
    if not board.pending():
        return
    oc = driver.runtime()
    listed: set[str] = set()
    for directory in {driver.agents[c.agent].directory for c in board.pending()
                      if c.agent in driver.agents}:
        asks = oc.get("/permission", directory=str(directory))
        listed |= {str(a.get("id")) for a in asks} if isinstance(asks, list) else set()
    for c in board.pending():
        if c.id not in listed and c.agent in board.stopped:
            c.state, c.settled_by = "denied", "task-stop"


def op_card_decide(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    card = _card(driver, args)
    decision = args.get("decision")
    if decision not in ("approve", "deny"):
        raise ProtoError("bad_request", "`decision` is approve or deny", ["args", "decision"])
    refresh(driver)
    if card.state != "pending":
        raise ProtoError("CARD-ALREADY-SETTLED", f"card `{card.id}` is {card.state}",
                         ["args", "card"])
    agent = driver.agents[card.agent]
    oc = driver.runtime()
    answer = oc.post(f"/permission/{card.id}/reply",
                     {"reply": "once" if decision == "approve" else "reject"},
                     directory=str(agent.directory))
    if isinstance(answer, dict) and "__http_error__" in answer:
        raise ProtoError("CARD-ALREADY-SETTLED", f"OpenCode: {answer.get('message') or answer}",
                         ["args", "card"])
    card.state, card.settled_by = ("approved" if decision == "approve" else "denied"), "user"
    offered = [str(o.get("function", {}).get("name")) for o in agent.offered]
    result = settle_or_raise(driver, card.agent, agent, card.tool, card.arguments,
                             card.session, card.turn, int(card.extra["skip"]), offered,
                             str(card.extra["oc_id"]))
    card.envelope = result
    return {"card": card.json(), "result": result}


def status(driver: Driver, agent_id: str) -> str:
    if driver.board.pending(agent_id):
        return "suspended"
    return "stopped" if agent_id in driver.board.stopped else "running"


def op_cards_list(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    refresh(driver)
    return {"cards": [c.json() for c in driver.board.cards],
            "agents": [{"agent": aid, "name": a.name, "background": a.background,
                        "status": status(driver, aid)} for aid, a in driver.agents.items()],
            "parent_live": driver.board.parent_live, "policy": driver.board.policy.json()}


def subtree(driver: Driver, agent_id: str) -> list[str]:
    """The agent's sessions and every session under them in OpenCode's session tree,
    children before parents."""
    agent = driver.agents[agent_id]
    oc = driver.runtime()
    order: list[str] = []

    def walk(session: str, depth: int) -> None:
        children = oc.get(f"/session/{session}/children", directory=str(agent.directory))
        for child in children if isinstance(children, list) and depth < 64 else []:
            walk(str(child.get("id")), depth + 1)
        order.append(session)
    walk(agent.session, 0)
    return order


def op_task_stop(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    aid = args.get("agent")
    if not isinstance(aid, str) or aid not in driver.agents:
        raise ProtoError("no_such_agent", f"no agent `{aid}`", ["args", "agent"])
    board = driver.board
    oc = driver.runtime()
    sessions = subtree(driver, aid)
    stopped: list[str] = []
    for session in sessions:
        owner = board.owner.get(session)
        if owner is None:
            continue
        oc.post(f"/session/{session}/abort", {}, directory=str(driver.agents[owner].directory))
        if owner not in stopped and owner not in board.stopped:
            stopped.append(owner)
    board.stopped.extend(stopped)
    blocked = [c for c in board.pending() if c.session in sessions]
    for c in blocked:
        agents.wait_idle(oc, driver.agents[c.agent].directory, c.session, limit=5)
    refresh(driver)
    settled = [c for c in blocked if c.state != "pending"]
    results = []
    for c in blocked:
        agent = driver.agents[c.agent]
        offered = [str(o.get("function", {}).get("name")) for o in agent.offered]
        part = gated.last_part(oc, agent.directory, c.session, int(c.extra["skip"]))
        results.append(envelope(c.tool, str(c.extra["oc_id"]), offered, part))
    return {"settled": [c.json() for c in settled], "results": results, "stopped": stopped}


def op_snapshot_pull(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    # every OpenCode ask was published on its event bus when it was asked: none waits
    return {"delivered": []}


def op_parent_request_start(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    if driver.board.parent_live:
        raise ProtoError("PARENT-REQUEST-LIVE", "a parent request is live")
    driver.board.parent_live = True
    return {"delivered": []}


def op_parent_request_end(driver: Driver, args: dict[str, Any]) -> dict[str, Any]:
    if not driver.board.parent_live:
        raise ProtoError("PARENT-REQUEST-NOT-LIVE", "no parent request is live")
    driver.board.parent_live = False
    return {"parent_live": False}


OPS = {"approval.setup": op_approval_setup, "cards.list": op_cards_list,
       "card.decide": op_card_decide, "task.stop": op_task_stop,
       "snapshot.pull": op_snapshot_pull, "parent.request.start": op_parent_request_start,
       "parent.request.end": op_parent_request_end}
