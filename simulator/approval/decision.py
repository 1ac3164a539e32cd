"""One approval decision for every agent (APPR-01): main agent and subagents alike.

The rule is a table, not code paths: :data:`TRUTH_TABLE` maps every cell of
tier x action x target x attendance to a verdict and a reason, and SPEC.md publishes it
generated from here. Two things sit outside the table on purpose, each one line in
:func:`decide`: an MCP tool on its server's approval allow-list is pre-approved (MCP-03),
and a policy pinned to "never ask" at a delegation boundary turns every ``ask`` into a
deterministic ``deny`` (room for APPR-06). The decision takes no agent identity at all,
so it cannot treat a subagent differently from the main agent: that is structural.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath


class Tier(StrEnum):
    """Ordered from least to most permissive; every verdict is monotone along it."""

    CONFIRM_BEFORE_CHANGE = "confirm-before-change"
    AUTO_WITHIN_WORKSPACE = "auto-within-workspace"
    AUTO_EDIT = "auto-edit"
    FULL_ACCESS = "full-access"


class Action(StrEnum):
    READ = "read"
    WRITE = "write"
    EDIT = "edit"
    BASH = "bash"
    MCP = "mcp"
    NETWORK = "network"
    """Network egress (WebFetch): a URL can carry workspace content out of the machine."""
    CONFIG_TOOL = "config-tool"


class Target(StrEnum):
    """Where an action lands. MCP, network and configuration tools land outside any file root;
    their rows are the same for every target."""

    WORKSPACE = "inside-workspace"
    WRITABLE_ROOT = "inside-writable-root"
    OUTSIDE = "outside"


class Attendance(StrEnum):
    """Whether a human can answer a card in this session at all (fixed for the session,
    e.g. a scheduled run is unattended). Not the same as "the parent has no live
    request right now" (APPR-05), where a human exists and the card waits for a pull."""

    ATTENDED = "attended"
    UNATTENDED = "unattended"


class Verdict(StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class AskPolicy(StrEnum):
    """ASK_PARENT forwards cards to the parent session (APPR-02). NEVER_ASK is the
    policy a delegation boundary pins (APPR-06): asking is replaced by denying."""

    ASK_PARENT = "ask-parent"
    NEVER_ASK = "never-ask"


@dataclass(frozen=True, order=True)
class Cell:
    tier: Tier
    action: Action
    target: Target
    attendance: Attendance

    def key(self) -> str:
        return f"{self.tier}/{self.action}/{self.target}/{self.attendance}"


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    reason: str
    rule: str
    """Which rule decided: a cell key, ``mcp-allowlist`` or ``never-ask``."""


@dataclass(frozen=True)
class ApprovalPolicy:
    tier: Tier
    attendance: Attendance = Attendance.ATTENDED
    ask_policy: AskPolicy = AskPolicy.ASK_PARENT


@dataclass(frozen=True)
class ApprovalRequest:
    action: Action
    target: Target
    allowlisted: bool = False
    """Only for MCP: the tool is on its server's approval allow-list."""

    def __post_init__(self) -> None:
        if self.allowlisted and self.action is not Action.MCP:
            raise ValueError("only an MCP call can be on an approval allow-list")


# -- the table -----------------------------------------------------------------------

_READ_IN = "reading inside the workspace or a writable root changes nothing"
_READ_OUT = "reading outside the workspace and the writable roots needs confirmation"
_CBC = "confirm-before-change: every change needs confirmation"
_AWW_IN = "changes inside the workspace run without confirmation from auto-within-workspace up"
_AWW_ROOT = "auto-within-workspace covers only the workspace, not other writable roots"
_OUT = "a change outside the workspace and the writable roots needs confirmation"
_AE_ROOT = "auto-edit: file changes in any writable root run without confirmation"
_AE_BASH_ROOT = "auto-edit covers file edits; a command outside the workspace needs confirmation"
_MCP = "an MCP tool off its server's allow-list acts on an external system; confirm"
_NET = "network egress can carry workspace content off the machine; confirm"
_FULL = "full-access: runs without confirmation"
_CONFIG = "a configuration tool can widen the agent's own grants; confirm in every tier"

A, Q = Verdict.ALLOW, Verdict.ASK
_T = Tier
_X = Action

ATTENDED_ROWS: tuple[tuple[Tier, Action, tuple[tuple[Verdict, str], ...]], ...] = (
    # tier, action, ((inside workspace), (inside another writable root), (outside))
    (_T.CONFIRM_BEFORE_CHANGE, _X.READ, ((A, _READ_IN), (A, _READ_IN), (Q, _READ_OUT))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.WRITE, ((Q, _CBC), (Q, _CBC), (Q, _CBC))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.EDIT, ((Q, _CBC), (Q, _CBC), (Q, _CBC))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.BASH, ((Q, _CBC), (Q, _CBC), (Q, _CBC))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.MCP, ((Q, _MCP), (Q, _MCP), (Q, _MCP))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.NETWORK, ((Q, _NET), (Q, _NET), (Q, _NET))),
    (_T.CONFIRM_BEFORE_CHANGE, _X.CONFIG_TOOL, ((Q, _CONFIG), (Q, _CONFIG), (Q, _CONFIG))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.READ, ((A, _READ_IN), (A, _READ_IN), (Q, _READ_OUT))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.WRITE, ((A, _AWW_IN), (Q, _AWW_ROOT), (Q, _OUT))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.EDIT, ((A, _AWW_IN), (Q, _AWW_ROOT), (Q, _OUT))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.BASH, ((A, _AWW_IN), (Q, _AWW_ROOT), (Q, _OUT))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.MCP, ((Q, _MCP), (Q, _MCP), (Q, _MCP))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.NETWORK, ((Q, _NET), (Q, _NET), (Q, _NET))),
    (_T.AUTO_WITHIN_WORKSPACE, _X.CONFIG_TOOL, ((Q, _CONFIG), (Q, _CONFIG), (Q, _CONFIG))),
    (_T.AUTO_EDIT, _X.READ, ((A, _READ_IN), (A, _READ_IN), (Q, _READ_OUT))),
    (_T.AUTO_EDIT, _X.WRITE, ((A, _AWW_IN), (A, _AE_ROOT), (Q, _OUT))),
    (_T.AUTO_EDIT, _X.EDIT, ((A, _AWW_IN), (A, _AE_ROOT), (Q, _OUT))),
    (_T.AUTO_EDIT, _X.BASH, ((A, _AWW_IN), (Q, _AE_BASH_ROOT), (Q, _OUT))),
    (_T.AUTO_EDIT, _X.MCP, ((Q, _MCP), (Q, _MCP), (Q, _MCP))),
    (_T.AUTO_EDIT, _X.NETWORK, ((Q, _NET), (Q, _NET), (Q, _NET))),
    (_T.AUTO_EDIT, _X.CONFIG_TOOL, ((Q, _CONFIG), (Q, _CONFIG), (Q, _CONFIG))),
    (_T.FULL_ACCESS, _X.READ, ((A, _READ_IN), (A, _READ_IN), (A, _FULL))),
    (_T.FULL_ACCESS, _X.WRITE, ((A, _FULL), (A, _FULL), (A, _FULL))),
    (_T.FULL_ACCESS, _X.EDIT, ((A, _FULL), (A, _FULL), (A, _FULL))),
    (_T.FULL_ACCESS, _X.BASH, ((A, _FULL), (A, _FULL), (A, _FULL))),
    (_T.FULL_ACCESS, _X.MCP, ((A, _FULL), (A, _FULL), (A, _FULL))),
    (_T.FULL_ACCESS, _X.NETWORK, ((A, _FULL), (A, _FULL), (A, _FULL))),
    (_T.FULL_ACCESS, _X.CONFIG_TOOL, ((Q, _CONFIG), (Q, _CONFIG), (Q, _CONFIG))),
)

UNATTENDED_RULE: Mapping[Verdict, Verdict] = {
    Verdict.ALLOW: Verdict.ALLOW,
    Verdict.ASK: Verdict.DENY,
    Verdict.DENY: Verdict.DENY,
}
"""Unattended sessions decide at once: nobody will ever answer a card."""

UNATTENDED_PREFIX = "unattended, so denied at once instead of asking: "
NEVER_ASK_PREFIX = "approval policy pinned to never-ask, so denied instead of asking: "
ALLOWLIST_REASON = "the tool is on its MCP server's approval allow-list"


def _build_table() -> dict[Cell, Decision]:
    table: dict[Cell, Decision] = {}
    for tier, action, cells in ATTENDED_ROWS:
        for target, (verdict, reason) in zip(Target, cells, strict=True):
            for attendance in Attendance:
                cell = Cell(tier, action, target, attendance)
                if attendance is Attendance.UNATTENDED and verdict is not Verdict.ALLOW:
                    decision = Decision(
                        UNATTENDED_RULE[verdict], UNATTENDED_PREFIX + reason, cell.key()
                    )
                else:
                    decision = Decision(verdict, reason, cell.key())
                table[cell] = decision
    return table


TRUTH_TABLE: Mapping[Cell, Decision] = _build_table()


def decide(request: ApprovalRequest, policy: ApprovalPolicy) -> Decision:
    """The one decision. Pre-approval by allow-list, then the table, then never-ask."""
    if request.allowlisted:
        return Decision(Verdict.ALLOW, ALLOWLIST_REASON, "mcp-allowlist")
    decision = TRUTH_TABLE[Cell(policy.tier, request.action, request.target, policy.attendance)]
    if decision.verdict is Verdict.ASK and policy.ask_policy is AskPolicy.NEVER_ASK:
        return Decision(Verdict.DENY, NEVER_ASK_PREFIX + decision.reason, "never-ask")
    return decision


def truth_table_markdown() -> str:
    """The published table (SPEC.md, golden): one row per cell, in enum order."""
    lines = [
        "| tier | action | target | attendance | verdict | reason |",
        "|---|---|---|---|---|---|",
    ]
    for cell in sorted(TRUTH_TABLE, key=_cell_order):
        d = TRUTH_TABLE[cell]
        lines.append(
            f"| {cell.tier} | {cell.action} | {cell.target} | {cell.attendance} "
            f"| {d.verdict} | {d.reason} |"
        )
    return "\n".join(lines)


def _cell_order(cell: Cell) -> tuple[int, int, int, int]:
    return (
        list(Tier).index(cell.tier),
        list(Action).index(cell.action),
        list(Target).index(cell.target),
        list(Attendance).index(cell.attendance),
    )


# -- which calls are approval items --------------------------------------------------

TOOL_ACTIONS: Mapping[str, Action] = {
    "read": Action.READ,
    "glob": Action.READ,
    "grep": Action.READ,
    "write": Action.WRITE,
    "edit": Action.EDIT,
    "bash": Action.BASH,
    "mcp_call": Action.MCP,
    "WebFetch": Action.NETWORK,
}

NOT_APPROVAL_ITEMS: Mapping[str, str] = {
    "Task": "Task writes nothing and has no side effect; each call the subagent makes "
    "is decided on its own (APPR-03)",
    "TaskStop": "stopping a subagent only narrows what runs",
    "mcp_search": "lists tools of granted servers; nothing reaches an external system "
    "beyond tools/list",
    "mcp_describe": "describes one tool of a granted server; nothing is called",
}


class UnclassifiedTool(LookupError):
    """A tool nobody classified is not silently exempt from approval."""


def approval_action(tool: str, extra: Mapping[str, Action | None] | None = None) -> Action | None:
    """The action a tool call is decided as, or None when it is not an approval item.

    ``extra`` lets a runtime classify its own tools (configuration tools map to
    ``Action.CONFIG_TOOL``; ``None`` marks a tool that is not an approval item)."""
    if extra is not None and tool in extra:
        return extra[tool]
    if tool in TOOL_ACTIONS:
        return TOOL_ACTIONS[tool]
    if tool in NOT_APPROVAL_ITEMS:
        return None
    raise UnclassifiedTool(f"tool {tool!r} has no approval classification")


# -- connector actions (CONN-02) --------------------------------------------------------

CONNECTOR_RULE = "connector-permission"
CONNECTOR_REASONS: Mapping[Verdict, str] = {
    Verdict.ALLOW: "the connector method's resolved permission is allow",
    Verdict.ASK: "the connector method's resolved permission is ask; the manifest's card asks",
    Verdict.DENY: "the connector method's resolved permission is deny",
}


def decide_connector(permission: Verdict, policy: ApprovalPolicy) -> Decision:
    """A connector method call is an approval item whose verdict is the user's
    per-connector permission resolved from the manifest (CONN-02), not a tier cell: the
    tier never turns a connector's ``ask`` into ``allow``. The unattended and never-ask
    rules apply to it exactly as to the table, so this is still the one decision."""
    reason = CONNECTOR_REASONS[permission]
    if permission is Verdict.ASK and policy.attendance is Attendance.UNATTENDED:
        return Decision(Verdict.DENY, UNATTENDED_PREFIX + reason, CONNECTOR_RULE)
    if permission is Verdict.ASK and policy.ask_policy is AskPolicy.NEVER_ASK:
        return Decision(Verdict.DENY, NEVER_ASK_PREFIX + reason, "never-ask")
    return Decision(permission, reason, CONNECTOR_RULE)


# -- where a path lands --------------------------------------------------------------

def _normal(path: str, base: PurePosixPath) -> PurePosixPath:
    joined = posixpath.join(str(base), path)
    norm = posixpath.normpath(joined)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return PurePosixPath(norm)


def _within(path: PurePosixPath, root: PurePosixPath) -> bool:
    return path == root or root in path.parents


def classify_target(
    path: str, workspace: PurePosixPath, writable_roots: tuple[PurePosixPath, ...] = ()
) -> Target:
    """Lexical: a relative path is taken from the workspace and ``..`` is collapsed
    before comparing, so ``sub/../../x`` is outside. A writable root inside the
    workspace is just the workspace. Symlinks are the edge's job (resolve_target)."""
    absolute = _normal(path, workspace)
    if _within(absolute, _normal(".", workspace)):
        return Target.WORKSPACE
    if any(_within(absolute, _normal(".", root)) for root in writable_roots):
        return Target.WRITABLE_ROOT
    return Target.OUTSIDE


def resolve_target(path: str, workspace: Path, writable_roots: tuple[Path, ...] = ()) -> Target:
    """Edge: resolve symlinks on disk first, so a link inside the workspace that points
    outside is classified by where the write would really land."""
    return locate(path, workspace, writable_roots).target


@dataclass(frozen=True)
class Located:
    """Where a path really lands when it is decided: the target class, the root the
    decision is about (the workspace, the writable root, or ``/`` for outside) and the
    link-free path below that root. The action later runs on exactly this path with no
    link followed, so a link planted after the decision cannot redirect it (APPR-01)."""

    target: Target
    root: Path
    rel: str


def locate(path: str, workspace: Path, writable_roots: tuple[Path, ...] = ()) -> Located:
    try:
        real = Path(posixpath.join(str(workspace), path)).resolve()
    except (OSError, RuntimeError):  # a link loop: decided lexically, acted on as written
        real = Path(posixpath.normpath(posixpath.join(str(workspace), path)))
    ws = PurePosixPath(workspace.resolve().as_posix())
    roots = tuple(PurePosixPath(r.resolve().as_posix()) for r in writable_roots)
    target = classify_target(real.as_posix(), ws, roots)
    base = PurePosixPath("/")
    if target is Target.WORKSPACE:
        base = ws
    elif target is Target.WRITABLE_ROOT:
        base = next(r for r in roots if _within(PurePosixPath(real.as_posix()), r))
    rel = PurePosixPath(real.as_posix()).relative_to(base).as_posix()
    return Located(target, Path(base), "" if rel == "." else rel)


# -- SPEC.md tables (capconf.simulator.spec_tables collects every module's SPEC_TABLES) --

SPEC_TABLES: dict[str, Callable[[], str]] = {
    "approval-truth-table": truth_table_markdown,
}
