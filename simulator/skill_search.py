"""Skill search: BM25 over each skill's name + description, never its body (SKILL-06).

Skills with ``include_in_prompt: false`` are reachable only through this search, so its
ranking must be reproducible by every implementation: fixed tokenizer, fixed BM25
constants, a score rounded before comparison (so float summation order cannot flip a
tie), and a total tie-break on the name.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from simulator.tool_catalog import ToolSpec

BM25_K1 = 1.2
BM25_B = 0.75
SCORE_DECIMALS = 6
DEFAULT_LIMIT = 10
MAX_LIMIT = 50
_TOKEN_RE = re.compile(r"[^\W_]+")

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


def tokenize(text: str) -> list[str]:
    """Case-folded runs of letters and digits: `slack-gif_creator` -> slack, gif, creator."""
    return _TOKEN_RE.findall(text.casefold())


@dataclass(frozen=True)
class SearchDoc:
    name: str
    description: str


@dataclass(frozen=True)
class Ranked:
    index: int  # into the docs given to rank()
    score: float


def rank(docs: Sequence[SearchDoc], query: str) -> tuple[Ranked, ...]:
    """BM25 (k1 = 1.2, b = 0.75, idf = ln(1 + (N - df + 0.5) / (df + 0.5))) over
    tokenize(name + " " + description); query terms deduplicated. Documents scoring 0
    are left out. Order: score rounded to 6 decimals, descending; then the name's
    case-fold, then the name (code point order)."""
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
        if score > 0.0:
            ranked.append(Ranked(i, round(score, SCORE_DECIMALS)))
    ranked.sort(key=lambda r: (-r.score, docs[r.index].name.casefold(), docs[r.index].name))
    return tuple(ranked)
