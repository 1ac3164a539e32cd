"""The driver against the real binary, end to end over its stdin/stdout: one probe and one
agent with two calls. Each assertion names a bug a broken relay would have."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent.parent
BINARY = HERE / "node_modules" / "@anthropic-ai" / "claude-code-linux-x64" / "claude"


@pytest.mark.skipif(not BINARY.is_file(), reason="Claude Code not installed (npm ci ...)")
def test_a_probe_and_an_agent_are_answered_from_claude_code(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    src = "---\nname: w\ndescription: a worker\ntools: read, Nope\n---\nBody text.\n"
    lines = [{"id": 1, "op": "hello"},
             {"id": 2, "op": "world.setup", "args": {"workspace": str(tmp_path)}},
             {"id": 3, "op": "definition.parse", "args": {"source": src}},
             {"id": 4, "op": "agent.spawn", "args": {"source": src}},
             {"id": 5, "op": "tool.call", "args": {"agent": "agent-1", "tool": "read",
                                                   "args": {"path": "a.txt"}}},
             {"id": 6, "op": "tool.call", "args": {"agent": "agent-1", "tool": "write",
                                                   "args": {"path": "b.txt", "content": "x"}}},
             {"id": 7, "op": "shutdown"}]
    done = subprocess.run([sys.executable, str(HERE / "driver.py")],
                          input="".join(json.dumps(x) + "\n" for x in lines),
                          capture_output=True, text=True, timeout=180, check=False)
    out = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    assert out[1]["result"]["implementation"]["version"].startswith("2.1.328")
    parsed = out[3]["result"]
    # the grant is Claude Code's: Read granted, the unknown name dropped (not repaired)
    assert parsed["loaded"] is True and parsed["tools"] == ["read"]
    assert parsed["definition"]["body"] == "Body text."
    assert out[4]["result"]["tools"] == ["read"]
    # the read ran in Claude Code and its own text came back
    assert out[5]["result"]["ok"] is True and "hello" in out[5]["result"]["content"]
    # write is not granted: Claude Code's refusal, read as tool_not_mounted
    assert out[6]["result"]["error_code"] == "tool_not_mounted"
    assert not (tmp_path / "b.txt").exists()
