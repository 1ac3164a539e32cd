"""The memory dimension: modes, the memory world, directory binding, section and tools.

Layout (MEM-01, MEM-04): a private subagent writes ``<subagent_root>/<name>/`` where
``<name>`` is its definition name in ASCII lower case (a name with non-ASCII letters:
``_`` + a hash of it, see ``unicode_directory_name``); a shared subagent is bound to the
main agent's memory directory itself, because "shared" in the seed means the business
agent shares experience *with the main agent*, and private is defined by being unable to
write there. The world refuses a subagent root that overlaps the main directory, so no
private directory can ever be (or contain, or sit inside) the main memory. Names are
lower-cased because macOS and Windows file systems are case-insensitive: ``Reviewer`` and
``reviewer`` would share a directory on one OS and not on another.

The main memory's global switch (``main_enabled``) is part of the world so a harness can
flip it, and nothing here reads it (MEM-08): it is the main agent's prompt-cache
discipline, and a default-off switch must not veto an explicit ``memory: private``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from capconf.simulator.core.diagnostics import (
    Diagnostic,
    DiagnosticKind,
    Location,
    Mode,
    Severity,
    WorldSetupError,
    diagnose,
)
from capconf.simulator.core.names import ascii_fold
from capconf.simulator.core.unicode_names import name_reason
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory.append import PROCESS_SERIALIZER, AppendSerializer
from capconf.simulator.memory.fs import MemoryFsError, open_directory
from capconf.simulator.memory.names import NAME_RULES, WINDOWS_DEVICES
from capconf.simulator.memory.resident import collect_candidates, plan_resident, render_section
from capconf.simulator.memory.tools import (
    LIMITS,
    TOOL_ERROR_CODES,
    TOOL_SPECS,
    MemoryTool,
    MemoryToolbox,
    mount_tools,
)

MEM_SHARED_CONSENT = DiagnosticKind(
    code="MEM-SHARED-CONSENT",
    requirement="MEM-01",
    parse_severity=Severity.INFO,
    save_severity=Severity.INFO,
    summary="memory: shared writes into the main agent's memory (informed consent, "
    "not a block)",
)
MEM_AGENT_NAME_UNUSABLE = DiagnosticKind(
    code="MEM-AGENT-NAME-UNUSABLE",
    requirement="MEM-01",  # the agent-name rule is part of MEM-01's layout
    parse_severity=Severity.WARNING,
    save_severity=Severity.ERROR,
    summary="the agent name cannot name a private memory directory; memory not mounted",
)
MEM_DIR_UNSAFE = DiagnosticKind(
    code="MEM-DIR-UNSAFE",
    requirement="MEM-04",
    parse_severity=Severity.WARNING,
    save_severity=Severity.WARNING,
    summary="the memory directory path holds a symlink or a non-directory; every memory "
    "call is refused until it is fixed",
)
DIAGNOSTIC_KINDS: tuple[DiagnosticKind, ...] = (
    MEM_SHARED_CONSENT,
    MEM_AGENT_NAME_UNUSABLE,
    MEM_DIR_UNSAFE,
)

SHARED_CONSENT_MESSAGE = (
    "memory: shared binds this agent's memory tools to the main agent's memory: what it "
    "writes, which may be mistaken or invented, can enter the main agent's future prompts. "
    "This is allowed; choose memory: private (recommended) unless the agent must share "
    "experience with the main agent."
)

DEFAULT_SUBAGENT_ROOT = PurePosixPath(".capconf/memory/agents")
DEFAULT_MAIN_DIR = PurePosixPath(".capconf/memory/main")


@dataclass(frozen=True)
class MemoryWorld:
    workspace: Path
    subagent_root: PurePosixPath = DEFAULT_SUBAGENT_ROOT
    main_dir: PurePosixPath = DEFAULT_MAIN_DIR
    main_enabled: bool = False  # the main memory's global switch; never read here


def consent_notice(declared: MemoryMode, mode: Mode,
                   location: Location | None = None) -> tuple[Diagnostic, ...]:
    """The informed-consent notice of ``memory: shared`` (MEM-01): info in both modes,
    because the seed calls it "not a block, but informed consent"; a warning would fail
    CI gates that reject warnings and punish a legitimate choice. An unreadable mode is
    the definition parser's ``DEF-BAD-MEMORY-MODE``, not repeated here."""
    if declared is not MemoryMode.SHARED:
        return ()
    return (diagnose(MEM_SHARED_CONSENT, mode, SHARED_CONSENT_MESSAGE,
                     location or Location(("memory",))),)


_WORLD_KEYS = ("subagent_root", "main_dir", "main_enabled")


def _world_path(args: Mapping[str, object], key: str, default: PurePosixPath) -> PurePosixPath:
    raw = args.get(key, default.as_posix())
    if not isinstance(raw, str) or raw == "":
        raise WorldSetupError((key,), f"{key} must be a non-empty workspace-relative path")
    if "\x00" in raw or "\\" in raw or raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
        raise WorldSetupError((key,), f"{key} must be a relative POSIX path inside the "
                                      f"workspace (got {raw!r})")
    parts = raw.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise WorldSetupError((key,), f"{key} must not contain empty, '.' or '..' "
                                      f"components (got {raw!r})")
    return PurePosixPath(*parts)


def parse_memory_world(args: object, workspace: Path) -> MemoryWorld:
    """Validate the ``memory`` part of ``world.setup``; every key is optional."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise WorldSetupError((), "the memory world must be an object")
    for key in sorted(str(k) for k in args):
        if key not in _WORLD_KEYS:
            raise WorldSetupError((key,), f"unknown memory world key {key!r}; known keys: "
                                          f"{', '.join(_WORLD_KEYS)}")
    root = _world_path(args, "subagent_root", DEFAULT_SUBAGENT_ROOT)
    main = _world_path(args, "main_dir", DEFAULT_MAIN_DIR)
    if root == main or root.is_relative_to(main) or main.is_relative_to(root):
        raise WorldSetupError(("subagent_root",), "subagent_root and main_dir overlap; a "
                              "private memory directory could then be the main memory")
    enabled = args.get("main_enabled", False)
    if type(enabled) is not bool:
        raise WorldSetupError(("main_enabled",), "main_enabled must be true or false")
    return MemoryWorld(workspace, root, main, enabled)


_AGENT_DIR = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


UNICODE_DIR_PREFIX = "_"
UNICODE_DIR_HEX = 32


def unicode_directory_name(agent_name: str) -> str:
    """``_`` + the first 32 hex digits of SHA-256 over the UTF-8 of the ASCII-folded name.

    A hash, not the name itself: file systems disagree on non-ASCII names (macOS stores
    NFD, NTFS and APFS fold non-ASCII case with their own tables, and 64 Chinese characters
    percent-encoded exceed the 255-byte component limit), while 33 ASCII characters mean
    the same directory everywhere. ASCII folding first, so ``翻译Bot`` and ``翻译bot`` are
    one agent exactly as ``Reviewer`` and ``reviewer`` are; ``Σοφία`` and ``σοφία`` are two
    (only ASCII case folds). The leading ``_`` never starts an ASCII agent's directory, so
    the two families cannot collide; within the family 128 bits make a collision as likely
    as guessing a random UUID."""
    digest = hashlib.sha256(ascii_fold(agent_name).encode("utf-8")).hexdigest()
    return UNICODE_DIR_PREFIX + digest[:UNICODE_DIR_HEX]


def private_directory_name(agent_name: str) -> str | None:
    """The directory name of an agent's private memory, or None when the name cannot be
    one (a separator, ``..``, a trailing dot Windows would strip, a Windows device name,
    or a non-ASCII name that breaks the Unicode name rule of DEF-01)."""
    if not agent_name.isascii():
        return unicode_directory_name(agent_name) if name_reason(agent_name) is None else None
    lowered = agent_name.lower()
    if _AGENT_DIR.fullmatch(lowered) is None or ".." in lowered or lowered.endswith("."):
        return None
    if lowered.split(".")[0] in WINDOWS_DEVICES:
        return None
    return lowered


@dataclass(frozen=True)
class MemoryBinding:
    """The one directory a subagent's memory tools and section use (workspace-relative)."""

    mode: MemoryMode
    agent: str
    directory: PurePosixPath


@dataclass(frozen=True)
class MemoryResolution:
    binding: MemoryBinding | None
    diagnostics: tuple[Diagnostic, ...] = ()


def resolve_memory(
    agent_name: str,
    declared: MemoryMode,
    world: MemoryWorld,
    mode: Mode,
    location: Location | None = None,
) -> MemoryResolution:
    """Bind the declared mode to a directory. Mode none binds nothing (no section, no
    tools, MEM-02). The directory is checked for symlinks now so the user hears about it
    at load time; the tools check again on every call, since the disk can change."""
    where = location or Location(("memory",))
    if declared is MemoryMode.NONE:
        return MemoryResolution(None)
    if declared is MemoryMode.SHARED:
        directory = world.main_dir
    else:
        dir_name = private_directory_name(agent_name)
        if dir_name is None:
            return MemoryResolution(None, (diagnose(
                MEM_AGENT_NAME_UNUSABLE, mode,
                f"agent name {agent_name!r} cannot name a private memory directory (letters "
                "and digits of any script per DEF-01, '.', '_', '-'; at most 64; no '..'; not "
                "a device name); memory is not mounted. "
                "Next step: rename the agent.", where),))
        directory = world.subagent_root / dir_name
    binding = MemoryBinding(declared, agent_name, directory)
    try:
        with open_directory(world.workspace, directory, create=False):
            pass
    except MemoryFsError as exc:
        return MemoryResolution(binding, (diagnose(
            MEM_DIR_UNSAFE, mode,
            f"memory directory {directory.as_posix()} is unusable: {exc.message}. Every "
            "memory call is refused until the link is removed.", where),))
    return MemoryResolution(binding)


def memory_section(resolution: MemoryResolution, world: MemoryWorld) -> str | None:
    """The ``## Memory`` catalog section (no trailing newline), or None when unbound."""
    binding = resolution.binding
    if binding is None:
        return None
    try:
        candidates = collect_candidates(world.workspace, binding.directory)
    except MemoryFsError as exc:
        return render_section(binding.mode, plan_resident(()), unavailable=exc.message)
    return render_section(binding.mode, plan_resident(candidates))


def mount_memory_tools(
    resolution: MemoryResolution,
    world: MemoryWorld,
    serializer: AppendSerializer = PROCESS_SERIALIZER,
) -> tuple[MemoryTool, ...]:
    """memory_write / memory_read / memory_search bound to the resolved directory, or no
    tools at all when memory is none or unbound (MEM-02)."""
    binding = resolution.binding
    if binding is None:
        return ()
    return mount_tools(MemoryToolbox(world.workspace, binding.directory, serializer))


# --- SPEC.md tables, generated from the code tables (``capconf.simulator.spec_tables``) ----------

def _file_name_table() -> str:
    rows = ["| order | reason | refused when |", "|---|---|---|"]
    rows += [f"| {i} | `{rule.reason}` | {rule.message} |"
             for i, rule in enumerate(NAME_RULES, 1)]
    return "\n".join(rows)


def _tool_error_table() -> str:
    rows = ["| error_code | requirement | when |", "|---|---|---|"]
    rows += [f"| `{code}` | {req} | {when} |" for code, req, when in TOOL_ERROR_CODES]
    return "\n".join(rows)


def _tool_schema_listing() -> str:
    blocks = []
    for name, description, schema in TOOL_SPECS:
        blocks.append(f"**{name}** — description (exact):\n\n> {description}\n\n```json\n"
                      f"{json.dumps(schema, indent=2)}\n```")
    return "\n\n".join(blocks)


def _limits_table() -> str:
    rows = ["| limit | value | unit |", "|---|---|---|"]
    rows += [f"| {what} | {value} | {unit} |" for what, value, unit in LIMITS]
    return "\n".join(rows)


SPEC_TABLES: dict[str, Callable[[], str]] = {
    "memory-file-names": _file_name_table,
    "memory-tool-errors": _tool_error_table,
    "memory-tool-schemas": _tool_schema_listing,
    "memory-limits": _limits_table,
}
