"""The memory file-name rule, shared by the tools, resident injection and search.

A name is one path component, so it can never name a directory: no separator, no ``..``,
not absolute, no NUL, at most 64 bytes of UTF-8. Letters and digits of any script are
allowed (``笔记.md``) under the shared Unicode name rule (``core.unicode_names``): no
control, bidi or invisible characters, NFC and NFKC-stable (so the look-alikes of ``/`` and
``.``, U+2215, U+FF0F, U+FF0E, are refused: they are not letters, and NFKC changes the
fullwidth ones), one script; plus ``.``, ``_`` and ``-``; a letter or digit first, and a
lowercase ``.md`` suffix. NFC is required rather than applied, so a name is the same bytes
on every file system (macOS would otherwise store a different spelling than Linux). Windows
device names (``con.md``, ``nul.md``) are rejected so a definition behaves the same on every
OS. The checks run in the order of ``NAME_RULES``; the first failing rule is the reason.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from capconf.simulator.core.unicode_names import FILE_NAME_PUNCTUATION, unicode_reason

MAX_NAME_BYTES = 64
NAME_SUFFIX = ".md"

# The same rule as a JSON Schema pattern, published in the tool schemas; the length is
# the schema's maxLength. No look-around, no non-capturing group and no counted repeat,
# so ECMA-262, Python ``re``, Rust ``regex`` and Go ``regexp`` all read it the same way:
# "no '..'" is spelled as "every '.' before the suffix is followed by a non-dot". It does
# not express the Windows device-name rule; the validator is authoritative.
# Any non-ASCII code point passes the pattern (the validator applies the Unicode rules),
# written as a negated class of ASCII ranges so ECMA-262 without the ``u`` flag (which
# sees a supplementary character as two surrogates, each passing), Python ``re``, Rust and
# Go agree.
_HEAD = r"[^\x00-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"
_TAIL = r"[^\x00-\x2c\x2e\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]"
NAME_PATTERN = f"^{_HEAD}({_TAIL}|\\.{_TAIL})*\\.md$"

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
    NameRule("control", "the file name contains a control character"),
    NameRule("bidi", "the file name contains a bidirectional formatting character"),
    NameRule("invisible", "the file name contains an invisible (default-ignorable) character"),
    NameRule("not_nfc", "the file name is not in Unicode Normalization Form C"),
    NameRule("compatibility", "the file name contains a compatibility character (NFKC "
                              "changes it: fullwidth, ligature, superscript)"),
    NameRule("charset", "the file name may use only letters, combining marks and digits "
                        "(any script), '.', '_' and '-'"),
    NameRule("leading", "the file name must start with a letter or digit"),
    NameRule("script", "the file name uses a script outside UTS #31's recommended scripts"),
    NameRule("mixed_script", "the file name mixes scripts (one script, or Latin with Han + "
                             "Hiragana + Katakana, Han + Bopomofo or Han + Hangul)"),
    NameRule("suffix", "the file name must end with '.md' (lowercase)"),
    NameRule("reserved", "the file name is a reserved device name on Windows"),
)
_MESSAGES = {rule.reason: rule.message for rule in NAME_RULES}


_UNICODE_REASONS = ("control", "bidi", "invisible", "not_nfc", "compatibility", "charset",
                    "leading", "script", "mixed_script")


def _failing_reason(name: str) -> str | None:
    # The suffix is not part of the script check: `заметки.md` is one script, Cyrillic.
    stem = name[: -len(NAME_SUFFIX)] if name.endswith(NAME_SUFFIX) else name
    unicode = unicode_reason(stem or name, FILE_NAME_PUNCTUATION)
    checks = (
        ("empty", name == ""),
        ("nul", "\x00" in name),
        ("absolute", name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name) is not None),
        ("separator", "/" in name or "\\" in name),
        ("dot_dot", ".." in name),
        ("too_long", len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES),
        *((reason, reason == unicode) for reason in _UNICODE_REASONS),
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
