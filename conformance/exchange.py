"""What a case said to the implementation and what it answered, kept per case.

A failure report leads to the fix only if it shows the exchange that proved the bug:
the requests the case sent and the answer that was wrong. ``RecordingTransport`` wraps
any transport and keeps the current case's steps; the plugin starts a new case with
``begin_case`` and reads ``steps`` when the case ends. The files a case put in its
workspace are noted too (``note_file``), so a failing case can be written out as a
``capconf record`` scenario.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from capconf.conformance.client import DriverFailure, Transport

MAX_STEPS = 2000
"""Steps kept per case; a property case with many examples keeps its last ones."""


KEPT_STRING = 2000
"""Characters of one string of a response kept in the journal (what a report shows)."""
KEPT_ITEMS = 200
"""Items of one list or object of a response kept in the journal."""
KEPT_DEPTH = 40


def bounded(value: Any, depth: int = 0) -> Any:
    """A response as the journal keeps it: what a report can show of it, not the whole
    answer. Long strings cut (saying so), long lists and objects cut to their first
    items plus a note, deep nesting cut. So the memory a case holds is bounded by what
    is reported, whatever size the implementation answers with (#38: a failing case
    with 16 MiB answers kept them all)."""
    if isinstance(value, str):
        return value if len(value) <= KEPT_STRING else (
            value[:KEPT_STRING] + f"… ({len(value)} chars)")
    if depth >= KEPT_DEPTH and isinstance(value, dict | list):
        return "…"
    if isinstance(value, dict):
        out = {k if len(k) <= KEPT_STRING else bounded(k): bounded(v, depth + 1)
               for k, v in list(value.items())[:KEPT_ITEMS]}
        if len(value) > KEPT_ITEMS:
            out["…"] = f"{len(value) - KEPT_ITEMS} more keys"
        return out
    if isinstance(value, list):
        cut = [bounded(v, depth + 1) for v in value[:KEPT_ITEMS]]
        return cut + ([f"… {len(value) - KEPT_ITEMS} more items"]
                      if len(value) > KEPT_ITEMS else [])
    return value


@dataclass
class Step:
    request: dict[str, Any]
    response: dict[str, Any] | None = None
    failure: str | None = None  # the transport's failure (crash, timeout, garbage)


@dataclass
class CaseJournal:
    steps: list[Step] = field(default_factory=list)
    dropped: int = 0
    files: dict[str, str] = field(default_factory=dict)
    not_captured: list[str] = field(default_factory=list)

    def add(self, step: Step) -> None:
        self.steps.append(step)
        if len(self.steps) > MAX_STEPS:
            del self.steps[0]
            self.dropped += 1


class RecordingTransport:
    """A transport that forwards everything and remembers the current case's steps."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.description = inner.description
        self.journal = CaseJournal()

    def begin_case(self) -> None:
        self.journal = CaseJournal()

    def note_file(self, relative: str, content: str | bytes) -> None:
        """A file the case wrote into its workspace (the first version is kept: a
        scenario gives the files a workspace starts with)."""
        if relative in self.journal.files or relative in self.journal.not_captured:
            return
        if isinstance(content, bytes):
            try:
                content = content.decode("utf-8")
            except UnicodeDecodeError:
                self.journal.not_captured.append(relative)
                return
        self.journal.files[relative] = content

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        step = Step(json.loads(json.dumps(request)))
        self.journal.add(step)
        try:
            response = self.inner.exchange(request)
        except DriverFailure as exc:
            step.failure = f"{exc.outcome}: {exc.message}"
            raise
        step.response = bounded(response)
        return response

    def exchange_raw(self, sent: bytes, op: str = "raw line") -> dict[str, Any]:
        step = Step({"op": op, "raw_line": sent.decode("utf-8", "replace")})
        self.journal.add(step)
        try:
            response = self.inner.exchange_raw(sent, op)
        except DriverFailure as exc:
            step.failure = f"{exc.outcome}: {exc.message}"
            raise
        step.response = bounded(response)
        return response

    def close(self) -> None:
        self.inner.close()
