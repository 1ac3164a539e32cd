"""Expected-failures baselines that pin the cause: the file's grammar, the fingerprint of a
failure, the verdict on a listed case, and the baseline written from a run report.

A baseline entry used to be a case ID alone, so a listed case that began to fail for
another reason (a timeout instead of its reviewed wrong answer) still counted as the
expected failure and hid a new bug. Each entry now records *why* its case fails, as a
fingerprint: a short, stable, human-readable phrase computed from the case's report
record (never from volatile values such as temp paths, ids or timings)::

    <case id>  cause: <fingerprint>  # <reviewed note, e.g. kind b: ...>

    tool.canonical.camel-lower  cause: failed: `agent.spawn` wrong granted tools  # kind b

A fingerprint is ``<outcome>: <op> <what>``: the outcome kind (failed, errored, crashed,
timed out); the op of the last request the case sent (the answer it judged; a
``tool.call`` names its tool); and what was wrong with that answer: ``answered error
`CODE``` (the envelope's code), ``tool error `CODE``` (a tool result's ``error_code``),
``wrong <label>`` (what a case's message names as wrong), ``result differs at <path>``
(the first path where expected and got differ, JSONPath-like, values left out), or
``wrong result`` when the case said no more. A crash or timeout is its outcome and op.

A listed case that fails with the same fingerprint is an *expected failure*; one that
fails with another is a *new cause*: it keeps its failing outcome (the run fails) and
every output shows the pinned and the new fingerprint. An entry without ``cause:`` (the
old form) still reads, matching any failure of its case, with one warning per file.
Pure functions; the plugin and ``capconf baseline`` do the I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from capconf.conformance import outcomes

CAUSE = "cause:"
NOT_REVIEWED = "not reviewed yet"
FAILED_KINDS = frozenset({outcomes.FAILED, outcomes.ERRORED, outcomes.CRASHED,
                          outcomes.TIMED_OUT})

HEADER = """\
# Expected failures (capconf baseline), one case per line:
#   <case id>  cause: <fingerprint>  # <reviewed note>
# The fingerprint pins why the case fails: `<outcome>: <op> <what was wrong>` (README,
# "Baselines"). A listed case that fails with another fingerprint fails the run as a new
# cause; one that passes is stale. Written by `capconf baseline REPORT.jsonl`; keep the
# notes after `#` reviewed (`capconf baseline REPORT.jsonl --update THIS-FILE` keeps them)."""


class BaselineError(Exception):
    """A baseline line that cannot be read; the message names file and line."""


@dataclass(frozen=True)
class Entry:
    line: int
    case: str
    cause: str | None = None  # None: the old form (a case ID alone)
    note: str = ""  # the text after `#`, without the `#`


@dataclass(frozen=True)
class Baseline:
    """A parsed baseline: case ID -> pinned fingerprint (None: any failure)."""

    name: str
    entries: tuple[Entry, ...] = ()
    causes: Mapping[str, str | None] = field(default_factory=dict)

    @property
    def unpinned(self) -> tuple[str, ...]:
        return tuple(e.case for e in self.entries if e.cause is None)

    def warning(self) -> str | None:
        """The one warning for entries in the old form, naming the file and the fix."""
        if not self.unpinned:
            return None
        return (f"{self.name}: {len(self.unpinned)} of {len(self.entries)} baseline entries "
                "pin no cause (a case ID alone), so such a case counts as an expected "
                "failure whatever it fails with; pin them: `capconf baseline REPORT.jsonl "
                f"--update {self.name}` (REPORT.jsonl: a --report of this implementation)")


# -- the file ------------------------------------------------------------------------------

def normalise(cause: str) -> str:
    """A fingerprint as compared and written: whitespace collapsed, `#` (the comment
    sign) and `%` percent-encoded, control characters dropped."""
    text = "".join(c for c in cause if c.isprintable() or c.isspace())
    text = text.replace("%", "%25").replace("#", "%23")
    return " ".join(text.split())


def parse(text: str, name: str) -> Baseline:
    """One entry per line: ``case.id``, optionally ``cause: <fingerprint>``; ``#``
    starts a comment (a whole line, or after the entry). Anything else on a line is an
    error, so a note written without its ``#`` is not read as part of the entry."""
    entries: list[Entry] = []
    problems: list[str] = []
    seen: dict[str, int] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        content, hashed, note = raw.partition("#")
        content = content.strip()
        if not content:
            continue
        case, _, rest = content.partition(" ") if " " in content else (
            content.partition("\t"))
        case, rest = case.strip(), rest.strip()
        cause: str | None = None
        if rest:
            if not rest.startswith(CAUSE):
                problems.append(f"{name}:{number}: `{content[:80]}` is more than one case ID "
                                "(write a note after `#`; a cause as `cause: ...`)")
                continue
            cause = normalise(rest[len(CAUSE):])
            if not cause:
                problems.append(f"{name}:{number}: `cause:` names no fingerprint")
                continue
        if case in seen:
            problems.append(f"{name}:{number}: case `{case}` is listed twice (first on line "
                            f"{seen[case]})")
            continue
        seen[case] = number
        entries.append(Entry(number, case, cause, note.strip() if hashed else ""))
    if problems:
        raise BaselineError("; ".join(problems))
    return Baseline(name, tuple(entries), {e.case: e.cause for e in entries})


def render(entries: Iterable[Entry], header: str = HEADER) -> str:
    """The file: the header comment, then one aligned line per entry, sorted by case."""
    rows = sorted(entries, key=lambda e: e.case)
    width = max((len(e.case) for e in rows), default=0)
    lines = header.splitlines() if header else []
    for e in rows:
        line = e.case.ljust(width) if (e.cause or e.note) else e.case
        if e.cause:
            line += f"  {CAUSE} {normalise(e.cause)}"
        if e.note:
            line += f"  # {e.note}"
        lines.append(line.rstrip())
    return "\n".join(lines) + "\n"


# -- the fingerprint -----------------------------------------------------------------------

_VOLATILE = (
    (re.compile(r"(?<![\w.])/(?:[^\s/`'\"]+/)+[^\s/`'\"]*"), "<path>"),  # absolute paths
    (re.compile(r"\b\d+\.\d+\b"), "<n>"),  # timings, sizes with a fraction
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
     "<uuid>"),
    (re.compile(r"\b[0-9a-f]{8,}\b"), "<hex>"),  # hashes, random ids
    (re.compile(r"\bpid \d+"), "pid <n>"),
)
_LABELLED = re.compile(r"(?:^|\| )(?P<label>[a-z][\w .`-]{0,58}): expected ")
_PYTEST_INDEX = re.compile(r"At index (\d+) diff")
_PYTEST_KEY = re.compile(r"Differing items:\s*\{'([^']{1,60})'")
_PYTEST_LENGTH = re.compile(r"(?:Left|Right) contains (?:one|\d+) more item")


def _mask(text: str, limit: int = 120) -> str:
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "\u2026"


def _op(step: Mapping[str, Any]) -> str:
    request = step.get("request")
    request = request if isinstance(request, dict) else {}
    op = request.get("op")
    name = f"`{_mask(str(op), 60)}`" if op is not None else "(no op)"
    args = request.get("args")
    if op == "tool.call" and isinstance(args, dict) and isinstance(args.get("tool"), str):
        name += f" of `{_mask(args['tool'], 60)}`"
    return name


def _key(key: str) -> str:
    return f".{key}" if re.fullmatch(r"[A-Za-z_][\w-]*", key) else f"[{json.dumps(key)}]"


def first_difference(expected: Any, got: Any, path: str = "$") -> str | None:
    """The first path at which ``got`` differs from ``expected`` (keys in sorted order,
    list items in order), with ``(missing)`` / ``(extra)`` for an absent key or item and
    ``(type)`` for another kind of value; None when equal. Values never appear."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got), key=str):
            where = path + _key(_mask(str(key), 60))
            if key not in got:
                return f"{where} (missing)"
            if key not in expected:
                return f"{where} (extra)"
            found = first_difference(expected[key], got[key], where)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(got, list):
        for index, (e, g) in enumerate(zip(expected, got, strict=False)):
            found = first_difference(e, g, f"{path}[{index}]")
            if found is not None:
                return found
        if len(expected) != len(got):
            shorter = min(len(expected), len(got))
            return f"{path}[{shorter}] ({'missing' if len(got) < len(expected) else 'extra'})"
        return None
    if type(expected) is not type(got) and not (
            isinstance(expected, int | float) and isinstance(got, int | float)):
        return f"{path} (type)"
    return None if expected == got else path


def _what(record: Mapping[str, Any], last: Mapping[str, Any] | None) -> str:
    response = last.get("response") if last is not None else None
    if isinstance(response, dict):
        error = response.get("error")
        if response.get("ok") is False and isinstance(error, dict):
            return f"answered error `{_mask(str(error.get('code')), 60)}`"
        result = response.get("result")
        request = last.get("request") if last is not None else None
        if (isinstance(request, dict) and request.get("op") == "tool.call"
                and isinstance(result, dict) and result.get("ok") is False):
            return f"tool error `{_mask(str(result.get('error_code')), 60)}`"
    reason = str(record.get("reason") or "")
    head = reason.strip().split("\n", 1)[0]
    # a "new cause" verdict prefixes the reason; the failure's own text follows it
    if head.startswith(NEW_CAUSE):
        head = reason.strip().split("\n", 2)[1] if reason.count("\n") else ""
    labelled = _LABELLED.search(head)
    if labelled is not None:
        return f"wrong {_mask(labelled['label'].strip(), 60)}"
    expected, got = record.get("expected"), record.get("got")
    if expected is not None and got is not None:
        where = first_difference(expected, got)
        if where is not None:
            return f"result differs at {where}"
    index = _PYTEST_INDEX.search(reason)
    if index is not None:
        return f"result differs at $[{index.group(1)}]"
    key = _PYTEST_KEY.search(reason)
    if key is not None:
        return f"result differs at $.{_mask(key.group(1), 60)}"
    length = _PYTEST_LENGTH.search(reason)
    if length is not None:
        return "result differs in length"
    check = head.split(" | ", 1)[-1] if " | " in head else head
    # the check's own words, values masked (not a bare value or pytest assert)
    if check and not check.startswith(("assert ", "(", "[", "{", "'", '"')):
        return f"check failed: {_mask(check, 80)}"
    return "wrong result"


def fingerprint(record: Mapping[str, Any]) -> str:
    """The cause of a failing case, from its JSON Lines report record (``outcome``,
    ``exchange``, ``expected``, ``got``, ``reason``): see the module docstring."""
    outcome = str(record.get("outcome"))
    if outcome not in FAILED_KINDS:
        outcome = outcomes.FAILED  # an expected failure's own kind, in an older report
    exchange = record.get("exchange") or []
    last = exchange[-1] if exchange and isinstance(exchange[-1], dict) else None
    op = _op(last) if last is not None else "(no request)"
    if outcome in (outcomes.CRASHED, outcomes.TIMED_OUT):
        return normalise(f"{outcome}: {op}")
    if last is not None and last.get("failure"):
        failure = str(last["failure"]).split(": ", 1)[-1]
        return normalise(f"{outcome}: {op} {_mask(failure, 80)}")
    return normalise(f"{outcome}: {op} {_what(record, last)}")


# -- the verdict on a listed case ----------------------------------------------------------

NEW_CAUSE = "new cause:"


@dataclass(frozen=True)
class Verdict:
    outcome: str
    reason: str
    baseline_cause: str | None = None  # set on a new cause: what the baseline pinned


def judge(outcome: str, reason: str, cause: str | None, found: str) -> Verdict:
    """A listed case's verdict: a failure with the pinned fingerprint (or any failure, for
    an entry without one) is an expected failure; a failure with another fingerprint keeps
    its outcome and says both; a pass is stale."""
    if outcome == outcomes.PASSED:
        return Verdict(outcomes.STALE, "listed as an expected failure but passed")
    if outcome not in FAILED_KINDS:
        return Verdict(outcome, reason)
    if cause is None or normalise(cause) == normalise(found):
        return Verdict(outcomes.EXPECTED_FAILURE, reason)
    return Verdict(outcome, f"{new_cause_line(cause, found)}\n{reason}", normalise(cause))


def new_cause_line(pinned: str, found: str) -> str:
    return (f'{NEW_CAUSE} the baseline pins "{normalise(pinned)}"; the case now fails with '
            f'"{normalise(found)}"')


# -- a baseline written from a run report ------------------------------------------------

BASELINED = FAILED_KINDS | {outcomes.EXPECTED_FAILURE}


@dataclass(frozen=True)
class Update:
    text: str
    messages: tuple[str, ...]
    entries: tuple[Entry, ...]


def _header_of(existing: str | None) -> str:
    if existing is None:
        return HEADER
    lines = []
    for raw in existing.splitlines():
        if raw.strip() and not raw.lstrip().startswith("#"):
            break
        lines.append(raw)
    while lines and not lines[-1].strip():
        lines.pop()
    return "\n".join(lines) if lines else HEADER


def update(records: Mapping[str, Mapping[str, Any]], existing: Baseline | None = None,
           existing_text: str | None = None) -> Update:
    """The baseline of a report's failing cases (``records``: case ID -> report record).
    An existing baseline's header and reviewed notes are kept; its entries for cases that
    now pass are dropped and for cases the report did not run are kept as they are; each
    change is told in ``messages``."""
    old = {e.case: e for e in (existing.entries if existing else ())}
    entries: list[Entry] = []
    messages: list[str] = []
    dropped, kept_unrun, changed, added, pinned = [], [], [], [], []
    for cid in sorted(set(records) | set(old)):
        record = records.get(cid)
        before = old.get(cid)
        outcome = record.get("outcome") if record is not None else None
        if outcome in BASELINED:
            assert record is not None
            found = record.get("fingerprint")
            cause = normalise(found if isinstance(found, str) and found
                              else fingerprint(record))
            note = before.note if before is not None and before.note else NOT_REVIEWED
            if before is None:
                added.append(cid)
            elif before.cause is None:
                pinned.append(cid)
            elif before.cause != cause:
                changed.append(f"{cid}: was `{before.cause}`, now `{cause}`")
            entries.append(Entry(0, cid, cause, note))
        elif before is not None and outcome in (outcomes.PASSED, outcomes.STALE):
            dropped.append(cid)
        elif before is not None:
            kept_unrun.append(cid)
            entries.append(before)
    if existing is not None:
        if dropped:
            messages.append(f"dropped {len(dropped)} entr{'y' if len(dropped) == 1 else 'ies'}"
                            f" whose case now passes: {', '.join(dropped)}")
        if pinned:
            messages.append(f"pinned the cause of {len(pinned)} entr"
                            f"{'y' if len(pinned) == 1 else 'ies'} that had none")
        if changed:
            messages.append(f"{len(changed)} entr{'y' if len(changed) == 1 else 'ies'} now "
                            "fail(s) for another cause (the note is kept: review it): "
                            + "; ".join(changed))
        if kept_unrun:
            messages.append(f"kept {len(kept_unrun)} entr"
                            f"{'y' if len(kept_unrun) == 1 else 'ies'} for cases the report "
                            "did not run (not implemented, skipped or not selected)")
    if added:
        messages.append(f"{len(added)} new entr{'y' if len(added) == 1 else 'ies'} "
                        f"(noted `{NOT_REVIEWED}`: review them)")
    text = render(entries, _header_of(existing_text if existing is not None else None))
    return Update(text, tuple(messages), tuple(entries))
