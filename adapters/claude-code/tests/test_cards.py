"""The card translation and the permission-prompt relay, without Claude Code: each test
names the bug a wrong translation would be."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _driverkit.jcs import canonical_json as canonical
from _driverkit.jcs import summary
from capconf_claude.approval import Policy
from capconf_claude.cards import Card, Sent, action_of, capconf_arguments
from capconf_claude.driver import envelope
from capconf_claude.prompts import QUALIFIED, SCRIPT, Ask, PromptRelay, allow, deny


def ask(tool: str, tool_input: dict[str, object], toolu: str = "toolu_1") -> Ask:
    return Ask(1, {"tool_name": tool, "input": tool_input, "tool_use_id": toolu}, None)  # type: ignore[arg-type]


def test_claude_code_tools_map_to_capconf_actions_by_table() -> None:
    """Bug: a card's action guessed from the arguments instead of the tool's name."""
    assert [action_of(t) for t in ("Read", "Glob", "Grep", "Write", "Edit", "Bash",
                                   "WebFetch", "mcp__notion__create_page")] == [
        "read", "read", "read", "write", "edit", "bash", "network", "mcp"]
    assert action_of("Skill") == "use_skill"  # no action: the capconf name, unchanged


def test_summary_is_rfc8785_and_cut_after_200_code_points() -> None:
    """Bug: Python's json.dumps (code-point key order, 1e+16, -0.0) or a UTF-16 cut."""
    args = {"title": "Q3", "\ue000": 0.5, "\U0001f600": [True, None], "n": 1e16,
            "a": "\u00e9\n\"", "small": 1e-7, "b": {"z": 1, "y": -0.0}}
    assert canonical(args) == ('{"a":"\u00e9\\n\\"","b":{"y":0,"z":1},"n":10000000000000000,'
                               '"small":1e-7,"title":"Q3","\U0001f600":[true,null],'
                               '"\ue000":0.5}')
    emoji = "\U0001f600"
    exact = {"content": emoji * 171, "path": "a.txt"}
    assert summary(exact) == '{"content":"' + emoji * 171 + '","path":"a.txt"}'
    assert summary({"content": emoji * 300, "path": "b"}) == '{"content":"' + emoji * 188 + "..."
    assert [canonical(x) for x in (1e21, 1e-6, 1.5, 2**60, 10**400)][:4] == [
        "1e+21", "0.000001", "1.5", "1152921504606847000"]


def test_card_arguments_are_the_cases_when_claude_code_asks_about_what_was_sent() -> None:
    """Bug: the card shows the adapter's absolute path, or hides an input Claude Code
    changed before asking."""
    sent = Sent("write", {"path": "a.txt", "content": "x"},
                {"file_path": "/ws/a.txt", "content": "x"})
    assert capconf_arguments(ask("Write", {"file_path": "/ws/a.txt", "content": "x"}),
                             sent) == {"path": "a.txt", "content": "x"}
    assert capconf_arguments(ask("Write", {"file_path": "/ws/b.txt", "content": "x"}),
                             sent) == {"path": "/ws/b.txt", "content": "x"}


def test_card_json_names_the_agent_tool_and_claude_codes_ask() -> None:
    card = Card("card-1", ask("Bash", {"command": "make"}, "toolu_9"), "agent-2", "b",
                "bash", {"command": "make"}, "toolu_9")
    j = card.json()
    assert (j["id"], j["state"], j["tool"], j["action"], j["settled_by"]) == (
        "card-1", "pending", "bash", "bash", None)
    assert j["origin"] == {"agent_id": "agent-2", "agent_name": "b", "subagent": True}
    assert j["summary"] == '{"command":"make"}'
    assert j["claude_code_ask"] == {"tool_name": "Bash", "tool_use_id": "toolu_9"}


def test_a_prompt_answered_deny_is_approval_denied() -> None:
    """Bug: the user's denial read as a generic tool error (the model would retry)."""
    block = {"type": "tool_result", "is_error": True, "content": "The user denied it."}
    out = envelope("write", block, ["write"], prompt_denied=True)
    assert (out["error_code"], out["terminal_for_attempt"]) == ("APPROVAL-DENIED", True)
    assert envelope("write", block, ["write"])["error_code"] == "tool_use_error"


def test_the_prompt_tool_is_given_only_when_somebody_answers() -> None:
    """Bug: an unattended or never-ask session gets a prompt tool (cards nobody will
    answer), or an attended one keeps Claude Code's automatic -p denial."""
    from pathlib import Path
    cfg = Path("/x/approval-mcp.json")
    attended = Policy().cli_args(cfg)
    assert attended[attended.index("--permission-prompt-tool") + 1] == QUALIFIED
    assert attended[attended.index("--disallowedTools") + 1] == QUALIFIED
    assert "--permission-prompts" not in attended
    for p in (Policy(attendance="unattended"), Policy(ask_policy="never-ask")):
        args = p.cli_args(cfg)
        assert "--permission-prompt-tool" not in args
        assert args[args.index("--permission-prompts") + 1] == "none"
    assert "--permission-prompt-tool" not in Policy().cli_args(None)


def test_the_prompt_server_relays_an_ask_and_returns_the_answer() -> None:
    """Bug: the prompt server answers by itself, or loses the answer's input."""
    relay = PromptRelay()
    env = {**os.environ, "CAPCONF_PROMPT_PORT": str(relay.port)}
    proc = subprocess.Popen([sys.executable, str(SCRIPT)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        def send(msg: dict[str, object]) -> None:
            assert proc.stdin is not None
            proc.stdin.write((json.dumps(msg) + "\n").encode())
            proc.stdin.flush()
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18"}})
        init = json.loads(proc.stdout.readline())
        assert init["result"]["protocolVersion"] == "2025-06-18"
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        assert [t["name"] for t in json.loads(proc.stdout.readline())["result"]["tools"]] == [
            "ask"]
        send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "ask", "arguments": {"tool_name": "Write", "tool_use_id": "toolu_7",
                                         "input": {"file_path": "/w/a", "content": "x"}}}})
        pending = relay.wait_for("toolu_7", 10)
        assert pending is not None and pending.tool_name == "Write"
        time.sleep(0.2)
        relay.answer(pending, allow(pending))
        answered = json.loads(proc.stdout.readline())
        assert answered["id"] == 3
        assert json.loads(answered["result"]["content"][0]["text"]) == {
            "behavior": "allow", "updatedInput": {"file_path": "/w/a", "content": "x"}}
        assert relay.take("toolu_7") is None  # answered once
        assert deny("no") == {"behavior": "deny", "message": "no"}
    finally:
        proc.kill()
        proc.wait(5)
        relay.close()
