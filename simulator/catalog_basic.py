"""Minimal catalog sections for the four capability dimensions.

This module gives the walking skeleton a complete declare -> resolve -> section path for
every dimension, so prompt order and omission (PROMPT-01..03) are checkable end to end.
The dimension modules (skills, knowledge, mcp, memory) replace these pieces one by one;
the section headings and the omission rule stay as they are here.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from simulator.declarations import KnowledgeDeclaration, MemoryMode, NameRef
from simulator.diagnostics import Diagnostic, DiagnosticKind, Mode, Severity, WorldSetupError, diagnose
from simulator.dimension import CallContext, CompileContext, DimensionOutcome
from simulator.envelope import ToolResult, failure
from simulator.mounted import MountedTool

if TYPE_CHECKING:
    from simulator.definition import Definition

W, E = Severity.WARNING, Severity.ERROR

SKILL_NOT_FOUND = DiagnosticKind(
    "SKILL-NOT-FOUND", "SKILL-03", W, W,
    "a declared skill is in no discovery layer; its catalog entry is absent")
MCP_UNKNOWN_SERVER = DiagnosticKind(
    "MCP-UNKNOWN-SERVER", "MCP-04", W, W, "a declared MCP server does not exist in the MCP config")
MCP_NOT_CONFIGURED = DiagnosticKind(
    "MCP-NOT-CONFIGURED", "MCP-04", W, W,
    "a declared MCP server exists but is disabled or not configured; it still mounts")
KB_REQUIRES_READ = DiagnosticKind(
    "KB-REQUIRES-READ", "KB-08", W, E,
    "knowledge is declared without granting `read`, so hits could not be opened")

DIAGNOSTIC_KINDS = (SKILL_NOT_FOUND, MCP_UNKNOWN_SERVER, MCP_NOT_CONFIGURED, KB_REQUIRES_READ)

SKILL_LAYERS: tuple[str, ...] = (
    "workspace", "ecosystem-workspace", "system", "ecosystem-user", "plugin",
)


@dataclass(frozen=True)
class SkillEntry:
    name: str
    description: str
    location: str
    layer: str


@dataclass(frozen=True)
class SkillWorld:
    layers: tuple[tuple[str, Path], ...] = ()


@dataclass(frozen=True)
class McpServer:
    name: str
    enabled: bool = True
    configured: bool = True


@dataclass(frozen=True)
class McpWorld:
    servers: tuple[McpServer, ...] = ()


@dataclass(frozen=True)
class MemoryWorld:
    root: Path | None = None


def parse_skill_world(args: Any, workspace: Path) -> SkillWorld:
    if args is None:
        return SkillWorld()
    if not isinstance(args, dict) or not isinstance(args.get("layers", {}), dict):
        raise WorldSetupError(("skills", "layers"), "must map layer names to directories")
    layers = []
    for layer, directory in args.get("layers", {}).items():
        if layer not in SKILL_LAYERS:
            raise WorldSetupError(("skills", "layers", layer),
                                  f"unknown layer; layers are {', '.join(SKILL_LAYERS)}")
        if not isinstance(directory, str):
            raise WorldSetupError(("skills", "layers", layer), "must be a directory path")
        path = Path(directory)
        layers.append((layer, path if path.is_absolute() else workspace / path))
    layers.sort(key=lambda lp: SKILL_LAYERS.index(lp[0]))
    return SkillWorld(tuple(layers))


def parse_mcp_world(args: Any, workspace: Path) -> McpWorld:
    if args is None:
        return McpWorld()
    servers_arg = args.get("servers") if isinstance(args, dict) else None
    if not isinstance(servers_arg, list):
        raise WorldSetupError(("mcp", "servers"), "must be a list of servers")
    servers = []
    for i, row in enumerate(servers_arg):
        if not isinstance(row, dict) or not isinstance(row.get("name"), str):
            raise WorldSetupError(("mcp", "servers", i), "must be an object with a `name`")
        servers.append(McpServer(row["name"], bool(row.get("enabled", True)),
                                 bool(row.get("configured", True))))
    return McpWorld(tuple(servers))


def parse_memory_world(args: Any, workspace: Path) -> MemoryWorld:
    if args is None:
        return MemoryWorld()
    root = args.get("root") if isinstance(args, dict) else None
    if root is not None and not isinstance(root, str):
        raise WorldSetupError(("memory", "root"), "must be a directory path")
    return MemoryWorld(Path(root) if root else None)


def _front_matter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if not text.startswith("---"):
        return {}
    end = text.find("\n---", 3)
    try:
        data = yaml.safe_load(text[3:end]) if end > 0 else None
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def discover_skills(world: SkillWorld, workspace: Path) -> dict[str, SkillEntry]:
    """First layer wins; folders are read in sorted order."""
    found: dict[str, SkillEntry] = {}
    for layer, directory in world.layers:
        if not directory.is_dir():
            continue
        for skill_dir in sorted(p for p in directory.iterdir() if p.is_dir()):
            skill_md = skill_dir / "SKILL.md"
            if not skill_md.is_file():
                continue
            meta = _front_matter(skill_md)
            name = str(meta.get("name") or skill_dir.name)
            if name in found:
                continue
            try:
                where = skill_md.resolve().relative_to(workspace).as_posix()
            except ValueError:
                where = f"{layer}:{skill_dir.name}/SKILL.md"
            found[name] = SkillEntry(name, " ".join(str(meta.get("description", "")).split()),
                                     where, layer)
    return found


def skills_section(declared: tuple[NameRef, ...] | None, world: SkillWorld, workspace: Path,
                   mode: Mode) -> tuple[str | None, list[Diagnostic]]:
    if not declared:
        return None, []
    available = discover_skills(world, workspace)
    diagnostics: list[Diagnostic] = []
    lines: list[str] = []
    for ref in declared:
        entry = available.get(ref.name)
        if entry is None:
            diagnostics.append(diagnose(
                SKILL_NOT_FOUND, mode, f"skill `{ref.name}` is in no discovery layer, so it is "
                "not in the catalog. Install it or remove it from `skills`.", ref.location))
            continue
        lines += [f"- name: {entry.name}", f"  description: {entry.description}",
                  f"  location: {entry.location}"]
    if not lines:
        return None, diagnostics
    head = "## Skills\nLoad a skill's instructions with use_skill before following it."
    return head + "\n" + "\n".join(lines), diagnostics


def knowledge_section(declared: tuple[KnowledgeDeclaration, ...] | None) -> str | None:
    if not declared:
        return None
    lines = [f"- {k.name}: {k.glob}" for k in declared]
    return ("## Knowledge sources\nSearch these with kb_search; a hit is a line, not an "
            "answer: open the file with read.\n" + "\n".join(lines))


def mcp_section(declared: tuple[NameRef, ...] | None, world: McpWorld,
                mode: Mode) -> tuple[str | None, list[Diagnostic]]:
    if not declared:
        return None, []
    servers = {s.name: s for s in world.servers}
    diagnostics: list[Diagnostic] = []
    lines: list[str] = []
    for ref in declared:
        server = servers.get(ref.name)
        if server is None:
            known = ", ".join(sorted(servers)) or "none"
            diagnostics.append(diagnose(
                MCP_UNKNOWN_SERVER, mode, f"MCP server `{ref.name}` does not exist in the MCP "
                f"config (servers: {known}). Remove it or add the server.", ref.location))
            continue
        if not (server.enabled and server.configured):
            state = "disabled" if not server.enabled else "not configured"
            diagnostics.append(diagnose(
                MCP_NOT_CONFIGURED, mode, f"MCP server `{ref.name}` is {state}; it is mounted "
                "but its calls fail until it is configured. Configure it in the MCP settings.",
                ref.location))
            lines.append(f"- {ref.name} ({state})")
        else:
            lines.append(f"- {ref.name}")
    if not lines:
        return None, diagnostics
    return "## MCP servers\n" + "\n".join(lines), diagnostics


def memory_section(mode_value: MemoryMode) -> str | None:
    if mode_value is MemoryMode.NONE:
        return None
    return f"## Memory\nMode: {mode_value}. Use memory_read, memory_write and memory_search."


def knowledge_read_check(declared: tuple[KnowledgeDeclaration, ...] | None,
                         read_granted: bool, mode: Mode) -> list[Diagnostic]:
    if not declared or read_granted:
        return []
    return [diagnose(KB_REQUIRES_READ, mode,
                     "knowledge is declared but `read` is not granted, so the subagent would get "
                     "path:line hits it cannot open. Add `read` to `tools`.",
                     declared[0].location)]


def _obj(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required,
            "additionalProperties": False}


DIMENSION_TOOL_SCHEMAS: dict[str, tuple[str, dict[str, Any]]] = {
    "use_skill": ("Load a skill's instructions (or one of its references) by name.",
                  _obj({"name": {"type": "string"}, "reference": {"type": "string"}}, ["name"])),
    "kb_search": ("Search the declared knowledge sources. A hit is a line, not an answer: "
                  "open the file with read.",
                  _obj({"query": {"type": "string"}}, ["query"])),
    "memory_write": ("Append to a memory file.",
                     _obj({"file": {"type": "string"}, "content": {"type": "string"}},
                          ["file", "content"])),
    "memory_read": ("Read a memory file.", _obj({"file": {"type": "string"}}, ["file"])),
    "memory_search": ("Search memory by keywords.",
                      _obj({"query": {"type": "string"}}, ["query"])),
}


def _mounted(name: str) -> MountedTool:
    description, schema = DIMENSION_TOOL_SCHEMAS[name]
    return MountedTool(name, description, schema)


def _not_simulated(tool: str) -> ToolResult:
    return failure("not_simulated", f"`{tool}` is mounted, but this build of the reference "
                   "simulator does not execute it yet", {"tool": tool})


class BasicSkills:
    key = "skills"

    def parse_world(self, args: Any, workspace: Path) -> SkillWorld:
        return parse_skill_world(args, workspace)

    def compile(self, definition: Definition, world: SkillWorld,
                ctx: CompileContext) -> DimensionOutcome:
        section, diags = skills_section(definition.skills, world, ctx.workspace, ctx.mode)
        tools = (_mounted("use_skill"),) if section is not None else ()
        return DimensionOutcome(section, tuple(diags), tools)

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome, world: Any,
             ctx: CallContext) -> ToolResult:
        return _not_simulated(tool)


class BasicKnowledge:
    key = "knowledge"

    def parse_world(self, args: Any, workspace: Path) -> None:
        return None

    def compile(self, definition: Definition, world: Any,
                ctx: CompileContext) -> DimensionOutcome:
        diags = knowledge_read_check(definition.knowledge, "read" in ctx.granted, ctx.mode)
        section = knowledge_section(definition.knowledge)
        tools = (_mounted("kb_search"),) if section is not None else ()
        return DimensionOutcome(section, tuple(diags), tools)

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome, world: Any,
             ctx: CallContext) -> ToolResult:
        return _not_simulated(tool)


class BasicMcp:
    key = "mcp"

    def parse_world(self, args: Any, workspace: Path) -> McpWorld:
        return parse_mcp_world(args, workspace)

    def compile(self, definition: Definition, world: McpWorld,
                ctx: CompileContext) -> DimensionOutcome:
        section, diags = mcp_section(definition.mcp_servers, world, ctx.mode)
        return DimensionOutcome(section, tuple(diags))

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome, world: Any,
             ctx: CallContext) -> ToolResult:
        return _not_simulated(tool)


class BasicMemory:
    key = "memory"

    def parse_world(self, args: Any, workspace: Path) -> MemoryWorld:
        return parse_memory_world(args, workspace)

    def compile(self, definition: Definition, world: MemoryWorld,
                ctx: CompileContext) -> DimensionOutcome:
        section = memory_section(definition.memory_mode)
        tools = tuple(_mounted(n) for n in ("memory_write", "memory_read", "memory_search")
                      ) if section is not None else ()
        return DimensionOutcome(section, (), tools)

    def call(self, tool: str, args: dict[str, Any], outcome: DimensionOutcome, world: Any,
             ctx: CallContext) -> ToolResult:
        return _not_simulated(tool)
