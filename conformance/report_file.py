"""Reading a JSON Lines run report back as values (for `capconf report` and `capconf diff`).

A report is read, never trusted: a reader gets either a `LoadedReport` or a
`ReportFileError` naming the file and line, so a truncated or hand-edited report is a
clear message, not a traceback. Reports written before the suite added `rule`,
`expected`, `got`, `exchange` and `cause` to each case line read the same way; those
fields are then absent (``None`` / empty), and every renderer copes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from capconf.conformance import outcomes, standing
from capconf.conformance.report import headline

MAX_REPORT_BYTES = 64 * 1024 * 1024  # a full run is ~0.3 MiB; refuse anything absurd


class ReportFileError(Exception):
    """A report that cannot be read: ``path:line: message``."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass(frozen=True)
class Exchange:
    request: Any
    response: Any
    failure: str | None = None  # the transport's failure (crash, timeout, garbage)


@dataclass(frozen=True)
class CaseResult:
    """One case line. ``level`` is MUST or REFERENCE; the optional fields are the ones a
    newer suite writes (``has_detail`` says whether this line carried them at all)."""

    case: str
    requirements: tuple[str, ...]
    outcome: str
    level: str
    reason: str
    nodeid: str = ""
    rule: str | None = None
    expected: Any = None
    got: Any = None
    exchange: tuple[Exchange, ...] = ()
    cause: str | None = None
    has_detail: bool = False
    fingerprint: str | None = None  # a failure's cause as a baseline pins it
    baseline_cause: str | None = None  # a new cause: the one the baseline pinned

    @property
    def failing(self) -> bool:
        return self.outcome in outcomes.FAILING


@dataclass(frozen=True)
class LoadedReport:
    path: str
    header: dict[str, Any]
    cases: dict[str, CaseResult] = field(default_factory=dict)
    # the report's own `{"type": "requirement"}` records (empty in an older report)
    standings: dict[str, standing.Standing] = field(default_factory=dict)

    @property
    def suite_version(self) -> str | None:
        value = self.header.get("suite_version")
        return value if isinstance(value, str) else None

    @property
    def label(self) -> str:
        """What a reader calls this implementation: its `hello` name and version, else
        the `--impl` it was run with."""
        impl = self.header.get("implementation")
        if isinstance(impl, dict) and isinstance(impl.get("name"), str):
            version = impl.get("version")
            return f"{impl['name']} {version}" if isinstance(version, str) else impl["name"]
        value = self.header.get("impl")
        return value if isinstance(value, str) and value else Path(self.path).name

    def requirement_standings(self) -> dict[str, standing.Standing]:
        """Each requirement's status: the report's own records, or (an older report
        without them) the same fold over its case lines."""
        if self.standings:
            return dict(self.standings)
        return {rid: standing.fold(rid, [c.outcome for c in cases])
                for rid, cases in sorted(self.by_requirement().items())}

    def by_requirement(self) -> dict[str, list[CaseResult]]:
        out: dict[str, list[CaseResult]] = {}
        for case in self.cases.values():
            for rid in case.requirements:
                out.setdefault(rid, []).append(case)
        return out


def summary_line(reason: str, limit: int = 200) -> str:
    """`report.headline`, also for a reason that is only whitespace (an implementation's
    empty stderr line), which has no first line to show."""
    return headline(reason, limit) if reason.strip() else ""


def parse_report(text: str, path: str = "<report>") -> LoadedReport:
    """The report in ``text``; `ReportFileError` with the line of the first problem."""
    # JSON Lines ends lines with \n only: a reason written with ensure_ascii=False may
    # hold U+2028 or U+0085, which str.splitlines() would take for line breaks
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if not lines or not lines[0].strip():
        raise ReportFileError(path, 1, "empty report: expected a header line")
    header = _object(lines[0], path, 1)
    if header.get("type") != "header":
        raise ReportFileError(path, 1, 'the first line is not a report header '
                              '({"type": "header", ...}); is this a capconf --report file?')
    cases: dict[str, CaseResult] = {}
    standings: dict[str, standing.Standing] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        value = _object(line, path, number)
        if value.get("type") == "requirement":
            read = standing.from_record(value)
            if read is None:
                raise ReportFileError(path, number, "a requirement line needs `requirement`,"
                                      " a known `status` and the integer counts "
                                      + ", ".join(standing.Counts.__dataclass_fields__))
            standings[read.requirement] = read
            continue
        if value.get("type") != "case":
            continue  # a future line kind: ignored, as the report format is open
        case = _case(value, path, number)
        if case.case in cases:
            raise ReportFileError(path, number, f"case {case.case!r} appears twice")
        cases[case.case] = case
    return LoadedReport(path, header, cases, standings)


def load_report(path: str) -> LoadedReport:
    """A report file opened as every input of the command is (cli_files: a regular file
    only, decided on the opened descriptor, so a FIFO or ``/dev/zero`` is refused and
    never read; at most ``MAX_REPORT_BYTES``)."""
    from capconf.conformance.cli_files import InputError, read_input

    try:
        data = read_input(path, "report", MAX_REPORT_BYTES)
    except InputError as exc:
        raise ReportFileError(path, None, exc.message) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ReportFileError(path, data[:exc.start].count(b"\n") + 1, "not UTF-8") from None
    return parse_report(text, path)


MAX_DEPTH = 200
"""Nesting of one report line (a response in an exchange nests a few levels; renderers
walk values recursively)."""


def _object(line: str, path: str, number: int) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ReportFileError(path, number, f"not JSON ({exc.msg} at column {exc.colno})"
                              ) from None
    except RecursionError:
        raise ReportFileError(path, number, f"nested deeper than {MAX_DEPTH} levels"
                              ) from None
    except ValueError as exc:  # e.g. an integer over Python's digit limit
        raise ReportFileError(path, number, f"not a report value ({exc})") from None
    if not isinstance(value, dict):
        raise ReportFileError(path, number, "a report line must be a JSON object")
    problem = _unusable(value)
    if problem is not None:
        raise ReportFileError(path, number, problem)
    return value


def _unusable(value: Any) -> str | None:
    """Why a parsed line cannot be rendered (too deep; a lone surrogate, which no
    output can encode), or None. (An integer too long to print is refused by the
    parser already: Python's limit on integer digits, caught in ``_object``.)"""
    from capconf.conformance.client import lone_surrogate_path

    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"nested deeper than {MAX_DEPTH} levels"
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    where = lone_surrogate_path(value)
    if where is not None:
        shown = "/".join(str(p) for p in where) or "the top level"
        return f"holds a lone surrogate (no UTF-8 form) at {shown}"
    return None


def _string(value: dict[str, Any], key: str, path: str, number: int,
            default: str | None = None) -> str:
    got = value.get(key, default)
    if not isinstance(got, str):
        raise ReportFileError(path, number, f"`{key}` must be a string, not {got!r:.60}")
    return got


def _case(value: dict[str, Any], path: str, number: int) -> CaseResult:
    case = _string(value, "case", path, number)
    outcome = _string(value, "outcome", path, number)
    if outcome not in outcomes.ALL:
        raise ReportFileError(path, number, f"unknown outcome {outcome!r}; known: "
                              + ", ".join(outcomes.ALL))
    reqs = value.get("requirements", [])
    if not isinstance(reqs, list) or not all(isinstance(r, str) for r in reqs):
        raise ReportFileError(path, number, "`requirements` must be a list of IDs")
    level = _string(value, "level", path, number, "MUST")
    exchange = value.get("exchange") or []
    if not isinstance(exchange, list) or not all(isinstance(e, dict) for e in exchange):
        raise ReportFileError(path, number, "`exchange` must be a list of "
                              '{"request", "response"} objects')
    rule, cause = value.get("rule"), value.get("cause")
    found, pinned = value.get("fingerprint"), value.get("baseline_cause")
    detail = any(k in value for k in ("rule", "expected", "got", "exchange", "cause"))
    return CaseResult(
        case=case, requirements=tuple(reqs), outcome=outcome, level=level,
        reason=_string(value, "reason", path, number, ""),
        nodeid=_string(value, "nodeid", path, number, ""),
        rule=rule if isinstance(rule, str) else None,
        expected=value.get("expected"), got=value.get("got"),
        exchange=tuple(Exchange(e.get("request"), e.get("response"),
                                e["failure"] if isinstance(e.get("failure"), str) else None)
                       for e in exchange),
        cause=cause if isinstance(cause, str) else None, has_detail=detail,
        fingerprint=found if isinstance(found, str) else None,
        baseline_cause=pinned if isinstance(pinned, str) else None)
