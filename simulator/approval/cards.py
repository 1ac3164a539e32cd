"""Approval cards: raised by any agent, shown in the parent session, settled once.

The lifecycle is the table :data:`CARD_TRANSITIONS` (pending -> approved | denied); every
other move is a structured :class:`CardError`. The board is a frozen value and every
operation returns a new board, so the hypothesis state machine can check invariants
between any two steps. Ids come from counters inside the board (``card-1``,
``agent-1``): no clock, no uuid, same inputs give the same ids.

Three rules carry the requirements:
- an agent with a pending card is suspended (APPR-04); its status is derived from the
  cards, so it cannot drift from them;
- stopping an agent settles every pending card it owns as denied and hands back the
  denial its blocked call returns (APPR-04), so no card outlives its owner;
- a card raised while the parent has no live request is not pushed; the next pull
  (an explicit snapshot, or the mount pull that starts the parent's next request)
  delivers it, and every card is delivered at most once (APPR-05).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from capconf.simulator.core.envelope import ToolResult, failure

MAIN_AGENT_ID = "main"
SUMMARY_MAX_CHARS = 200
"""Longest argument summary on a card, in Unicode code points, before the marker."""
SUMMARY_MARKER = "..."

APPROVAL_DENIED = "APPROVAL-DENIED"
"""Error code of every denied call: by the user, by TaskStop, unattended, never-ask."""


class CardState(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"


class CardEvent(StrEnum):
    APPROVE = "approve"
    DENY = "deny"
    OWNER_STOPPED = "owner-stopped"


CARD_TRANSITIONS: Mapping[tuple[CardState, CardEvent], CardState] = {
    (CardState.PENDING, CardEvent.APPROVE): CardState.APPROVED,
    (CardState.PENDING, CardEvent.DENY): CardState.DENIED,
    (CardState.PENDING, CardEvent.OWNER_STOPPED): CardState.DENIED,
}
"""The whole lifecycle. Settled cards have no outgoing edge."""

SETTLED_BY: Mapping[CardEvent, str] = {
    CardEvent.APPROVE: "user",
    CardEvent.DENY: "user",
    CardEvent.OWNER_STOPPED: "task-stop",
}


class AgentStatus(StrEnum):
    RUNNING = "running"
    SUSPENDED = "suspended"
    STOPPED = "stopped"


class Delivery(StrEnum):
    PUSHED = "pushed"
    PULLED = "pulled"


class CardError(Exception):
    """A move the lifecycle does not allow; ``code`` is stable for the driver."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass(frozen=True)
class Origin:
    agent_id: str
    agent_name: str
    subagent: bool

    def to_json(self) -> dict[str, Any]:
        return {"agent_id": self.agent_id, "agent_name": self.agent_name,
                "subagent": self.subagent}


@dataclass(frozen=True)
class Card:
    id: str
    origin: Origin
    tool: str
    action: str
    summary: str
    reason: str
    state: CardState = CardState.PENDING
    settled_by: str | None = None
    delivered: Delivery | None = None
    fields: tuple[tuple[str, Any], ...] = ()
    """Extra fields of a card kind that needs them (a connector card's manifest phrase,
    buttons, method and arguments, CONN-03): one card, extended, not a second kind."""

    def to_json(self) -> dict[str, Any]:
        core = {
            "id": self.id,
            "state": str(self.state),
            "origin": self.origin.to_json(),
            "tool": self.tool,
            "action": self.action,
            "summary": self.summary,
            "reason": self.reason,
            "settled_by": self.settled_by,
            "delivered": None if self.delivered is None else str(self.delivered),
        }
        return {**core, **{k: v for k, v in self.fields if k not in core}}


@dataclass(frozen=True)
class Agent:
    id: str
    name: str
    background: bool = False
    stopped: bool = False

    @property
    def is_main(self) -> bool:
        return self.id == MAIN_AGENT_ID


@dataclass(frozen=True)
class Settlement:
    """A settled card and what its blocked call now does: ``result`` is None when the
    call may run (approved), else the denial the call returns."""

    card: Card
    result: ToolResult | None


@dataclass(frozen=True)
class Board:
    agents: tuple[Agent, ...] = (Agent(MAIN_AGENT_ID, MAIN_AGENT_ID),)
    cards: tuple[Card, ...] = ()
    parent_live: bool = False
    card_counter: int = 0
    agent_counter: int = 0

    def agent(self, agent_id: str) -> Agent:
        for a in self.agents:
            if a.id == agent_id:
                return a
        raise CardError("AGENT-NOT-FOUND", f"no agent with id {agent_id!r}")

    def card(self, card_id: str) -> Card:
        for c in self.cards:
            if c.id == card_id:
                return c
        raise CardError("CARD-NOT-FOUND", f"no card with id {card_id!r}")

    def pending(self, owner_id: str | None = None) -> tuple[Card, ...]:
        return tuple(
            c for c in self.cards
            if c.state is CardState.PENDING and owner_id in (None, c.origin.agent_id)
        )

    def status(self, agent_id: str) -> AgentStatus:
        agent = self.agent(agent_id)
        if agent.stopped:
            return AgentStatus.STOPPED
        return AgentStatus.SUSPENDED if self.pending(agent_id) else AgentStatus.RUNNING


def summarize_args(args: Mapping[str, Any]) -> str:
    """The arguments in RFC 8785 canonical JSON (JCS), cut to SUMMARY_MAX_CHARS code
    points. JCS, not "sorted json.dumps": a TS or Rust runtime has a JCS library, and
    Python's key order (code points) and float spelling (``1e+16``) differ from it."""
    text = canonical_json(dict(args))
    if len(text) <= SUMMARY_MAX_CHARS:
        return text
    return text[:SUMMARY_MAX_CHARS] + SUMMARY_MARKER


def canonical_json(value: Any) -> str:
    """RFC 8785: object members sorted by their names' UTF-16 code units, no
    whitespace, strings escaped as JSON.stringify does (non-ASCII kept), numbers as
    ECMAScript's Number-to-String."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return _es_number(value)
    if isinstance(value, Mapping):
        members = sorted(value.items(), key=lambda kv: str(kv[0]).encode("utf-16-be"))
        return "{" + ",".join(f"{canonical_json(str(k))}:{canonical_json(v)}"
                              for k, v in members) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(canonical_json(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _es_number(number: int | float) -> str:
    """ECMAScript Number::toString of the IEEE double nearest ``number`` (RFC 8785
    3.2.2.3). An integer too large for a double keeps its decimal digits."""
    try:
        x = float(number)
    except OverflowError:
        return str(number)
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("NaN and Infinity are not JSON")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = (whole + frac).lstrip("0")
    point = len(whole) + (int(exp) if exp else 0)  # decimal point after `point` digits
    point -= len(whole + frac) - len((whole + frac).lstrip("0"))
    digits = digits.rstrip("0") or "0"
    k, n = len(digits), point
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * -n + digits
    else:
        e = n - 1
        text = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-")
        text += str(abs(e))
    return sign + text


def denial(message: str, detail: Mapping[str, Any]) -> ToolResult:
    return failure(APPROVAL_DENIED, message, dict(detail), terminal_for_attempt=True)


def spawn(board: Board, name: str, *, background: bool = False) -> tuple[Board, Agent]:
    number = board.agent_counter + 1
    agent = Agent(f"agent-{number}", name, background)
    return replace(board, agents=(*board.agents, agent), agent_counter=number), agent


def register_agent(
    board: Board, agent_id: str, name: str, *, background: bool = False
) -> Board:
    """Adopt an agent whose id the runtime assigned (e.g. the driver's ``agent-N``);
    registering the same id again is a no-op."""
    if any(a.id == agent_id for a in board.agents):
        return board
    return replace(board, agents=(*board.agents, Agent(agent_id, name, background)))


def raise_card(
    board: Board,
    owner_id: str,
    *,
    tool: str,
    action: str,
    args: Mapping[str, Any],
    reason: str,
    fields: Mapping[str, Any] | None = None,
) -> tuple[Board, Card]:
    """Raise a card for a call the decision said to ask about. Pushed live when the
    parent has a live request, otherwise queued for the next pull."""
    owner = board.agent(owner_id)
    if owner.stopped:
        raise CardError("AGENT-STOPPED", f"agent {owner_id!r} was stopped; it makes no calls")
    if owner.is_main and not board.parent_live:
        raise CardError(
            "PARENT-REQUEST-NOT-LIVE", "the main agent only acts inside a live request"
        )
    number = board.card_counter + 1
    card = Card(
        id=f"card-{number}",
        origin=Origin(owner.id, owner.name, subagent=not owner.is_main),
        tool=tool,
        action=action,
        summary=summarize_args(args),
        reason=reason,
        delivered=Delivery.PUSHED if board.parent_live else None,
        fields=tuple((fields or {}).items()),
    )
    return replace(board, cards=(*board.cards, card), card_counter=number), card


def _transition(card: Card, event: CardEvent) -> Card:
    new_state = CARD_TRANSITIONS.get((card.state, event))
    if new_state is None:
        raise CardError(
            "CARD-ALREADY-SETTLED", f"card {card.id} is already {card.state}; cannot {event}"
        )
    return replace(card, state=new_state, settled_by=SETTLED_BY[event])


def _denial_for(card: Card) -> ToolResult:
    if card.settled_by == "task-stop":
        message = f"{card.tool} was denied: the agent was stopped while waiting for approval"
    else:
        message = f"{card.tool} was denied by the user"
    return denial(message, {"card_id": card.id, "settled_by": card.settled_by})


def _replace_card(board: Board, card: Card) -> Board:
    return replace(board, cards=tuple(card if c.id == card.id else c for c in board.cards))


def settle(board: Board, card_id: str, event: CardEvent) -> tuple[Board, Settlement]:
    """The user approves or denies a card (OWNER_STOPPED is TaskStop's alone)."""
    if event is CardEvent.OWNER_STOPPED:
        raise CardError("CARD-EVENT-RESERVED", "owner-stopped is applied by TaskStop only")
    card = _transition(board.card(card_id), event)
    result = None if card.state is CardState.APPROVED else _denial_for(card)
    return _replace_card(board, card), Settlement(card, result)


def stop_agent(board: Board, agent_id: str) -> tuple[Board, tuple[Settlement, ...]]:
    """TaskStop: the agent ends and every pending card it owns settles as denied."""
    agent = board.agent(agent_id)
    if agent.is_main:
        raise CardError("AGENT-NOT-STOPPABLE", "TaskStop stops subagents, not the main agent")
    if agent.stopped:
        return board, ()
    settlements: list[Settlement] = []
    for card in board.pending(agent_id):
        settled = _transition(card, CardEvent.OWNER_STOPPED)
        board = _replace_card(board, settled)
        settlements.append(Settlement(settled, _denial_for(settled)))
    agents = tuple(replace(a, stopped=True) if a.id == agent_id else a for a in board.agents)
    return replace(board, agents=agents), tuple(settlements)


def pull(board: Board) -> tuple[Board, tuple[Card, ...]]:
    """A snapshot pull: delivers every pending card not delivered yet, exactly once.
    Settled cards are not delivered: there is nothing left to decide."""
    due = tuple(c for c in board.pending() if c.delivered is None)
    for card in due:
        board = _replace_card(board, replace(card, delivered=Delivery.PULLED))
    return board, tuple(board.card(c.id) for c in due)


def start_parent_request(board: Board) -> tuple[Board, tuple[Card, ...]]:
    """The parent's next request mounts: the live channel opens and the mount pull
    delivers what queued meanwhile."""
    if board.parent_live:
        raise CardError("PARENT-REQUEST-LIVE", "the parent already has a live request")
    return pull(replace(board, parent_live=True))


def end_parent_request(board: Board) -> Board:
    if not board.parent_live:
        raise CardError("PARENT-REQUEST-NOT-LIVE", "the parent has no live request to end")
    if board.pending(MAIN_AGENT_ID):
        raise CardError(
            "PARENT-REQUEST-BLOCKED", "the main agent is waiting on a card; settle it first"
        )
    return replace(board, parent_live=False)


CARD_ERROR_CODES = (
    "AGENT-NOT-FOUND",
    "AGENT-STOPPED",
    "AGENT-NOT-STOPPABLE",
    "CARD-NOT-FOUND",
    "CARD-ALREADY-SETTLED",
    "CARD-EVENT-RESERVED",
    "PARENT-REQUEST-LIVE",
    "PARENT-REQUEST-NOT-LIVE",
    "PARENT-REQUEST-BLOCKED",
)


# -- SPEC.md table (collected by capconf.simulator.spec_tables) --------------------------

def _card_lifecycle() -> str:
    rows = ["| from | event | to | settled_by |", "|---|---|---|---|"]
    for (state, event), to in CARD_TRANSITIONS.items():
        rows.append(f"| {state} | {event} | {to} | {SETTLED_BY[event]} |")
    return "\n".join(rows)


SPEC_TABLES: dict[str, Callable[[], str]] = {"approval-card-lifecycle": _card_lifecycle}
