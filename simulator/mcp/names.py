"""The MCP name rules (MCP-02): server and tool names, the ``__`` separator of a qualified
name and the one split at its first occurrence, and the limits a name is held to."""

from __future__ import annotations

import re

SEPARATOR = "__"


SERVER_NAME_MAX = 64


TOOL_NAME_MAX = 128


SEARCH_LIMIT = 50


SERVER_NAME_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*")


"""ASCII letters, digits, ``-`` and single ``_``; no ``__`` and no trailing ``_``, so
the first ``__`` of a qualified name is always the separator."""


TOOL_NAME_RE = re.compile(r"[A-Za-z0-9_.-]+")


"""The character set MCP (2025-11-25) recommends for tool names. A listed tool outside
it (spaces, Unicode look-alikes, control characters) is ignored, never callable."""


def valid_server_name(name: str) -> bool:
    return (
        len(name) <= SERVER_NAME_MAX
        and SERVER_NAME_RE.fullmatch(name) is not None
        and not name.endswith("_")
    )


def valid_tool_name(name: str) -> bool:
    return len(name) <= TOOL_NAME_MAX and TOOL_NAME_RE.fullmatch(name) is not None


def split_qualified(name: str) -> tuple[str, str] | None:
    """Split at the FIRST ``__``. Server names cannot contain ``__`` or end in ``_``,
    so the server part is never ambiguous; the rest, ``__`` included, is the tool name
    on that one server and can never address another server."""
    index = name.find(SEPARATOR)
    if index <= 0 or index + len(SEPARATOR) == len(name):
        return None
    return name[:index], name[index + len(SEPARATOR):]
