"""Finding (design): OpenCode launches every MCP server of the project's config when an
agent runs, also for an agent whose rules deny every MCP tool. capconf MCP-01: a server
the agent is not granted is never contacted (not launched, not listed).

Direct reproduction, no capconf: `opencode serve`, the adapter's scripted model on
127.0.0.1, a project whose `opencode.json` has one local MCP server (a Python one-liner
that only records that it was started) and one agent whose permission is `"*": deny`
plus `read: allow`. The agent's turn is run once; its model is offered no tool of the
server, yet the server process was started. Exit 0 = reproduced.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from _private_env import MODEL, PROVIDER, Turn
from _serve import serve

LOCKED = ("---\ndescription: denies every MCP tool\nmode: subagent\npermission:\n"
          "  \"*\": deny\n  read: allow\n---\nWork.\n")

# Records its start, then waits on stdin without ever answering MCP's initialize.
SERVER = ("import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('started'); "
          "sys.stdin.read()")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp, serve(Path(tmp), {}) as oc:
        marker = Path(tmp) / "probe-server-started"
        proj = Path(tmp) / "mcpproj"
        (proj / ".opencode" / "agent").mkdir(parents=True)
        (proj / ".opencode" / "agent" / "locked.md").write_text(LOCKED)
        (proj / "opencode.json").write_text(json.dumps({"mcp": {"probe": {
            "type": "local", "command": [sys.executable, "-c", SERVER, str(marker)],
            "enabled": True, "timeout": 3000}}}))
        oc.proj = proj  # every request below names this project directory
        agents = [a.get("name") for a in oc.http("GET", "/agent")]
        session = oc.http("POST", "/session", {"title": "locked"})["id"]
        turn = oc.model.register("m", Turn())
        oc.http("POST", f"/session/{session}/prompt_async", {
            "agent": "locked", "model": {"providerID": PROVIDER, "modelID": MODEL},
            "parts": [{"type": "text", "text": "Go. capconf-turn:m"}]})
        turn.done.wait(60)
        for _ in range(50):  # the launch may trail the turn a little
            if marker.exists():
                break
            time.sleep(0.2)
        offered = [t.get("function", {}).get("name") for t in turn.offered or []]
        mcp_offered = [n for n in offered if str(n).startswith("probe")]
        print(f"agents: {agents}; offered to `locked`: {offered}; "
              f"MCP tools offered: {mcp_offered}; server started: {marker.exists()}")
        oc.wait_idle(session)
        if "locked" in agents and turn.offered is not None and not mcp_offered \
                and marker.exists():
            print("REPRODUCED: the MCP server was launched for an agent that denies "
                  "every MCP tool")
            return 0
        print("not reproduced")
        return 1


if __name__ == "__main__":
    sys.exit(main())
