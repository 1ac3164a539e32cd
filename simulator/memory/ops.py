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

from capconf.simulator.compose.live_agents import compile_from_args, op_tool_call, unloadable
from capconf.simulator.compose.session import Handler, ProtocolError, Session, read_mode
from capconf.simulator.memory.binding import MemoryBinding

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


def op_memory_locate(session: Session, args: Mapping[str, Any]) -> Any:
    """Where a definition's memory tools would be bound, workspace-relative, or null.

    The private-memory layout is the implementation's own choice (TEXT-02), so a harness
    that plants or inspects memory files must ask rather than assume ``<root>/<name>/``.
    The answer comes from the same compile that mounts the tools, so it cannot drift from
    where ``memory_write`` really writes (the MEM-04 layout case cross-checks it).
    """
    view = compile_from_args(session, args, read_mode(args))
    if view.definition is None:
        raise unloadable(view)
    outcome = view.outcomes.get("memory")
    binding = outcome.state if outcome is not None else None
    directory = binding.directory.as_posix() if isinstance(binding, MemoryBinding) else None
    return {"directory": directory}


OPS: dict[str, Handler] = {"tool.call_many": op_tool_call_many,
                           "memory.locate": op_memory_locate}
