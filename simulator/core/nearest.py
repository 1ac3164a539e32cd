"""The candidates closest to an unknown name: the one did-you-mean rule (EDIT-04).

Every suggestion the reference makes for a name that does not exist uses this function:
the TOOL-UNKNOWN diagnostic (`capconf validate`), the editor's unknown-name chips
(`editor.unknown_names`, `capconf edit --unknown`), so `Grpe` gets `grep` from all of
them (before, the diagnostic used a similarity ratio and suggested nothing).

Distance is the optimal-string-alignment distance (insertions, deletions, substitutions
and swaps of two neighbours each cost 1) between ASCII-case-folded names, since every
name in this spec compares ASCII-case-insensitively. The cut-off grows with the name's
length so a short name is not "close" to everything: a typo a person makes is one or two
edits, and an unrelated name is many.
"""

from __future__ import annotations

from collections.abc import Iterable

from capconf.simulator.core.names import ascii_fold

MAX_SUGGESTIONS = 3

# (longest name length, largest distance suggested) -- SPEC table.
CUTOFF_TABLE: tuple[tuple[int | None, int], ...] = ((4, 1), (8, 2), (None, 3))


def cutoff(length: int) -> int:
    for longest, distance in CUTOFF_TABLE:
        if longest is None or length <= longest:
            return distance
    raise AssertionError("the last row has no limit")


def osa_distance(a: str, b: str) -> int:
    rows = [list(range(len(b) + 1))]
    for i in range(1, len(a) + 1):
        row = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            row[j] = min(rows[-1][j] + 1, row[j - 1] + 1, rows[-1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                row[j] = min(row[j], rows[-2][j - 2] + 1)
        rows.append(row)
    return rows[-1][-1]


def nearest(name: str, candidates: Iterable[str]) -> list[str]:
    """Up to three candidates within the cut-off, nearest first, then by folded name."""
    folded = ascii_fold(name.strip())
    limit = cutoff(len(folded))
    scored = []
    for candidate in dict.fromkeys(candidates):
        distance = osa_distance(folded, ascii_fold(candidate))
        if distance <= limit:
            scored.append((distance, ascii_fold(candidate), candidate))
    return [c for _, _, c in sorted(scored)[:MAX_SUGGESTIONS]]
