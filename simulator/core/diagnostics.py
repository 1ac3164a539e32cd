"""Structured diagnostics shared by every capability dimension.

A diagnostic is data, never an exception: parse mode must keep going after a problem
(DEF-02), and every problem must say where it is and what to do next (DEF-03). The
severity of a kind depends on the validation mode, so a kind carries one severity per
mode and the mode picks it; modules declare their kinds as module-level constants and
``capconf.simulator.compose.diagnostic_catalog`` collects them for SPEC.md's code table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Mode(StrEnum):
    """Parse (load) mode warns and keeps the rest; save mode rejects (DEF-02)."""

    PARSE = "parse"
    SAVE = "save"


PathItem = str | int


@dataclass(frozen=True)
class Location:
    """Where a problem is: a key path into the document and, when the source text has
    it, the 1-based line and column of the offending token (for Markdown files, counted
    from the top of the file, not of the front matter)."""

    path: tuple[PathItem, ...] = ()
    line: int | None = None
    column: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"path": list(self.path), "line": self.line, "column": self.column}

    def display(self) -> str:
        text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in self.path)
        text = text.lstrip(".") or "<document>"
        if self.line is not None:
            text += f" (line {self.line}, column {self.column})"
        return text


@dataclass(frozen=True)
class DiagnosticKind:
    """One row of the diagnostic code table: a stable code, the requirement it
    enforces, and its severity in each validation mode."""

    code: str
    requirement: str
    parse_severity: Severity
    save_severity: Severity
    summary: str

    def severity(self, mode: Mode) -> Severity:
        return self.parse_severity if mode is Mode.PARSE else self.save_severity


@dataclass(frozen=True)
class Diagnostic:
    code: str
    severity: Severity
    message: str
    location: Location = field(default_factory=Location)
    requirement: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "code": self.code,
            "severity": str(self.severity),
            "message": self.message,
            "requirement": self.requirement,
            **self.location.to_json(),
        }


def diagnose(kind: DiagnosticKind, mode: Mode, message: str,
             location: Location | None = None) -> Diagnostic:
    """Build a diagnostic of ``kind`` with the severity ``mode`` gives it."""
    return Diagnostic(
        code=kind.code,
        severity=kind.severity(mode),
        message=message,
        location=location or Location(),
        requirement=kind.requirement,
    )


def worst(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic]) -> Severity | None:
    """The most severe level present, or None when there are no diagnostics."""
    levels = {d.severity for d in diagnostics}
    for level in (Severity.ERROR, Severity.WARNING, Severity.INFO):
        if level in levels:
            return level
    return None


class WorldSetupError(ValueError):
    """The harness described a world that cannot exist (e.g. two registry names equal
    up to case). Raised by world parsers; the dispatcher turns it into a protocol error
    with the JSON path of the bad argument."""

    def __init__(self, path: tuple[PathItem, ...], message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message
