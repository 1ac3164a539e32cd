"""Knowledge sources as a definition declares them: the declaration checks, resolution
against the workspace, the catalog section and the knowledge world.

A knowledge source is a name plus a workspace-relative glob (KB-01). The glob is checked
twice with the same rules (``globs``), when the definition is validated and again when
kb_search runs (KB-07), because the definition may have been loaded in parse mode with the
problem only warned about, and the workspace may have changed since. The lexical rules
reject every spelling of "outside" we know of; the walk (``walk``) then makes escape
structurally impossible, so a pattern the lexical rules miss can still only match files
inside the workspace.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

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
from capconf.simulator.core.unicode_names import file_name_problem
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.knowledge.globs import check_glob, normalized_pattern
from capconf.simulator.knowledge.walk import ESCAPE_SKIP_REASONS, walk_source

E, W, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

KB_SOURCE_OUTSIDE_WORKSPACE = DiagnosticKind(
    "KB-SOURCE-OUTSIDE-WORKSPACE", "KB-07", W, E,
    "a knowledge glob could reach outside the workspace: by its text (the source is "
    "dropped) or through a symlink (the source stays; the link is never followed)")
KB_GLOB_INVALID = DiagnosticKind(
    "KB-GLOB-INVALID", "KB-01", W, E,
    "a knowledge glob is not a usable workspace-relative pattern; the source is dropped")
KB_SOURCE_NAME_INVALID = DiagnosticKind(
    "KB-SOURCE-NAME-INVALID", "KB-01", W, E,
    "a knowledge source name cannot appear on a catalog line; the source is dropped")
KB_SOURCE_DUPLICATE = DiagnosticKind(
    "KB-SOURCE-DUPLICATE", "KB-01", W, W,
    "two knowledge sources share a name (ASCII case-insensitively); the first is kept")
KB_SOURCE_MATCHES_NOTHING = DiagnosticKind(
    "KB-SOURCE-MATCHES-NOTHING", "KB-01", INFO, W,
    "a knowledge glob currently matches no file in the workspace")
KB_REQUIRES_READ = DiagnosticKind(
    "KB-REQUIRES-READ", "KB-08", W, E,
    "knowledge is declared without granting `read`, so hits could not be opened")

DIAGNOSTIC_KINDS: tuple[DiagnosticKind, ...] = (
    KB_SOURCE_OUTSIDE_WORKSPACE,
    KB_GLOB_INVALID,
    KB_SOURCE_NAME_INVALID,
    KB_SOURCE_DUPLICATE,
    KB_SOURCE_MATCHES_NOTHING,
    KB_REQUIRES_READ,
)



@dataclass(frozen=True)
class KnowledgeSource:
    """A declared source that passed the checks. ``glob`` is kept as written for the
    catalog line; ``pattern`` is what the walk matches."""

    name: str
    glob: str
    pattern: str
    location: Location


@dataclass(frozen=True)
class KnowledgeResolution:
    sources: tuple[KnowledgeSource, ...]
    diagnostics: tuple[Diagnostic, ...]


def check_knowledge_requires_read(knowledge_declared: bool, read_granted: bool, mode: Mode,
                                  location: Location) -> Diagnostic | None:
    """KB-08: a hit is a path:line the subagent must open with `read`; without `read` the
    source is useless. Parse mode warns (the rest of the definition still loads), save
    mode rejects, so the editor can say so before the user finishes (DEF-02)."""
    if not knowledge_declared or read_granted:
        return None
    return diagnose(KB_REQUIRES_READ, mode,
                    "knowledge is declared but `read` is not granted, so the subagent would "
                    "get path:line hits it cannot open. Add `read` to `tools` or remove "
                    "`knowledge`.", location)


def validate_declarations(declared: Sequence[KnowledgeDeclaration], mode: Mode
                          ) -> tuple[tuple[KnowledgeSource, ...], tuple[Diagnostic, ...]]:
    """Pure declaration checks (names, duplicates, lexical glob rules); nothing on disk."""
    sources: list[KnowledgeSource] = []
    diags: list[Diagnostic] = []
    seen: set[str] = set()
    for decl in declared:
        glob_loc = Location((*decl.location.path, "glob"), decl.location.line,
                            decl.location.column)
        problem = file_name_problem(decl.name)
        if problem is not None:
            diags.append(diagnose(
                KB_SOURCE_NAME_INVALID, mode,
                f"knowledge source name {decl.name!r}: {problem}. A source name is 1-64 "
                "letters or digits of any script (NFC, not mixed), `.`, `_` or `-`, starting "
                "with a letter or digit. Rename it.",
                decl.location))
            continue
        if ascii_fold(decl.name) in seen:
            diags.append(diagnose(
                KB_SOURCE_DUPLICATE, mode,
                f"knowledge source `{decl.name}` is declared twice; only the first is used. "
                "Remove or rename the second.", decl.location))
            continue
        rejection = check_glob(decl.glob)
        if rejection is not None:
            kind = KB_SOURCE_OUTSIDE_WORKSPACE if rejection.escape else KB_GLOB_INVALID
            diags.append(diagnose(
                kind, mode,
                f"knowledge source `{decl.name}`: glob {decl.glob!r} is rejected "
                f"({rejection.reason}: {rejection.message}). Use a workspace-relative "
                "pattern such as `docs/**/*.md`.", glob_loc))
            continue
        seen.add(ascii_fold(decl.name))
        sources.append(KnowledgeSource(decl.name, decl.glob, normalized_pattern(decl.glob),
                                       decl.location))
    return tuple(sources), tuple(diags)


def resolve_knowledge(declared: Sequence[KnowledgeDeclaration] | None, workspace: Path,
                      mode: Mode) -> KnowledgeResolution | None:
    """Declare -> resolve. None when knowledge is not declared (absent, null or empty:
    no section, no tool). Walks the workspace (names and metadata only, never content:
    KB-01 "never preloaded") to report symlinks leaving the workspace and empty sources."""
    if not declared:
        return None
    sources, diags = validate_declarations(declared, mode)
    kept: list[KnowledgeSource] = []
    all_diags = list(diags)
    for source in sources:
        walk = walk_source(workspace, source.pattern)
        escapes = [s for s in walk.skipped if s.reason in ESCAPE_SKIP_REASONS]
        glob_loc = Location((*source.location.path, "glob"), source.location.line,
                            source.location.column)
        if escapes:
            shown = ", ".join(f"{s.path} ({s.reason})" for s in escapes[:5])
            all_diags.append(diagnose(
                KB_SOURCE_OUTSIDE_WORKSPACE, mode,
                f"knowledge source `{source.name}`: glob {source.glob!r} reaches symlinks "
                f"that leave the workspace: {shown}. Those paths are never read; remove "
                "the links or narrow the glob.", glob_loc))
        elif not walk.files:  # an escape already says why nothing usable matched
            all_diags.append(diagnose(
                KB_SOURCE_MATCHES_NOTHING, mode,
                f"knowledge source `{source.name}`: glob {source.glob!r} matches no file in "
                "the workspace yet; kb_search will find nothing in it. Check the pattern.",
                glob_loc))
        kept.append(source)
    return KnowledgeResolution(tuple(kept), tuple(all_diags))


def knowledge_catalog_section(resolution: KnowledgeResolution | None) -> str | None:
    """KB-02: one catalog line per source, `- name: glob`; no content, no file list."""
    if resolution is None or not resolution.sources:
        return None
    lines = [f"- {s.name}: {s.glob}" for s in resolution.sources]
    return "\n".join([
        "## Knowledge sources",
        "Search these with kb_search; a hit is a line, not an answer: open the file with "
        "read.",
        *lines,
    ])


@dataclass(frozen=True)
class KnowledgeWorld:
    """Knowledge needs nothing from the harness but the workspace it already created."""

    workspace: Path


def parse_knowledge_world(args: object, workspace: Path) -> KnowledgeWorld:
    if args is None or args == {}:
        return KnowledgeWorld(workspace)
    if not isinstance(args, dict):
        raise WorldSetupError(("knowledge",), "must be an object (or absent)")
    key = sorted(args)[0]
    raise WorldSetupError(("knowledge", key),
                          "unknown key: knowledge files are laid out in the workspace itself")
