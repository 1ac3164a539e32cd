"""A BROKEN runtime that passes every case of its groups (def, tool, prompt) and that the
differential run catches on real files (tests/conformance/test_differential.py).

Its two bugs are the ones an outside team's driver had (issue 34): after lenient
front-matter recovery (DEF-02: a description with `: ` in it, common in real agent files)
every other diagnostic's column is counted from 0, not 1; and tab-indented YAML front
matter is accepted (tabs read as two spaces) where YAML refuses it. No case checks a
column after recovery or a tab-indented front matter, so the suite alone misses both.

Serve it with ``--impl python:fake_impls.lenient_drift:dispatcher`` (``tests/`` on
``PYTHONPATH``).
"""

from __future__ import annotations

import base64
import re
from typing import Any

from capconf.simulator.protocol.dispatcher import Dispatcher

LENIENT = "DEF-FRONT-MATTER-LENIENT"
_FRONT = re.compile(r"\A(\ufeff?---[ \t]*\r?\n)(.*?)(\r?\n---[ \t]*(?:\r?\n|\Z))", re.S)


def _untab(text: str) -> str:
    """Tab-indented front matter read as if indented with two spaces per tab."""
    match = _FRONT.match(text)
    if match is None or "\n\t" not in "\n" + match.group(2):
        return text
    body = re.sub(r"(?m)^\t+", lambda m: "  " * len(m.group(0)), match.group(2))
    return match.group(1) + body + match.group(3) + text[match.end():]


def _source(args: dict[str, Any]) -> dict[str, Any]:
    if isinstance(args.get("source"), str):
        return {**args, "source": _untab(args["source"])}
    if isinstance(args.get("source_b64"), str):
        try:
            text = base64.b64decode(args["source_b64"]).decode("utf-8")
        except ValueError:
            return args
        fixed = _untab(text)
        if fixed != text:
            return {**args, "source_b64": base64.b64encode(fixed.encode("utf-8")).decode()}
    return args


def _drift(result: Any) -> None:
    diagnostics = result.get("diagnostics") if isinstance(result, dict) else None
    if not isinstance(diagnostics, list) or not any(
            isinstance(d, dict) and d.get("code") == LENIENT for d in diagnostics):
        return
    for d in diagnostics:
        if d.get("code") != LENIENT and isinstance(d.get("column"), int):
            d["column"] -= 1


class LenientDrift:
    def __init__(self) -> None:
        self.inner = Dispatcher(features=("def", "tool", "prompt"))

    @property
    def finished(self) -> bool:
        return bool(getattr(self.inner, "finished", False))

    def handle(self, request: dict[str, Any]) -> dict[str, Any]:
        if isinstance(request.get("args"), dict):
            request = {**request, "args": _source(request["args"])}
        response = self.inner.handle(request)
        if isinstance(response, dict) and response.get("ok"):
            _drift(response.get("result"))
        return response


def dispatcher(_: str = "") -> LenientDrift:
    return LenientDrift()
