"""Mutants of issue 39: the wrong runtimes that passed the whole suite (or were caught by
one case only) because a rule was observed from one side. Each is a bug a real runtime
shipped or would plausibly ship (``../shared/design/peers.md``), and names the
requirements whose cases must catch it."""

from __future__ import annotations

from typing import Any

from capconf.simulator.approval.decision import Action, Target
from capconf.simulator.builtin_tools import calls
from capconf.simulator.core.envelope import ToolResult, failure
from mutants.base import Mutant, _patch


def _egress_ungated() -> None:
    """The reference before issue 39: only read/write/edit/bash are wired to the
    decision; glob, grep and WebFetch answer `not_simulated` (run) in every tier."""
    table = dict(calls.BUILTIN_CALLS)
    for tool in ("glob", "grep", "WebFetch"):
        table.pop(tool)
    _patch(calls, "BUILTIN_CALLS", table)


def _webfetch_as_read() -> None:
    """WebFetch classified with the reads (it 'only fetches'), decided at the workspace:
    allowed in every tier, so egress is never asked for."""
    def webfetch(args: dict[str, Any], world: Any, ctx: Any) -> ToolResult:
        return calls._gated("WebFetch", Action.READ, Target.WORKSPACE, args, ctx,
                            calls._not_simulated("WebFetch", "reach the network"))

    _patch(calls, "BUILTIN_CALLS", {**calls.BUILTIN_CALLS, "WebFetch": webfetch})


def _search_as_command() -> None:
    """glob and grep fall to the catch-all for tools nobody classified, decided like a
    command (bash): confirm-before-change asks for a workspace search, unattended denies."""
    def searched(tool: str) -> Any:
        def run(args: dict[str, Any], world: Any, ctx: Any) -> ToolResult:
            return calls._gated(tool, Action.BASH, Target.WORKSPACE, args, ctx,
                                lambda: failure("not_simulated", "not run", {"tool": tool}))
        return run

    _patch(calls, "BUILTIN_CALLS", {**calls.BUILTIN_CALLS, "glob": searched("glob"),
                                    "grep": searched("grep")})


def _fork_notice_after_history() -> None:
    """A fork's context is the parent's history with the fixed notice appended after it
    (the notice added where the child's own part of the context starts)."""
    import capconf.simulator.delegation.capability as cap
    from capconf.simulator.delegation.permissions import FIXED_NOTICE

    notice = {"kind": "notice", "role": "system", "text": FIXED_NOTICE}

    def child_context(seed: list[dict[str, Any]], prompt: str,
                      task_input: Any = None) -> list[dict[str, Any]]:
        task: dict[str, Any] = {"kind": "task", "role": "user", "text": prompt}
        if task_input is not None:
            task["input"] = dict(task_input)
        return [*seed, dict(notice), task]

    _patch(cap, "child_context", child_context)


def _fork_seeded_with_context() -> None:
    """A fork of a delegated child is seeded with that child's context (its notice and
    task, as `seed` entries) instead of its completed history."""
    import capconf.simulator.delegation.capability as cap

    real = cap.DelegationCapability.delegate

    def delegate(self: Any, parent: str, agent_type: str, prompt: str, **kwargs: Any) -> Any:
        if parent not in self.nodes or kwargs.get("implementer_name") != "fork":
            return real(self, parent, agent_type, prompt, **kwargs)
        transcript = self.transcript(parent)
        kept = transcript.completed
        transcript.completed = [{"role": e["role"], "text": e["text"]}
                                for e in self.context(parent)]
        try:
            return real(self, parent, agent_type, prompt, **kwargs)
        finally:
            transcript.completed = kept

    _patch(cap.DelegationCapability, "delegate", delegate)


def _containment_by_string_prefix() -> None:
    """`inside` is `str(path).startswith(str(root))`: `/ws-evil/x` is decided as inside
    `/ws` (and `/root-evil/x` as inside the writable root `/root`), then written where
    it really is."""
    from pathlib import Path

    from capconf.simulator.approval import decision

    real = decision.locate

    def locate(path: str, workspace: Path, writable_roots: tuple[Path, ...] = ()) -> Any:
        found = real(path, workspace, writable_roots)
        if found.target is not decision.Target.OUTSIDE:
            return found
        absolute = (found.root / found.rel).as_posix()
        if absolute.startswith(workspace.resolve().as_posix()):
            return decision.Located(decision.Target.WORKSPACE, found.root, found.rel)
        if any(absolute.startswith(r.resolve().as_posix()) for r in writable_roots):
            return decision.Located(decision.Target.WRITABLE_ROOT, found.root, found.rel)
        return found

    def resolve_target(path: str, workspace: Path,
                       writable_roots: tuple[Path, ...] = ()) -> Any:
        return locate(path, workspace, writable_roots).target

    _patch(calls, "locate", locate)
    _patch(calls, "resolve_target", resolve_target)


def _gateway_first_and_last_split() -> None:
    """The qualified name's server is taken before the first `__` and its tool after the
    last: `notion__github__delete_repo` calls notion's `delete_repo`."""
    from capconf.simulator.mcp import gateway

    def split(name: str) -> tuple[str, str] | None:
        first, last = name.find("__"), name.rfind("__")
        if first <= 0 or last + 2 == len(name):
            return None
        return name[:first], name[last + 2:]

    _patch(gateway, "split_qualified", split)


def _connector_tier_widens() -> None:
    """A connector call is decided like an MCP call: at full-access its resolved `ask`
    becomes `allow` and the method is sent without a card."""
    from capconf.simulator.approval.decision import Decision, Tier, Verdict, decide_connector
    from capconf.simulator.connectors import runtime

    real = decide_connector

    def decide(permission: Verdict, policy: Any) -> Decision:
        if permission is Verdict.ASK and policy.tier is Tier.FULL_ACCESS:
            return Decision(Verdict.ALLOW, "full-access: runs without confirmation",
                            "connector-permission")
        return real(permission, policy)

    _patch(runtime, "decide_connector", decide)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("st-egress-ungated", "glob, grep and WebFetch never reach the approval decision; "
           "WebFetch runs unasked in every tier", ("APPR-01",), _egress_ungated),
    Mutant("st-webfetch-as-read", "WebFetch is decided as a read inside the workspace, so "
           "egress never asks", ("APPR-01",), _webfetch_as_read),
    Mutant("st-search-as-command", "glob and grep are decided like bash: a workspace search "
           "asks, or is denied unattended", ("APPR-01",), _search_as_command),
    Mutant("st-fork-notice-after-history", "a fork's context starts with the parent's "
           "history; the fixed notice comes after it", ("APPR-07",),
           _fork_notice_after_history),
    Mutant("st-fork-seeded-with-context", "a fork of a delegated child is seeded with the "
           "child's notice and task instead of its completed history", ("DELEG-04",),
           _fork_seeded_with_context),
    Mutant("st-containment-string-prefix", "containment by string prefix: "
           "`<workspace>-evil/x.txt` and `<root>-evil` count as inside", ("APPR-01",),
           _containment_by_string_prefix),
    Mutant("st-gateway-first-and-last-split", "`a__b__c` is split at the first and the last "
           "`__`: server a, tool c", ("MCP-02",), _gateway_first_and_last_split),
    Mutant("st-connector-tier-widens", "full-access turns a connector method's resolved "
           "`ask` into `allow`", ("CONN-02",), _connector_tier_widens),
)
