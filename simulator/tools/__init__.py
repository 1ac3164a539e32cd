"""Tool grants: the grantable-tool registry (an allow-list of allow-lists, with the
legacy-six fallback), the reference's own tool catalog, and resolution: case-insensitive
in, canonical out, two conditions to grant, one diagnostic per failure.

Requirements: TOOL-01..04
Spec: SPEC.md section 4, 13
Suite: conformance/cases/tools.yaml conformance/suite/test_properties.py conformance/suite/test_protocol.py
Golden: golden/definition/
"""
