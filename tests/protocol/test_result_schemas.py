"""The published result schemas never close an object.

SPEC section 2 ("Open results") lets every result object carry keys the spec does not
name. A closed schema (`additionalProperties: false`) would fail a correct runtime that
adds a key to a card or a tree node: the second outside tester's `var_extra_keys`
runtime did exactly that and errored five approval cases.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from capconf.conformance.locations import package_file


def _closed(node: Any, where: str) -> Iterator[str]:
    if isinstance(node, dict):
        if node.get("additionalProperties") is False or "unevaluatedProperties" in node:
            yield where
        for key, value in node.items():
            yield from _closed(value, f"{where}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _closed(value, f"{where}/{index}")


def test_no_result_schema_closes_an_object() -> None:
    folder = package_file("protocol")
    schemas = sorted((p for p in folder.iterdir() if p.name.endswith(".json")),
                     key=lambda p: p.name)
    assert len(schemas) >= 10, [p.name for p in schemas]
    closed = [spot for path in schemas
              for spot in _closed(json.loads(path.read_text(encoding="utf-8")), path.name)]
    assert closed == []
