"""Neutralise text from a run or a findings file before it enters Markdown or HTML.

Why: a case's reason, a runtime's error text or a finding's note can come from a hostile
implementation or file; in REPORT.md or COMPATIBILITY.md it must stay text (no raw HTML,
no link, no image, no table break, no heading). Local stand-in: at merge the lead
switches these two functions to ``capconf.conformance.safe_text`` (being built in
parallel); the behaviour asked of them is pinned by tests/project/test_adapter_reports.py.
"""

from __future__ import annotations

import html
import re

# ASCII punctuation that Markdown (CommonMark + GFM tables/autolinks) can act on; each
# gets a backslash, which CommonMark defines as "this character literally".
_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>#!|~&$])")
# GFM turns a bare URL or `www.` into a link: a zero-width space defuses the pattern
# (visible text unchanged) so runtime text never becomes a link.
_AUTOLINK = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def md(text: str) -> str:
    """One line of literal text for Markdown: controls and bidi overrides become `?`,
    line breaks a space, each character that opens markup (emphasis, code, links, images,
    HTML, tables, entities, math) escaped, bare URLs defused."""
    flat = _CONTROL.sub("?", text.replace("\r\n", " ").replace("\n", " ").replace("\r", " "))
    return _AUTOLINK.sub("\u200b", _MD_SPECIAL.sub(r"\\\1", flat))


def md_code(text: str) -> str:
    """Literal text inside a code span: no backtick can close it, no pipe break a table."""
    flat = _CONTROL.sub("?", " ".join(text.splitlines()))
    return "`" + flat.replace("`", "'").replace("|", "\u2223") + "`"


def esc(text: str) -> str:
    """Text for HTML element content or a quoted attribute."""
    return html.escape(_CONTROL.sub("?", text), quote=True)
