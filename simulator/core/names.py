"""Name comparison rules shared by every registry lookup.

Case-insensitivity is ASCII-only (A-Z <-> a-z). Unicode case mapping differs between
language runtimes (Python's ``str.lower`` maps KELVIN SIGN U+212A to ``k``; JavaScript's
``toLowerCase`` maps dotted capital I to two code points) and would let look-alike names
such as ``\u212ab_search`` resolve to ``kb_search``. ASCII folding is identical in every
language, so every conforming implementation resolves the same names.
"""

from __future__ import annotations

import re

_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_fold(name: str) -> str:
    return name.translate(_ASCII_FOLD)


def trim_name(name: str) -> str:
    """A name as written, without surrounding spaces and tabs (TOOL-02): the trimming of
    every name a registry looks up, declared, given by the world or by the model (an
    entry of a comma-separated string also loses its line breaks, DEF-03). Python's
    ``str.strip`` would also drop a no-break space, an ideographic space and line breaks,
    and let ``"\u3000pdf"`` stand for ``pdf``."""
    return name.strip(" \t")


def split_names(text: str) -> list[tuple[str, int]]:
    """Split a comma-separated name string into (trimmed name, 0-based column offset).

    Empty entries are kept as "" so the caller can report them where they are.
    """
    out: list[tuple[str, int]] = []
    start = 0
    for piece in text.split(","):
        stripped = trim_name(piece)
        offset = start + (len(piece) - len(piece.lstrip(" \t")))
        out.append((stripped, offset))
        start += len(piece) + 1
    return out


# The Unicode White_Space property, spelled out: every language's "whitespace" differs
# (Python's str.split also splits on U+001C..U+001F; JavaScript's \s adds U+FEFF), so
# the spec names this exact set and every search tool splits its query on it.
WHITE_SPACE = ("\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
               "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_WHITE_SPACE_RE = re.compile("[" + re.escape(WHITE_SPACE) + "]+")


def split_terms(query: str) -> list[str]:
    """Split a search query into terms on runs of Unicode White_Space characters."""
    return [t for t in _WHITE_SPACE_RE.split(query) if t]
