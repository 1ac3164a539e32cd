"""Driver ops of the call contract (feature group ``call``), over a context that
``ns.open`` opened: ``call.invoke`` and ``call.invoke_many`` (stamped calls),
``call.finish`` (a long task completes: its result is injected), ``call.choose`` (the user
clicks an option), ``call.transcript`` (what was injected into the context). Op names are
``call.*`` so the delegation area's Task hand-off ops stay distinct.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from capconf.simulator.call.contract import HANDOFF_OUTCOMES, CallState
from capconf.simulator.compose.session import Handler, ProtocolError, Session
from capconf.simulator.namespaces.context import NamespaceContext
from capconf.simulator.namespaces.ops import context, state

KEY = "call"
MAX_CALLS = 1000


def _state(session: Session) -> CallState:
    found = session.state.get(KEY)
    if not isinstance(found, CallState):
        found = CallState(state(session))
        session.state[KEY] = found
    return found


def _one(session: Session, ctx: NamespaceContext, call: Any,
         where: tuple[str | int, ...]) -> dict[str, Any]:
    if not isinstance(call, Mapping) or not isinstance(call.get("function"), str):
        raise ProtocolError("bad_request", "a call is {function, args?, on_behalf_of?}", where)
    args = call.get("args", {})
    if not isinstance(args, dict):
        raise ProtocolError("bad_request", "`args` must be an object", (*where, "args"))
    st = _state(session)
    behalf = call.get("on_behalf_of")
    if behalf is not None and behalf not in st.record(ctx).handoffs:
        raise ProtocolError("no_such_handoff", f"no hand-off {behalf!r} in this context",
                            (*where, "on_behalf_of"))
    stamp = st.stamp_for(ctx, behalf)
    result = st.invoke(ctx, stamp, call["function"], args)
    return {"stamp": stamp.to_json(), "result": result.to_json()}


def op_call_invoke(session: Session, args: Mapping[str, Any]) -> Any:
    return _one(session, context(session, args), args, ("args",))


def op_call_invoke_many(session: Session, args: Mapping[str, Any]) -> Any:
    """Calls issued together in one turn: each is stamped before any runs, so they are
    in flight at once and only their request_ids tell them apart."""
    ctx = context(session, args)
    calls = args.get("calls")
    if not isinstance(calls, list) or not 1 <= len(calls) <= MAX_CALLS:
        raise ProtocolError("bad_request", f"`calls` must be a list of 1 to {MAX_CALLS} calls",
                            ("args", "calls"))
    return {"results": [_one(session, ctx, c, ("args", "calls", i))
                        for i, c in enumerate(calls)]}


def op_call_finish(session: Session, args: Mapping[str, Any]) -> Any:
    ctx = context(session, args)
    outcome = args.get("outcome", "completed")
    if outcome not in HANDOFF_OUTCOMES:
        raise ProtocolError("bad_request", f"`outcome` must be one of {list(HANDOFF_OUTCOMES)}",
                            ("args", "outcome"))
    event = _state(session).finish(ctx, str(args.get("handoff")), str(outcome),
                                   args.get("content"))
    if event is None:
        raise ProtocolError("no_such_handoff", f"no pending hand-off {args.get('handoff')!r}",
                            ("args", "handoff"))
    return {"injected": event}


def op_call_choose(session: Session, args: Mapping[str, Any]) -> Any:
    ctx = context(session, args)
    option = args.get("option")
    if not isinstance(option, int) or isinstance(option, bool):
        raise ProtocolError("bad_request", "`option` must be the index of an option",
                            ("args", "option"))
    message = _state(session).choose(ctx, str(args.get("embed_token")), option)
    if message is None:
        raise ProtocolError("no_such_option", "no option card with that embed_token and "
                            "option in this context", ("args", "embed_token"))
    return {"message": message}


def op_call_transcript(session: Session, args: Mapping[str, Any]) -> Any:
    ctx = context(session, args)
    return {"events": list(_state(session).record(ctx).transcript)}


OPS: dict[str, Handler] = {
    "call.invoke": op_call_invoke,
    "call.invoke_many": op_call_invoke_many,
    "call.finish": op_call_finish,
    "call.choose": op_call_choose,
    "call.transcript": op_call_transcript,
}
