"""safe_text.py, one destination at a time, fed the probes of issue 38: what leaves
capconf for a console or CI log, JSON on a console, Markdown, or a GitHub annotation
cannot be turned against the reader."""

from __future__ import annotations

import io
import json

import pytest
from output_checks import assert_console_safe, assert_markdown_safe, render_gfm

from capconf.conformance import safe_text
from capconf.conformance.lint_formats import FileResult, render_github

PROBES = ["x\n::warning::pwn", "##[error]x", "\x1b]52;c;ZWNobw==\x07", "\x1b[2J",
          "\x1b]0;title\x07", "![x](http://t/p.png)", "[a](javascript:alert(1))",
          "<script>alert(1)</script>", "<iframe src=x>", "<svg onload=x>", "a|b\n|c|",
          "lone \ud800 surrogate", "\u202egnp.exe", "ok\r::error::hidden", "\x9b2J",
          "  ::add-mask::secret", "\t::stop-commands::tok", "x ###[y", "a\\", "`x``y`",
          "http://t/p.png", "www.t.example", "\u2028::error::sep", "&#x202e;"]


@pytest.mark.parametrize("probe", PROBES)
def test_console_text_has_no_command_and_no_control(probe: str) -> None:
    assert_console_safe(safe_text.console(probe))
    assert_console_safe(safe_text.console_value(probe))
    assert "\n" not in safe_text.console_value(probe)
    safe_text.console(probe).encode("utf-8")  # a lone surrogate no longer breaks a write


def test_console_escapes_are_visible() -> None:
    assert safe_text.console("\x1b[2J") == "\\x1b[2J"
    assert safe_text.console("x\n::warning::pwn") == "x\n\\x3a:warning::pwn"
    assert safe_text.console("##[error]x") == "#\\x23[error]x"
    assert safe_text.console_value("a\nb\tc\u202e") == "a\\nb\\tc\\u202e"
    assert safe_text.console("plain text: a/b, (c) [d] 50%") == "plain text: a/b, (c) [d] 50%"


def test_console_stream_neutralises_across_writes() -> None:
    """print() writes the text and its newline apart; pytest writes a character at a
    time: a command split over writes is still caught."""
    out = io.StringIO()
    stream = safe_text.ConsoleStream(out)
    for piece in ["ok ", "#", "#", "[x", "\n", "  ", ":", ":warning::x\n", "##", "[y\n",
                  "\x1b]52;c;ZWNobw==\x07\n", "lone \udc80\n", "fine: line\n"]:
        stream.write(piece)
    assert_console_safe(out.getvalue())
    assert out.getvalue().endswith("fine: line\n")
    assert not stream.isatty()


@pytest.mark.parametrize("probe", PROBES)
def test_json_on_a_console_is_the_same_value(probe: str) -> None:
    text = json.dumps({"k": probe, "list": [probe]}, ensure_ascii=False, indent=2)
    safe = safe_text.json_console(text)
    assert_console_safe(safe)
    assert json.loads(safe) == {"k": probe, "list": [probe]}


@pytest.mark.parametrize("probe", PROBES)
def test_markdown_text_and_code_render_as_text(probe: str) -> None:
    table = ("| a | b | c |\n|---|---|---|\n"
             f"| {safe_text.md_text(probe)} | {safe_text.md_code(probe, in_table=True)} | "
             f"{safe_text.md_inline(probe)} |\n")
    assert_markdown_safe(table, table_rows=2)
    listed = (f"- {safe_text.md_text(probe)} {safe_text.md_code(probe)} "
              f"{safe_text.md_inline(probe)}\n")
    assert_markdown_safe(listed)
    assert_markdown_safe("\n".join(safe_text.md_fenced(probe + "\n```\n<script>", "json")))


def test_markdown_text_reads_back_as_the_text() -> None:
    """Escaped, not dropped: GitHub shows the characters that were sent."""
    html = render_gfm(safe_text.md_text("![x](http://t/p.png) <b>a|b</b> *no* `c`"))
    if html is None:
        pytest.skip("cmarkgfm not installed")
    assert "![x](http://t/p.png) &lt;b&gt;a|b&lt;/b&gt; *no* `c`" in html


def test_a_code_span_cannot_be_closed_from_inside() -> None:
    assert safe_text.md_code("a`b``c") == "```a`b``c```"
    assert safe_text.md_code("`x") == "`` `x ``"
    fenced = safe_text.md_fenced("```\n<script>")
    assert fenced[0] == fenced[-1] == "````"


@pytest.mark.parametrize("probe", PROBES)
def test_github_annotations_carry_no_second_command(probe: str) -> None:
    result = FileResult(f"dir/{probe}.md", False, ({
        "code": probe, "severity": "error", "path": [probe], "line": 1, "column": 2,
        "message": probe},))
    text = render_github([result])
    assert len(text.splitlines()) == 1, text
    assert_console_safe(text, annotations=True)
