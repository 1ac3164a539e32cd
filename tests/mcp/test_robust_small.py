"""Smaller defects of issue 9: the fake MCP server survives lone surrogates, and the
suite's journal reader splits lines on "\\n" only."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from capconf.conformance.suite.mcp_world import journal
from capconf.simulator.mcp.fake_server import launch_spec

CONFIG = {"name": "s", "tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}


def _run_server(tmp_path: Path, lines: list[bytes]) -> tuple[list[dict[str, Any]], Path]:
    config = tmp_path / "server.json"
    config.write_text(json.dumps(CONFIG))
    journal_path = tmp_path / "servers" / "s.journal"
    journal_path.parent.mkdir()
    spec = launch_spec(config, journal_path)
    proc = subprocess.run([spec["command"], *spec["args"]], input=b"\n".join(lines) + b"\n",
                          capture_output=True, env=spec["env"], timeout=60)
    assert proc.returncode == 0 and b"Traceback" not in proc.stderr, proc.stderr[-2000:]
    replies = [json.loads(x.decode("utf-8")) for x in proc.stdout.split(b"\n") if x]
    return replies, journal_path


def test_fake_server_survives_a_lone_surrogate_and_journals_it(tmp_path: Path) -> None:
    lines = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
        b'"arguments":{"x":"\\ud800"}}}',
        b'{"jsonrpc":"2.0","id":2,"method":"ping","params":{"y":"\\udfff"}}',
        b'{"jsonrpc":"2.0","id":3,"method":"ping"}',
    ]
    replies, journal_path = _run_server(tmp_path, lines)
    assert [r["id"] for r in replies] == [1, 2, 3]
    assert json.loads(replies[0]["result"]["content"][0]["text"]) == {"x": "\ud800"}
    entries = [json.loads(x) for x in journal_path.read_bytes().decode("utf-8").split("\n")
               if x]
    assert [e["seq"] for e in entries] == [1, 2, 3]
    assert entries[0]["received"]["params"]["arguments"] == {"x": "\ud800"}  # as received


def test_suite_journal_reader_splits_on_newline_only(tmp_path: Path) -> None:
    lines = [b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo",'
             + '"arguments":{"x":"a\u2028b\u2029c\x85d\\u001ce"}}}'.encode(),
             b'{"jsonrpc":"2.0","id":2,"method":"ping"}']
    _run_server(tmp_path, lines)
    impl = SimpleNamespace(workspace=tmp_path)
    entries = journal(impl, "s")  # type: ignore[arg-type]
    assert [e["seq"] for e in entries] == [1, 2]
    assert entries[0]["received"]["params"]["arguments"]["x"] == "a\u2028b\u2029c\x85d\x1ce"
