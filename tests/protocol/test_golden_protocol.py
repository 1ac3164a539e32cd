"""A real driver-protocol session, as a golden: what an adapter author reads first.

The transcript is produced by the reference through the same JSON framing the stdio
transport uses, with the temporary workspace path replaced by `/WORKSPACE`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from capconf.conformance.reference import make_dispatcher

DEFINITION = """---
name: researcher
description: Finds answers in the handbook.
tools: Read, WEBFETCH, WebSearch
knowledge:
  - {name: handbook, glob: docs/**/*.md}
---
Answer from the handbook; cite path:line.
"""


def test_transcript(golden: Any, tmp_path: Path) -> None:
    workspace = str(tmp_path)
    with open(f"{workspace}/guide.md", "w", encoding="utf-8") as handle:
        handle.write("# Guide\nRefunds take 30 days.\n")
    requests: list[dict[str, Any]] = [
        {"id": 1, "op": "hello", "args": {}},
        {"id": 2, "op": "world.setup", "args": {"workspace": workspace,
                                                "frame": "You are a subagent."}},
        {"id": 3, "op": "definition.parse", "args": {"source": DEFINITION,
                                                     "filename": "researcher.md",
                                                     "mode": "parse"}},
        {"id": 4, "op": "prompt.assemble", "args": {"source": DEFINITION,
                                                    "filename": "researcher.md"}},
        {"id": 5, "op": "agent.spawn", "args": {"source": DEFINITION,
                                                "filename": "researcher.md"}},
        {"id": 6, "op": "tool.call", "args": {"agent": "agent-1", "tool": "read",
                                              "args": {"path": "guide.md"}}},
        {"id": 7, "op": "tool.call", "args": {"agent": "agent-1", "tool": "WebSearch",
                                              "args": {"query": "refunds"}}},
        {"id": 8, "op": "no.such.op", "args": {}},
    ]
    dispatcher = make_dispatcher()
    lines = []
    for request in requests:
        response = dispatcher.handle(json.loads(json.dumps(request)))
        lines.append("-> " + json.dumps(request, ensure_ascii=False))
        lines.append("<- " + json.dumps(response, ensure_ascii=False, sort_keys=True))
    text = "\n".join(lines).replace(workspace, "/WORKSPACE") + "\n"
    assert text == golden
