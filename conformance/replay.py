"""Recorded scenarios and their replay against any implementation (`capconf record`,
`capconf replay`).

A *scenario* is what a harness sends: driver requests, in order, plus the files its
workspace starts with. A *log* is a scenario as one implementation answered it: every
request with its response. Replaying a log sends the same requests, through the driver
protocol, to another implementation (or the same one later) and stops at the first step
whose response differs in structure.

What "differs" means is decided here, as tables:

- ids an implementation mints (:data:`ID_KEYS`) are bound one-to-one on first sight,
  not compared: ``agent-2`` may be ``a7f3`` elsewhere, but every later mention must be
  the same id, and two recorded ids cannot map to one;
- wording (:data:`WORDING_KEYS`, e.g. error messages) is the reference's choice and is
  not compared; codes, statuses, counts, lists and their order are;
- the workspace path is written ``${WORKSPACE}`` in a log, so a log replays anywhere.

Pure functions over JSON values; the runner takes an ``exchange`` callable, so the
transport (in-process, subprocess, its crashes and timeouts) stays at the edge.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

LOG_FORMAT = 1
SCENARIO_FORMAT = 1
WORKSPACE = "${WORKSPACE}"

ID_KEYS = frozenset({"id", "agent", "agent_id", "task_id", "parent", "root", "by", "card",
                     "card_id", "children", "stopped", "settled"})
"""Keys whose string values (or lists of strings) are ids the implementation minted."""

WORDING_KEYS = frozenset({"message", "error_message"})
"""Keys whose values are the implementation's own wording: never compared."""

NOT_IN_A_SCENARIO = {"hello": "`hello` describes the implementation, not the scenario"}

MAX_DEPTH = 200
"""Nesting of one line; the comparer and the id mapping walk values recursively, so a
deeper line is a bad log, refused before anything walks it."""
MAX_FILES = 10_000
MAX_PATH_BYTES = 4_096
MAX_NAME_BYTES = 255


class LogError(Exception):
    """A log or scenario that cannot be replayed, with the line it is wrong at."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line
        self.message = message


@dataclass(frozen=True)
class Step:
    index: int
    line: int
    op: str
    args: dict[str, Any]
    response: dict[str, Any] | None  # None in a scenario (not yet answered)


@dataclass(frozen=True)
class Recording:
    files: dict[str, str]
    steps: tuple[Step, ...]
    recorded_with: str | None = None


# -- reading --------------------------------------------------------------------------

def _lines(text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    if not text:
        raise LogError(1, "empty: a log starts with its header line")
    if not text.endswith("\n"):
        last = text.count("\n") + 1
        raise LogError(last, "truncated: the last line has no newline")
    for number, raw in enumerate(text.split("\n")[:-1], start=1):
        if not raw.strip():
            raise LogError(number, "empty line")
        try:
            value = json.loads(raw)
        except ValueError as exc:
            raise LogError(number, f"not JSON ({exc})") from None
        except RecursionError:
            raise LogError(number, "nested too deeply") from None
        if _depth(value) > MAX_DEPTH:
            raise LogError(number, f"nested deeper than {MAX_DEPTH} levels")
        if not isinstance(value, dict):
            raise LogError(number, f"a line is a JSON object, not {type(value).__name__}")
        yield number, value


def _depth(value: Any) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                return deepest
            stack.extend((child, depth + 1)
                         for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _files(header: Mapping[str, Any]) -> dict[str, str]:
    files = header.get("files", {})
    if not isinstance(files, dict):
        raise LogError(1, "`files` maps workspace-relative paths to text")
    if len(files) > MAX_FILES:
        raise LogError(1, f"`files` names more than {MAX_FILES:,} files")
    for key, text in files.items():
        problem = _file_key_problem(key) or (
            None if isinstance(text, str) and _utf8(text) else "must map to UTF-8 text")
        if problem is not None:
            shown = json.dumps(key)[:80] if isinstance(key, str) else repr(key)
            raise LogError(1, f"`files` key {shown}: {problem}")
    names = set(files)
    for key in files:
        parts = key.split("/")
        for end in range(1, len(parts)):
            if "/".join(parts[:end]) in names:
                raise LogError(1, f"`files` key {json.dumps(key)[:80]}: "
                               f"{json.dumps('/'.join(parts[:end]))[:80]} is also a file; a "
                               "path cannot be a file and a folder")
    return dict(files)


def _file_key_problem(key: Any) -> str | None:
    """Why ``key`` is not a workspace-relative file path a replay can create, or None."""
    if not isinstance(key, str) or not key:
        return "must be a non-empty path"
    if not _utf8(key) or "\x00" in key:
        return "contains a NUL or a lone surrogate"
    if key.startswith("/"):
        return "must be relative to the workspace"
    if len(key.encode("utf-8")) > MAX_PATH_BYTES:
        return f"is longer than {MAX_PATH_BYTES:,} bytes"
    for part in key.split("/"):
        if part in ("", ".", ".."):
            return "has an empty, `.` or `..` component"
        if len(part.encode("utf-8")) > MAX_NAME_BYTES:
            return f"has a name longer than {MAX_NAME_BYTES} bytes"
    return None


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _request(number: int, value: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    op, args = value.get("op"), value.get("args", {})
    if not isinstance(op, str) or not op:
        raise LogError(number, "`op` must be a non-empty string")
    if op in NOT_IN_A_SCENARIO:
        raise LogError(number, NOT_IN_A_SCENARIO[op])
    if not isinstance(args, dict):
        raise LogError(number, "`args` must be an object")
    return op, args


def parse_log(text: str) -> Recording:
    lines = iter(_lines(text))
    number, header = next(lines)
    if header.get("capconf_log") != LOG_FORMAT:
        raise LogError(number, f"not a capconf log: the header needs \"capconf_log\": "
                       f"{LOG_FORMAT}")
    recorded_with = header.get("recorded_with")
    steps: list[Step] = []
    for number, value in lines:
        if value.get("step") != len(steps) + 1:
            raise LogError(number, f"expected step {len(steps) + 1}, found "
                           f"{value.get('step')!r}")
        op, args = _request(number, value)
        response = value.get("response")
        if not isinstance(response, dict) or not isinstance(response.get("ok"), bool) or (
                "result" not in response if response["ok"] else
                not isinstance(response.get("error"), dict)):
            raise LogError(number, "`response` must be {\"ok\": true, \"result\"} or "
                           "{\"ok\": false, \"error\": {...}}")
        steps.append(Step(len(steps) + 1, number, op, args, response))
    if not steps:
        raise LogError(number, "a log with no steps")
    return Recording(_files(header), tuple(steps),
                     recorded_with if isinstance(recorded_with, str) else None)


def parse_scenario(text: str) -> Recording:
    steps: list[Step] = []
    files: dict[str, str] = {}
    for number, value in _lines(text):
        if number == 1 and "capconf_scenario" in value:
            if value["capconf_scenario"] != SCENARIO_FORMAT:
                raise LogError(1, f"unknown scenario format {value['capconf_scenario']!r}")
            files = _files(value)
            continue
        op, args = _request(number, value)
        steps.append(Step(len(steps) + 1, number, op, args, None))
    if not steps:
        raise LogError(1, "a scenario with no requests")
    return Recording(files, tuple(steps))


def render_log(recording: Recording) -> str:
    def line(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False) + "\n"
    header: dict[str, Any] = {"capconf_log": LOG_FORMAT, "files": recording.files}
    if recording.recorded_with is not None:
        header["recorded_with"] = recording.recorded_with
    return line(header) + "".join(
        line({"step": s.index, "op": s.op, "args": s.args, "response": s.response})
        for s in recording.steps)


# -- the workspace placeholder --------------------------------------------------------

def substitute(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [substitute(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, old, new) for k, v in value.items()}
    return value


# -- comparing ------------------------------------------------------------------------

@dataclass
class Bindings:
    """Recorded id -> actual id, one-to-one."""

    forward: dict[str, str] = field(default_factory=dict)
    backward: dict[str, str] = field(default_factory=dict)

    def bind(self, recorded: str, actual: str) -> bool:
        if recorded in self.forward:
            return self.forward[recorded] == actual
        if actual in self.backward:
            return False
        self.forward[recorded], self.backward[actual] = actual, recorded
        return True

    def to_actual(self, value: Any) -> Any:
        """A recorded request in the actual implementation's ids."""
        if isinstance(value, str):
            return self.forward.get(value, value)
        if isinstance(value, list):
            return [self.to_actual(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_actual(v) for k, v in value.items()}
        return value

    def to_recorded(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.backward.get(value, value)
        if isinstance(value, list):
            return [self.to_recorded(v) for v in value]
        if isinstance(value, dict):
            return {k: self.to_recorded(v) for k, v in value.items()}
        return value


@dataclass(frozen=True)
class Mismatch:
    path: tuple[str | int, ...]
    expected: Any
    actual: Any
    why: str

    @property
    def where(self) -> str:
        return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path
                       ).lstrip(".") or "(the whole response)"


_MISSING = object()


def compare(expected: Any, actual: Any, bindings: Bindings,
            path: tuple[str | int, ...] = (), is_id: bool = False) -> Mismatch | None:
    """The first structural difference, binding ids on the way, or None."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in sorted(set(expected) | set(actual)):
            if key in WORDING_KEYS and key in expected and key in actual:
                continue
            got, want = actual.get(key, _MISSING), expected.get(key, _MISSING)
            if want is _MISSING or got is _MISSING:
                return Mismatch((*path, key), None if want is _MISSING else want,
                                None if got is _MISSING else got,
                                "missing" if got is _MISSING else "not in the recording")
            found = compare(want, got, bindings, (*path, key), is_id or key in ID_KEYS)
            if found is not None:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for i, (want, got) in enumerate(zip(expected, actual, strict=False)):
            found = compare(want, got, bindings, (*path, i), is_id)
            if found is not None:
                return found
        if len(expected) != len(actual):
            return Mismatch(path, len(expected), len(actual), "length")
        return None
    if isinstance(expected, str) and isinstance(actual, str) and (
            is_id or expected in bindings.forward):
        if bindings.bind(expected, actual):
            return None
        return Mismatch(path, expected, actual, "id")
    if type(expected) is type(actual) and expected == actual:
        return None
    return Mismatch(path, expected, actual, "value")


# -- replaying ------------------------------------------------------------------------

class NoAnswer(Exception):
    """The implementation did not answer a step: crashed, timed out, or broke the
    protocol. ``outcome`` says which."""

    def __init__(self, outcome: str, message: str) -> None:
        super().__init__(message)
        self.outcome = outcome
        self.message = message


Exchange = Callable[[str, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Divergence:
    step: Step
    request: dict[str, Any]
    mismatch: Mismatch | None  # None when the implementation gave no answer
    actual: dict[str, Any] | None
    bindings: Bindings
    no_answer: NoAnswer | None = None


def _response(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if k != "id"}


def replay(recording: Recording, exchange: Exchange, workspace: str) -> Divergence | None:
    """Send every step's request (ids mapped, workspace filled in) and compare."""
    bindings = Bindings()
    for step in recording.steps:
        args = substitute(bindings.to_actual(step.args), WORKSPACE, workspace)
        try:
            actual = substitute(_response(exchange(step.op, args)), workspace, WORKSPACE)
        except NoAnswer as exc:
            return Divergence(step, {"op": step.op, "args": step.args}, None, None,
                              bindings, exc)
        assert step.response is not None
        mismatch = compare(step.response, actual, bindings)
        if mismatch is not None:
            return Divergence(step, {"op": step.op, "args": step.args}, mismatch, actual,
                              bindings)
    return None


def record(scenario: Recording, exchange: Exchange, workspace: str,
           recorded_with: str | None) -> Recording:
    steps = []
    for step in scenario.steps:
        args = substitute(step.args, WORKSPACE, workspace)
        response = substitute(_response(exchange(step.op, args)), workspace, WORKSPACE)
        steps.append(Step(step.index, step.index + 1, step.op, step.args, response))
    return Recording(scenario.files, tuple(steps), recorded_with)


# -- reporting ------------------------------------------------------------------------

def _strip_wording(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_wording(v) for k, v in value.items() if k not in WORDING_KEYS}
    if isinstance(value, list):
        return [_strip_wording(v) for v in value]
    return value


def _pretty(value: Any) -> list[str]:
    return json.dumps(_strip_wording(value), indent=2, sort_keys=True,
                      ensure_ascii=False).splitlines()


def describe(divergence: Divergence, log_name: str, impl: str,
             bindings_note: bool = True, context: int = 3, limit: int = 60) -> str:
    step = divergence.step
    request = json.dumps(divergence.request["args"], sort_keys=True, ensure_ascii=False)
    out = [f"{log_name}: diverged at step {step.index} (line {step.line}) against {impl}",
           f"request: {step.op} {request[:400]}"]
    if divergence.no_answer is not None:
        out.append(f"no answer: the implementation {divergence.no_answer.outcome}: "
                   f"{divergence.no_answer.message}")
        return "\n".join(out) + "\n"
    mismatch = divergence.mismatch
    assert mismatch is not None and divergence.actual is not None
    reason = {"id": "an id that does not match the ids seen so far",
              "length": "a different number of items",
              "missing": "missing in the actual response",
              "not in the recording": "not in the recorded response",
              "value": "a different value"}[mismatch.why]
    out += [f"first difference at {mismatch.where}: {reason}",
            f"  expected: {json.dumps(mismatch.expected, ensure_ascii=False)[:300]}",
            f"  actual:   {json.dumps(mismatch.actual, ensure_ascii=False)[:300]}"]
    assert step.response is not None
    diff = list(difflib.unified_diff(
        _pretty(step.response), _pretty(divergence.bindings.to_recorded(divergence.actual)),
        f"expected (step {step.index})", f"actual (step {step.index})", n=context,
        lineterm=""))
    if len(diff) > limit:
        diff = [*diff[:limit], f"... ({len(diff) - limit} more diff lines)"]
    out += diff
    if bindings_note:
        out.append("(ids are compared by binding, wording such as `message` is not "
                   "compared; SPEC.md \"Replaying a recorded scenario\")")
    return "\n".join(out) + "\n"
