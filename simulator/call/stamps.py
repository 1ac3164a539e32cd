"""Request stamps (CALL-01): request_id, parent_request_id and a trace context, all drawn
from counters so a rerun produces the same bytes.

A turn (a user message) opens a trace; every call made in that turn is a span of it whose
parent is the turn, and a call made on behalf of a hand-off is a span whose parent is the
call that handed off. The trace context is W3C-shaped (32 and 16 hex digits) because that
is what tracing back ends accept; the suite checks only sameness and distinctness.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Stamp:
    request_id: str
    parent_request_id: str | None
    trace_id: str
    span_id: str

    def to_json(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "parent_request_id": self.parent_request_id,
                "trace": {"trace_id": self.trace_id, "span_id": self.span_id}}


@dataclass
class Stamper:
    _requests: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    _traces: Iterator[int] = field(default_factory=lambda: itertools.count(1))

    def turn(self) -> Stamp:
        """A user turn: the root of a new trace, with no parent."""
        n = next(self._requests)
        return Stamp(f"req-{n}", None, f"{next(self._traces):032x}", f"{n:016x}")

    def child(self, parent: Stamp) -> Stamp:
        n = next(self._requests)
        return Stamp(f"req-{n}", parent.request_id, parent.trace_id, f"{n:016x}")
