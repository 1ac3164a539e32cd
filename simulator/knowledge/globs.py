"""The lexical half of KB-07: the rules a knowledge glob is held to before any file is
listed, checked the same way when a definition is validated and again when kb_search
runs, and the one pattern language (literal, ``*``, ``?``, ``[...]``, ``**`` as a segment)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from wcmatch import fnmatch as wc_fnmatch
from wcmatch import glob as wc_glob

from capconf.simulator.core.names import WHITE_SPACE

GLOB_MAX_LENGTH = 1024


# FORCEUNIX + CASE: the same pattern means the same thing on every host; no BRACE or
# EXTGLOB, so the pattern language is exactly: literal, *, ?, [...], and ** as a segment.
GLOB_FLAGS = wc_glob.GLOBSTAR | wc_glob.FORCEUNIX | wc_glob.CASE


_SEGMENT_FLAGS = wc_fnmatch.FORCEUNIX | wc_fnmatch.CASE


_MAGIC = frozenset("*?[")


_PERCENT_RE = re.compile(r"%[0-9A-Fa-f]{2}")


class RejectReason(StrEnum):
    EMPTY = "empty"
    TOO_LONG = "too-long"
    CONTROL_CHARACTER = "control-character"
    BACKSLASH = "backslash"
    UNICODE_LOOKALIKE = "unicode-lookalike"
    WHITESPACE_EDGE = "whitespace-edge"
    ABSOLUTE = "absolute"
    HOME = "home"
    DRIVE_OR_SCHEME = "drive-or-scheme"
    PERCENT_ENCODING = "percent-encoding"
    ENV_VARIABLE = "env-variable"
    BRACE = "brace"
    PARENT_SEGMENT = "parent-segment"
    DOT_SEGMENT = "dot-segment"
    EMPTY_SEGMENT = "empty-segment"


@dataclass(frozen=True)
class GlobRule:
    """One row of the glob rule table (SPEC.md renders it). Rules are tried in order and
    the first that fails is reported, so the reason for a pattern is stable."""

    reason: RejectReason
    escape: bool  # True: a way out of the workspace (KB-07); False: merely malformed
    rule: str


GLOB_RULES: tuple[GlobRule, ...] = (
    GlobRule(RejectReason.EMPTY, False, "the pattern is empty (after a leading `./`)"),
    GlobRule(RejectReason.TOO_LONG, False, f"longer than {GLOB_MAX_LENGTH} characters"),
    GlobRule(RejectReason.CONTROL_CHARACTER, True,
             "contains NUL or another character of Unicode category Cc, Cf, Zl or Zp"),
    GlobRule(RejectReason.BACKSLASH, True,
             "contains `\\` (a separator on Windows; glob escapes are not supported)"),
    GlobRule(RejectReason.UNICODE_LOOKALIKE, True,
             "its NFKC normalisation differs and would break one of these rules "
             "(e.g. fullwidth `．．／`)"),
    GlobRule(RejectReason.WHITESPACE_EDGE, False,
             "starts or ends with a Unicode White_Space character (section 1, *White space*)"),
    GlobRule(RejectReason.ABSOLUTE, True, "starts with `/`"),
    GlobRule(RejectReason.HOME, True, "a segment starts with `~` (home expansion)"),
    GlobRule(RejectReason.DRIVE_OR_SCHEME, True,
             "contains `:` (drive letter, URL scheme, NTFS stream)"),
    GlobRule(RejectReason.PERCENT_ENCODING, True, "contains `%` followed by two hex digits"),
    GlobRule(RejectReason.ENV_VARIABLE, True, "contains `$` (variable expansion)"),
    GlobRule(RejectReason.BRACE, True,
             "contains `{` or `}` (brace expansion is not part of the pattern language)"),
    GlobRule(RejectReason.PARENT_SEGMENT, True, "a segment is `..`"),
    GlobRule(RejectReason.DOT_SEGMENT, True,
             "a segment other than a leading `./` consists only of dots"),
    GlobRule(RejectReason.EMPTY_SEGMENT, True, "contains `//` or ends with `/`"),
)


@dataclass(frozen=True)
class GlobRejection:
    reason: RejectReason
    message: str

    @property
    def escape(self) -> bool:
        return _RULE_BY_REASON[self.reason].escape


_RULE_BY_REASON = {rule.reason: rule for rule in GLOB_RULES}


def _strip_leading_dot(glob: str) -> str:
    while glob.startswith("./"):
        glob = glob[2:]
    return glob


def _bad_char(ch: str) -> bool:
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp")


def check_glob(glob: str) -> GlobRejection | None:
    """The lexical half of KB-07: the first rule of GLOB_RULES the pattern breaks, or None.

    Pure; the same function runs in save mode and at search time."""
    found = _check_rules(glob)
    if found is not None:
        return GlobRejection(found, _RULE_BY_REASON[found].rule)
    normal = unicodedata.normalize("NFKC", glob)
    if normal != glob and _check_rules(normal) is not None:
        return GlobRejection(RejectReason.UNICODE_LOOKALIKE,
                             f"{_RULE_BY_REASON[RejectReason.UNICODE_LOOKALIKE].rule}; "
                             f"normalised: {normal!r}")
    return None


def _check_rules(glob: str) -> RejectReason | None:
    rest = _strip_leading_dot(glob)
    checks: tuple[tuple[RejectReason, bool], ...] = (
        (RejectReason.EMPTY, rest == ""),
        (RejectReason.TOO_LONG, len(glob) > GLOB_MAX_LENGTH),
        (RejectReason.CONTROL_CHARACTER, any(_bad_char(ch) for ch in glob)),
        (RejectReason.BACKSLASH, "\\" in glob),
        (RejectReason.WHITESPACE_EDGE,
         bool(glob) and (glob[0] in WHITE_SPACE or glob[-1] in WHITE_SPACE)),
        (RejectReason.ABSOLUTE, glob.startswith("/")),
        (RejectReason.HOME, any(seg.startswith("~") for seg in glob.split("/"))),
        (RejectReason.DRIVE_OR_SCHEME, ":" in glob),
        (RejectReason.PERCENT_ENCODING, _PERCENT_RE.search(glob) is not None),
        (RejectReason.ENV_VARIABLE, "$" in glob),
        (RejectReason.BRACE, "{" in glob or "}" in glob),
        (RejectReason.PARENT_SEGMENT, ".." in rest.split("/")),
        (RejectReason.DOT_SEGMENT,
         any(seg and set(seg) == {"."} for seg in rest.split("/"))),
        (RejectReason.EMPTY_SEGMENT, "" in rest.split("/")),
    )
    for reason, failed in checks:
        if failed:
            return reason
    return None


def normalized_pattern(glob: str) -> str:
    """The pattern actually matched: the declared glob without leading `./` segments
    (wcmatch would otherwise never match `./docs/*.md` against `docs/a.md`)."""
    return _strip_leading_dot(glob)


def _glob_rules_table() -> str:
    rows = ["| reason | escape | rule |", "|---|---|---|"]
    rows += [f"| `{r.reason}` | {'yes' if r.escape else 'no'} | {r.rule} |" for r in GLOB_RULES]
    return "\n".join(rows)


# Generated regions of SPEC.md (see capconf.simulator.spec_tables).
SPEC_TABLES: dict[str, Callable[[], str]] = {"knowledge-glob-rules": _glob_rules_table}
