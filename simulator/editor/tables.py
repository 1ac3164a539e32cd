"""SPEC.md tables of the editor area, generated from the code tables they describe."""

from __future__ import annotations

from collections.abc import Callable

from capconf.simulator.core.nearest import CUTOFF_TABLE, MAX_SUGGESTIONS
from capconf.simulator.editor.form import REFUSAL_TABLE
from capconf.simulator.editor.unknown import UNKNOWN_NAME_CODES


def _refusals() -> str:
    rows = ["| refusal code | when |", "|---|---|"]
    rows += [f"| `{code}` | {when} |" for code, when in REFUSAL_TABLE]
    return "\n".join(rows)


def _unknown_codes() -> str:
    rows = ["| diagnostic code | field |", "|---|---|"]
    rows += [f"| `{code}` | `{field}` |" for code, field in UNKNOWN_NAME_CODES]
    return "\n".join(rows)


def _cutoffs() -> str:
    rows = ["| name length (code points, folded) | largest distance suggested |", "|---|---|"]
    low = 1
    for longest, distance in CUTOFF_TABLE:
        span = f"{low}-{longest}" if longest is not None else f"{low} or more"
        rows.append(f"| {span} | {distance} |")
        low = (longest or 0) + 1
    rows.append(f"\nAt most {MAX_SUGGESTIONS} suggestions.")
    return "\n".join(rows)


SPEC_TABLES: dict[str, Callable[[], str]] = {
    "editor-refusals": _refusals,
    "editor-unknown-codes": _unknown_codes,
    "editor-nearest-cutoffs": _cutoffs,
}
