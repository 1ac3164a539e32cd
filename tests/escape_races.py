"""Races against the workspace boundary (issue 9, "Escapes"): another process swaps a
directory for a symlink to an outside folder and back, as fast as it can, while the main
thread searches, loads references, reads or writes through the reference's public entry
points. Each race counts the calls that read or wrote anything outside.

Used by tests/files/test_escape_races.py (asserts zero) and benchmarks/escape_races.py (prints
the counts, also against another checkout, to measure the state before a fix). Only entry
points whose signatures are stable across versions are called.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CANARY = "OUTSIDE-CANARY"


@dataclass
class RaceResult:
    name: str
    calls: int
    swaps: int
    outside: int  # calls that returned outside content or wrote outside
    errors: int  # calls that raised (an `internal` protocol error)

    def line(self) -> str:
        return (f"{self.name}: {self.calls} calls, {self.swaps} swaps, "
                f"{self.outside} outside, {self.errors} internal errors")


_SWAPPER = """
import os, signal, sys, time
directory, real, outside = sys.argv[1:4]
count = 0
def stop(*_):
    print(count, flush=True)
    os._exit(0)
signal.signal(signal.SIGTERM, stop)
print("ready", flush=True)
while True:
    try:
        os.rename(directory, real)
        os.symlink(outside, directory)
        time.sleep(0.0003)  # hold each state long enough to overlap a whole operation
        os.unlink(directory)
        os.rename(real, directory)
        count += 1
        time.sleep(0.0003)
    except OSError:
        pass
"""


@contextmanager
def swapping(directory: Path, outside: Path) -> Iterator[list[int]]:
    """Swap ``directory`` for a symlink to ``outside`` and back until the block ends, in
    another process (so it runs truly in parallel, not in turns with the GIL); yields a
    one-element list that holds the swap count once the block ends. The directory is
    restored afterwards."""
    real = directory.with_name(directory.name + ".real")
    count = [0]
    proc = subprocess.Popen([sys.executable, "-c", _SWAPPER, str(directory), str(real),
                             str(outside)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    proc.stdout.readline()  # "ready"
    try:
        yield count
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=30)
        count[0] = int(out.strip() or 0)
        if directory.is_symlink():
            directory.unlink()
        if real.exists() and not directory.exists():
            real.rename(directory)


def _tree(root: Path, text: str, files: int = 20) -> None:
    for i in range(files):
        sub = root / f"s{i % 4}"
        sub.mkdir(parents=True, exist_ok=True)
        (sub / f"f{i}.md").write_text(f"needle {text} {i}\n" * 3)
        (root / f"top{i}.md").write_text(f"needle {text} top {i}\n")


def kb_search_race(base: Path, calls: int = 100) -> RaceResult:
    from capconf.simulator.core.diagnostics import Location
    from capconf.simulator.definition.declarations import KnowledgeDeclaration
    from capconf.simulator.knowledge.kbsearch import run_kb_search

    ws, outside = base / "ws", base / "outside"
    _tree(ws / "docs", "inside", files=200)
    _tree(outside, CANARY, files=200)
    decl = KnowledgeDeclaration("docs", "docs/**/*.md", Location(("knowledge", 0)))
    leaks = errors = 0
    with swapping(ws / "docs", outside) as swaps:
        for _ in range(calls):
            try:
                result = run_kb_search(ws, [decl], "needle")
            except Exception:
                errors += 1
                continue
            if any(CANARY in h.text for h in result.hits):
                leaks += 1
    return RaceResult("kb_search walk (KB-07)", calls, swaps[0], leaks, errors)


def use_skill_race(base: Path, calls: int = 600) -> RaceResult:
    from capconf.simulator.core.diagnostics import Location, Mode
    from capconf.simulator.definition.declarations import NameRef
    from capconf.simulator.skills.discovery import discover_skills
    from capconf.simulator.skills.resolution import resolve_skills
    from capconf.simulator.skills.use_skill import call_use_skill
    from capconf.simulator.skills.world import parse_skill_world

    ws, layer, outside = base / "ws", base / "system", base / "outside"
    ws.mkdir(parents=True)
    folder = layer / "guide"
    (folder / "references").mkdir(parents=True)
    (folder / "SKILL.md").write_text("---\nname: guide\ndescription: a guide\n---\nG\n")
    (folder / "references" / "api.md").write_text("API reference\n")
    outside.mkdir()
    (outside / "api.md").write_text(f"{CANARY}\n")
    world = parse_skill_world({"layers": {"system": str(layer)}}, ws)
    resolution = resolve_skills([NameRef("guide", Location(("skills", 0)))],
                                discover_skills(world, Mode.PARSE), world, Mode.PARSE, ws)
    assert resolution is not None
    leaks = errors = 0
    with swapping(folder / "references", outside) as swaps:
        for _ in range(calls):
            try:
                out = call_use_skill(resolution, {"name": "guide",
                                                  "reference": "references/api.md"}).to_json()
            except Exception:
                errors += 1
                continue
            if CANARY in str(out):
                leaks += 1
    return RaceResult("use_skill reference (SKILL-05)", calls, swaps[0], leaks, errors)


def _driver(ws: Path, tier: str) -> tuple[Callable[..., Any], str]:
    from capconf.simulator.protocol.dispatcher import Dispatcher

    dispatcher = Dispatcher()

    def ok(op: str, **args: Any) -> Any:
        response = dispatcher.handle({"id": 1, "op": op, "args": args})
        if not response["ok"]:
            raise RuntimeError(response)
        return response["result"]

    ok("world.setup", workspace=str(ws))
    ok("approval.setup", tier=tier)
    agent = ok("agent.spawn", source="name: w\ndescription: d\ntools: [read, write, edit]\n"
                                     "prompt: P.\n")["agent"]
    return ok, str(agent)


def write_race(base: Path, calls: int = 400) -> RaceResult:
    """auto-within-workspace: a write decided inside runs at once; the link may appear
    between the decision and the write. A write decided outside waits for a card (never
    approved here), so anything found outside was written by a call decided inside."""
    ws, outside = base / "ws", base / "outside"
    (ws / "sub").mkdir(parents=True)
    outside.mkdir()
    ok, agent = _driver(ws, "auto-within-workspace")
    errors = written_outside = 0
    with swapping(ws / "sub", outside) as swaps:
        for i in range(calls):
            try:
                ok("tool.call", agent=agent, tool="write",
                   args={"path": "sub/notes.txt", "content": f"{CANARY} {i}\n"})
            except Exception:
                errors += 1
            victim = outside / "notes.txt"
            if victim.exists():
                written_outside += 1
                victim.unlink()
    return RaceResult("write decided inside (APPR-01)", calls, swaps[0], written_outside,
                      errors)


def read_race(base: Path, calls: int = 400) -> RaceResult:
    """auto-within-workspace: a read decided inside runs at once; outside reads wait."""
    ws, outside = base / "ws", base / "outside"
    (ws / "sub").mkdir(parents=True)
    (ws / "sub" / "notes.txt").write_text("inside\n")
    outside.mkdir()
    (outside / "notes.txt").write_text(f"{CANARY}\n")
    ok, agent = _driver(ws, "auto-within-workspace")
    errors = leaks = 0
    with swapping(ws / "sub", outside) as swaps:
        for _ in range(calls):
            try:
                out = ok("tool.call", agent=agent, tool="read", args={"path": "sub/notes.txt"})
            except Exception:
                errors += 1
                continue
            if out.get("ok") and CANARY in str(out):
                leaks += 1
    return RaceResult("read decided inside (APPR-01)", calls, swaps[0], leaks, errors)


def approved_write_with_planted_link(base: Path) -> RaceResult:
    """No race: the link is planted while the card waits, then the card is approved."""
    ws, outside = base / "ws", base / "outside"
    ws.mkdir(parents=True)
    outside.mkdir()
    (outside / "victim.txt").write_text("victim\n")
    ok, agent = _driver(ws, "confirm-before-change")
    pending = ok("tool.call", agent=agent, tool="write",
                 args={"path": "notes.txt", "content": CANARY})
    (ws / "notes.txt").symlink_to(outside / "victim.txt")
    ok("card.decide", card=pending["error_detail"]["card"]["id"], decision="approve")
    leaked = int(CANARY in (outside / "victim.txt").read_text())
    return RaceResult("approved write, link planted while pending (APPR-01)", 1, 1, leaked, 0)


RACES: tuple[Callable[[Path], RaceResult], ...] = (
    kb_search_race, use_skill_race, write_race, read_race, approved_write_with_planted_link)
