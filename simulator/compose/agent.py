"""Compile a definition against a world: grants, catalog, prompt and mounted tools.

This is the one place where the dimensions meet; each contributes its section,
diagnostics and tools through ``capconf.simulator.areas.DIMENSIONS``, and nothing else
decides what a subagent sees.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from capconf.simulator.areas import DIMENSIONS
from capconf.simulator.compose.world import World
from capconf.simulator.core.diagnostics import Diagnostic, Mode
from capconf.simulator.core.dimension import CompileContext, DimensionOutcome
from capconf.simulator.core.mounted import MountedTool
from capconf.simulator.definition.document import Definition, SourceFormat
from capconf.simulator.definition.parse import parse_definition
from capconf.simulator.prompt.assembly import Prompt, assemble_prompt
from capconf.simulator.tools.catalog import BUILTIN_BY_NAME, DIMENSION_OF
from capconf.simulator.tools.grants import ToolGrant, resolve_tools

__all__ = ["AgentView", "MountedTool", "compile_agent"]


@dataclass(frozen=True)
class AgentView:
    definition: Definition | None
    grant: ToolGrant
    prompt: Prompt | None
    mounted: tuple[MountedTool, ...]
    diagnostics: tuple[Diagnostic, ...]
    outcomes: dict[str, DimensionOutcome]

    def owner_of(self, tool: str) -> str | None:
        """The dimension key that mounted ``tool``, "builtin", or None if not mounted."""
        for key, outcome in self.outcomes.items():
            if any(t.name == tool for t in outcome.tools):
                return key
        if any(t.name == tool for t in self.mounted):
            return "builtin"
        return None


_GENERIC_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


def _builtin(name: str) -> MountedTool:
    spec = BUILTIN_BY_NAME.get(name)
    if spec is not None:
        return MountedTool(spec.name, spec.description, spec.input_schema)
    return MountedTool(name, f"Session tool {name}.", _GENERIC_SCHEMA)


def compile_agent(
    source: str | bytes,
    world: World,
    mode: Mode = Mode.PARSE,
    fmt: SourceFormat | None = None,
    filename: str | None = None,
) -> AgentView:
    parsed = parse_definition(source, mode, fmt, filename)
    definition = parsed.definition
    diagnostics = list(parsed.diagnostics)
    if definition is None:
        return AgentView(None, ToolGrant((), ()), None, (), tuple(diagnostics), {})

    grant = resolve_tools(definition.tools, world.registry, world.session_tools, mode,
                          definition.declared_dimensions())
    diagnostics += grant.diagnostics
    ctx = CompileContext(mode, world.workspace, grant.granted, definition.name)
    outcomes = {d.key: d.compile(definition, world.dimensions[d.key], ctx) for d in DIMENSIONS}
    for outcome in outcomes.values():
        diagnostics += outcome.diagnostics
    prompt = assemble_prompt(world.frame, {k: o.section for k, o in outcomes.items()},
                             definition.body)
    mounted = [_builtin(n) for n in grant.granted if n not in DIMENSION_OF]
    for outcome in outcomes.values():
        mounted += outcome.tools
    return AgentView(definition, grant, prompt, tuple(mounted), tuple(diagnostics), outcomes)
