"""A permission-prompt tool for the peers.md checks (standalone: Python's standard
library only). Claude Code starts it as a stdio MCP server (`--mcp-config`) and calls its
tool `ask` for every permission ask (`--permission-prompt-tool mcp__auto__ask`). It
appends each ask to the file `AUTO_PROMPT_LOG` and answers allow; with
`AUTO_PROMPT_RULE=session` the answer also adds a session allow rule for the asked tool
(Claude Code's "Yes, and don't ask again" of the interactive prompt)."""

from __future__ import annotations

import json
import os
import sys


def send(msg: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def main() -> int:
    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "protocolVersion": (msg.get("params") or {}).get("protocolVersion")
                or "2024-11-05", "capabilities": {"tools": {}},
                "serverInfo": {"name": "auto", "version": "1"}}})
        elif method == "tools/list":
            send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [{
                "name": "ask", "description": "permission prompt",
                "inputSchema": {"type": "object"}}]}})
        elif method == "tools/call":
            args = (msg.get("params") or {}).get("arguments") or {}
            with open(os.environ["AUTO_PROMPT_LOG"], "a") as f:
                f.write(json.dumps(args) + "\n")
            answer: dict[str, object] = {"behavior": "allow",
                                         "updatedInput": args.get("input") or {}}
            if os.environ.get("AUTO_PROMPT_RULE") == "session":
                answer["updatedPermissions"] = [{
                    "type": "addRules", "rules": [{"toolName": args.get("tool_name")}],
                    "behavior": "allow", "destination": "session"}]
            send({"jsonrpc": "2.0", "id": mid, "result": {
                "content": [{"type": "text", "text": json.dumps(answer)}]}})
        elif mid is not None and method is not None:
            send({"jsonrpc": "2.0", "id": mid, "result": {}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
