"""The driver as a process: it refuses to start without the real runtime, and it hands
Gemini every name the table does not know exactly as written (no folding, no repair)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

from conftest import ADAPTER


def _exchange(node: str, requests: list[dict[str, object]],
              cwd: Path = ADAPTER) -> list[dict[str, Any]]:
    lines = "".join(json.dumps(r) + "\n" for r in requests)
    done = subprocess.run([node, "driver.mjs"], cwd=cwd, input=lines, capture_output=True,
                          text=True, timeout=120)
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_refuses_to_start_without_gemini_core(node: str, tmp_path: Path) -> None:
    shutil.copy(ADAPTER / "driver.mjs", tmp_path / "driver.mjs")
    shutil.copy(ADAPTER / "package.json", tmp_path / "package.json")
    shutil.copytree(ADAPTER / "lib", tmp_path / "lib")
    done = subprocess.run([node, "driver.mjs"], cwd=tmp_path, input='{"id":1,"op":"hello"}\n',
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 3
    assert done.stdout == ""
    assert "@google/gemini-cli-core is not installed" in done.stderr
    assert "npm ci --prefix adapters/gemini-cli" in done.stderr


def test_hello_names_the_runtime_and_its_version(node: str) -> None:
    [hello] = _exchange(node, [{"id": 1, "op": "hello"}])
    pinned = json.loads((ADAPTER / "package.json").read_text())["dependencies"]
    assert hello["result"]["implementation"]["name"] == "gemini-cli-core"
    assert hello["result"]["implementation"]["version"] == pinned["@google/gemini-cli-core"]
    assert set(hello["result"]["features"]) == {"def", "tool", "prompt", "approval", "mcp"}


def test_names_outside_the_table_reach_gemini_as_written(node: str, tmp_path: Path) -> None:
    source = "name: r\ndescription: d\ntools: [read, READ]\nprompt: Go.\n"
    _, parsed = _exchange(node, [
        {"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}},
        {"id": 2, "op": "definition.parse", "args": {"source": source}}])
    result = parsed["result"]
    # `read` is the table's and becomes read_file; `READ` is not, so Gemini judges it
    assert result["loaded"] is False
    found = [(d["code"], d["path"]) for d in result["diagnostics"]]
    assert found == [("TOOL-UNKNOWN", ["tools", 1])]
    assert "Invalid tool name" in result["diagnostics"][0]["message"]


def test_a_granted_call_runs_in_geminis_loop(node: str, tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    source = "name: r\ndescription: d\ntools: [read]\nprompt: Go.\n"
    answers = _exchange(node, [
        {"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}},
        {"id": 2, "op": "agent.spawn", "args": {"source": source}},
        {"id": 3, "op": "tool.call", "args": {"agent": "agent-1", "tool": "read",
                                              "args": {"path": "a.txt"}}},
        {"id": 4, "op": "tool.call", "args": {"agent": "agent-1", "tool": "write",
                                              "args": {"path": "b.txt", "content": "x"}}}])
    assert answers[2]["result"] == {"ok": True, "content": "hello\n"}
    refused = answers[3]["result"]
    assert refused["error_code"] == "tool_not_mounted"
    assert "not available to this agent" in refused["error_message"]  # Gemini's own words
    assert not (tmp_path / "b.txt").exists()


def test_a_capconf_agent_never_gets_invoke_agent(node: str, tmp_path: Path) -> None:
    """README *Why not delegation*: a capconf agent is a Gemini subagent, and Gemini's
    LocalAgentExecutor drops every agent tool from a subagent's registry; the driver
    passes Gemini's refusal on and does not route `Task` anywhere else."""
    source = "name: lead\ndescription: d\ntools: [read, Task]\nprompt: Go.\n"
    _, parsed, spawned, called = _exchange(node, [
        {"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}},
        {"id": 2, "op": "definition.parse", "args": {"source": source}},
        {"id": 3, "op": "agent.spawn", "args": {"source": source}},
        {"id": 4, "op": "tool.call", "args": {"agent": "agent-1", "tool": "Task",
                                              "args": {"subagent": "lead", "prompt": "x"}}}])
    result = parsed["result"]
    assert result["loaded"] is True and result["diagnostics"] == []
    assert result["tools"] == ["read"]
    assert [r["status"] for r in result["tool_resolution"]] == ["granted", "unknown"]
    assert spawned["result"]["tools"] == ["read"]
    refused = called["result"]
    assert refused["error_code"] == "tool_not_mounted"
    assert "'invoke_agent' is not available to this agent" in refused["error_message"]


def test_loader_positions_and_paths_are_geminis_translated(node: str, tmp_path: Path) -> None:
    """Gemini's own words carry the location: js-yaml's `(line:column)` (moved from the
    front matter to the file, recounted in code points), zod's key paths (its union
    prefix dropped), and a top-level list read as `Remote Agents List`."""
    sources = [
        {"source": "---\nname: x\ndescription: \"\U0001F600\" oops\n---\nB.\n", "filename": "a.md"},
        {"source": "name: t\ndescription: t\ntools: \"read, grep\"\nprompt: P.\n"},
        {"source": "- name: x\n- tools: [read]\n"},
    ]
    answers = _exchange(node, [{"id": 1, "op": "world.setup", "args": {"workspace": str(tmp_path)}}]
                        + [{"id": i + 2, "op": "definition.parse", "args": s}
                           for i, s in enumerate(sources)])
    found = [[(d["code"], d["path"], d["line"], d["column"], d["severity"])
              for d in a["result"]["diagnostics"]] for a in answers[1:]]
    assert all(a["result"]["loaded"] is False for a in answers[1:])
    yaml_error, comma_string, listed = found
    # js-yaml says (2:19) in the front matter, in UTF-16 units; `oops` is on the file's
    # line 3 at code point 18 (the emoji is one code point, two UTF-16 units)
    assert yaml_error == [("DEF-YAML-SYNTAX", [], 3, 18, "error")]
    assert comma_string == [("DEF-TYPE", ["tools"], None, None, "error")]
    assert listed == [("DEF-NOT-A-MAPPING", [], None, None, "error")]
    assert "Remote Agents List" in answers[3]["result"]["diagnostics"][0]["message"]
