"""memory_write / memory_read / memory_search: schemas, descriptions and bound calls.

The directory is not an argument. A ``MemoryToolbox`` is built once per mount with the
one directory it may touch, and every call derives its paths from that field and from a
validated single-component file name; no argument value is ever joined into a path
(MEM-03). Unknown arguments (``scope``, ``dir``, ``path`` ...) are rejected with a
structured error before any I/O instead of being ignored: ignoring ``scope: "global"``
would let the model believe it wrote to global memory. The schemas say the same with
``additionalProperties: false``. The optional ``daily`` flag picks one of the two fixed
parts of the bound directory (its root or its ``daily/`` subfolder); it cannot name any
other directory.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.memory import fs as memory_fs
from capconf.simulator.memory.append import (
    DAILY_DIRECTORY,
    PROCESS_SERIALIZER,
    AppendSerializer,
    append_entry,
)
from capconf.simulator.memory.fs import EntryKind, MemoryFsError
from capconf.simulator.memory.names import MAX_NAME_BYTES, NAME_PATTERN, NAME_SUFFIX, name_problem
from capconf.simulator.memory.resident import PER_FILE_BUDGET, SECTION_BUDGET
from capconf.simulator.memory.search import (
    MAX_HITS,
    MAX_LINE_CHARS,
    MAX_QUERY_CHARS,
    SearchDocument,
    query_terms,
    search,
)

MAX_ENTRY_BYTES = 4096
READ_LIMIT_BYTES = 65536
SEARCH_READ_BUDGET = 8 * 1024 * 1024

UNKNOWN_ARGUMENT = "MEM-UNKNOWN-ARGUMENT"
INVALID_ARGUMENTS = "MEM-BAD-ARGUMENTS"
INVALID_FILE_NAME = "MEM-BAD-FILE-NAME"
ENTRY_TOO_LARGE = "MEM-ENTRY-TOO-LARGE"
# Tool error codes (ToolResult.error_code), with the requirement whose SPEC prose defines
# the case (the tool contract is MEM-03's) and when.
TOOL_ERROR_CODES: tuple[tuple[str, str, str], ...] = (
    (UNKNOWN_ARGUMENT, "MEM-03", "an argument the schema does not define (`scope`, `dir`, "
     "`path` ...); refused before any file-system access"),
    (INVALID_ARGUMENTS, "MEM-03", "not an object, a required argument missing, a wrong JSON "
     "type, a lone surrogate, blank or NUL content, a blank or over-long query"),
    (INVALID_FILE_NAME, "MEM-09", "the file name breaks the file-name rule; "
     "`error_detail.reason` names the rule"),
    (ENTRY_TOO_LARGE, "MEM-07",
     "the entry as stored (its newline included) is over 4096 UTF-8 bytes"),
    (memory_fs.UNSAFE_DIRECTORY, "MEM-10", "a component of the memory directory or `daily/` "
     "is a symlink or not a directory; `terminal_for_attempt` is true"),
    (memory_fs.NOT_REGULAR, "MEM-10", "the file is a symlink, a directory, a device or FIFO, "
     "or has more than one hard link; `error_detail.kind` says which"),
    (memory_fs.NOT_FOUND, "MEM-03", "memory_read of a file that does not exist"),
    (memory_fs.IO_ERROR, "MEM-03", "any other operating-system error (permissions, a full "
     "disk)"),
)

_FILE_PROPERTY: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_NAME_BYTES,
    "pattern": NAME_PATTERN,
    "description": "A file name such as notes.md: one name, no folders.",
}
_DAILY_PROPERTY: dict[str, Any] = {
    "type": "boolean",
    "default": False,
    "description": "true for a daily file (found only by memory_search), "
    "false for a resident root file.",
}

MEMORY_WRITE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file": _FILE_PROPERTY,
        "content": {
            "type": "string",
            "minLength": 1,
            "description": f"The entry to append, at most {MAX_ENTRY_BYTES} UTF-8 bytes.",
        },
        "daily": _DAILY_PROPERTY,
    },
    "required": ["file", "content"],
    "additionalProperties": False,
}
MEMORY_READ_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"file": _FILE_PROPERTY, "daily": _DAILY_PROPERTY},
    "required": [],
    "additionalProperties": False,
}
MEMORY_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_QUERY_CHARS,
            "description": "Keywords separated by spaces; matching ignores the case of "
            "ASCII letters only.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}

MEMORY_WRITE_DESCRIPTION = (
    "Append an entry to one of your memory files; entries are never overwritten. A root "
    f"file (daily=false) is resident: it is shown in the Memory section of your prompt, "
    f"up to {PER_FILE_BUDGET} bytes per file and {SECTION_BUDGET} bytes in all, and a "
    "larger file is left out whole. A daily file (daily=true) is found only by "
    "memory_search. Your memory directory is fixed when the tool is mounted; no argument "
    "can choose another one."
)
MEMORY_READ_DESCRIPTION = (
    "Read one of your memory files (at most "
    f"{READ_LIMIT_BYTES} bytes), or list your root and daily files when file is omitted."
)
MEMORY_SEARCH_DESCRIPTION = (
    "Keyword search over your memory files, root and daily. Returns at most "
    f"{MAX_HITS} ranked lines as file, daily, line and text (cut at {MAX_LINE_CHARS} "
    "characters). A hit is a line, not an answer: read the file with memory_read for "
    "context."
)


# The tools as published: (name, description, input schema), in mount order.
TOOL_SPECS: tuple[tuple[str, str, dict[str, Any]], ...] = (
    ("memory_write", MEMORY_WRITE_DESCRIPTION, MEMORY_WRITE_SCHEMA),
    ("memory_read", MEMORY_READ_DESCRIPTION, MEMORY_READ_SCHEMA),
    ("memory_search", MEMORY_SEARCH_DESCRIPTION, MEMORY_SEARCH_SCHEMA),
)

# Every number of the memory dimension, for SPEC.md (what, value, unit).
LIMITS: tuple[tuple[str, int, str], ...] = (
    ("resident budget per root file (MEM-05)", PER_FILE_BUDGET, "UTF-8 bytes of the file"),
    ("resident budget for the section (MEM-05)", SECTION_BUDGET, "UTF-8 bytes of file contents"),
    ("file name length (MEM-09)", MAX_NAME_BYTES, "UTF-8 bytes"),
    ("one memory_write entry (MEM-07)", MAX_ENTRY_BYTES, "UTF-8 bytes"),
    ("memory_read content returned", READ_LIMIT_BYTES, "UTF-8 bytes"),
    ("memory_search read budget (MEM-06)", SEARCH_READ_BUDGET, "bytes"),
    ("memory_search hits (MEM-06)", MAX_HITS, "hits"),
    ("memory_search hit text (MEM-06)", MAX_LINE_CHARS, "Unicode code points"),
    ("memory_search query (MEM-06)", MAX_QUERY_CHARS, "Unicode code points"),
)


@dataclass(frozen=True)
class _Param:
    name: str
    kind: type
    required: bool


_WRITE_PARAMS = (_Param("file", str, True), _Param("content", str, True),
                 _Param("daily", bool, False))
_READ_PARAMS = (_Param("file", str, False), _Param("daily", bool, False))
_SEARCH_PARAMS = (_Param("query", str, True),)


def _parse(tool: str, params: tuple[_Param, ...], args: object) -> dict[str, Any] | ToolResult:
    """Typed arguments, or the structured error for the first problem found."""
    if not isinstance(args, Mapping):
        return failure(INVALID_ARGUMENTS, f"{tool} takes a JSON object of arguments",
                       {"tool": tool, "reason": "not_an_object"})
    allowed = [p.name for p in params]
    unknown = sorted(str(key) for key in args if key not in allowed)
    if unknown:
        return failure(
            UNKNOWN_ARGUMENT,
            f"{tool} has no argument {', '.join(map(repr, unknown))}; its memory directory "
            "is fixed and cannot be chosen by an argument",
            {"tool": tool, "unknown": unknown, "allowed": allowed},
        )
    values: dict[str, Any] = {}
    for param in params:
        if param.name not in args:
            if param.required:
                return failure(INVALID_ARGUMENTS, f"{tool} needs the argument {param.name!r}",
                               {"tool": tool, "argument": param.name, "reason": "missing"})
            continue
        value = args[param.name]
        if type(value) is not param.kind:  # exact: True is not a str, 1 is not a bool
            expected = "boolean" if param.kind is bool else "string"
            return failure(INVALID_ARGUMENTS, f"{tool}: {param.name!r} must be a {expected}",
                           {"tool": tool, "argument": param.name, "reason": "type",
                            "expected": expected})
        if isinstance(value, str) and not _encodable(value):
            return failure(INVALID_ARGUMENTS, f"{tool}: {param.name!r} is not valid Unicode",
                           {"tool": tool, "argument": param.name, "reason": "not_utf8"})
        values[param.name] = value
    return values


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _check_name(tool: str, name: str) -> ToolResult | None:
    problem = name_problem(name)
    if problem is None:
        return None
    return failure(INVALID_FILE_NAME, f"{tool}: {problem.message}",
                   {"tool": tool, "reason": problem.reason, "max_bytes": MAX_NAME_BYTES})


def _fs_failure(exc: MemoryFsError) -> ToolResult:
    terminal = True if exc.code == memory_fs.UNSAFE_DIRECTORY else None
    return failure(exc.code, exc.message, dict(exc.detail), terminal_for_attempt=terminal)


def _guarded(call: Callable[[object], ToolResult], args: object) -> ToolResult:
    """An unexpected OS error (permissions, a full disk) is a structured result too."""
    try:
        return call(args)
    except MemoryFsError as exc:
        return _fs_failure(exc)
    except OSError as exc:
        return failure(memory_fs.IO_ERROR, f"memory I/O failed: {exc.strerror}",
                       {"errno": exc.errno})


def _utf8_prefix(data: bytes, limit: int) -> bytes:
    """The longest prefix of at most ``limit`` bytes that does not split a character."""
    if len(data) <= limit:
        return data
    cut = limit
    while cut > 0 and cut > limit - 3 and (data[cut] & 0xC0) == 0x80:
        cut -= 1
    return data[:cut]


def _memory_files(dir_fd: int) -> tuple[list[str], list[memory_fs.DirEntry]]:
    """Valid-named regular ``.md`` files, and the valid-named entries of other kinds."""
    usable: list[str] = []
    unusable: list[memory_fs.DirEntry] = []
    for entry in memory_fs.list_entries(dir_fd):
        if not entry.name.endswith(NAME_SUFFIX) or name_problem(entry.name) is not None:
            continue
        if entry.kind is EntryKind.REGULAR:
            usable.append(entry.name)
        else:
            unusable.append(entry)
    return usable, unusable


@dataclass(frozen=True)
class MemoryToolbox:
    """The three memory tools, bound to one directory for the life of the mount."""

    workspace: Path
    directory: PurePosixPath  # workspace-relative; fixed here, never taken from a call
    serializer: AppendSerializer = PROCESS_SERIALIZER

    def write(self, args: object) -> ToolResult:
        return _guarded(self._write, args)

    def read(self, args: object) -> ToolResult:
        return _guarded(self._read, args)

    def search(self, args: object) -> ToolResult:
        return _guarded(self._search, args)

    def _write(self, args: object) -> ToolResult:
        parsed = _parse("memory_write", _WRITE_PARAMS, args)
        if isinstance(parsed, ToolResult):
            return parsed
        name, content, daily = parsed["file"], parsed["content"], parsed.get("daily", False)
        bad = _check_name("memory_write", name)
        if bad is not None:
            return bad
        if content.strip() == "" or "\x00" in content:
            return failure(INVALID_ARGUMENTS,
                           "memory_write: content must be non-blank text without NUL",
                           {"tool": "memory_write", "argument": "content",
                            "reason": "blank_or_nul"})
        entry = content.encode("utf-8")
        if not entry.endswith(b"\n"):
            entry += b"\n"
        # counted as stored (the added newline included), so every accepted entry fits
        # the resident budget of an empty root file (MEM-05)
        if len(entry) > MAX_ENTRY_BYTES:
            return failure(ENTRY_TOO_LARGE,
                           f"memory_write: the entry is {len(entry)} bytes as stored (its "
                           f"newline included); at most {MAX_ENTRY_BYTES} bytes per entry",
                           {"tool": "memory_write", "bytes": len(entry),
                            "max_bytes": MAX_ENTRY_BYTES})
        try:
            receipt = append_entry(self.serializer, self.workspace, self.directory,
                                   daily=daily, file_name=name, entry=entry)
        except MemoryFsError as exc:
            return _fs_failure(exc)
        return success({
            "file": name,
            "daily": daily,
            "appended_bytes": receipt.appended_bytes,
            "size": receipt.size_after,
            "within_resident_budget": (not daily) and receipt.size_after <= PER_FILE_BUDGET,
        })

    def _read(self, args: object) -> ToolResult:
        parsed = _parse("memory_read", _READ_PARAMS, args)
        if isinstance(parsed, ToolResult):
            return parsed
        name: str | None = parsed.get("file")
        daily: bool = parsed.get("daily", False)
        if name is not None:
            bad = _check_name("memory_read", name)
            if bad is not None:
                return bad
        try:
            if name is None:
                return success(self._listing())
            with memory_fs.open_directory(self.workspace, self.directory, create=False) as fd:
                if fd is None:
                    raise MemoryFsError(memory_fs.NOT_FOUND, f"no memory file named {name!r}",
                                        {"file": name})
                if daily:
                    with memory_fs.open_subdirectory(fd, DAILY_DIRECTORY, create=False) as sub:
                        if sub is None:
                            raise MemoryFsError(memory_fs.NOT_FOUND,
                                                f"no daily memory file named {name!r}",
                                                {"file": name})
                        data, size = memory_fs.read_prefix(sub, name, READ_LIMIT_BYTES + 1)
                else:
                    data, size = memory_fs.read_prefix(fd, name, READ_LIMIT_BYTES + 1)
        except MemoryFsError as exc:
            return _fs_failure(exc)
        shown = _utf8_prefix(data, READ_LIMIT_BYTES)
        return success({
            "file": name,
            "daily": daily,
            "content": shown.decode("utf-8", "replace"),
            "size": size,
            "truncated": len(shown) < len(data) or size > len(shown),
        })

    def _listing(self) -> dict[str, Any]:
        files: list[str] = []
        daily_files: list[str] = []
        with memory_fs.open_directory(self.workspace, self.directory, create=False) as fd:
            if fd is not None:
                files = _memory_files(fd)[0]
                with memory_fs.open_subdirectory(fd, DAILY_DIRECTORY, create=False) as sub:
                    if sub is not None:
                        daily_files = _memory_files(sub)[0]
        return {"files": files, "daily_files": daily_files}

    def _search(self, args: object) -> ToolResult:
        parsed = _parse("memory_search", _SEARCH_PARAMS, args)
        if isinstance(parsed, ToolResult):
            return parsed
        query: str = parsed["query"]
        terms = query_terms(query)
        if not terms or len(query) > MAX_QUERY_CHARS:
            return failure(INVALID_ARGUMENTS,
                           f"memory_search: the query needs 1 to {MAX_QUERY_CHARS} characters "
                           "with at least one keyword",
                           {"tool": "memory_search", "argument": "query", "reason": "query"})
        try:
            documents, skipped, bytes_read = self._documents()
        except MemoryFsError as exc:
            return _fs_failure(exc)
        outcome = search(documents, terms)
        return success({
            "terms": list(terms),
            "hits": [hit.to_json() for hit in outcome.hits],
            "total_matches": outcome.total_matches,
            "hits_truncated": outcome.hits_truncated,
            "files_searched": len(documents),
            "bytes_read": bytes_read,
            "read_truncated": any(s["reason"] == "read_budget" for s in skipped),
            "skipped": skipped,
        })

    def _documents(self) -> tuple[tuple[SearchDocument, ...], list[dict[str, Any]], int]:
        """Root files then daily files, each in name order, within the read budget: a
        file that would cross it is skipped whole and reported, later ones still count."""
        documents: list[SearchDocument] = []
        skipped: list[dict[str, Any]] = []
        budget = SEARCH_READ_BUDGET

        def scan(dir_fd: int, daily: bool) -> None:
            nonlocal budget
            usable, unusable = _memory_files(dir_fd)
            for entry in unusable:
                skipped.append({"file": entry.name, "daily": daily, "reason": "not_regular"})
            for name in usable:
                try:
                    data, _ = memory_fs.read_prefix(dir_fd, name, budget + 1)
                except MemoryFsError:
                    skipped.append({"file": name, "daily": daily, "reason": "not_regular"})
                    continue
                if len(data) > budget:
                    skipped.append({"file": name, "daily": daily, "reason": "read_budget"})
                    continue
                budget -= len(data)
                documents.append(SearchDocument(name, daily, data.decode("utf-8", "replace")))

        with memory_fs.open_directory(self.workspace, self.directory, create=False) as fd:
            if fd is not None:
                scan(fd, False)
                with memory_fs.open_subdirectory(fd, DAILY_DIRECTORY, create=False) as sub:
                    if sub is not None:
                        scan(sub, True)
        return tuple(documents), skipped, SEARCH_READ_BUDGET - budget


@dataclass(frozen=True)
class MemoryTool:
    """A mounted tool: what the model sees (name, description, schema) and the bound call."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    call: Callable[[object], ToolResult]


TOOL_NAMES = tuple(name for name, _, _ in TOOL_SPECS)


def mount_tools(toolbox: MemoryToolbox) -> tuple[MemoryTool, ...]:
    """The three tools in fixed order, each a bound method of the same toolbox."""
    return (
        MemoryTool("memory_write", MEMORY_WRITE_DESCRIPTION, MEMORY_WRITE_SCHEMA,
                   toolbox.write),
        MemoryTool("memory_read", MEMORY_READ_DESCRIPTION, MEMORY_READ_SCHEMA, toolbox.read),
        MemoryTool("memory_search", MEMORY_SEARCH_DESCRIPTION, MEMORY_SEARCH_SCHEMA,
                   toolbox.search),
    )
