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


@pytest.mark.skipif(not BINARY.is_file(), reason="Claude Code not installed (npm ci ...)")
def test_claude_codes_own_asks_become_cards_and_its_answers_settle_them(
        tmp_path: Path) -> None:
    """Bugs: a card the adapter makes up (Claude Code never asked), an approved call the
    adapter runs itself, a denial that is not APPROVAL-DENIED, a stop that leaves the
    blocked call hanging; and the evidence of finding `ask-blocks-the-agent`: while its
    ask waits, Claude Code's agent sends no model request, so it makes no other call."""
    src = "---\nname: writer\ndescription: d\ntools: write, bash\n---\nWork.\n"

    def call(i: int, tool: str, **a: object) -> dict[str, object]:
        return {"id": i, "op": "tool.call", "args": {"agent": "agent-1", "tool": tool,
                                                     "args": a}}
    lines = [{"id": 1, "op": "hello"},
             {"id": 2, "op": "world.setup", "args": {"workspace": str(tmp_path)}},
             {"id": 3, "op": "agent.spawn", "args": {"source": src}},
             call(4, "write", path="a.txt", content="one"),
             {"id": 5, "op": "cards.list"},
             call(6, "bash", command="true"),
             {"id": 7, "op": "card.decide", "args": {"card": "card-1", "decision": "approve"}},
             call(8, "write", path="b.txt", content="two"),
             {"id": 9, "op": "card.decide", "args": {"card": "card-2", "decision": "deny"}},
             {"id": 10, "op": "card.decide", "args": {"card": "card-2",
                                                      "decision": "approve"}},
             call(11, "write", path="c.txt", content="three"),
             {"id": 12, "op": "task.stop", "args": {"agent": "agent-1"}},
             {"id": 13, "op": "cards.list"},
             {"id": 14, "op": "shutdown"}]
    done = subprocess.run([sys.executable, str(HERE / "driver.py")],
                          input="".join(json.dumps(x) + "\n" for x in lines),
                          capture_output=True, text=True, timeout=240, check=False)
    out = {r["id"]: r for r in map(json.loads, done.stdout.splitlines())}
    pending = out[4]["result"]
    assert pending["error_code"] == "APPROVAL-PENDING", pending
    card = pending["error_detail"]["card"]
    assert (card["tool"], card["action"], card["summary"]) == (
        "write", "write", '{"content":"one","path":"a.txt"}')
    assert card["claude_code_ask"]["tool_name"] == "Write"
    assert [c["id"] for c in out[5]["result"]["cards"]] == ["card-1"]
    assert out[5]["result"]["agents"][0]["status"] == "suspended"
    assert out[6]["error"]["code"] == "not_implemented" and "no model request" in out[6]["error"][
        "message"]
    assert out[7]["result"]["result"]["ok"] is True
    assert (tmp_path / "a.txt").read_text() == "one"  # Claude Code's Write ran it
    assert out[9]["result"]["result"]["error_code"] == "APPROVAL-DENIED"
    assert not (tmp_path / "b.txt").exists()
    assert out[10]["error"]["code"] == "CARD-ALREADY-SETTLED"
    stopped = out[12]["result"]
    assert [(c["id"], c["state"], c["settled_by"]) for c in stopped["settled"]] == [
        ("card-3", "denied", "task-stop")]
    assert [r["error_code"] for r in stopped["results"]] == ["APPROVAL-DENIED"]
    assert out[13]["result"]["agents"][0]["status"] == "stopped"
    assert not (tmp_path / "c.txt").exists()
