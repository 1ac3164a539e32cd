"""The knowledge dimension: sources as a name plus a workspace-relative glob, the
one-line-per-source catalog, and kb_search, a bounded deterministic line scan.

Requirements: KB-01..08
Spec: SPEC.md section 7
Suite: conformance/suite/test_knowledge.py
Golden: golden/knowledge/
"""
