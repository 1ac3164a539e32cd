"""Permissions pinned at the delegation boundary (APPR-06, APPR-07).

At the moment of delegation the child gets a *snapshot* of its parent's effective sandbox
overrides (the approval tier, the attendance and the writable roots) and an approval
policy pinned to never-ask, whatever the parent's own ask policy. The snapshot is a frozen
value, so nothing the parent does later (a new tier, new roots) reaches the child, and
nothing the child does can write the parent's policy: there is no shared object.

"Allow for this session" answers do not carry over (decision): an approved card approves
one call with the arguments the user saw (APPR-02); it is not a sandbox override, so it is
not part of the snapshot. A child that needs more reports the limit to its delegator.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from capconf.simulator.approval.decision import ApprovalPolicy, AskPolicy

FIXED_NOTICE = (
    "You are a delegated subagent. Your permissions were fixed when you were started and "
    "cannot be widened from inside this session: actions that need approval are denied "
    "automatically. If the work needs more than these permissions allow, do not retry the "
    "denied action; say in your reply which limit stopped you and let your delegator "
    "handle it."
)
"""APPR-07: the notice every delegated child's context carries, verbatim (golden)."""


@dataclass(frozen=True)
class PinnedPermissions:
    policy: ApprovalPolicy
    writable_roots: tuple[Path, ...]

    def to_json(self) -> dict[str, object]:
        return {"tier": str(self.policy.tier), "attendance": str(self.policy.attendance),
                "ask_policy": str(self.policy.ask_policy),
                "writable_roots": [r.as_posix() for r in self.writable_roots]}


def pin(parent_policy: ApprovalPolicy, parent_roots: tuple[Path, ...]) -> PinnedPermissions:
    """The child's permissions: the parent's sandbox as it is now, never asking."""
    return PinnedPermissions(replace(parent_policy, ask_policy=AskPolicy.NEVER_ASK),
                             tuple(parent_roots))
