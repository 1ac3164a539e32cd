"""Plausible real bugs of the MCP gateway and the approval chain, one per mutant.

Each patches the reference in the process it runs in (a dedicated driver process) and
names the requirements whose conformance cases must fail against it.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from mutants.base import Mutant
from mutants.split import ModuleGroup


def _mcp_gateway() -> ModuleGroup:
    """``mcp/gateway.py`` as it was before it was split by job (issue 24)."""
    return ModuleGroup(*(f"capconf.simulator.mcp.{m}" for m in (
        "gateway", "names", "world", "resolution", "catalog", "pool")))


def _module(name: str) -> Any:
    """Mutants rebind module globals; typed as Any because that is the point."""
    return importlib.import_module(name)


def _shared_gateway() -> None:
    """The subagent gets the shared gateway: every configured server is granted."""
    dim = _module("capconf.simulator.mcp.dimension")
    real = dim.resolve_mcp

    def buggy(declared: Any, world: Any, mode: Any) -> Any:
        resolution = real(declared, world, mode)
        if not resolution.declared:
            return resolution
        return replace(resolution, granted=world.servers)

    dim.resolve_mcp = buggy


def _casefold_call_names() -> None:
    """Model-facing server names are matched case-insensitively."""
    gateway = _mcp_gateway()

    def server(self: Any, name: str) -> Any:
        return next((s for s in self.granted if s.name.casefold() == name.casefold()), None)

    gateway.McpResolution.server = server


def _split_at_last_separator() -> None:
    """``server__tool`` is split at the last ``__``, so a tool name can carry a server."""
    gateway = _mcp_gateway()

    def split(name: str) -> tuple[str, str] | None:
        index = name.rfind("__")
        if index <= 0 or index + 2 == len(name):
            return None
        return name[:index], name[index + 2:]

    gateway.split_qualified = split


def _allowlist_ignored() -> None:
    """The server's approval allow-list is never consulted: every call asks."""
    gateway = _mcp_gateway()
    gateway.McpCall.allowlisted = property(lambda self: False)


def _runs_before_approval() -> None:
    """Off-list MCP tools run at once; the card (if any) comes too late."""
    from capconf.simulator.core.envelope import ToolResult

    gateway = _mcp_gateway()

    def call(self: Any, args: Any, policy: Any) -> Any:
        prepared = self.prepare_call(args)
        return prepared if isinstance(prepared, ToolResult) else self.run(prepared)

    gateway.ScopedGateway.call = call


def _disabled_is_unknown() -> None:
    """A disabled or unconfigured server is treated as non-existent."""
    gateway = _mcp_gateway()
    real = gateway.McpWorld.lookup

    def lookup(self: Any, declared: str) -> Any:
        entry = real(self, declared)
        ready = entry is not None and entry.status is gateway.ServerStatus.READY
        return entry if ready else None

    gateway.McpWorld.lookup = lookup


def _external_as_knowledge_accepted() -> None:
    """External systems declared as knowledge sources pass without a word."""
    dim = _module("capconf.simulator.mcp.dimension")

    dim.check_external_in_knowledge = lambda *args: ()


def _subagent_write_unhooked() -> None:
    """write/edit/bash run straight from the tool table, without the approval hook."""
    builtin = _module("capconf.simulator.builtin_tools.calls")

    builtin._gated = lambda tool, action, target, args, ctx, run: run()


def _unattended_asks() -> None:
    """Unattended sessions raise cards nobody will answer instead of denying."""
    chain = _module("capconf.simulator.approval.chain")
    gateway = _mcp_gateway()
    from capconf.simulator.approval.decision import Attendance

    real = chain.decide

    def buggy(request: Any, policy: Any) -> Any:
        return real(request, replace(policy, attendance=Attendance.ATTENDED))

    chain.decide = buggy
    gateway.decide = buggy


def _writable_roots_ignored() -> None:
    """The writable-roots list is ignored: a root counts as outside."""
    builtin = _module("capconf.simulator.builtin_tools.calls")

    real = builtin.locate
    builtin.locate = lambda path, workspace, roots=(): real(path, workspace, ())


def _lexical_target() -> None:
    """The target is classified from the path text alone: symlinks are not resolved."""
    from pathlib import Path, PurePosixPath

    builtin = _module("capconf.simulator.builtin_tools.calls")
    from capconf.simulator.approval.decision import classify_target

    def lexical(path: str, workspace: Path, roots: tuple[Path, ...] = ()) -> Any:
        return classify_target(path, PurePosixPath(workspace.as_posix()),
                               tuple(PurePosixPath(r.as_posix()) for r in roots))

    real = builtin.locate

    def locate(path: str, workspace: Path, roots: tuple[Path, ...] = ()) -> Any:
        return replace(real(path, workspace, roots), target=lexical(path, workspace, roots))

    builtin.locate = locate


def _task_asks() -> None:
    """Task is treated as a change and waits for approval (gated before the delegation
    capability creates the child)."""
    tools = _module("capconf.simulator.delegation.tools")
    from capconf.simulator.approval.chain import chain_of, gate
    from capconf.simulator.approval.decision import Action, ApprovalRequest, Target

    real = tools.TOOL_HOOKS["Task"]

    def buggy(session: Any, caller: str, args: Any, factory: Any) -> Any:
        record = session.agents.get(caller)
        definition = record.view.definition if record is not None else None
        name = definition.name if definition is not None else None
        return gate(chain_of(session.state), caller, name, tool="Task",
                    request=ApprovalRequest(Action.WRITE, Target.WORKSPACE),
                    args=dict(args), run=lambda: real(session, caller, args, factory))

    tools.TOOL_HOOKS["Task"] = buggy


def _card_origin_lost() -> None:
    """Cards are raised as the parent's own, without the subagent's origin."""
    chain = _module("capconf.simulator.approval.chain")
    from capconf.simulator.approval.cards import MAIN_AGENT_ID

    real = chain.raise_card

    def buggy(board: Any, owner_id: str, **kwargs: Any) -> Any:
        return real(board, MAIN_AGENT_ID, **kwargs)

    chain.raise_card = buggy


def _task_stop_leaves_cards() -> None:
    """TaskStop ends the agent but its pending cards stay pending (the call hangs)."""
    chain = _module("capconf.simulator.approval.chain")
    from capconf.simulator.approval.cards import Board

    def buggy(board: Board, agent_id: str) -> Any:
        agents = tuple(replace(a, stopped=True) if a.id == agent_id else a
                       for a in board.agents)
        return replace(board, agents=agents), ()

    chain.stop_agent = buggy


def _pull_repeats() -> None:
    """Every pull delivers every pending card again."""
    chain = _module("capconf.simulator.approval.chain")
    from capconf.simulator.approval.cards import Board, Delivery

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
    chain = _module("capconf.simulator.approval.chain")
    from capconf.simulator.approval.cards import Delivery

    real = chain.raise_card

    def buggy(board: Any, owner_id: str, **kwargs: Any) -> Any:
        new_board, card = real(board, owner_id, **kwargs)
        pushed = replace(card, delivered=Delivery.PUSHED)
        cards = tuple(pushed if c.id == card.id else c for c in new_board.cards)
        return replace(new_board, cards=cards), pushed

    chain.raise_card = buggy


def _search_ignores_query() -> None:
    """mcp_search lists every tool of the granted servers whatever the query."""
    gateway = _mcp_gateway()
    real = gateway.ScopedGateway.search

    def search(self: Any, args: Any) -> Any:
        query = args.get("query", "")
        return real(self, {**args, "query": ""}) if isinstance(query, str) else real(self, args)

    gateway.ScopedGateway.search = search


def _search_unicode_fold() -> None:
    """mcp_search folds with Unicode case mapping and splits on str.split()."""
    gateway = _mcp_gateway()
    gateway.ascii_fold = lambda text: text.lower()
    gateway.split_terms = lambda text: text.split()


def _describe_unscoped() -> None:
    """mcp_describe looks a server up in the whole configuration, not in the grant."""
    gateway = _mcp_gateway()
    real = gateway.ScopedGateway.describe

    def describe(self: Any, args: Any) -> Any:
        wide = replace(self.resolution, granted=self.pool.world.servers)
        return real(replace(self, resolution=wide), args)

    gateway.ScopedGateway.describe = describe


def _describe_ignores_status() -> None:
    """mcp_describe contacts a disabled or unconfigured server as if it were ready."""
    gateway = _mcp_gateway()
    real = gateway.ScopedGateway.describe

    def describe(self: Any, args: Any) -> Any:
        ready = tuple(replace(s, enabled=True, configured=True)
                      for s in self.resolution.granted)
        return real(replace(self, resolution=replace(self.resolution, granted=ready)), args)

    gateway.ScopedGateway.describe = describe


def _unknown_unmounts() -> None:
    """The gateway tools are mounted only when a declared server exists."""
    gateway = _mcp_gateway()
    dim = _module("capconf.simulator.mcp.dimension")
    tools = gateway.GATEWAY_TOOLS
    dim.mounted_tools = lambda resolution: tools if resolution.granted else ()


def _declarations_exact() -> None:
    """Declarations are compared exactly: `Notion` does not find `notion`."""
    gateway = _mcp_gateway()
    gateway.McpWorld.lookup = lambda self, declared: next(
        (s for s in self.servers if s.name == declared), None)


def _duplicates_kept() -> None:
    """A server declared twice is granted (and listed) twice, without a diagnostic."""
    dim = _module("capconf.simulator.mcp.dimension")
    real = dim.resolve_mcp

    def buggy(declared: Any, world: Any, mode: Any) -> Any:
        resolution = real(declared, world, mode)
        again = tuple(world.lookup(r.name) for r in declared or ())
        kept = tuple(sorted((e for e in again if e is not None), key=lambda e: e.name))
        diags = tuple(d for d in resolution.diagnostics
                      if d.code != "MCP-SERVER-DUPLICATE")
        return replace(resolution, granted=kept, diagnostics=diags)

    dim.resolve_mcp = buggy


def _catalog_declaration_order() -> None:
    """Granted servers are kept in declaration order, not code-point order."""
    dim = _module("capconf.simulator.mcp.dimension")
    real = dim.resolve_mcp

    def buggy(declared: Any, world: Any, mode: Any) -> Any:
        resolution = real(declared, world, mode)
        order = [world.lookup(r.name) for r in declared or ()]
        names = list(dict.fromkeys(e.name for e in order if e is not None))
        by_name = {s.name: s for s in resolution.granted}
        return replace(resolution, granted=tuple(by_name[n] for n in names if n in by_name))

    dim.resolve_mcp = buggy


def _tool_error_is_success() -> None:
    """A tool result with isError: true is passed off as a success."""
    gateway = _mcp_gateway()
    from capconf.simulator.core.envelope import success

    def run(self: Any, call: Any) -> Any:
        result = self.pool.call(call.server, call.tool, call.arguments)
        if isinstance(result, gateway.McpFailure):
            return gateway._server_failure(call.server.name, result)
        return success({"content": list(result.content)})

    gateway.ScopedGateway.run = run


def _read_outside_allowed() -> None:
    """read is decided as if every path were inside the workspace."""
    builtin = _module("capconf.simulator.builtin_tools.calls")
    from capconf.simulator.approval.decision import Action, Target

    real = builtin._gated

    def gated(tool: str, action: Any, target: Any, args: Any, ctx: Any, run: Any) -> Any:
        where = Target.WORKSPACE if action is Action.READ else target
        return real(tool, action, where, args, ctx, run)

    builtin._gated = gated


def _bash_ignores_cwd() -> None:
    """bash is always decided at the workspace, wherever its `cwd` points."""
    builtin = _module("capconf.simulator.builtin_tools.calls")
    from capconf.simulator.approval.decision import Action, Target

    real = builtin._gated

    def gated(tool: str, action: Any, target: Any, args: Any, ctx: Any, run: Any) -> Any:
        where = Target.WORKSPACE if action is Action.BASH else target
        return real(tool, action, where, args, ctx, run)

    builtin._gated = gated


def _bash_as_read() -> None:
    """bash is wired to the read row (a command "only looks" at the workspace)."""
    builtin = _module("capconf.simulator.builtin_tools.calls")
    from capconf.simulator.approval.decision import Action

    real = builtin._gated

    def gated(tool: str, action: Any, target: Any, args: Any, ctx: Any, run: Any) -> Any:
        return real(tool, Action.READ if action is Action.BASH else action, target, args,
                    ctx, run)

    builtin._gated = gated


def _summary_python_json() -> None:
    """The card summary is Python's sorted json.dumps, not RFC 8785 JCS."""
    import json

    cards = _module("capconf.simulator.approval.cards")
    cards.canonical_json = lambda value: json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _declarations_unicode_folded() -> None:
    """Declarations matched after NFKC + Unicode case folding, grammar unchecked."""
    import unicodedata

    gateway = _mcp_gateway()

    def fold(text: str) -> str:
        return unicodedata.normalize("NFKC", text).casefold()

    gateway.McpWorld.lookup = lambda self, declared: next(
        (s for s in self.servers if fold(s.name) == fold(declared)), None)
    real = gateway.valid_server_name
    gateway.valid_server_name = lambda name: real(fold(name))


def _lenient_split() -> None:
    """A name without a usable `__` is split anyway (empty server or tool part)."""
    gateway = _mcp_gateway()

    def split(name: str) -> tuple[str, str]:
        server, _, tool = name.partition("__")
        return server, tool

    gateway.split_qualified = split


def _model_names_normalised() -> None:
    """Model-facing server names are NFKC-normalised and trimmed before matching."""
    import unicodedata

    gateway = _mcp_gateway()

    def server(self: Any, name: str) -> Any:
        wanted = unicodedata.normalize("NFKC", name).strip().replace("\u200b", "")
        return next((s for s in self.granted if s.name == wanted), None)

    gateway.McpResolution.server = server


def _describe_schema_of_first_tool() -> None:
    """mcp_describe answers with the first listed tool's schema and no allow-list info."""
    gateway = _mcp_gateway()
    real = gateway.ScopedGateway.describe

    def describe(self: Any, args: Any) -> Any:
        result = real(self, args)
        if result.ok:
            entry = self.resolution.server(str(args["name"]).split("__")[0])
            first = gateway.usable_tools(self.pool.tools(entry))[0][0]
            result = replace(result, content={**result.content,
                                              "input_schema": first.input_schema,
                                              "runs_directly": False})
        return result

    gateway.ScopedGateway.describe = describe


def _nested_origin_is_top() -> None:
    """A nested subagent's card is attributed to the top subagent of its spawn lineage
    (the one the main agent spawned), as a runtime that tags cards by "which task of
    mine is this" would."""
    core_ops = _module("capconf.simulator.protocol.core_ops")
    chain_module = _module("capconf.simulator.approval.chain")
    mcp_dimension = _module("capconf.simulator.mcp.dimension")
    op_tables = _module("capconf.simulator.protocol.op_tables")
    sessions: list[Any] = []
    real_spawn = core_ops.op_agent_spawn
    real_hold = chain_module.hold

    def spawn(session: Any, args: Any) -> Any:
        sessions[:] = [session]
        return real_spawn(session, args)

    def hold(chain: Any, agent_id: str, agent_name: Any, **kwargs: Any) -> Any:
        agents = sessions[0].agents if sessions else {}
        while agent_id in agents and agents[agent_id].parent in agents:
            agent_id = agents[agent_id].parent
            definition = agents[agent_id].view.definition
            agent_name = definition.name if definition else agent_id
        return real_hold(chain, agent_id, agent_name, **kwargs)

    for table in op_tables.OP_TABLES:
        if table.get("agent.spawn") is real_spawn:
            table["agent.spawn"] = spawn
    chain_module.hold = hold
    mcp_dimension.hold = hold


def _stop_misses_spawn_lineage() -> None:
    """TaskStop stops only the agent named, not the agents it spawned: a grandchild keeps
    its pending card and its call waits for ever."""
    ops = _module("capconf.simulator.approval.ops")
    ops.spawn_subtree = lambda session, agent_id: [agent_id]


MUTANTS: tuple[Mutant, ...] = (
    Mutant("appr-nested-origin-top", "a nested subagent's card names the top subagent",
           ("APPR-02",), _nested_origin_is_top),
    Mutant("appr-stop-misses-spawn-lineage", "TaskStop does not reach agents spawned under "
           "the stopped one", ("APPR-04", "DELEG-06"), _stop_misses_spawn_lineage),
    Mutant("appr-bash-ignores-cwd", "bash is decided at the workspace whatever its cwd",
           ("APPR-01",), _bash_ignores_cwd),
    Mutant("mcp-shared-gateway", "the subagent gets the shared gateway: every configured "
           "server is reachable", ("MCP-01", "MCP-02"), _shared_gateway),
    Mutant("mcp-casefold-names", "server names from the model are matched case-insensitively",
           ("MCP-02",), _casefold_call_names),
    Mutant("mcp-split-last", "server__tool is split at the last __", ("MCP-02", "MCP-03"),
           _split_at_last_separator),
    Mutant("mcp-allowlist-ignored", "allow-listed MCP tools still ask", ("MCP-03",),
           _allowlist_ignored, also_breaks=("MCP-01",)),
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
    Mutant("mcp-search-ignores-query", "mcp_search ignores its query", ("MCP-01",),
           _search_ignores_query),
    Mutant("mcp-search-unicode-fold", "mcp_search folds with str.lower and splits with "
           "str.split", ("MCP-01",), _search_unicode_fold),
    Mutant("mcp-describe-unscoped", "mcp_describe reaches servers that were not granted",
           ("MCP-02",), _describe_unscoped),
    Mutant("mcp-describe-ignores-status", "mcp_describe contacts a disabled server",
           ("MCP-04",), _describe_ignores_status),
    Mutant("mcp-unknown-unmounts", "declared but unknown servers unmount the gateway tools",
           ("MCP-01",), _unknown_unmounts),
    Mutant("mcp-declarations-exact", "declarations are matched exactly, not ASCII-folded",
           ("MCP-01",), _declarations_exact),
    Mutant("mcp-duplicates-kept", "a server declared twice is granted twice", ("MCP-01",),
           _duplicates_kept),
    Mutant("mcp-catalog-declaration-order", "granted servers listed in declaration order",
           ("MCP-01",), _catalog_declaration_order),
    Mutant("mcp-tool-error-success", "a tool's isError result is reported as success",
           ("MCP-03",), _tool_error_is_success),
    Mutant("mcp-declarations-unicode-fold", "declarations folded with NFKC + casefold",
           ("MCP-01",), _declarations_unicode_folded),
    Mutant("mcp-lenient-split", "a name that is not server__tool is routed anyway",
           ("MCP-01", "MCP-02"), _lenient_split),
    Mutant("mcp-model-names-normalised", "server names from the model are NFKC-normalised "
           "and trimmed", ("MCP-02",), _model_names_normalised),
    Mutant("mcp-describe-wrong-tool", "mcp_describe answers another tool's schema",
           ("MCP-01", "MCP-03"), _describe_schema_of_first_tool),
    Mutant("appr-read-outside-allowed", "read outside the workspace runs without a card",
           ("APPR-01",), _read_outside_allowed),
    Mutant("appr-bash-as-read", "bash is decided on the read row", ("APPR-01",),
           _bash_as_read),
    Mutant("appr-summary-not-jcs", "card summaries are Python JSON, not RFC 8785",
           ("APPR-02",), _summary_python_json),
    Mutant("appr-pushed-into-void", "cards are marked pushed with no live parent request",
           ("APPR-05",), _pushed_without_live_request),
)
