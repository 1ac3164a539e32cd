"""Load a definition's text into located values, refusing what would hurt.

PyYAML's node graph keeps marks, so every key and scalar can be reported at its line and
column (DEF-03). Three hostile shapes are refused before anything is built: aliases
(the "billion laughs" bomb expands on traversal, and definitions never need them), nesting
deeper than ``MAX_DEPTH`` (PyYAML recurses per level), and documents over
``MAX_SOURCE_BYTES``. Scalar names are taken from their source text, not YAML 1.1
implicit typing, so a tool called ``on`` or ``yes`` stays a string.

Reading goes through libyaml when PyYAML has it (``_load_fast``): the reference loads
definitions of up to a mebibyte thousands of times a run, and PyYAML's Python scanner
was two fifths of the whole suite's CPU. What libyaml refuses, and what it would read
differently, is left to the Python parser, so the result never depends on the machine.
"""

from __future__ import annotations

import bisect
import math
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from capconf.simulator.core.diagnostics import Location
from capconf.simulator.definition.yaml12 import core_value

MAX_SOURCE_BYTES = 1_048_576
MAX_DEPTH = 32
MAX_NODES = 20_000


@dataclass(frozen=True)
class Mark:
    line: int
    column: int


@dataclass(frozen=True)
class LScalar:
    value: Any
    text: str
    tag: str
    mark: Mark
    style: str | None = None
    # Character offsets of the value in the YAML text given to ``load_yaml`` (the front
    # matter, for Markdown): what a form edit splices (simulator/editor). -1: unknown.
    start: int = -1
    end: int = -1
    # the scalar as written (quotes, escapes, block indentation included), so positions
    # inside it (comma-separated names) can be found in the source; "" when unknown
    raw: str = ""


@dataclass(frozen=True)
class LSeq:
    items: tuple[LNode, ...]
    mark: Mark
    start: int = -1
    end: int = -1
    flow: bool = False


@dataclass(frozen=True)
class LMap:
    items: tuple[tuple[LScalar, LNode], ...]
    mark: Mark
    duplicates: tuple[LScalar, ...] = field(default=())
    start: int = -1
    end: int = -1
    flow: bool = False


LNode = LScalar | LSeq | LMap


class SourceError(Exception):
    """The text cannot be read as a definition at all. ``kind`` is a diagnostic code
    suffix chosen by the caller's table."""

    def __init__(self, kind: str, message: str, line: int | None, column: int | None,
                 problem: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.problem = problem or message
        self.line = line
        self.column = column


def decode_source(data: bytes) -> str:
    """Strict UTF-8 (a leading BOM is dropped); CRLF and lone CR become LF so the prompt
    bytes never depend on the editor's line endings."""
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(
            "TOO-LARGE",
            f"the definition is larger than the {MAX_SOURCE_BYTES:,}-byte limit. "
            "Move long reference material into a knowledge source or a skill.",
            1,
            1,
        )
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = data[: exc.start]
        line = before.count(b"\n") + 1
        column = len(before.rsplit(b"\n", 1)[-1].decode("utf-8", "replace")) + 1
        raise SourceError(
            "ENCODING",
            f"byte 0x{data[exc.start]:02x} at offset {exc.start} is not valid UTF-8. "
            "Save the file as UTF-8.",
            line,
            column,
        ) from None
    return normalize_newlines(text)


def normalize_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_text_size(text: str, what: str = "definition") -> None:
    # cheap bound first: a str of n code points is at least n and at most 4n bytes
    size = len(text) if len(text) > MAX_SOURCE_BYTES else len(
        text.encode("utf-8", "surrogatepass"))
    if size > MAX_SOURCE_BYTES:
        raise SourceError(
            "TOO-LARGE",
            f"the {what} is larger than the {MAX_SOURCE_BYTES:,}-byte limit. "
            "Move long reference material into a knowledge source or a skill.",
            1,
            1,
        )


def _mark(m: Any, line_offset: int) -> Mark:
    return Mark(m.line + 1 + line_offset, m.column + 1)


# YAML's printable set (YAML 1.1 section 5.1, which PyYAML enforces): everything else,
# including lone surrogates, BEL, NUL and the noncharacters U+FFFE/U+FFFF, makes the
# reader fail before any token. Checked here so the failure is a located diagnostic.
_NOT_PRINTABLE = re.compile(
    "[^\x09\x0A\x0D\x20-\x7E\x85\xA0-\uD7FF\uE000-\uFFFD\U00010000-\U0010FFFF]")


def _check_characters(text: str, line_offset: int) -> None:
    bad = _NOT_PRINTABLE.search(text)
    if bad is None:
        return
    before = text[: bad.start()]
    line = before.count("\n") + 1 + line_offset
    column = bad.start() - (before.rfind("\n") + 1) + 1
    code = f"U+{ord(bad.group()):04X}"
    raise SourceError(
        "YAML-CHARACTER",
        f"invalid YAML: the character {code} is not allowed in YAML (line {line}, column "
        f"{column}). Remove it, or write it as an escape such as \"\\x07\" inside a "
        "double-quoted string.",
        line,
        column,
        problem=f"character {code} is not allowed (line {line}, column {column})",
    )


def _too_complex(line: int | None, column: int | None) -> SourceError:
    return SourceError(
        "YAML-TOO-COMPLEX",
        f"the document has more than {MAX_NODES:,} YAML nodes. "
        "A definition is a short document; split the data out.",
        line,
        column,
    )


_NODE_EVENTS = (yaml.ScalarEvent, yaml.SequenceStartEvent, yaml.MappingStartEvent)


def _prescan(text: str, line_offset: int, loader: type[Any] = yaml.SafeLoader,
             lines: _LineStarts | None = None) -> int:
    """Walk the event stream once: aliases, excessive depth and too many nodes are
    refused here, before a node graph exists. Returns the number of nodes: scalars,
    sequences and mappings (mapping keys included), not parser events. ``lines``: marks
    from the events' offsets (libyaml's own marks part from PyYAML's at the text's end)."""
    _check_characters(text, line_offset)

    def at(m: Any) -> Mark:
        return _mark(lines.mark(m.index) if lines is not None else m, line_offset)

    depth = 0
    count = 0
    try:
        for event in yaml.parse(text, Loader=loader):
            if isinstance(event, _NODE_EVENTS):
                count += 1
                if count > MAX_NODES:
                    m = at(event.start_mark)
                    raise _too_complex(m.line, m.column)
            if isinstance(event, yaml.AliasEvent):
                m = at(event.start_mark)
                raise SourceError(
                    "YAML-ALIAS",
                    f"YAML alias *{event.anchor} is not allowed in a definition. "
                    "Write the value out in full.",
                    m.line,
                    m.column,
                )
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    m = at(event.start_mark)
                    raise SourceError(
                        "YAML-TOO-DEEP",
                        f"nesting deeper than {MAX_DEPTH} levels. "
                        "A definition needs at most three.",
                        m.line,
                        m.column,
                    )
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, line_offset) from None
    except yaml.YAMLError as exc:  # a reader error the character check did not foresee
        raise SourceError("YAML-SYNTAX", f"invalid YAML: {exc}", None, None) from None
    return count


def _syntax_error(exc: yaml.MarkedYAMLError, line_offset: int) -> SourceError:
    mark = exc.problem_mark or exc.context_mark
    problem = exc.problem or exc.context or "invalid YAML"
    if mark is None:
        return SourceError("YAML-SYNTAX", f"invalid YAML: {problem}. Fix the syntax.", None, None)
    m = _mark(mark, line_offset)
    return SourceError(
        "YAML-SYNTAX",
        f"invalid YAML: {problem} (line {m.line}, column {m.column}). "
        "Quote values that contain ': ' or start with a special character.",
        m.line,
        m.column,
        problem=f"{problem} (line {m.line}, column {m.column})",
    )


_CONSTRUCTOR = yaml.SafeLoader("")
_STR = "tag:yaml.org,2002:str"


def _convert(node: yaml.Node, text: str, line_offset: int,
             lines: _LineStarts | None = None) -> LNode:
    """``lines``: marks from the nodes' offsets (libyaml's, see ``_LineStarts``)."""
    start_mark = node.start_mark if lines is None else lines.mark(node.start_mark.index)
    mark = _mark(start_mark, line_offset)
    if isinstance(node, yaml.ScalarNode):
        if node.tag == _STR:
            value = node.value  # what SafeConstructor's str constructor returns
        else:
            try:
                value = _CONSTRUCTOR.construct_object(node, deep=True)
            except (yaml.YAMLError, ValueError, OverflowError):
                value = node.value
        if not isinstance(value, str | int | float | bool | type(None)):
            value = node.value  # timestamps, binary: keep the source text
        smark, emark = node.start_mark, node.end_mark
        return LScalar(value=value, text=node.value, tag=node.tag, mark=mark,
                       style=node.style or None, start=smark.index, end=emark.index,
                       raw=text[smark.index:emark.index])
    start, end = node.start_mark.index, node.end_mark.index
    assert isinstance(node, yaml.CollectionNode)
    flow = bool(node.flow_style)
    if isinstance(node, yaml.SequenceNode):
        items = tuple(_convert(n, text, line_offset, lines) for n in node.value)
        return LSeq(items=items, mark=mark, start=start, end=end, flow=flow)
    assert isinstance(node, yaml.MappingNode)
    seen: set[str] = set()
    pairs: list[tuple[LScalar, LNode]] = []
    dups: list[LScalar] = []
    for key_node, value_node in node.value:
        key = _convert(key_node, text, line_offset, lines)
        if not isinstance(key, LScalar):
            raise SourceError(
                "YAML-COMPLEX-KEY",
                "a mapping key must be a plain scalar. Use a simple name as the key.",
                key.mark.line,
                key.mark.column,
            )
        if key.text in seen:
            dups.append(key)
            continue
        seen.add(key.text)
        pairs.append((key, _convert(value_node, text, line_offset, lines)))
    return LMap(items=tuple(pairs), mark=mark, duplicates=tuple(dups), start=start, end=end,
                flow=flow)


def load_yaml(text: str, line_offset: int = 0) -> LNode | None:
    """Parse one YAML document into located nodes; None for an empty document."""
    return load_yaml_counted(text, line_offset)[0]


def load_yaml_counted(text: str, line_offset: int = 0) -> tuple[LNode | None, int]:
    """``load_yaml`` plus the document's node count, for callers that count further
    entries (comma-separated names) against the same ``MAX_NODES`` budget."""
    fast = _load_fast(text, line_offset)
    if fast is not None:
        return fast
    count = _prescan(text, line_offset)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        raise _syntax_error(exc, line_offset) from None
    except yaml.YAMLError as exc:  # e.g. ComposerError without marks
        raise SourceError("YAML-SYNTAX", f"invalid YAML: {exc}", None, None) from None
    if node is None:
        return None, count
    return _convert(node, text, line_offset), count


# libyaml, when PyYAML was built with it: the same parser (PyYAML's Python one is its
# port), ~30 times faster on a large document.
FAST_LOADER: type[Any] | None = getattr(yaml, "CSafeLoader", None)


def _fast_prescan(text: str, line_offset: int) -> tuple[int, _LineStarts] | None:
    """``_prescan`` through libyaml (the node count, and the offsets' lines for marks),
    or None: the caller then takes the Python parser. The prescan's own refusals (an
    alias, too deep, too many nodes) are raised from here, at the event they name, which
    both parsers place alike; a syntax error, and a text where the two parsers part
    (``_PYTHON_ONLY``), are left to the Python parser, so a diagnostic's wording and
    location never depend on which parser this machine has."""
    if FAST_LOADER is None or _PYTHON_ONLY.search(text):
        return None
    lines = _LineStarts(text)
    try:
        return _prescan(text, line_offset, FAST_LOADER, lines), lines
    except SourceError as exc:
        if exc.kind in OWN_REFUSALS:
            raise
        return None


def _load_fast(text: str, line_offset: int) -> tuple[LNode | None, int] | None:
    """``load_yaml_counted`` through libyaml, or None (see ``_fast_prescan``). The depth
    is checked before composing: libyaml's composer recurses in C, unguarded.
    ``tests/definition/test_yaml_fast_path.py`` holds the two parsers to the same result."""
    scanned = _fast_prescan(text, line_offset)
    if scanned is None:
        return None
    count, lines = scanned
    assert FAST_LOADER is not None  # _fast_prescan read the text with it
    try:
        node = yaml.compose(text, Loader=FAST_LOADER)
    except yaml.YAMLError:  # e.g. a second document: the Python parser words it
        return None
    if node is None:
        return None, count
    return _convert(node, text, line_offset, lines), count


class _LineStarts:
    """Line and column of a character offset, as PyYAML's reader counts them (libyaml
    places an empty scalar at the end of the text on the line after it)."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def mark(self, index: int) -> _Offset:
        line = bisect.bisect_right(self.starts, index) - 1
        return _Offset(index, line, index - self.starts[line])


@dataclass(frozen=True)
class _Offset:
    """A mark as PyYAML's reader would have placed it (0-based line and column)."""

    index: int
    line: int
    column: int


# Where the two parsers part: libyaml accepts tabs PyYAML refuses, drops a BOM inside the
# text (so every index after it differs), breaks lines only at LF and CR (PyYAML also at
# U+0085, U+2028, U+2029), reads a bare ``!`` tag differently and accepts a comment
# glued to a block scalar's header (``|-#``). Such a text takes the Python parser.
_PYTHON_ONLY = re.compile(r"[\t\r\ufeff\x85\u2028\u2029]|(?:^|[\s\[\]{},])!|[|>][-+0-9]*#")

# The prescan's own refusals: the event they name is the same in both parsers' streams.
OWN_REFUSALS = frozenset({"YAML-ALIAS", "YAML-TOO-DEEP", "YAML-TOO-COMPLEX"})


def safe_load_checked(text: str) -> Any:
    """A YAML document that is not a definition, with a definition's limits (``_prescan``)
    checked before anything is built, then ``yaml.safe_load``'s value: through libyaml
    where ``_fast_prescan`` took the text (both parsers give the same events there, and
    the constructor is the same Python one), through the Python parser otherwise."""
    loader = FAST_LOADER
    if loader is not None and _fast_prescan(text, 0) is not None:
        return yaml.load(text, Loader=loader)
    _prescan(text, 0)
    return yaml.safe_load(text)


def check_entry_budget(nodes: int, scalars: list[LScalar]) -> None:
    """Entries of a comma-separated name string are nodes too (SPEC DEF-03): a string of
    200,000 names must cost no more than 200,000 list entries. The string is already one
    node; each further comma adds one. Raises ``YAML-TOO-COMPLEX`` at the string that
    crosses the limit."""
    for scalar in scalars:
        nodes += scalar.text.count(",")
        if nodes > MAX_NODES:
            raise _too_complex(scalar.mark.line, scalar.mark.column)


_LENIENT_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*):(?:[ \t]+(.*?))?[ \t]*$")
_LENIENT_ITEM = re.compile(r"^[ \t]+-[ \t]+(.*?)[ \t]*$")


def load_lenient_front_matter(text: str, line_offset: int) -> LMap | None:
    """Read front matter that strict YAML rejects as flat ``key: text`` lines.

    Real files written for other runtimes put unquoted ``: `` inside descriptions, which
    strict YAML refuses; those runtimes read such lines as plain text. Recovering them
    (with a warning in parse mode, an error in save mode) keeps the definition usable
    without pretending the YAML was valid. Anything beyond flat keys and simple ``- item``
    lists is not guessed at: None is returned and the syntax error stands.
    """
    items: list[tuple[LScalar, LNode]] = []
    seen: set[str] = set()
    dups: list[LScalar] = []
    current_list: list[LNode] | None = None
    current_key: LScalar | None = None
    lines = text.split("\n")
    for index, line in enumerate(lines):
        lineno = index + 1 + line_offset
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        item = _LENIENT_ITEM.match(line)
        if item and current_list is not None:
            col = line.index("-") + 3
            current_list.append(LScalar(item.group(1), item.group(1), "str", Mark(lineno, col),
                                        raw=item.group(1)))
            continue
        m = _LENIENT_KEY.match(line)
        if not m:
            return None
        if current_key is not None and current_list is not None:
            items.append((current_key, LSeq(tuple(current_list), current_key.mark)))
        current_key, current_list = None, None
        key = LScalar(m.group(1), m.group(1), "str", Mark(lineno, 1))
        raw = m.group(2)
        if key.text in seen:
            dups.append(key)
            continue
        seen.add(key.text)
        if raw is None or raw == "":
            current_key, current_list = key, []
            continue
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
            raw = raw[1:-1]
        after = line.index(":") + 1
        col = after + (len(line[after:]) - len(line[after:].lstrip())) + 1
        items.append((key, LScalar(raw, raw, "str", Mark(lineno, col),
                                   raw=line[col - 1:].rstrip(" \t"))))
    if current_key is not None and current_list is not None:
        items.append((current_key, LSeq(tuple(current_list), current_key.mark)))
    if not items:
        return None
    return LMap(tuple(items), Mark(1 + line_offset, 1), tuple(dups))


def plain(node: LNode) -> Any:
    """Located nodes back to JSON-able data (for keys kept verbatim but not interpreted)."""
    if isinstance(node, LScalar):
        # YAML 1.2, as JS and Rust read it; lenient front matter (tag "str") is text.
        return core_value(node.text, node.style is None and node.tag != "str")
    if isinstance(node, LSeq):
        return [plain(n) for n in node.items]
    return {k.text: plain(v) for k, v in node.items}


_NON_FINITE = {math.inf: ".inf", -math.inf: "-.inf"}


def json_value(value: Any) -> Any:
    """A ``plain`` value as JSON can carry it: YAML's ``.inf``, ``-.inf`` and ``.nan`` have
    no JSON number, so they are reported as those strings (YAML's own spelling), and the
    saved document keeps the float (DEF-04 round trip is unaffected)."""
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else _NON_FINITE[value]
    if isinstance(value, list):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


def location(path: tuple[str | int, ...], node: LNode | LScalar | None) -> Location:
    if node is None:
        return Location(path)
    return Location(path, node.mark.line, node.mark.column)
