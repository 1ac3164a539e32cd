"""Text plumbing for form edits: line arithmetic, line endings, and YAML scalar spelling.

The parser reads every document with LF line endings (DEF-01), so a splice is computed on
that normalised text and then mapped back onto the original, whose line endings (CRLF,
lone CR, a BOM) are the user's and are kept. Scalars are written plain only when YAML
reads the plain text back as exactly that string; otherwise double-quoted.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass

import yaml


@dataclass(frozen=True)
class Splice:
    """Replace ``text[start:end]`` with ``new`` (offsets in code points)."""

    start: int
    end: int
    new: str


def line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def line_end(text: str, index: int) -> int:
    """Offset just after the newline of the line holding ``index`` (or the text's end)."""
    found = text.find("\n", index)
    return len(text) if found < 0 else found + 1


def trim_trailing_space(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1] in " \t\n":
        end -= 1
    return end


@dataclass(frozen=True)
class Newlines:
    """The original text as LF text plus the map back to original offsets. Only a CRLF
    shifts offsets (two characters become one); a lone CR maps one to one."""

    original: str
    normalized: str
    crlf_at: tuple[int, ...]  # normalised offsets of the LF each CRLF became, ascending
    newline: str

    def to_original(self, index: int) -> int:
        return index + bisect.bisect_left(self.crlf_at, index)

    def apply(self, splices: list[Splice]) -> tuple[str, tuple[Splice, ...]]:
        """Apply splices given in normalised offsets to the original text; the new text
        takes the document's dominant line ending."""
        out: list[str] = []
        mapped: list[Splice] = []
        cursor = 0
        for s in sorted(splices, key=lambda s: (s.start, s.end)):
            start, end = self.to_original(s.start), self.to_original(s.end)
            if start < cursor:
                raise ValueError("overlapping splices")
            new = s.new.replace("\n", self.newline)
            out.append(self.original[cursor:start])
            out.append(new)
            mapped.append(Splice(start, end, new))
            cursor = end
        out.append(self.original[cursor:])
        return "".join(out), tuple(mapped)


def read_newlines(original: str) -> Newlines:
    crlf = original.count("\r\n")
    lf = original.count("\n") - crlf
    cr = original.count("\r") - crlf
    newline = "\r\n" if crlf > lf and crlf >= cr else ("\r" if cr > lf and cr > crlf else "\n")
    if "\r" not in original:
        return Newlines(original, original, (), newline)
    at = tuple(m.start() - k for k, m in enumerate(re.finditer("\r\n", original)))
    normalized = original.replace("\r\n", "\n").replace("\r", "\n")
    return Newlines(original, normalized, at, newline)


_YAML_BREAKS = {"\x85": "\\N", "\u2028": "\\L", "\u2029": "\\P", "\ufeff": "\\uFEFF"}


def double_quoted(value: str) -> str:
    text = json.dumps(value, ensure_ascii=False)
    for raw, escaped in _YAML_BREAKS.items():
        text = text.replace(raw, escaped)
    return text


def plain_reads_back(value: str, flow: bool) -> bool:
    """True when ``value`` written plain is read back by YAML as exactly that string."""
    if not value or value != value.strip() or "\n" in value or "\t" in value:
        return False
    source = f"k: [{value}]" if flow else f"k: {value}"
    try:
        data = yaml.safe_load(source)
    except yaml.YAMLError:
        return False
    if not isinstance(data, dict) or set(data) != {"k"}:
        return False
    got = data["k"]
    if flow:
        if not isinstance(got, list) or len(got) != 1:
            return False
        got = got[0]
    return isinstance(got, str) and got == value


def scalar_text(value: str, flow: bool, style: str | None = None) -> str:
    """How a form value is written: in the quoting style of the value it replaces when
    that style can hold it, plain when plain reads back the same, double-quoted else."""
    if style == "'" and "\n" not in value and value.isprintable():
        return "'" + value.replace("'", "''") + "'"
    if style == '"':
        return double_quoted(value)
    if plain_reads_back(value, flow):
        return value
    return double_quoted(value)
