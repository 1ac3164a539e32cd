"""The pure parts of the approval mapping: the tier table as OpenCode session rules, the
policy's validation, the card's JSON, the envelope of an OpenCode tool part. Each test
names the adapter bug it is for."""

from __future__ import annotations

from pathlib import Path

import pytest
from _driverkit.protocol import ProtoError
from capconf_opencode.approval import ASKS, TIERS, Card, Policy, parse_policy, session_rules
from capconf_opencode.approval_ops import envelope
from capconf_opencode.vocabulary import TO_OPENCODE

BUILTIN = list(TO_OPENCODE.values())


@pytest.mark.parametrize("tier", TIERS)
def test_a_session_rule_never_allows_a_tool(tier: str) -> None:
    """Bug: the tier is said with `allow` rules, which OpenCode merges after the agent's
    own, so a session policy would re-grant a tool the definition does not grant."""
    rules = session_rules(Policy(tier), BUILTIN, BUILTIN)
    assert all(r["action"] != "allow" or r["permission"] == "external_directory"
               for r in rules)


def test_tools_the_agent_was_not_offered_stay_denied_after_the_tiers_asks() -> None:
    """Bug: `edit: ask` in the session re-grants `edit` to a read-only agent (OpenCode's
    last matching rule wins)."""
    rules = session_rules(Policy("confirm-before-change"), ["read"], BUILTIN)
    last = {r["permission"]: r["action"] for r in rules}  # the last rule per permission
    assert last["edit"] == "deny" and last["bash"] == "deny" and last["webfetch"] == "deny"
    assert "read" not in last


def test_each_tier_asks_what_the_table_says_and_full_access_asks_nothing() -> None:
    """Bug: a tier's asks drift from the table the README documents."""
    for tier in TIERS:
        rules = session_rules(Policy(tier), BUILTIN, BUILTIN)
        asked = [r["permission"] for r in rules if r["action"] == "ask"]
        assert asked == list(ASKS[tier])
    assert ASKS["full-access"] == ()


def test_writable_roots_are_an_external_directory_rule_only_where_the_tier_opens_them(
        tmp_path: Path) -> None:
    """Bug: a writable root opened under auto-within-workspace, where OpenCode's one
    external_directory rule would let every change inside the root run unasked."""
    root = str(tmp_path)
    for tier, opened in (("confirm-before-change", True), ("auto-within-workspace", False),
                         ("auto-edit", True)):
        rules = session_rules(Policy(tier, writable_roots=(root,)), BUILTIN, BUILTIN)
        has = {"permission": "external_directory", "pattern": f"{root}/*",
               "action": "allow"} in rules
        assert has is opened, tier


def test_a_bad_policy_is_refused_with_its_path(tmp_path: Path) -> None:
    """Bug: an unknown tier silently becomes the default one."""
    for args, path in (({"tier": "yolo"}, ["args", "tier"]),
                       ({"attendance": "maybe"}, ["args", "attendance"]),
                       ({"ask_policy": "sometimes"}, ["args", "ask_policy"]),
                       ({"writable_roots": "x"}, ["args", "writable_roots"]),
                       ({"writable_roots": ["relative"]}, ["args", "writable_roots", 0])):
        with pytest.raises(ProtoError) as e:
            parse_policy(args)
        assert e.value.path == path
    ok = parse_policy({"tier": "auto-edit", "writable_roots": [str(tmp_path)]})
    assert ok.json()["writable_roots"] == [str(tmp_path.resolve())]
    assert parse_policy({"attendance": "unattended"}).nobody_answers


def test_a_card_is_the_opencode_ask_with_its_origin() -> None:
    """Bug: the card names the parent (or no agent) as its origin, or loses OpenCode's
    own request id, so `card.decide` cannot reply to it."""
    ask = {"id": "per_1", "permission": "edit", "patterns": ["a.txt"]}
    card = Card(ask, "agent-2", "writer", "write", {"path": "a.txt", "content": "x"}, "s", None)
    j = card.json()
    assert j["id"] == "per_1" and j["state"] == "pending" and j["settled_by"] is None
    assert j["origin"] == {"agent_id": "agent-2", "agent_name": "writer", "subagent": True}
    assert (j["tool"], j["action"]) == ("write", "write")
    assert j["summary"] == '{"content":"x","path":"a.txt"}'
    long = Card(ask, "a", "w", "write", {"content": "é" * 300}, "s", None).json()["summary"]
    assert len(long) == 203 and long.endswith("...")


def test_opencode_s_permission_errors_are_approval_denials_other_errors_are_not() -> None:
    """Bug: a call OpenCode refused by a rule reads as a tool error (or the reverse)."""
    offered = ["write"]

    def part(status: str, error: str = "") -> dict[str, object]:
        return {"tool": "write", "state": {"status": status, "error": error}}
    rule = envelope("write", "write", offered, part(
        "error", "The user has specified a rule which prevents you from using this"))
    assert rule["error_code"] == "APPROVAL-DENIED"
    rejected = envelope("write", "write", offered, part(
        "error", "The user rejected permission to use this specific tool call."))
    assert rejected["error_code"] == "APPROVAL-DENIED"
    other = envelope("write", "write", offered, part("error", "ENOENT: no such file"))
    assert other["error_code"] == "tool_error"
    assert envelope("write", "write", offered, part("completed"))["ok"] is True
    assert envelope("bash", "bash", offered, None)["error_code"] == "tool_not_mounted"
