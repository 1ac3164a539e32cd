"""Mutants of issue 39: the wrong runtimes that passed the whole suite (or were caught by
one case only) because a rule was observed from one side. Each is a bug a real runtime
shipped or would plausibly ship (``../shared/design/peers.md``), and names the
requirements whose cases must catch it."""

from __future__ import annotations

from typing import Any

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
        return calls._gated("WebFetch", calls.Action.READ, calls.Target.WORKSPACE, args, ctx,
                            calls._not_simulated("WebFetch", "reach the network"))

    _patch(calls, "BUILTIN_CALLS", {**calls.BUILTIN_CALLS, "WebFetch": webfetch})


def _search_as_command() -> None:
    """glob and grep fall to the catch-all for tools nobody classified, decided like a
    command (bash): confirm-before-change asks for a workspace search, unattended denies."""
    def searched(tool: str) -> Any:
        def run(args: dict[str, Any], world: Any, ctx: Any) -> ToolResult:
            return calls._gated(tool, calls.Action.BASH, calls.Target.WORKSPACE, args, ctx,
                                lambda: failure("not_simulated", "not run", {"tool": tool}))
        return run

    _patch(calls, "BUILTIN_CALLS", {**calls.BUILTIN_CALLS, "glob": searched("glob"),
                                    "grep": searched("grep")})


MUTANTS: tuple[Mutant, ...] = (
    Mutant("st-egress-ungated", "glob, grep and WebFetch never reach the approval decision; "
           "WebFetch runs unasked in every tier", ("APPR-01",), _egress_ungated),
    Mutant("st-webfetch-as-read", "WebFetch is decided as a read inside the workspace, so "
           "egress never asks", ("APPR-01",), _webfetch_as_read),
    Mutant("st-search-as-command", "glob and grep are decided like bash: a workspace search "
           "asks, or is denied unattended", ("APPR-01",), _search_as_command),
)
