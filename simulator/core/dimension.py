"""The shape every capability dimension shares: declare -> resolve -> section -> tools.

``capconf.simulator.compose.agent.compile_agent`` walks ``capconf.simulator.areas.DIMENSIONS``
in catalog order and asks each for a ``DimensionOutcome``; the dispatcher's ``tool.call``
routes a call to the dimension that mounted the tool. Nothing outside a dimension module
knows how that dimension resolves names or renders its section.

The protocol is generic in the definition it reads, so that this ground floor needs no
area: the composition root fixes it to ``definition.document.Definition``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from capconf.simulator.core.diagnostics import Diagnostic, Mode
from capconf.simulator.core.envelope import ToolResult
from capconf.simulator.core.mounted import MountedTool

DefinitionT = TypeVar("DefinitionT", contravariant=True)


@dataclass(frozen=True)
class CompileContext:
    mode: Mode
    workspace: Path
    granted: tuple[str, ...]  # canonical names granted through `tools`
    agent_name: str | None


@dataclass(frozen=True)
class DimensionOutcome:
    """``section`` is None when the dimension contributes nothing to the prompt;
    ``state`` is whatever the dimension needs again at call time (resolved entries, a
    bound directory ...)."""

    section: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    tools: tuple[MountedTool, ...] = ()
    state: Any = None


@dataclass
class CallContext:
    """Per-call facts: which agent calls, and mutable per-session state a dimension may
    keep under its own key (e.g. a gateway journal, approval cards)."""

    agent_id: str
    agent_name: str | None
    workspace: Path
    session_state: dict[str, Any] = field(default_factory=dict)


class Dimension(Protocol[DefinitionT]):
    key: str  # "skills" | "knowledge" | "mcp" | "memory"

    def parse_world(self, args: Any, workspace: Path) -> Any: ...

    def compile(self, definition: DefinitionT, world: Any,
                ctx: CompileContext) -> DimensionOutcome: ...

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome, world: Any,
             ctx: CallContext) -> ToolResult: ...
