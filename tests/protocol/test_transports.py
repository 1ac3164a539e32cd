"""In-process and subprocess transports give identical results, byte for byte."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from suite_runner import RecordedRun

from capconf.conformance.client import InProcessTransport, SubprocessTransport
from capconf.conformance.reference import make_dispatcher

DEFINITIONS = Path(__file__).resolve().parent.parent / "definitions"


def _script(workspace: Path) -> list[dict[str, Any]]:
    requests: list[dict[str, Any]] = [
        {"op": "hello", "args": {}},
        {"op": "definition.parse", "args": {"source": "name: x"}},  # before world.setup
        {"op": "world.setup", "args": {"workspace": str(workspace)}},
        {"op": "registry.list", "args": {}},
        {"op": "world.setup", "args": {"workspace": str(workspace), "grantable": ["a", "A"]}},
        {"op": "world.setup", "args": {"workspace": str(workspace), "frame": "Frame."}},
        {"op": "no.such.op", "args": {}},
        {"op": "definition.parse", "args": {}},
    ]
    for path in sorted(DEFINITIONS.iterdir()):
        source = {"source": path.read_text(encoding="utf-8"), "filename": path.name}
        requests += [
            {"op": "definition.parse", "args": {**source, "mode": "parse"}},
            {"op": "definition.parse", "args": {**source, "mode": "save"}},
            {"op": "definition.save", "args": source},
            {"op": "prompt.assemble", "args": source},
            {"op": "tools.mounted", "args": source},
            {"op": "agent.spawn", "args": source},
        ]
    requests.append({"op": "tool.call", "args": {"agent": "agent-1", "tool": "read",
                                                 "args": {"path": "../etc/passwd"}}})
    return [{"id": i, **r} for i, r in enumerate(requests, start=1)]


def test_both_transports_answer_identically(tmp_path: Path) -> None:
    script = _script(tmp_path)
    inproc = InProcessTransport(make_dispatcher)
    sub = SubprocessTransport([sys.executable, "-m", "capconf.conformance.cli", "driver"],
                              timeout=30)
    try:
        a = [json.dumps(inproc.exchange(r), sort_keys=True) for r in script]
        b = [json.dumps(sub.exchange(r), sort_keys=True) for r in script]
    finally:
        sub.close()
    assert len(a) == len(script) > 60
    for request, left, right in zip(script, a, b, strict=True):
        assert left == right, f"request {request['id']} ({request['op']}) differs"
    assert sum('"ok": false' in x for x in a) >= 4  # the script exercises errors too


def test_full_suite_passes_over_subprocess(whole_suite_over_stdio: RecordedRun) -> None:
    run = whole_suite_over_stdio.run  # `capconf run --impl "capconf driver"` (conftest.py)
    assert run.returncode == 0, run.output[-3000:]
    assert run.cases and "failed" not in run.outcomes().values()
    assert run.header["implementation"]["name"] == "capconf-reference-simulator"
