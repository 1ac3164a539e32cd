"""VM-type gating of skills (SKILL-10).

A skill's `availability` says where it may be revealed. In a confidential VM, a skill whose
`availability.confidential_vm` is false is closed: not listed, not found by skill_search,
not loadable by name, and each of those says why, so the model reports "not available
here" instead of "broken" (seed 001 section 7.3). The VM type is a property of the session,
set by the harness in `world.setup`.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum


class VmType(StrEnum):
    STANDARD = "standard"
    CONFIDENTIAL = "confidential"


class GateReason(StrEnum):
    CONFIDENTIAL_VM = "confidential-vm"


# (availability key, the VM type where `key: false` closes the skill, reason reported).
# An absent key means available (the real skill.yaml files state it only to say where).
GATE_TABLE: tuple[tuple[str, VmType, GateReason], ...] = (
    ("confidential_vm", VmType.CONFIDENTIAL, GateReason.CONFIDENTIAL_VM),
)


def gate_reason(availability: Mapping[str, bool], vm_type: VmType) -> GateReason | None:
    """The first gate that closes this skill in this VM, or None (available)."""
    for key, closed_in, reason in GATE_TABLE:
        if vm_type is closed_in and availability.get(key, True) is False:
            return reason
    return None


def gate_table() -> str:
    rows = ["| availability key | VM type | when the key is `false` | reason |",
            "|---|---|---|---|"]
    rows += [f"| `{key}` | `{vm}` | not listed, not found, not loadable | `{reason}` |"
             for key, vm, reason in GATE_TABLE]
    return "\n".join(rows)
