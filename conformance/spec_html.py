"""``capconf spec --html FILE``: SPEC.md as one self-contained HTML page.

The page carries the linked Contents and reading paths of SPEC.md itself, and under each
requirement's heading the conformance cases that cite it (from the suite's own markers,
as ``capconf matrix`` builds them) and the golden folder of its area (from the area
package's ``Golden:`` line). It loads nothing: no script, no font, no image.

The Markdown is the subset SPEC.md uses, rendered by the small renderer below rather than
a general one: ATX headings with the explicit ``<a id>`` anchor line before them (or an
``<a id>`` inside a list item, for a term), fenced
code, pipe tables, ``-`` and numbered lists nested by indentation, block quotes,
paragraphs; inline code spans, links, ``**bold**`` and ``*italic*``. Every other character
is text: all of it is HTML-escaped, raw HTML included (only the anchor lines and the
generator's comments are read as markup), and a link's target must be an in-page anchor,
an http(s) URL or a relative path.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html import escape as _escape
from pathlib import Path

from capconf.conformance.spec_outline import ANCHOR, FENCE, HEADING, REQUIREMENT

_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def escape(text: str) -> str:
    return _escape(_CONTROL.sub("\ufffd", text))


@dataclass(frozen=True)
class Trace:
    """What the page links under each requirement."""
    cases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    golden: dict[str, tuple[str, ...]] = field(default_factory=dict)
    suite: dict[str, tuple[str, ...]] = field(default_factory=dict)
    base: str = ""  # prefix of the golden and suite links (a repository URL); "" = relative


# -- inline -------------------------------------------------------------------------------
_CODE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_MARK = "\ue000"  # a private-use character brackets a placeholder; the input's own is replaced
_TOKEN = re.compile(_MARK + r"(\d+)" + _MARK)
_INLINE_ANCHOR = re.compile(r'<a id="([A-Za-z0-9._-]+)"></a>')
_LINK = re.compile(r"\[([^\[\]]+)\]\(([^()\s]+)\)")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_ITALIC = re.compile(r"(?<![\w*\\])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])")
_ESCAPED = re.compile(r"\\([!-/:-@\[-`{-~])")
_SAFE_HREF = re.compile(r"^(#[A-Za-z0-9._-]+|https?://[^\s\"'<>]+|[A-Za-z0-9._/-]+/?)$")


def inline(text: str) -> str:
    """One paragraph's or cell's text as HTML: everything escaped, then the few inline
    forms SPEC.md uses turned into markup."""
    text = text.replace(_MARK, "\ufffd")
    tokens: list[str] = []

    def keep(html: str) -> str:
        tokens.append(html)
        return f"{_MARK}{len(tokens) - 1}{_MARK}"

    def code(m: re.Match[str]) -> str:
        body = m.group(2)
        if body.startswith(" ") and body.endswith(" ") and body.strip():
            body = body[1:-1]
        return keep(f"<code>{escape(body)}</code>")

    text = _CODE.sub(code, text)
    text = _INLINE_ANCHOR.sub(lambda m: keep(f'<span id="{escape(m.group(1))}"></span>'), text)
    text = _ESCAPED.sub(lambda m: keep(escape(m.group(1))), text)
    text = escape(text)

    def link(m: re.Match[str]) -> str:
        href = m.group(2).replace("&amp;", "&")
        if not _SAFE_HREF.match(href):
            return m.group(0)
        return f'<a href="{escape(href)}">{m.group(1)}</a>'

    text = _LINK.sub(link, text)
    text = _BOLD.sub(r"<strong>\1</strong>", text)
    text = _ITALIC.sub(r"<em>\1</em>", text)
    return _TOKEN.sub(lambda m: tokens[int(m.group(1))], text)  # tokens hold no mark


# -- blocks -------------------------------------------------------------------------------
_ITEM = re.compile(r"^(\s*)([-*]|\d+\.) (.*)$")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|") and not line.endswith("\\|"):
        line = line[:-1]
    cells, cur, in_code = [], "", 0
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "`":
            run = len(line[i:]) - len(line[i:].lstrip("`"))
            in_code = 0 if in_code == run else (in_code or run)
            cur += "`" * run
            i += run
            continue
        if ch == "\\" and i + 1 < len(line) and line[i + 1] == "|":
            cur += "|" if in_code else "\\|"
            i += 2
            continue
        if ch == "|" and not in_code:
            cells.append(cur.strip())
            cur = ""
        else:
            cur += ch
        i += 1
    cells.append(cur.strip())
    return cells


def _table(lines: tuple[str, ...]) -> str:
    head = _cells(lines[0])
    rows = [_cells(ln) for ln in lines[2:]]
    out = ["<div class=\"table\"><table>", "<thead><tr>"]
    out += [f'<th scope="col">{inline(c)}</th>' for c in head]
    out.append("</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "\n".join(out)


def _list(lines: tuple[str, ...]) -> str:
    """Items nested by the indentation of their markers; other lines continue the item
    above them."""
    items: list[tuple[int, bool, list[str]]] = []  # (indent, ordered, text lines)
    for line in lines:
        m = _ITEM.match(line)
        if m and (not items or len(m.group(1)) <= items[-1][0] + 4):
            items.append((len(m.group(1)), m.group(2)[0].isdigit(), [m.group(3)]))
        elif items:
            items[-1][2].append(line.strip())
    out: list[str] = []
    stack: list[tuple[int, str]] = []
    for indent, ordered, text in items:
        tag = "ol" if ordered else "ul"
        while stack and (indent < stack[-1][0]
                         or (indent == stack[-1][0] and tag != stack[-1][1])):
            out.append(f"</li></{stack.pop()[1]}>")
        if stack and indent == stack[-1][0]:
            out.append("</li>")
        if not stack or indent > stack[-1][0]:
            stack.append((indent, tag))
            out.append(f"<{tag}>")
        out.append(f"<li>{inline(' '.join(text))}")
    while stack:
        out.append(f"</li></{stack.pop()[1]}>")
    return "\n".join(out)


@dataclass(frozen=True)
class Block:
    kind: str  # heading, code, table, quote, list, para
    lines: tuple[str, ...] = ()
    level: int = 0  # a heading's
    anchor: str | None = None  # a heading's explicit anchor


def _blocks(lines: list[str]) -> Iterator[Block]:
    """The document's blocks, in order."""
    i = 0
    anchor: str | None = None
    while i < len(lines):
        line = lines[i]
        if not line.strip():
            i += 1
            continue
        if FENCE.match(line):
            j = i + 1
            while j < len(lines) and not FENCE.match(lines[j]):
                j += 1
            yield Block("code", tuple(lines[i + 1:j]))
            i = j + 1
            continue
        if line.startswith("<!-- ") and line.rstrip().endswith("-->"):
            i += 1
            continue
        a = ANCHOR.match(line)
        if a:
            anchor = a.group(1)
            i += 1
            continue
        h = HEADING.match(line)
        if h:
            yield Block("heading", (h.group(2),), len(h.group(1)), anchor)
            anchor = None
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1]):
            j = i + 2
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            yield Block("table", tuple(lines[i:j]))
            i = j
            continue
        if line.startswith(">"):
            j = i
            while j < len(lines) and lines[j].startswith(">"):
                j += 1
            yield Block("quote", tuple(ln[1:].strip() for ln in lines[i:j]))
            i = j
            continue
        if _ITEM.match(line) and not line.startswith(" "):
            j = i + 1
            while j < len(lines):
                nxt = lines[j]
                if not nxt.strip():
                    after = lines[j + 1] if j + 1 < len(lines) else ""
                    if after.startswith("  ") or (_ITEM.match(after) and not
                                                  after.startswith(" ")):
                        j += 1
                        continue
                    break
                if (FENCE.match(nxt) or HEADING.match(nxt) or nxt.startswith("|")
                        or ANCHOR.match(nxt)):
                    break
                j += 1
            yield Block("list", tuple(ln for ln in lines[i:j] if ln.strip()))
            i = j
            continue
        j = i + 1
        while j < len(lines) and lines[j].strip() and not (
                FENCE.match(lines[j]) or HEADING.match(lines[j]) or ANCHOR.match(lines[j])
                or (lines[j].startswith("|") and j + 1 < len(lines)
                    and _TABLE_RULE.match(lines[j + 1]))
                or (_ITEM.match(lines[j]) and not lines[j].startswith(" "))):
            j += 1
        yield Block("para", tuple(lines[i:j]))
        i = j


def _trace(rid: str, trace: Trace) -> str:
    cases = trace.cases.get(rid, ())
    parts = []
    if cases:
        listed = "".join(f"<li><code>{escape(c)}</code></li>" for c in cases)
        suites = ", ".join(_path_link(p, trace.base) for p in trace.suite.get(rid, ()))
        where = f" (in {suites})" if suites else ""
        parts.append(f'<details class="cases"><summary>{len(cases)} conformance '
                     f'case{"s" if len(cases) != 1 else ""}{where}</summary>'
                     f"<ul>{listed}</ul></details>")
    else:
        parts.append('<p class="cases">No conformance case cites it.</p>')
    golden = trace.golden.get(rid, ())
    if golden:
        parts.append('<p class="golden">Golden: '
                     + ", ".join(_path_link(p, trace.base) for p in golden) + "</p>")
    return f'<div class="trace" id="trace-{escape(rid)}">' + "".join(parts) + "</div>"


def _path_link(path: str, base: str) -> str:
    href = base + path if _SAFE_HREF.match(base + path) else ""
    label = f"<code>{escape(path)}</code>"
    return f'<a href="{escape(href)}">{label}</a>' if href else label


CSS = """
:root { color-scheme: light dark; --bg: #fff; --fg: #1b1b1b; --muted: #595959;
  --line: #c8c8c8; --head: #f2f2f2; --focus: #1a56db; --link: #1a4fb5; }
@media (prefers-color-scheme: dark) {
  :root { --bg: #161719; --fg: #e8e8e8; --muted: #b0b0b0; --line: #4a4a4a;
    --head: #24262a; --focus: #8ab4ff; --link: #9cc0ff; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 62rem; padding: 1rem 1.5rem 4rem; background: var(--bg);
  color: var(--fg); font: 16px/1.55 system-ui, -apple-system, "Segoe UI", sans-serif; }
a { color: var(--link); }
a:focus-visible, summary:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
:target { outline: 3px solid var(--focus); outline-offset: 4px; }
[id] { scroll-margin-top: .75rem; }
.skip { position: absolute; left: -999px; }
.skip:focus { left: 1rem; top: 1rem; background: var(--bg); padding: .5rem; z-index: 2; }
h1 { font-size: 1.7rem; } h2 { margin-top: 2.5rem; border-bottom: 1px solid var(--line); }
h3, h4 { margin-top: 1.8rem; }
a.self { margin-left: .4rem; color: var(--muted); text-decoration: none; font-weight: normal; }
code, pre { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: .92em; }
pre { white-space: pre-wrap; word-break: break-word; padding: .5rem; background: var(--head);
  border: 1px solid var(--line); }
blockquote { margin: .5rem 0; padding: .25rem .75rem; border-left: 4px solid var(--line);
  color: var(--muted); }
div.table { overflow-x: auto; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .94em; }
th, td { border: 1px solid var(--line); padding: .3rem .5rem; text-align: left;
  vertical-align: top; }
thead th { background: var(--head); }
.trace { font-size: .9em; color: var(--muted); margin: -.25rem 0 .75rem;
  border-left: 3px solid var(--line); padding-left: .6rem; }
.trace p, .trace details { margin: .15rem 0; }
.trace ul { columns: 2 18rem; margin: .25rem 0; }
@media print { .skip { display: none; } a { color: inherit; text-decoration: none; }
  details.cases > ul { display: none; } pre { white-space: pre-wrap; } }
"""


def render_spec_html(text: str, trace: Trace | None = None) -> str:
    trace = trace or Trace()
    lines = text.replace("\r\n", "\n").split("\n")
    title = "capconf specification"
    body: list[str] = []
    for block in _blocks(lines):
        if block.kind == "heading":
            level, heading, anchor = block.level, block.lines[0], block.anchor
            if level == 1:
                title = heading
            ident = f' id="{escape(anchor)}"' if anchor else ""
            self_link = (f'<a class="self" href="#{escape(anchor)}" aria-label="link to this '
                         f'section">#</a>' if anchor else "")
            body.append(f"<h{level}{ident}>{inline(heading)}{self_link}</h{level}>")
            m = REQUIREMENT.match(heading)
            if m:
                body.append(_trace(m.group(1), trace))
        elif block.kind == "code":
            body.append(f"<pre><code>{escape(chr(10).join(block.lines))}</code></pre>")
        elif block.kind == "table":
            body.append(_table(block.lines))
        elif block.kind == "quote":
            body.append(f"<blockquote><p>{inline(' '.join(block.lines))}</p></blockquote>")
        elif block.kind == "list":
            body.append(_list(block.lines))
        else:
            body.append(f"<p>{inline(' '.join(ln.strip() for ln in block.lines))}</p>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'\">",
        f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
        '<a class="skip" href="#contents">Skip to the contents</a>', "<main>",
        *body, "</main>", "</body>", "</html>", ""])


# -- where the trace comes from -----------------------------------------------------------


def _ids(text: str) -> list[str]:
    """``KB-01..08 APPR-06`` -> [KB-01, ..., KB-08, APPR-06]."""
    ids = []
    for prefix, first, last in re.findall(r"([A-Z]+)-(\d+)(?:\.\.(?:[A-Z]+-)?(\d+))?", text):
        ids += [f"{prefix}-{n:02d}" for n in range(int(first), int(last or first) + 1)]
    return ids


def area_links() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """Requirement -> golden folders and suite files, from each simulator area package's
    ``Requirements:``, ``Golden:`` and ``Suite:`` lines (tests/project/test_layout.py
    checks those lines name real folders and files)."""
    from importlib.resources import files

    # read as text, never imported: the suite does not depend on the reference
    areas = Path(str(files("capconf"))) / "simulator"
    golden: dict[str, list[str]] = {}
    suite: dict[str, list[str]] = {}
    for init in sorted(areas.glob("*/__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        fields = dict(re.findall(r"^(Requirements|Golden|Suite): (.+)$", doc, re.M))
        for rid in _ids(fields.get("Requirements", "")):
            for name, into in (("Golden", golden), ("Suite", suite)):
                for path in fields.get(name, "").split():
                    if "/" in path and path not in into.setdefault(rid, []):
                        into[rid].append(path)
    return ({k: tuple(v) for k, v in golden.items()}, {k: tuple(v) for k, v in suite.items()})


def find_spec() -> Path | None:
    """SPEC.md of the source tree this capconf runs from, else of the current folder."""
    from capconf.conformance.locations import package_file

    for candidate in (Path(str(package_file())).resolve().parent / "SPEC.md", Path("SPEC.md")):
        if candidate.is_file():
            return candidate
    return None


def cmd_spec(ns: argparse.Namespace) -> int:
    from capconf.conformance.cli_files import InputError, read_input_text, write_output
    from capconf.conformance.matrix import build_matrix

    source = Path(ns.spec) if ns.spec else find_spec()
    if source is None:
        print("capconf spec: SPEC.md not found (it is in the source tree and the sdist, not "
              "the wheel); pass --spec PATH", file=sys.stderr)
        return 2
    try:
        text = read_input_text(str(source), "specification", 16 * 1024 * 1024)
        cases = {row.id: row.cases for row in build_matrix()}
        golden, suite = area_links()
        page = render_spec_html(text, Trace(cases, golden, suite, ns.base))
        write_output(ns.html, page, "page")
    except InputError as exc:
        print(f"capconf spec: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {ns.html} ({len(page):,} bytes) from {source}", file=sys.stderr)
    return 0


def add_spec_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    spec = sub.add_parser("spec", help="write SPEC.md as one self-contained HTML page, each "
                          "requirement with its cases and golden folder")
    spec.add_argument("--html", required=True, metavar="FILE", help="the page to write")
    spec.add_argument("--spec", help="the SPEC.md to render (default: the source tree's)")
    spec.add_argument("--base", default="",
                      help="prefix of the golden and suite links, e.g. a repository URL "
                           "ending in '/' (default: relative to the page)")


SPEC_HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {"spec": cmd_spec}
