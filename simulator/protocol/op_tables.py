"""Which ops and feature groups this build of the reference serves.

Each capability area adds its op table module here (one line each) and names its
feature group in FEATURES: `hello` reports exactly this.
"""

from __future__ import annotations

from capconf.simulator.approval.ops import OPS as MCP_APPROVAL_OPS
from capconf.simulator.call.ops import OPS as CALL_OPS
from capconf.simulator.compose.session import Handler
from capconf.simulator.connectors.ops import OPS as CONNECTOR_OPS
from capconf.simulator.delegation.ops import OPS as DELEGATION_OPS
from capconf.simulator.editor.ops import OPS as EDITOR_OPS
from capconf.simulator.executors.ops import OPS as EXECUTOR_OPS
from capconf.simulator.flow.ops import OPS as FLOW_OPS
from capconf.simulator.memory.ops import OPS as MEMORY_OPS
from capconf.simulator.namespaces.ops import OPS as NAMESPACE_OPS
from capconf.simulator.protocol.core_ops import CORE_OPS
from capconf.simulator.skills.ops import OPS as SKILLS_KNOWLEDGE_OPS

FEATURES: tuple[str, ...] = ("def", "tool", "prompt", "call", "memory", "skills", "knowledge",
                             "mcp", "approval", "editor", "delegation", "flow",
                             "namespaces", "connectors", "executors", "reference-text")

OP_TABLES: tuple[dict[str, Handler], ...] = (
    CORE_OPS,
    MEMORY_OPS,
    SKILLS_KNOWLEDGE_OPS,
    MCP_APPROVAL_OPS,
    EDITOR_OPS,
    DELEGATION_OPS,
    FLOW_OPS,
    NAMESPACE_OPS,
    CALL_OPS,
    CONNECTOR_OPS,
    EXECUTOR_OPS,
)


def all_ops() -> dict[str, Handler]:
    ops: dict[str, Handler] = {}
    for table in OP_TABLES:
        clash = set(ops) & set(table)
        if clash:
            raise RuntimeError(f"ops defined twice: {sorted(clash)}")
        ops.update(table)
    return ops
