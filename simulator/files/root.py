"""Every file access of the simulator under a root, through descriptors only.

A :class:`Root` opens its directory once. Every later path is resolved component by
component relative to an already opened directory descriptor (``openat`` with
``O_NOFOLLOW``), so a component swapped for a symlink while we work is seen as a symlink
and never silently traversed. When the caller allows links (``follow=True``) a link is
read with ``readlink`` and its text is resolved again from the descriptors we hold: a
relative target from the link's own directory, an absolute one only when it names a place
under the root's real path; ``..`` above the root is :attr:`Reason.OUTSIDE`. So no path,
however it changes while we resolve it, can reach outside the root: the guarantee comes
from the descriptors, not from a check made earlier on a path string (Linux
``openat2(RESOLVE_BENEATH)`` semantics, in portable POSIX calls).

What was opened is decided on its ``fstat`` and acted on through that same descriptor:
read via the descriptor, written via a descriptor opened relative to the parent
directory's descriptor (``O_CREAT | O_NOFOLLOW``, truncated only after the check). Files
are opened ``O_NONBLOCK`` so a FIFO never blocks; anything but a regular file or a
directory is refused as :attr:`Reason.SPECIAL`.
"""

from __future__ import annotations

import errno
import os
import stat
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import TracebackType

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
MAX_LINK_HOPS = 40  # as Linux's MAXSYMLINKS
_CHUNK = 1 << 16


class Reason(StrEnum):
    """Why an access was refused; callers map these onto their own error codes."""

    OUTSIDE = "outside"  # the path, or a link on it, leads out of the root
    LINK = "link"  # a symlink where links are not allowed
    LOOP = "link-loop"  # more than MAX_LINK_HOPS links
    NOT_FOUND = "not-found"
    NOT_A_FILE = "not-a-file"  # a directory where a file was wanted
    NOT_A_DIRECTORY = "not-a-directory"
    SPECIAL = "special-file"  # FIFO, socket, device: never opened for content
    UNREADABLE = "unreadable"  # permission or I/O error
    INVALID = "invalid-path"  # NUL, empty, or not encodable
    TOO_LARGE = "too-large"


class FileAccessError(Exception):
    """A refused access, with the path as the caller gave it."""

    def __init__(self, reason: Reason, path: str, message: str = "") -> None:
        super().__init__(message or f"{path}: {reason}")
        self.reason = reason
        self.path = path
        self.message = message or f"{path}: {reason}"


class Kind(StrEnum):
    FILE = "file"
    DIRECTORY = "directory"
    SYMLINK = "symlink"
    SPECIAL = "special"


def kind_of(mode: int) -> Kind:
    if stat.S_ISLNK(mode):
        return Kind.SYMLINK
    if stat.S_ISDIR(mode):
        return Kind.DIRECTORY
    if stat.S_ISREG(mode):
        return Kind.FILE
    return Kind.SPECIAL


@dataclass(frozen=True)
class Entry:
    """One directory entry as listed (no link followed); ``inode`` comes with the listing."""

    name: str
    kind: Kind
    inode: int


@dataclass(frozen=True)
class Opened:
    """An open regular file: its descriptor, its fstat, and the root-relative path that
    was really opened (links resolved), as POSIX segments."""

    fd: int
    stat: os.stat_result
    parts: tuple[str, ...]

    @property
    def rel(self) -> str:
        return "/".join(self.parts)


def split(rel: str) -> list[str]:
    """A root-relative path as segments; ``/`` separated, empty and ``.`` segments dropped.
    A leading ``/`` is not special here: callers decide what an absolute path means."""
    if "\x00" in rel:
        raise FileAccessError(Reason.INVALID, rel, "a path cannot contain NUL")
    return [p for p in rel.split("/") if p not in ("", ".")]


def _errno_reason(exc: OSError) -> Reason:
    if exc.errno == errno.ENOENT:
        return Reason.NOT_FOUND
    if exc.errno == errno.ENXIO:
        return Reason.SPECIAL  # a FIFO opened for writing with no reader
    if exc.errno == errno.EISDIR:
        return Reason.NOT_A_FILE
    if exc.errno == errno.ENOTDIR:
        return Reason.NOT_A_DIRECTORY
    return Reason.UNREADABLE


class Dir:
    """An opened directory under a root. ``parts`` is its root-relative path."""

    def __init__(self, fd: int, parts: tuple[str, ...], owned: bool = True) -> None:
        self.fd = fd
        self.parts = parts
        self._owned = owned

    def close(self) -> None:
        if self._owned and self.fd >= 0:
            os.close(self.fd)
        self.fd = -1

    def __enter__(self) -> Dir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def key(self) -> tuple[int, int]:
        st = os.fstat(self.fd)
        return (st.st_dev, st.st_ino)

    def entries(self) -> tuple[Entry, ...]:
        """The listing of this very directory (``scandir`` of its descriptor), sorted by
        name bytes; entries that vanish while listed are left out."""
        found: list[Entry] = []
        with os.scandir(self.fd) as it:
            for item in it:
                try:
                    if item.is_symlink():
                        kind = Kind.SYMLINK
                    elif item.is_dir(follow_symlinks=False):
                        kind = Kind.DIRECTORY
                    elif item.is_file(follow_symlinks=False):
                        kind = Kind.FILE
                    else:
                        kind = Kind.SPECIAL
                    found.append(Entry(item.name, kind, item.inode()))
                except OSError:
                    continue
        return tuple(sorted(found, key=lambda e: os.fsencode(e.name)))

    def child(self, name: str) -> Dir:
        """Open a subdirectory by one name, never through a link."""
        try:
            fd = os.open(name, DIR_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            shown = "/".join((*self.parts, name))
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
                raise FileAccessError(_lstat_reason(self.fd, name), shown) from None
            raise FileAccessError(_errno_reason(exc), shown) from None
        return Dir(fd, (*self.parts, name))

    def readlink(self, name: str) -> str:
        return os.readlink(name, dir_fd=self.fd)


def _lstat_reason(dir_fd: int, name: str) -> Reason:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except OSError:
        return Reason.NOT_FOUND
    kind = kind_of(st.st_mode)
    return {Kind.SYMLINK: Reason.LINK, Kind.FILE: Reason.NOT_A_DIRECTORY,
            Kind.DIRECTORY: Reason.UNREADABLE}.get(kind, Reason.NOT_A_DIRECTORY)


class _Cursor:
    """The directory chain from the root to where resolution stands, as descriptors."""

    def __init__(self, root: Root) -> None:
        self.root = root
        self.stack: list[Dir] = []

    @property
    def here(self) -> Dir:
        return self.stack[-1] if self.stack else self.root.dir

    @property
    def parts(self) -> tuple[str, ...]:
        return self.here.parts

    def enter(self, child: Dir) -> None:
        self.stack.append(child)

    def up(self, shown: str) -> None:
        if not self.stack:
            raise FileAccessError(Reason.OUTSIDE, shown, f"{shown}: leads above the root")
        self.stack.pop().close()

    def reset(self) -> None:
        while self.stack:
            self.stack.pop().close()

    def take(self) -> Dir:
        """Detach the current directory (the caller closes it); the rest is closed."""
        here = self.stack.pop() if self.stack else Dir(os.dup(self.root.dir.fd), ())
        self.reset()
        return here


class Root:
    """A directory every access is confined to. Use as a context manager."""

    def __init__(self, fd: int, real: str) -> None:
        self.dir = Dir(fd, (), owned=False)
        self._fd = fd
        self.real = real

    @classmethod
    def open(cls, path: Path | str) -> Root:
        """Open the root itself (the harness made it, so its own path may hold links)."""
        real = os.path.realpath(path)
        try:
            fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise FileAccessError(_errno_reason(exc), str(path)) from None
        return cls(fd, real)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
            self.dir.fd = -1

    def __enter__(self) -> Root:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ resolution

    def _link_parts(self, target: str, cursor: _Cursor, shown: str) -> list[str]:
        """The segments a link's text stands for, from where the cursor now is."""
        if target.startswith("/"):
            root = self.real.rstrip("/")
            if target != root and not target.startswith(root + "/"):
                raise FileAccessError(Reason.OUTSIDE, shown,
                                      f"{shown}: a link leads out of the root")
            cursor.reset()
            return split(target[len(root):])
        return [p for p in target.split("/") if p not in ("", ".")]

    def _resolve(self, rel: str, *, follow: bool, create_dirs: bool,
                 final: int | None) -> tuple[Dir, int | None, str]:
        """Walk ``rel`` from the root. Returns the parent directory of the last segment
        (owned by the caller), the descriptor of the last segment opened with ``final``
        flags (None when ``final`` is None: the last segment is then opened as a
        directory), and the last segment's name."""
        pending = deque(split(rel))
        cursor = _Cursor(self)
        hops = made = 0
        try:
            while pending:
                name = pending.popleft()
                if name == "..":
                    cursor.up(rel)
                    continue
                last = not pending
                parent = cursor.here
                try:
                    if last and final is not None:
                        fd = os.open(name, final, 0o666, dir_fd=parent.fd)
                        return cursor.take(), fd, name
                    cursor.enter(parent.child(name))
                    continue
                except FileAccessError as err:
                    if (err.reason is Reason.NOT_FOUND and create_dirs and made < 4096
                            and (not last or final is None)):
                        made += 1  # bounded: a racing remover cannot keep us looping
                        try:
                            os.mkdir(name, 0o777, dir_fd=parent.fd)
                        except FileExistsError:
                            pass
                        except OSError as exc:
                            raise FileAccessError(_errno_reason(exc), rel) from None
                        pending.appendleft(name)
                        continue
                    if err.reason is not Reason.LINK:
                        raise FileAccessError(err.reason, rel) from None
                except OSError as exc:
                    if exc.errno not in (errno.ELOOP, errno.EMLINK):
                        raise FileAccessError(_errno_reason(exc), rel) from None
                    if _lstat_reason(parent.fd, name) is not Reason.LINK:
                        raise FileAccessError(Reason.UNREADABLE, rel) from None
                # a symlink at `name`
                if not follow:
                    raise FileAccessError(Reason.LINK, rel,
                                          f"{rel}: {name} is a symlink; not followed")
                hops += 1
                if hops > MAX_LINK_HOPS:
                    raise FileAccessError(Reason.LOOP, rel)
                try:
                    target = parent.readlink(name)
                except OSError:
                    raise FileAccessError(Reason.NOT_FOUND, rel) from None
                pending.extendleft(reversed(self._link_parts(target, cursor, rel)))
            if final is not None:
                raise FileAccessError(Reason.NOT_A_FILE, rel, f"{rel}: names a directory")
            return cursor.take(), None, ""
        except BaseException:
            cursor.reset()
            raise

    # ------------------------------------------------------------------ the API

    def open_dir(self, rel: str, *, follow: bool = False, create: bool = False) -> Dir:
        """The directory at ``rel`` (created with its parents when ``create``)."""
        found, _fd, _name = self._resolve(rel, follow=follow, create_dirs=create, final=None)
        return found

    def open_file(self, rel: str, *, follow: bool = False) -> Opened:
        """Open a regular file for reading; decided on the descriptor's fstat."""
        parent, fd, _name = self._resolve(rel, follow=follow, create_dirs=False,
                                          final=READ_FLAGS)
        assert fd is not None
        try:
            return Opened(fd, _regular_stat(fd, rel), (*parent.parts, _name))
        except BaseException:
            os.close(fd)
            raise
        finally:
            parent.close()

    def read_bytes(self, rel: str, limit: int, *, follow: bool = False
                   ) -> tuple[bytes, os.stat_result, str]:
        """At most ``limit`` bytes from the start of the regular file at ``rel``: never
        more is read. Returns the bytes, the opened file's fstat and its real rel path."""
        opened = self.open_file(rel, follow=follow)
        try:
            return read_fd(opened.fd, limit), opened.stat, opened.rel
        finally:
            os.close(opened.fd)

    def write(self, rel: str, data: bytes, *, follow: bool = False,
              create_dirs: bool = True) -> os.stat_result:
        """Replace the content of the regular file at ``rel`` (creating it and, when
        ``create_dirs``, its parents) through a descriptor opened relative to its parent
        directory's descriptor; truncated only once it is known to be a regular file."""
        parent, fd, _name = self._resolve(rel, follow=follow, create_dirs=create_dirs,
                                          final=WRITE_FLAGS)
        assert fd is not None
        try:
            _regular_stat(fd, rel)
            os.set_blocking(fd, True)
            os.ftruncate(fd, 0)
            write_fd(fd, data)
            return os.fstat(fd)
        finally:
            os.close(fd)
            parent.close()


def read_fd(fd: int, limit: int) -> bytes:
    """Read up to ``limit`` bytes from a descriptor, in chunks, stopping at EOF."""
    chunks: list[bytes] = []
    remaining = limit
    while remaining > 0:
        chunk = os.read(fd, min(remaining, _CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def write_fd(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def iter_parts(rel: str) -> Iterator[str]:
    yield from split(rel)


def _regular_stat(fd: int, rel: str) -> os.stat_result:
    """The fstat of what was opened, refused unless it is a regular file: the decision is
    taken on the descriptor, never on the path."""
    st = os.fstat(fd)
    kind = kind_of(st.st_mode)
    if kind is not Kind.FILE:
        raise FileAccessError(Reason.NOT_A_FILE if kind is Kind.DIRECTORY else Reason.SPECIAL,
                              rel)
    return st
