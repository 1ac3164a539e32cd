"""Correct runtimes that differ from the reference where SPEC leaves the choice free
(issue 20, parts 2 and 3). Each must pass every case of the requirements it is run with,
or see a case it cannot serve as *not implemented*, never failed or errored."""

from __future__ import annotations

import json
from typing import Any

from bugs import Bug, args_of, envelope

VARIANTS: dict[str, Bug] = {}


def variant(fn: Bug) -> Bug:
    VARIANTS[fn.__name__] = fn
    return fn


def go_json(event: Any) -> str:
    """Go's encoding/json with sorted keys: non-ASCII escaped too, and `<>&`."""
    text = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@variant
def var_log_text_escaped(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    """The log's text form from an encoder that escapes non-ASCII and `<>&`."""
    resp = fwd(req)
    result = envelope(resp)
    if req.get("op") == "delegation.log" and result:
        result["text"] = "".join(go_json(e) + "\n" for e in result["events"])
    return resp


@variant
def var_envelope_request_id(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
    """Every tool call's envelope carries a session-unique request id (CALL-01)."""
    resp = fwd(req)
    result = envelope(resp)
    if req.get("op") in ("tool.call", "tool.call_many") and result:
        for env in result.get("results", [result]):
            px.state["n"] = px.state.get("n", 0) + 1
            env["request_id"] = f"call-{px.state['n']:06d}"
    return resp


@variant
def var_null_parent_before_first_turn(px: Any, req: dict[str, Any],
                                      fwd: Any) -> dict[str, Any]:
    """No turn is open when a context starts: calls before the first user message have
    `parent_request_id: null` (SPEC CALL-01, decision)."""
    turned: set[str] = px.state.setdefault("turned", set())
    resp = fwd(req)
    result = envelope(resp)
    op, args = req.get("op"), args_of(req)
    if op == "call.choose" and resp.get("ok"):
        turned.add(args.get("context"))
    elif op in ("call.invoke", "call.invoke_many") and result \
            and args.get("context") not in turned:
        calls = args.get("calls", []) if op == "call.invoke_many" else [args]
        stamped = result.get("results", []) if op == "call.invoke_many" else [result]
        for call, answer in zip(calls, stamped, strict=False):
            if not (isinstance(call, dict) and call.get("on_behalf_of")):
                answer["stamp"]["parent_request_id"] = None
    return resp


def _without(group: str, ops: tuple[str, ...], tools: tuple[str, ...]) -> Bug:
    def serve(px: Any, req: dict[str, Any], fwd: Any) -> dict[str, Any]:
        op, args = req.get("op"), args_of(req)
        if op in ops:
            return {"id": req.get("id"), "ok": False, "error": {
                "code": "not_implemented", "message": f"`{op}` is not implemented"}}
        if op == "tool.call" and args.get("tool") in tools:
            return {"id": req.get("id"), "ok": True, "result": {
                "ok": False, "error_code": "tool_not_mounted",
                "error_message": f"`{args['tool']}` is not mounted",
                "error_detail": {"tool": args["tool"], "mounted": []},
                "terminal_for_attempt": True, "retry_after_ms": None}}
        resp = fwd(req)
        result = envelope(resp)
        if op == "hello" and result:
            result["features"] = [f for f in result["features"] if f != group]
        return resp

    serve.__name__ = f"var_without_{group}"
    return serve


VARIANTS["var_without_memory"] = _without(
    "memory", ("tool.call_many", "memory.locate"),
    ("memory_read", "memory_write", "memory_search", "main_memory_write"))
VARIANTS["var_without_approval"] = _without(
    "approval", ("approval.decide", "cards.list", "card.decide", "task.stop",
                 "snapshot.pull", "parent.request.start", "parent.request.end"), ())
