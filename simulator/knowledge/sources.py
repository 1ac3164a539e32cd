"""Knowledge sources: declaration checks, the catalog section and the safe file walk.

A knowledge source is a name plus a workspace-relative glob (KB-01). The glob is checked
twice with the same rules, when the definition is validated and again when kb_search runs
(KB-07), because the definition may have been loaded in parse mode with the problem only
warned about, and the workspace may have changed since. The lexical rules reject every
spelling of "outside" we know of; the walk then makes escape structurally impossible: it
lists only directories inside the real workspace root, never descends a directory symlink,
and follows a file symlink only when its real target is inside the root. So a pattern the
lexical rules miss can still only match files inside the workspace.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from wcmatch import fnmatch as wc_fnmatch
from wcmatch import glob as wc_glob

from capconf.simulator.core.diagnostics import (
    Diagnostic,
    DiagnosticKind,
    Location,
    Mode,
    Severity,
    WorldSetupError,
    diagnose,
)
from capconf.simulator.core.names import WHITE_SPACE, ascii_fold
from capconf.simulator.core.unicode_names import name_problem
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.files import Dir, FileAccessError, Kind, Reason, Root
from capconf.simulator.files import Entry as FileEntry

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

GLOB_MAX_LENGTH = 1024


def source_name_problem(name: str) -> str | None:
    """Why ``name`` is not a source name (the shared Unicode name rule, with `.`), or None."""
    return name_problem(name, "._-")


# FORCEUNIX + CASE: the same pattern means the same thing on every host; no BRACE or
# EXTGLOB, so the pattern language is exactly: literal, *, ?, [...], and ** as a segment.
GLOB_FLAGS = wc_glob.GLOBSTAR | wc_glob.FORCEUNIX | wc_glob.CASE
_SEGMENT_FLAGS = wc_fnmatch.FORCEUNIX | wc_fnmatch.CASE
_MAGIC = frozenset("*?[")
_PERCENT_RE = re.compile(r"%[0-9A-Fa-f]{2}")


class RejectReason(StrEnum):
    EMPTY = "empty"
    TOO_LONG = "too-long"
    CONTROL_CHARACTER = "control-character"
    BACKSLASH = "backslash"
    UNICODE_LOOKALIKE = "unicode-lookalike"
    WHITESPACE_EDGE = "whitespace-edge"
    ABSOLUTE = "absolute"
    HOME = "home"
    DRIVE_OR_SCHEME = "drive-or-scheme"
    PERCENT_ENCODING = "percent-encoding"
    ENV_VARIABLE = "env-variable"
    BRACE = "brace"
    PARENT_SEGMENT = "parent-segment"
    DOT_SEGMENT = "dot-segment"
    EMPTY_SEGMENT = "empty-segment"


@dataclass(frozen=True)
class GlobRule:
    """One row of the glob rule table (SPEC.md renders it). Rules are tried in order and
    the first that fails is reported, so the reason for a pattern is stable."""

    reason: RejectReason
    escape: bool  # True: a way out of the workspace (KB-07); False: merely malformed
    rule: str


GLOB_RULES: tuple[GlobRule, ...] = (
    GlobRule(RejectReason.EMPTY, False, "the pattern is empty (after a leading `./`)"),
    GlobRule(RejectReason.TOO_LONG, False, f"longer than {GLOB_MAX_LENGTH} characters"),
    GlobRule(RejectReason.CONTROL_CHARACTER, True,
             "contains NUL or another character of Unicode category Cc, Cf, Zl or Zp"),
    GlobRule(RejectReason.BACKSLASH, True,
             "contains `\\` (a separator on Windows; glob escapes are not supported)"),
    GlobRule(RejectReason.UNICODE_LOOKALIKE, True,
             "its NFKC normalisation differs and would break one of these rules "
             "(e.g. fullwidth `．．／`)"),
    GlobRule(RejectReason.WHITESPACE_EDGE, False,
             "starts or ends with a Unicode White_Space character (the set of SKILL-06)"),
    GlobRule(RejectReason.ABSOLUTE, True, "starts with `/`"),
    GlobRule(RejectReason.HOME, True, "a segment starts with `~` (home expansion)"),
    GlobRule(RejectReason.DRIVE_OR_SCHEME, True,
             "contains `:` (drive letter, URL scheme, NTFS stream)"),
    GlobRule(RejectReason.PERCENT_ENCODING, True, "contains `%` followed by two hex digits"),
    GlobRule(RejectReason.ENV_VARIABLE, True, "contains `$` (variable expansion)"),
    GlobRule(RejectReason.BRACE, True,
             "contains `{` or `}` (brace expansion is not part of the pattern language)"),
    GlobRule(RejectReason.PARENT_SEGMENT, True, "a segment is `..`"),
    GlobRule(RejectReason.DOT_SEGMENT, True,
             "a segment other than a leading `./` consists only of dots"),
    GlobRule(RejectReason.EMPTY_SEGMENT, True, "contains `//` or ends with `/`"),
)


@dataclass(frozen=True)
class GlobRejection:
    reason: RejectReason
    message: str

    @property
    def escape(self) -> bool:
        return _RULE_BY_REASON[self.reason].escape


_RULE_BY_REASON = {rule.reason: rule for rule in GLOB_RULES}


def _strip_leading_dot(glob: str) -> str:
    while glob.startswith("./"):
        glob = glob[2:]
    return glob


def _bad_char(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def check_glob(glob: str) -> GlobRejection | None:
    """The lexical half of KB-07: the first rule of GLOB_RULES the pattern breaks, or None.

    Pure; the same function runs in save mode and at search time."""
    found = _check_rules(glob)
    if found is not None:
        return GlobRejection(found, _RULE_BY_REASON[found].rule)
    normal = unicodedata.normalize("NFKC", glob)
    if normal != glob and _check_rules(normal) is not None:
        return GlobRejection(RejectReason.UNICODE_LOOKALIKE,
                             f"{_RULE_BY_REASON[RejectReason.UNICODE_LOOKALIKE].rule}; "
                             f"normalised: {normal!r}")
    return None


def _check_rules(glob: str) -> RejectReason | None:
    rest = _strip_leading_dot(glob)
    checks: tuple[tuple[RejectReason, bool], ...] = (
        (RejectReason.EMPTY, rest == ""),
        (RejectReason.TOO_LONG, len(glob) > GLOB_MAX_LENGTH),
        (RejectReason.CONTROL_CHARACTER, any(_bad_char(ch) for ch in glob)),
        (RejectReason.BACKSLASH, "\\" in glob),
        (RejectReason.WHITESPACE_EDGE,
         bool(glob) and (glob[0] in WHITE_SPACE or glob[-1] in WHITE_SPACE)),
        (RejectReason.ABSOLUTE, glob.startswith("/")),
        (RejectReason.HOME, any(seg.startswith("~") for seg in glob.split("/"))),
        (RejectReason.DRIVE_OR_SCHEME, ":" in glob),
        (RejectReason.PERCENT_ENCODING, _PERCENT_RE.search(glob) is not None),
        (RejectReason.ENV_VARIABLE, "$" in glob),
        (RejectReason.BRACE, "{" in glob or "}" in glob),
        (RejectReason.PARENT_SEGMENT, ".." in rest.split("/")),
        (RejectReason.DOT_SEGMENT,
         any(seg and set(seg) == {"."} for seg in rest.split("/"))),
        (RejectReason.EMPTY_SEGMENT, "" in rest.split("/")),
    )
    for reason, failed in checks:
        if failed:
            return reason
    return None


def normalized_pattern(glob: str) -> str:
    """The pattern actually matched: the declared glob without leading `./` segments
    (wcmatch would otherwise never match `./docs/*.md` against `docs/a.md`)."""
    return _strip_leading_dot(glob)


def _glob_rules_table() -> str:
    rows = ["| reason | escape | rule |", "|---|---|---|"]
    rows += [f"| `{r.reason}` | {'yes' if r.escape else 'no'} | {r.rule} |" for r in GLOB_RULES]
    return "\n".join(rows)


# Generated regions of SPEC.md (see capconf.simulator.spec_tables).
SPEC_TABLES: dict[str, Callable[[], str]] = {"knowledge-glob-rules": _glob_rules_table}


# --------------------------------------------------------------------------- declarations


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
        problem = source_name_problem(decl.name)
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


# --------------------------------------------------------------------------- the walk


class SkipReason(StrEnum):
    SYMLINK_OUTSIDE = "symlink-outside-workspace"
    SYMLINK_BROKEN = "symlink-broken"
    DIRECTORY_SYMLINK = "directory-symlink-not-followed"
    NOT_REGULAR = "not-a-regular-file"
    NON_UTF8_PATH = "non-utf8-path"
    CHANGED = "changed-during-search"
    UNREADABLE = "unreadable"


ESCAPE_SKIP_REASONS = frozenset({SkipReason.SYMLINK_OUTSIDE})


@dataclass(frozen=True)
class SourceFile:
    """A matched regular file: ``path`` is the workspace-relative POSIX path reported to
    the model; ``real`` the link-free workspace-relative path that is opened (the same
    as ``path`` unless a file symlink inside the workspace was followed); (dev, ino) as
    the walk saw them. No size: the walk makes no per-file system call (directory entry
    types and inode numbers come with the listing), and the reader learns the size from
    fstat on the descriptor it opened anyway."""

    path: str
    real: str
    dev: int
    ino: int


@dataclass(frozen=True)
class Skipped:
    path: str
    reason: SkipReason

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "reason": str(self.reason)}


@dataclass(frozen=True)
class WalkResult:
    files: tuple[SourceFile, ...]
    skipped: tuple[Skipped, ...]


def _may_descend(pattern_segs: Sequence[str], dir_segs: Sequence[str]) -> bool:
    """Could the pattern match some path strictly below ``dir_segs``? Prunes the walk so
    only directories the pattern can reach are listed."""
    last = len(pattern_segs) - 1
    for i, name in enumerate(dir_segs):
        if i > last:
            return False
        seg = pattern_segs[i]
        if seg == "**":
            return True
        if i == last or not wc_fnmatch.fnmatch(name, seg, flags=_SEGMENT_FLAGS):
            return False
    return True


@dataclass(frozen=True)
class _Matcher:
    regex: re.Pattern[str]

    def match(self, rel: str) -> bool:
        return self.regex.fullmatch(rel) is not None


def compile_pattern(pattern: str) -> _Matcher:
    """wcmatch's own translation of the pattern to a regular expression (one include
    pattern, since BRACE and SPLIT are off), matched with fullmatch: the same answers as
    ``wcmatch.glob.globmatch`` without its per-call overhead."""
    include, exclude = wc_glob.translate(pattern, flags=GLOB_FLAGS)
    if len(include) != 1 or exclude:
        raise ValueError(f"unexpected translation of {pattern!r}")
    return _Matcher(re.compile(include[0]))


def walk_source(workspace: Path | Root, pattern: str) -> WalkResult:
    """List the regular files under the workspace matching ``pattern`` (already checked by
    check_glob), sorted by path bytes. Reads no file content.

    Every directory is listed through its own descriptor, opened from its parent's
    descriptor without following a link (capconf.simulator.files), so a directory swapped
    for a symlink while we walk is seen as a link and never listed. A file symlink is
    followed only when its target resolves inside the root; a directory symlink never."""
    if isinstance(workspace, Root):
        return _walk(workspace, pattern)
    with Root.open(workspace) as root:
        return _walk(root, pattern)


def _walk(root: Root, pattern: str) -> WalkResult:
    matcher = compile_pattern(pattern)
    pattern_segs = pattern.split("/")
    files: list[SourceFile] = []
    skipped: list[Skipped] = []
    # depth-first with one open descriptor per level: (directory, its subdirs to visit)
    stack: list[tuple[Dir, Iterator[str]]] = []
    top = Dir(os.dup(root.dir.fd), ())
    try:
        current: Dir | None = top
        while current is not None or stack:
            if current is not None:
                subdirs = _list(root, current, matcher, pattern_segs, files, skipped)
                stack.append((current, iter(subdirs)))
                current = None
                continue
            parent, pending = stack[-1]
            name = next(pending, None)
            if name is None:
                stack.pop()[0].close()
                continue
            try:
                current = parent.child(name)
            except FileAccessError as err:
                rel = "/".join((*parent.parts, name))
                if err.reason is Reason.UNREADABLE:
                    skipped.append(Skipped(rel, SkipReason.UNREADABLE))
                elif err.reason is not Reason.NOT_FOUND:
                    skipped.append(Skipped(rel, SkipReason.CHANGED))
    finally:
        for d, _ in stack:
            d.close()
    files.sort(key=lambda f: f.path.encode("utf-8"))
    skipped.sort(key=lambda s: (s.path.encode("utf-8"), str(s.reason)))
    return WalkResult(tuple(files), tuple(skipped))


def _list(root: Root, here: Dir, matcher: _Matcher, pattern_segs: Sequence[str],
          files: list[SourceFile], skipped: list[Skipped]) -> list[str]:
    """Classify one directory's entries; returns the subdirectories to descend into."""
    try:
        dir_dev = os.fstat(here.fd).st_dev
        entries = here.entries()
    except OSError:
        if here.parts:
            skipped.append(Skipped("/".join(here.parts), SkipReason.UNREADABLE))
        return []
    subdirs: list[str] = []
    for entry in entries:
        child = (*here.parts, entry.name)
        rel = "/".join(child)
        found = _classify(root, here, entry, rel, child, dir_dev, matcher, pattern_segs)
        if isinstance(found, SourceFile):
            files.append(found)
        elif isinstance(found, Skipped):
            skipped.append(found)
        elif found is _DESCEND:
            subdirs.append(entry.name)
    return subdirs


_DESCEND = object()


def _classify(root: Root, here: Dir, entry: FileEntry, rel: str, child: tuple[str, ...],
              dir_dev: int, matcher: _Matcher, pattern_segs: Sequence[str]) -> object:
    """One directory entry -> a SourceFile, a Skipped, _DESCEND, or None (irrelevant)."""
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        if matcher.match(rel) or _may_descend(pattern_segs, child):
            return Skipped(rel.encode("utf-8", "replace").decode(), SkipReason.NON_UTF8_PATH)
        return None
    if entry.kind is Kind.SYMLINK:
        return _classify_link(root, here, entry.name, rel, child, matcher, pattern_segs)
    if entry.kind is Kind.DIRECTORY:
        return _DESCEND if _may_descend(pattern_segs, child) else None
    if not matcher.match(rel):
        return None
    if entry.kind is Kind.FILE:
        return SourceFile(rel, rel, dir_dev, entry.inode)
    return Skipped(rel, SkipReason.NOT_REGULAR)


def _classify_link(root: Root, here: Dir, name: str, rel: str, child: tuple[str, ...],
                   matcher: _Matcher, pattern_segs: Sequence[str]) -> object:
    """A symlink is resolved by the file layer from the descriptors already held: its
    target is judged by where it lands under the root, never by a path string."""
    relevant_file = bool(matcher.match(rel))
    if not (relevant_file or _may_descend(pattern_segs, child)):
        return None
    try:
        opened = root.open_file(rel, follow=True)
    except FileAccessError as err:
        if err.reason is Reason.OUTSIDE:
            return Skipped(rel, SkipReason.SYMLINK_OUTSIDE)
        if err.reason is Reason.NOT_A_FILE:
            return Skipped(rel, SkipReason.DIRECTORY_SYMLINK)
        if err.reason is Reason.SPECIAL:
            return Skipped(rel, SkipReason.NOT_REGULAR) if relevant_file else None
        if err.reason is Reason.UNREADABLE:
            return Skipped(rel, SkipReason.UNREADABLE) if relevant_file else None
        return Skipped(rel, SkipReason.SYMLINK_BROKEN)
    os.close(opened.fd)
    if not relevant_file:
        return None
    return SourceFile(rel, opened.rel, opened.stat.st_dev, opened.stat.st_ino)
