"""Keyword search over memory files (MEM-06): pure ranking, deterministic to the byte.

A hit is one line. Terms are the query split on runs of Unicode White_Space
(``capconf.simulator.core.names.split_terms``) and ASCII case-folded
(``capconf.simulator.core.names.ascii_fold``),
duplicates dropped; a line matches when its ASCII-folded text contains at least one term.
ASCII folding only, because Unicode case mappings differ between runtimes (Python's
``str.lower`` maps KELVIN SIGN U+212A to ``k``, JavaScript's ``toLowerCase`` turns U+0130
into two code points) and would make a TS or Rust runtime find other lines; so ``É`` and
``é`` are different letters here.
Ranking is a total order, so no two runtimes can disagree on the result:
  1. more distinct terms present first (a line naming both "deploy" and "staging"
     beats a line repeating "deploy");
  2. then more occurrences in total (non-overlapping, summed over terms);
  3. then root files before daily files (resident memory is the curated part);
  4. then file name in code point order, then line number ascending.
Substring matching rather than word tokens, because memory is often Chinese or Japanese
text with no spaces between words, where a tokenizer would find nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from capconf.simulator.core.names import ascii_fold, split_terms

MAX_HITS = 50
MAX_LINE_CHARS = 400
MAX_QUERY_CHARS = 256


@dataclass(frozen=True)
class SearchDocument:
    file: str
    daily: bool
    text: str


@dataclass(frozen=True)
class SearchHit:
    file: str
    daily: bool
    line: int
    text: str
    line_truncated: bool
    terms_matched: int
    occurrences: int

    def sort_key(self) -> tuple[int, int, bool, str, int]:
        return (-self.terms_matched, -self.occurrences, self.daily, self.file, self.line)

    def to_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "daily": self.daily,
            "line": self.line,
            "text": self.text,
            "line_truncated": self.line_truncated,
            "terms_matched": self.terms_matched,
            "occurrences": self.occurrences,
        }


@dataclass(frozen=True)
class SearchOutcome:
    hits: tuple[SearchHit, ...]
    total_matches: int

    @property
    def hits_truncated(self) -> bool:
        return self.total_matches > len(self.hits)


def query_terms(query: str) -> tuple[str, ...]:
    """ASCII-folded terms in first-seen order, without duplicates."""
    return tuple(dict.fromkeys(ascii_fold(term) for term in split_terms(query)))


def _lines(text: str) -> list[str]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the newline that ends the last line does not start another
    return [line.removesuffix("\r") for line in lines]


def search(documents: tuple[SearchDocument, ...], terms: tuple[str, ...]) -> SearchOutcome:
    matches: list[SearchHit] = []
    for doc in documents:
        for number, line in enumerate(_lines(doc.text), start=1):
            folded = ascii_fold(line)
            counts = [folded.count(term) for term in terms]
            present = sum(1 for c in counts if c)
            if not present:
                continue
            shown = line[:MAX_LINE_CHARS]
            matches.append(SearchHit(doc.file, doc.daily, number, shown,
                                     len(line) > MAX_LINE_CHARS, present, sum(counts)))
    matches.sort(key=SearchHit.sort_key)
    return SearchOutcome(tuple(matches[:MAX_HITS]), len(matches))
