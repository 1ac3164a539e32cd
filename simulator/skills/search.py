"""Skill search: BM25 over each skill's name + description, never its body (SKILL-06).

Skills with ``include_in_prompt: false`` are reachable only through this search, so its
ranking must be reproducible by every implementation: a tokenizer defined on code points
(no regex classes, no Unicode case tables), fixed BM25 constants, an integer score
(millionths) compared instead of a float (so float formatting and summation order cannot
flip a tie), and a total tie-break on the name.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from capconf.simulator.core.names import WHITE_SPACE, ascii_fold
from capconf.simulator.tools.catalog import ToolSpec

BM25_K1 = 1.2
BM25_B = 0.75
SCORE_SCALE = 1_000_000  # scores are reported as round(bm25 * SCORE_SCALE)
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
_WHITE_SPACE = frozenset(WHITE_SPACE)

SKILL_SEARCH_DESCRIPTION = (
    "Find skills granted to you by keywords. Searches each skill's name and description "
    "(not its body) and returns the best matches with their location; load one with "
    "use_skill. Use it before concluding that no skill fits the task."
)
SKILL_SEARCH_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1},
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT},
    },
    "required": ["query"],
    "additionalProperties": False,
}
SKILL_SEARCH_TOOL = ToolSpec("skill_search", SKILL_SEARCH_DESCRIPTION, SKILL_SEARCH_SCHEMA)


def is_token_char(ch: str) -> bool:
    """ASCII letters and digits, and every non-ASCII code point outside the Unicode
    White_Space set. Defined on code points only, so a TS/Rust runtime needs no Unicode
    category table (which differs between Unicode versions) to split the same tokens."""
    return ("0" <= ch <= "9" or "A" <= ch <= "Z" or "a" <= ch <= "z"
            or (ord(ch) > 0x7F and ch not in _WHITE_SPACE))


def tokenize(text: str) -> list[str]:
    """ASCII-folded maximal runs of token characters: `slack-gif_creator` -> slack, gif,
    creator; `Résumé-builder` -> résumé, builder (`É` stays `É`: ASCII folding only)."""
    tokens: list[str] = []
    run: list[str] = []
    for ch in text:
        if is_token_char(ch):
            run.append(ch)
        elif run:
            tokens.append(ascii_fold("".join(run)))
            run = []
    if run:
        tokens.append(ascii_fold("".join(run)))
    return tokens


@dataclass(frozen=True)
class SearchDoc:
    name: str
    description: str


@dataclass(frozen=True)
class Ranked:
    index: int  # into the docs given to rank()
    score: int  # round(bm25 * SCORE_SCALE)


def rank(docs: Sequence[SearchDoc], query: str) -> tuple[Ranked, ...]:
    """BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) over
    tokenize(name + " " + description); query terms deduplicated. The score is the
    integer round(bm25 * 1e6); documents scoring 0 are left out. Order: score
    descending, then the name's ASCII fold, then the name (code point order)."""
    terms = list(dict.fromkeys(tokenize(query)))
    if not docs or not terms:
        return ()
    bags = [Counter(tokenize(f"{d.name} {d.description}")) for d in docs]
    lengths = [sum(b.values()) for b in bags]
    n = len(docs)
    avgdl = (sum(lengths) / n) or 1.0
    idf = {}
    for term in terms:
        df = sum(1 for b in bags if term in b)
        idf[term] = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
    ranked = []
    for i, bag in enumerate(bags):
        score = 0.0
        norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[i] / avgdl)
        for term in terms:
            tf = bag.get(term, 0)
            if tf:
                score += idf[term] * tf * (BM25_K1 + 1.0) / (tf + norm)
        scaled = round(score * SCORE_SCALE)
        if scaled > 0:
            ranked.append(Ranked(i, scaled))
    ranked.sort(key=lambda r: (-r.score, ascii_fold(docs[r.index].name), docs[r.index].name))
    return tuple(ranked)
