"""The delegation tree's event log (APPR-08, DELEG-02): every fact about a child that
decides what it may do, written when it happens, so a child's permissions and lineage are
reconstructible from its own entries. No clock: events are numbered. The text form is one
JSON object per line with sorted keys and no spaces, so the same world and inputs give
the same bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FROM_DELEGATION = "delegation"


@dataclass
class EventLog:
    events: list[dict[str, Any]] = field(default_factory=list)

    def record(self, agent: str, event: str, **facts: Any) -> None:
        self.events.append({"seq": len(self.events) + 1, "agent": agent, "event": event,
                            "from": FROM_DELEGATION, **facts})

    def of(self, agent: str | None) -> list[dict[str, Any]]:
        return [dict(e) for e in self.events if agent is None or e["agent"] == agent]


def to_text(events: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(e, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                   + "\n" for e in events)
