"""The settings editor's back-end: candidates for the tool, skill and MCP selectors from
the registries resolution uses, form edits spliced into hand-written documents without
touching any other text, and unknown names with their nearest candidates and a removal
edit.

Requirements: EDIT-01..04
Spec: SPEC.md section 3
Suite: conformance/suite/test_editor.py
Golden: golden/editor/
"""
