"""A capconf definition -> a Claude Code agent file (`.claude/agents/NAME.md`), by
vocabulary alone.

Why this shape: Claude Code's own loader must decide what the file means, so the adapter
changes only spellings: the YAML form's `prompt` becomes the Markdown body, `mcp:
{servers: [..]}` becomes `mcpServers: [..]`, `memory: private|shared` becomes `memory:
local|project`, and a capconf registry tool name becomes Claude Code's (`read` -> `Read`,
`Task` -> `Agent`); every other key, value and spelling is written as it was read (YAML's
base loader: every scalar stays its source text). A source whose front matter is not a
YAML mapping is handed to Claude Code unchanged.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml

from .vocabulary import TO_CLAUDE

MEMORY = {"private": "local", "shared": "project"}


class BadSource(ValueError):
    pass


@dataclass
class Translated:
    text: bytes            # the agent file Claude Code reads
    stem: str              # its file name without `.md`
    declared_tools: list[str] | None
    body: str
    form: str = "markdown"


def source_bytes(args: dict[str, Any]) -> bytes:
    if "source_b64" in args:
        v = args["source_b64"]
        if not isinstance(v, str):
            raise BadSource("`source_b64` must be base64 text")
        try:
            return base64.b64decode(v, validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadSource(f"`source_b64` is not base64: {e}") from e
    v = args.get("source")
    if not isinstance(v, str):
        raise BadSource("`source` (text) or `source_b64` is required")
    return v.encode("utf-8", "surrogatepass")


def _form(text: str, fmt: str, filename: str | None) -> str:
    if fmt in ("yaml", "markdown"):
        return fmt
    if filename:
        low = filename.lower()
        if low.endswith((".yaml", ".yml")):
            return "yaml"
        if low.endswith((".md", ".markdown")):
            return "markdown"
    lines = text.split("\n")
    if lines and lines[0].rstrip() == "---" and any(x.rstrip() == "---" for x in lines[1:]):
        return "markdown"
    return "yaml"


def _split_markdown(text: str) -> tuple[str, str] | None:
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return "\n".join(lines[1:i]), "\n".join(lines[i + 1:])
    return None


_BREAK = re.compile(r"\r\n|\r|\n")


def _body_as_written(source: str) -> str:
    """The Markdown body after the closing front-matter line, its line ends as written
    (`_split_markdown` found the same lines in the LF-normalised text)."""
    start, first = 0, True
    for brk in [*_BREAK.finditer(source), None]:
        end = brk.start() if brk else len(source)
        if not first and source[start:end].rstrip() in ("---", "..."):
            return source[brk.end():] if brk else ""
        first, start = False, brk.end() if brk else len(source)
    return ""


def _tool(name: str) -> str:
    """Claude Code's spelling of a capconf registry name, the whitespace around it kept."""
    core = name.strip(" \t")
    if core not in TO_CLAUDE:
        return name
    lead = name[: len(name) - len(name.lstrip(" \t"))]
    return lead + TO_CLAUDE[core] + name[len(lead) + len(core):]


def _tools(value: Any) -> tuple[Any, list[str] | None]:
    if isinstance(value, str):
        parts = value.split(",")
        return ",".join(_tool(p) for p in parts), [p.strip(" \t") for p in parts
                                                     if p.strip(" \t")]
    if isinstance(value, list):
        return [_tool(v) if isinstance(v, str) else v for v in value], \
            [v.strip(" \t") for v in value if isinstance(v, str)]
    return value, None


def _stem(filename: str | None, n: int) -> str:
    if filename:
        base = re.sub(r"\.(md|markdown|ya?ml)$", "", filename.rsplit("/", 1)[-1], flags=re.I)
        base = re.sub(r"[^\w.-]", "_", base)
        if base and base not in (".", ".."):
            return base
    return f"agent-{n}"


def _has_alias(head: str) -> bool:
    try:
        return any(isinstance(t, yaml.AliasToken) for t in yaml.scan(head))
    except yaml.YAMLError:
        return False


def translate(raw: bytes, fmt: str, filename: str | None, n: int) -> Translated:
    stem = _stem(filename, n)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return Translated(raw, stem, None, "")
    # The adapter reads past a BOM and any line-end convention to find the keys, and
    # writes the file Claude Code reads with the same BOM and line ends: how a BOM or a
    # CRLF file reads is Claude Code's to decide, never repaired by the adapter.
    bom = "\ufeff" if text.startswith("\ufeff") else ""
    source = text.removeprefix(bom)
    first_break = _BREAK.search(source)
    newline = first_break.group(0) if first_break else "\n"
    text = source.replace("\r\n", "\n").replace("\r", "\n")
    form = _form(text, fmt, filename)
    if form == "markdown":
        parts = _split_markdown(text)
        if parts is None:
            return Translated(raw, stem, None, "")
        head, body = parts[0], _body_as_written(source)
    else:
        head, body = text, ""
    if _has_alias(head):
        # an alias could expand without bound when constructed; Claude Code's own
        # parser gets the file as written and decides
        return Translated(raw, stem, None, body)
    try:
        data = yaml.load(head, Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return Translated(raw, stem, None, body)
    if not isinstance(data, dict):
        return Translated(raw, stem, None, body)
    if form == "yaml":
        prompt = data.pop("prompt", "")
        body = prompt if isinstance(prompt, str) else ""
    out: dict[str, Any] = {}
    declared: list[str] | None = None
    for key, value in data.items():
        if key == "tools":
            out["tools"], declared = _tools(value)
        elif key == "mcp" and isinstance(value, dict) and "servers" in value:
            out["mcpServers"] = value["servers"]
        elif key == "memory" and isinstance(value, str):
            mode = value.strip().lower()
            if mode in MEMORY:
                out["memory"] = MEMORY[mode]
            elif mode != "none":
                out["memory"] = value
        else:
            out[str(key)] = value
    lines = ["---"] + [f"{json.dumps(k, ensure_ascii=False)}: "
                       f"{json.dumps(v, ensure_ascii=False)}" for k, v in out.items()]
    lines.append("---")
    # the adapter's own front matter takes the source's first line end; the body is the
    # source's as written (a YAML `prompt` is the value YAML reads, its breaks LF)
    written = bom + newline.join(lines) + newline + body
    return Translated(written.encode("utf-8"), stem, declared, body, form)
