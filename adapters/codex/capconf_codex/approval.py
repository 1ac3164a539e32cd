"""`approval.setup`: capconf's session policy as the Codex sandbox a run starts with.

Why only this: `codex exec` runs with approval policy `never` (nobody attends), so a
session policy can only be said to Codex as its sandbox mode (`-s`) and writable roots
(`sandbox_workspace_write.writable_roots`); Codex's sandbox then decides every call.
Attendance and ask policy have no counterpart in a headless run (there nobody can be
asked whatever they say), so they are echoed and change nothing. The attended protocol
(`codex app-server`, its `requestApproval` asks) is not translated: the `approval`
group is not declared.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from _driverkit.protocol import ProtoError

if TYPE_CHECKING:
    from .driver import Driver

# capconf tier -> Codex sandbox mode (a fixed table)
SANDBOX: dict[str, str] = {
    "confirm-before-change": "read-only",
    "auto-within-workspace": "workspace-write",
    "auto-edit": "workspace-write",
    "full-access": "danger-full-access",
}
ATTENDANCE = ("attended", "unattended")
ASK = ("ask-parent", "never-ask")


def op_setup(d: Driver, args: dict[str, Any]) -> dict[str, Any]:
    for key in args:
        if key not in ("tier", "attendance", "ask_policy", "writable_roots"):
            raise ProtoError("bad_request", f"unknown argument `{key}`", ["args", key])
    tier = args.get("tier")
    if tier not in SANDBOX:
        raise ProtoError("bad_request", "`tier` is one of " + ", ".join(SANDBOX),
                         ["args", "tier"])
    attendance = args.get("attendance", "attended")
    if attendance not in ATTENDANCE:
        raise ProtoError("bad_request", "`attendance` is attended or unattended",
                         ["args", "attendance"])
    ask = args.get("ask_policy", "ask-parent")
    if ask not in ASK:
        raise ProtoError("bad_request", "`ask_policy` is ask-parent or never-ask",
                         ["args", "ask_policy"])
    roots = args.get("writable_roots", [])
    if not isinstance(roots, list):
        raise ProtoError("bad_request", "`writable_roots` is a list",
                         ["args", "writable_roots"])
    for i, r in enumerate(roots):
        if not isinstance(r, str) or not os.path.isabs(r):
            raise ProtoError("bad_request", "a writable root is an absolute path",
                             ["args", "writable_roots", i])
    d.sandbox = SANDBOX[tier]
    d.sandbox_flags = ["-c", "sandbox_workspace_write.writable_roots="
                       + json.dumps(roots)] if roots else []
    d.policy = {"tier": tier, "attendance": attendance, "ask_policy": ask,
                "writable_roots": list(roots)}
    return {"policy": dict(d.policy)}


OPS: dict[str, Any] = {"approval.setup": op_setup}
