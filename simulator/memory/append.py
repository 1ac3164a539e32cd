"""Serialised appends, one FIFO queue per memory directory (MEM-07).

Several delegations of the same subagent run at once and write the same directory. The
runtime is one process, so an in-process queue is enough and no file lock is taken (the
seed: "no file locks; the sidecar is a single process"). The queue is keyed by the
directory's identity (device, inode) after a symlink-free walk, not by the path string, so
two spellings of one directory still share one queue. Turns are handed out as tickets in
arrival order: a plain mutex would also prevent torn entries, but its wake-up order is
unspecified, and "append in order" means an entry lands after every entry whose call
arrived before it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from capconf.simulator.memory import fs as memory_fs

DirectoryKey = tuple[int, int]


@dataclass
class _Queue:
    """Ticket lock: ``take`` is the next ticket to hand out, ``serving`` the one whose
    holder may append now. Each waiter sleeps on its own event, so a release wakes exactly
    the next ticket instead of every waiter."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    take: int = 0
    serving: int = 0
    waiting: dict[int, threading.Event] = field(default_factory=dict)


class AppendSerializer:
    """Process-wide registry of per-directory FIFO queues.

    One instance must be shared by every mount in the process (``PROCESS_SERIALIZER``);
    a separate instance is only for tests that want a clean ticket count.
    """

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._queues: dict[DirectoryKey, _Queue] = {}

    def _queue(self, key: DirectoryKey) -> _Queue:
        with self._guard:
            return self._queues.setdefault(key, _Queue())

    @contextmanager
    def turn(self, key: DirectoryKey) -> Iterator[int]:
        """Wait for this caller's turn on ``key``; yield its ticket (0, 1, 2, ...)."""
        queue = self._queue(key)
        event: threading.Event | None = None
        with queue.lock:
            ticket = queue.take
            queue.take += 1
            if queue.serving != ticket:
                event = queue.waiting[ticket] = threading.Event()
        if event is not None:
            event.wait()
        try:
            yield ticket
        finally:
            with queue.lock:
                queue.serving += 1
                following = queue.waiting.pop(queue.serving, None)
            if following is not None:
                following.set()


PROCESS_SERIALIZER = AppendSerializer()


@dataclass(frozen=True)
class AppendReceipt:
    ticket: int
    appended_bytes: int
    size_after: int


DAILY_DIRECTORY = "daily"


def append_entry(
    serializer: AppendSerializer,
    workspace: Path,
    directory: PurePosixPath,
    *,
    daily: bool,
    file_name: str,
    entry: bytes,
) -> AppendReceipt:
    """Append one whole entry to ``directory[/daily]/file_name`` in this directory's turn.

    The directory is opened (and created when missing) before the turn, so the key is the
    real directory; the file is opened, checked and written inside the turn, so the
    "does it end with a newline" check and the write cannot interleave with another entry.
    """
    with memory_fs.open_directory(workspace, directory, create=True) as dir_fd:
        assert dir_fd is not None  # create=True never yields None
        with serializer.turn(memory_fs.directory_key(dir_fd)) as ticket:
            if daily:
                with memory_fs.open_subdirectory(dir_fd, DAILY_DIRECTORY, create=True) as sub:
                    assert sub is not None
                    appended, size = memory_fs.append(sub, file_name, entry)
            else:
                appended, size = memory_fs.append(dir_fd, file_name, entry)
            return AppendReceipt(ticket, appended, size)
