"""The one normalisation of a block of prose the model reads: a definition's body
(DEF-01), the session's frame (PROMPT-01) and a body set by the editor (EDIT-02).

"Whitespace" is the Unicode White_Space set (``names.WHITE_SPACE``, SKILL-06's list), not
a language's own idea of it: Python's ``str.strip`` also removes U+001C..U+001F, and
JavaScript's ``trim`` also removes U+FEFF, so the prompt's bytes would depend on the
runtime's language."""

from __future__ import annotations

from capconf.simulator.core.names import WHITE_SPACE


def normalize_block(text: str) -> str:
    """Leading blank lines (lines of White_Space only) and trailing White_Space removed,
    nothing else: the first kept line keeps its indentation, and a block of only
    White_Space becomes ``""``."""
    lines = text.split("\n")
    while lines and not lines[0].strip(WHITE_SPACE):
        lines.pop(0)
    return "\n".join(lines).rstrip(WHITE_SPACE)
