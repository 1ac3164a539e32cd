"""The memory file-name rule (MEM-03): one component, bounded, ASCII, ``.md``."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.memory.names import (
    MAX_NAME_BYTES,
    NAME_PATTERN,
    NAME_RULES,
    is_valid_name,
    name_problem,
)

VALID = ["notes.md", "MEMORY.md", "a.md", "2026-11-29.md", "prefs_v2.md", "x.y.md",
         "a" * (MAX_NAME_BYTES - 3) + ".md", "Con-tacts.md", "console.md"]

INVALID = [
    ("", "empty"),
    ("notes.md\x00", "nul"),
    ("\x00", "nul"),
    ("/etc/passwd.md", "absolute"),
    ("\\\\server\\share.md", "absolute"),
    ("C:notes.md", "absolute"),
    ("c:\\x.md", "absolute"),
    ("a/b.md", "separator"),
    ("a\\b.md", "separator"),
    ("daily/x.md", "separator"),
    ("..", "dot_dot"),
    ("..md", "dot_dot"),
    ("a..md", "dot_dot"),
    ("a" * (MAX_NAME_BYTES - 2) + ".md", "too_long"),
    ("é" * 40 + ".md", "too_long"),  # 83 bytes though only 43 characters
    ("a\u2215b.md", "charset"),  # DIVISION SLASH
    ("a\uff0fb.md", "compatibility"),  # FULLWIDTH SOLIDUS (NFKC: "/")
    ("\uff0e\uff0e.md", "compatibility"),  # FULLWIDTH FULL STOP x2 (NFKC: "..")
    ("notes\u200b.md", "invisible"),  # zero-width space
    ("ab\u202ecd.md", "bidi"),  # RIGHT-TO-LEFT OVERRIDE
    ("cafe\u0301.md", "not_nfc"),  # NFD
    ("p\u0430y.md", "mixed_script"),  # Latin + CYRILLIC SMALL LETTER A
    ("\U00010330.md", "script"),  # GOTHIC LETTER AHSA
    ("my notes.md", "charset"),
    ("a\n## injected.md", "control"),
    ("ab:c.md", "charset"),  # NTFS alternate data stream
    ("a:b.md", "absolute"),  # drive-relative on Windows
    (".hidden.md", "leading"),
    ("-rf.md", "leading"),
    ("_x.md", "leading"),
    (".md", "leading"),
    ("notes", "suffix"),
    ("notes.MD", "suffix"),
    ("notes.md.txt", "suffix"),
    ("notes.markdown", "suffix"),
    ("con.md", "reserved"),
    ("NUL.md", "reserved"),
    ("com1.md", "reserved"),
    ("lpt9.notes.md", "reserved"),
]


@pytest.mark.parametrize("name", VALID)
def test_valid_names(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize("name", ["café.md", "笔记.md", "заметки.md", "データ-1.md"])
def test_valid_names_in_any_script(name: str) -> None:
    assert name_problem(name) is None


@pytest.mark.parametrize(("name", "reason"), INVALID)
def test_invalid_names_report_the_first_broken_rule(name: str, reason: str) -> None:
    problem = name_problem(name)
    assert problem is not None
    assert problem.reason == reason


def test_every_rule_has_a_case_in_the_battery() -> None:
    assert {reason for _, reason in INVALID} == {rule.reason for rule in NAME_RULES}


def _pattern_accepts(name: str) -> bool:
    """The schema's check: ``pattern`` plus ``maxLength`` (64 code points: necessary, not
    sufficient, for the 64-byte rule)."""
    # JSON Schema patterns are ECMA-262: '$' is the end of input, not "before a final \n".
    body = NAME_PATTERN.removeprefix("^").removesuffix("$")
    return len(name) <= MAX_NAME_BYTES and re.fullmatch(body, name) is not None


def test_pattern_uses_no_construct_outside_the_portable_regex_subset() -> None:
    """Rust's `regex` and Go's `regexp` have no look-around or back-references: a schema
    validator built on them must read the pattern as ECMA-262 does."""
    for construct in ("(?=", "(?!", "(?<", "(?:", "\\1", "{"):
        assert construct not in NAME_PATTERN, construct


names = st.one_of(
    st.text(max_size=70),
    st.text(alphabet="aZ09._-/\\\x00é笔\u0430\u200d\uff0e", max_size=70).map(
        lambda s: s + ".md"),
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,64}\.md", fullmatch=True),
)


@settings(max_examples=400)
@given(names)
def test_schema_pattern_agrees_with_the_validator(name: str) -> None:
    """The published pattern is the validator, except for Windows device names, which
    the pattern does not try to express."""
    if is_valid_name(name):
        assert _pattern_accepts(name)  # the pattern never refuses a valid name
    problem = name_problem(name)
    if name.isascii() and (problem is None or problem.reason != "reserved"):
        assert _pattern_accepts(name) == is_valid_name(name)  # and is exact for ASCII


@settings(max_examples=300)
@given(names)
def test_a_valid_name_is_one_plain_component(name: str) -> None:
    if is_valid_name(name):
        assert "/" not in name and "\\" not in name and ".." not in name
        assert unicodedata.is_normalized("NFC", name) and not name.startswith(".")
        assert len(name.encode()) <= MAX_NAME_BYTES
        assert name.endswith(".md")
