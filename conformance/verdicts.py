"""A case's verdict in full: the detail a report shows, and the failing case written out
as a scenario the team can replay without the suite.

``describe`` turns what a case raised and exchanged into a ``Detail`` (rule, expected,
got, exchange, cause; see ``failures``). ``save_scenario`` writes a failing case in the
``capconf record`` scenario format (``replay``), so ``capconf record`` on it gives the
reference's answers and ``capconf replay`` of that log against the runtime stops at the
first answer that differs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from capconf.conformance import outcomes
from capconf.conformance.client import DriverFailure, ImplementationError
from capconf.conformance.exchange import CaseJournal, Step
from capconf.conformance.failures import (
    Detail,
    answer_of,
    cause_of,
    exchange_of,
    expected_got_in,
    first_sentence,
    jsonable,
    rule_line,
)
from capconf.conformance.harness import SpecMismatch
from capconf.conformance.replay import NOT_IN_A_SCENARIO, SCENARIO_FORMAT, WORKSPACE, substitute
from capconf.conformance.requirements import requirements

_LEADING_IDS = re.compile(r"^(?:[A-Z]+-\d+[a-z]?(?:/[A-Z]*-?\d+)?(?:,\s*|\s+))*[A-Z]+-\d+"
                          r"[a-z]?(?:/[A-Z]*-?\d+)?:\s*")
SHOWN_FOR = frozenset(outcomes.FAILING | {outcomes.EXPECTED_FAILURE}) - {outcomes.STALE}


def _why(exc: BaseException | None, docstring: str) -> str:
    if isinstance(exc, SpecMismatch):
        return _LEADING_IDS.sub("", exc.why)
    if exc is not None and not isinstance(exc, DriverFailure) and type(exc).__name__ not in (
            "AssertionError", "KeyError", "TypeError", "IndexError"):
        text = str(exc).split("\n", 1)[0]
        if text:
            return _LEADING_IDS.sub("", text)
    return first_sentence(docstring)


def describe(category: str, reason: str, exc: BaseException | None, steps: Sequence[Step],
             requirement_ids: Sequence[str], docstring: str,
             compared: tuple[Any, Any] | None = None) -> Detail:
    """``compared``: the (expected, got) of the failing plain ``assert got == expected``
    (the plugin keeps it from ``pytest_assertrepr_compare``), kept whole, not as text."""
    titles = {rid: r.title for rid, r in requirements().items()}
    if category not in SHOWN_FOR:
        return Detail(rule_line(requirement_ids, titles, first_sentence(docstring)))
    expected: Any = None
    got: Any = None
    if isinstance(exc, SpecMismatch):
        expected = jsonable(exc.expected) if exc.has_expected else None
        got = jsonable(exc.got) if exc.has_got else None
    elif isinstance(exc, ImplementationError):
        expected = f"a result of `{exc.op}`"
        got = {"error": {"code": exc.code, "message": exc.error_message}}
    elif compared is not None and type(exc) is AssertionError:
        expected, got = jsonable(compared[0]), jsonable(compared[1])
    elif exc is not None and not isinstance(exc, DriverFailure):
        pair = expected_got_in(str(exc))
        if pair is not None:
            expected, got = pair
    if got is None and steps and answer_of(steps[-1]) is not None and not isinstance(
            exc, DriverFailure):
        # the case did not say what it compared; the refusal it met is what it got
        last = steps[-1].response or {}
        got = jsonable(last.get("result") if last.get("ok") else last.get("error"))
    return Detail(rule_line(requirement_ids, titles, _why(exc, docstring)), expected, got,
                  exchange_of(steps), cause_of(steps, category,
                                               reason if exc is None else str(exc),
                                               expected, got))


# -- a failing case as a scenario ---------------------------------------------------------

def _safe_name(case: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", case).strip("_") or "case"


def _workspace(steps: Sequence[Step]) -> str | None:
    for step in steps:
        args = step.request.get("args")
        if step.request.get("op") == "world.setup" and isinstance(args, dict):
            workspace = args.get("workspace")
            return workspace if isinstance(workspace, str) and workspace else None
    return None


def scenario_text(case: str, requirement_ids: Sequence[str], journal: CaseJournal,
                  detail: Detail | None) -> str:
    """The case's requests as a scenario: its workspace written ``${WORKSPACE}``, the
    files the case wrote as the workspace's starting files. What a scenario cannot hold
    (raw byte lines, `hello`, binary files, steps dropped from a long property case) is
    listed under ``not_replayed`` in the header."""
    workspace = _workspace(journal.steps)
    not_replayed: list[str] = []
    if journal.dropped:
        not_replayed.append(f"the first {journal.dropped} requests (a long case keeps its "
                            "last ones)")
    not_replayed += [f"binary file {name}" for name in journal.not_captured]
    lines = []
    for step in journal.steps:
        op = step.request.get("op")
        if "raw_line" in step.request:
            not_replayed.append(f"a raw request line {step.request['raw_line'][:60]!r}")
            continue
        if not isinstance(op, str) or op in NOT_IN_A_SCENARIO:
            continue
        args = step.request.get("args", {})
        if workspace is not None:
            args = substitute(args, workspace, WORKSPACE)
        lines.append({"op": op, "args": args})
    files = {name: text for name, text in journal.files.items()
             if name and not name.startswith("/") and ".." not in name.split("/")}
    header: dict[str, Any] = {"capconf_scenario": SCENARIO_FORMAT, "files": files,
                              "case": case, "requirements": list(requirement_ids)}
    if detail is not None:
        header.update({"rule": detail.rule, "cause": detail.cause})
    if not_replayed:
        header["not_replayed"] = not_replayed
    out = [json.dumps(header, sort_keys=True, ensure_ascii=False)]
    out += [json.dumps(line, sort_keys=True, ensure_ascii=False) for line in lines]
    return "\n".join(out) + "\n"


def save_scenario(directory: Path, case: str, requirement_ids: Sequence[str],
                  journal: CaseJournal, detail: Detail | None) -> Path | None:
    """Write ``DIRECTORY/<case>.scenario.jsonl``; a case that sent nothing but `hello`
    has no scenario."""
    text = scenario_text(case, requirement_ids, journal, detail)
    if text.count("\n") < 2:
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{_safe_name(case)}.scenario.jsonl"
    path.write_text(text, encoding="utf-8")
    return path
