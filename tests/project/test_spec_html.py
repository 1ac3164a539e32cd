"""`capconf spec --html`: SPEC.md as one page, everything escaped, each requirement with
its cases and golden folder, every in-page link landing."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from capconf.conformance.requirements import requirements
from capconf.conformance.spec_html import Trace, area_links, inline, render_spec_html

REPO = Path(__file__).resolve().parent.parent.parent
SPEC = (REPO / "SPEC.md").read_text(encoding="utf-8")


class _Page(HTMLParser):
    """Every id, every href, every tag, and the text outside tags."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: list[str] = []
        self.hrefs: list[str] = []
        self.tags: set[str] = set()
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        for name, value in attrs:
            if name == "id" and value:
                self.ids.append(value)
            if name in ("href", "src") and value is not None:
                self.hrefs.append(value)


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


@pytest.fixture(scope="module")
def page() -> str:
    golden, suite = area_links()
    cases = {rid: (f"{rid.lower()}.case-one", f"{rid.lower()}.case-two") for rid in requirements()}
    return render_spec_html(SPEC, Trace(cases, golden, suite))


def test_every_requirement_and_section_is_an_anchor_and_every_link_lands(page: str) -> None:
    parsed = _parse(page)
    assert len(parsed.ids) == len(set(parsed.ids))
    assert set(requirements()) <= set(parsed.ids)
    local = [h[1:] for h in parsed.hrefs if h.startswith("#")]
    assert {"TOOL-02", "sec-4", "reading-paths"} <= set(local)
    assert sorted(set(local) - set(parsed.ids)) == []


def test_each_requirement_shows_its_cases_and_golden_folder(page: str) -> None:
    block = page[page.index('id="TOOL-02"'):page.index('id="TOOL-03"')]
    assert "tool-02.case-one" in block and "tool-02.case-two" in block
    assert 'href="golden/definition/"' in block
    assert "conformance/suite/" in block or "conformance/cases/" in block
    # an area's golden folder that does not exist yet is not linked
    executors = page[page.index('id="BIN-01"'):page.index('id="BIN-02"')]
    assert "Golden:" not in executors


def test_the_page_is_self_contained(page: str) -> None:
    parsed = _parse(page)
    assert not parsed.tags & {"script", "img", "link", "iframe", "object", "embed", "form"}
    assert not [h for h in parsed.hrefs if h.startswith(("http:", "https:", "//"))]
    assert "default-src 'none'" in page


def test_everything_is_escaped() -> None:
    hostile = ("# T\n\n<a id=\"x\"></a>\n## 1. S <script>alert(1)</script>\n\n"
               "text <img src=x onerror=alert(1)> and `<b>` and [l](javascript:alert(1))\n\n"
               "| a | <i>b</i> |\n|---|---|\n| `x\\|y` | \"q\" & 'r' |\n\n"
               "```\n</pre><script>x</script>\n```\n\n- <u>item</u>\n  - nested\n")
    html = render_spec_html(hostile)
    parsed = _parse(html)
    assert parsed.tags & {"script", "img", "i", "b", "u"} == set()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "javascript:" not in " ".join(parsed.hrefs)
    assert "<code>x|y</code>" in html and "&quot;q&quot; &amp; &#x27;r&#x27;" in html


@pytest.mark.parametrize(("source", "html"), [
    ("`a` **b** *c*", "<code>a</code> <strong>b</strong> <em>c</em>"),
    ("``- `x` ``", "<code>- `x` </code>"),  # one space is stripped only from both ends
    ("[1.2 The `capconf` files](#sec-1.2)",
     '<a href="#sec-1.2">1.2 The <code>capconf</code> files</a>'),
    ("memory_read and a*b*c and 2 * 3", "memory_read and a*b*c and 2 * 3"),
    ("a \\| b", "a | b"),
])
def test_the_inline_subset(source: str, html: str) -> None:
    assert inline(source) == html


def test_lists_nest_and_tables_keep_their_cells() -> None:
    html = render_spec_html("- one\n  more\n  - two\n- three\n\n1. a\n2. b\n")
    assert re.sub(r"\s+", "", html[html.index("<ul>"):html.rindex("</ol>") + 5]) == (
        "<ul><li>onemore<ul><li>two</li></ul></li><li>three</li></ul>"
        "<ol><li>a</li><li>b</li></ol>")
    table = render_spec_html("| a | b |\n|---|---|\n| `x \\| y` | z |\n")
    assert "<td><code>x | y</code></td><td>z</td>" in table


@pytest.mark.slow
def test_the_command_writes_the_page_and_refuses_what_it_cannot_use(tmp_path: Path) -> None:
    out = tmp_path / "spec.html"
    proc = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "spec", "--html",
                           str(out)], capture_output=True, text=True, timeout=600, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-2000:]
    html = out.read_text(encoding="utf-8")
    assert 'id="TOOL-02"' in html and "conformance case" in html
    fifo_spec = subprocess.run([sys.executable, "-m", "capconf.conformance.cli", "spec",
                                "--html", str(out), "--spec", str(tmp_path)],
                               capture_output=True, text=True, timeout=600, cwd=REPO)
    assert fifo_spec.returncode == 2 and str(tmp_path) in fifo_spec.stderr
    assert "Traceback" not in fifo_spec.stderr
