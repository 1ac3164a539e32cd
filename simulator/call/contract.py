"""The call contract over a namespace context: resolve, stamp, deliver (CALL-01, 02, 04).

A call names a qualified function (``ns.fn``). Resolution answers in a fixed order, each
failure a CALL-03 envelope: not a qualified name or not visible on the channel ->
``unknown_function`` (a gated namespace is absent, exactly like a nonexistent one, NS-05);
visible but not loaded -> ``namespace_not_loaded`` (by design, NS-04: load, then call
again); a required argument missing -> ``invalid_arguments``. A function then delivers
by its catalogue entry: ``sync`` answers now; ``async`` answers a hand-off at once and its
result is injected into the context when it completes, with nothing to poll (CALL-02);
``ui`` answers only an ``embed_token`` (CALL-04): rendering is the client's. The catalogue
given to the simulator is fakes, so a sync function's content is its own call echoed back,
which is what lets concurrent results be matched to their calls.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.call.stamps import Stamp, Stamper
from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.namespaces.catalog import Delivery, Form, split_qualified
from capconf.simulator.namespaces.context import LOAD_FUNCTION, NamespaceContext, NamespaceState

ERROR_CODES: tuple[tuple[str, str, str], ...] = (
    # code, terminal_for_attempt, when
    ("unknown_function", "true", "not `namespace.function`, or no such function on this "
     "channel (a gated-off namespace is absent, not failing)"),
    ("namespace_not_loaded", "false", "the function's namespace is deferred and not loaded "
     "in this context; load it with `load_tool_namespace`, then call again"),
    ("unknown_namespace", "true", "`load_tool_namespace` named a namespace not visible on "
     "this channel; nothing was loaded"),
    ("invalid_arguments", "true", "a required argument is missing, an argument is not of "
     "its type, or the schema closes the object and an unknown argument is given"),
)

HANDOFF_OUTCOMES = ("completed", "failed", "cancelled")


@dataclass
class Handoff:
    handoff_id: str
    stamp: Stamp
    function: str
    pending: bool = True

    def value(self) -> dict[str, Any]:
        """The hand-off value an async call answers at once (shared with Task, SPEC 11a)."""
        return {"handoff": {"id": self.handoff_id, "request_id": self.stamp.request_id,
                            "kind": self.function, "state": "pending"}}


@dataclass
class Card:
    token: str
    function: str
    options: tuple[str, ...]


@dataclass
class CallRecord:
    """One context's call-side state: the current turn, what was injected, live hand-offs
    and issued embed tokens."""

    turn: Stamp
    transcript: list[dict[str, Any]] = field(default_factory=list)
    handoffs: dict[str, Handoff] = field(default_factory=dict)
    cards: dict[str, Card] = field(default_factory=dict)


@dataclass
class CallState:
    namespaces: NamespaceState
    stamper: Stamper = field(default_factory=Stamper)
    records: dict[str, CallRecord] = field(default_factory=dict)
    _handoffs: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _tokens: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def record(self, context: NamespaceContext) -> CallRecord:
        if context.context_id not in self.records:
            turn = self.stamper.turn()
            self.records[context.context_id] = CallRecord(turn, [
                {"kind": "user_message", "request_id": turn.request_id, "text": ""}])
        return self.records[context.context_id]

    def user_turn(self, context: NamespaceContext, text: str) -> dict[str, Any]:
        record = self.record(context)
        record.turn = self.stamper.turn()
        event = {"kind": "user_message", "request_id": record.turn.request_id, "text": text}
        record.transcript.append(event)
        return event

    # -- invoke ---------------------------------------------------------------------

    def stamp_for(self, context: NamespaceContext, on_behalf_of: str | None) -> Stamp:
        record = self.record(context)
        if on_behalf_of is None:
            return self.stamper.child(record.turn)
        return self.stamper.child(record.handoffs[on_behalf_of].stamp)

    def invoke(self, context: NamespaceContext, stamp: Stamp, function: str,
               args: Mapping[str, Any]) -> ToolResult:
        catalog = self.namespaces.catalog
        split = split_qualified(function)
        namespace = None
        if split is not None:
            namespace = next((n for n in catalog.visible(context.channel)
                              if n.name == split[0]), None)
        entry = None if namespace is None or split is None else namespace.function(split[1])
        if namespace is None or entry is None:
            return failure("unknown_function", f"there is no function {function!r} in this "
                           "session", {"function": function, "namespaces": [
                               n.name for n in catalog.visible(context.channel)]},
                           terminal_for_attempt=True)
        if namespace.form is not Form.CORE and namespace.name not in context.loaded:
            core = next(n.name for n in catalog.namespaces if n.form is Form.CORE
                        and n.function(LOAD_FUNCTION))
            return failure("namespace_not_loaded", f"namespace {namespace.name!r} is not "
                           "loaded in this context; load it first",
                           {"function": function, "namespace": namespace.name,
                            "load_with": f"{core}.{LOAD_FUNCTION}"},
                           terminal_for_attempt=False)
        problem = _argument_problem(entry.parameters, args)
        if problem is not None:
            return failure("invalid_arguments", problem, {"function": function},
                           terminal_for_attempt=True)
        if namespace.form is Form.CORE and entry.name == LOAD_FUNCTION:
            return context.load(catalog, args)
        return DELIVERIES[entry.delivery](self, context, stamp, function, args)

    def _sync(self, context: NamespaceContext, stamp: Stamp, function: str,
              args: Mapping[str, Any]) -> ToolResult:
        return success({"function": function, "args": dict(args)})

    def _async(self, context: NamespaceContext, stamp: Stamp, function: str,
               args: Mapping[str, Any]) -> ToolResult:
        handoff = Handoff(f"ho-{next(self._handoffs)}", stamp, function)
        self.record(context).handoffs[handoff.handoff_id] = handoff
        return success(handoff.value())

    def _ui(self, context: NamespaceContext, stamp: Stamp, function: str,
            args: Mapping[str, Any]) -> ToolResult:
        options = args.get("options")
        choices = tuple(options) if isinstance(options, list) and all(
            isinstance(o, str) for o in options) else ()
        card = Card(f"emb-{next(self._tokens)}", function, choices)
        self.record(context).cards[card.token] = card
        return success({"embed_token": card.token})

    # -- completion and click-back ------------------------------------------------------

    def finish(self, context: NamespaceContext, handoff_id: str, outcome: str,
               content: Any) -> dict[str, Any] | None:
        """The long task ends: its result is injected into the context, once."""
        handoff = self.record(context).handoffs.get(handoff_id)
        if handoff is None or not handoff.pending:
            return None
        handoff.pending = False
        event = {"kind": "handoff_result", "handoff_id": handoff_id,
                 "request_id": handoff.stamp.request_id, "outcome": outcome,
                 "content": content}
        self.record(context).transcript.append(event)
        return event

    def choose(self, context: NamespaceContext, token: str, option: int) -> dict[str, Any] | None:
        """A click on an option: its text, verbatim, is the user's next message."""
        card = self.record(context).cards.get(token)
        if card is None or not 0 <= option < len(card.options):
            return None
        return self.user_turn(context, card.options[option])


Delivery_ = Callable[[CallState, NamespaceContext, Stamp, str, Mapping[str, Any]], ToolResult]
DELIVERIES: dict[Delivery, Delivery_] = {
    Delivery.SYNC: CallState._sync,
    Delivery.ASYNC: CallState._async,
    Delivery.UI: CallState._ui,
}

_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


def _argument_problem(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    """Required keys present and top-level types right: enough to refuse a call that a
    schema-deferred function was guessed at, without a JSON Schema engine in the model."""
    missing = [k for k in schema.get("required", []) if k not in args]
    if missing:
        return f"missing required argument(s): {', '.join(missing)}"
    for key, value in args.items():
        spec = schema.get("properties", {}).get(key)
        if spec is None:
            if schema.get("additionalProperties", True) is False:
                return f"unknown argument {key!r}"
            continue
        check = _TYPES.get(spec.get("type", ""))
        if check is not None and not check(value):
            return f"argument {key!r} must be of type {spec['type']}"
    return None


def error_codes_markdown() -> str:
    lines = ["| error_code | terminal_for_attempt | when |", "|---|---|---|"]
    lines += [f"| `{c}` | {t} | {w} |" for c, t, w in ERROR_CODES]
    return "\n".join(lines)


SPEC_TABLES: dict[str, Callable[[], str]] = {"call-error-codes": error_codes_markdown}
