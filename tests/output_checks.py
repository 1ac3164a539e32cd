"""What "neutralised" means per destination (issue 38), as checks the hostile-output
tests share: a console or CI log has no workflow command and no control sequence;
Markdown renders (with GitHub's own renderer, when installed) to no image, no link of
the input's, no raw HTML and no extra table row."""

from __future__ import annotations

import re
from typing import Any

import pytest

from capconf.conformance.safe_text import escape_controls

# what must not reach a console: C0 but tab/newline, DEL, C1, bidi, separators,
# lone surrogates
_RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                  "\u2066-\u2069\u2028\u2029\ud800-\udfff]")


def assert_console_safe(text: str, annotations: bool = False) -> None:
    """No line a workflow command (``::`` after leading blanks; ``##[`` anywhere), no
    terminal control. ``annotations``: lines of ``--format github`` may be the
    annotations capconf writes (``::error file=...::``), nothing else."""
    assert "##[" not in text, text
    for line in text.split("\n"):
        if annotations and re.match(r"::(error|warning|notice) [^:\n]*::", line):
            continue  # one command per line: what follows its `::` is its message
        assert not line.lstrip().startswith("::"), f"workflow command: {line!r}"
    bad = _RAW.findall(text)
    assert not bad, f"raw controls {bad!r} in {escape_controls(text)[:2000]}"


def render_gfm(markdown: str) -> str | None:
    try:
        import cmarkgfm
    except ImportError:
        return None
    html: str = cmarkgfm.github_flavored_markdown_to_html(markdown)
    return html


def assert_markdown_safe(markdown: str, table_rows: int | None = None) -> None:
    """No raw control characters; and as GitHub renders it: no image, no link the input
    made (``javascript:``, ``http://t``), no raw HTML element, and (``table_rows``)
    exactly that many rows in all tables."""
    bad = _RAW.findall(markdown)
    assert not bad, f"raw controls {bad!r}"
    html = render_gfm(markdown)
    if html is None:  # without the renderer: no unescaped tag outside code at least
        assert not re.search(r"(?<![\\`])<(script|svg|iframe|img)", markdown, re.I), markdown
        return
    lowered = html.lower()
    for forbidden in ("<img", "<script", "<svg", "<iframe", 'href="javascript',
                      'href="http://t', ' src="'):
        assert forbidden not in lowered, (forbidden, html[:3000])
    if table_rows is not None:
        assert html.count("<tr>") == table_rows, html


def skip_without_gfm() -> Any:
    return pytest.importorskip("cmarkgfm")
