"""How the ``capconf`` command opens the files it is given (SPEC.md 1.2), as the reference
opens workspace files (SPEC.md 1.1): a named input is opened ``O_NONBLOCK`` and decided
on its ``fstat`` (a FIFO, a device such as ``/dev/zero``, a socket or a directory is
refused, never read, so nothing blocks and nothing reads forever), read through that
descriptor up to a bound, and every refusal is an :class:`InputError` naming the path.

``capconf edit --write`` writes back only what it read: never through a symbolic link
(the link is refused, not followed and not replaced), only if the file still holds the
bytes that were edited (a file changed since it was read is refused), and atomically (a
temporary file in the same directory, then ``rename``), so a reader sees the old
document or the new one, never half of one.

I/O at the edge only: every function returns bytes or raises InputError.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

MAX_INPUT_BYTES = 64 * 1024 * 1024
"""A recorded log or scenario (a driver response line may be 64 MiB)."""
_CHUNK = 1 << 16


class InputError(Exception):
    """A file the command cannot use, with the path it is about."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Snapshot:
    """A file as it was read: its bytes, and what identifies that version of it."""

    path: str
    data: bytes
    device: int
    inode: int


def _open(path: str, what: str, flags: int) -> tuple[int, os.stat_result]:
    if "\x00" in path:
        raise InputError(path.replace("\x00", "\\0"), f"the {what} path contains a NUL")
    try:
        fd = os.open(path, flags | os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == getattr(os, "ELOOP", -1) and flags & os.O_NOFOLLOW:
            raise InputError(path, f"the {what} is a symbolic link; it is not followed"
                             ) from None
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
    except OSError as exc:
        os.close(fd)
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(info.st_mode):
        os.close(fd)
        raise InputError(path, f"the {what} is a directory, not a file")
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise InputError(path, f"the {what} is not a regular file (a FIFO, device or socket "
                         "is never read)")
    return fd, info


def _read(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < limit:
        chunk = os.read(fd, min(_CHUNK, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_prefix(path: str, what: str, limit: int, *, follow: bool = True) -> bytes:
    """At most ``limit`` bytes of a regular file (the caller judges a full read as too
    large, e.g. a definition one byte over its limit gets the parser's own diagnostic)."""
    fd, _ = _open(path, what, 0 if follow else os.O_NOFOLLOW)
    try:
        return _read(fd, limit)
    except OSError as exc:
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def read_input(path: str, what: str, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The whole regular file, refused when it holds more than ``limit`` bytes."""
    data = read_prefix(path, what, limit + 1)
    if len(data) > limit:
        raise InputError(path, f"the {what} is larger than {limit:,} bytes")
    return data


def read_input_text(path: str, what: str, limit: int = MAX_INPUT_BYTES) -> str:
    data = read_input(path, what, limit)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"{path}:{line}", "not UTF-8") from None


def snapshot(path: str, what: str, limit: int, *, follow: bool) -> Snapshot:
    """A file to be edited: at most ``limit`` bytes, like :func:`read_prefix` (the editor
    reports a document over its size limit). With ``follow=False`` (``--write``) a
    symbolic link is refused here already, since the write would go through it."""
    fd, info = _open(path, what, 0 if follow else os.O_NOFOLLOW)
    try:
        data = _read(fd, limit)
    except OSError as exc:
        raise InputError(path, f"cannot read {what}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return Snapshot(path, data, info.st_dev, info.st_ino)


def write_back(original: Snapshot, data: bytes) -> None:
    """Replace ``original``'s file by ``data``: refused when the path is now a link or
    another file, or its bytes changed since ``original`` was read; written to a
    temporary file beside it and renamed over it."""
    path = original.path
    try:
        current = os.lstat(path)
    except OSError as exc:
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None
    if stat.S_ISLNK(current.st_mode):
        raise InputError(path, "is a symbolic link; capconf edit --write never writes "
                         "through a link (edit the file it points to)")
    if (current.st_dev, current.st_ino) != (original.device, original.inode) or \
            read_prefix(path, "file", len(original.data) + 1,
                        follow=False) != original.data:
        raise InputError(path, "changed since it was read; nothing written (run the edit "
                         "again)")
    folder = str(Path(path).parent)
    try:
        fd, temporary = tempfile.mkstemp(dir=folder, prefix=f".{Path(path).name}.",
                                         suffix=".capconf-edit")
    except OSError as exc:
        raise InputError(path, f"cannot write beside it: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fchmod(handle.fileno(), stat.S_IMODE(current.st_mode))
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise InputError(path, f"cannot write: {exc.strerror or exc}") from None


def write_output(path: str, text: str, what: str) -> None:
    """A file the command creates (``record --out``): a directory, a FIFO or a device is
    refused with the path, never a traceback; a symbolic link is not written through."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise InputError(path, f"cannot write the {what}: {exc.strerror or exc}") from None
    if info is not None and not stat.S_ISREG(info.st_mode):
        kind = "a directory" if stat.S_ISDIR(info.st_mode) else (
            "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a regular file")
        raise InputError(path, f"the {what} is {kind}; give the path of a file to write")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
                     | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise InputError(path, f"cannot write the {what}: {exc.strerror or exc}") from None


def option_file_text(path: str, what: str, limit: int) -> str:
    """A file an option names (``--set body=@file.md``): a bounded regular file, UTF-8."""
    return read_input_text(path, what, limit)


def parse_json_option(text: str, what: str) -> object:
    """JSON an option carries (``--set knowledge=[...]``), refused with its position
    instead of a traceback; bounded in nesting like a request (``[[[[`` or 100,000
    brackets deep is an error, not a crash)."""
    import json

    depth = 0
    for char in text:
        depth += char in "[{"
        if depth > 64:
            raise InputError(what, "nests deeper than 64 levels")
        depth -= char in "]}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(what, f"not JSON: {exc.msg} at column {exc.colno}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(what, f"not JSON: {type(exc).__name__}") from None
