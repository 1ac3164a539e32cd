"""KB-01's glob grammar, written from the SPEC text, against the reference's wcmatch.

SPEC.md defines the pattern language itself (so a TS/Rust runtime need not know wcmatch);
the reference implements it with wcmatch. This file holds an independent matcher that
follows the SPEC sentences one by one and checks, on boundary cases and random patterns,
that both agree, so the SPEC text cannot drift from what the reference does.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from capconf.simulator.knowledge.globs import check_glob, normalized_pattern
from capconf.simulator.knowledge.walk import compile_pattern


def _class(seg: str, i: int) -> tuple[list[tuple[str, str]], bool, int] | None:
    """Parse a class at seg[i] == "[": (ranges, negated, index after `]`) or None when
    no closing `]` (then `[` is literal)."""
    j = i + 1
    negated = j < len(seg) and seg[j] in "!^"
    if negated:
        j += 1
    items: list[tuple[str, str]] = []
    first = True
    while j < len(seg):
        ch = seg[j]
        if ch == "]" and not first:
            return items, negated, j + 1
        if j + 2 < len(seg) and seg[j + 1] == "-" and seg[j + 2] != "]":
            items.append((ch, seg[j + 2]))
            j += 3
        else:
            items.append((ch, ch))
            j += 1
        first = False
    return None


def _segment(pat: str, name: str) -> bool:
    if name.startswith(".") and not pat.startswith("."):
        return False

    def rec(p: int, n: int) -> bool:
        if p == len(pat):
            return n == len(name)
        ch = pat[p]
        if ch == "*":
            return any(rec(p + 1, k) for k in range(n, len(name) + 1))
        if ch == "?":
            return n < len(name) and rec(p + 1, n + 1)
        if ch == "[":
            parsed = _class(pat, p)
            if parsed is not None:
                items, negated, after = parsed
                if n >= len(name):
                    return False
                inside = any(lo <= name[n] <= hi for lo, hi in items)
                return inside != negated and rec(after, n + 1)
        return n < len(name) and name[n] == ch and rec(p + 1, n + 1)

    return rec(0, 0)


def spec_match(pattern: str, path: str) -> bool:
    """KB-01 as written in SPEC.md."""
    pats = normalized_pattern(pattern).split("/")
    segs = path.split("/")

    def rec(i: int, j: int) -> bool:
        if i == len(pats):
            return j == len(segs)
        if pats[i] == "**":
            least = 1 if i == len(pats) - 1 else 0
            for k in range(j + least, len(segs) + 1):
                if any(s.startswith(".") for s in segs[j:k]):
                    break
                if rec(i + 1, k):
                    return True
            return False
        return j < len(segs) and _segment(pats[i], segs[j]) and rec(i + 1, j + 1)

    return rec(0, 0)


BOUNDARY = [
    ("*.md", "a.md", True), ("*.md", ".a.md", False), ("*.md", ".md", False),
    ("[.]a", ".a", False), ("?a", ".a", False), (".*", "..x", True), ("x[!a]", "x.", True),
    ("**/*.md", ".git/a.md", False), ("**/*.md", "a/b/c.md", True), ("**", "a", True),
    ("a/**", "a", False), ("a/**/b", "a/b", True), ("a/**/b", "a/.h/b", False),
    ("a**b", "axyb", True), ("a**b", "ax/yb", False), ("a/***/b", "a/x/y/b", False),
    ("[a-c]", "b", True), ("[!a-c]", "d", True), ("[^a-c]", "b", False), ("[z-a]", "z", False),
    ("[]]", "]", True), ("[!]]", "]", False), ("[!]", "[!]", True), ("[]", "[]", True),
    ("[a-]", "-", True), ("[a-c-e]", "d", False), ("[a-c-e]", "-", True), ("[ab", "[ab", True),
    ("[a/b]", "[a/b]", True), ("A", "a", False), ("*.MD", "a.md", False), ("?", "\u00e9", True),
    ("./docs/*.md", "docs/a.md", True), ("docs/*", "docs/a/b", False),
]


@pytest.mark.parametrize("pattern,path,expected", BOUNDARY)
def test_boundary_cases_match_the_spec_and_wcmatch(pattern: str, path: str,
                                                   expected: bool) -> None:
    assert check_glob(pattern) is None
    assert spec_match(pattern, path) is expected
    assert compile_pattern(normalized_pattern(pattern)).match(path) is expected


PATTERN_CHARS = st.sampled_from([*"ab.-!^][*?/", "**"])
PATH_SEG = st.text(alphabet="ab.-!^][", min_size=1, max_size=4).filter(
    lambda s: s not in (".", ".."))


@settings(max_examples=400, deadline=None)
@given(st.lists(PATTERN_CHARS, min_size=1, max_size=8).map("".join),
       st.lists(PATH_SEG, min_size=1, max_size=3).map("/".join))
def test_spec_grammar_equals_the_reference_matcher(pattern: str, path: str) -> None:
    if check_glob(pattern) is not None:
        return
    ref = compile_pattern(normalized_pattern(pattern)).match(path)
    assert spec_match(pattern, path) is ref, (pattern, path)
