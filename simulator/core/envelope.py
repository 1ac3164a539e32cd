"""The result of calling a tool: a value or a structured error envelope (CALL-03).

Errors are data the model can act on (stop, wait, or take another route), never
exception text. ``terminal_for_attempt`` and ``retry_after_ms`` are present only where
they mean something; their absence is serialised as JSON null.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolError:
    code: str
    message: str
    detail: dict[str, Any] = field(default_factory=dict)
    terminal_for_attempt: bool | None = None
    retry_after_ms: int | None = None


@dataclass(frozen=True)
class ToolResult:
    ok: bool
    content: Any = None
    error: ToolError | None = None

    def to_json(self) -> dict[str, Any]:
        if self.ok:
            return {"ok": True, "content": self.content}
        assert self.error is not None
        return {
            "ok": False,
            "error_code": self.error.code,
            "error_message": self.error.message,
            "error_detail": self.error.detail,
            "terminal_for_attempt": self.error.terminal_for_attempt,
            "retry_after_ms": self.error.retry_after_ms,
        }


def success(content: Any) -> ToolResult:
    return ToolResult(ok=True, content=content)


def failure(
    code: str,
    message: str,
    detail: dict[str, Any] | None = None,
    *,
    terminal_for_attempt: bool | None = None,
    retry_after_ms: int | None = None,
) -> ToolResult:
    return ToolResult(
        ok=False,
        error=ToolError(code, message, detail or {}, terminal_for_attempt, retry_after_ms),
    )
