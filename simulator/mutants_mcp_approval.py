"""Plausible real bugs of the MCP gateway and the approval chain, one per mutant.

Each patches the reference in the process it runs in (a dedicated driver process) and
names the requirements whose conformance cases must fail against it.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from simulator.mutants import Mutant


def _module(name: str) -> Any:
    """Mutants rebind module globals; typed as Any because that is the point."""
    return importlib.import_module(name)


def _shared_gateway() -> None:
    """The subagent gets the shared gateway: every configured server is granted."""
    dim = _module("simulator.mcp.dimension")
    real = dim.resolve_mcp

    def buggy(declared: Any, world: Any, mode: Any) -> Any:
        resolution = real(declared, world, mode)
        if not resolution.declared:
            return resolution
        return replace(resolution, granted=world.servers)

    dim.resolve_mcp = buggy


def _casefold_call_names() -> None:
    """Model-facing server names are matched case-insensitively."""
    gateway = _module("simulator.mcp.gateway")

    def server(self: Any, name: str) -> Any:
        return next((s for s in self.granted if s.name.casefold() == name.casefold()), None)

    gateway.McpResolution.server = server


def _split_at_last_separator() -> None:
    """``server__tool`` is split at the last ``__``, so a tool name can carry a server."""
    gateway = _module("simulator.mcp.gateway")

    def split(name: str) -> tuple[str, str] | None:
        index = name.rfind("__")
        if index <= 0 or index + 2 == len(name):
            return None
        return name[:index], name[index + 2:]

    gateway.split_qualified = split


def _allowlist_ignored() -> None:
    """The server's approval allow-list is never consulted: every call asks."""
    gateway = _module("simulator.mcp.gateway")
    gateway.McpCall.allowlisted = property(lambda self: False)


def _runs_before_approval() -> None:
    """Off-list MCP tools run at once; the card (if any) comes too late."""
    from simulator.envelope import ToolResult

    gateway = _module("simulator.mcp.gateway")

    def call(self: Any, args: Any, policy: Any) -> Any:
        prepared = self.prepare_call(args)
        return prepared if isinstance(prepared, ToolResult) else self.run(prepared)

    gateway.ScopedGateway.call = call


def _disabled_is_unknown() -> None:
    """A disabled or unconfigured server is treated as non-existent."""
    gateway = _module("simulator.mcp.gateway")
    real = gateway.McpWorld.lookup

    def lookup(self: Any, declared: str) -> Any:
        entry = real(self, declared)
        ready = entry is not None and entry.status is gateway.ServerStatus.READY
        return entry if ready else None

    gateway.McpWorld.lookup = lookup


def _external_as_knowledge_accepted() -> None:
    """External systems declared as knowledge sources pass without a word."""
    dim = _module("simulator.mcp.dimension")

    dim.check_external_in_knowledge = lambda *args: ()


def _subagent_write_unhooked() -> None:
    """write/edit/bash run straight from the tool table, without the approval hook."""
    builtin = _module("simulator.builtin_calls")

    builtin._gated = lambda tool, action, target, args, ctx, run: run()


def _unattended_asks() -> None:
    """Unattended sessions raise cards nobody will answer instead of denying."""
    chain = _module("simulator.approval_chain")
    gateway = _module("simulator.mcp.gateway")
    from simulator.approval import Attendance

    real = chain.decide

    def buggy(request: Any, policy: Any) -> Any:
        return real(request, replace(policy, attendance=Attendance.ATTENDED))

    chain.decide = buggy
    gateway.decide = buggy


def _writable_roots_ignored() -> None:
    """The writable-roots list is ignored: a root counts as outside."""
    builtin = _module("simulator.builtin_calls")

    real = builtin.resolve_target
    builtin.resolve_target = lambda path, workspace, roots=(): real(path, workspace, ())


def _lexical_target() -> None:
    """The target is classified from the path text alone: symlinks are not resolved."""
    from pathlib import Path, PurePosixPath

    builtin = _module("simulator.builtin_calls")
    from simulator.approval import classify_target

    def lexical(path: str, workspace: Path, roots: tuple[Path, ...] = ()) -> Any:
        return classify_target(path, PurePosixPath(workspace.as_posix()),
                               tuple(PurePosixPath(r.as_posix()) for r in roots))

    builtin.resolve_target = lexical


def _task_asks() -> None:
    """Task is treated as a change and waits for approval."""
    builtin = _module("simulator.builtin_calls")
    from simulator.approval import Action, Target
    from simulator.envelope import failure

    builtin.BUILTIN_CALLS["Task"] = lambda args, world, ctx: builtin._gated(
        "Task", Action.WRITE, Target.WORKSPACE, args, ctx,
        lambda: failure("not_simulated", "Task", {}))


def _card_origin_lost() -> None:
    """Cards are raised as the parent's own, without the subagent's origin."""
    chain = _module("simulator.approval_chain")
    from simulator.cards import MAIN_AGENT_ID

    real = chain.raise_card

    def buggy(board: Any, owner_id: str, **kwargs: Any) -> Any:
        return real(board, MAIN_AGENT_ID, **kwargs)

    chain.raise_card = buggy


def _task_stop_leaves_cards() -> None:
    """TaskStop ends the agent but its pending cards stay pending (the call hangs)."""
    chain = _module("simulator.approval_chain")
    from simulator.cards import Board

    def buggy(board: Board, agent_id: str) -> Any:
        agents = tuple(replace(a, stopped=True) if a.id == agent_id else a
                       for a in board.agents)
        return replace(board, agents=agents), ()

    chain.stop_agent = buggy


def _pull_repeats() -> None:
    """Every pull delivers every pending card again."""
    chain = _module("simulator.approval_chain")
    from simulator.cards import Board, Delivery

    def buggy(board: Board) -> Any:
        due = board.pending()
        cards = tuple(replace(c, delivered=Delivery.PULLED) for c in due)
        ids = {c.id for c in cards}
        kept = tuple(next(x for x in cards if x.id == c.id) if c.id in ids else c
                     for c in board.cards)
        return replace(board, cards=kept), cards

    chain.pull = buggy


def _pushed_without_live_request() -> None:
    """Cards are "pushed" even when the parent has no live request, so nobody sees them."""
    chain = _module("simulator.approval_chain")
    from simulator.cards import Delivery

    real = chain.raise_card

    def buggy(board: Any, owner_id: str, **kwargs: Any) -> Any:
        new_board, card = real(board, owner_id, **kwargs)
        pushed = replace(card, delivered=Delivery.PUSHED)
        cards = tuple(pushed if c.id == card.id else c for c in new_board.cards)
        return replace(new_board, cards=cards), pushed

    chain.raise_card = buggy


MUTANTS: tuple[Mutant, ...] = (
    Mutant("mcp-shared-gateway", "the subagent gets the shared gateway: every configured "
           "server is reachable", ("MCP-01", "MCP-02"), _shared_gateway),
    Mutant("mcp-casefold-names", "server names from the model are matched case-insensitively",
           ("MCP-02",), _casefold_call_names),
    Mutant("mcp-split-last", "server__tool is split at the last __", ("MCP-02", "MCP-03"),
           _split_at_last_separator),
    Mutant("mcp-allowlist-ignored", "allow-listed MCP tools still ask", ("MCP-03",),
           _allowlist_ignored),
    Mutant("mcp-runs-before-approval", "off-list MCP tools run without a card", ("MCP-03",),
           _runs_before_approval),
    Mutant("mcp-disabled-is-unknown", "a disabled server is reported as non-existent and not "
           "mounted", ("MCP-04",), _disabled_is_unknown),
    Mutant("mcp-external-as-knowledge", "external systems are accepted as knowledge sources",
           ("MCP-05",), _external_as_knowledge_accepted),
    Mutant("appr-subagent-unhooked", "subagent write/edit/bash skip the approval hook",
           ("APPR-01",), _subagent_write_unhooked),
    Mutant("appr-unattended-asks", "unattended sessions raise cards instead of denying",
           ("APPR-01",), _unattended_asks),
    Mutant("appr-roots-ignored", "the writable-roots list is ignored", ("APPR-01",),
           _writable_roots_ignored),
    Mutant("appr-lexical-target", "a symlink out of the workspace counts as inside",
           ("APPR-01",), _lexical_target),
    Mutant("appr-task-asks", "Task raises an approval card", ("APPR-03",), _task_asks),
    Mutant("appr-origin-lost", "cards carry the parent's identity, not the subagent's",
           ("APPR-02",), _card_origin_lost),
    Mutant("appr-taskstop-leaves-cards", "TaskStop leaves the stopped agent's cards pending",
           ("APPR-04",), _task_stop_leaves_cards),
    Mutant("appr-pull-repeats", "each snapshot pull delivers the same cards again",
           ("APPR-05",), _pull_repeats),
    Mutant("appr-pushed-into-void", "cards are marked pushed with no live parent request",
           ("APPR-05",), _pushed_without_live_request),
)
