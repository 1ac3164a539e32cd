"""The tool-call error envelope (CALL-03), observed through `tool.call`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

ENVELOPE_KEYS = {"ok", "error_code", "error_message", "error_detail", "terminal_for_attempt",
                 "retry_after_ms"}
AGENT = "name: caller\ndescription: calls tools\ntools: [read, grep]\nprompt: Call.\n"


def _spawn(impl: Harness) -> str:
    impl.setup(**default_world())
    agent: str = impl.driver.request("agent.spawn", {"source": AGENT})["agent"]
    return agent


@pytest.mark.case("call.envelope.not-mounted")
@pytest.mark.req("CALL-03", "TOOL-03")
def test_calling_a_tool_that_is_not_mounted_is_a_structured_refusal(impl: Harness) -> None:
    agent = _spawn(impl)
    result = impl.driver.request("tool.call", {"agent": agent, "tool": "WebFetch",
                                               "args": {"url": "https://example.com"}})
    assert set(result) >= ENVELOPE_KEYS, result
    assert result["ok"] is False and result["error_code"] == "tool_not_mounted"
    assert result["error_message"].strip()
    assert sorted(result["error_detail"]["mounted"]) == ["grep", "read"]  # order is free
    assert result["error_detail"]["tool"] == "WebFetch"
    assert result["terminal_for_attempt"] is True and result["retry_after_ms"] is None


@pytest.mark.case("call.envelope.success-and-failure")
@pytest.mark.req("CALL-03")
def test_success_has_content_and_failure_has_every_envelope_key(impl: Harness) -> None:
    agent = _spawn(impl)
    impl.write("notes/a.md", "one\ntwo\n")
    ok = impl.driver.request("tool.call", {"agent": agent, "tool": "read",
                                           "args": {"path": "notes/a.md"}})
    assert ok["ok"] is True and "content" in ok and "error_code" not in ok
    bad = impl.driver.request("tool.call", {"agent": agent, "tool": "read",
                                            "args": {"path": "notes/missing.md"}})
    assert set(bad) >= ENVELOPE_KEYS and bad["ok"] is False
    assert isinstance(bad["error_detail"], dict) and bad["error_code"].strip()


@pytest.mark.case("call.read.never-outside-workspace")
@pytest.mark.req("CALL-03", "KB-07")
def test_read_refuses_every_way_out_of_the_workspace(impl: Harness, tmp_path: Path) -> None:
    """Knowledge hits are opened with `read` (KB-08). Under the approval tier that
    `world.setup` leaves in place (confirm-before-change, SPEC section 9), a read that
    lands outside the workspace is never served directly, whichever way it gets there:
    `..`, an absolute path, or a symlink inside the workspace to an existing file
    outside. Each answer is an envelope (refused or waiting for approval) and the secret
    never comes back."""
    agent = _spawn(impl)
    secret = tmp_path / "secret.md"
    secret.write_text("TOP-SECRET\n", encoding="utf-8")
    os.symlink(secret, impl.workspace / "link.md")
    relative = os.path.relpath(secret, impl.workspace)
    for path in (relative, str(secret), "link.md"):
        result = impl.driver.request("tool.call", {"agent": agent, "tool": "read",
                                                   "args": {"path": path}})
        assert result["ok"] is False, f"read {path!r} succeeded: {str(result)[:200]}"
        assert set(result) >= ENVELOPE_KEYS
        assert "TOP-SECRET" not in json.dumps(result)
