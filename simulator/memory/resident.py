"""Resident memory: the root ``*.md`` files injected as the ``## Memory`` section (MEM-05).

Budgets are UTF-8 bytes of the file as stored: 4096 per file, 12288 for the section.
Bytes, because they are the one measure every runtime computes the same way without
decoding (a JS string length counts UTF-16 units, Python code points, Rust bytes) and a
``stat`` gives them; and because for CJK text, where a character is 3 bytes, bytes track
prompt tokens more closely than characters. Only file contents count: the heading line,
the intro and the notes are fixed overhead that would make the budget depend on names.

Files are taken in code point order of their names (valid names are ASCII, so this is
byte order and ``MEMORY.md`` sorts before ``notes.md``), first fit: a file that does not
fit is omitted whole and replaced in place by a one-line note, and later, smaller files
may still fit. ``daily/`` is never looked at here (MEM-06).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import fs as memory_fs
from capconf.simulator.memory.fs import EntryKind
from capconf.simulator.memory.names import NAME_SUFFIX, is_valid_name

PER_FILE_BUDGET = 4096
SECTION_BUDGET = 12288
SECTION_HEADING = "## Memory"


@dataclass(frozen=True)
class ResidentCandidate:
    """A root entry whose name ends in ``.md``; ``data`` holds at most
    ``PER_FILE_BUDGET + 1`` bytes of a regular file, else None."""

    name: str
    kind: EntryKind
    size: int
    data: bytes | None = None


@dataclass(frozen=True)
class ResidentItem:
    """Either an included file (``text``) or the one-line note that replaces it."""

    name: str
    text: str | None = None
    note: str | None = None


@dataclass(frozen=True)
class ResidentPlan:
    items: tuple[ResidentItem, ...]
    used_bytes: int
    bad_names: int  # ``.md`` entries whose names break the file-name rule

    @property
    def included(self) -> tuple[str, ...]:
        return tuple(item.name for item in self.items if item.text is not None)


def _note(name: str, why: str) -> ResidentItem:
    return ResidentItem(name, note=f"- `{name}` omitted: {why}.")


def plan_resident(candidates: tuple[ResidentCandidate, ...]) -> ResidentPlan:
    items: list[ResidentItem] = []
    used = 0
    bad_names = 0
    for cand in sorted(candidates, key=lambda c: c.name):
        if not is_valid_name(cand.name):
            bad_names += 1
            continue
        if cand.kind is not EntryKind.REGULAR or cand.data is None:
            items.append(_note(cand.name, f"not a regular file ({cand.kind.value}); "
                                          "memory never follows links"))
            continue
        size = len(cand.data)
        if size > PER_FILE_BUDGET:
            shown = max(cand.size, size)
            items.append(_note(cand.name, f"{shown} bytes is over the {PER_FILE_BUDGET}-byte "
                                          "per-file budget; use memory_read"))
            continue
        try:
            text = cand.data.decode("utf-8")
        except UnicodeDecodeError:
            items.append(_note(cand.name, "not valid UTF-8"))
            continue
        if used + size > SECTION_BUDGET:
            items.append(_note(cand.name, f"{size} bytes would take the section over its "
                                          f"{SECTION_BUDGET}-byte budget; use memory_read"))
            continue
        used += size
        items.append(ResidentItem(cand.name, text=text))
    return ResidentPlan(tuple(items), used, bad_names)


MODE_LINES: dict[MemoryMode, str] = {
    MemoryMode.PRIVATE: (
        "Mode: private. This memory is yours alone: nothing you write here reaches the main "
        "agent's memory."
    ),
    MemoryMode.SHARED: (
        "Mode: shared. This memory is the main agent's memory: what you write here can enter "
        "its prompt, so write only what you have checked."
    ),
}
USAGE_LINE = (
    f"memory_write appends entries; memory_read and memory_search look them up. Root files "
    f"are resident and shown below (at most {PER_FILE_BUDGET} bytes per file and "
    f"{SECTION_BUDGET} bytes in all); daily files are found only with memory_search."
)
EMPTY_LINE = "(no resident memory files)"


def render_section(mode: MemoryMode, plan: ResidentPlan, unavailable: str | None = None) -> str:
    """The section text, without a trailing newline. A file's trailing newlines are
    dropped so blocks are separated by exactly one blank line."""
    blocks = [f"{SECTION_HEADING}\n{MODE_LINES[mode]}\n{USAGE_LINE}"]
    if unavailable is not None:
        blocks.append(f"(memory directory unavailable: {unavailable})")
        return "\n\n".join(blocks)
    for item in plan.items:
        if item.text is None:
            assert item.note is not None
            blocks.append(item.note)
        else:
            body = item.text.rstrip("\n")
            blocks.append(f"### {item.name}\n{body}" if body else f"### {item.name}")
    if plan.bad_names:
        blocks.append(f"- {plan.bad_names} other .md entries skipped: their names break the "
                      "memory file-name rule.")
    if len(blocks) == 1:
        blocks.append(EMPTY_LINE)
    return "\n\n".join(blocks)


def collect_candidates(
    workspace: Path, directory: PurePosixPath
) -> tuple[ResidentCandidate, ...]:
    """Edge: the root ``.md`` entries of the memory directory (none when it is missing).
    Raises ``MemoryFsError`` when the directory path itself is unsafe."""
    found: list[ResidentCandidate] = []
    with memory_fs.open_directory(workspace, directory, create=False) as dir_fd:
        if dir_fd is None:
            return ()
        for entry in memory_fs.list_entries(dir_fd):
            if not entry.name.lower().endswith(NAME_SUFFIX):
                continue
            if entry.kind is not EntryKind.REGULAR or not is_valid_name(entry.name):
                found.append(ResidentCandidate(entry.name, entry.kind, entry.size))
                continue
            try:
                data, size = memory_fs.read_prefix(dir_fd, entry.name, PER_FILE_BUDGET + 1)
            except memory_fs.MemoryFsError as exc:
                kind = EntryKind(str(exc.detail.get("kind", EntryKind.OTHER.value)))
                found.append(ResidentCandidate(entry.name, kind, entry.size))
                continue
            found.append(ResidentCandidate(entry.name, EntryKind.REGULAR, size, data))
    return tuple(found)
