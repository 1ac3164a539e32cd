"""The skills tables SPEC.md shows, generated from the code that decides them (see
``capconf.simulator.spec_tables``): layers, reference rules, offers, gates, flags."""

from __future__ import annotations

from collections.abc import Callable

from capconf.simulator.skills import flags, preferences
from capconf.simulator.skills.folder import REFERENCE_ON_DISK_RULE, REFERENCE_RULES, ReferenceEscape
from capconf.simulator.skills.gating import gate_table
from capconf.simulator.skills.packages import LAYER_TABLE


def _layer_table() -> str:
    rows = ["| order | layer | default provenance |", "|---|---|---|"]
    rows += [f"| {i} | `{layer}` | {prov} |" for i, (layer, prov) in
             enumerate(LAYER_TABLE, start=1)]
    return "\n".join(rows)


def _reference_table() -> str:
    rows = ["| reason | rule |", "|---|---|"]
    rows += [f"| `{reason}` | {rule} |" for reason, rule, _ in REFERENCE_RULES]
    rows.append(f"| `{ReferenceEscape.SYMLINK}` | {REFERENCE_ON_DISK_RULE} |")
    return "\n".join(rows)


# Generated regions of SPEC.md (see capconf.simulator.spec_tables).
SPEC_TABLES: dict[str, Callable[[], str]] = {
    "skill-layers": _layer_table,
    "skill-reference-rules": _reference_table,
    "skill-offer-events": preferences.events_table,
    "skill-offer-rules": preferences.offer_table,
    "skill-gates": gate_table,
    "skill-flag-rules": flags.rules_table,
}
