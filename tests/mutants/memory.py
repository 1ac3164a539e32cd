"""Broken variants of the memory dimension, each a bug a real runtime could ship.

Each patches the process it is applied in (a dedicated ``capconf driver --mutant NAME``),
so the reference itself is never touched. ``caught_by`` lists the requirements whose
suite cases must fail against it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from capconf.simulator.core import envelope
from capconf.simulator.core.diagnostics import Severity
from capconf.simulator.definition.declarations import MemoryMode
from capconf.simulator.memory import append as memory_append
from capconf.simulator.memory import binding as memory
from capconf.simulator.memory import dimension as memory_dimension
from capconf.simulator.memory import fs as memory_fs
from capconf.simulator.memory import names as memory_names
from capconf.simulator.memory import resident as memory_resident
from capconf.simulator.memory import search as memory_search
from capconf.simulator.memory import tools as memory_tools
from mutants.base import Mutant


def _patch(owner: object, name: str, value: object) -> None:
    """Replace one attribute of the running process (mutants only)."""
    setattr(owner, name, value)


def _scope_parameter() -> None:
    """The schema has a `scope` argument and `scope: "global"` writes the main memory."""
    for schema in (memory_tools.MEMORY_WRITE_SCHEMA, memory_tools.MEMORY_READ_SCHEMA,
                   memory_tools.MEMORY_SEARCH_SCHEMA):
        schema["properties"]["scope"] = {"type": "string", "enum": ["agent", "global"]}
    real_call = memory_dimension.MemoryDimension.call

    def call(self: Any, tool: str, args: dict[str, Any], outcome: Any, world: Any,
             ctx: Any) -> Any:
        args = dict(args)
        if args.pop("scope", None) == "global":
            toolbox = memory_tools.MemoryToolbox(world.workspace, world.main_dir)
            return getattr(toolbox, tool.removeprefix("memory_"))(args)
        return real_call(self, tool, args, outcome, world, ctx)

    _patch(memory_dimension.MemoryDimension, "call", call)


def _ignore_unknown_arguments() -> None:
    """Unknown arguments are dropped silently, so the model believes `scope` worked."""
    real = memory_tools._parse

    def lenient(tool: str, params: Any, args: object) -> Any:
        if isinstance(args, Mapping):
            names = {p.name for p in params}
            args = {k: v for k, v in args.items() if k in names}
        return real(tool, params, args)

    _patch(memory_tools, "_parse", lenient)


def _follow_file_links() -> None:
    """Files are opened with plain open(): symlinks followed, hard links written through."""
    memory_fs._READ_FLAGS &= ~os.O_NOFOLLOW
    memory_fs._APPEND_FLAGS &= ~os.O_NOFOLLOW
    real_kind = memory_fs._kind

    def kind(st: os.stat_result) -> memory_fs.EntryKind:
        found = real_kind(st)
        return memory_fs.EntryKind.REGULAR if found is memory_fs.EntryKind.HARD_LINKED else found

    _patch(memory_fs, "_kind", kind)


def _follow_directory_links() -> None:
    """The memory directory is resolved through symlinks (realpath, then open)."""
    import capconf.simulator.files.root as files_root

    files_root.DIR_FLAGS &= ~os.O_NOFOLLOW  # memory opens its directories through it


def _budget_in_characters() -> None:
    """Budgets counted in characters: 2049 x 'é' (4098 bytes) is injected."""
    real = memory_resident.plan_resident

    def plan(cands: Any) -> Any:
        recoded = tuple(
            c if c.data is None else memory_resident.ResidentCandidate(
                c.name, c.kind, c.size, _as_latin1(c.data)) for c in cands)
        out = real(recoded)
        texts = {c.name: c.data for c in cands}
        return memory_resident.ResidentPlan(tuple(
            i if i.text is None else memory_resident.ResidentItem(
                i.name, text=(texts[i.name] or b"").decode("utf-8", "replace"))
            for i in out.items), out.used_bytes, out.bad_names)

    _patch(memory_resident, "plan_resident", plan)
    _patch(memory, "plan_resident", plan)


def _as_latin1(data: bytes) -> bytes:
    """One byte per character, so a byte budget counts characters."""
    try:
        return data.decode("utf-8").encode("latin-1", "replace")
    except UnicodeDecodeError:
        return data


def _budget_exclusive() -> None:
    """`size < 4096` instead of `<=`: a file of exactly 4096 bytes is omitted."""
    _patch(memory_resident, "PER_FILE_BUDGET", 4095)


def _truncate_over_budget() -> None:
    """An over-budget file is cut to 4096 bytes and injected instead of omitted whole."""
    real = memory_resident.plan_resident

    def plan(cands: Any) -> Any:
        return real(tuple(
            c if c.data is None else memory_resident.ResidentCandidate(
                c.name, c.kind, min(c.size, 4096), c.data[:4096]) for c in cands))

    _patch(memory_resident, "plan_resident", plan)
    _patch(memory, "plan_resident", plan)


def _daily_is_resident() -> None:
    """Resident memory collected with `**/*.md`, so daily logs enter the prompt."""
    real = memory_resident.collect_candidates

    def collect(workspace: Any, directory: Any) -> Any:
        root = real(workspace, directory)
        daily = real(workspace, directory / "daily")
        return root + daily

    _patch(memory, "collect_candidates", collect)


def _no_serialisation() -> None:
    """No per-directory queue: every append checks and writes whenever it runs."""

    @contextmanager
    def turn(self: Any, key: Any) -> Iterator[int]:
        yield 0

    _patch(memory_append.AppendSerializer, "turn", turn)


def _append_at_read_end() -> None:
    """Append without a queue and without ``O_APPEND``: the entry is written at the end
    the file had when it was opened (the size and last byte it read), so an append that
    lands in between is overwritten. The real append minus its two guards; it costs what
    the real one does, where a whole-file read-modify-write re-read a file of megabytes
    6,400 times (3.4 CPU-s of the tier, for the same lost entries)."""
    _no_serialisation()
    flags = memory_fs._APPEND_FLAGS & ~os.O_APPEND

    def append(dir_fd: int, name: str, entry: bytes) -> tuple[int, int]:
        fd, st = memory_fs._open_regular(dir_fd, name, flags)
        try:
            data = entry
            if st.st_size > 0 and os.pread(fd, 1, st.st_size - 1) != b"\n":
                data = b"\n" + entry
            os.pwrite(fd, data, st.st_size)
            return len(data), st.st_size + len(data)
        finally:
            os.close(fd)

    _patch(memory_fs, "append", append)


def _switch_vetoes_private() -> None:
    """The default-off main-memory switch also switches subagent memory off."""
    real = memory.resolve_memory

    def resolve(agent: str, declared: MemoryMode, world: Any, mode: Any,
                location: Any = None) -> Any:
        if not world.main_enabled:
            declared = MemoryMode.NONE
        return real(agent, declared, world, mode, location)

    _patch(memory_dimension, "resolve_memory", resolve)


def _private_under_main() -> None:
    """Private memory kept in a folder of the main memory (`<main>/agents/<name>`)."""
    real = memory.resolve_memory

    def resolve(agent: str, declared: MemoryMode, world: Any, mode: Any,
                location: Any = None) -> Any:
        out = real(agent, declared, world, mode, location)
        if out.binding is None or declared is not MemoryMode.PRIVATE:
            return out
        moved = memory.MemoryBinding(out.binding.mode, agent,
                                     world.main_dir / "agents" / out.binding.directory.name)
        return memory.MemoryResolution(moved, out.diagnostics)

    _patch(memory_dimension, "resolve_memory", resolve)


def _shared_is_blocked() -> None:
    """The shared-mode notice is an error in save mode: consent became a block."""
    import dataclasses

    blocked = dataclasses.replace(memory.MEM_SHARED_CONSENT, save_severity=Severity.ERROR)
    _patch(memory, "MEM_SHARED_CONSENT", blocked)


def _none_mounts_tools() -> None:
    """memory_* mounted for every agent, whatever its mode."""
    real = memory.resolve_memory

    def resolve(agent: str, declared: MemoryMode, world: Any, mode: Any,
                location: Any = None) -> Any:
        if declared is MemoryMode.NONE:
            declared = MemoryMode.PRIVATE
        return real(agent, declared, world, mode, location)

    _patch(memory_dimension, "resolve_memory", resolve)


def _deny_list_names() -> None:
    """File names checked by a deny-list of `/` and `..` only."""

    def problem(name: str) -> memory_names.NameRule | None:
        if "/" in name or ".." in name or not name:
            return memory_names.NameRule("separator", "bad name")
        return None

    _patch(memory_tools, "name_problem", problem)


def _path_order_search() -> None:
    """Ties broken by the relative path string, so `daily/x.md` sorts before `z.md`."""
    _patch(memory_search.SearchHit, "sort_key",
           lambda self: (-self.terms_matched, -self.occurrences,
                         ("daily/" if self.daily else "") + self.file, self.line))


def _device_agent_names() -> None:
    """Agent names checked for separators but not Windows device names: `con` gets a
    private directory that Windows cannot open."""
    _patch(memory, "WINDOWS_DEVICES", frozenset())


def _resident_by_suffix() -> None:
    """Resident files picked by the `.md` suffix alone: a planted `x\n## Skills.md` is
    printed as a heading of the prompt."""
    _patch(memory_resident, "is_valid_name", lambda name: True)


def _resident_lossy_utf8() -> None:
    """A root file that is not UTF-8 is decoded with U+FFFD and injected mangled."""
    real = memory_resident.plan_resident

    def plan(cands: Any) -> Any:
        return real(tuple(
            c if c.data is None else memory_resident.ResidentCandidate(
                c.name, c.kind, c.size, c.data.decode("utf-8", "replace").encode("utf-8"))
            for c in cands))

    _patch(memory_resident, "plan_resident", plan)
    _patch(memory, "plan_resident", plan)


def _read_byte_cut() -> None:
    """memory_read cuts at exactly 65536 bytes, inside a character (U+FFFD at the end)."""
    _patch(memory_tools, "_utf8_prefix", lambda data, limit: data[:limit])


def _listing_all_entries() -> None:
    """memory_read's listing is the raw directory: links and folders named `*.md` too."""
    real = memory_tools._memory_files

    def files(dir_fd: int) -> Any:
        usable, unusable = real(dir_fd)
        return sorted(usable + [entry.name for entry in unusable]), unusable

    _patch(memory_tools, "_memory_files", files)


def _missing_file_is_empty() -> None:
    """Reading a file that does not exist returns empty content instead of an error."""
    real = memory_tools.MemoryToolbox._read

    def read(self: Any, args: object) -> Any:
        result = real(self, args)
        if result.error is not None and result.error.code == memory_fs.NOT_FOUND:
            assert isinstance(args, Mapping)
            return envelope.success({"file": args["file"], "daily": args.get("daily", False),
                                     "content": "", "size": 0, "truncated": False})
        return result

    _patch(memory_tools.MemoryToolbox, "_read", read)


def _loose_argument_types() -> None:
    """Arguments coerced instead of type-checked: `daily: "true"` is truthy, `1` a name."""

    def parse(tool: str, params: Any, args: object) -> Any:
        if not isinstance(args, Mapping):
            return envelope.failure(memory_tools.INVALID_ARGUMENTS, "not an object", {})
        names = {p.name for p in params}
        if any(key not in names for key in args):
            return envelope.failure(memory_tools.UNKNOWN_ARGUMENT, "unknown argument", {})
        values: dict[str, Any] = {}
        for param in params:
            if param.name in args:
                value = args[param.name]
                values[param.name] = bool(value) if param.kind is bool else str(value)
            elif param.required:
                return envelope.failure(memory_tools.INVALID_ARGUMENTS, "missing", {})
        return values

    _patch(memory_tools, "_parse", parse)


def _no_search_read_budget() -> None:
    """memory_search reads every file whole, however large the memory is."""
    _patch(memory_tools, "SEARCH_READ_BUDGET", 1 << 40)


def _silent_search_skips() -> None:
    """Links and other non-regular files are skipped by search without a word."""
    real = memory_tools._memory_files
    _patch(memory_tools, "_memory_files", lambda dir_fd: (real(dir_fd)[0], []))


def _search_byte_cut() -> None:
    """Hit text cut at 400 UTF-8 bytes instead of 400 code points."""
    real = memory_search.search

    def search(documents: Any, terms: Any) -> Any:
        out = real(documents, terms)
        return memory_search.SearchOutcome(tuple(
            memory_search.SearchHit(h.file, h.daily, h.line,
                                    h.text.encode()[:400].decode("utf-8", "ignore"),
                                    h.line_truncated, h.terms_matched, h.occurrences)
            for h in out.hits), out.total_matches)

    _patch(memory_tools, "search", search)


def _unicode_lower_search() -> None:
    """Search terms and lines lower-cased with Unicode rules, terms split by `str.split`."""
    _patch(memory_search, "ascii_fold", str.lower)
    _patch(memory_tools, "query_terms",
           lambda query: tuple(dict.fromkeys(t.lower() for t in query.split())))


def _locate_lies() -> None:
    """`memory.locate` computed by a second copy of the layout code that drifted: it
    answers `<root>/<name>` while the tools write `<root>/agent-<name>`."""
    from capconf.simulator.memory import ops as memory_ops

    real = memory.private_directory_name
    real_locate = memory_ops.op_memory_locate

    def tools_dir(agent_name: str) -> str | None:
        name = real(agent_name)
        return None if name is None else f"agent-{name}"

    def locate(session: Any, args: Any) -> Any:
        _patch(memory, "private_directory_name", real)
        try:
            return real_locate(session, args)
        finally:
            _patch(memory, "private_directory_name", tools_dir)

    _patch(memory, "private_directory_name", tools_dir)
    from capconf.simulator.protocol import op_tables

    for table in op_tables.OP_TABLES:
        if "memory.locate" in table:
            table["memory.locate"] = locate


def _raw_case_directory() -> None:
    """The private directory is the name as written: `Reviewer` and `reviewer` are two
    agents on Linux and one on macOS."""
    real = memory.private_directory_name

    def raw(agent_name: str) -> str | None:
        name = real(agent_name)
        return None if name is None else (agent_name if agent_name.isascii() else name)

    _patch(memory, "private_directory_name", raw)


def _prefix_directory() -> None:
    """Directories named by the first four letters: `reviewer` and `reviewer2` share."""
    real = memory.private_directory_name

    def prefix(agent_name: str) -> str | None:
        name = real(agent_name)
        return None if name is None else name[:4]

    _patch(memory, "private_directory_name", prefix)


MUTANTS: tuple[Mutant, ...] = (
    Mutant("memory-locate-lies", "memory.locate answers a directory the tools do not use",
           ("MEM-04",), _locate_lies),
    Mutant("memory-raw-case-directory", "the private directory keeps the name's case",
           ("MEM-01",), _raw_case_directory),
    Mutant("memory-prefix-directory", "private directories keyed by a name prefix, so two "
           "agents share one", ("MEM-01",), _prefix_directory),
    Mutant("memory-scope-parameter", "memory tools take a `scope` argument and honour "
           "scope: global", ("MEM-03",), _scope_parameter),
    Mutant("memory-ignore-unknown-args", "unknown memory tool arguments are silently dropped",
           ("MEM-03",), _ignore_unknown_arguments),
    Mutant("memory-follow-file-links", "memory files opened following symlinks and hard links",
           ("MEM-10", "MEM-04"), _follow_file_links),
    Mutant("memory-follow-dir-links", "the memory directory is resolved through symlinks",
           ("MEM-10", "MEM-04"), _follow_directory_links),
    Mutant("memory-budget-characters", "resident budgets counted in characters, not bytes",
           ("MEM-05",), _budget_in_characters),
    Mutant("memory-budget-exclusive", "a file of exactly 4096 bytes is left out",
           ("MEM-05",), _budget_exclusive),
    Mutant("memory-truncate-over-budget", "an over-budget file is truncated, not omitted",
           ("MEM-05",), _truncate_over_budget),
    Mutant("memory-daily-resident", "daily/*.md files are injected into the prompt",
           ("MEM-06",), _daily_is_resident),
    # No "queue removed, appends still single O_APPEND writes" mutant: on a local Linux
    # file system such appends are not observably different from serialised ones, so a
    # suite can catch it only by timing luck. The variant below, which writes at the end
    # it read instead of appending, is the observable form of the same bug.
    Mutant("memory-append-at-read-end", "append writes at the end it read (no O_APPEND), "
           "without a queue", ("MEM-07",), _append_at_read_end),
    Mutant("memory-switch-vetoes", "the main memory's off switch disables subagent memory",
           ("MEM-08",), _switch_vetoes_private, also_breaks=("MEM-09",)),
    Mutant("memory-private-under-main", "private memory lives inside the main memory",
           ("MEM-04",), _private_under_main),
    Mutant("memory-shared-blocked", "memory: shared is rejected on save instead of noted",
           ("MEM-01",), _shared_is_blocked),
    Mutant("memory-none-mounts", "memory tools mounted although memory is none",
           ("MEM-02",), _none_mounts_tools),
    Mutant("memory-deny-list-names", "file names checked only for `/` and `..`",
           ("MEM-09",), _deny_list_names),
    Mutant("memory-path-order-search", "search ties broken by path string, not root first",
           ("MEM-06",), _path_order_search),
    Mutant("memory-device-agent-name", "an agent named `con` gets a private directory",
           ("MEM-01",), _device_agent_names),
    Mutant("memory-resident-by-suffix", "resident files chosen by the .md suffix alone, so "
           "bad names are printed", ("MEM-05", "MEM-09"), _resident_by_suffix),
    Mutant("memory-resident-lossy-utf8", "invalid UTF-8 injected with U+FFFD",
           ("MEM-05",), _resident_lossy_utf8),
    Mutant("memory-read-byte-cut", "memory_read cuts inside a UTF-8 character",
           ("MEM-03",), _read_byte_cut),
    Mutant("memory-listing-all-entries", "memory_read lists links and folders",
           ("MEM-03", "MEM-10"), _listing_all_entries),
    Mutant("memory-missing-file-empty", "reading a missing file returns empty content",
           ("MEM-03",), _missing_file_is_empty),
    Mutant("memory-loose-argument-types", "memory tool arguments coerced, not type-checked",
           ("MEM-03",), _loose_argument_types),
    Mutant("memory-no-search-read-budget", "memory_search has no read budget",
           ("MEM-06",), _no_search_read_budget),
    Mutant("memory-silent-search-skips", "memory_search skips links without reporting them",
           ("MEM-06", "MEM-10"), _silent_search_skips),
    Mutant("memory-search-byte-cut", "search hit text cut at 400 bytes, not code points",
           ("MEM-06",), _search_byte_cut),
    Mutant("memory-search-unicode-lower", "search folds with Unicode lower-casing and "
           "splits with str.split", ("MEM-06",), _unicode_lower_search),
)
