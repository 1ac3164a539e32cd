"""The arguments every definition op carries (`source`/`source_b64`, `format`,
`filename`), checked once for the Python adapters: a malformed request is capconf's
`bad_request` with its argument path, whatever the runtime would make of the file.

How the source bytes are read stays each adapter's (``read_source``), since each adapter
translates them for its own runtime."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .protocol import ProtoError

FORMATS = ("auto", "yaml", "markdown")


def definition_args(args: dict[str, Any], read_source: Callable[[dict[str, Any]], bytes],
                    bad_source: type[Exception]) -> tuple[bytes, str, str | None]:
    """(source bytes, format, filename) of a definition op, or ``bad_request``."""
    try:
        raw = read_source(args)
    except bad_source as e:
        raise ProtoError("bad_request", str(e), ["args", "source"]) from e
    fmt = args.get("format", "auto")
    if fmt not in FORMATS:
        raise ProtoError("bad_request", "`format` is auto, yaml or markdown", ["args", "format"])
    filename = args.get("filename")
    if filename is not None and not isinstance(filename, str):
        raise ProtoError("bad_request", "`filename` must be a string", ["args", "filename"])
    return raw, fmt, filename
