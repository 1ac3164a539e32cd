"""A capconf definition as an OpenCode agent file, key by key.

Why: OpenCode's own loader must read the definition, so the adapter writes the agent file
OpenCode reads (`.opencode/agent/NAME.md`: front matter + prompt body). Only keys are
translated, by a fixed rule: capconf's `tools` allow-list becomes OpenCode's ordered
`permission` rules (`"*": deny`, then each declared name `allow`: a capconf registry name
by the fixed table of vocabulary.py, `WebFetch` -> `webfetch`, any other spelling as
written, so `Read` or `WEBFETCH` meet OpenCode's own exact-case matching); the YAML
form's `prompt` becomes the body; `mode: subagent` says what the file is. Every other key
and every value is passed exactly as written, so OpenCode decides what a name means.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml
from _driverkit.source import DOC_START, FRONT, auto_format, declared
from _driverkit.source import load_yaml as _load

from .mcp import permission_rules as mcp_rules
from .skills import declared_skills, permission_rules
from .vocabulary import TO_OPENCODE

CAPABILITY_KEYS = ("skills", "mcp", "knowledge", "memory")
DEF_KEYS = {"name", "description", "tools", "prompt", *CAPABILITY_KEYS}
# a name becomes the file name as written (OpenCode names an agent by its file) when it is
# one harmless path component; anything else is judged by OpenCode under a neutral name
UNSAFE_STEM = re.compile(r"[/\\\x00-\x1f\x7f]|^\.|^-")


@dataclass
class Translated:
    """The agent file for OpenCode, and what the adapter read from the source."""

    stem: str
    text: bytes
    fmt: str
    mapping: dict[str, Any] | None
    body: str | None
    declared_tools: list[str] | None
    notes: list[str] = field(default_factory=list)


TOP_KEY = re.compile(r"""^(?:"([^"]*)"|'([^']*)'|([^\s#'"\-?][^:#]*?))\s*:(?:\s|$)""")


def _top_key(line: str) -> str | None:
    m = TOP_KEY.match(line)
    if not m:
        return None
    return next(g for g in m.groups() if g is not None).strip()


def splice(text: str, drop: set[str], append: list[str]) -> str | None:
    """`text` (a block mapping) with the top-level keys in `drop` cut out, line by line,
    and `append` added: every other byte stays as written, so OpenCode's own YAML reader
    sees the author's scalars (`yes`, `017`), not the adapter's reading of them. None when
    the document is not a plain block mapping."""
    lines = text.splitlines(keepends=True)
    out: list[str] = []
    skipping = False
    seen_key = False
    for line in lines:
        bare = line.rstrip("\r\n")
        key = _top_key(bare) if bare[:1] not in (" ", "\t", "") else None
        if key is not None:
            seen_key = True
            skipping = key in drop
            if not skipping:
                out.append(line)
            continue
        continued = bare == "" or bare[:1] in (" ", "\t") or bare.startswith("-")
        if skipping and continued:
            continue
        if bare.startswith(("{", "[")) and not seen_key:
            return None
        skipping = False
        out.append(line)
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return "".join(out) + "".join(a + "\n" for a in append)


def _encodable(name: str) -> bool:
    try:
        return len(name.encode("utf-8")) <= 200
    except UnicodeEncodeError:
        return False


def translate(raw: bytes, fmt: str, filename: str | None, counter: int) -> Translated:
    """capconf source bytes -> the OpenCode agent file that says the same."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        # nothing to translate: OpenCode's loader gets the bytes as they are
        return Translated(f"agent-{counter}", raw, "markdown", None, None, None,
                          ["source is not UTF-8"])
    if fmt == "auto":
        fmt = auto_format(text, filename)
    # A leading BOM marks the bytes, not the first key or the front matter's opening
    # line: the adapter reads past it, and it stays the first thing of the file OpenCode
    # reads, never moved inside the front matter where it would become part of a key.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    if fmt == "markdown":
        m = FRONT.match(text.removeprefix(bom))
        if not m:  # no front matter the adapter can find: OpenCode reads the file as is
            return Translated(f"agent-{counter}", raw, fmt, {}, text, None)
        front, body = m.group(1), m.group(2)
        mapping = _load(front)
    else:
        mapping, body = _load(text), None
        # a YAML document's own start marker is no key: the front matter's `---` lines
        # delimit the keys in OpenCode's file
        front = DOC_START.sub("", text.removeprefix(bom), count=1)
    if not isinstance(mapping, dict):
        # OpenCode's own parser decides what such a document is
        wrapped = f"{bom}---\n{front}\n---\n{body or ''}"
        return Translated(f"agent-{counter}", wrapped.encode(), fmt, None, body, None)
    fm: dict[str, Any] = {}
    tools = declared(mapping.get("tools")) if "tools" in mapping else None
    skill_names = declared_skills(mapping.get("skills")) if "skills" in mapping else None
    servers = declared_servers(mapping.get("mcp")) if "mcp" in mapping else None
    drop = ({"tools"} if tools is not None else set()) | ({"prompt"} if fmt == "yaml" else set())
    drop |= {"skills"} if skill_names is not None else set()
    drop |= {"mcp"} if servers is not None else set()
    extra_lines: list[str] = []
    rules: dict[str, Any] = {"*": "deny", **{TO_OPENCODE.get(name, name): "allow"
                                             for name in tools or []}} \
        if tools is not None else {}
    if skill_names:  # OpenCode's per-skill rule (skills.py); an empty list adds none
        rules["skill"] = permission_rules(skill_names)
    for pattern, action in mcp_rules(servers or []).items():  # mcp.py: `a_*: allow`
        rules.setdefault(pattern, action)
    if rules:
        extra_lines.append("permission: " + json.dumps(rules, ensure_ascii=False))
    if "mode" not in mapping:
        extra_lines.append("mode: subagent")
    for key, value in mapping.items():
        if fmt == "yaml" and key == "prompt":
            continue
        if key == "tools" and tools is not None:
            fm["permission"] = rules
            continue
        if key in ("skills", "mcp") and key in drop:
            if rules:
                fm["permission"] = rules
            continue
        fm[str(key)] = value
    fm.setdefault("mode", "subagent")
    if fmt == "yaml":
        prompt = mapping.get("prompt")
        body = prompt if isinstance(prompt, str) else ("" if prompt is None else str(prompt))
    agent_name: Any = mapping.get("name")
    stem = agent_name.strip() if isinstance(agent_name, str) and agent_name.strip() \
        and not UNSAFE_STEM.search(agent_name.strip()) \
        and _encodable(agent_name.strip()) \
        else f"agent-{counter}"
    spliced = splice(front, drop, extra_lines)
    if spliced is None:
        spliced = yaml.safe_dump(fm, sort_keys=False, allow_unicode=True,
                                 default_flow_style=False)
    out = f"{bom}---\n{spliced}---\n{body or ''}"
    return Translated(stem, out.encode("utf-8", "surrogatepass"), fmt, mapping, body, tools)


def declared_servers(value: Any) -> list[str] | None:
    """The server names `mcp: {servers: [...]}` declares, as written (trimmed of spaces and
    tabs, DEF-01), or None (any other shape: passed to OpenCode untouched)."""
    if not isinstance(value, dict) or set(value) - {"servers"}:
        return None
    names = declared(value.get("servers"))
    if names is None:
        return None
    return list(dict.fromkeys(names))


def normalised(t: Translated, agent: dict[str, Any] | None) -> dict[str, Any] | None:
    """capconf's `definition` view: names and values from OpenCode's loaded agent where
    OpenCode keeps them (name, description, prompt, options), as written otherwise."""
    if agent is None or t.mapping is None:
        return None
    m = t.mapping
    options = agent.get("options") or {}
    mcp = m.get("mcp")
    servers = mcp.get("servers") if isinstance(mcp, dict) else None
    memory = m.get("memory")
    return {
        "format": t.fmt,
        "name": agent.get("name"),
        "description": agent.get("description"),
        "body": agent.get("prompt"),
        "tools": t.declared_tools,
        "skills": (m.get("skills") or []) if "skills" in m else None,
        "mcp": {"servers": servers if isinstance(servers, list) else []} if "mcp" in m else None,
        "knowledge": (m.get("knowledge") or []) if "knowledge" in m else None,
        "memory": memory.lower() if isinstance(memory, str) else None,
        "extra": {k: v for k, v in options.items() if k not in DEF_KEYS}
        if isinstance(options, dict) else {},
    }
