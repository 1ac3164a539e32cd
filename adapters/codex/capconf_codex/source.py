"""Reading a capconf definition source for Codex: its format and its front matter.

Why its own module: the adapter must know which keys a definition declares to translate
them into a Codex role file, and nothing more (the source bytes, the declared names and
the YAML 1.2 reading are capconf's, in _driverkit/source.py). Codex never sees this
reading: it reads the role file the adapter writes from it.
"""

from __future__ import annotations

import re

FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)


DOC_START = re.compile(r"\A---[ \t]*(?:\r\n|\r|\n)")
_LINES = re.compile(r"\r\n|\r|\n")


def auto_format(text: str, filename: str | None) -> str:
    """capconf's `format: auto` (DEF-01): the file name's extension, else Markdown when
    the first line is `---` and a later line is `---`, YAML otherwise (a YAML document
    may open with its `---` marker)."""
    name = (filename or "").lower()
    if name.endswith((".md", ".markdown")):
        return "markdown"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    lines = [line.rstrip(" \t") for line in _LINES.split(text.removeprefix("\ufeff"))]
    return "markdown" if lines[0] == "---" and "---" in lines[1:] else "yaml"
