"""Records what each conformance case sends: a pytest plugin and an in-process
implementation in one module (tests/conformance/test_case_groups.py runs the suite with both).

`capconf run --impl python:case_recorder:make -- -p case_recorder` serves the reference
simulator in-process and notes, for every case, the ops it sent, the keys of its
`world.setup` requests and the tools it called, together with the feature groups the
case is gated on. With any other ``--impl`` (``capconf driver`` over stdio: the one
whole-suite run that tests/protocol/test_transports.py and
tests/conformance/test_case_groups.py share) the plugin notes the same at the client's
end, every request a ``SubprocessTransport`` sends.
At the end of the session the record is written as JSON to the file
named by ``CAPCONF_CASE_RECORD``. Recording what a case really sends (through every
helper it calls) is what makes the gating test complete; reading the suite's source
would miss the ops a shared helper sends.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from capconf.conformance.plugin import case_groups, case_id


@dataclass
class CaseRecord:
    """What one case used, and the groups it is gated on."""

    groups: list[str]
    ops: set[str] = field(default_factory=set)
    world_keys: set[str] = field(default_factory=set)
    tools: set[str] = field(default_factory=set)

    def as_json(self) -> dict[str, list[str]]:
        return {"groups": self.groups, "ops": sorted(self.ops),
                "world_keys": sorted(self.world_keys), "tools": sorted(self.tools)}


class _State:
    current: ClassVar[str | None] = None
    records: ClassVar[dict[str, CaseRecord]] = {}


def _note(request: Any) -> None:
    record = _State.records.get(_State.current or "")
    if record is None or not isinstance(request, dict):
        return
    op, args = request.get("op"), request.get("args")
    if not isinstance(op, str):
        return
    record.ops.add(op)
    if not isinstance(args, dict):
        return
    if op == "world.setup":
        record.world_keys.update(str(k) for k in args)
    if op in ("tool.call", "tool.call_many"):
        calls = args.get("calls") if op == "tool.call_many" else [args]
        for one in calls if isinstance(calls, list) else []:
            if isinstance(one, dict) and isinstance(one.get("tool"), str):
                record.tools.add(one["tool"])


class Recorder:
    """The reference dispatcher, with every request noted against the running case."""

    def __init__(self) -> None:
        from capconf.simulator.protocol.dispatcher import Dispatcher

        self.inner = Dispatcher()

    def handle(self, request: Any) -> Any:
        _note(request)
        return self.inner.handle(request)

    def handle_line(self, line: bytes) -> Any:
        # a malformed line: the protocol cases that send one use only core ops
        with contextlib.suppress(ValueError, RecursionError):
            _note(json.loads(line))
        return self.inner.handle_line(line)


def make() -> Recorder:
    return Recorder()


def pytest_configure(config: pytest.Config) -> None:
    """Note what goes over every stdio transport too (an implementation that is not the
    in-process ``Recorder``)."""
    from capconf.conformance.client import SubprocessTransport

    exchange, exchange_raw = SubprocessTransport.exchange, SubprocessTransport.exchange_raw

    def noted_exchange(self: SubprocessTransport, request: dict[str, Any]) -> dict[str, Any]:
        _note(request)
        return exchange(self, request)

    def noted_raw(self: SubprocessTransport, sent: bytes, op: str = "raw line") -> dict[str, Any]:
        with contextlib.suppress(ValueError, RecursionError):
            _note(json.loads(sent))
        return exchange_raw(self, sent, op)

    SubprocessTransport.exchange = noted_exchange  # type: ignore[method-assign]
    SubprocessTransport.exchange_raw = noted_raw  # type: ignore[method-assign]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    cid = case_id(item) or item.nodeid
    _State.current = cid
    _State.records.setdefault(cid, CaseRecord(sorted(case_groups(item))))


def pytest_sessionfinish(session: pytest.Session) -> None:
    target = os.environ.get("CAPCONF_CASE_RECORD")
    if target:
        data = {cid: rec.as_json() for cid, rec in sorted(_State.records.items())}
        with open(target, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)
