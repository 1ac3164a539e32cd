"""Preferred skills and connectors per task type, and when to offer setting one (SKILL-09).

A user may pin a skill or a connector as the first choice for a kind of task ("my mail
provider is Gmail"). Asking for that is a nuisance, so the offer is throttled: at most
once per task type, and only after the task really completed an order or a booking (a
search or a quote shows nothing the user committed to). Nothing here runs a model: the
driver reports what happened, and these pure functions decide. A preference is a pointer,
never a permission: it cannot grant a skill the subagent does not declare, nor lift a gate
or an approval (section 7 of seed 001: permissions come from user messages and approval
cards only).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from capconf.simulator.core.names import ascii_fold, trim_name


class PreferenceKind(StrEnum):
    SKILL = "skill"
    CONNECTOR = "connector"


@dataclass(frozen=True)
class Preference:
    task_type: str
    kind: PreferenceKind
    name: str

    def to_json(self) -> dict[str, Any]:
        return {"task_type": self.task_type, "kind": str(self.kind), "name": self.name}


class TaskEvent(StrEnum):
    ORDER_COMPLETED = "order-completed"
    BOOKING_COMPLETED = "booking-completed"
    SEARCH = "search"
    QUOTE = "quote"
    ORDER_FAILED = "order-failed"
    ORDER_CANCELLED = "order-cancelled"
    OTHER_COMPLETED = "task-completed"


# SKILL-09: which reported events are "a real completed order or booking" (the only ones
# after which the offer may be made). Generated into SPEC.md (`skill-offer-events`).
EVENT_TABLE: tuple[tuple[TaskEvent, bool, str], ...] = (
    (TaskEvent.ORDER_COMPLETED, True, "an order was placed and confirmed"),
    (TaskEvent.BOOKING_COMPLETED, True, "a booking (travel, table, appointment) was confirmed"),
    (TaskEvent.SEARCH, False, "results were searched or compared; nothing was committed"),
    (TaskEvent.QUOTE, False, "a price or quote was obtained; nothing was committed"),
    (TaskEvent.ORDER_FAILED, False, "an order or booking was attempted and did not complete"),
    (TaskEvent.ORDER_CANCELLED, False, "an order or booking was cancelled before completing"),
    (TaskEvent.OTHER_COMPLETED, False, "the task finished without an order or booking"),
)
COMPLETED_TRANSACTIONS: frozenset[TaskEvent] = frozenset(
    e for e, counts, _ in EVENT_TABLE if counts)


class OfferReason(StrEnum):
    OFFERED = "offered"
    NOT_A_COMPLETED_TRANSACTION = "not-a-completed-transaction"
    ALREADY_ASKED = "already-asked"
    ALREADY_SET = "already-set"


# SKILL-09: the offer decision, checked in this order (first match decides).
OFFER_RULES: tuple[tuple[OfferReason, bool, str], ...] = (
    (OfferReason.NOT_A_COMPLETED_TRANSACTION, False,
     "the event is not a completed order or booking"),
    (OfferReason.ALREADY_SET, False, "a preference is already set for this task type"),
    (OfferReason.ALREADY_ASKED, False,
     "the offer was already made for this task type (whatever the answer)"),
    (OfferReason.OFFERED, True, "otherwise: offer now, and record the task type as asked"),
)


def task_key(task_type: str) -> str:
    """Task types compare like names: trimmed, ASCII case folded only."""
    return ascii_fold(trim_name(task_type))


@dataclass(frozen=True)
class PreferenceState:
    """What the session knows: the preferences set (one per task type, the last set
    wins) and the task types the offer was already made for."""

    preferences: tuple[Preference, ...] = ()
    offers_asked: tuple[str, ...] = ()

    def for_task(self, task_type: str) -> Preference | None:
        key = task_key(task_type)
        return next((p for p in self.preferences if task_key(p.task_type) == key), None)

    def asked(self, task_type: str) -> bool:
        key = task_key(task_type)
        return any(task_key(t) == key for t in self.offers_asked)

    def with_preference(self, preference: Preference) -> PreferenceState:
        key = task_key(preference.task_type)
        kept = tuple(p for p in self.preferences if task_key(p.task_type) != key)
        return replace(self, preferences=(*kept, preference))

    def preferred_for(self, kind: PreferenceKind, name: str) -> tuple[str, ...]:
        """The task types this item is the preferred choice for, in the order set."""
        key = ascii_fold(trim_name(name))
        return tuple(p.task_type for p in self.preferences
                     if p.kind is kind and ascii_fold(trim_name(p.name)) == key)


@dataclass(frozen=True)
class OfferDecision:
    offer: bool
    reason: OfferReason
    task_type: str
    event: TaskEvent

    def to_json(self) -> dict[str, Any]:
        return {"offer": self.offer, "reason": str(self.reason), "task_type": self.task_type,
                "event": str(self.event)}


def decide_offer(state: PreferenceState, task_type: str, event: TaskEvent
                 ) -> tuple[OfferDecision, PreferenceState]:
    """Whether to offer setting a preference now, and the state afterwards (the task type
    is recorded as asked only when the offer is made)."""
    if event not in COMPLETED_TRANSACTIONS:
        reason = OfferReason.NOT_A_COMPLETED_TRANSACTION
    elif state.for_task(task_type) is not None:
        reason = OfferReason.ALREADY_SET
    elif state.asked(task_type):
        reason = OfferReason.ALREADY_ASKED
    else:
        decision = OfferDecision(True, OfferReason.OFFERED, task_type, event)
        return decision, replace(state, offers_asked=(*state.offers_asked, task_type))
    return OfferDecision(False, reason, task_type, event), state


def events_table() -> str:
    rows = ["| event | completed order or booking | meaning |", "|---|---|---|"]
    rows += [f"| `{e}` | {'yes' if counts else 'no'} | {meaning} |"
             for e, counts, meaning in EVENT_TABLE]
    return "\n".join(rows)


def offer_table() -> str:
    rows = ["| order | reason | offer | when |", "|---|---|---|---|"]
    rows += [f"| {i} | `{r}` | {'yes' if offer else 'no'} | {when} |"
             for i, (r, offer, when) in enumerate(OFFER_RULES, start=1)]
    return "\n".join(rows)
