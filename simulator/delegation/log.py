"""The delegation tree's event log (APPR-08, DELEG-02): every fact about a child that
decides what it may do, written when it happens, so a child's permissions and lineage are
reconstructible from its own entries. No clock: events are numbered. The text form is one
JSON object per line with sorted keys and no spaces, so the same world and inputs give
the same bytes.

Reads are linear in what they return: each event's text line is encoded once, when it is
recorded, and each agent's events are indexed, so reading the log of a tree of 100,000
children (or one agent's share of it) costs the size of the answer, not a re-encoding of
the whole log or a scan of every other agent's events."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

FROM_DELEGATION = "delegation"


def _line(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n"


@dataclass
class EventLog:
    events: list[dict[str, Any]] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    """``lines[i]`` is the text of ``events[i]``, encoded when it was recorded."""
    by_agent: dict[str, list[int]] = field(default_factory=dict)
    """Each agent's events, as indexes into ``events``, in order."""

    def record(self, agent: str, event: str, **facts: Any) -> None:
        entry = {"seq": len(self.events) + 1, "agent": agent, "event": event,
                 "from": FROM_DELEGATION, **facts}
        self.by_agent.setdefault(agent, []).append(len(self.events))
        self.events.append(entry)
        self.lines.append(_line(entry))

    def _indexes(self, agent: str | None) -> range | list[int]:
        return range(len(self.events)) if agent is None else self.by_agent.get(agent, [])

    def of(self, agent: str | None) -> list[dict[str, Any]]:
        """The recorded entries themselves, not copies: an entry is a record, never
        changed after it is written, and copying 300,000 of them for one read cost more
        (in allocations the garbage collector then walks) than the read itself."""
        if agent is None:
            return list(self.events)
        return [self.events[i] for i in self.by_agent.get(agent, [])]

    def text_of(self, agent: str | None) -> str:
        """``to_text(self.of(agent))``, from the lines encoded when recorded."""
        return "".join(self.lines[i] for i in self._indexes(agent))


def to_text(events: list[dict[str, Any]]) -> str:
    return "".join(_line(e) for e in events)
