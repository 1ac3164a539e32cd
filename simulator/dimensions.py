"""The capability dimensions, in catalog order (PROMPT-02): skills -> knowledge -> MCP ->
memory. Each entry is one module's ``Dimension``; replacing a dimension is one line."""

from __future__ import annotations

from simulator.dimension import Dimension
from simulator.knowledge_dimension import KnowledgeDimension
from simulator.mcp.dimension import McpDimension
from simulator.memory_dimension import MemoryDimension
from simulator.skills_dimension import SkillsDimension

DIMENSIONS: tuple[Dimension, ...] = (
    SkillsDimension(),
    KnowledgeDimension(),
    McpDimension(),
    MemoryDimension(),
)
