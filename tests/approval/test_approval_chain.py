"""The approval chain wired into the driver: gated write/edit/bash, op validation, and
the blocked call running exactly the approved arguments."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capconf.simulator.protocol.dispatcher import Dispatcher

AGENT = "name: w\ndescription: d\ntools: [read, write, edit, bash, Task]\nprompt: P.\n"


class Driver:
    def __init__(self, workspace: Path) -> None:
        self.d = Dispatcher()
        self.ok("world.setup", workspace=str(workspace))

    def raw(self, op: str, **args: Any) -> dict[str, Any]:
        return self.d.handle({"id": 1, "op": op, "args": args})

    def ok(self, op: str, **args: Any) -> Any:
        response = self.raw(op, **args)
        assert response["ok"], response
        return response["result"]

    def error(self, op: str, **args: Any) -> dict[str, Any]:
        response = self.raw(op, **args)
        assert not response["ok"], response
        error: dict[str, Any] = response["error"]
        return error

    def call(self, agent: str, tool: str, **args: Any) -> dict[str, Any]:
        result: dict[str, Any] = self.ok("tool.call", agent=agent, tool=tool, args=args)
        return result


@pytest.fixture
def drv(tmp_path: Path) -> Driver:
    return Driver(tmp_path)


def test_edit_runs_after_approval_with_the_approved_arguments(drv: Driver,
                                                              tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one two one")
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    pending = drv.call(agent, "edit", path="a.md", old="two", new="2")
    card = pending["error_detail"]["card"]
    assert (tmp_path / "a.md").read_text() == "one two one"
    result = drv.ok("card.decide", card=card["id"], decision="approve")["result"]
    assert result == {"ok": True, "content": {"path": "a.md", "bytes": 9}}
    assert (tmp_path / "a.md").read_text() == "one 2 one"


def test_edit_that_is_not_unique_fails_after_approval(drv: Driver, tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("one two one")
    drv.ok("approval.setup", tier="full-access")
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    result = drv.call(agent, "edit", path="a.md", old="one", new="1")
    assert result["error_code"] == "edit_not_unique"
    assert result["error_detail"]["occurrences"] == 2


def test_allowed_bash_is_never_run(drv: Driver) -> None:
    drv.ok("approval.setup", tier="auto-within-workspace")
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    assert drv.call(agent, "bash", command="touch x")["error_code"] == "not_simulated"


@pytest.mark.parametrize("args", [{"path": "a\x00b", "content": "x"}, {"path": 3, "content": "x"},
                                  {"path": "a"}])
def test_bad_write_arguments_are_refused_before_any_card(drv: Driver,
                                                         args: dict[str, Any]) -> None:
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    assert drv.call(agent, "write", **args)["error_code"] == "bad_arguments"
    assert drv.ok("cards.list")["cards"] == []


def test_world_setup_resets_the_chain(drv: Driver, tmp_path: Path) -> None:
    drv.ok("approval.setup", tier="full-access")
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    drv.call(agent, "write", path="x", content="1")
    drv.ok("world.setup", workspace=str(tmp_path))
    listed = drv.ok("cards.list")
    assert listed["cards"] == [] and listed["policy"]["tier"] == "confirm-before-change"


@pytest.mark.parametrize(("op", "args", "path"), [
    ("approval.setup", {}, ["args", "tier"]),
    ("approval.setup", {"tier": "god-mode"}, ["args", "tier"]),
    ("approval.setup", {"tier": "auto-edit", "writable_roots": ["relative"]},
     ["args", "writable_roots", 0]),
    ("approval.setup", {"tier": "auto-edit", "writable_roots": "x"}, ["args", "writable_roots"]),
    ("approval.decide", {"tier": "auto-edit", "action": "fly"}, ["args", "action"]),
    ("approval.decide", {"tier": "auto-edit", "action": "bash", "allowlisted": True},
     ["args", "allowlisted"]),
    ("card.decide", {"card": "card-1", "decision": "maybe"}, ["args", "decision"]),
    ("card.decide", {"decision": "approve"}, ["args", "card"]),
    ("task.stop", {"agent": "agent-9"}, ["args", "agent"]),
])
def test_bad_op_arguments_are_located(drv: Driver, op: str, args: dict[str, Any],
                                      path: list[Any]) -> None:
    error = drv.error(op, **args)
    assert error.get("path") == path, error


def test_card_errors_keep_their_codes(drv: Driver) -> None:
    assert drv.error("card.decide", card="card-7", decision="deny")["code"] == "CARD-NOT-FOUND"
    assert drv.error("parent.request.start")["code"] == "PARENT-REQUEST-LIVE"
    drv.ok("parent.request.end")
    assert drv.error("parent.request.end")["code"] == "PARENT-REQUEST-NOT-LIVE"


def test_approval_ops_need_a_world() -> None:
    assert Dispatcher().handle({"id": 1, "op": "cards.list", "args": {}})["error"]["code"] == (
        "no_world")


def test_read_is_decided_before_the_file_is_looked_at(drv: Driver, tmp_path: Path) -> None:
    """A read outside asks (attended) without revealing whether the file exists; inside
    a writable root it runs; approving the card reads the file."""
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    root = tmp_path.parent / f"{tmp_path.name}-root"
    outside.mkdir()
    root.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    (root / "r.txt").write_text("rooted\n")
    (tmp_path / "in.txt").write_text("inside\n")
    drv.ok("approval.setup", tier="confirm-before-change", writable_roots=[str(root)])
    agent = drv.ok("agent.spawn", source=AGENT)["agent"]
    assert drv.call(agent, "read", path="in.txt")["content"]["lines"] == ["inside", ""]
    assert drv.call(agent, "read", path=str(root / "r.txt"))["content"]["lines"][0] == "rooted"
    missing = drv.call(agent, "read", path=str(outside / "nothing.txt"))
    present = drv.call(agent, "read", path="../" + outside.name + "/secret.txt")
    assert missing["error_code"] == present["error_code"] == "APPROVAL-PENDING"
    card = present["error_detail"]["card"]
    assert (card["tool"], card["action"]) == ("read", "read")
    result = drv.ok("card.decide", card=card["id"], decision="approve")["result"]
    assert result["content"]["lines"][0] == "s3cret"
    drv.ok("approval.setup", tier="auto-edit", attendance="unattended")
    denied = drv.call(agent, "read", path=str(outside / "secret.txt"))
    assert denied["error_code"] == "APPROVAL-DENIED"


GATED_AGENT = ("name: g\ndescription: d\ntools: [read, glob, grep, WebFetch, Task]\n"
               "prompt: P.\n")


@pytest.mark.parametrize(("tier", "attendance", "want"), [
    ("confirm-before-change", "unattended", "APPROVAL-DENIED"),
    ("confirm-before-change", "attended", "APPROVAL-PENDING"),
    ("auto-edit", "attended", "APPROVAL-PENDING"),
    ("auto-edit", "unattended", "APPROVAL-DENIED"),
    ("full-access", "unattended", "not_simulated"),
])
def test_webfetch_goes_through_the_one_decision(drv: Driver, tier: str, attendance: str,
                                                want: str) -> None:
    """Issue 39: WebFetch answered `not_simulated` in every tier, never decided."""
    drv.ok("approval.setup", tier=tier, attendance=attendance)
    agent = drv.ok("agent.spawn", source=GATED_AGENT)["agent"]
    result = drv.call(agent, "WebFetch", url="https://example.com/?q=secret")
    assert result["error_code"] == want, result
    listed = drv.ok("cards.list")["cards"]
    if want == "APPROVAL-PENDING":
        assert [(c["tool"], c["action"]) for c in listed] == [("WebFetch", "network")]
        approved = drv.ok("card.decide", card=listed[0]["id"], decision="approve")["result"]
        assert approved["error_code"] == "not_simulated"
    else:
        assert listed == []


def test_glob_and_grep_are_reads_of_the_directory_their_pattern_names(
        drv: Driver, tmp_path: Path) -> None:
    drv.ok("approval.setup", tier="confirm-before-change", attendance="unattended")
    agent = drv.ok("agent.spawn", source=GATED_AGENT)["agent"]
    assert drv.call(agent, "glob", pattern="**/*.md")["error_code"] == "not_simulated"
    assert drv.call(agent, "grep", pattern="x")["error_code"] == "not_simulated"
    assert drv.call(agent, "grep", pattern="x", glob="docs/*.md")["error_code"] == (
        "not_simulated")
    outside = drv.call(agent, "glob", pattern="../elsewhere/*.txt")
    assert outside["error_code"] == "APPROVAL-DENIED"
    assert outside["error_detail"]["tool"] == "glob"
    assert drv.call(agent, "grep", pattern="x", glob="/etc/*")["error_code"] == (
        "APPROVAL-DENIED")
    assert drv.call(agent, "glob", pattern="")["error_code"] == "bad_arguments"
    assert drv.call(agent, "WebFetch", url=3)["error_code"] == "bad_arguments"
    drv.ok("approval.setup", tier="auto-edit")
    pending = drv.call(agent, "glob", pattern="/tmp/*.txt")
    assert pending["error_detail"]["card"]["action"] == "read"


@pytest.mark.parametrize(("pattern", "prefix"), [
    ("*.py", "."), ("docs/**/*.md", "docs"), ("/data/*.md", "/data"), ("/*.md", "/"),
    ("../x/[ab].txt", "../x"), ("a/b/c.txt", "a/b"), ("{a,b}/c", "."),
])
def test_literal_prefix(pattern: str, prefix: str) -> None:
    from capconf.simulator.builtin_tools.calls import literal_prefix

    assert literal_prefix(pattern) == prefix


def test_every_classified_builtin_tool_is_decided_by_a_handler() -> None:
    """A classified built-in without a gated handler would fall to `not_simulated`
    without a decision: the bug of issue 39."""
    from capconf.simulator.approval.decision import TOOL_ACTIONS
    from capconf.simulator.builtin_tools.calls import BUILTIN_CALLS
    from capconf.simulator.tools.catalog import BUILTIN_TOOLS, DIMENSION_OF

    builtin = {t.name for t in BUILTIN_TOOLS}
    classified = {t for t in TOOL_ACTIONS if t in builtin and t not in DIMENSION_OF}
    assert classified - set(BUILTIN_CALLS) == set()
