"""The memory file-name rule, shared by the tools, resident injection and search.

A name is one path component, so it can never name a directory: no separator, no ``..``,
not absolute, no NUL, at most 64 bytes. The allowed charset is ASCII letters, digits,
``.``, ``_`` and ``-``, starting with a letter or digit and ending in lowercase ``.md``.
ASCII only, because every Unicode look-alike of ``/`` or ``.`` (U+2215, U+FF0F, U+FF0E)
and every normalisation difference (macOS NFD) is then rejected by construction, and the
name means the same file on every file system a runtime may use. Windows device names
(``con.md``, ``nul.md``) are rejected so a definition behaves the same on every OS.
The checks run in the order of ``NAME_RULES``; the first failing rule is the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_NAME_BYTES = 64
NAME_SUFFIX = ".md"

# The same rule as a JSON Schema pattern, published in the tool schemas; the length is
# the schema's maxLength. No look-around, no non-capturing group and no counted repeat,
# so ECMA-262, Python ``re``, Rust ``regex`` and Go ``regexp`` all read it the same way:
# "no '..'" is spelled as "every '.' before the suffix is followed by a non-dot". It does
# not express the Windows device-name rule; the validator is authoritative.
NAME_PATTERN = r"^[A-Za-z0-9]([A-Za-z0-9_-]|\.[A-Za-z0-9_-])*\.md$"

_CHARSET = re.compile(r"[A-Za-z0-9._-]*")
WINDOWS_DEVICES = frozenset(
    {"con", "prn", "aux", "nul"}
    | {f"com{i}" for i in range(1, 10)}
    | {f"lpt{i}" for i in range(1, 10)}
)


@dataclass(frozen=True)
class NameRule:
    reason: str
    message: str


# The rule table, in checking order (SPEC.md's file-name table is generated from it).
NAME_RULES: tuple[NameRule, ...] = (
    NameRule("empty", "the file name is empty"),
    NameRule("nul", "the file name contains a NUL character"),
    NameRule("absolute", "the file name is an absolute path"),
    NameRule("separator", "the file name contains a path separator (/ or \\)"),
    NameRule("dot_dot", "the file name contains '..'"),
    NameRule("too_long", f"the file name is longer than {MAX_NAME_BYTES} bytes"),
    NameRule("charset", "the file name may use only ASCII letters, digits, '.', '_' and '-'"),
    NameRule("leading", "the file name must start with an ASCII letter or digit"),
    NameRule("suffix", "the file name must end with '.md' (lowercase)"),
    NameRule("reserved", "the file name is a reserved device name on Windows"),
)
_MESSAGES = {rule.reason: rule.message for rule in NAME_RULES}


def _failing_reason(name: str) -> str | None:
    checks = (
        ("empty", name == ""),
        ("nul", "\x00" in name),
        ("absolute", name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) is not None),
        ("separator", "/" in name or "\\" in name),
        ("dot_dot", ".." in name),
        ("too_long", len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES),
        ("charset", _CHARSET.fullmatch(name) is None),
        ("leading", not name[:1].isalnum()),
        ("suffix", not name.endswith(NAME_SUFFIX) or name == NAME_SUFFIX),
        ("reserved", name.split(".")[0].lower() in WINDOWS_DEVICES),
    )
    return next((reason for reason, failed in checks if failed), None)


def name_problem(name: str) -> NameRule | None:
    """The first rule ``name`` breaks, or None when it is a valid memory file name."""
    reason = _failing_reason(name)
    return None if reason is None else NameRule(reason, _MESSAGES[reason])


def is_valid_name(name: str) -> bool:
    return _failing_reason(name) is None
