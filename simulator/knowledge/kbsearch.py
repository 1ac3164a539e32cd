"""kb_search: a bounded, deterministic line scan over the knowledge sources (KB-03..KB-06).

The engine is pure over (path, bytes): it plans which bytes are read under the budget,
scans them, ranks the hit lines and cuts them to the caps. Only ``run_kb_search`` and the
reader touch the disk, and they read nothing the plan did not allow.

Speed comes from never decoding what is not shown: matching runs on the raw bytes with
ASCII lower-casing (``bytes.lower`` + ``bytes.find``, both C loops), each line containing a
hit is visited once, and only the (at most 50) lines that end up in the result are decoded.
Memory stays near two copies of the largest file: the bytes and their lowered copy, which
is freed before any hit line is decoded.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from capconf.simulator.core.envelope import ToolResult, failure, success
from capconf.simulator.core.names import ascii_fold, split_terms
from capconf.simulator.definition.declarations import KnowledgeDeclaration
from capconf.simulator.files import FileAccessError, Reason, Root, read_fd
from capconf.simulator.knowledge.globs import check_glob, normalized_pattern
from capconf.simulator.knowledge.sources import KnowledgeResolution, KnowledgeSource
from capconf.simulator.knowledge.walk import Skipped, SkipReason, SourceFile, walk_source
from capconf.simulator.tools.catalog import ToolSpec

BYTE_BUDGET = 8_388_608  # KB-04
HIT_CAP = 50  # KB-05
LINE_CHAR_CAP = 400  # KB-06, in Unicode code points of the decoded line, markers included
ELLIPSIS = "\u2026"  # the truncation marker, one code point
LEAD_CHARS = 100  # code points kept before the first match when a long line is windowed
MAX_TERMS = 16
MAX_TERM_BYTES = 128
HIT_NOTE = ("A hit is a line, not an answer: open the file with read at path:line and "
            "read its context before relying on it.")

KB_SEARCH_DESCRIPTION = (
    "Search the declared knowledge sources for lines containing any of the query's "
    "whitespace-separated terms (substring match, ASCII letters case-insensitive). "
    "A hit is a line, not an answer: open the file with read at path:line and read its "
    "context before relying on it. Hits are ranked by the number of distinct terms in the "
    "line, then total occurrences, then path and line number. At most 50 hits, at most "
    "400 characters per hit line, and at most 8,388,608 bytes read per search (files in "
    "path order); the result says when a limit cut the search."
)
KB_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "minLength": 1,
            "description": "Whitespace-separated terms; a line matches if it contains any.",
        },
        "sources": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Names of knowledge sources to search; default: all.",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}
KB_SEARCH_TOOL = ToolSpec("kb_search", KB_SEARCH_DESCRIPTION, KB_SEARCH_SCHEMA)

# Tool error codes (ToolResult.error_code), with the requirement each serves.
TOOL_ERROR_CODES: tuple[tuple[str, str, str], ...] = (
    ("KB-BAD-ARGUMENTS", "KB-03", "arguments do not match the input schema"),
    ("KB-BAD-QUERY", "KB-03", "no term, too many terms, or a term too long"),
    ("KB-UNKNOWN-SOURCE", "KB-02", "`sources` names a source that is not declared"),
)


class KbQueryError(ValueError):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_query_terms(query: str | Sequence[str]) -> tuple[bytes, ...]:
    """Split on runs of the Unicode White_Space set (``split_terms``), lower-case ASCII
    letters only, drop repeats (first occurrence keeps its place). ASCII-only folding
    keeps matching on raw bytes, identical in every language and Unicode version, and
    equal to ``grep -i`` in the C locale."""
    text = query if isinstance(query, str) else " ".join(query)
    terms: list[bytes] = []
    for word in split_terms(text):
        term = word.encode("utf-8", "surrogatepass").lower()
        if len(term) > MAX_TERM_BYTES:
            raise KbQueryError("KB-BAD-QUERY",
                               f"term {word[:40]!r}... is longer than {MAX_TERM_BYTES} bytes")
        if term not in terms:
            terms.append(term)
    if not terms:
        raise KbQueryError("KB-BAD-QUERY", "the query has no term; give at least one word")
    if len(terms) > MAX_TERMS:
        raise KbQueryError("KB-BAD-QUERY",
                           f"the query has {len(terms)} distinct terms; at most {MAX_TERMS}")
    return tuple(terms)


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Hit:
    path: str
    line: int  # 1-based; lines end at "\n"
    text: str  # the line, CR stripped, decoded (U+FFFD for bad bytes), windowed to 400
    text_truncated: bool
    terms_matched: int
    occurrences: int
    source: str

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "text": self.text,
            "text_truncated": self.text_truncated,
            "terms_matched": self.terms_matched,
            "occurrences": self.occurrences,
            "source": self.source,
        }


@dataclass(frozen=True)
class CutFile:
    path: str
    bytes_read: int
    size: int


@dataclass(frozen=True)
class RejectedSource:
    name: str
    glob: str
    reason: str


@dataclass(frozen=True)
class KbSearchResult:
    terms: tuple[str, ...]
    hits: tuple[Hit, ...]
    matching_lines: int
    hit_cap_reached: bool
    bytes_read: int
    byte_budget_reached: bool
    cut_file: CutFile | None
    files_searched: int
    files_not_read: int
    skipped: tuple[Skipped, ...] = ()
    # Sources whose glob failed the KB-07 rules when this search ran. Through the tool this
    # is always empty (a source failing the rules is dropped when the definition is
    # compiled, and the rules are a pure function of the glob), so it is not part of the
    # tool result; `run_kb_search` callers that pass unchecked declarations see it.
    rejected_sources: tuple[RejectedSource, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "terms": list(self.terms),
            "hits": [h.to_json() for h in self.hits],
            "matching_lines": self.matching_lines,
            "hit_cap": HIT_CAP,
            "hit_cap_reached": self.hit_cap_reached,
            "byte_budget": BYTE_BUDGET,
            "bytes_read": self.bytes_read,
            "byte_budget_reached": self.byte_budget_reached,
            "cut_file": None if self.cut_file is None else {
                "path": self.cut_file.path,
                "bytes_read": self.cut_file.bytes_read,
                "size": self.cut_file.size,
            },
            "files_searched": self.files_searched,
            "files_not_read": self.files_not_read,
            "skipped": [s.to_json() for s in self.skipped],
            "note": HIT_NOTE,
        }

    def to_text(self) -> str:
        """The plain-text page (CLI and goldens): one `path:line: text` per hit, then one
        line per limit that cut the search, so a cut is never silent."""
        lines = [f"{len(self.hits)} hit(s) for {' '.join(self.terms)} "
                 f"({self.matching_lines} matching line(s), {self.files_searched} file(s), "
                 f"{self.bytes_read} bytes read). {HIT_NOTE}"]
        lines += [f"{h.path}:{h.line}: {h.text}" for h in self.hits]
        if self.hit_cap_reached:
            lines.append(f"[cut: hit cap of {HIT_CAP} reached; {self.matching_lines} lines "
                         "matched. Use more specific terms.]")
        if self.byte_budget_reached:
            where = ""
            if self.cut_file is not None:
                where = (f" inside {self.cut_file.path} after {self.cut_file.bytes_read} "
                         f"of {self.cut_file.size} bytes")
            lines.append(f"[cut: byte budget of {BYTE_BUDGET} bytes reached{where}; "
                         f"{self.files_not_read} later file(s) not read. Narrow the "
                         "sources.]")
        lines += [f"[skipped: {s.path} ({s.reason})]" for s in self.skipped]
        lines += [f"[rejected source: {r.name} {r.glob!r} ({r.reason})]"
                  for r in self.rejected_sources]
        return "\n".join(lines)


# --------------------------------------------------------------------------- the engine


@dataclass(frozen=True)
class Entry:
    """A file to search: its workspace-relative path and the source that matched it."""

    path: str
    source: str


# load(entry, limit) -> (at most `limit` bytes from the file's start, the file's size),
# or why the file was skipped. size_of(entry) -> the size of a file the budget left
# unread (metadata only: it is never opened).
Loader = Callable[[Entry, int], "tuple[bytes, int] | SkipReason"]
Sizer = Callable[[Entry], int]

# A heap item: (terms_matched, occurrences, -file_index, -line_start, line_end, first).
# Files are searched in path order and lines in offset order, so (-file_index,
# -line_start) is "later arrival is worse": the heap root is the worst kept hit, and a
# new line enters a full heap only with a strictly better (terms, occurrences).
_Item = tuple[int, int, int, int, int, int]


def display_line(line: bytes | memoryview, match_at: int) -> tuple[str, bool]:
    """KB-06: the hit text is the decoded line (UTF-8, each maximal invalid subpart -> one
    U+FFFD, as WHATWG TextDecoder and Rust from_utf8_lossy do). Longer than 400 code
    points, it becomes a 400-code-point window including `…` markers: it starts 100 code
    points before the first match (at the line start if that is earlier, or so that it
    ends at the line end), so the shown text always contains a matched term."""
    if len(line) <= LINE_CHAR_CAP:
        return str(line, "utf-8", "replace"), False
    total = len(str(line, "utf-8", "replace"))
    if total <= LINE_CHAR_CAP:
        return str(line, "utf-8", "replace"), False
    m = len(str(line[:match_at], "utf-8", "replace"))
    start = m - LEAD_CHARS
    whole = str(line, "utf-8", "replace")
    if start <= 0:
        return whole[:LINE_CHAR_CAP - 1] + ELLIPSIS, True
    if total - start <= LINE_CHAR_CAP - 1:
        return ELLIPSIS + whole[total - (LINE_CHAR_CAP - 1):], True
    return ELLIPSIS + whole[start:start + LINE_CHAR_CAP - 2] + ELLIPSIS, True


def _offer(heap: list[_Item], item: _Item) -> None:
    if len(heap) < HIT_CAP:
        heapq.heappush(heap, item)
    else:
        heapq.heapreplace(heap, item)


def _scan_one(low: bytes, term: bytes, file_index: int, heap: list[_Item]) -> int:
    """The single-term scan (the common case), kept free of per-line allocations."""
    find, rfind, count = low.find, low.rfind, low.count
    n = len(low)
    matched = 0
    full = len(heap) >= HIT_CAP
    worst_tm, worst_occ = (heap[0][0], heap[0][1]) if full else (0, 0)
    pos = find(term)
    while pos >= 0:
        end = find(b"\n", pos)
        if end < 0:
            end = n
        matched += 1
        occ = count(term, pos, end)
        if not full or worst_tm < 1 or (worst_tm == 1 and occ > worst_occ):
            _offer(heap, (1, occ, -file_index, -(rfind(b"\n", 0, pos) + 1), end, pos))
            full = len(heap) >= HIT_CAP
            if full:
                worst_tm, worst_occ = heap[0][0], heap[0][1]
        pos = find(term, end + 1)
    return matched


def _scan_many(low: bytes, terms: Sequence[bytes], file_index: int, heap: list[_Item]) -> int:
    """Several terms: each line holding a match is visited once, the next line being the
    one with the earliest pending match of any term."""
    find, rfind, count = low.find, low.rfind, low.count
    n = len(low)
    matched = 0
    pending = [find(t) for t in terms]
    indexed = list(enumerate(terms))
    while True:
        live = [p for p in pending if p >= 0]
        if not live:
            return matched
        pos = min(live)
        end = find(b"\n", pos)
        if end < 0:
            end = n
        tm = occ = 0
        for i, term in indexed:
            p = pending[i]
            if 0 <= p < end:
                tm += 1
                occ += count(term, p, end)
                pending[i] = find(term, end + 1)
        matched += 1
        if len(heap) < HIT_CAP or (tm, occ) > (heap[0][0], heap[0][1]):
            _offer(heap, (tm, occ, -file_index, -(rfind(b"\n", 0, pos) + 1), end, pos))


def _decode_hits(data: bytes, file_index: int, heap: list[_Item],
                 texts: dict[tuple[int, int], tuple[int, str, bool]]) -> None:
    """Line numbers and display text for this file's lines still in the heap: one pass
    counting newlines up to each kept line, decoding only those lines."""
    mine = sorted(-item[3] for item in heap
                  if item[2] == -file_index and (file_index, -item[3]) not in texts)
    if not mine:
        return
    ends = {-item[3]: (item[4], item[5]) for item in heap if item[2] == -file_index}
    view = memoryview(data)
    line_no, counted = 1, 0
    for start in mine:
        line_no += data.count(b"\n", counted, start)
        counted = start
        end, first = ends[start]
        if end > start and data[end - 1] == 0x0D:  # CRLF: the CR is not part of the line
            end -= 1
        text, cut = display_line(view[start:end], first - start)
        texts[(file_index, start)] = (line_no, text, cut)
    view.release()


def execute(entries: Sequence[Entry], load: Loader, size_of: Sizer,
            terms: Sequence[bytes]) -> KbSearchResult:
    """KB-04..06 over any file access. Files in path-byte order; each is read whole while
    the budget lasts; the file crossing the budget is read up to it (that prefix is
    scanned, a partial last line included) and reported as ``cut_file``; every later
    non-empty file is not opened and counted in ``files_not_read``."""
    ordered: dict[str, Entry] = {}
    for entry in entries:
        ordered.setdefault(entry.path, entry)
    files = [ordered[p] for p in sorted(ordered, key=lambda p: p.encode("utf-8"))]
    heap: list[_Item] = []
    texts: dict[tuple[int, int], tuple[int, str, bool]] = {}
    remaining = BYTE_BUDGET
    bytes_read = files_searched = files_not_read = matching = 0
    cut_file: CutFile | None = None
    skipped: list[Skipped] = []
    for index, entry in enumerate(files):
        if remaining == 0:
            files_not_read += 1 if size_of(entry) > 0 else 0
            continue
        got = load(entry, remaining)
        if isinstance(got, SkipReason):
            skipped.append(Skipped(entry.path, got))
            continue
        data, size = got
        data = data[:remaining]
        if size > remaining:
            cut_file = CutFile(entry.path, len(data), size)
        remaining -= len(data)
        bytes_read += len(data)
        files_searched += 1
        low = data.lower()
        if len(terms) == 1:
            found = _scan_one(low, terms[0], index, heap)
        else:
            found = _scan_many(low, terms, index, heap)
        del low
        if found:
            matching += found
            _decode_hits(data, index, heap, texts)
        del data
    hits = []
    for tm, occ, neg_index, neg_start, _end, _first in sorted(
            heap, key=lambda it: (-it[0], -it[1], -it[2], -it[3])):
        line_no, text, cut = texts[(-neg_index, -neg_start)]
        entry = files[-neg_index]
        hits.append(Hit(entry.path, line_no, text, cut, tm, occ, entry.source))
    return KbSearchResult(
        terms=tuple(t.decode("utf-8", "replace") for t in terms),
        hits=tuple(hits),
        matching_lines=matching,
        hit_cap_reached=matching > HIT_CAP,
        bytes_read=bytes_read,
        byte_budget_reached=cut_file is not None or files_not_read > 0,
        cut_file=cut_file,
        files_searched=files_searched,
        files_not_read=files_not_read,
        skipped=tuple(sorted(skipped, key=lambda s: (s.path.encode("utf-8"), str(s.reason)))),
    )


def kb_search_bytes(files: Mapping[str, bytes] | Iterable[tuple[str, bytes]],
                    query: str | Sequence[str], source: str = "kb") -> KbSearchResult:
    """The pure engine over in-memory files (path -> bytes): the same budget, scan and
    ranking as a search on disk. Input order never matters; paths are sorted."""
    items = list(files.items()) if isinstance(files, Mapping) else list(files)
    contents: dict[str, bytes] = {}
    for path, data in items:
        contents.setdefault(path, data)
    return execute([Entry(p, source) for p in contents],
                   lambda e, limit: (contents[e.path][:limit], len(contents[e.path])),
                   lambda e: len(contents[e.path]), parse_query_terms(query))


# --------------------------------------------------------------------------- the disk edge


def read_file(root: Root, file: SourceFile, limit: int) -> tuple[bytes, int] | SkipReason:
    """Open the walked file's link-free path component by component from the root's
    descriptor with no link followed (a directory or file swapped for a link since the
    walk is refused, wherever the link points), refuse it unless the descriptor is a
    regular file, then read at most ``limit`` bytes through that descriptor."""
    try:
        opened = root.open_file(file.real)
    except FileAccessError as err:
        return SkipReason.UNREADABLE if err.reason is Reason.UNREADABLE else SkipReason.CHANGED
    try:
        want = min(opened.stat.st_size, limit)
        return read_fd(opened.fd, want), opened.stat.st_size
    except OSError:
        return SkipReason.UNREADABLE
    finally:
        os.close(opened.fd)


def _size_on_disk(root: Root, file: SourceFile) -> int:
    """The size of a file the budget left unread: metadata only, never opened, and
    never through a link."""
    parent, _sep, name = file.real.rpartition("/")
    try:
        with root.open_dir(parent) as d:
            return os.stat(name, dir_fd=d.fd, follow_symlinks=False).st_size
    except (OSError, FileAccessError):
        return 0


SourceLike = KnowledgeSource | KnowledgeDeclaration


def run_kb_search(workspace: Path, sources: Sequence[SourceLike],
                  query_terms: str | Sequence[str]) -> KbSearchResult:
    """The reference kb_search on real files (the tool and `capconf kb-search` both call
    it). Each source's glob is checked again here (KB-07): a rejected source is reported
    in ``rejected_sources`` and never walked. A file matched by several sources counts
    once, under the first source in declaration order. Raises KbQueryError for a bad
    query."""
    terms = parse_query_terms(query_terms)
    with Root.open(workspace) as root:
        return _run(root, sources, terms)


def _run(root: Root, sources: Sequence[SourceLike], terms: tuple[bytes, ...]
         ) -> KbSearchResult:
    rejected: list[RejectedSource] = []
    chosen: dict[str, tuple[Entry, SourceFile]] = {}
    skipped: dict[tuple[str, str], Skipped] = {}
    for source in sources:
        rejection = check_glob(source.glob)
        if rejection is not None:
            rejected.append(RejectedSource(source.name, source.glob, str(rejection.reason)))
            continue
        walk = walk_source(root, normalized_pattern(source.glob))
        for f in walk.files:
            chosen.setdefault(f.path, (Entry(f.path, source.name), f))
        for s in walk.skipped:
            skipped.setdefault((s.path, str(s.reason)), s)
    result = execute([entry for entry, _ in chosen.values()],
                     lambda e, limit: read_file(root, chosen[e.path][1], limit),
                     lambda e: _size_on_disk(root, chosen[e.path][1]), terms)
    for s in result.skipped:
        skipped.setdefault((s.path, str(s.reason)), s)
    ordered = tuple(skipped[k] for k in sorted(skipped, key=lambda k: (k[0].encode("utf-8"),
                                                                          k[1])))
    return replace(result, skipped=ordered, rejected_sources=tuple(rejected))


def kb_search_tools(resolution: KnowledgeResolution | None) -> tuple[ToolSpec, ...]:
    """kb_search is mounted exactly when knowledge is declared (KB-02)."""
    return () if resolution is None else (KB_SEARCH_TOOL,)


def call_kb_search(resolution: KnowledgeResolution, workspace: Path,
                   args: object) -> ToolResult:
    """The kb_search tool: validate the arguments, select sources, run the search."""
    if not isinstance(args, dict):
        return failure("KB-BAD-ARGUMENTS", "arguments must be an object",
                       {"schema": KB_SEARCH_SCHEMA}, terminal_for_attempt=False)
    extra = sorted(set(args) - set(KB_SEARCH_SCHEMA["properties"]))
    if extra:
        return failure("KB-BAD-ARGUMENTS", f"unknown argument(s): {', '.join(extra)}",
                       {"unknown": extra, "allowed": ["query", "sources"]})
    query = args.get("query")
    if not isinstance(query, str):
        return failure("KB-BAD-ARGUMENTS", "`query` must be a string", {"field": "query"})
    wanted = args.get("sources")
    names = [s.name for s in resolution.sources]
    if wanted is not None:
        if not isinstance(wanted, list) or not all(isinstance(w, str) for w in wanted):
            return failure("KB-BAD-ARGUMENTS", "`sources` must be a list of source names",
                           {"field": "sources"})
        folded = {ascii_fold(n) for n in names}
        unknown = [w for w in wanted if ascii_fold(w) not in folded]
        if unknown:
            return failure("KB-UNKNOWN-SOURCE",
                           f"not a declared knowledge source: {', '.join(unknown)}",
                           {"unknown": unknown, "available": names})
        keys = {ascii_fold(w) for w in wanted}
        selected = [s for s in resolution.sources if ascii_fold(s.name) in keys]
    else:
        selected = list(resolution.sources)
    try:
        result = run_kb_search(workspace, selected, query)
    except KbQueryError as err:
        return failure(err.code, err.message, {"field": "query"})
    return success(result.to_json())
