"""A capconf definition as a Codex agent role file (`CODEX_HOME/agents/NAME.toml`).

Why key by key: Codex's own role loader must read the definition, so the adapter writes
the role file Codex reads, translating only keys that have a Codex counterpart:
`name` -> `name`, `description` -> `description`, the Markdown body / the YAML `prompt`
-> `developer_instructions`, `mcp.servers` -> one `[mcp_servers.NAME]` table per declared
server (the world's settings for that name, an empty table when the world has none).
capconf's `tools`, `skills`, `knowledge` and `memory` have no role key in Codex (its
role key `tools` is a different setting), so they are not written: the grant Codex then
offers is Codex's own. Every other key (unknown and foreign keys) is written as written,
and Codex's loader decides (it refuses unknown fields).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from _driverkit.source import FRONT, auto_format, declared, load_yaml

NOT_IN_CODEX = ("tools", "skills", "knowledge", "memory")
SAFE_STEM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,100}$")
BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+$")


@dataclass
class Role:
    """The role file for Codex, and what the adapter read from the source."""

    stem: str
    agent_type: str
    toml: str
    fmt: str
    mapping: dict[str, Any] | None
    body: str | None
    declared_tools: list[str] | None
    mcp_servers: list[str] = field(default_factory=list)
    readable: bool = True


def _key(k: str) -> str:
    return k if BARE_KEY.match(k) else json.dumps(k, ensure_ascii=False)


class TooLarge(ValueError):
    """A value whose expansion (YAML aliases) exceeds the adapter's budget."""


BUDGET = 100_000


def toml_value(v: Any, budget: list[int] | None = None) -> str | None:
    """A TOML value for a YAML value; None when TOML has no way to say it (null).
    Raises TooLarge past BUDGET nodes: an alias bomb is never expanded."""
    budget = budget if budget is not None else [BUDGET]
    budget[0] -= 1
    if budget[0] < 0:
        raise TooLarge("the value expands beyond 100,000 nodes")
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, str):
        return json.dumps(v.encode("utf-8", "replace").decode("utf-8"), ensure_ascii=False)
    if isinstance(v, list):
        items = [toml_value(x, budget) for x in v]
        return "[" + ", ".join(x for x in items if x is not None) + "]"
    if isinstance(v, dict):
        pairs = [(str(k), toml_value(x, budget)) for k, x in v.items()]
        return "{" + ", ".join(f"{_key(k)} = {x}" for k, x in pairs if x is not None) + "}"
    return None


def translate(raw: bytes, fmt: str, filename: str | None, counter: int,
              world_servers: dict[str, dict[str, Any]]) -> Role:
    """capconf source bytes -> the Codex role file that says the same."""
    stem = f"capconf-{counter}"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Role(stem, stem, raw.decode("utf-8", "replace"), "markdown", None, None,
                    None, readable=False)
    if fmt == "auto":
        fmt = auto_format(text, filename)
    body: str | None
    # A leading BOM marks the bytes, not the front matter's opening line or the first
    # key: the adapter reads past it and starts the role file with it, so Codex's own
    # TOML reader decides what a BOM is (the adapter never drops it for Codex).
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    text = text.removeprefix(bom)
    if fmt == "markdown":
        m = FRONT.match(text)
        if not m:
            return Role(stem, stem, "", fmt, None, text, None, readable=False)
        mapping, body = load_yaml(m.group(1)), m.group(2)
    else:
        mapping, body = load_yaml(text), None
    if not isinstance(mapping, dict):
        return Role(stem, stem, "", fmt, None, body, None, readable=False)
    if fmt == "yaml":
        prompt = mapping.get("prompt")
        body = prompt if isinstance(prompt, str) else ("" if prompt is None else str(prompt))
    name = mapping.get("name")
    agent_type = name if isinstance(name, str) and name else stem
    if isinstance(name, str) and SAFE_STEM.match(name):
        stem = name
    try:
        role = _translate(mapping, fmt, stem, body, agent_type, world_servers)
        return dataclasses.replace(role, toml=bom + role.toml)
    except TooLarge:
        # TOML has no aliases: such a value cannot be written, so no role file is
        # written and Codex answers the spawn as for any unknown type
        return Role(stem, agent_type, "", fmt, mapping, body, None, readable=False)


def _translate(mapping: dict[str, Any], fmt: str, stem: str, body: str | None,
               agent_type: str, world_servers: dict[str, dict[str, Any]]) -> Role:
    budget = [BUDGET]
    lines: list[str] = []
    tables: list[str] = []
    servers: list[str] = []
    for key, value in mapping.items():
        k = str(key)
        if k in NOT_IN_CODEX or (fmt == "yaml" and k == "prompt"):
            continue
        if k == "mcp":
            got = value.get("servers") if isinstance(value, dict) else None
            servers = [str(s) for s in got] if isinstance(got, list) else []
            for s in servers:
                settings = world_servers.get(s, {})
                tables.append(f"[mcp_servers.{_key(s)}]")
                tables += [f"{_key(sk)} = {tv}" for sk, sv in settings.items()
                           if (tv := toml_value(sv, budget)) is not None]
            continue
        tv = toml_value(value, budget)
        if tv is not None:
            lines.append(f"{_key(k)} = {tv}")
    lines.append(f"developer_instructions = {toml_value(body or '')}")
    toml = "\n".join(lines + tables) + "\n"
    tools = declared(mapping.get("tools")) if "tools" in mapping else None
    return Role(stem, agent_type, toml, fmt, mapping, body, tools, servers)


def normalised(role: Role, loaded_body: str | None) -> dict[str, Any] | None:
    """capconf's `definition` view of what the adapter wrote (names as written)."""
    if role.mapping is None:
        return None
    m = role.mapping
    mcp = m.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    memory = m.get("memory")
    known = {"name", "description", "tools", "prompt", "skills", "mcp", "knowledge",
             "memory"}
    return {
        "format": role.fmt,
        "name": m.get("name") if isinstance(m.get("name"), str) else None,
        "description": m.get("description") if isinstance(m.get("description"), str)
        else None,
        "body": loaded_body if loaded_body is not None else role.body,
        "tools": role.declared_tools,
        "skills": declared(m.get("skills")) if "skills" in m else None,
        "mcp": {"servers": servers if isinstance(servers, list) else []} if "mcp" in m
        else None,
        "knowledge": (m.get("knowledge") or []) if "knowledge" in m else None,
        "memory": memory.lower() if isinstance(memory, str) else None,
        "extra": {str(k): _json(v) for k, v in m.items() if k not in known},
    }


def _json(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        return ".nan" if math.isnan(v) else (".inf" if v > 0 else "-.inf")
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    if isinstance(v, list):
        return [_json(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _json(x) for k, x in v.items()}
    return v
