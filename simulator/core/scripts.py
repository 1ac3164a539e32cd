"""The Unicode Script property for the characters a name may hold, as a range table.

A name's letters must come from one script, or from one of the CJK combinations UTS #39
calls "highly restrictive" (``core.unicode_names``). Python's ``unicodedata`` has no Script
property, and a dependency for one lookup would not earn its place, so this module holds
the property as data: ranges of UAX #24 Script values (ISO 15924 codes) for the letters,
combining marks and decimal digits of the *recommended* scripts of UTS #31 Table 5, plus
``Zyyy`` (Common) and ``Zinh`` (Inherited). A code point outside every range is of a
limited-use or excluded script, or is not a letter, mark or digit at all.

``RANGES`` is generated (``python -m capconf.simulator.core.scripts``, which needs
``fonttools``: the test extras pin it, the simulator never imports it) and checked by
``tests/core/test_unicode_names.py`` on a Python whose ``unicodedata`` is the table's
version (``TABLE_UNICODE_VERSION``), since that picks which characters are name characters.
"""

from __future__ import annotations

import bisect
import sys
import unicodedata

COMMON = "Zyyy"
INHERITED = "Zinh"

# UTS #31 Table 5 (Recommended Scripts), ISO 15924 codes.
RECOMMENDED: frozenset[str] = frozenset({
    "Arab", "Armn", "Beng", "Bopo", "Cyrl", "Deva", "Ethi", "Geor", "Grek", "Gujr", "Guru",
    "Hang", "Hani", "Hebr", "Hira", "Kana", "Khmr", "Knda", "Laoo", "Latn", "Mlym", "Mymr",
    "Orya", "Sinh", "Taml", "Telu", "Thaa", "Thai", "Tibt",
})

# (first code point, last code point, script); sorted, disjoint. BEGIN GENERATED
TABLE_UNICODE_VERSION = "14.0.0"  # the unicodedata that chose the name characters
RANGES: tuple[tuple[int, int, str], ...] = (
    (0x30, 0x39, 'Zyyy'), (0x41, 0x2AF, 'Latn'), (0x2B9, 0x2EE, 'Zyyy'),
    (0x300, 0x36F, 'Zinh'), (0x370, 0x3E1, 'Grek'), (0x3F3, 0x3FF, 'Grek'),
    (0x400, 0x484, 'Cyrl'), (0x485, 0x486, 'Zinh'), (0x487, 0x52F, 'Cyrl'),
    (0x531, 0x588, 'Armn'), (0x591, 0x5F2, 'Hebr'), (0x610, 0x63F, 'Arab'),
    (0x640, 0x640, 'Zyyy'), (0x641, 0x64A, 'Arab'), (0x64B, 0x655, 'Zinh'),
    (0x656, 0x66F, 'Arab'), (0x670, 0x670, 'Zinh'), (0x671, 0x6FF, 'Arab'),
    (0x750, 0x77F, 'Arab'), (0x780, 0x7B1, 'Thaa'), (0x870, 0x8FF, 'Arab'),
    (0x900, 0x950, 'Deva'), (0x951, 0x954, 'Zinh'), (0x955, 0x97F, 'Deva'),
    (0x980, 0x9FE, 'Beng'), (0xA01, 0xA75, 'Guru'), (0xA81, 0xAFF, 'Gujr'),
    (0xB01, 0xB71, 'Orya'), (0xB82, 0xBEF, 'Taml'), (0xC00, 0xC6F, 'Telu'),
    (0xC80, 0xCF2, 'Knda'), (0xD00, 0xD7F, 'Mlym'), (0xD81, 0xDF3, 'Sinh'),
    (0xE01, 0xE59, 'Thai'), (0xE81, 0xEDF, 'Laoo'), (0xF00, 0xFC6, 'Tibt'),
    (0x1000, 0x109D, 'Mymr'), (0x10A0, 0x10FF, 'Geor'), (0x1100, 0x11FF, 'Hang'),
    (0x1200, 0x138F, 'Ethi'), (0x1780, 0x17E9, 'Khmr'), (0x1AB0, 0x1ACE, 'Zinh'),
    (0x1C80, 0x1C88, 'Cyrl'), (0x1C90, 0x1CBF, 'Geor'), (0x1CD0, 0x1CE0, 'Zinh'),
    (0x1CE1, 0x1CE1, 'Zyyy'), (0x1CE2, 0x1CE8, 'Zinh'), (0x1CE9, 0x1CEC, 'Zyyy'),
    (0x1CED, 0x1CED, 'Zinh'), (0x1CEE, 0x1CF3, 'Zyyy'), (0x1CF4, 0x1CF4, 'Zinh'),
    (0x1CF5, 0x1CF7, 'Zyyy'), (0x1CF8, 0x1CF9, 'Zinh'), (0x1CFA, 0x1CFA, 'Zyyy'),
    (0x1D00, 0x1D25, 'Latn'), (0x1D26, 0x1D2A, 'Grek'), (0x1D2B, 0x1D2B, 'Cyrl'),
    (0x1D2F, 0x1D9A, 'Latn'), (0x1DC0, 0x1DFF, 'Zinh'), (0x1E00, 0x1EFF, 'Latn'),
    (0x1F00, 0x1FFC, 'Grek'), (0x20D0, 0x20F0, 'Zinh'), (0x2132, 0x2184, 'Latn'),
    (0x2C60, 0x2C7F, 'Latn'), (0x2D00, 0x2D2D, 'Geor'), (0x2D80, 0x2DDE, 'Ethi'),
    (0x2DE0, 0x2DFF, 'Cyrl'), (0x2E2F, 0x2E2F, 'Zyyy'), (0x3005, 0x3005, 'Hani'),
    (0x3006, 0x3006, 'Zyyy'), (0x302A, 0x302D, 'Zinh'), (0x302E, 0x302F, 'Hang'),
    (0x3031, 0x3035, 'Zyyy'), (0x303B, 0x303B, 'Hani'), (0x303C, 0x303C, 'Zyyy'),
    (0x3041, 0x3096, 'Hira'), (0x3099, 0x309A, 'Zinh'), (0x309D, 0x309E, 'Hira'),
    (0x30A1, 0x30FA, 'Kana'), (0x30FC, 0x30FC, 'Zyyy'), (0x30FD, 0x30FE, 'Kana'),
    (0x3105, 0x31BF, 'Bopo'), (0x31F0, 0x31FF, 'Kana'), (0x3400, 0x9FFF, 'Hani'),
    (0xA640, 0xA69F, 'Cyrl'), (0xA717, 0xA71F, 'Zyyy'), (0xA722, 0xA787, 'Latn'),
    (0xA788, 0xA788, 'Zyyy'), (0xA78B, 0xA7FF, 'Latn'), (0xA8E0, 0xA8FF, 'Deva'),
    (0xA960, 0xA97C, 'Hang'), (0xA9CF, 0xA9CF, 'Zyyy'), (0xA9E0, 0xA9FE, 'Mymr'),
    (0xAA60, 0xAA7F, 'Mymr'), (0xAB01, 0xAB2E, 'Ethi'), (0xAB30, 0xAB64, 'Latn'),
    (0xAB65, 0xAB65, 'Grek'), (0xAB66, 0xAB68, 'Latn'), (0xAC00, 0xD7FB, 'Hang'),
    (0xFA0E, 0xFA29, 'Hani'), (0xFB1E, 0xFB1E, 'Hebr'), (0xFE00, 0xFE2D, 'Zinh'),
    (0xFE2E, 0xFE2F, 'Cyrl'), (0xFE73, 0xFE73, 'Arab'), (0x101FD, 0x101FD, 'Zinh'),
    (0x102E0, 0x102E0, 'Zinh'), (0x10780, 0x10780, 'Latn'), (0x1133B, 0x1133B, 'Zinh'),
    (0x16FE3, 0x16FE3, 'Hani'), (0x16FF0, 0x16FF1, 'Hani'), (0x1AFF0, 0x1B000, 'Kana'),
    (0x1B001, 0x1B11F, 'Hira'), (0x1B120, 0x1B122, 'Kana'), (0x1B150, 0x1B152, 'Hira'),
    (0x1B164, 0x1B167, 'Kana'), (0x1CF00, 0x1CF46, 'Zinh'), (0x1D165, 0x1D166, 'Zyyy'),
    (0x1D167, 0x1D169, 'Zinh'), (0x1D16D, 0x1D172, 'Zyyy'), (0x1D17B, 0x1D1AD, 'Zinh'),
    (0x1D242, 0x1D244, 'Grek'), (0x1DF00, 0x1DF1E, 'Latn'), (0x1E7E0, 0x1E7FE, 'Ethi'),
    (0x20000, 0x3134A, 'Hani'), (0xE0100, 0xE01EF, 'Zinh'),
)
# END GENERATED

_STARTS = [r[0] for r in RANGES]


def script_of(char: str) -> str | None:
    """The Script of a name character (a letter, mark or digit that NFKC keeps): a
    recommended script, Common or Inherited; None for a limited-use or excluded script.
    Ranges bridge gaps without name characters, so ask only about name characters."""
    cp = ord(char)
    index = bisect.bisect_right(_STARTS, cp) - 1
    if index >= 0 and RANGES[index][0] <= cp <= RANGES[index][1]:
        return RANGES[index][2]
    return None


def _candidate(char: str) -> bool:
    category = unicodedata.category(char)
    return (category[0] in "LM" or category == "Nd") and \
        unicodedata.normalize("NFKC", char) == char


def generate() -> list[tuple[int, int, str]]:
    """Merge runs of name characters of one script; a gap is bridged only when it holds no
    name character at all, so the table answers exactly for every name character."""
    from fontTools import unicodedata as fu  # type: ignore[import-not-found,import-untyped,unused-ignore]

    runs: list[list[int | str]] = []
    for cp in range(0x110000):
        char = chr(cp)
        if not _candidate(char):
            continue
        script = str(fu.script(char))
        if runs and runs[-1][2] == script:
            runs[-1][1] = cp
        else:
            runs.append([cp, cp, script])
    keep = RECOMMENDED | {COMMON, INHERITED}
    return [(int(a), int(b), str(s)) for a, b, s in runs if s in keep]


def _render(ranges: list[tuple[int, int, str]]) -> str:
    lines = ["RANGES: tuple[tuple[int, int, str], ...] = ("]
    row: list[str] = []
    for first, last, script in ranges:
        row.append(f"(0x{first:X}, 0x{last:X}, {script!r}),")
        if len(row) == 3:
            lines.append("    " + " ".join(row))
            row = []
    if row:
        lines.append("    " + " ".join(row))
    lines.append(")")
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover - regeneration needs fonttools
    path = __file__
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    head, rest = text.split("# (first code point, last code point, script); sorted, disjoint. "
                            "BEGIN GENERATED\n", 1)
    _, tail = rest.split("# END GENERATED\n", 1)
    table = _render(generate())
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(head + "# (first code point, last code point, script); sorted, disjoint. "
                     "BEGIN GENERATED\nTABLE_UNICODE_VERSION = "
                     f"\"{unicodedata.unidata_version}\"  # the unicodedata that chose the name "
                     f"characters\n{table}\n"
                     "# END GENERATED\n" + tail)
    sys.exit(0)
