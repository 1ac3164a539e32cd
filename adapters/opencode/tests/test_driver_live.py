"""The driver end to end against the real binary (slow: one `opencode serve`).
Each check names the adapter bug it is for."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from capconf_opencode.runtime import binary_installed

DRIVER = Path(__file__).resolve().parent.parent / "driver.py"

HAVE_BINARY = binary_installed()

pytestmark = pytest.mark.skipif(not HAVE_BINARY, reason="OpenCode not installed")


class Session:
    def __init__(self) -> None:
        self.proc = subprocess.Popen([sys.executable, str(DRIVER)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n = 0

    def request(self, op: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.n += 1
        self.proc.stdin.write((json.dumps({"id": self.n, "op": op, "args": args or {}})
                               + "\n").encode())
        self.proc.stdin.flush()
        answer: dict[str, Any] = json.loads(self.proc.stdout.readline())
        assert answer["id"] == self.n
        return answer

    def close(self) -> int:
        self.request("shutdown")
        return self.proc.wait(timeout=60)


def test_grants_and_calls_come_from_opencode(tmp_path: Path) -> None:
    """Bug: the adapter resolves names itself (then `Read` would be granted, as capconf
    asks, instead of nothing, as OpenCode does), or a call never reaches OpenCode's tool."""
    (tmp_path / "guide.md").write_text("refunds take 30 days\n")
    s = Session()
    try:
        hello = s.request("hello")["result"]
        assert hello["implementation"]["name"] == "opencode"
        assert hello["implementation"]["version"] == "1.18.33"
        assert s.request("world.setup", {"workspace": str(tmp_path)})["ok"]
        parsed = s.request("definition.parse", {
            "source": "name: f\ndescription: d\ntools: [webfetch, Read, grep]\nprompt: P.\n"})
        assert parsed["result"]["tools"] == ["WebFetch", "grep"]
        mounted = s.request("tools.mounted", {
            "source": "name: f\ndescription: d\ntools: [webfetch, Read, grep]\nprompt: P.\n"})
        assert [t["name"] for t in mounted["result"]["tools"]] == ["WebFetch", "grep"]
        assert all(t["input_schema"].get("type") == "object" for t in mounted["result"]["tools"])
        agent = s.request("agent.spawn", {
            "source": "name: r\ndescription: d\ntools: [read]\nprompt: Read.\n"})["result"]
        read = s.request("tool.call", {"agent": agent["agent"], "tool": "read",
                                       "args": {"path": str(tmp_path / "guide.md")}})["result"]
        assert read["ok"] is True and "refunds take 30 days" in read["content"]["output"]
        other = s.request("tool.call", {"agent": agent["agent"], "tool": "bash",
                                        "args": {"command": "echo hi"}})["result"]
        assert other["error_code"] == "tool_not_mounted"
        assert other["error_detail"]["mounted"] == ["read"]
    finally:
        assert s.close() == 0


def test_skills_come_from_opencode_discovery_and_its_skill_tool(tmp_path: Path) -> None:
    """Bug: the adapter answers use_skill from the files itself (then the denied skill
    would load, or the body would keep the front matter), or the layer folders never
    reach OpenCode (then nothing would be listed)."""
    layer = tmp_path / "system"
    for name, description in (("pdf", "Fill PDF forms"), ("secret", "Payroll")):
        (layer / name).mkdir(parents=True)
        (layer / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n\nSteps of {name}.\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    s = Session()
    try:
        assert s.request("world.setup", {"workspace": str(ws),
                                         "skills": {"layers": {"system": str(layer)}}})["ok"]
        source = "name: h\ndescription: d\ntools: [read]\nskills: [pdf]\nprompt: Work.\n"
        parts = {p["kind"]: p["text"] for p in
                 s.request("prompt.assemble", {"source": source})["result"]["parts"]}
        assert "pdf" in parts["catalog.skills"] and "secret" not in parts["catalog.skills"]
        agent = s.request("agent.spawn", {"source": source})["result"]
        assert agent["tools"] == ["read", "use_skill"]
        loaded = s.request("tool.call", {"agent": agent["agent"], "tool": "use_skill",
                                         "args": {"name": "pdf"}})["result"]
        assert loaded["ok"] is True and loaded["content"]["body"] == "Steps of pdf."
        denied = s.request("tool.call", {"agent": agent["agent"], "tool": "use_skill",
                                         "args": {"name": "secret"}})["result"]
        assert denied["error_code"] == "SKILL-NOT-GRANTED" and "Payroll" not in str(denied)
    finally:
        assert s.close() == 0


def test_a_file_opencode_refuses_is_definition_invalid_and_the_next_one_loads(
        tmp_path: Path) -> None:
    """Bug: the adapter invents a diagnostic code for a file OpenCode refuses (it once
    answered `OPENCODE-AGENT-NOT-LOADED`, a code SPEC.md lacks), or the refusal OpenCode
    caches for the shared definition directory leaks into the next definition."""
    s = Session()
    try:
        s.request("hello")
        assert s.request("world.setup", {"workspace": str(tmp_path)})["ok"]
        refused = s.request("definition.parse", {
            "source": "---\nname: t\ndescription: d\ntools:\n  - read\n  - grep: yes\n---\nB.\n"})
        assert refused["ok"] is False and refused["error"]["code"] == "definition_invalid"
        assert "tools" in refused["error"]["message"]  # OpenCode's own issue list
        fine = s.request("definition.parse", {
            "source": "---\nname: u\ndescription: d\ntools: [read]\n---\nB.\n"})
        assert fine["ok"] is True and fine["result"]["tools"] == ["read"]
        assert fine["result"]["diagnostics"] == []
    finally:
        assert s.close() == 0
