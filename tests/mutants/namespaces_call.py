"""Mutants of the namespaces area and the call contract (NS-01..05, CALL-01, 02, 04)."""

from __future__ import annotations

from typing import Any

from mutants.base import Mutant, _original, _patch


def _bare_names() -> None:
    """A bare function name resolves to the first namespace that has it."""
    from capconf.simulator.call import contract

    real = _original(contract, "split_qualified")

    def buggy(name: str) -> tuple[str, str] | None:
        return real(name) or (("muse", name) if "." not in name and "__" not in name else None)

    _patch(contract, "split_qualified", buggy)


def _eager_surface() -> None:
    """Every namespace is injected fully at start: deferral is never applied."""
    from capconf.simulator.namespaces import surface

    _patch(surface, "is_loaded", lambda namespace, loaded: True)


def _load_forgets() -> None:
    """load_tool_namespace answers ok but the schemas do not stay in the context."""
    from capconf.simulator.namespaces.context import NamespaceContext

    real = _original(NamespaceContext, "load")

    def buggy(self: Any, catalog: Any, args: Any) -> Any:
        before = set(self.loaded)
        result = real(self, catalog, args)
        self.loaded.intersection_update(before)
        return result

    _patch(NamespaceContext, "load", buggy)


def _core_deferred_on_side() -> None:
    """On a side chat the core namespace is deferred like any other."""
    from capconf.simulator.namespaces import ops, surface

    real = _original(surface, "surface")

    def buggy(catalog: Any, channel: str, loaded: Any) -> Any:
        shown = real(catalog, channel, loaded)
        if channel != "main":
            for entry in shown:
                if entry["loaded"] and entry["namespace"] not in set(loaded):
                    entry["loaded"] = False
                    entry.pop("functions", None)
        return shown

    _patch(ops, "surface", buggy)


class _Everything(set[str]):
    def __contains__(self, item: object) -> bool:
        return True


def _unloaded_runs() -> None:
    """Deferral is cosmetic: an unloaded function runs anyway."""
    from capconf.simulator.call.contract import CallState

    real = _original(CallState, "invoke")

    def buggy(self: Any, context: Any, stamp: Any, function: str, args: Any) -> Any:
        kept = context.loaded
        context.loaded = _Everything(kept)
        try:
            return real(self, context, stamp, function, args)
        finally:
            context.loaded = kept

    _patch(CallState, "invoke", buggy)


def _schemas_form_leaks() -> None:
    """A schema-deferred namespace shows its parameters before it is loaded."""
    from capconf.simulator.namespaces import surface
    from capconf.simulator.namespaces.catalog import Form

    real = _original(surface, "entry")

    def buggy(namespace: Any, loaded: bool) -> Any:
        return real(namespace, loaded or namespace.form is Form.SCHEMAS)

    _patch(surface, "entry", buggy)


def _gated_visible() -> None:
    """Channel gating is ignored: a side chat sees every namespace."""
    from capconf.simulator.namespaces.catalog import Catalog

    _patch(Catalog, "visible", lambda self, channel: self.namespaces)


def _gated_fails_differently() -> None:
    """A gated namespace is present-and-failing: it answers its own `gated` error."""
    from capconf.simulator.call.contract import CallState
    from capconf.simulator.core.envelope import failure

    real = _original(CallState, "invoke")

    def buggy(self: Any, context: Any, stamp: Any, function: str, args: Any) -> Any:
        ns = function.partition(".")[0]
        namespace = self.namespaces.catalog.namespace(ns)
        if namespace is not None and context.channel not in namespace.channels:
            return failure("namespace_gated", "not on this channel", {"namespace": ns})
        return real(self, context, stamp, function, args)

    _patch(CallState, "invoke", buggy)


def _shared_request_id() -> None:
    """Calls of one turn share the turn's request_id: concurrent results cross."""
    from capconf.simulator.call.stamps import Stamp, Stamper

    def buggy(self: Any, parent: Stamp) -> Stamp:
        return Stamp(parent.request_id + "-call", parent.request_id, parent.trace_id,
                     parent.span_id + "1")

    _patch(Stamper, "child", buggy)


def _orphan_handoff_calls() -> None:
    """Calls made for a hand-off are parented to the turn, not to the hand-off."""
    from capconf.simulator.call.contract import CallState

    def buggy(self: Any, context: Any, on_behalf_of: Any) -> Any:
        return self.stamper.child(self.record(context).turn)

    _patch(CallState, "stamp_for", buggy)


def _injected_at_once() -> None:
    """The async function's 'result' is injected immediately: a fabricated completion."""
    from capconf.simulator.call.contract import DELIVERIES, CallState
    from capconf.simulator.namespaces.catalog import Delivery

    real = DELIVERIES[Delivery.ASYNC]

    def buggy(self: CallState, context: Any, stamp: Any, function: str, args: Any) -> Any:
        result = real(self, context, stamp, function, args)
        self.record(context).transcript.append({
            "kind": "handoff_result", "handoff_id": result.content["handoff"]["id"],
            "request_id": stamp.request_id, "outcome": "completed", "content": None})
        return result

    DELIVERIES[Delivery.ASYNC] = buggy


def _injected_twice() -> None:
    """Finishing a hand-off twice injects its result twice."""
    from capconf.simulator.call.contract import CallState

    real = _original(CallState, "finish")

    def buggy(self: Any, context: Any, handoff_id: str, outcome: str, content: Any) -> Any:
        handoff = self.record(context).handoffs.get(handoff_id)
        if handoff is not None:
            handoff.pending = True
        return real(self, context, handoff_id, outcome, content)

    _patch(CallState, "finish", buggy)


def _option_stripped() -> None:
    """The chosen option's text is trimmed on the way back."""
    from capconf.simulator.call.contract import CallState

    real = _original(CallState, "user_turn")
    _patch(CallState, "user_turn",
           lambda self, context, text: real(self, context, text.strip()))


def _any_token() -> None:
    """An unknown embed_token is taken as the most recent card."""
    from capconf.simulator.call.contract import CallState

    real = _original(CallState, "choose")

    def buggy(self: Any, context: Any, token: str, option: int) -> Any:
        cards = self.record(context).cards
        with_options = [t for t, card in cards.items() if card.options]
        if token not in cards and with_options:
            token = with_options[-1]
        return real(self, context, token, option)

    _patch(CallState, "choose", buggy)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("ns-bare-names", "a bare function name resolves into the core namespace",
           ("NS-01",), _bare_names),
    Mutant("ns-eager", "every namespace is injected fully at start", ("NS-02",), _eager_surface),
    Mutant("ns-load-forgets", "loaded schemas do not persist in the context", ("NS-02",),
           _load_forgets),
    Mutant("ns-core-deferred-on-side", "the core namespace is deferred on a side chat",
           ("NS-03",), _core_deferred_on_side),
    Mutant("ns-unloaded-runs", "an unloaded function runs anyway", ("NS-04",), _unloaded_runs),
    Mutant("ns-schemas-form-leaks", "a schema-deferred namespace shows parameters",
           ("NS-04",), _schemas_form_leaks),
    Mutant("ns-gated-visible", "a side chat sees every namespace", ("NS-05",), _gated_visible),
    Mutant("ns-gated-fails", "a gated namespace is present and fails with its own error",
           ("NS-05",), _gated_fails_differently),
    Mutant("call-shared-request-id", "calls of one turn share a request_id", ("CALL-01",),
           _shared_request_id),
    Mutant("call-orphan-handoff-calls", "hand-off work is parented to the turn",
           ("CALL-01",), _orphan_handoff_calls),
    Mutant("call-injected-at-once", "an async result is injected before it completes",
           ("CALL-02",), _injected_at_once),
    Mutant("call-injected-twice", "a hand-off result can be injected twice", ("CALL-02",),
           _injected_twice),
    Mutant("call-option-stripped", "the chosen option's text is trimmed", ("CALL-04",),
           _option_stripped),
    Mutant("call-any-token", "an unknown embed_token answers the latest card", ("CALL-04",),
           _any_token),
)
