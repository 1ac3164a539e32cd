"""capconf's side of reading a definition source, shared by the adapters that translate
it (codex, opencode): the source bytes of a request, the tool names a `tools` value
declares, a YAML 1.2 reading of the keys, and `format: auto` with the front matter.
The adapter reads the source only to know which keys to translate; the runtime reads
the file the adapter writes from it.

PyYAML is capconf's own dependency (pyproject.toml), not a runtime's.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import re
from typing import Any

import yaml


class BadSource(ValueError):
    """`source` / `source_b64` missing or not decodable: a bad request, not a definition."""


def source_bytes(args: dict[str, Any]) -> bytes:
    if isinstance(args.get("source"), str):
        return str(args["source"]).encode("utf-8", "surrogatepass")
    if isinstance(args.get("source_b64"), str):
        try:
            return base64.b64decode(args["source_b64"], validate=True)
        except (binascii.Error, ValueError) as e:
            raise BadSource(f"source_b64 is not base64: {e}") from e
    raise BadSource("one of `source` (text) or `source_b64` is required")


# capconf's trim of a declared name (TOOL-02): spaces and tabs only; a NO-BREAK or
# IDEOGRAPHIC SPACE is part of the name and reaches the runtime as written
NAME_PAD = " \t"


def declared(value: Any) -> list[str] | None:
    """The tool names a `tools` value declares, as written (trimmed of spaces and tabs),
    or None."""
    if value is None:  # `tools:` with nothing after it declares the empty list
        return []
    if isinstance(value, str):
        return [p.strip(NAME_PAD) for p in value.split(",") if p.strip(NAME_PAD)]
    if isinstance(value, list) and all(_is_name(v) for v in value):
        # a name is text: `7` or `2024-01-01` in a list names a tool; an empty entry
        # (`~`, a bare `-`) names none
        return [_text(v).strip(NAME_PAD) for v in value if v is not None]
    return None


def _is_name(v: Any) -> bool:
    return v is None or (isinstance(v, (str, int, float, datetime.date)) and \
        not isinstance(v, bool))


def _text(v: Any) -> str:
    return v.isoformat() if isinstance(v, datetime.date) else str(v)


class _Yaml12Loader(yaml.SafeLoader):
    """PyYAML with YAML 1.2's booleans (only true/false): the adapter reads the source
    only to find the keys to translate, and `tools: [on, yes]` names tools, not booleans
    (capconf reads YAML 1.2 too, as do Codex's and OpenCode's own readers)."""


_Yaml12Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:bool"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"))


def load_yaml(text: str) -> Any:
    try:
        return yaml.load(text, Loader=_Yaml12Loader)  # a SafeLoader subclass
    except (yaml.YAMLError, RecursionError):
        return None


# front matter: `---`, the YAML, `---`, the body
FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?---[ \t]*(?:\r?\n|\Z)(.*)\Z", re.S)


DOC_START = re.compile(r"\A---[ \t]*(?:\r\n|\r|\n)")
_LINES = re.compile(r"\r\n|\r|\n")


def auto_format(text: str, filename: str | None) -> str:
    """capconf's `format: auto` (DEF-01): the file name's extension, else Markdown when
    the first line is `---` and a later line is `---`, YAML otherwise (a YAML document
    may open with its `---` marker)."""
    name = (filename or "").lower()
    if name.endswith((".md", ".markdown")):
        return "markdown"
    if name.endswith((".yaml", ".yml")):
        return "yaml"
    lines = [line.rstrip(" \t") for line in _LINES.split(text.removeprefix("\ufeff"))]
    return "markdown" if lines[0] == "---" and "---" in lines[1:] else "yaml"
