"""Text leaving capconf, neutralised for where it goes.

capconf runs in other people's CI and prints what an implementation under test, a report
file or a definition file says; each may be hostile. What a destination would interpret
is made inert here, one function per destination, and nowhere else:

- a console or CI log (``console``, ``console_value``, ``ConsoleStream``): a GitHub
  runner executes a line whose first non-blank characters are ``::`` (``::add-mask::``,
  ``::stop-commands::``) and, in its older syntax, ``##[`` anywhere in a line; a terminal
  obeys escape sequences (screen clear, window title, an OSC 52 clipboard write). Control
  characters, bidi overrides, line separators and lone surrogates become visible escapes
  (``\\x1b``, ``\\u202e``); a leading ``::`` and every ``##[`` get one character escaped.
- JSON printed on a console (``json_console``): the same characters as JSON escapes,
  so the output still parses to the same value.
- Markdown (``md_text``, ``md_code``): text stays text -- no raw HTML, images, links,
  emphasis, headings, table cells or rows; a code span cannot be closed by a backtick.
- GitHub workflow annotations (``github_data``, ``github_property``): the runner's own
  escapes (``%``, CR, LF; ``:`` and ``,`` in properties), plus the above.

The escapes are visible on purpose: a reader sees that something odd was there.
"""

from __future__ import annotations

import json
import re
from typing import IO, Any

# Characters no destination shows as themselves: C0 controls (but tab and newline, which
# each function decides on), DEL, C1 controls, the bidi embeddings, overrides and
# isolates (a "Trojan Source" reordering), line/paragraph separators, and lone
# surrogates (which cannot even be encoded as UTF-8).
_UNSAFE = ("\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
           "\u2028\u2029\ud800-\udfff\ufeff")
_UNSAFE_KEEP_LINES = re.compile(f"[{_UNSAFE}]")
_UNSAFE_ONE_LINE = re.compile(f"[{_UNSAFE}\t\n]")
_LEGACY_COMMAND = re.compile(r"##\[")
_LEADING_COMMAND = re.compile(r"^(\s*):", re.MULTILINE)


def _escape(char: str) -> str:
    code = ord(char)
    if char == "\n":
        return "\\n"
    if char == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _escape_match(match: re.Match[str]) -> str:
    return _escape(match.group(0))


def escape_controls(text: str, keep_lines: bool = True) -> str:
    """Every unsafe character as a visible escape; tab and newline kept when
    ``keep_lines``."""
    pattern = _UNSAFE_KEEP_LINES if keep_lines else _UNSAFE_ONE_LINE
    return pattern.sub(_escape_match, text)


def _no_commands(text: str) -> str:
    """No line of ``text`` is a workflow command: a line's first non-blank ``:`` and the
    ``[`` of every ``##[`` are escaped."""
    text = _LEGACY_COMMAND.sub("#\\\\x23[", text)
    return _LEADING_COMMAND.sub(lambda m: m.group(1) + "\\x3a", text)


def console(text: str) -> str:
    """Lines of text for a terminal or CI log: newlines and tabs kept, every other
    control escaped, and no line a workflow command."""
    return _no_commands(escape_controls(str(text), keep_lines=True))


def console_value(value: Any) -> str:
    """One value inside a console line: on one line (newlines and tabs escaped too), and
    not a workflow command even where it starts a line."""
    return _no_commands(escape_controls(str(value), keep_lines=False))


def file_name(name: str) -> str:
    """A file name as it is on disk, for a console or any other text: bytes that are
    not UTF-8 (which Python holds as the surrogates U+DC80-U+DCFF, `surrogateescape`)
    shown as ``\\xNN``, the bytes themselves, rather than as a surrogate no reader knows;
    then neutralised like any value (``console_value``)."""
    try:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that is no escaped byte: console_value shows it
        shown = name
    return console_value(shown)


def is_utf8_name(name: str) -> bool:
    """Whether a file name is valid UTF-8, so a JSON string can carry it."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_JSON_UNSAFE = re.compile(f"[{_UNSAFE}]|##\\[")


def json_console(text: str) -> str:
    """JSON text (as ``json.dumps`` writes it) for a console: the unsafe characters that
    ``ensure_ascii=False`` leaves raw, and the ``[`` of ``##[``, as ``\\uXXXX`` escapes.
    They can only occur inside strings, so the JSON still parses to the same value."""
    def one(match: re.Match[str]) -> str:
        found = match.group(0)
        if found == "##[":
            return "##\\u005b"
        return f"\\u{ord(found):04x}"
    return _JSON_UNSAFE.sub(one, text)


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def json_dumps_encodable(value: Any, ensure_ascii: bool = True, **options: Any) -> str:
    """``json.dumps`` for a file: a lone surrogate (which UTF-8 cannot encode, and which
    a reader of the file would refuse) is written as the visible text ``\\ud800`` in
    its string instead. Anything else gives exactly ``json.dumps``' bytes."""
    text = json.dumps(value, ensure_ascii=False, **options)
    if not _LONE_SURROGATE.search(text):
        return text if not ensure_ascii else json.dumps(value, ensure_ascii=True, **options)
    text = _LONE_SURROGATE.sub(lambda m: f"\\\\u{ord(m.group(0)):04x}", text)
    return json.dumps(json.loads(text), ensure_ascii=ensure_ascii, **options)


# -- Markdown ---------------------------------------------------------------------------

# what Markdown (GFM, with GitHub's math) makes markup of inside a line: HTML and
# entities (< > &), links and images ([ ] !), code spans and emphasis (` * _ ~), table
# cells (|), math ($), and the backslash that would escape the character after the
# value. Block syntax (#, -, >, 1.) only counts at a line's start, where no value goes.
_MD_PUNCTUATION = re.compile(r"[\\`*_~\[\]<>&|!$]")


# GFM links bare URLs by itself (extended autolinks); an escaped character after the
# scheme or after ``www`` stops it (a bare e-mail address stays a mailto: link)
_MD_AUTOLINK = re.compile(r"(?i)(?<=\bhttp)(s?):|(?<=\bftp):|(?<=\bwww)\.")


def md_text(value: Any) -> str:
    """Untrusted text inline in Markdown (a paragraph, a list item, a table cell): on
    one line, every character Markdown would read as markup backslash-escaped
    (CommonMark allows it for any ASCII punctuation), so no HTML, link, image,
    emphasis, code span or cell border survives; control characters as visible
    escapes."""
    text = escape_controls(str(value), keep_lines=False)
    text = _MD_PUNCTUATION.sub(lambda m: "\\" + m.group(0), text)
    return _MD_AUTOLINK.sub(lambda m: (m.group(1) or "") + "\\" + m.group(0)[-1], text)


def md_code(value: Any, in_table: bool = False) -> str:
    """Untrusted text as an inline code span: a fence of more backticks than the
    longest run inside (a backtick cannot close it), padded when the text starts or
    ends with one, on one line; in a table cell a ``|`` escaped (GFM splits cells before
    it parses code spans)."""
    text = escape_controls(str(value), keep_lines=False)
    if in_table:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith(("`", " ")) or text.endswith(("`", " ")) or not text else ""
    return f"{fence}{pad}{text}{pad}{fence}"


_QUOTED = re.compile(r"`([^`\n]+)`")


def md_inline(value: Any) -> str:
    """Text in capconf's own convention of quoting values in backticks (a cause such as
    ``tool.call`` of ``Task`` answered ``tool_not_mounted``): each quoted part a code
    span (``md_code``), the rest ``md_text``. Whatever the parts hold, they stay text."""
    text, out, at = str(value), [], 0
    for match in _QUOTED.finditer(text):
        out += [md_text(text[at:match.start()]), md_code(match.group(1))]
        at = match.end()
    return "".join([*out, md_text(text[at:])])


def md_fenced(text: str, info: str = "") -> list[str]:
    """A fenced code block around untrusted lines: a fence longer than any backtick run
    inside, so the text cannot close it; controls escaped, lines kept."""
    body = escape_controls(text, keep_lines=True)
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + info, *body.split("\n"), fence]


# -- GitHub workflow annotations ----------------------------------------------------------

def github_data(text: str) -> str:
    """The message of ``::error ...::MESSAGE``: the runner's escapes (``%``, CR, LF), other
    controls visible, and ``##[`` broken (the runner's older syntax matches it anywhere
    in a line)."""
    text = str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return _LEGACY_COMMAND.sub("#\\\\x23[", escape_controls(text, keep_lines=False))


def github_property(text: str) -> str:
    """A property value (``file=``, ``title=``): also ``:`` and ``,`` escaped."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


# -- the console stream ---------------------------------------------------------------------

class ConsoleStream:
    """A text stream that passes everything written through ``console``, line by line,
    across writes (``print`` writes a line and its newline separately; pytest writes
    progress characters one at a time). Installed over ``sys.stdout`` and ``sys.stderr``
    by the ``capconf`` command, so no print of any command reaches the terminal or CI log
    unneutralised. ``raw`` is the stream underneath, for output that is itself a
    neutralised format (``--format github`` annotations)."""

    def __init__(self, raw: IO[str]) -> None:
        self.raw = raw
        self._at_start = True  # nothing but blanks written on the current line yet
        self._tail = ""  # the current line's last two characters (for a split ``##[``)

    def write(self, text: str) -> int:
        out = []
        for piece in re.split("(\n)", escape_controls(str(text), keep_lines=True)):
            if piece == "\n":
                out.append(piece)
                self._at_start, self._tail = True, ""
                continue
            if not piece:
                continue
            if self._at_start:
                stripped = piece.lstrip()
                if stripped:
                    lead = len(piece) - len(stripped)
                    if stripped.startswith(":"):
                        piece = piece[:lead] + "\\x3a" + stripped[1:]
                    self._at_start = False
            # a ``##[`` split across writes: the part already written cannot change,
            # so the escape falls on the part that completes it
            if self._tail.endswith("##") and piece.startswith("["):
                piece = "\\x5b" + piece[1:]
            elif self._tail.endswith("#") and piece.startswith("#["):
                piece = "#\\x5b" + piece[2:]
            piece = _LEGACY_COMMAND.sub("#\\\\x23[", piece)
            self._tail = (self._tail + piece)[-2:]
            out.append(piece)
        self.raw.write("".join(out))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self.raw.flush()

    def isatty(self) -> bool:
        """Never a terminal to whoever writes: pytest then writes no colour and no
        carriage-return rewrites, which would reach the reader as visible escapes."""
        return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


def raw_stream(stream: Any) -> Any:
    """The stream under a ``ConsoleStream`` (itself otherwise)."""
    return stream.raw if isinstance(stream, ConsoleStream) else stream
