"""Driver op of the memory area: ``tool.call_many``, concurrent tool calls (MEM-07).

The protocol is one request at a time, so "several delegations append at once" cannot be
expressed with ``tool.call``. This op takes a batch: calls of one agent (one delegation)
run one after another in list order, calls of different agents run at the same time, one
thread per agent, as parallel delegations do in a runtime. Running them concurrently is a
SHOULD, not a MUST (SPEC, ``tool.call_many``): the harness sees only results, so a
sequential implementation conforms; the reference runs them concurrently so that its own
serialisation is what the MEM-07 case exercises. Results come back in request order. It
is general (any mounted tool), but memory is the area that needs it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from capconf.simulator.protocol.core_ops import op_tool_call
from capconf.simulator.protocol.session import Handler, ProtocolError, Session

MAX_CALLS = 10000


def _validated(session: Session, args: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    calls = args.get("calls")
    if not isinstance(calls, list) or not 1 <= len(calls) <= MAX_CALLS:
        raise ProtocolError("bad_request", f"`calls` must be a list of 1 to {MAX_CALLS} calls",
                            ("args", "calls"))
    session.require_world()
    for index, call in enumerate(calls):
        where: tuple[str | int, ...] = ("args", "calls", index)
        if not isinstance(call, dict):
            raise ProtocolError("bad_request", "each call is an object {agent, tool, args}",
                                where)
        if call.get("agent") not in session.agents:
            raise ProtocolError("no_such_agent", f"no agent {call.get('agent')!r}",
                                (*where, "agent"))
        if not isinstance(call.get("tool"), str):
            raise ProtocolError("bad_request", "`tool` must be a string", (*where, "tool"))
        if not isinstance(call.get("args", {}), dict):
            raise ProtocolError("bad_request", "`args` must be an object", (*where, "args"))
    return calls


def op_tool_call_many(session: Session, args: Mapping[str, Any]) -> Any:
    calls = _validated(session, args)
    groups: dict[str, list[int]] = {}
    for index, call in enumerate(calls):
        groups.setdefault(str(call["agent"]), []).append(index)
    results: list[Any] = [None] * len(calls)
    failures: list[BaseException] = []
    start = threading.Barrier(len(groups))

    def run(indices: list[int]) -> None:
        start.wait()  # every delegation starts together, so they really overlap
        try:
            for index in indices:
                results[index] = op_tool_call(session, calls[index])
        except BaseException as exc:  # re-raised in the request thread below
            failures.append(exc)

    threads = [threading.Thread(target=run, args=(indices,)) for indices in groups.values()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
    return {"results": results}


OPS: dict[str, Handler] = {"tool.call_many": op_tool_call_many}
