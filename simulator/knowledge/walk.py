"""The safe file walk of a knowledge source (KB-07): it makes escape structurally
impossible. It lists only directories inside the real workspace root, never descends a
directory symlink, and follows a file symlink only when its real target is inside the
root, so a pattern the lexical rules (``globs``) miss can still only match files inside
the workspace; every file it leaves out is reported with its reason."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from wcmatch import fnmatch as wc_fnmatch
from wcmatch import glob as wc_glob

from capconf.simulator.files import Dir, FileAccessError, Kind, Reason, Root
from capconf.simulator.files import Entry as FileEntry
from capconf.simulator.knowledge.globs import _SEGMENT_FLAGS, GLOB_FLAGS


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
