"""What a failing case tells its reader: the rule, expected and got, the exchange, and
the cause it shares with other failures.

One bug in a runtime usually fails many cases the same way (a case-lowering resolver
makes 25 delegation cases meet "`Task` is not mounted"). A reader needs that as one item
with a count, and each item needs the rule it breaks, what the spec expects, what the
implementation answered, and the requests that got that answer. Everything here is a
pure function of the exception a case raised and the steps it exchanged.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from capconf.conformance.exchange import Step

EXCHANGE_STEPS = 12
"""Steps a report shows per failing case: the last ones, which end at the answer."""
LONG_STRING = 2000


@dataclass(frozen=True)
class Detail:
    rule: str
    expected: Any = None
    got: Any = None
    exchange: list[dict[str, Any]] = field(default_factory=list)
    cause: str | None = None


_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bvs\.)\s+")


def first_sentence(text: str) -> str:
    """The first sentence of a docstring, on one line: a dot inside a version or a
    number (`claude-code 2.1`) does not end it, a dot followed by a space does."""
    flat = " ".join(text.split())
    return _SENTENCE_END.split(flat, maxsplit=1)[0].rstrip(".") if flat else ""


def rule_line(requirement_ids: Sequence[str], titles: dict[str, str], why: str) -> str:
    """``TOOL-02 (Case-insensitive in, canonical out): <why>`` on one line."""
    named = ", ".join(f"{r} ({titles[r]})" if r in titles else r for r in requirement_ids)
    why = " ".join(why.split())
    return f"{named}: {why}" if why else named


def jsonable(value: Any, depth: int = 0) -> Any:
    """A value as JSON can carry it: tuples and sets become lists, long strings are cut
    in a way that says so, anything else becomes its repr."""
    if depth > 40:
        return "…"
    if value is None or isinstance(value, bool | int | float):
        return value if not isinstance(value, float) or value == value else repr(value)
    if isinstance(value, str):
        return value if len(value) <= LONG_STRING else (
            value[:LONG_STRING] + f"… ({len(value)} chars)")
    if isinstance(value, dict):
        return {str(k): jsonable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, depth + 1) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((jsonable(v, depth + 1) for v in value), key=repr)
    if isinstance(value, bytes):
        return {"bytes": value[:LONG_STRING].decode("utf-8", "replace")}
    return repr(value)


def exchange_of(steps: Sequence[Step], limit: int = EXCHANGE_STEPS) -> list[dict[str, Any]]:
    """The last ``limit`` steps as ``{"request", "response"}`` objects; a step the
    transport could not complete has ``"response": null`` and says why."""
    out = []
    for step in steps[-limit:]:
        item: dict[str, Any] = {"request": jsonable(step.request),
                                "response": jsonable(step.response)}
        if step.failure is not None:
            item["failure"] = step.failure.split("\n", 1)[0]
        out.append(item)
    return out


def answer_of(step: Step) -> str | None:
    """What a response says in one phrase, when it is a refusal: the envelope's error
    code, or a tool result's ``error_code`` (a tool call that failed)."""
    response = step.response
    op = str(step.request.get("op"))
    if step.failure is not None:
        return f"`{op}`: {step.failure.split(chr(10), 1)[0]}"
    if not isinstance(response, dict):
        return None
    if response.get("ok") is False and isinstance(response.get("error"), dict):
        return f"`{op}` answered error `{response['error'].get('code')}`"
    result = response.get("result")
    if op == "tool.call" and isinstance(result, dict) and result.get("ok") is False:
        args = step.request.get("args")
        tool = args.get("tool") if isinstance(args, dict) else None
        return f"`tool.call` of `{tool}` answered `{result.get('error_code')}`"
    return None


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text.strip()


_EXPECTED_GOT = re.compile(r"expected (?P<expected>.+?), got (?P<got>.+)$")


def expected_got_in(message: str) -> tuple[Any, Any] | None:
    """``... expected X, got Y`` in a plain assertion message (the data cases write
    their failures so): the two values, as Python literals when they parse."""
    first = message.split("\n", 1)[0]
    match = _EXPECTED_GOT.search(first)
    if match is None:
        return None
    return jsonable(_literal(match["expected"])), jsonable(_literal(match["got"]))


def cause_of(steps: Sequence[Step], outcome: str, message: str, expected: Any,
             got: Any) -> str:
    """The grouping key: failures with the same first wrong answer share it.

    The wrong answer is the last one the case received (a case checks what it has just
    been told): a refusal reads as the op and its error code; a wrong result as the op
    and the difference; a crash or timeout as the op it happened on."""
    last = steps[-1] if steps else None
    if last is not None:
        answered = answer_of(last)
        if answered is not None:
            return answered
    op = f"`{last.request.get('op')}`" if last is not None else "(no request)"
    head = message.strip().split("\n", 1)[0] if message.strip() else outcome
    labelled = _LABELLED.search(head)
    if labelled is not None:  # "granted tools: expected [...], got [...]": what is wrong
        return f"{op}: wrong {labelled['label'].strip()}"
    if expected is not None or got is not None:
        return f"{op}: expected {_compact(expected)}, got {_compact(got)}"
    return f"{op}: {head[:300]}"


_LABELLED = re.compile(r"(?:^|\| )(?P<label>[a-z][\w .`-]{0,58}): expected ")


def _compact(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 200 else text[:199] + "…"
