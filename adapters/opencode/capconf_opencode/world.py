"""capconf's `world.setup` arguments: validated, kept, and written as OpenCode config.

Why here: PROTO-02 wants every bad argument refused with its path, and the world the suite
describes must be the one OpenCode runs in. OpenCode's built-in tools always exist, so a
tool outside the world's registry or session table is switched off the only way OpenCode
offers: a project-level `permission` rule `deny` (an agent's own rules may still override
it; that is OpenCode's precedence, not the adapter's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _driverkit import world as common
from _driverkit.world import WorldInvalid

from .mcp import McpWorld, parse_mcp_world
from .skills import SkillsWorldInvalid, SkillWorld, parse_skill_world
from .vocabulary import OPENCODE_ONLY, TO_OPENCODE


@dataclass
class World(common.World):
    skills: SkillWorld | None = None
    mcp: McpWorld | None = None

    def config(self) -> dict[str, Any]:
        """The project `opencode.json` that says this world in OpenCode's terms."""
        usable = set(self.grantable) & set(self.session_tools)
        rules = {t: "deny" for t in OPENCODE_ONLY}
        for name, oc in TO_OPENCODE.items():
            if name not in usable:
                rules[oc] = "deny"
        config: dict[str, Any] = {"$schema": "https://opencode.ai/config.json",
                                  "permission": rules}
        if self.skills is not None:
            config["skills"] = {"paths": self.skills.paths()}
        if self.mcp is not None and self.mcp.config():
            config["mcp"] = self.mcp.config()  # mcp.py: capconf's servers as OpenCode's
        return config

    def write_config(self, directory: Path, marker: str | None = None) -> None:
        """`marker` becomes the config's `username` (used only as telemetry metadata,
        which is off): the load reads it back from `GET /config` to know OpenCode's
        instance read this config, not an earlier one it revived (agents.load)."""
        config = self.config()
        if marker is not None:
            config["username"] = marker
        (directory / "opencode.json").write_text(json.dumps(config, indent=1))


def parse_world(args: dict[str, Any]) -> World:
    world = common.parse_world(args, TO_OPENCODE, World)
    try:
        world.skills = parse_skill_world(args.get("skills"), world.workspace)
    except SkillsWorldInvalid as e:
        raise WorldInvalid(str(e), e.path) from e
    world.mcp = parse_mcp_world(args.get("mcp"), world.workspace)
    return world
