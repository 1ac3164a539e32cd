"""Resident memory section: budgets in UTF-8 bytes, name order, notes, daily excluded
(MEM-05, MEM-06)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_support import make_world, resolve, toolbox, write_file

from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory.binding import MemoryWorld, memory_section
from capconf.simulator.memory.fs import EntryKind
from capconf.simulator.memory.resident import (
    EMPTY_LINE,
    MODE_LINES,
    PER_FILE_BUDGET,
    SECTION_BUDGET,
    USAGE_LINE,
    ResidentCandidate,
    plan_resident,
)

HEAD = f"## Memory\n{MODE_LINES[MemoryMode.PRIVATE]}\n{USAGE_LINE}"


@pytest.fixture
def world(tmp_path: Path) -> MemoryWorld:
    return make_world(tmp_path / "ws")


def mem_dir(world: MemoryWorld, agent: str = "reviewer") -> Path:
    return world.workspace / "mem/agents" / agent


def section(world: MemoryWorld, agent: str = "reviewer",
            mode: MemoryMode = MemoryMode.PRIVATE) -> str:
    text = memory_section(resolve(world, agent, mode), world)
    assert text is not None
    return text


def blocks(text: str) -> list[str]:
    return text.split("\n\n")[1:]


def test_budgets_are_the_published_numbers() -> None:
    assert (PER_FILE_BUDGET, SECTION_BUDGET) == (4096, 12288)


def test_empty_memory_still_renders_the_heading_and_mode(world: MemoryWorld) -> None:
    assert section(world) == f"{HEAD}\n\n{EMPTY_LINE}"
    shared = section(world, mode=MemoryMode.SHARED)
    assert shared.startswith(f"## Memory\n{MODE_LINES[MemoryMode.SHARED]}\n")


def test_exact_rendering(world: MemoryWorld) -> None:
    write_file(mem_dir(world) / "notes.md", "- prefers tabs\n\n\n")
    write_file(mem_dir(world) / "MEMORY.md", "# Facts\nrepo uses uv")
    write_file(mem_dir(world) / "empty.md", "")
    assert section(world) == (
        f"{HEAD}\n\n### MEMORY.md\n# Facts\nrepo uses uv\n\n### empty.md\n\n"
        "### notes.md\n- prefers tabs"
    )
    assert not section(world).endswith("\n")


def test_per_file_budget_at_and_one_over(world: MemoryWorld) -> None:
    write_file(mem_dir(world) / "a.md", b"a" * PER_FILE_BUDGET)
    write_file(mem_dir(world) / "b.md", b"b" * (PER_FILE_BUDGET + 1))
    got = blocks(section(world))
    assert got[0] == "### a.md\n" + "a" * PER_FILE_BUDGET
    assert got[1] == ("- `b.md` omitted: 4097 bytes is over the 4096-byte per-file budget; "
                      "use memory_read.")
    assert len(got) == 2


def test_budget_counts_utf8_bytes_not_characters(world: MemoryWorld) -> None:
    write_file(mem_dir(world) / "a.md", "é" * (PER_FILE_BUDGET // 2))  # 4096 bytes
    write_file(mem_dir(world) / "b.md", "é" * (PER_FILE_BUDGET // 2 + 1))  # 2049 chars
    got = blocks(section(world))
    assert got[0].startswith("### a.md\né")
    assert got[1].startswith("- `b.md` omitted: 4098 bytes is over")


@pytest.mark.parametrize(("last", "included"), [(1, True), (2, False)])
def test_section_budget_at_and_one_over(world: MemoryWorld, last: int, included: bool) -> None:
    write_file(mem_dir(world) / "a.md", b"a" * PER_FILE_BUDGET)
    write_file(mem_dir(world) / "b.md", b"b" * PER_FILE_BUDGET)
    write_file(mem_dir(world) / "c.md", b"c" * (PER_FILE_BUDGET - 1))
    write_file(mem_dir(world) / "d.md", b"d" * last)  # 12287 + last
    got = blocks(section(world))
    assert got[:3] == [f"### {n}.md\n" + n * s for n, s in
                       (("a", 4096), ("b", 4096), ("c", 4095))]
    if included:
        assert got[3] == "### d.md\nd"
    else:
        assert got[3] == ("- `d.md` omitted: 2 bytes would take the section over its "
                          "12288-byte budget; use memory_read.")


def test_first_fit_in_name_order_lets_a_later_small_file_in(world: MemoryWorld) -> None:
    for name, size in (("a.md", 4000), ("b.md", 4000), ("c.md", 4000), ("d.md", 500),
                       ("e.md", 288)):
        write_file(mem_dir(world) / name, b"x" * size)
    got = blocks(section(world))
    assert [b.split("\n")[0][:10] for b in got] == [
        "### a.md", "### b.md", "### c.md", "- `d.md` o", "### e.md"]


def test_order_is_code_point_order_of_names(world: MemoryWorld) -> None:
    for name in ("b.md", "B.md", "a.md", "MEMORY.md", "_x.md", "0.md"):
        write_file(mem_dir(world) / name, name)
    heads = [b for b in blocks(section(world)) if b.startswith("###")]
    assert heads == [f"### {n}\n{n}" for n in ("0.md", "B.md", "MEMORY.md", "a.md", "b.md")]


def test_unusable_entries_get_a_note_never_their_content(world: MemoryWorld) -> None:
    main_file = write_file(world.workspace / "mem/main/MEMORY.md", "MAIN-SECRET")
    mem_dir(world).mkdir()
    os.symlink(main_file, mem_dir(world) / "link.md")
    os.link(main_file, mem_dir(world) / "hard.md")
    (mem_dir(world) / "dir.md").mkdir()
    write_file(mem_dir(world) / "bad.md", b"\xff\xfe")
    write_file(mem_dir(world) / "my notes.md", "SPACED")
    write_file(mem_dir(world) / "NOTES.MD", "UPPER")
    write_file(mem_dir(world) / "readme.txt", "TXT")
    text = section(world)
    for secret in ("MAIN-SECRET", "SPACED", "UPPER", "TXT"):
        assert secret not in text
    assert blocks(text) == [
        "- `bad.md` omitted: not valid UTF-8.",
        "- `dir.md` omitted: not a regular file (directory); memory never follows links.",
        "- `hard.md` omitted: not a regular file (hard_linked); memory never follows links.",
        "- `link.md` omitted: not a regular file (symlink); memory never follows links.",
        "- 2 other .md entries skipped: their names break the memory file-name rule.",
    ]


def test_daily_files_never_enter_the_prompt(world: MemoryWorld) -> None:
    box = toolbox(world, "reviewer")
    assert box.write({"file": "MEMORY.md", "content": "DAILY-MARKER", "daily": True}).ok
    write_file(mem_dir(world) / "daily" / "notes.md", "DAILY-MARKER-2")
    write_file(mem_dir(world) / "root.md", "root")
    text = section(world)
    assert "DAILY" not in text and "daily/" not in text.split("\n\n", 1)[1]
    hits = box.search({"query": "daily-marker"}).content["hits"]
    assert {(h["file"], h["daily"]) for h in hits} == {("MEMORY.md", True), ("notes.md", True)}


def test_unsafe_directory_renders_as_unavailable(world: MemoryWorld) -> None:
    os.symlink(world.workspace / "mem/main", mem_dir(world, "linked"))
    write_file(world.workspace / "mem/main/MEMORY.md", "MAIN-SECRET")
    text = section(world, "linked")
    assert "MAIN-SECRET" not in text
    assert blocks(text) == ["(memory directory unavailable: mem/agents/linked is a symlink, "
                            "not a directory; memory never follows symlinks)"]


sizes = st.lists(st.tuples(st.integers(0, 6000), st.booleans()), max_size=12)


@settings(max_examples=200)
@given(sizes)
def test_plan_respects_budgets_and_notes_every_omission(files: list[tuple[int, bool]]) -> None:
    cands = tuple(
        ResidentCandidate(f"f{i:02d}.md", EntryKind.REGULAR, size,
                          (b"\xff" if bad_utf8 and size else b"") + b"x" * max(size - 1, 0)
                          if bad_utf8 else b"x" * size)
        for i, (size, bad_utf8) in enumerate(files)
    )
    plan = plan_resident(cands)
    assert [i.name for i in plan.items] == [c.name for c in cands]  # one item per file, in order
    used = 0
    for cand, item in zip(cands, plan.items, strict=True):
        assert (item.text is None) != (item.note is None)
        size = len(cand.data or b"")
        fits = size <= PER_FILE_BUDGET and used + size <= SECTION_BUDGET
        valid = not (cand.data or b"").startswith(b"\xff")
        if item.text is not None:
            assert fits and valid
            used += size
        else:
            assert item.note is not None and "\n" not in item.note
            assert not (fits and valid)
    assert plan.used_bytes == used <= SECTION_BUDGET
