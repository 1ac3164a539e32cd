"""Feature-flag sections inside SKILL.md (SKILL-10).

A skill body may carry instructions for several versions of a tool it drives (the real
shopping skill holds two command templates, fenced by `catalog-search-v1-only` /
`catalog-search-v2-only` HTML comments). Only the section of the version the runtime
actually runs may reach the model: the other one would make it issue commands that do not
exist. The markup is line-based and defined here without any Markdown parser, so every
runtime cuts the same lines; bad markup is reported with its line, never a crash.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# A marker is a whole line (spaces/tabs around it and a trailing CR ignored):
#   open  <!-- NAME-only -->      close  <!-- /NAME-only -->
# NAME = FEATURE "-" VERSION, VERSION = "v" + ASCII digits; FEATURE = ASCII letters,
# digits, ".", "_", "-", starting with a letter or digit.
MARKER_RE = re.compile(
    r"[ \t]*<!--[ \t]*(?P<close>/)?[ \t]*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)-only[ \t]*-->"
    r"[ \t]*\r?\Z")
FLAG_NAME_RE = re.compile(r"(?P<feature>[A-Za-z0-9][A-Za-z0-9._-]*)-(?P<version>v[0-9]+)\Z")
VERSION_RE = re.compile(r"v[0-9]+\Z")
FEATURE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")


class FlagProblemCode(StrEnum):
    UNTERMINATED = "unterminated"
    UNMATCHED_CLOSE = "unmatched-close"
    MALFORMED_NAME = "malformed-name"


class SectionFate(StrEnum):
    KEPT = "kept"
    DROPPED_OTHER_VERSION = "other-version"
    DROPPED_UNKNOWN_FEATURE = "unknown-feature"
    DROPPED_MALFORMED = "malformed-name"
    DROPPED_ENCLOSING = "enclosing-section-dropped"


# SKILL-10: what a marker pair does, one row per case (SPEC.md table `skill-flag-rules`).
FLAG_RULES: tuple[tuple[str, str], ...] = (
    ("`<!-- F-vN-only -->` ... `<!-- /F-vN-only -->`, active version of F is vN",
     "the lines between are kept; both marker lines are removed"),
    ("same, active version of F is another version",
     f"the lines between are removed (`{SectionFate.DROPPED_OTHER_VERSION}`)"),
    ("same, F has no active version",
     f"the lines between are removed (`{SectionFate.DROPPED_UNKNOWN_FEATURE}`)"),
    ("`<!-- X-only -->` where X is not F-vN",
     f"a section that is removed (`{SectionFate.DROPPED_MALFORMED}`), problem "
     f"`{FlagProblemCode.MALFORMED_NAME}`"),
    ("a section inside a removed section",
     f"removed with it (`{SectionFate.DROPPED_ENCLOSING}`)"),
    ("a close marker that matches an outer open section, not the innermost",
     f"closes that section and every section inside it; each inner one is "
     f"`{FlagProblemCode.UNTERMINATED}`"),
    ("a close marker that matches no open section",
     f"the marker line is removed, problem `{FlagProblemCode.UNMATCHED_CLOSE}`"),
    ("an open marker never closed",
     f"the section runs to the end of the body, problem `{FlagProblemCode.UNTERMINATED}`"),
)


@dataclass(frozen=True)
class FlagProblem:
    code: FlagProblemCode
    flag: str  # the marker's NAME-only text
    line: int  # 1-based line in SKILL.md (front matter counted)

    def to_json(self) -> dict[str, Any]:
        return {"code": str(self.code), "flag": self.flag, "line": self.line}


@dataclass(frozen=True)
class FlagSection:
    flag: str
    feature: str | None
    version: str | None
    open_line: int
    close_line: int | None  # None when unterminated
    fate: SectionFate

    @property
    def kept(self) -> bool:
        return self.fate is SectionFate.KEPT

    def to_json(self) -> dict[str, Any]:
        return {"flag": self.flag, "feature": self.feature, "version": self.version,
                "open_line": self.open_line, "close_line": self.close_line,
                "kept": self.kept, "reason": None if self.kept else str(self.fate)}


@dataclass(frozen=True)
class FlagSelection:
    text: str
    sections: tuple[FlagSection, ...]  # in order of their open markers
    problems: tuple[FlagProblem, ...]  # in line order

    def to_json(self) -> dict[str, Any]:
        return {"sections": [s.to_json() for s in self.sections],
                "problems": [p.to_json() for p in self.problems]}


@dataclass
class _Open:
    flag: str
    feature: str | None
    version: str | None
    line: int
    fate: SectionFate
    index: int  # position in the section list


def _fate(name: str, active: Mapping[str, str], enclosing_dropped: bool
          ) -> tuple[str | None, str | None, SectionFate]:
    match = FLAG_NAME_RE.match(name)
    if match is None:
        return None, None, SectionFate.DROPPED_MALFORMED
    feature, version = match["feature"], match["version"]
    if enclosing_dropped:
        return feature, version, SectionFate.DROPPED_ENCLOSING
    if feature not in active:
        return feature, version, SectionFate.DROPPED_UNKNOWN_FEATURE
    if active[feature] != version:
        return feature, version, SectionFate.DROPPED_OTHER_VERSION
    return feature, version, SectionFate.KEPT


def select_sections(body: str, active: Mapping[str, str], first_line: int = 1
                    ) -> FlagSelection:
    """Keep the lines of the active versions. ``first_line`` is the SKILL.md line number
    of the body's first line, so problems point into the file the author edits."""
    # a final newline ends the last line; it is not a line of its own that a section
    # running to the end could swallow
    ends_with_newline = body.endswith("\n")
    lines = (body[:-1] if ends_with_newline else body).split("\n")
    kept: list[str] = []
    stack: list[_Open] = []
    sections: list[FlagSection | None] = []
    problems: list[FlagProblem] = []

    def finish(entry: _Open, close_line: int | None) -> None:
        sections[entry.index] = FlagSection(entry.flag, entry.feature, entry.version,
                                            entry.line, close_line, entry.fate)
        if close_line is None:
            problems.append(FlagProblem(FlagProblemCode.UNTERMINATED, entry.flag, entry.line))

    for offset, line in enumerate(lines):
        number = first_line + offset
        marker = MARKER_RE.match(line)
        if marker is None:
            if all(s.fate is SectionFate.KEPT for s in stack):
                kept.append(line)
            continue
        flag = marker["name"] + "-only"
        if marker["close"] is None:
            dropped = any(s.fate is not SectionFate.KEPT for s in stack)
            feature, version, fate = _fate(marker["name"], active, dropped)
            if fate is SectionFate.DROPPED_MALFORMED:
                problems.append(FlagProblem(FlagProblemCode.MALFORMED_NAME, flag, number))
            stack.append(_Open(flag, feature, version, number, fate, len(sections)))
            sections.append(None)
            continue
        depth = next((i for i in range(len(stack) - 1, -1, -1) if stack[i].flag == flag),
                     None)
        if depth is None:
            problems.append(FlagProblem(FlagProblemCode.UNMATCHED_CLOSE, flag, number))
            continue
        while len(stack) > depth + 1:
            finish(stack.pop(), None)
        finish(stack.pop(), number)
    while stack:
        finish(stack.pop(), None)
    problems.sort(key=lambda p: p.line)
    text = "\n".join(kept) + ("\n" if ends_with_newline and kept else "")
    return FlagSelection(text, tuple(s for s in sections if s is not None),
                         tuple(problems))


def rules_table() -> str:
    rows = ["| markup | effect |", "|---|---|"]
    rows += [f"| {markup} | {effect} |" for markup, effect in FLAG_RULES]
    return "\n".join(rows)
