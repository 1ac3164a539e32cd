"""Serialised appends per directory (MEM-07): every entry once, whole, in order."""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable
from pathlib import Path, PurePosixPath

from memory_support import make_world, resolve

from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import fs as memory_fs
from capconf.simulator.memory.append import AppendSerializer, append_entry
from capconf.simulator.memory.binding import mount_memory_tools

WRITERS = 32
APPENDS = 200
ENTRY = re.compile(r"w(\d+)-i(\d+) (x*) end")


def payload(writer: int, index: int) -> str:
    """Deterministic, varied sizes up to ~4 KB, so a split write would show."""
    size = (writer * 7919 + index * 104729) % 4000
    return f"w{writer:02d}-i{index:03d} {'x' * size} end"


def check_log(data: bytes, writers: int, appends: int) -> list[str]:
    """Problems in an append log: torn, foreign, duplicate, missing or out-of-order
    entries. Returns [] for a correct log."""
    problems: list[str] = []
    seen: dict[int, list[int]] = {}
    for number, line in enumerate(data.decode("utf-8", "replace").split("\n")[:-1], 1):
        match = ENTRY.fullmatch(line)
        if match is None or line != payload(int(match[1]), int(match[2])):
            problems.append(f"line {number} is not a whole entry: {line[:40]!r}")
            continue
        seen.setdefault(int(match[1]), []).append(int(match[2]))
    if not data.endswith(b"\n"):
        problems.append("log does not end with a newline")
    for writer in range(writers):
        got = seen.get(writer, [])
        if sorted(got) != list(range(appends)):
            problems.append(f"writer {writer}: {len(got)} entries, {len(set(got))} distinct")
        elif got != list(range(appends)):
            problems.append(f"writer {writer}: entries out of order")
    return problems


def run_threads(count: int, target: Callable[[int], None]) -> None:
    errors: list[BaseException] = []

    def guarded(index: int) -> None:
        try:
            target(index)
        except BaseException as exc:  # surfaced below, a thread must not swallow it
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []


def test_32_delegations_x_200_appends_lose_and_tear_nothing(tmp_path: Path) -> None:
    """Each thread is its own delegation: it mounts its own tools (sharing nothing but
    the process-wide default serializer) and appends 200 entries to the same file."""
    world = make_world(tmp_path / "ws")
    results: dict[int, list[bool]] = {}

    def delegation(writer: int) -> None:
        write = mount_memory_tools(resolve(world, "reviewer", MemoryMode.PRIVATE), world)[0]
        results[writer] = [write.call({"file": "log.md", "content": payload(writer, i)}).ok
                           for i in range(APPENDS)]

    run_threads(WRITERS, delegation)
    assert all(all(oks) for oks in results.values()) and len(results) == WRITERS
    data = (world.workspace / "mem/agents/reviewer/log.md").read_bytes()
    assert check_log(data, WRITERS, APPENDS) == []
    assert data.count(b"\n") == WRITERS * APPENDS


def test_appends_land_in_ticket_order(tmp_path: Path) -> None:
    """FIFO, not just mutual exclusion: the file order is the order turns were taken."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    serializer = AppendSerializer()
    tickets: dict[tuple[int, int], int] = {}

    def writer(w: int) -> None:
        for i in range(50):
            receipt = append_entry(serializer, workspace, PurePosixPath("mem/r"), daily=False,
                                   file_name="log.md", entry=(payload(w, i) + "\n").encode())
            tickets[(w, i)] = receipt.ticket

    run_threads(16, writer)
    lines = (workspace / "mem/r/log.md").read_text().split("\n")[:-1]
    order = [(int(m[1]), int(m[2])) for m in map(ENTRY.fullmatch, lines) if m]
    assert len(order) == 16 * 50
    assert [tickets[key] for key in order] == list(range(16 * 50))


def test_root_and_daily_share_one_queue_per_memory_directory(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    serializer = AppendSerializer()
    receipts = [append_entry(serializer, workspace, PurePosixPath("m"), daily=d,
                             file_name="a.md", entry=b"x\n") for d in (False, True, False)]
    assert [r.ticket for r in receipts] == [0, 1, 2]
    other = append_entry(serializer, workspace, PurePosixPath("n"), daily=False,
                         file_name="a.md", entry=b"x\n")
    assert other.ticket == 0  # another directory has its own queue


def test_two_spellings_of_one_directory_share_a_queue(tmp_path: Path) -> None:
    (tmp_path / "ws" / "m").mkdir(parents=True)
    os.symlink(tmp_path / "ws", tmp_path / "alias")  # the workspace path itself is trusted
    keys = []
    for top in (tmp_path / "ws", tmp_path / "alias"):
        with memory_fs.open_directory(top, PurePosixPath("m"), create=False) as fd:
            assert fd is not None
            keys.append(memory_fs.directory_key(fd))
    assert keys[0] == keys[1]


# --- the checker can fail: broken appenders it must catch ---------------------------------

def test_checker_catches_a_torn_entry(tmp_path: Path) -> None:
    """Writing an entry in two pieces without the queue interleaves deterministically."""
    log = tmp_path / "log.md"
    log.touch()
    barrier = threading.Barrier(2)

    def broken(writer: int) -> None:
        data = (payload(writer, 0) + "\n").encode()
        fd = os.open(log, os.O_WRONLY | os.O_APPEND)
        os.write(fd, data[:10])
        barrier.wait()
        if writer:
            barrier.wait()  # writer 1 waits until writer 0 finished
        os.write(fd, data[10:])
        if not writer:
            barrier.wait()
        os.close(fd)

    run_threads(2, broken)
    problems = check_log(log.read_bytes(), 2, 1)
    assert any("not a whole entry" in p for p in problems)


def test_checker_catches_a_lost_entry(tmp_path: Path) -> None:
    """Read-modify-write without the queue: both read the old file, the last write wins."""
    log = tmp_path / "log.md"
    log.write_bytes((payload(0, 0) + "\n").encode())
    barrier = threading.Barrier(2)

    def broken(writer: int) -> None:
        old = log.read_bytes()
        barrier.wait()
        if writer:
            barrier.wait()
        log.write_bytes(old + (payload(writer, 1) + "\n").encode())
        if not writer:
            barrier.wait()

    run_threads(2, broken)
    assert any("entries" in p for p in check_log(log.read_bytes(), 2, 2))


def test_checker_catches_reordering_and_duplicates() -> None:
    entries = [payload(0, 1), payload(0, 0), payload(1, 0), payload(1, 0)]
    problems = check_log(("\n".join(entries) + "\n").encode(), 2, 2)
    assert "writer 0: entries out of order" in problems
    assert "writer 1: 2 entries, 1 distinct" in problems
