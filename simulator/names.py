"""Name comparison rules shared by every registry lookup.

Case-insensitivity is ASCII-only (A-Z <-> a-z). Unicode case mapping differs between
language runtimes (Python's ``str.lower`` maps KELVIN SIGN U+212A to ``k``; JavaScript's
``toLowerCase`` maps dotted capital I to two code points) and would let look-alike names
such as ``\u212ab_search`` resolve to ``kb_search``. ASCII folding is identical in every
language, so every conforming implementation resolves the same names.
"""

from __future__ import annotations

_ASCII_FOLD = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_fold(name: str) -> str:
    return name.translate(_ASCII_FOLD)


def split_names(text: str) -> list[tuple[str, int]]:
    """Split a comma-separated name string into (trimmed name, 0-based column offset).

    Empty entries are kept as "" so the caller can report them where they are.
    """
    out: list[tuple[str, int]] = []
    start = 0
    for piece in text.split(","):
        stripped = piece.strip(" \t")
        offset = start + (len(piece) - len(piece.lstrip(" \t")))
        out.append((stripped, offset))
        start += len(piece) + 1
    return out
