"""Prompt assembly: frame -> capability catalog -> definition body, sections in the fixed
order skills -> knowledge -> MCP -> memory, and nothing at all for an undeclared
dimension, so a legacy definition's prompt stays byte-identical.

Requirements: PROMPT-01..03
Spec: SPEC.md section 5
Suite: conformance/cases/prompt.yaml conformance/suite/test_prompt.py conformance/suite/test_properties.py
Golden: golden/definition/
"""
