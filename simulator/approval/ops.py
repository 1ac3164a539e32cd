"""Driver ops of the approval chain (APPR-01..05): policy, the pure decision, cards,
TaskStop, snapshot pulls and the parent's live request.

Cards are raised by ``tool.call`` (which answers ``APPROVAL-PENDING`` with the card);
these ops observe and settle them. MCP needs no op of its own: the gateway tools are
called through ``tool.call`` and the harness reads the fake servers' journal files.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from capconf.simulator.approval.cards import CardError, end_parent_request
from capconf.simulator.approval.chain import (
    ApprovalChain,
    chain_of,
    decide_card,
    parent_request_start,
    snapshot_pull,
    stop,
)
from capconf.simulator.approval.decision import (
    Action,
    ApprovalPolicy,
    ApprovalRequest,
    AskPolicy,
    Attendance,
    Target,
    Tier,
    decide,
)
from capconf.simulator.compose.session import Handler, ProtocolError, Session


def _enum(args: Mapping[str, Any], key: str, kind: Any, default: Any = None) -> Any:
    value = args.get(key, default)
    try:
        return kind(value)
    except ValueError:
        choices = ", ".join(str(v) for v in kind)
        raise ProtocolError("bad_request", f"`{key}` must be one of {choices}",
                            ("args", key)) from None


def _policy(args: Mapping[str, Any]) -> ApprovalPolicy:
    if "tier" not in args:
        raise ProtocolError("bad_request", "`tier` is required", ("args", "tier"))
    return ApprovalPolicy(
        _enum(args, "tier", Tier),
        _enum(args, "attendance", Attendance, Attendance.ATTENDED.value),
        _enum(args, "ask_policy", AskPolicy, AskPolicy.ASK_PARENT.value),
    )


def _policy_json(chain: ApprovalChain) -> dict[str, Any]:
    return {"tier": str(chain.policy.tier), "attendance": str(chain.policy.attendance),
            "ask_policy": str(chain.policy.ask_policy),
            "writable_roots": [r.as_posix() for r in chain.writable_roots]}


def _chain(session: Session) -> ApprovalChain:
    session.require_world()
    return chain_of(session.state)


def _card_error(exc: CardError) -> ProtocolError:
    return ProtocolError(exc.code, exc.message)


def op_approval_setup(session: Session, args: Mapping[str, Any]) -> Any:
    """Set the session's approval policy (resets nothing else)."""
    chain = _chain(session)
    policy = _policy(args)
    roots_arg = args.get("writable_roots", [])
    if not isinstance(roots_arg, list):
        raise ProtocolError("bad_request", "`writable_roots` must be a list of absolute "
                            "directory paths", ("args", "writable_roots"))
    roots = []
    for i, root in enumerate(roots_arg):
        if not isinstance(root, str) or not Path(root).is_absolute() or not Path(root).is_dir():
            raise ProtocolError("bad_request", "a writable root must be an absolute path of an "
                                "existing directory", ("args", "writable_roots", i))
        roots.append(Path(root).resolve())
    chain.policy = policy
    chain.writable_roots = tuple(roots)
    return {"policy": _policy_json(chain)}


def op_approval_decide(session: Session, args: Mapping[str, Any]) -> Any:
    """The one decision function, as a pure query (no card, no state)."""
    action = _enum(args, "action", Action)
    target = _enum(args, "target", Target, Target.OUTSIDE.value)
    allowlisted = args.get("allowlisted", False)
    if not isinstance(allowlisted, bool) or (allowlisted and action is not Action.MCP):
        raise ProtocolError("bad_request", "`allowlisted` is a boolean, true only for mcp",
                            ("args", "allowlisted"))
    decision = decide(ApprovalRequest(action, target, allowlisted), _policy(args))
    return {"verdict": str(decision.verdict), "reason": decision.reason, "rule": decision.rule}


def op_cards_list(session: Session, args: Mapping[str, Any]) -> Any:
    """Every card in raise order, and every agent's status (observation only)."""
    chain = _chain(session)
    board = chain.board
    agents = []
    for agent_id in sorted(session.agents, key=lambda a: int(a.split("-")[-1])):
        record = session.agents[agent_id]
        known = any(a.id == agent_id for a in board.agents)
        status = str(board.status(agent_id)) if known else "running"
        name = record.view.definition.name if record.view.definition else None
        agents.append({"agent": agent_id, "name": name, "background": record.background,
                       "status": status})
    return {"cards": [c.to_json() for c in board.cards], "agents": agents,
            "parent_live": board.parent_live, "policy": _policy_json(chain)}


def op_card_decide(session: Session, args: Mapping[str, Any]) -> Any:
    chain = _chain(session)
    card_id = args.get("card")
    decision = args.get("decision")
    if not isinstance(card_id, str):
        raise ProtocolError("bad_request", "`card` must be a card id", ("args", "card"))
    if decision not in ("approve", "deny"):
        raise ProtocolError("bad_request", "`decision` must be approve or deny",
                            ("args", "decision"))
    try:
        card, result = decide_card(chain, card_id, decision == "approve")
    except CardError as exc:
        raise _card_error(exc) from None
    return {"card": card.to_json(), "result": result.to_json()}


def spawn_subtree(session: Session, agent_id: str) -> list[str]:
    """``agent_id`` and every agent spawned under it with ``agent.spawn {parent}``,
    children before parents, in spawn order. Lineage is data (DELEG-03): it decides what a
    stop reaches, never what an agent can see."""
    out: list[str] = []
    for record in list(session.agents.values()):
        if record.parent == agent_id:
            out += spawn_subtree(session, record.agent_id)
    out.append(agent_id)
    return out


def op_task_stop(session: Session, args: Mapping[str, Any]) -> Any:
    """TaskStop on a subagent: it and its whole subtree stop (DELEG-06), children first,
    and every pending card they own is denied (APPR-04). The subtree follows both kinds
    of lineage: agents spawned with ``parent`` and children the delegation capability
    made; the capability stops its own children, so it is asked once per agent it does
    not manage itself."""
    chain = _chain(session)
    record = session.agent(args)
    subtree_stop = session.state.get("delegation.stop")
    manages = session.state.get("delegation.manages")
    members = [m for m in spawn_subtree(session, record.agent_id)
               if m == record.agent_id or not (callable(manages) and manages(m))]
    settled: list[Any] = []
    results: list[Any] = []
    stopped: list[str] = []
    for member in members:
        if callable(subtree_stop):
            outcome = subtree_stop(member)
            settled += [s["card"] for s in outcome["settled"]]
            results += [s["result"] for s in outcome["settled"]]
            stopped += outcome["stopped"]
            continue
        was_stopped = chain.stopped(member)
        member_record = session.agents[member]
        definition = member_record.view.definition
        try:
            outcomes = stop(chain, member, definition.name if definition else None,
                            member_record.background)
        except CardError as exc:
            raise _card_error(exc) from None
        settled += [c.to_json() for c, _ in outcomes]
        results += [r.to_json() for _, r in outcomes]
        if not was_stopped:
            stopped.append(member)
    return {"settled": settled, "results": results, "stopped": stopped}


def op_snapshot_pull(session: Session, args: Mapping[str, Any]) -> Any:
    return {"delivered": [c.to_json() for c in snapshot_pull(_chain(session))]}


def op_parent_request_start(session: Session, args: Mapping[str, Any]) -> Any:
    try:
        return {"delivered": [c.to_json() for c in parent_request_start(_chain(session))]}
    except CardError as exc:
        raise _card_error(exc) from None


def op_parent_request_end(session: Session, args: Mapping[str, Any]) -> Any:
    chain = _chain(session)
    try:
        chain.board = end_parent_request(chain.board)
    except CardError as exc:
        raise _card_error(exc) from None
    return {"parent_live": chain.board.parent_live}


OPS: dict[str, Handler] = {
    "approval.setup": op_approval_setup,
    "approval.decide": op_approval_decide,
    "cards.list": op_cards_list,
    "card.decide": op_card_decide,
    "task.stop": op_task_stop,
    "snapshot.pull": op_snapshot_pull,
    "parent.request.start": op_parent_request_start,
    "parent.request.end": op_parent_request_end,
}
