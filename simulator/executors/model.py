"""Executors and their workers (BIN-01..03), as values, and the one CLI contract.

Three states, checked in order, each with its own reason (BIN-01): provisioned (the
binary is on the host), revealed (this channel's cell can see it), usable (its account is
connected). Two independent walls stop a direct dial of a worker (BIN-03): the channel
reveal that ``run`` checks, and the worker's own access list that every path checks, so
bypassing the first still meets the second. Every answer, success or not, is JSON in the
CALL-03 envelope (BIN-02).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.simulator.core import wire
from capconf.simulator.core.envelope import ToolResult, failure, success

STATES: tuple[tuple[str, str], ...] = (
    ("not_provisioned", "the executor is not installed on the host; nothing can reveal it"),
    ("not_revealed", "the executor exists on the host but this channel's cell is not shown it"),
    ("not_usable", "revealed, but its account is not connected (or not permitted)"),
)


@dataclass(frozen=True)
class Executor:
    name: str
    provisioned: bool
    channels: frozenset[str]
    worker: str
    connector: str | None
    methods: Mapping[str, Mapping[str, Any]]
    shortcuts: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Worker:
    name: str
    acl: frozenset[str]
    """Principals that may connect to the worker's socket (its file ACL)."""


@dataclass
class ExecutorWorld:
    executors: dict[str, Executor]
    workers: dict[str, Worker]
    connected: dict[str, bool]
    broker: str = "broker"
    """The principal the runtime's own broker dials workers as on the normal path."""

    def state_refusal(self, name: str, channel: str) -> ToolResult | None:
        executor = self.executors.get(name)
        if executor is None or not executor.provisioned:
            return failure("not_provisioned", STATES[0][1], {"executor": name},
                           terminal_for_attempt=True)
        if channel not in executor.channels:
            return failure("not_revealed", STATES[1][1], {"executor": name, "channel": channel},
                           terminal_for_attempt=True)
        if executor.connector is not None and not self.connected.get(executor.connector):
            return failure("not_usable", STATES[2][1], {"executor": name,
                                                        "connector": executor.connector},
                           terminal_for_attempt=True)
        return None

    def acl_refusal(self, worker_name: str, principal: str) -> ToolResult | None:
        worker = self.workers.get(worker_name)
        if worker is None or principal not in worker.acl:
            return failure("worker_access_denied", "the worker's socket does not admit this "
                           "caller", {"worker": worker_name, "principal": principal},
                           terminal_for_attempt=True)
        return None

    def run(self, channel: str, name: str, argv: list[str]) -> ToolResult:
        """The normal path: the channel's reveal, then the broker through the worker's
        access list, then the CLI."""
        refusal = self.state_refusal(name, channel)
        if refusal is not None:
            return refusal
        executor = self.executors[name]
        refusal = self.acl_refusal(executor.worker, self.broker)
        if refusal is not None:
            return refusal
        return cli(executor, argv)

    def dial(self, principal: str, worker_name: str, method: str,
             params: Mapping[str, Any]) -> ToolResult:
        """A direct connection to a worker's socket, bypassing every executor: only the
        worker's own access list stands in the way."""
        refusal = self.acl_refusal(worker_name, principal)
        if refusal is not None:
            return refusal
        return success({"worker": worker_name, "method": method, "params": dict(params)})


def _help(executor: Executor) -> ToolResult:
    return success({"executor": executor.name,
                    "commands": [*executor.shortcuts, *executor.methods, "schema", "--help"]})


def _params(text: str) -> Any:
    """``--params`` is read as a request is (PROTO-03): a model writes it, so NaN, a lone
    surrogate, deep nesting or a huge integer is the caller's ``invalid_arguments``, never
    a value the envelope cannot carry."""
    value = wire.decode_text(text)
    if isinstance(value, wire.WireError):
        return failure("invalid_arguments", f"--params is not JSON: {value.message}", {},
                       terminal_for_attempt=True)
    found = wire.find_problem(value)
    if found is not None:
        where = "/".join(str(p) for p in found[0])
        return failure("invalid_arguments", f"--params {'`' + where + '` ' if where else ''}"
                       f"{found[1]}", {"path": [str(p) for p in found[0]]},
                       terminal_for_attempt=True)
    return value


def _invoke(executor: Executor, method: str, rest: list[str]) -> ToolResult:
    params: Any = {}
    if rest:
        if len(rest) != 2 or rest[0] != "--params":
            return failure("invalid_arguments", "usage: <method> [--params JSON]",
                           {"argv": rest}, terminal_for_attempt=True)
        params = _params(rest[1])
        if isinstance(params, ToolResult):
            return params
        if not isinstance(params, dict):
            return failure("invalid_arguments", "--params must be a JSON object", {},
                           terminal_for_attempt=True)
    missing = [k for k in executor.methods[method].get("required", []) if k not in params]
    if missing:
        return failure("invalid_arguments", f"missing {', '.join(missing)}",
                       {"method": method, "missing": missing}, terminal_for_attempt=True)
    return success({"executor": executor.name, "method": method, "params": params})


def cli(executor: Executor, argv: list[str]) -> ToolResult:
    """One contract for every executor: ``--help``, ``schema <method>``, ``+shortcut``,
    ``<method> [--params JSON]``; anything else is ``unknown_command``."""
    if not argv or argv == ["--help"]:
        return _help(executor)
    head, rest = argv[0], argv[1:]
    if head == "schema":
        if len(rest) == 1 and rest[0] in executor.methods:
            return success({"method": rest[0], "parameters": dict(executor.methods[rest[0]])})
        return failure("unknown_command", "schema <method>: no such method",
                       {"argv": argv, "methods": list(executor.methods)},
                       terminal_for_attempt=True)
    if head.startswith("+"):
        if head not in executor.shortcuts:
            return failure("unknown_command", f"no shortcut {head}",
                           {"argv": argv, "shortcuts": list(executor.shortcuts)},
                           terminal_for_attempt=True)
        head = executor.shortcuts[head]
    if head not in executor.methods:
        return failure("unknown_command", f"no command {head}",
                       {"argv": argv, "commands": [*executor.shortcuts, *executor.methods]},
                       terminal_for_attempt=True)
    if rest == ["--help"]:
        return success({"method": head, "parameters": dict(executor.methods[head])})
    return _invoke(executor, head, rest)


def states_markdown() -> str:
    lines = ["| order | reason | when |", "|---|---|---|"]
    lines += [f"| {i} | `{code}` | {text} |" for i, (code, text) in enumerate(STATES, 1)]
    lines.append("| 4 | `worker_access_denied` | the worker's socket ACL does not admit the "
                 "caller (checked on every path, including a direct dial) |")
    return "\n".join(lines)


SPEC_TABLES: Mapping[str, Callable[[], str]] = {"executor-states": states_markdown}
