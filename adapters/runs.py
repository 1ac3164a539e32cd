"""A `capconf run --report` JSON Lines file, read as the adapters' reports need it: the
header (implementation, declared groups) and one record per case.

Why not capconf's own report reader: the adapters' committed runs span report versions
(an older run has no fingerprints or requirement records); this reader needs only the
fields every version has, and names file and line when one is missing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Case:
    case: str
    requirements: tuple[str, ...]
    level: str
    outcome: str
    reason: str


@dataclass(frozen=True)
class Annotation:
    kind: str  # a | b | c | ? (a line without `kind X:`)
    text: str  # the note after `kind X:`


@dataclass
class Run:
    header: dict[str, object]
    cases: list[Case] = field(default_factory=list)


class InputError(Exception):
    """A report or baseline line that cannot be read; the message names file and line."""


def read_report(path: Path) -> Run:
    run: Run | None = None
    for number, line in enumerate(lines(path), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(row, dict):
            raise InputError(f"{path}:{number}: not a JSON object")
        if row.get("type") == "header":
            run = Run(header=row)
        elif row.get("type") == "case":
            if run is None:
                raise InputError(f"{path}:{number}: case line before the header")
            try:
                run.cases.append(Case(str(row["case"]), tuple(row["requirements"]),
                                      str(row["level"]), str(row["outcome"]),
                                      str(row.get("reason", ""))))
            except (KeyError, TypeError) as exc:
                raise InputError(f"{path}:{number}: case line lacks {exc}") from None
    if run is None:
        raise InputError(f"{path}: no header line (is this a `capconf run --report` file?)")
    return run


def lines(path: Path) -> list[str]:
    try:
        # JSON Lines end with \n only: a case's reason may hold U+0085 or U+2028, which
        # str.splitlines() takes for line breaks (capconf's report_file.py reads it so too)
        return [line.removesuffix("\r") for line in
                path.read_text(encoding="utf-8").split("\n")]
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read ({exc})") from None


def features(run: Run) -> list[str]:
    """The groups the implementation declared in `hello` (the report header keeps them)."""
    value = run.header.get("features")
    return [str(g) for g in value] if isinstance(value, list) else []


