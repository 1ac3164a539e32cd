"""Where a child's session lives: its context, its progress notes and its end.

The same :class:`ChildHost` logic runs in the host process for the in-process implementers
(``fresh``, ``fork``) and inside the worker process of the out-of-process implementer
(``worker.py``), so the cancellation contract (DELEG-06) is one piece of code whichever
side of the channel a child runs on: a stopped child answers with its partial report (the
progress it posted) and never runs again; a finished child can be followed up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

RUNNING = "running"
COMPLETED = "completed"
BLOCKED = "blocked"
STOPPED = "stopped"
END_STATES = (COMPLETED, BLOCKED)


class HostError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass
class ChildSession:
    context: list[dict[str, Any]]
    progress: list[str] = field(default_factory=list)
    status: str = RUNNING


class Host(Protocol):
    """The service interface every implementer's child runtime offers the capability."""

    def start(self, child: str, context: list[dict[str, Any]]) -> None: ...
    def follow_up(self, child: str, text: str) -> None: ...
    def progress(self, child: str, text: str) -> None: ...
    def finish(self, child: str, status: str, report: Any) -> dict[str, Any]: ...
    def stop(self, child: str) -> dict[str, Any]: ...
    def context(self, child: str) -> list[dict[str, Any]]: ...


class ChildHost:
    """In-memory child sessions; deterministic, no clock."""

    def __init__(self) -> None:
        self.children: dict[str, ChildSession] = {}

    def _get(self, child: str) -> ChildSession:
        session = self.children.get(child)
        if session is None:
            raise HostError("TASK-NOT-FOUND", f"no child {child!r} in this host")
        return session

    def _running(self, child: str) -> ChildSession:
        session = self._get(child)
        if session.status == STOPPED:
            raise HostError("TASK-STOPPED", f"{child} was stopped; a stopped child never "
                            "runs again")
        if session.status != RUNNING:
            raise HostError("TASK-NOT-RUNNING", f"{child} is {session.status}, not running")
        return session

    def start(self, child: str, context: list[dict[str, Any]]) -> None:
        self.children[child] = ChildSession([dict(e) for e in context])

    def follow_up(self, child: str, text: str) -> None:
        session = self._get(child)
        if session.status == STOPPED:
            raise HostError("TASK-STOPPED", f"{child} was stopped; a stopped child never "
                            "comes back")
        if session.status == RUNNING:
            raise HostError("TASK-NOT-FINISHED", f"{child} is still running; follow up "
                            "once it has reported")
        session.context.append({"kind": "follow-up", "role": "user", "text": text})
        session.status = RUNNING

    def progress(self, child: str, text: str) -> None:
        self._running(child).progress.append(text)

    def finish(self, child: str, status: str, report: Any) -> dict[str, Any]:
        session = self._running(child)
        if status not in END_STATES:
            raise HostError("bad_request", f"status must be one of {', '.join(END_STATES)}")
        session.status = status
        return {"status": status, "report": report, "progress": list(session.progress)}

    def stop(self, child: str) -> dict[str, Any]:
        """Idempotent: stopping a stopped child reports nothing new (``None`` partial)."""
        session = self._get(child)
        if session.status == STOPPED:
            return {"status": STOPPED, "report": None, "progress": [], "already": True}
        was = session.status
        session.status = STOPPED
        partial = list(session.progress) if was == RUNNING else []
        return {"status": STOPPED, "report": None, "progress": partial, "already": False}

    def context(self, child: str) -> list[dict[str, Any]]:
        return [dict(e) for e in self._get(child).context]
