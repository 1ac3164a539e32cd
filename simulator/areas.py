"""The composition root: the capability dimensions, in catalog order (PROMPT-02):
skills -> knowledge -> MCP -> memory. Each entry is one area's ``Dimension``; replacing a
dimension is one line. The composition (``capconf.simulator.compose``) walks the
dimensions; no area imports this module, and ``core`` knows none of them."""

from __future__ import annotations

from capconf.simulator.core.dimension import Dimension
from capconf.simulator.definition.document import Definition
from capconf.simulator.knowledge.dimension import KnowledgeDimension
from capconf.simulator.mcp.dimension import McpDimension
from capconf.simulator.memory.dimension import MemoryDimension
from capconf.simulator.skills.dimension import SkillsDimension

DIMENSIONS: tuple[Dimension[Definition], ...] = (
    SkillsDimension(),
    KnowledgeDimension(),
    McpDimension(),
    MemoryDimension(),
)
