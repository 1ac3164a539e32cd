"""The memory dimension: three exclusive modes, a directory bound when the tools are
mounted (no scope parameter), resident files within 4096/12288-byte budgets, daily files
for search only, and serialised appends per directory.

Requirements: MEM-01..10
Spec: SPEC.md section 10
Suite: conformance/suite/test_memory.py conformance/suite/test_unicode_names.py
Golden: golden/memory/
"""
