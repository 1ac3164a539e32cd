"""The composition root: the capability dimensions, in catalog order (PROMPT-02):
skills -> knowledge -> MCP -> memory. Each entry is one area's ``Dimension``; replacing a
dimension is one line. Core modules that walk the dimensions import this module; no
area imports it."""

from __future__ import annotations

from capconf.simulator.core.dimension import Dimension
from capconf.simulator.knowledge.dimension import KnowledgeDimension
from capconf.simulator.mcp.dimension import McpDimension
from capconf.simulator.memory.dimension import MemoryDimension
from capconf.simulator.skills.dimension import SkillsDimension

DIMENSIONS: tuple[Dimension, ...] = (
    SkillsDimension(),
    KnowledgeDimension(),
    McpDimension(),
    MemoryDimension(),
)
