"""The only module of the memory dimension that touches the file system, on top of the
simulator's one file layer (capconf.simulator.files): directories are opened through it,
files read and written through its descriptor helpers; what is memory's own is the
stricter rule set (no link followed at all, hard links refused) and the error codes.

Every path below the workspace is walked one component at a time with ``openat`` and
``O_NOFOLLOW``, so a symlink planted anywhere between the workspace and a memory file
(``agents -> main``, ``reviewer -> ../main``, ``notes.md -> ../main/notes.md``) makes the
operation fail instead of silently landing in another directory (MEM-03, MEM-04). A file
with more than one hard link is refused too: it may be the main memory's own file. The
workspace itself is trusted (the harness created it). Directory listings are sorted, never
taken in ``os.scandir`` order, so every result is deterministic.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from capconf.simulator.files import Dir, FileAccessError, Reason, Root, read_fd
from capconf.simulator.files.root import READ_FLAGS, write_fd

_READ_FLAGS = READ_FLAGS
_APPEND_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class MemoryFsError(Exception):
    """A refusal with a tool error code; callers turn it into a ``ToolResult``."""

    def __init__(self, code: str, message: str, detail: dict[str, object] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail or {}


class EntryKind(StrEnum):
    REGULAR = "regular"  # a regular file with exactly one link: the only usable kind
    DIRECTORY = "directory"
    SYMLINK = "symlink"
    HARD_LINKED = "hard_linked"
    OTHER = "other"


@dataclass(frozen=True)
class DirEntry:
    name: str
    kind: EntryKind
    size: int


UNSAFE_DIRECTORY = "MEM-DIR-UNSAFE"
NOT_FOUND = "MEM-FILE-NOT-FOUND"
NOT_REGULAR = "MEM-NOT-REGULAR-FILE"
IO_ERROR = "MEM-IO-ERROR"


def _kind(st: os.stat_result) -> EntryKind:
    if stat.S_ISLNK(st.st_mode):
        return EntryKind.SYMLINK
    if stat.S_ISDIR(st.st_mode):
        return EntryKind.DIRECTORY
    if stat.S_ISREG(st.st_mode):
        return EntryKind.REGULAR if st.st_nlink == 1 else EntryKind.HARD_LINKED
    return EntryKind.OTHER


def _open_child_dir(parent_fd: int, name: str, shown: str, *, create: bool) -> int | None:
    """One level down through the file layer (``Dir.child``: ``openat`` with
    ``O_DIRECTORY | O_NOFOLLOW``), creating the level when asked."""
    parent = Dir(parent_fd, (), owned=False)
    for attempt in range(2):
        try:
            return parent.child(name).fd
        except FileAccessError as err:
            if err.reason is Reason.NOT_FOUND:
                if not create or attempt:
                    return None
                # another writer may create it first; either way open it on the next attempt
                with suppress(FileExistsError):
                    os.mkdir(name, 0o777, dir_fd=parent_fd)
                continue
            if err.reason not in (Reason.LINK, Reason.NOT_A_DIRECTORY):
                raise MemoryFsError(IO_ERROR, f"cannot open {shown}: {err.reason}") from None
            kind = _kind(os.stat(name, dir_fd=parent_fd, follow_symlinks=False))
            raise MemoryFsError(
                UNSAFE_DIRECTORY,
                f"{shown} is a {kind.value}, not a directory; memory never follows symlinks",
                {"path": shown, "kind": kind.value},
            ) from None
    return None


@contextmanager
def open_directory(
    workspace: Path, relative: PurePosixPath, *, create: bool
) -> Iterator[int | None]:
    """Yield a descriptor of ``workspace/relative`` reached without following any symlink,
    or None when it does not exist and ``create`` is false."""
    try:
        root = Root.open(workspace)
    except FileAccessError as err:
        raise MemoryFsError(IO_ERROR, f"cannot open the workspace: {err.reason}") from None
    fd: int | None = os.dup(root.dir.fd)
    root.close()
    shown = PurePosixPath()
    try:
        for part in relative.parts:
            shown = shown / part
            assert fd is not None
            child = _open_child_dir(fd, part, shown.as_posix(), create=create)
            os.close(fd)
            fd = child
            if fd is None:
                break
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


@contextmanager
def open_subdirectory(dir_fd: int, name: str, *, create: bool) -> Iterator[int | None]:
    fd = _open_child_dir(dir_fd, name, name, create=create)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def directory_key(dir_fd: int) -> tuple[int, int]:
    """The identity of a directory (device, inode): two paths to one directory share it."""
    st = os.fstat(dir_fd)
    return (st.st_dev, st.st_ino)


def list_entries(dir_fd: int) -> tuple[DirEntry, ...]:
    """All entries of a directory, sorted by name in code point order."""
    entries: list[DirEntry] = []
    with os.scandir(dir_fd) as it:  # CPython scans a dup and rewinds it
        for item in it:
            try:
                st = item.stat(follow_symlinks=False)
            except OSError:
                continue  # removed while listing: it is simply not there
            entries.append(DirEntry(item.name, _kind(st), st.st_size))
    return tuple(sorted(entries, key=lambda e: e.name))


def _open_regular(dir_fd: int, name: str, flags: int) -> tuple[int, os.stat_result]:
    try:
        fd = os.open(name, flags, 0o666, dir_fd=dir_fd)
    except FileNotFoundError:
        raise MemoryFsError(NOT_FOUND, f"no memory file named {name!r}", {"file": name}) from None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR, errno.ENXIO, errno.EMLINK):
            raise MemoryFsError(
                NOT_REGULAR,
                f"{name!r} is not a regular file; memory never follows symlinks",
                {"file": name, "kind": EntryKind.SYMLINK.value
                 if exc.errno in (errno.ELOOP, errno.EMLINK) else EntryKind.OTHER.value},
            ) from None
        raise MemoryFsError(IO_ERROR, f"cannot open {name!r}: {exc.strerror}") from None
    st = os.fstat(fd)
    kind = _kind(st)
    if kind is not EntryKind.REGULAR:
        os.close(fd)
        raise MemoryFsError(
            NOT_REGULAR,
            f"{name!r} is not a regular file with a single link ({kind.value})",
            {"file": name, "kind": kind.value},
        )
    return fd, st


def read_prefix(dir_fd: int, name: str, limit: int) -> tuple[bytes, int]:
    """Read at most ``limit`` bytes of a regular file; return them and the file's size."""
    fd, st = _open_regular(dir_fd, name, _READ_FLAGS)
    try:
        return read_fd(fd, limit), st.st_size
    finally:
        os.close(fd)


def append(dir_fd: int, name: str, entry: bytes) -> tuple[int, int]:
    """Append ``entry`` to a regular file (creating it), first adding a newline when the
    file does not end with one, so the entry never fuses with a hand-edited last line.
    Returns (bytes appended, size after). The caller holds the directory's turn."""
    fd, st = _open_regular(dir_fd, name, _APPEND_FLAGS)
    try:
        data = entry
        if st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) != b"\n":
            data = b"\n" + entry
        write_fd(fd, data)
        return len(data), os.fstat(fd).st_size
    finally:
        os.close(fd)
