"""Goldens of the editor area: a form edit's before and after, for review in a diff.

Review: `git diff golden/editor/`; update:
`pytest tests/editor/test_golden_editor.py --snapshot-update`.
"""

from __future__ import annotations

from typing import Any

import pytest

from capconf.simulator.editor.form import EditField, FormEdit
from capconf.simulator.editor.splice import apply_edit

HAND_WRITTEN = """---
# Reviewer used by the nightly job.
name: reviewer   # keep this name
description: 'Reviews code: style and bugs'
tools: Read, Grep, webfech
skills:
  - refund-policy   # the main one
  # - old-skill (disabled)
  - tone
model: sonnet
x-team: {owner: ops, since: 2024}
---

Review the *diff* you are given.
"""

EDITS = {
    "tools": FormEdit(EditField.TOOLS, ["Read", "Grep", "WebFetch"]),
    "remove-unknown": FormEdit(EditField.TOOLS, remove=2),
    "skills": FormEdit(EditField.SKILLS, ["tone", "billing"]),
    "memory-inserted": FormEdit(EditField.MEMORY, "private"),
    "mcp-inserted": FormEdit(EditField.MCP_SERVERS, ["crm"]),
    "knowledge-inserted": FormEdit(EditField.KNOWLEDGE, [("handbook", "./docs/**/*.md")]),
    "body": FormEdit(EditField.BODY, "Review the diff.\nReport each bug with its line."),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_form_edit_before_after(name: str, golden: Any) -> None:
    outcome = apply_edit(HAND_WRITTEN, EDITS[name], filename="reviewer.md")
    assert outcome.document is not None, outcome.refusal
    e = EDITS[name]
    shown = (f"edit: {e.field} value={e.value!r} remove={e.remove}\n"
             f"--- before\n{HAND_WRITTEN}--- after\n{outcome.document}")
    assert shown == golden
