"""Isolation is structural (MEM-03, MEM-04): no argument, link or name reaches outside the
bound directory. The property test instruments every file-system primitive the memory
code uses and snapshots the whole tree outside the bound directory around each call."""

from __future__ import annotations

import builtins
import json
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from memory_support import MAIN, ROOT, make_world, resolve, snapshot, toolbox, write_file

from capconf.simulator.core.diagnostics import WorldSetupError
from capconf.simulator.core.envelope import ToolResult
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import tools as memory_tools
from capconf.simulator.memory.binding import MemoryWorld, mount_memory_tools, parse_memory_world
from capconf.simulator.memory.tools import MemoryToolbox

pytestmark = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(),
                                reason="instrumentation resolves descriptors via /proc")

SECRETS = ("MAIN-SECRET", "OUTSIDE-SECRET", "OTHER-SECRET", "SIBLING-SECRET")


def build_tree(top: Path) -> MemoryWorld:
    """A workspace where every way out of an agent's memory directory is planted."""
    outside = write_file(top / "outside" / "secret.md", "OUTSIDE-SECRET\n")
    world = make_world(top / "ws")
    ws = world.workspace
    main_file = write_file(ws / MAIN / "MEMORY.md", "MAIN-SECRET\n")
    write_file(ws / MAIN / "daily" / "d.md", "MAIN-SECRET daily\n")
    write_file(ws / ROOT / "other" / "notes.md", "OTHER-SECRET\n")
    write_file(ws / "mem" / "notes.md", "SIBLING-SECRET\n")
    rev = ws / ROOT / "reviewer"
    write_file(rev / "notes.md", "own notes\n")
    write_file(rev / "daily" / "ok.md", "own daily\n")
    os.symlink("../../main/MEMORY.md", rev / "link.md")
    os.symlink(outside, rev / "abs.md")
    os.symlink("../other", rev / "dlink.md")
    os.symlink("../../main/NEW.md", rev / "dangling.md")
    os.symlink("../../../main/daily/d.md", rev / "daily" / "link.md")
    os.link(main_file, rev / "hard.md")
    planter = ws / ROOT / "planter"
    write_file(planter / "notes.md", "planter notes\n")
    os.symlink("../../main/daily", planter / "daily")
    os.symlink("../main", ws / ROOT / "linked")
    os.symlink(top / "outside", ws / ROOT / "away")
    return world


AGENTS = ("reviewer", "planter", "linked", "away")
TOOLS = ("memory_write", "memory_read", "memory_search")
PLANTED = ["notes.md", "link.md", "abs.md", "dlink.md", "dangling.md", "hard.md", "ok.md",
           "d.md", "MEMORY.md", "secret.md", "new.md", "daily.md"]
NASTY = ["global", "../../x", "../main", "..", "/", "/etc/passwd", "<MAIN_ABS>",
         "<OUTSIDE_ABS>", "mem/main", "../../main/MEMORY.md", "\u2215..\u2215main",
         "\uff0e\uff0e\uff0fmain", "C:\\x", "x\x00y", "~", "%2e%2e%2fmain", "daily/../..",
         "file:///etc/passwd"]
EXTRA_KEYS = ["scope", "dir", "directory", "path", "root", "cwd", "agent", "global",
              "namespace", "file_path", "memory_dir", "Scope", "SCOPE", "\uff53cope",
              "scope\u200b", "../x", "/abs", "daily/", "", "__proto__", "constructor"]

nasty = st.sampled_from(NASTY) | st.text(max_size=10)
values = st.recursive(
    nasty | st.booleans() | st.none() | st.integers() | st.floats(allow_nan=False),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(
        ["dir", "path", "scope"]), inner, max_size=2),
    max_leaves=4,
)
file_names = st.sampled_from(PLANTED) | nasty
base_args: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "memory_write": st.fixed_dictionaries(
        {"file": file_names, "content": st.sampled_from(["note", "../../x", "/etc\n"])
         | st.text(min_size=1, max_size=20)},
        optional={"daily": st.booleans()}),
    "memory_read": st.fixed_dictionaries({}, optional={"file": file_names,
                                                       "daily": st.booleans()}),
    "memory_search": st.fixed_dictionaries(
        {"query": st.sampled_from(["secret", "main", "notes daily", "own"]) | nasty}),
}
extras = st.one_of(
    st.just({}),
    st.dictionaries(st.sampled_from(EXTRA_KEYS) | st.text(max_size=6), values,
                    min_size=1, max_size=3),
)


class Recorder:
    """Wraps the primitives memory code uses; anything touching a path outside the bound
    directory is a violation. Ancestors of the bound directory may be opened as
    directories (the symlink-free walk), never listed or read."""

    def __init__(self, bound: Path) -> None:
        self.bound = bound
        self.ancestors = {bound, *bound.parents}
        self.violations: list[str] = []
        self.calls = 0

    def inside(self, path: Path) -> bool:
        return path == self.bound or self.bound in path.parents

    @staticmethod
    def fd_path(fd: int) -> Path:
        return Path(os.readlink(f"/proc/self/fd/{fd}"))

    def check_fd(self, what: str, fd: int) -> None:
        path = self.fd_path(fd)
        if not self.inside(path) or os.fstat(fd).st_nlink != 1:
            self.violations.append(f"{what} on {path}")

    @contextmanager
    def active(self) -> Iterator[None]:
        real = {name: getattr(os, name) for name in (
            "open", "read", "pread", "write", "pwrite", "scandir", "listdir", "mkdir")}
        real_builtin_open = builtins.open

        def forbidden(name: str) -> Callable[..., Any]:
            def call(*args: Any, **kwargs: Any) -> Any:
                self.violations.append(f"{name} called")
                raise PermissionError(name)
            return call

        def op_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None
                    ) -> int:
            self.calls += 1
            fd: int = real["open"](path, flags, mode, dir_fd=dir_fd)
            where = self.fd_path(fd)
            allowed = (where in self.ancestors or self.inside(where) if flags & os.O_DIRECTORY
                       else self.inside(where) and where != self.bound)
            if not allowed:
                self.violations.append(f"open {where} flags={flags:o}")
            return fd

        def op_fd(name: str) -> Callable[..., Any]:
            def call(fd: int, *args: Any) -> Any:
                self.calls += 1
                self.check_fd(name, fd)
                return real[name](fd, *args)
            return call

        def op_scandir(target: Any = ".") -> Any:
            self.calls += 1
            if not isinstance(target, int) or not self.inside(self.fd_path(target)):
                self.violations.append(f"scandir {target}")
            return real["scandir"](target)

        def op_mkdir(path: Any, mode: int = 0o777, *, dir_fd: int | None = None) -> None:
            self.calls += 1
            where = (self.fd_path(dir_fd) if dir_fd is not None else Path()) / path
            if not self.inside(where):
                self.violations.append(f"mkdir {where}")
            real["mkdir"](path, mode, dir_fd=dir_fd)

        patched: dict[str, Callable[..., Any]] = {
            "open": op_open, "read": op_fd("read"), "pread": op_fd("pread"),
            "write": op_fd("write"), "pwrite": forbidden("pwrite"), "scandir": op_scandir,
            "listdir": forbidden("listdir"), "mkdir": op_mkdir}
        try:
            for name, fn in patched.items():
                setattr(os, name, fn)
            builtins.open = forbidden("builtins.open")
            yield
        finally:
            for name, fn in real.items():
                setattr(os, name, fn)
            builtins.open = real_builtin_open


@contextmanager
def lenient_parsing() -> Iterator[None]:
    """Make the tools silently drop unknown arguments instead of rejecting them: isolation
    must hold even then, because no code path turns an argument into a directory."""
    real = memory_tools._parse

    def dropping(tool: str, params: Any, args: object) -> Any:
        if isinstance(args, Mapping):
            names = {p.name for p in params}
            args = {k: v for k, v in args.items() if k in names}
        return real(tool, params, args)

    memory_tools._parse = dropping
    try:
        yield
    finally:
        memory_tools._parse = real


def _substitute(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value, value)
    if isinstance(value, list):
        return [_substitute(v, table) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, table) for k, v in value.items()}
    return value


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    top = tmp_path_factory.mktemp("isolation")
    build_tree(top)
    return top


def call_recorded(tree: Path, agent: str, tool: str, args: object, *, lenient: bool
                  ) -> tuple[ToolResult, Recorder]:
    """One call under instrumentation; asserts nothing outside the bound directory moved,
    nothing outside was touched, and no secret from outside came back."""
    world = parse_memory_world({"subagent_root": ROOT, "main_dir": MAIN}, tree / "ws")
    tools = {t.name: t for t in mount_memory_tools(resolve(world, agent, MemoryMode.PRIVATE),
                                                    world)}
    bound = Path(os.path.realpath(tree / "ws")) / ROOT / agent
    recorder = Recorder(bound)
    before = snapshot(tree, exclude=tree / "ws" / ROOT / agent)
    with lenient_parsing() if lenient else _nothing(), recorder.active():
        result = tools[tool].call(args)
    after = snapshot(tree, exclude=tree / "ws" / ROOT / agent)
    assert isinstance(result, ToolResult)
    assert recorder.violations == [], (agent, tool, args)
    assert after == before, (agent, tool, args)
    shown = json.dumps(result.to_json())
    assert not any(secret in shown for secret in SECRETS), shown
    return result, recorder


@settings(max_examples=250, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(agent=st.sampled_from(AGENTS), tool=st.sampled_from(TOOLS), data=st.data(),
       lenient=st.booleans())
def test_no_byte_outside_the_bound_directory(
    tree: Path, agent: str, tool: str, data: st.DataObject, lenient: bool
) -> None:
    table = {"<MAIN_ABS>": str(tree / "ws" / MAIN), "<OUTSIDE_ABS>": str(tree / "outside")}
    base = data.draw(base_args[tool], label="base")
    extra = data.draw(extras.filter(lambda d: not set(d) & {"file", "content", "daily",
                                                            "query"}), label="extra")
    args = _substitute({**base, **extra}, table)
    result, recorder = call_recorded(tree, agent, tool, args, lenient=lenient)
    event(f"{tool}: {'ok' if result.error is None else result.error.code}")
    if extra and not lenient:
        assert result.error is not None and result.error.code == "MEM-UNKNOWN-ARGUMENT"
        assert recorder.calls == 0  # refused before any I/O


def test_every_planted_name_for_every_agent_and_tool(tree: Path) -> None:
    """The exhaustive sweep behind the property test: every agent, every planted or nasty
    name, root and daily, every tool, with well-formed arguments that reach the disk."""
    names = [*PLANTED, *(n for n in NASTY if not n.startswith("<"))]
    outcomes: set[str] = set()
    for agent in AGENTS:
        for daily in (False, True):
            for name in names:
                for tool, args in (
                    ("memory_read", {"file": name, "daily": daily}),
                    ("memory_write", {"file": name, "content": "POISON", "daily": daily}),
                ):
                    result, _ = call_recorded(tree, agent, tool, args, lenient=False)
                    outcomes.add(result.error.code if result.error else "ok")
        for query in ("secret", "main daily", "poison own notes"):
            call_recorded(tree, agent, "memory_search", {"query": query}, lenient=False)
        call_recorded(tree, agent, "memory_read", {}, lenient=False)
    assert outcomes == {"ok", "MEM-BAD-FILE-NAME", "MEM-NOT-REGULAR-FILE",
                        "MEM-DIR-UNSAFE", "MEM-FILE-NOT-FOUND"}


@contextmanager
def _nothing() -> Iterator[None]:
    yield


# --- deterministic cases: each planted way out, one at a time ----------------------------

@pytest.fixture
def world(tmp_path: Path) -> MemoryWorld:
    return build_tree(tmp_path)


def main_state(world: MemoryWorld) -> dict[str, tuple[str, bytes, int]]:
    return snapshot(world.workspace / MAIN, exclude=world.workspace / "nothing")


@pytest.mark.parametrize(("name", "kind"), [
    ("link.md", "symlink"), ("abs.md", "symlink"), ("dlink.md", "symlink"),
    ("dangling.md", "symlink"), ("hard.md", "hard_linked")])
@pytest.mark.parametrize("op", ["write", "read"])
def test_planted_file_links_are_refused(world: MemoryWorld, name: str, kind: str,
                                        op: str) -> None:
    box = toolbox(world, "reviewer")
    before = main_state(world)
    result = (box.write({"file": name, "content": "POISON"}) if op == "write"
              else box.read({"file": name}))
    assert result.error is not None and result.error.code == "MEM-NOT-REGULAR-FILE"
    assert result.error.detail["kind"] == kind
    assert main_state(world) == before
    assert not (world.workspace / MAIN / "NEW.md").exists()


def test_planted_daily_link_is_refused(world: MemoryWorld) -> None:
    box = toolbox(world, "reviewer")
    result = box.write({"file": "link.md", "content": "POISON", "daily": True})
    assert result.error is not None and result.error.code == "MEM-NOT-REGULAR-FILE"
    assert b"POISON" not in (world.workspace / MAIN / "daily/d.md").read_bytes()


@pytest.mark.parametrize(("agent", "daily"), [("planter", True), ("linked", False),
                                              ("away", False)])
def test_directory_links_are_refused_as_unsafe(world: MemoryWorld, agent: str,
                                               daily: bool) -> None:
    before = main_state(world)
    box = toolbox(world, agent)
    result = box.write({"file": "d.md", "content": "POISON", "daily": daily})
    assert result.error is not None and result.error.code == "MEM-DIR-UNSAFE"
    assert result.error.terminal_for_attempt is True
    assert main_state(world) == before
    assert not (world.workspace.parent / "outside" / "d.md").exists()


def test_a_directory_swapped_for_a_link_after_mount_is_refused(world: MemoryWorld) -> None:
    """The check runs on every call, not once at mount: the disk can change in between."""
    tools = mount_memory_tools(resolve(world, "fresh", MemoryMode.PRIVATE), world)
    assert tools[0].call({"file": "a.md", "content": "ok"}).ok
    fresh = world.workspace / ROOT / "fresh"
    (fresh / "a.md").unlink()
    fresh.rmdir()
    os.symlink("../main", fresh)
    before = main_state(world)
    result = tools[0].call({"file": "MEMORY.md", "content": "POISON"})
    assert result.error is not None and result.error.code == "MEM-DIR-UNSAFE"
    assert main_state(world) == before


def test_an_agents_root_that_is_a_link_to_main_is_refused(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    write_file(ws / "main" / "MEMORY.md", "MAIN-SECRET\n")
    os.symlink("main", ws / "agents")
    world = parse_memory_world({"subagent_root": "agents", "main_dir": "main"}, ws)
    resolution = resolve(world, "reviewer", MemoryMode.PRIVATE)
    assert [d.code for d in resolution.diagnostics] == ["MEM-DIR-UNSAFE"]
    box = MemoryToolbox(ws, resolution.binding.directory)  # type: ignore[union-attr]
    assert box.write({"file": "MEMORY.md", "content": "POISON"}).error is not None
    assert not (ws / "main" / "reviewer").exists()
    assert (ws / "main" / "MEMORY.md").read_text() == "MAIN-SECRET\n"


@pytest.mark.parametrize(("root", "main"), [
    ("mem", "mem"), ("mem/agents", "mem"), ("mem", "mem/agents/x")])
def test_world_refuses_overlapping_private_and_main_directories(
    tmp_path: Path, root: str, main: str
) -> None:
    with pytest.raises(WorldSetupError) as info:
        parse_memory_world({"subagent_root": root, "main_dir": main}, tmp_path)
    assert info.value.path == ("subagent_root",)


def test_private_directories_are_disjoint_from_main_for_every_agent_name(
    tmp_path: Path
) -> None:
    world = make_world(tmp_path / "ws")
    for name in ("main", "..", "../main", "MAIN", "mem", "agents", "a/../../main"):
        binding = resolve(world, name, MemoryMode.PRIVATE).binding
        if binding is not None:
            assert binding.directory.parent == world.subagent_root
            assert not binding.directory.is_relative_to(world.main_dir)
