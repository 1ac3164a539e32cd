"""Built-in (read-only) definitions report their capabilities; a copy keeps all four."""

from __future__ import annotations

import pytest

from capconf.conformance.cases import default_world
from capconf.conformance.harness import Harness

BUILTIN = """---
name: support-builtin
description: Built-in support agent.
tools: Read, Grep
skills: [refund-policy]
mcp:
  servers: [crm]
knowledge:
  - {name: handbook, glob: ./docs/**/*.md}
memory: private
---
Answer support questions.
"""


def _setup(impl: Harness) -> None:
    impl.setup(**default_world(), builtins=[{"filename": "support.md", "source": BUILTIN}])


@pytest.mark.case("def.builtin.lists-capabilities")
@pytest.mark.req("DEF-07")
def test_builtin_reports_every_capability(impl: Harness) -> None:
    _setup(impl)
    [row] = impl.driver.request("builtins.list")["builtins"]
    assert row["name"] == "support-builtin" and row["read_only"] is True
    assert row["skills"] == ["refund-policy"]
    assert row["mcp_servers"] == ["crm"]
    assert row["knowledge"] == [{"name": "handbook", "glob": "./docs/**/*.md"}]
    assert row["memory"] == "private"
    assert row["tools"] == ["read", "grep"]


@pytest.mark.case("def.builtin.copy-keeps-four-dimensions")
@pytest.mark.req("DEF-07", "DEF-04")
def test_copy_as_system_level_keeps_all_four_dimensions(impl: Harness) -> None:
    _setup(impl)
    copy = impl.driver.request("builtins.copy", {"name": "support-builtin"})["document"]
    original = impl.parse(BUILTIN, filename="support.md")["definition"]
    copied = impl.parse(copy, filename="support.md")["definition"]
    for key in ("skills", "mcp", "knowledge", "memory", "body", "name", "description"):
        assert copied[key] == original[key], key
    assert copied["skills"] and copied["mcp"] and copied["knowledge"] and copied["memory"]
    assert impl.parse(copy, filename="support.md")["tools"] == ["read", "grep"]


@pytest.mark.case("def.builtin.copy-unknown-name")
@pytest.mark.req("DEF-07")
def test_copy_of_unknown_builtin_is_refused(impl: Harness) -> None:
    _setup(impl)
    error = impl.driver.request_error("builtins.copy", {"name": "nope"})
    assert error["code"] == "no_such_builtin"
