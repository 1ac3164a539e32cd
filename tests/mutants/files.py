# mypy: disable-error-code="attr-defined,method-assign,assignment,misc"
# (mutants monkeypatch module attributes and imported names on purpose)
"""Broken variants of the file layer's users (issue 9, "Escapes"): each checks a path
once and acts later through a path string, or treats a FIFO like a file. Each is a bug a
real runtime could ship; ``caught_by`` names the requirements whose new race cases
(a link planted while a card waits, a directory swapped between two uses, a FIFO where a
file was) must fail against it. None of them blocks on a FIFO: the in-process transport
has no per-request timeout, so a hanging mutant would hang the mutant run.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

from mutants.base import Mutant

_NONBLOCK = os.O_NONBLOCK | os.O_CLOEXEC


def _module(name: str) -> Any:
    return importlib.import_module(name)


def _appr_write_through_path() -> None:
    """Write and edit run on the path string once approved: whatever a link planted while
    the card waited points to is what gets written (FIFO-aware, link-unaware)."""
    calls = _module("capconf.simulator.builtin_tools.calls")
    envelope = _module("capconf.simulator.core.envelope")

    def do_write(where: Any, path: str, content: str) -> Any:
        target = Path(where.root) / where.rel
        data = content.encode("utf-8")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | _NONBLOCK, 0o666)
            try:
                os.write(fd, data)
            finally:
                os.close(fd)
        except OSError as exc:
            return envelope.failure("write_failed", str(exc), {"path": path})
        return envelope.success({"path": path, "bytes": len(data)})

    def do_edit(where: Any, path: str, old: str, new: str) -> Any:
        target = Path(where.root) / where.rel
        try:
            fd = os.open(target, os.O_RDONLY | _NONBLOCK)
            try:
                text = os.read(fd, 1 << 20).decode("utf-8")
            finally:
                os.close(fd)
        except (OSError, UnicodeDecodeError):
            return envelope.failure("not_found", "not a readable text file", {"path": path})
        if text.count(old) != 1:
            return envelope.failure("edit_not_unique", "not unique", {"path": path})
        return do_write(where, path, text.replace(old, new, 1))

    calls._do_write = do_write
    calls._do_edit = do_edit


def _appr_fifo_read_as_empty() -> None:
    """read opens without blocking but never asks what it opened: a FIFO reads as an empty
    file and the call succeeds."""
    calls = _module("capconf.simulator.builtin_tools.calls")
    envelope = _module("capconf.simulator.core.envelope")
    real = calls._read_file

    def read_file(where: Any, path: str, args: Any) -> Any:
        target = Path(where.root) / where.rel
        try:
            fd = os.open(target, os.O_RDONLY | _NONBLOCK)
        except OSError:
            return real(where, path, args)
        try:
            data = os.read(fd, calls.READ_LIMIT_BYTES)
        except OSError:
            data = b""
        finally:
            os.close(fd)
        return envelope.success({"path": path, "offset": 1,
                                 "lines": data.decode("utf-8", "replace").split("\n"),
                                 "truncated": False})

    calls._read_file = read_file


def _kb_walk_once() -> None:
    """The file list of a source is walked once (at the first search) and cached; later
    searches read the cached paths through path strings."""
    kbsearch = _module("capconf.simulator.knowledge.kbsearch")
    real_walk = kbsearch.walk_source
    cache: dict[tuple[str, str], Any] = {}

    def walk_source(root: Any, pattern: str) -> Any:
        key = (root.real, pattern)
        if key not in cache:
            cache[key] = real_walk(root, pattern)
        return cache[key]

    def read_file(root: Any, file: Any, limit: int) -> Any:
        try:
            fd = os.open(os.path.join(root.real, file.real), os.O_RDONLY | _NONBLOCK)
        except OSError:
            return kbsearch.SkipReason.CHANGED
        try:
            return os.read(fd, limit), os.fstat(fd).st_size
        finally:
            os.close(fd)

    kbsearch.walk_source = walk_source
    kbsearch.read_file = read_file


def _kb_fifo_not_reported() -> None:
    """A FIFO matched by the glob is left out silently instead of reported as skipped."""
    sources = _module("capconf.simulator.knowledge.walk")
    real = sources._classify

    def classify(*args: Any) -> Any:
        found = real(*args)
        if isinstance(found, sources.Skipped) and found.reason is sources.SkipReason.NOT_REGULAR:
            return None
        return found

    sources._classify = classify


def _skill_reference_checked_once() -> None:
    """A reference's containment is decided at its first use and remembered; later loads
    open the same path string, through whatever its directories have become."""
    readers = [_module(f"capconf.simulator.skills.{m}") for m in ("discovery", "use_skill")]
    real = readers[0].read_in_folder
    verdicts: dict[tuple[str, str], Any] = {}

    def read_in_folder(folder: Path, rel: str, limit: int | None) -> Any:
        key = (str(folder), rel)
        if key not in verdicts:
            verdicts[key] = real(folder, rel, limit)
            return verdicts[key]
        if not isinstance(verdicts[key], tuple):
            return verdicts[key]
        try:
            fd = os.open(os.path.join(folder, rel), os.O_RDONLY | _NONBLOCK)
        except OSError:
            return None
        try:
            size = os.fstat(fd).st_size
            return os.read(fd, size + 1 if limit is None else limit), size
        finally:
            os.close(fd)

    for reader in readers:
        reader.read_in_folder = read_in_folder


def _skill_fifo_reference_empty() -> None:
    """A FIFO reference is opened without blocking and returned as an empty text."""
    readers = [_module(f"capconf.simulator.skills.{m}") for m in ("discovery", "use_skill")]
    files = _module("capconf.simulator.files")
    real = readers[0].read_in_folder

    def read_in_folder(folder: Path, rel: str, limit: int | None) -> Any:
        try:
            with files.Root.open(folder) as root:
                os.close(root.open_file(rel, follow=True).fd)
        except files.FileAccessError as err:
            if err.reason is files.Reason.SPECIAL:
                return b"", 0
        return real(folder, rel, limit)

    for reader in readers:
        reader.read_in_folder = read_in_folder


MUTANTS: tuple[Mutant, ...] = (
    Mutant("appr-write-through-path", "an approved write or edit follows a link planted "
           "while its card waited", ("APPR-01",), _appr_write_through_path),
    Mutant("appr-fifo-read-as-empty", "read of a FIFO succeeds as an empty file",
           ("APPR-01",), _appr_fifo_read_as_empty),
    Mutant("kb-walk-once", "kb_search walks a source once and later reads the cached paths",
           ("KB-07",), _kb_walk_once),
    Mutant("kb-fifo-not-reported", "a FIFO matched by the glob is not reported as skipped",
           ("KB-07",), _kb_fifo_not_reported),
    Mutant("skill-reference-checked-once", "a reference is checked at its first use and "
           "later opened through its path", ("SKILL-05",), _skill_reference_checked_once),
    Mutant("skill-fifo-reference-empty", "a FIFO reference loads as an empty text",
           ("SKILL-05",), _skill_fifo_reference_empty),
)


def _mem_entry_limit_excludes_newline() -> None:
    """The entry limit counts the text only: 4096 bytes pass, and with the newline the
    write adds the file is 4097 bytes, never resident."""
    tools = _module("capconf.simulator.memory.tools")
    tools.MAX_ENTRY_BYTES = 4097


MUTANTS = (*MUTANTS, Mutant(
    "mem-entry-limit-excludes-newline", "the entry limit ignores the newline the write adds",
    ("MEM-07",), _mem_entry_limit_excludes_newline))
